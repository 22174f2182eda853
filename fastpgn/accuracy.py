"""What an analyst computes from a game's evals and clocks, as lichess computes it.

Win percent, winning chances, a move's accuracy, each side's game accuracy
and average centipawn loss (ACPL), lichess's judgements (Inaccuracy,
Mistake, Blunder) and the seconds each move took, as pure functions over
plain lists, so they serve ``Game`` and users' own data alike. The rules
follow lichess's own source, read file by file (our code, none of theirs):

- scalachess ``core/src/main/scala/eval.scala`` (``WinPercent``,
  ``Eval.Cp.ceiled``): winning chances ``2 / (1 + e^(-0.00368208 cp)) - 1``
  (the constant of lila PR #11148, 2022); win percent ``50 + 50 x`` the
  winning chances of the centipawns clamped to +-1000; a mate counts as
  +-1000.
- lila ``modules/analyse/src/main/AccuracyPercent.scala``: a move's accuracy
  from the mover's win percents before and after, and the game accuracy
  (15 cp start, window clamp(n/10, 2, 8), volatility weights, the mean of a
  weighted and a harmonic mean).
- lila ``modules/analyse/src/main/AccuracyCP.scala``: ACPL, pairs of
  (before, after) evals clamped to +-1000, Java's ``Math.round`` of the mean.
- lila ``modules/tree/src/main/Advice.scala``: the judgements, from the raw
  (unclamped) centipawns' winning chances, and the mate-created / mate-lost
  rules; ``Analysis.scala`` pairs each ply with the one before, the start
  counting as 15 cp.

An eval is given per ply, from White's point of view, in any of these forms:
None (no eval), an int (centipawns), the ``%eval`` text (``"0.26"``,
``"#-3"``, as ``Game.evals`` holds it) or a ``(cp, mate)`` pair (as the
``eval_cp`` / ``eval_mate`` columns hold it). docs/schema.md ("Accuracy, ACPL,
judgements") writes each formula out with its source and lichess's quirks.

>>> [round(a, 1) for a in game_accuracy([-900, -900])]   # White blunders on the first move
[10.7, 100.0]
>>> acpl(["0.3", "0.2", "#-2"]), judgements(["0.3", "0.2", "#-2"])
((510, 0), [None, None, 'Blunder'])
"""

from __future__ import annotations

import math

__all__ = [
    "CEILING",
    "JUDGEMENTS",
    "START_CP",
    "acpl",
    "analysed",
    "game_accuracy",
    "judgement_counts",
    "judgements",
    "move_accuracies",
    "move_accuracy",
    "move_seconds",
    "starts_white",
    "win_percent",
    "winning_chances",
]

#: Centipawns are clamped to +-CEILING, and a mate counts as +-CEILING (scalachess ``Eval.Cp.CEILING``).
CEILING = 1000
#: The eval lichess gives the position before the first move, whatever it is (``Eval.Cp.initial``).
START_CP = 15
#: The winning-chances constant since lila PR #11148 (2022; it was -0.004 before).
MULTIPLIER = -0.00368208
#: lichess's judgements, mildest first.
JUDGEMENTS = ("Inaccuracy", "Mistake", "Blunder")

# The move accuracy curve (AccuracyPercent.fromWinPercents): a fit of the drop in win percent.
_A, _K, _B = 103.1668100711649, 0.04354415386753951, -3.166924740191411


def _score(value) -> tuple | None:
    """One ply's eval as ``(cp, None)`` or ``(None, mate)``; None without one."""
    if value is None:
        return None
    if isinstance(value, str):
        from fastpgn.schema import eval_value

        cp, mate = eval_value(value)
    elif isinstance(value, (tuple, list)):
        cp, mate = value
    else:
        cp, mate = value, None
    if cp is not None:
        return cp, None
    return None if mate is None else (None, mate)


def _ceiled(score: tuple) -> int:
    """The eval as centipawns clamped to +-CEILING; a mate is +-CEILING (lila ``Eval.forceAsCp`` then ``ceiled``)."""
    cp, mate = score
    if cp is None:
        # forceAsCp reads a mate that is not negative (mate 0 included) as White's: lila #21104.
        return -CEILING if mate < 0 else CEILING
    return max(-CEILING, min(CEILING, cp))


def _chances(cp) -> float:
    return max(-1.0, min(1.0, 2 / (1 + math.exp(MULTIPLIER * cp)) - 1))


