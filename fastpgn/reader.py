"""The reader API for Python programs: ``read_games`` and ``read_lines``.

Both read any source ``fastpgn.sources`` opens, cut it into game-aligned
blocks and hand each block to the live scanner kernel, so memory stays
bounded whatever the input size. The error policy is the caller's:
``errors="raise"`` (default) raises the first bad game's PGNSyntaxError after
yielding every game before it; ``errors="skip"`` keeps going and collects
each bad game, with its raw text, in ``reader.rejected``. Either way
``reader.games_read == reader.games_yielded + len(reader.rejected)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from fastpgn import _scan, openings as _openings
from fastpgn.errors import InputError, PGNError, PGNSyntaxError
from fastpgn.sources import BLOCK_SIZE, Block, cut_blocks, open_source

_POLICIES = ("raise", "skip")


@dataclass(frozen=True)
class Rejected:
    """A game that was not read: where, why, and its raw text (bytes)."""

    offset: int
    number: int
    reason: str
    error_offset: int
    text: bytes

    def error(self) -> PGNError:
        return PGNSyntaxError(self.reason, self.error_offset, self.number)


class Game:
    """One game: all headers, SAN moves as written, per-ply evals and clocks.

    The scanner kernel builds the three per-ply lists with the game; their
    short tokens and clock values come from its caches, so a ply costs little
    more than a pointer.

    >>> g = next(iter(read_games(b'[Site "https://lichess.org/abc"]\\n\\n1. e4 { [%clk 0:01:00] } e5 *\\n')))
    >>> g.id, g.moves, g.clocks, g.evals, g.result
    ('abc', ['e4', 'e5'], [60, None], [None, None], '*')
    """

    __slots__ = ("offset", "number", "headers", "first_ply", "_moves", "_evals", "_clocks", "_result_token")

    def __init__(self, offset, number, headers, moves, evals, clocks, result_token, first_ply=-1):
        self.offset = offset
        self.number = number
        self.headers = headers
        #: The ply the movetext's move number before the first move names
        #: (``1.`` is 0, ``12...`` is 23: Black's twelfth move); None without one.
        self.first_ply = first_ply if first_ply >= 0 else None
        self._moves = moves
        self._evals = evals
        self._clocks = clocks
        self._result_token = result_token

    @property
    def moves(self) -> list[str]:
        """SAN moves as written (lichess annotations such as ``?!``, ``+``, ``#`` kept)."""
        return self._moves

    @property
    def evals(self) -> list[str | None]:
        """Per ply: the raw ``%eval`` value (``"0.12"``, ``"#-9"``) or None."""
        return self._evals

    @property
    def clocks(self) -> list[int | float | None]:
        """Per ply: the ``%clk`` value in seconds (int; float when the source has tenths) or None."""
        return self._clocks

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def result(self) -> str:
        """The Result tag; else the movetext's result token; else ``*``."""
        return self.headers.get("Result") or self._result_token or "*"

    @property
    def id(self) -> str:
        """The lichess game id: the last path part of the Site tag (``""`` when absent)."""
        site = self.headers.get("Site", "")
        return site[site.rfind("/") + 1:]

    def _start(self):
        variant = self.headers.get("Variant", "").lower().replace(" ", "")
        chess960 = "960" in variant or variant.startswith(("fischerandom", "fischerrandom"))
        return self.headers.get("FEN"), chess960

    def uci(self) -> list[str]:
        """The moves in UCI (``e2e4``), replayed and validated on a board (IllegalMoveError if not legal).

        >>> next(iter(read_games(b"1. e4 e5 2. Qh5 *"))).uci()
        ['e2e4', 'e7e5', 'd1h5']
        """
        from fastpgn.board import san_to_uci

        fen, chess960 = self._start()
        text = san_to_uci(" ".join(self._moves), fen, chess960) if self._moves else ""
        return text.split(" ") if text else []

    def fens(self) -> list[str]:
        """The FEN after every ply (``fens()[-1]`` is the final position)."""
        from fastpgn.board import replay_fens

        fen, chess960 = self._start()
        return list(replay_fens(" ".join(self._moves), fen, chess960)) if self._moves else []

    def board(self):
        """The final position as a ``fastpgn.Board`` (outcome, checkmate, draws...)."""
        from fastpgn.board import replay

        fen, chess960 = self._start()
        return replay(" ".join(self._moves), fen, chess960)

    def __repr__(self) -> str:
        white = self.headers.get("White", "?")
        black = self.headers.get("Black", "?")
        return f"<Game {self.number} at byte {self.offset}: {white} - {black}, {self.plies} plies>"


class _BlockReader:
    """Shared driver: blocks -> kernel -> records, with the error policy and counts."""

    def __init__(self, source, errors: str, block_size: int) -> None:
        if errors not in _POLICIES:
            raise ValueError(f"errors must be one of {_POLICIES}, not {errors!r}")
        self._source_arg = source
        self.errors = errors
        self.block_size = block_size
        self.rejected: list[Rejected] = []
        self.games_read = 0
        self.games_yielded = 0
        self.name = None
        self._buffers: list = []    # buffers of blocks already scanned, for later blocks

    def _blocks(self) -> Iterator[Block]:
        source = open_source(self._source_arg)
        self.name = source.name
        try:
            if source.kind == "pgn" and source.size == 0:
                return
            yield from cut_blocks(source.readinto, self.block_size, pool=self._buffers)
        finally:
            source.close()

    def _truncated(self, block: Block) -> bool:
        """Handle a block that holds the cut-short start of a game; True if it did."""
        if not block.truncated:
            return False
        text = bytes(block.data)
        if text.strip():
            self.games_read += 1
            reason = block.truncation_reason()
            self.rejected.append(Rejected(block.offset, self.games_read, reason,
                                          block.damage.offset, text))
            if self.errors == "raise":
                raise PGNSyntaxError(reason, block.damage.offset, self.games_read)
        return True

    @staticmethod
    def _kept(rejects, block: Block) -> list[Rejected]:
        """The block's rejected games, their text copied (the block's buffer holds later blocks)."""
        return [Rejected(block.offset + start, number, reason, error_offset, bytes(block.data[start:end]))
                for reason, error_offset, number, start, end in rejects]

    def _finish(self, kept: list[Rejected]) -> None:
        """After the block's good games: its rejected ones join ``rejected`` (and raise, if so asked)."""
        self.rejected.extend(kept)
        if kept and self.errors == "raise":
            raise kept[-1].error()

    def _damage(self, block: Block) -> None:
        if block.damage is not None:
            raise block.damage


class GameReader(_BlockReader):
    """Iterate ``Game`` records; see ``read_games``."""

    def __iter__(self) -> Iterator[Game]:
        scan = _scan.kernel.games_from_block
        stop = self.errors == "raise"
        for block in self._blocks():
            if self._truncated(block):
                self._damage(block)
                continue
            records, read, rejects = scan(block.data, 0, len(block.data), block.offset,
                                          self.games_read, block.at_stream_start, stop)
            self.games_read += read
            kept = self._kept(rejects, block)
            block.release()
            for offset, number, headers, moves, evals, clocks, result, first_ply, _s, _e in records:
                self.games_yielded += 1
                yield Game(offset, number, headers, moves, evals, clocks, result, first_ply)
            self._finish(kept)
            self._damage(block)


class LineReader(_BlockReader):
    """Iterate 22-field lines (str, without the newline); see ``read_lines``."""

    def __init__(self, source, errors, block_size, openings_map) -> None:
        super().__init__(source, errors, block_size)
        self.openings = _scan.kernel.opening_table(openings_map)

    def __iter__(self) -> Iterator[str]:
        scan = _scan.kernel.lines_from_block
        stop = self.errors == "raise"
        for block in self._blocks():
            if self._truncated(block):
                self._damage(block)
                continue
            out, read, rejects = scan(block.data, 0, len(block.data), block.offset,
                                      self.games_read, block.at_stream_start, self.openings, stop)
            self.games_read += read
            kept = self._kept(rejects, block)
            block.release()
            if out:
                lines = out.decode("utf-8", "replace").split("\n")
                lines.pop()
                self.games_yielded += len(lines)
                yield from lines
            self._finish(kept)
            self._damage(block)


def read_games(source, *, errors: str = "raise", block_size: int = 1 << 20) -> GameReader:
    """Iterate the games of ``source`` (path, ``-``, bytes or binary file; any compression).

    >>> [g.moves for g in read_games(b"1. e4 e5 2. Nf3 *")]
    [['e4', 'e5', 'Nf3']]
    """
    return GameReader(source, errors, block_size)


def read_lines(source, *, errors: str = "raise", openings=None, block_size: int = BLOCK_SIZE) -> LineReader:
    """Iterate the 22-field lines (seed 004 format, without ``\\n``) of ``source``.

    ``openings`` is an ``fastpgn.openings.OpeningMap`` (default: the shipped
    map) or a path to a map in the original ``CCCNNN│CCC│Name`` format.

    >>> line = next(iter(read_lines(b'[Result "1-0"]\\n\\n1. e4 1-0\\n')))
    >>> line.split("\\u2502")[3], line.split("\\u2502")[19]
    ('W', 'e4')
    """
    if openings is None or not isinstance(openings, dict):
        openings = _openings.load(openings)
    return LineReader(source, errors, block_size, openings)


__all__ = ["Game", "GameReader", "InputError", "LineReader", "Rejected", "read_games", "read_lines"]
