"""fastpgn.accuracy against lichess: lila's own test vectors, the real corpus recomputed here from the
formulas, and the judgements lichess wrote into its annotated exports."""

from __future__ import annotations

import glob
import math
import re
import statistics

import pytest

import fastpgn
from fastpgn import accuracy
from fastpgn.accuracy import (
    acpl,
    game_accuracy,
    judgement_counts,
    judgements,
    move_seconds,
    win_percent,
)
from helpers import shared

# -- lila modules/analyse/src/test/AccuracyPercentTest.scala: (cps, white, black) as (value, tolerance) ------------

FLAT = [15] * 20
LILA_WHITE_FIRST = [
    ([15, 15], (100, 1), (100, 1)),
    ([-900, -900], (10, 5), (100, 1)),
    ([15, 900], (100, 1), (10, 5)),
    ([-900, 0], (10, 5), (10, 5)),
    (FLAT, (100, 1), (100, 1)),
    (FLAT + [-900], (50, 5), (100, 1)),
    ([15] * 21 + [900], (100, 1), (50, 5)),
    ([-50, 15] * 5, (76, 8), (76, 8)),
    ([-50, 15] * 50, (76, 8), (76, 8)),
    ([-135, 15] * 50, (54, 8), (54, 8)),
    ([-435, 15] * 50, (20, 8), (20, 8)),
]
LILA_BLACK_FIRST = [
    ([15, 15], (100, 1), (100, 1)),
    ([900, 900], (100, 1), (10, 5)),
    ([15, -900], (10, 5), (100, 1)),
    ([900, 0], (10, 5), (10, 5)),
]


@pytest.mark.parametrize("start_white, cps, white, black",
                         [(True, *case) for case in LILA_WHITE_FIRST] + [(False, *case) for case in LILA_BLACK_FIRST])
def test_lila_accuracy_vectors(start_white, cps, white, black):
    got = game_accuracy(cps, start_white=start_white)
    for value, (expected, tolerance) in zip(got, (white, black)):
        assert abs(value - expected) <= tolerance, (got, white, black)


@pytest.mark.parametrize("start_white", [True, False])
def test_lila_no_accuracy_without_a_move_each(start_white):
    assert game_accuracy([], start_white) == (None, None)
    assert game_accuracy([15], start_white) == (None, None)


def test_lila_vectors_through_pgn_games():
    """The same vectors as PGN games with those evals, read by the reader, through Game's values."""
    for cps, _white, _black in LILA_WHITE_FIRST:
        moves = " ".join(f"{['Nf3', 'Nf6', 'Ng1', 'Ng8'][i % 4]} {{ [%eval {cp / 100}] }}" for i, cp in enumerate(cps))
        game = next(fastpgn.read_games(f"{moves} *".encode()))
        assert game_accuracy(game.evals) == game_accuracy(cps)


# -- an independent computation, written here from the formulas ---------------------------------------------------

def _cp(text):
    """White-view centipawns of a %eval text, a mate as +-1000, clamped to +-1000; None without one."""
    if text is None:
        return None
    if text.startswith("#"):
        return -1000 if text.startswith("#-") else 1000
    return max(-1000, min(1000, round(float(text) * 100)))


def _raw_cp(text):
    return None if text is None or text.startswith("#") else round(float(text) * 100)


def _mate(text):
    return int(text[1:]) if text is not None and text.startswith("#") else None


def _wc(cp):
    return 2 / (1 + math.exp(-0.00368208 * cp)) - 1


def _wp(cp):
    return 50 + 50 * _wc(cp)