def winning_chances(cp=None, mate=None) -> float | None:
    """White's winning chances in [-1, 1], as scalachess's ``WinPercent.winningChances``.

    The centipawns are taken as they are (not clamped): this is the function
    lichess's judgements use. A mate counts as +-1000 centipawns. None without
    an eval.

    >>> winning_chances(0), round(winning_chances(300), 4), winning_chances(mate=-2) == winning_chances(-1000)
    (0.0, 0.5023, True)
    """
    score = _score((cp, mate))
    if score is None:
        return None
    return _chances(score[0] if score[0] is not None else _ceiled(score))


def win_percent(cp=None, mate=None) -> float | None:
    """White's win percent, as scalachess's ``WinPercent.fromScore``: 50 + 50 x winning chances of the clamped eval.

    Centipawns are clamped to +-1000 first; a mate counts as +-1000. None
    without an eval.

    >>> win_percent(0), round(win_percent(15), 2), win_percent(5000) == win_percent(mate=3), win_percent()
    (50.0, 51.38, True, None)
    """
    score = _score((cp, mate))
    return None if score is None else 50 + 50 * _chances(_ceiled(score))


def move_accuracy(win_before: float, win_after: float) -> float:
    """A move's accuracy in [0, 100] from the mover's win percents before and after it.

    lila's ``AccuracyPercent.fromWinPercents``: 100 when the mover's win
    percent did not drop, else ``103.1668100711649 e^(-0.04354415386753951 d)
    - 3.166924740191411 + 1`` for a drop of ``d``, clamped to [0, 100].

    >>> move_accuracy(50, 50), round(move_accuracy(60, 50), 2), move_accuracy(100, 0)
    (100.0, 64.58, 0.0)
    """
    if win_after >= win_before:
        return 100.0
    raw = _A * math.exp(-_K * (win_before - win_after)) + _B + 1  # +1: lila's bonus for imperfect analysis
    return max(0.0, min(100.0, raw))


def _win_percents(evals) -> list:
    """The start's and each ply's White win percent (clamped, mates +-1000); None where a ply has no eval."""
    wins: list[float | None] = [50 + 50 * _chances(START_CP)]
    for value in evals:
        score = _score(value)
        wins.append(None if score is None else 50 + 50 * _chances(_ceiled(score)))
    return wins


def starts_white(fen: str | None) -> bool:
    """Whether White makes the first move from a FEN tag's position (None: the standard start).

    Black moves first when the FEN's second field is ``b``; the fields are
    split at ASCII whitespace (the compiled column sink reads the same bytes).

    >>> starts_white(None), starts_white("4k3/8/8/8/8/8/8/4K3 b - - 0 1"), starts_white("garbage")
    (True, False, True)
    """
    if fen is None:
        return True
    fields = fen.encode("utf-8", "surrogatepass").split()
    return len(fields) < 2 or fields[1] != b"b"


def analysed(evals, last_move: str | None = None) -> list | None:
    """The evals of lichess's analysis of a game, for its per-game values; None when it has none.

    Every ply must have an eval, except that the last may lack one when
    ``last_move`` (its SAN) gives mate: lichess writes no eval after a
    mating move, so that ply is left out (lila #11207). An eval that does not
    read (``"1.2.3"``) counts as none.

    >>> analysed(["0.2", "#1", None], "Qxf7#"), analysed(["0.2", None, "0.1"]), analysed([])
    (['0.2', '#1'], None, None)
    """
    evals = list(evals)
    if evals and _score(evals[-1]) is None and last_move is not None and last_move.endswith("#"):
        evals.pop()
    if not evals or any(_score(e) is None for e in evals):
        return None
    return evals


def _white_moves(start_white: bool, ply: int) -> bool:
    return (ply % 2 == 0) == start_white


def move_accuracies(evals, start_white: bool = True) -> list:
    """Per ply, the mover's accuracy (``move_accuracy``), the start counting as 15 cp; None where an eval is missing.

    >>> [round(a) for a in move_accuracies([-900, -900, 15])]
    [11, 100, 100]
    """
    wins = _win_percents(evals)
    out: list[float | None] = []
    for ply in range(len(wins) - 1):
        before, after = wins[ply], wins[ply + 1]
        if before is None or after is None:
            out.append(None)
        elif _white_moves(start_white, ply):
            out.append(move_accuracy(before, after))
        else:
            out.append(move_accuracy(100 - before, 100 - after))
    return out


def _total(values) -> float:
    """Left to right, as Scala's ``sum`` and ``foldLeft`` add (Python 3.12's ``sum`` compensates, and the
    compiled column sink adds this way: one answer on every Python and both backends)."""
    total = 0.0
    for x in values:
        total += x
    return total


def _pstdev(values: list) -> float:
    mean = _total(values) / len(values)
    return math.sqrt(_total((x - mean) * (x - mean) for x in values) / len(values))


