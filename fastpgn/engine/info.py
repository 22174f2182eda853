"""What an engine reports about a search: ``info`` lines, scores, and the search's result.

``Info.parse`` reads an ``info`` line leniently (a token it cannot read is
skipped, never raised on). Scores are kept as the engine sends them, from the
side to move's view (``Info.score``), and turned to White's view on request
(``Info.white_score``); ``Score.lichess()`` writes lichess's ``%eval``
notation. Principal variations come in UCI and are turned to SAN on
fastpgn's board on first use. ``fastpgn.engine`` re-exports these names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Info", "STARTING_FEN", "Score", "SearchResult"]

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
_UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?\Z")


@dataclass(frozen=True)
class Score:
    """An evaluation: centipawns (``cp``) or moves to mate (``mate``), from one side's view.

    ``mate`` > 0: that side mates in so many moves; < 0: it is mated; 0: it is
    checkmated now (the engine's ``score mate 0``).

    >>> Score(cp=-33).white("b").lichess(), Score(mate=3).white("b").lichess()
    ('0.33', '#-3')
    """

    cp: int | None = None
    mate: int | None = None

    def white(self, turn: str) -> Score:
        """This score, taken from the side to move ``turn`` (``"w"``/``"b"``), from White's view."""
        if turn == "w":
            return self
        if self.mate is not None:
            return Score(mate=-self.mate)
        return Score(cp=-self.cp if self.cp is not None else None)

    def lichess(self) -> str:
        """The score in lichess's ``%eval`` notation: pawns with one or two decimals, or ``#N``.

        Lichess writes ``0.3`` for 30 centipawns and ``0.0`` for 0, never
        ``0.30`` (as in its database dumps).

        >>> [Score(cp=c).lichess() for c in (33, 30, 0, -5, -250, 5465)]
        ['0.33', '0.3', '0.0', '-0.05', '-2.5', '54.65']
        >>> Score(mate=-3).lichess()
        '#-3'
        """
        if self.mate is not None:
            return f"#{self.mate}"
        cp = self.cp or 0
        whole, cents = divmod(abs(cp), 100)
        text = f"{whole}.{cents:02d}"
        if text.endswith("0"):
            text = text[:-1]
        return f"-{text}" if cp < 0 else text

    def __str__(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"



_INT_FIELDS = frozenset(("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull", "tbhits",
                         "cpuload", "currmovenumber"))


class Info:
    """One ``info`` line, parsed: what the engine reported during a search.

    Missing fields are None. ``score`` is from the side to move's view
    (``turn``), ``white_score`` from White's; ``bound`` is ``"lowerbound"`` or
    ``"upperbound"`` when the score is one; ``pv`` is in UCI, ``pv_san`` in SAN
    (computed with fastpgn's board on first use; it stops at the first move
    that is not legal). ``str(info)`` is the line as the engine wrote it, so
    ``search(..., info=print)`` prints the engine's lines, as Chess.jl's
    ``infoaction=println`` does.

    >>> i = Info.parse("info depth 3 score cp 25 nodes 80 pv e2e4 e7e5", "w", STARTING_FEN)
    >>> i.depth, i.score, i.pv, i.pv_san
    (3, Score(cp=25, mate=None), ('e2e4', 'e7e5'), ('e4', 'e5'))
    """

    __slots__ = ("line", "turn", "depth", "seldepth", "multipv", "score", "bound", "nodes", "nps", "time",
                 "hashfull", "tbhits", "cpuload", "currmove", "currmovenumber", "pv", "wdl", "string",
                 "_fen", "_chess960", "_pv_san")

    depth: int | None
    seldepth: int | None
    multipv: int | None
    nodes: int | None
    nps: int | None
    time: int | None
    hashfull: int | None
    tbhits: int | None
    cpuload: int | None
    currmovenumber: int | None
    score: Score | None
    bound: str | None
    currmove: str | None
    wdl: tuple[int, int, int] | None
    string: str | None
    _pv_san: tuple[str, ...] | None

    def __init__(self, line: str, turn: str = "w", fen: str | None = None, chess960: bool = False) -> None:
        self.line = line
        self.turn = turn
        self.depth = self.seldepth = self.multipv = self.nodes = self.nps = self.time = None
        self.hashfull = self.tbhits = self.cpuload = self.currmovenumber = None
        self.score = self.bound = self.currmove = self.wdl = self.string = None
        self.pv: tuple[str, ...] = ()
        self._fen = fen
        self._chess960 = chess960
        self._pv_san = None

    @classmethod
    def parse(cls, line: str, turn: str = "w", fen: str | None = None, chess960: bool = False) -> Info:
        """Parse an ``info ...`` line; tokens it cannot read are skipped, never raised on."""
        info = cls(line, turn, fen, chess960)
        tokens = line.split()
        n = len(tokens)
        i = 1
        while i < n:
            word = tokens[i]
            if word in _INT_FIELDS:
                value = _int(tokens[i + 1]) if i + 1 < n else None
                if value is not None:
                    setattr(info, word, value)
                    i += 2
                else:
                    i += 1
            elif word == "score":
                kind = tokens[i + 1] if i + 1 < n else ""
                value = _int(tokens[i + 2]) if i + 2 < n else None
                if kind in ("cp", "mate") and value is not None:
                    info.score = Score(cp=value) if kind == "cp" else Score(mate=value)
                    i += 3
                    if i < n and tokens[i] in ("lowerbound", "upperbound"):
                        info.bound = tokens[i]
                        i += 1
                else:
                    i += 1
            elif word == "pv":
                j = i + 1
                while j < n and _UCI_MOVE.match(tokens[j]):
                    j += 1
                info.pv = tuple(tokens[i + 1:j])
                i = j
            elif word == "currmove":
                if i + 1 < n and _UCI_MOVE.match(tokens[i + 1]):
                    info.currmove = tokens[i + 1]
                    i += 2
                else:
                    i += 1
            elif word == "wdl":
                values = [v for v in map(_int, tokens[i + 1:i + 4]) if v is not None]
                if len(values) == 3:  # three tokens, all numbers
                    win, draw, loss = values
                    info.wdl = (win, draw, loss)
                    i += 4
                else:
                    i += 1
            elif word == "string":
                info.string = line.split("string", 1)[1].strip()
                break
            else:
                i += 1
        return info

    @property
    def white_score(self) -> Score | None:
        """``score`` from White's view."""
        return self.score.white(self.turn) if self.score is not None else None

    @property
    def pv_san(self) -> tuple[str, ...]:
        if self._pv_san is None:
            self._pv_san = tuple(_san_line(self._fen, self._chess960, self.pv)) if self.pv else ()
        return self._pv_san

    def __str__(self) -> str:
        return self.line

    def __repr__(self) -> str:
        return f"Info({self.line!r})"


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _san_line(fen: str | None, chess960: bool, ucis: Iterable[str]) -> list[str]:
    from fastpgn.board import Board
    from fastpgn.errors import BoardError

    board = Board(fen, chess960)
    out = []
    for uci in ucis:
        try:
            move = board.parse_uci(uci)
        except BoardError:
            break
        if not move:
            break       # 0000: no move (a null move is no line of play)
        out.append(board.san(move))
        board.push(move)
    return out


@dataclass(frozen=True)
class SearchResult:
    """What ``Engine.search`` returns: the best move, the ponder move and the last info.

    ``best`` and ``ponder`` are UCI (``best`` is None when the position has
    no legal move: the engine's ``bestmove (none)``); ``info`` is the last
    ``info`` line that carried a score for the main line (None if none did).
    """

    best: str | None
    ponder: str | None
    info: Info | None
    fen: str
    chess960: bool = False

    @property
    def score(self) -> Score | None:
        """The last score, from the side to move's view."""
        return self.info.score if self.info is not None else None

    @property
    def white_score(self) -> Score | None:
        """The last score, from White's view."""
        return self.info.white_score if self.info is not None else None

    @property
    def best_san(self) -> str | None:
        if self.best is None:
            return None
        line = _san_line(self.fen, self.chess960, [self.best])
        return line[0] if line else None

    @property
    def pv(self) -> tuple[str, ...]:
        return self.info.pv if self.info is not None else ()

    @property
    def pv_san(self) -> tuple[str, ...]:
        return self.info.pv_san if self.info is not None else ()