def _reference_accuracy(texts, white_first=True):
    wins = [_wp(15)] + [_wp(_cp(t)) for t in texts]
    n = len(texts)
    size = min(8, max(2, n // 10))
    per_side = {"w": [], "b": []}
    for i in range(n):
        lo = max(0, i - size + 2)
        weight = min(12.0, max(0.5, statistics.pstdev(wins[lo:lo + size])))
        side = "w" if (i % 2 == 0) == white_first else "b"
        drop = (wins[i] - wins[i + 1]) if side == "w" else (wins[i + 1] - wins[i])
        acc = 100.0 if drop <= 0 else min(100.0, max(0.0, 103.1668100711649 * math.exp(-0.04354415386753951 * drop)
                                                       - 3.166924740191411 + 1))
        per_side[side].append((acc, weight))
    if not per_side["w"] or not per_side["b"]:
        return None, None
    out = []
    for side in "wb":
        moves = per_side[side]
        weighted = sum(a * w for a, w in moves) / sum(w for _, w in moves)
        harmonic = len(moves) / sum(1 / max(1, a) for a, _ in moves)
        out.append((weighted + harmonic) / 2)
    return tuple(out)


def _reference_acpl(texts, white_first=True):
    cps = [15] + [_cp(t) for t in texts]
    losses = {"w": [], "b": []}
    for i in range(len(texts)):
        side = "w" if (i % 2 == 0) == white_first else "b"
        diff = cps[i] - cps[i + 1] if side == "w" else cps[i + 1] - cps[i]
        losses[side].append(max(0, diff))
    # Java's Math.round: half up.
    return tuple(math.floor(sum(x) / len(x) + 0.5) if x else None for x in (losses["w"], losses["b"]))


def _reference_judgements(texts, white_first=True):
    evals = ["0.15"] + list(texts)
    out = []
    for i in range(len(texts)):
        white = (i % 2 == 0) == white_first
        sign = 1 if white else -1
        before, after = evals[i], evals[i + 1]
        if _raw_cp(before) is not None and _raw_cp(after) is not None:
            drop = sign * (_wc(_raw_cp(before)) - _wc(_raw_cp(after)))
            out.append("Blunder" if drop >= 0.3 else "Mistake" if drop >= 0.2
                       else "Inaccuracy" if drop >= 0.1 else None)
            continue
        pm, m = _mate(before), _mate(after)
        pm, m = (pm and pm * sign), (m and m * sign)
        pcp, cp = sign * (_raw_cp(before) or 0), sign * (_raw_cp(after) or 0)
        if pm is None and m is not None and m < 0:
            out.append("Inaccuracy" if pcp < -999 else "Mistake" if pcp < -700 else "Blunder")
        elif pm is not None and pm > 0 and (m is None or m < 0):
            out.append("Inaccuracy" if cp > 999 else "Mistake" if cp > 700 else "Blunder")
        else:
            out.append(None)
    return out


def _games_with_evals():
    folder = shared("data")
    files = sorted(glob.glob(str(folder / "lichess-db" / "*.pgn.zst"))) + \
        sorted(glob.glob(str(folder / "lichess-other" / "*.pgn*")))
    for path in files:
        for game in fastpgn.read_games(path, errors="skip"):
            if any(e is not None for e in game.evals):
                yield game


def _analysed(game):
    """The evals lichess's analysis has: every ply's, the mating last move's left out (it has none)."""
    evals = list(game.evals)
    if evals and evals[-1] is None and game.moves[-1].endswith("#"):
        evals.pop()
    return evals if None not in evals else None


def test_corpus_against_an_independent_computation():
    games = 0
    for game in _games_with_evals():
        evals = _analysed(game)
        if evals is None:
            continue
        games += 1
        got, want = game_accuracy(evals), _reference_accuracy(evals)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12) if want[0] is not None else got == want, game.id
        assert acpl(evals) == _reference_acpl(evals), game.id
        assert judgements(evals) == _reference_judgements(evals), game.id
        assert [win_percent(*fastpgn.schema.eval_value(e)) for e in evals] == \
            pytest.approx([_wp(_cp(e)) for e in evals], rel=1e-12), game.id
    # The corpus's games with evals (lichess-db and lichess-other): every ply evaluated, or all but a mating last.
    assert games >= 370


def test_corpus_judgements_are_not_all_quiet():
    counts = {name: 0 for name in accuracy.JUDGEMENTS}
    for game in _games_with_evals():
        evals = _analysed(game)
        for name in judgements(evals or []):
            if name:
                counts[name] += 1
    assert all(n > 50 for n in counts.values()), counts


# -- the judgements lichess wrote into its annotated exports ---------------------------------------------------------

_COMMENT = re.compile(r"\{ \((-?\d+\.\d\d) → (-?\d+\.\d\d)\) (\w+)\.")


def _annotations(name):
    """``(ply, lichess's judgement, ours, before, after, white)`` for each ``(a → b) Judgement.`` comment."""
    text = shared("data", "lichess-other", name).read_text()
    found, ply, depth = [], -1, 0
    for token in re.findall(r"\{[^}]*\}|[()]|[^\s{}()]+", text[text.index("\n\n"):]):
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth or token == ")":                   # a variation
            continue
        if token.startswith("{"):
            match = _COMMENT.match(" ".join(token.split()))
            if match:
                before, after, theirs = match.groups()
                white = ply % 2 == 0
                # The two evals as a two-ply list whose second ply is the annotated move.
                ours = judgements([before, after], start_white=not white)[1]
                found.append((ply, theirs, ours, before, after, white))
        elif not re.fullmatch(r"\d+\.+|\$\d+|1-0|0-1|1/2-1/2|\*", token):
            ply += 1
    return found


def test_2022_export_judgements_all_agree():
    found = _annotations("annotated-export_2022-08_gm-bullet.pgn")
    assert len(found) == 9
    assert [(move, ours) for move, _, ours, *_ in found] == [(move, theirs) for move, theirs, *_ in found]


def test_2017_export_was_judged_by_the_old_centipawn_rule():
    """lichess annotated the 2017 export by centipawn loss (50/100/300), before the winning-chances rule
    (lila PR #5337, 2019; constant of PR #11148, 2022): 7 of its 13 judgements differ from today's."""
    found = _annotations("annotated-export_2017-09_variations-nags.pgn")
    assert len(found) == 13
    differ = [(move, theirs, ours) for move, theirs, ours, *_ in found if theirs != ours]
    assert len(differ) == 7, differ
    for move, theirs, _ours, before, after, white in found:
        loss = round((float(before) - float(after)) * 100) * (1 if white else -1)
        old = "Blunder" if loss >= 300 else "Mistake" if loss >= 100 else "Inaccuracy" if loss >= 50 else None
        assert theirs == old, move


# -- edge cases -------------------------------------------------------------------------------------------------------

def test_mates_count_as_the_ceiling_both_ways():
    assert win_percent(mate=5) == win_percent(1000) == win_percent(25000)
    assert win_percent(mate=-1) == win_percent(-1000) == win_percent(-32767)
    assert acpl(["0.2", "#1"]) == (0, 980)        # Black runs into a mate: 1000 - 20
    assert acpl(["#-2", "#1"]) == (1015, 2000)    # White into one (15 + 1000), Black loses its own (2 x 1000)
    assert acpl([-5000, 5000]) == acpl(["#-2", "#1"])


def test_mate_created_and_lost():
    # A mate against the mover appears: Blunder, Mistake from below -7, Inaccuracy from below -9.99 pawns.
    assert judgements(["0.3", "#-4"])[1:] == [None]           # Black's own mate: fine
    assert judgements(["0.3", "0.2", "#-4"])[2] == "Blunder"
    assert judgements(["0.3", "-7.5", "#-4"])[2] == "Mistake"
    assert judgements(["0.3", "-10.5", "#-4"])[2] == "Inaccuracy"
    # The mover's own mate lost: Blunder, Mistake above +7, Inaccuracy above +9.99; into a mate against: Blunder.
    assert judgements(["#3", "0.5"])[1] is None          # Black's move: White's mate lost is good for Black
    assert judgements(["0.3", "#3", "0.5"])[2] == "Blunder"
    assert judgements(["0.3", "#3", "8.0"])[2] == "Mistake"
    assert judgements(["0.3", "#3", "12.0"])[2] == "Inaccuracy"
    assert judgements(["0.3", "#3", "#-2"])[2] == "Blunder"
    assert judgements(["0.3", "#3", "#2"])[2] is None         # a mate kept (delayed): nothing
    # The same from Black's side.
    assert judgements(["-0.3", "#-3", "-0.5"], start_white=False)[2] == "Blunder"
    assert judgements(["0.3", "0.2", "0.1", "#4"])[3] == "Blunder"


def test_judgements_take_raw_centipawns_accuracy_and_acpl_clamped():
    # 50 pawns to 5.5: raw winning chances drop 0.23 (Mistake); clamped at 10 pawns it would be 0.18.
    assert judgements([5000, 5000, 550]) == [None, None, "Mistake"]
    assert acpl([5000, 5000, 550]) == (225, 0)                # (0 + 1000 - 550) / 2
    assert game_accuracy([5000, 5000, 1000]) == game_accuracy([1000, 1000, 1000])


def test_black_to_move_first_pairs_the_colours():
    # A game from a FEN with Black to move: the first ply is Black's and starts from 15 cp.
    assert acpl([-900, -900], start_white=False) == (0, 0)
    assert acpl([900, 900], start_white=False) == (0, 885)
    assert acpl([15, -900], start_white=False) == (915, 0)
    assert judgements([15, -900, -900], start_white=False) == [None, "Blunder", None]
    assert judgement_counts([15, -900], start_white=False)["white"]["Blunder"] == 1


def test_acpl_rounds_half_up_like_java():
    assert acpl([14, 14, -36, -36]) == (26, 0)             # (1 + 50) / 2 = 25.5 -> 26
    assert accuracy._java_round(0.49999999999999994) == 0   # Java 7+, not floor(x + 0.5)
    assert accuracy._java_round(2.5) == 3 and accuracy._java_round(3.5) == 4


def test_missing_evals():
    assert game_accuracy([]) == (None, None) and acpl([]) == (None, None) and judgements([]) == []
    assert game_accuracy([None, None]) == (None, None)
    assert judgements(["0.2", None]) == [None, None]
    assert acpl(["0.2", None]) == (0, None)
    assert acpl([15]) == (0, None)                          # a single ply
    assert game_accuracy([15]) == (None, None)


def test_eval_forms_agree():
    texts = ["0.26", "-0.87", "#-3"]
    pairs = [fastpgn.schema.eval_value(t) for t in texts]
    assert game_accuracy(texts) == game_accuracy(pairs)
    assert judgements(texts) == judgements(pairs) == judgements([26, -87, (None, -3)])


def test_move_seconds():
    assert move_seconds([180, 180, 178, 175, None, 170, 169], "180+2") == [0, 0, 4, 7, None, 7, None]
    # Correspondence and no TimeControl: no time per move; clocks missing: None.
    assert move_seconds([60, 60], "-") == [None, None]
    assert move_seconds([60, 60], None) == [None, None]
    assert move_seconds([None, None], "60+0") == [None, None]
    assert move_seconds([], "60+0") == []
    # base 0: lichess starts the clock at the increment, at least 3 s.
    assert move_seconds([3, 3, 4, 4], "0+1") == [0, 0, 0, 0]
    # Black to move first.
    assert move_seconds([60, 60, 55, 58], (60, 0), start_white=False) == [0, 0, 5, 2]
    # Berserk (half the base, no increment after).
    assert move_seconds([90, 180, 85, 178], "180+2") == [0, 0, 5, 4]


def test_move_seconds_over_the_corpus_are_mostly_nonnegative():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    values = []
    for game in fastpgn.read_games(path):
        values += [s for s in move_seconds(game.clocks, game.headers.get("TimeControl")) if s is not None]
    assert len(values) > 100_000
    assert sum(v < 0 for v in values) < len(values) / 5_000     # moretime, and whole-second clocks


# -- Game's per-game values ------------------------------------------------------------------------------------------

def _game(text: str):
    return next(fastpgn.read_games(text.encode()))


def test_game_values_follow_the_functions_over_the_corpus():
    games = 0
    for game in _games_with_evals():
        evals = _analysed(game)
        if evals is None:
            assert game.white_accuracy is game.white_acpl is game.black_blunders is None
            continue
        games += 1
        assert (game.white_accuracy, game.black_accuracy) == _reference_accuracy(evals) or \
            (game.white_accuracy, game.black_accuracy) == pytest.approx(_reference_accuracy(evals), rel=1e-12)
        assert (game.white_acpl, game.black_acpl) == _reference_acpl(evals)
        ours = _reference_judgements(evals)
        assert game.judgements[:len(evals)] == ours
        assert game.white_blunders == sum(1 for i, j in enumerate(ours) if j == "Blunder" and i % 2 == 0)
        assert game.black_mistakes == sum(1 for i, j in enumerate(ours) if j == "Mistake" and i % 2 == 1)
    assert games >= 370


def test_game_mating_last_move_without_eval_is_left_out():
    body = '1. e4 { [%eval 0.2] } e5 { [%eval 0.3] } 2. Qh5 { [%eval 0.1] } Nc6 { [%eval 0.2] } ' \
           '3. Bc4 { [%eval 0.1] } Nf6 { [%eval #1] } 4. Qxf7# 1-0'
    game = _game(body)
    assert game.evals[-1] is None and game.judgements[-1] is None
    evals = game.evals[:-1]
    assert (game.white_acpl, game.black_acpl) == acpl(evals)
    assert (game.white_accuracy, game.black_accuracy) == game_accuracy(evals)
    assert game.black_blunders == 1                                  # 3...Nf6?? allows the mate
    # lila #11207: the mate itself is not counted, so White's ACPL is the mean of its first three moves.
    assert game.white_acpl == (0 + 20 + 10) // 3
    # Not a mate: a missing last eval leaves the per-game values out.
    unmated = _game(body.replace("Qxf7#", "Qxf7+"))
    assert unmated.white_accuracy is unmated.white_acpl is unmated.white_blunders is None


def test_game_black_to_move_from_a_fen():
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    game = _game(f'[FEN "{fen}"]\n[SetUp "1"]\n\n1... e5 {{ [%eval 9.0] }} 2. Nf3 {{ [%eval 9.0] }} *')
    assert not game.start_white
    assert (game.white_accuracy, game.black_accuracy) == game_accuracy([900, 900], start_white=False)
    assert game.black_accuracy < 20 and game.white_accuracy > 99
    assert game.judgements == ["Blunder", None] and game.black_blunders == 1 and game.white_blunders == 0


def test_game_without_evals_single_ply_and_clocks():
    plain = _game("1. e4 e5 *")
    assert plain.white_accuracy is plain.black_acpl is plain.white_inaccuracies is None
    assert plain.judgements == [None, None] and plain.win_percents == [None, None]
    single = _game("1. e4 { [%eval 0.2] } *")
    assert (single.white_accuracy, single.black_accuracy) == (None, None)
    assert (single.white_acpl, single.black_acpl) == (0, None)
    empty = _game('[White "A"]\n\n*')
    assert empty.white_accuracy is None and empty.judgements == [] and empty.move_seconds == []
    timed = _game('[TimeControl "60+1"]\n\n'
                  '1. e4 { [%clk 0:01:00] } e5 { [%clk 0:01:00] } 2. Nf3 { [%clk 0:00:58] } Nc6 *')
    assert timed.move_seconds == [0, 0, 3, None]
    corr = _game('[TimeControl "-"]\n\n1. e4 { [%clk 0:01:00] } e5 { [%clk 0:01:00] } *')
    assert corr.move_seconds == [None, None]