def game_accuracy(evals, start_white: bool = True) -> tuple:
    """``(white, black)``: each side's game accuracy in [0, 100], as lila's ``AccuracyPercent.gameAccuracy``.

    The win percents (start = 15 cp, clamped to +-1000, mates +-1000) are cut
    into windows of clamp(n/10, 2, 8) values (n: the plies given), the first
    window repeated so that each move has one; a move's weight is the
    population standard deviation of its window clamped to [0.5, 12]. A
    side's accuracy is the mean of the weighted mean and the harmonic mean
    (each accuracy at least 1 there) of its moves' accuracies. A ply without
    an eval drops the moves it touches, as lichess's empty infos do.
    ``(None, None)`` unless both sides have a move (lichess shows none then).
    A last move that gives mate has no eval in lichess's analysis: leave it
    out of ``evals``, as lichess does (``Game.white_accuracy`` does).

    >>> game_accuracy([15, 15])
    (100.0, 100.0)
    >>> [round(a, 2) for a in game_accuracy([-50, 15] * 5)]
    [77.38, 77.38]
    >>> game_accuracy([15]), game_accuracy([])
    ((None, None), (None, None))
    """
    wins = _win_percents(evals)
    size = min(max((len(wins) - 1) // 10, 2), 8)
    # lila: (size - 2) copies of the first window, then the sliding windows (one, the whole list, when shorter).
    windows = [wins[:size]] * (min(size, len(wins)) - 2)
    windows += [wins[i:i + size] for i in range(max(1, len(wins) - size + 1))]
    sides: dict = {True: [], False: []}
    for ply in range(len(wins) - 1):
        if ply >= len(windows):
            break
        before, after, window = wins[ply], wins[ply + 1], windows[ply]
        if before is None or after is None or None in window:
            continue
        weight = max(0.5, min(12.0, _pstdev(window)))
        white = _white_moves(start_white, ply)
        accuracy = move_accuracy(before, after) if white else move_accuracy(after, before)
        sides[white].append((accuracy, weight))
    result = []
    for white in (True, False):
        moves = sides[white]
        if not moves:
            return None, None
        weighted = _total(a * w for a, w in moves) / _total(w for _, w in moves)
        harmonic = len(moves) / _total(1 / max(1.0, a) for a, _ in moves)
        result.append((weighted + harmonic) / 2)
    return result[0], result[1]


def _java_round(x: float) -> int:
    """Java's ``Math.round``: half up (towards positive infinity), exact for every double."""
    low = math.floor(x)
    return int(low) + (1 if x - low >= 0.5 else 0)


def acpl(evals, start_white: bool = True) -> tuple:
    """``(white, black)``: each side's average centipawn loss, as lila's ``AccuracyCP.mean``.

    A side's moves pair the eval before with the eval after (the side that
    moves first starts from 15 cp), both clamped to +-1000 (a mate is +-1000);
    the loss is floored at 0; the mean is rounded half up (Java's
    ``Math.round``). A pair with a missing eval is left out; None for a side
    with no pair. A last move that gives mate has no eval in lichess's
    analysis, so lichess does not count it (lila #11207, reported as
    overestimating the mater's ACPL): leave it out of ``evals`` to match.

    >>> acpl([-900, 0]), acpl(["#-1", "#1"]), acpl([])
    ((915, 900), (1015, 2000), (None, None))
    """
    scores = [_score(v) for v in evals]
    before = [(START_CP, None)] + scores
    losses: dict = {True: [], False: []}
    for ply in range(len(scores)):
        prev, score = before[ply], before[ply + 1]
        if prev is None or score is None:
            continue
        white = _white_moves(start_white, ply)
        loss = (_ceiled(prev) - _ceiled(score)) * (1 if white else -1)
        losses[white].append(max(0, loss))
    return tuple(_java_round(sum(x) / len(x)) if x else None for x in (losses[True], losses[False]))


def _judgement(prev: tuple, score: tuple, white: bool) -> str | None:
    """lila's ``Advice(prev, info)``: the cp rule when both evals are centipawns, else the mate rules."""
    sign = 1 if white else -1
    if prev[0] is not None and score[0] is not None:
        drop = (_chances(prev[0]) - _chances(score[0])) * sign
        for threshold, name in ((0.3, "Blunder"), (0.2, "Mistake"), (0.1, "Inaccuracy")):
            if drop >= threshold:
                return name
        return None
    # From the mover's side: a positive mate is the mover's own.
    prev_mate = None if prev[1] is None else prev[1] * sign
    mate = None if score[1] is None else score[1] * sign
    prev_cp = 0 if prev[0] is None else prev[0] * sign
    cp = 0 if score[0] is None else score[0] * sign
    if prev_mate is None and mate is not None and mate < 0:       # mate created (against the mover)
        return "Inaccuracy" if prev_cp < -999 else "Mistake" if prev_cp < -700 else "Blunder"
    if prev_mate is not None and prev_mate > 0 and (mate is None or mate < 0):   # mate lost
        return "Inaccuracy" if cp > 999 else "Mistake" if cp > 700 else "Blunder"
    return None


def judgements(evals, start_white: bool = True) -> list:
    """Per ply, lichess's judgement of the move: ``"Inaccuracy"``, ``"Mistake"``, ``"Blunder"`` or None.

    lila's ``Advice``: with centipawns before and after, the drop in the
    mover's winning chances (raw centipawns, not clamped) of at least
    0.1 / 0.2 / 0.3; else the mate rules from the mover's side: a mate
    against the mover appearing is a Blunder (a Mistake from below -7, an
    Inaccuracy from below -9.99 pawns), the mover's own mate lost likewise
    (a Mistake above +7, an Inaccuracy above +9.99; losing it into a mate
    against is a Blunder). The start counts as 15 cp. None where either eval
    is missing, so a mating last move without eval has none.

    >>> judgements(["0.3", "0.26", "-0.87", "-0.81", "-4.55"])
    [None, None, 'Mistake', None, 'Blunder']
    >>> judgements(["0.26", "-0.87"], start_white=False)
    [None, 'Mistake']
    """
    scores = [_score(v) for v in evals]
    before = [(START_CP, None)] + scores
    out = []
    for ply in range(len(scores)):
        prev, score = before[ply], before[ply + 1]
        out.append(None if prev is None or score is None else _judgement(prev, score, _white_moves(start_white, ply)))
    return out


def judgement_counts(evals, start_white: bool = True) -> dict:
    """``{"white": {"Inaccuracy": n, "Mistake": n, "Blunder": n}, "black": {...}}`` from ``judgements``.

    >>> judgement_counts(["0.3", "0.26", "-0.87", "-0.81", "-4.55"])["white"]
    {'Inaccuracy': 0, 'Mistake': 1, 'Blunder': 1}
    """
    counts = {side: dict.fromkeys(JUDGEMENTS, 0) for side in ("white", "black")}
    for ply, name in enumerate(judgements(evals, start_white)):
        if name is not None:
            counts["white" if _white_moves(start_white, ply) else "black"][name] += 1
    return counts


def move_seconds(clocks, time_control, start_white: bool = True) -> list:
    """Per ply, the seconds the mover spent: their clock before the move + the increment - their clock after it.

    ``clocks`` are the ``%clk`` seconds after each ply (None where missing);
    ``time_control`` is the TimeControl text (``"180+2"``, lichess's seconds)
    or a ``(base, increment)`` pair. As on lichess's clock (scalachess
    ``Clock``): a game of base 0 starts with the increment, at least 3
    seconds; each side's first move is made before its clock runs and earns
    no increment, so it spent ``start - clock`` (0 on lichess); a side whose
    first clock is half the base (where the base is at least 40 increments)
    went berserk: lichess halved its time and took its increment away, so
    none is added to its moves. None where this clock or the mover's
    previous one is missing, and on every ply without a time control
    (correspondence, ``-``). The dumps' clocks are whole seconds, so a move
    is +-1 s (a fast one can read -1); time the opponent gave ("+15
    seconds") reads as a negative value, as the clocks say.

    >>> move_seconds([180, 180, 178, 175], "180+2")
    [0, 0, 4, 7]
    >>> move_seconds([90, 180, 88.5, 179], "180+2"), move_seconds([60, None, 55], "-")
    ([0, 0, 1.5, 3], [None, None, None])
    """
    if isinstance(time_control, str) or time_control is None:
        from fastpgn.schema import time_control as parse

        base, increment = parse(time_control)
    else:
        base, increment = time_control
    if base is None or increment is None:
        return [None] * len(clocks)
    start = base if base > 0 else max(increment, 3)
    last: dict = {}
    no_increment: dict = {}
    out = []
    for ply, clock in enumerate(clocks):
        white = _white_moves(start_white, ply)
        if white not in last:
            # A side's first move: lichess's clock is not running yet, and adds no increment.
            berserk = (clock is not None and base > 0 and base >= 40 * increment
                       and clock != start and abs(clock - base / 2) < 1)
            no_increment[white] = berserk
            spent = None if clock is None else (0 if berserk else start - clock)
        else:
            previous = last[white]
            inc = 0 if no_increment[white] else increment
            spent = None if clock is None or previous is None else previous + inc - clock
        last[white] = clock
        out.append(spent)
    return out
