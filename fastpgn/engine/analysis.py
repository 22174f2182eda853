"""Analysing games with a UCI engine: the eval after every ply, the cache, lichess's layout.

Each game is replayed on fastpgn's board; every position after a move is
sent to the engine with the game's moves before it (``ucinewgame`` first,
once per game) and searched to a fixed limit; the score becomes a
``[%eval ...]`` in that move's comment, from White's view, beside the move's
``[%clk ...]``. Games are written in lichess's layout: tags, a blank line,
the movetext on one line, a blank line::

    1. e4 { [%eval 0.24] [%clk 0:10:00] } 1... e5 { [%eval 0.12] [%clk 0:10:00] } ... 1-0

Lichess's own choices are kept: pawns with one or two decimals (``0.3``,
``-1.25``), ``#N``/``#-N`` for mates (positive: White mates), no eval after a
move that checkmates, ``0.0`` after one that stalemates.

A position met again (the openings) is served from ``EvalCache``, keyed by
its FEN without the move counters (``fen_without_counters``) and the search limit.
``complete_games`` finds where the whole games of a text written so end, for
``--resume``. The ``analyse`` command (``fastpgn.engine.analysis``) drives all this
and re-exports these names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fastpgn.engine import Engine, EngineError

__all__ = ["EvalCache", "Limit", "analysable", "analyse_game", "complete_games", "format_clock", "lichess_pgn",
           "fen_without_counters"]

CACHE_ENTRIES = 1 << 20         # positions kept; past that, new ones are searched but not kept
RESULTS = (b"1-0", b"0-1", b"1/2-1/2", b"*")


@dataclass(frozen=True)
class Limit:
    """A search limit: ``Limit("nodes", 100000).command()`` is ``'go nodes 100000'``."""

    kind: str
    value: int

    def command(self) -> str:
        return f"go {self.kind} {self.value}"


def fen_without_counters(fen: str) -> str:
    """A FEN without its move counters: the cache's key for a position.

    >>> fen_without_counters("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -'
    """
    return " ".join(fen.split(" ", 4)[:4])


class EvalCache:
    """Evals of the positions met so far in a run, shared by the engines: the first one stored wins.

    >>> cache = EvalCache()
    >>> cache.put(("k", "go nodes 1"), "0.3"), cache.put(("k", "go nodes 1"), "0.4"), cache.get(("k", "go nodes 1"))
    ('0.3', '0.3', '0.3')
    """

    def __init__(self, max_entries: int = CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._data: dict = {}
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key):
        value = self._data.get(key)
        if value is not None:
            with self._lock:
                self.hits += 1
        return value

    def put(self, key, value: str) -> str:
        """Store ``value`` unless the key has one (then return that: every sighting gets the first)."""
        with self._lock:
            old = self._data.get(key)
            if old is not None:
                return old
            if len(self._data) < self.max_entries:
                self._data[key] = value
            return value

    def __len__(self) -> int:
        return len(self._data)


def format_clock(seconds) -> str:
    """A clock as lichess writes it: ``H:MM:SS``, with the fraction when there is one.

    >>> format_clock(180), format_clock(177.7), format_clock(36000), format_clock(5.25)
    ('0:03:00', '0:02:57.7', '10:00:00', '0:00:05.25')
    """
    if isinstance(seconds, float) and not seconds.is_integer():
        millis = round(seconds * 1000)
        whole, frac = divmod(millis, 1000)
        h, rest = divmod(whole, 3600)
        m, s = divmod(rest, 60)
        return f"{h}:{m:02d}:{s:02d}." + f"{frac:03d}".rstrip("0")
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _start(game) -> tuple[str | None, bool]:
    return game._start()            # the reader owns the rule for FEN and Variant tags


def _first_move(game) -> tuple[int, bool]:
    """The first move's number and whether Black makes it: from the FEN tag, else the movetext."""
    fields = game.headers.get("FEN", "").split()
    if fields:
        number = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() and int(fields[5]) > 0 else 1
        return number, len(fields) > 1 and fields[1] == "b"
    if game.first_ply is not None:
        return game.first_ply // 2 + 1, game.first_ply % 2 == 1
    return 1, False


def lichess_pgn(game, evals: list[str | None] | None = None) -> str:
    """``game`` (a fastpgn Game) as lichess writes it, with ``evals`` (default: the game's own).

    Tags in their order, a blank line, the movetext on one line with
    ``{ [%eval x] [%clk y] }`` after each move that has either, the result, a
    blank line. A game without tags gets a Result tag, so that games can
    follow each other.

    >>> from fastpgn import read_games
    >>> g = next(iter(read_games(b'[Result "1-0"]\\n\\n1. e4 { [%clk 0:03:00] } e5 1-0\\n')))
    >>> print(lichess_pgn(g, ["0.3", None]), end="")
    [Result "1-0"]
    <BLANKLINE>
    1. e4 { [%eval 0.3] [%clk 0:03:00] } 1... e5 1-0
    <BLANKLINE>
    """
    from fastpgn.board import escape_tag_value

    evals = game.evals if evals is None else evals
    headers = game.headers or {"Result": game.result}
    out = [f'[{name} "{escape_tag_value(value)}"]\n' for name, value in headers.items()]
    out.append("\n")
    number, black = _first_move(game)
    parts = []
    numbered = True
    clocks = game.clocks
    for k, san in enumerate(game.moves):
        if not black:
            parts.append(f"{number}.")
        elif numbered:
            parts.append(f"{number}...")
        parts.append(san)
        ev, clk = evals[k], clocks[k]
        if ev is not None or clk is not None:
            parts.append("{" + (f" [%eval {ev}]" if ev is not None else "")
                         + (f" [%clk {format_clock(clk)}]" if clk is not None else "") + " }")
            numbered = True     # lichess numbers Black's move again after a comment
        else:
            numbered = False
        if black:
            number += 1
        black = not black
    parts.append(game.result)
    out.append(" ".join(parts))
    out.append("\n\n")
    return "".join(out)


def analysable(game) -> str | None:
    """Why fastpgn's board cannot replay ``game`` for an engine (a variant), or None."""
    from fastpgn.errors import BoardError

    try:
        game._start()               # the reader owns the rule for FEN and Variant tags
    except BoardError as exc:
        return exc.reason
    return None


def analyse_game(engine: Engine, game, limit: Limit, cache: EvalCache | None = None, *,
                 timeout: float | None = None, counter: Callable[[str], object] | None = None,
                 known: list[str | None] | None = None) -> list[str | None]:
    """The eval after every ply of ``game``, in lichess's notation from White's view.

    The position after a checkmating move gets None (lichess writes no eval
    there), after a stalemating one ``0.0``; neither is searched. The engine
    gets ``ucinewgame`` before the game's first search. ``counter(how)`` is
    called once per position: ``"searched"``, ``"cached"``, ``"database"`` or ``"final"``. ``known``: an
    eval per ply already known (an evaluation database's, ``fastpgn.engine.evals_db``; None where it has
    none), taken instead of a search; the engine is not touched for a game it covers. Raises
    IllegalMoveError for a game whose
    moves the board cannot replay, EngineError when the engine fails or reports no score for a position
    (naming the ply and the position's FEN).

    >>> with Engine.run() as sf:                                  # doctest: +SKIP
    ...     analyse_game(sf, game, Limit("nodes", 10000))[:3]
    ['0.3', '0.25', '0.31']
    """
    from fastpgn.board import Board, replay_fens, san_to_uci

    moves = game.moves
    if not moves:
        return []
    fen, chess960 = _start(game)
    text = " ".join(moves)
    ucis = san_to_uci(text, fen, chess960).split(" ")
    fens = list(replay_fens(text, fen, chess960))
    last = Board(fens[-1], chess960)
    # The last position's eval when the game's end gives it (mate: None, stalemate: "0.0"), else False.
    final: str | None | Literal[False] = None if last.is_checkmate() else "0.0" if last.is_stalemate() else False
    command = limit.command()
    evals: list[str | None] = []
    started = False
    for k in range(len(moves)):
        if k == len(moves) - 1 and final is not False:
            evals.append(final)
            if counter is not None:
                counter("final")
            continue
        if known is not None and known[k] is not None:
            evals.append(known[k])
            if counter is not None:
                counter("database")
            continue
        key = (fen_without_counters(fens[k]), command)
        value = cache.get(key) if cache is not None else None
        if value is None:
            if not started:
                engine.newgame()
                started = True
            engine.position(fen, ucis[:k + 1], chess960=chess960)
            score = engine.search(command, timeout=timeout).white_score
            if score is None:
                # A game written with a hole in its evals would pass for analysed.
                raise EngineError(f"engine {engine.name or engine.path} reported no score ({command}) for the "
                                  f"position after ply {k + 1}, {fens[k]}")
            if score.mate == 0:
                # Checkmated now, in a position that is not mate (the game goes on): lichess drops such an
                # eval and never writes #0; a hole would pass for analysed, so the engine failed.
                raise EngineError(f"engine {engine.name or engine.path} reported mate 0 (checkmated) for the "
                                  f"position after ply {k + 1}, {fens[k]}, which is not mate")
            value = cache.put(key, score.lichess()) if cache is not None else score.lichess()
            if counter is not None:
                counter("searched")
        elif counter is not None:
            counter("cached")
        evals.append(value)
    return evals


def complete_games(data) -> tuple[int, int, int]:
    """In text this command wrote: (complete games, where they end, where the last one starts).

    A game is complete once its movetext line ends with a result and the
    blank line after it is written.

    >>> complete_games(b'[A "1"]\\n\\n1. e4 *\\n\\n[A "2"]\\n\\n1. d4')
    (1, 18, 0)
    """
    pos = count = last = 0
    n = len(data)
    while pos < n and data[pos:pos + 1] == b"[":
        tags_end = data.find(b"\n\n", pos)
        if tags_end < 0:
            break
        line_end = data.find(b"\n", tags_end + 2)
        if line_end < 0 or data[line_end + 1:line_end + 2] != b"\n":
            break
        movetext = data[tags_end + 2:line_end]
        if not movetext.endswith(RESULTS):
            break
        count += 1
        last = pos
        pos = line_end + 2
    return count, pos, last

# The examples run with doctest.testmod(fastpgn.engine.analysis).
__test__ = {"Limit": Limit, "fen_without_counters": fen_without_counters, "EvalCache": EvalCache,
            "format_clock": format_clock, "lichess_pgn": lichess_pgn, "analyse_game": analyse_game,
            "complete_games": complete_games}
