"""One exception hierarchy for fastpgn, raised alike by both backends.

Messages are fixed text plus a position, e.g.
``unterminated comment (PGN byte 1048576, game 4211)``: the offset counts
bytes of the decompressed PGN, whatever the input's compression; or, for the line-oriented
notations, ``bad move number (line 3, column 14)``. Exceptions pickle, so they
cross the worker pool, and never hold a whole buffer.

A game the caller chose to skip (``errors="skip"``) is a :class:`Rejected`
record instead: the same reason and position, and the game's raw text. The
reader, the dump converter and the format commands all hand rejected games
around in that one shape; the scanner kernels' own 5-tuples become records in
:func:`rejected_games`. An encoder's fault is not the input's: :class:`ParquetWriteError` stands outside
the hierarchy.
"""

from __future__ import annotations

# typing.TYPE_CHECKING, without importing typing (a reader's start-up)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class PGNError(ValueError):
    """Root of every fastpgn error: a reason plus where it happened."""

    def __init__(
        self,
        reason: str,
        offset: int | None = None,
        game: int | None = None,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.reason = reason
        self.offset = offset
        self.game = game
        self.line = line
        self.column = column
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.offset is not None:
            where.append(f"PGN byte {self.offset}")     # in the decompressed PGN, not the .zst
        if self.game is not None:
            where.append(f"game {self.game}")
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason

    def at(self, offset: int | None = None, game: int | None = None):
        """A copy of this error placed at ``offset``/``game`` (kept where given)."""
        return type(self)(
            self.reason,
            self.offset if offset is None else offset,
            self.game if game is None else game,
            line=self.line,
            column=self.column,
        )

    def __str__(self) -> str:
        return self._text()

    def __reduce__(self):
        return (_rebuild, (type(self), self.reason, self.offset, self.game, self.line, self.column))


def _rebuild(cls, reason, offset, game, line, column):
    return cls(reason, offset, game, line=line, column=column)


class PGNSyntaxError(PGNError):
    """A game's text breaks the PGN grammar (tags, comments, move tokens)."""


class InputError(PGNError):
    """The input cannot be read: missing, not PGN, truncated or corrupt compression."""


class InputDamageError(InputError):
    """The input breaks off partway: truncated or corrupt compressed data, a read that failed, an
    iterable that raised. Every whole game before it was read; its offset is where the damage is."""


class OutputError(PGNError):
    """The output cannot be written: a folder that cannot be made or written to, a full disk, a chunk that
    cannot be made, or a symbolic link where fastpgn writes a file (``fastpgn.io.output``)."""


class NotUTF8Warning(UnicodeWarning):
    """Input read as UTF-8 holds bytes that are not: they were read as U+FFFD (name its encoding to avoid it)."""


class FormatError(PGNError):
    """Text in one of the other notations (22-field line, compact strings, crypt, ICN) is malformed."""


class BoardError(PGNError):
    """A position or move is wrong for the board layer."""


class InvalidFENError(BoardError):
    """A FEN string is malformed or describes an impossible position."""


class IllegalMoveError(BoardError):
    """A move (SAN or UCI) is not legal in the position."""


class AmbiguousMoveError(IllegalMoveError):
    """A SAN move matches more than one legal move."""


class EngineError(PGNError):
    """A UCI engine failed: it cannot start, died, broke the protocol or sent an illegal move.

    ``lines`` holds the last lines the engine wrote (its stdout and stderr),
    the same lines the message quotes.
    """

    def __init__(self, reason: str, offset: int | None = None, game: int | None = None, *,
                 line: int | None = None, column: int | None = None, lines: Sequence[str] = ()) -> None:
        self.lines = tuple(lines)
        super().__init__(reason, offset, game, line=line, column=column)

    def at(self, offset: int | None = None, game: int | None = None):
        copy = super().at(offset, game)
        copy.lines = self.lines
        return copy

    def __reduce__(self):
        return (_rebuild_engine_error, (type(self), self.reason, self.offset, self.game, self.line,
                                        self.column, self.lines))


def _rebuild_engine_error(cls, reason, offset, game, line, column, lines):
    return cls(reason, offset, game, line=line, column=column, lines=lines)


class EngineNotFoundError(EngineError):
    """The engine's program does not exist (the message names the path tried)."""


class EngineTimeoutError(EngineError):
    """The engine did not answer in time; the search was stopped (or the engine killed)."""


class ParquetWriteError(RuntimeError):
    """fastpgn's own Parquet encoding failed: the Thrift codec of footers and page headers
    (``fastpgn.parquet.thrift.ThriftError``) or the join of row groups encoded apart
    (``fastpgn.parquet.row_groups.JoinError``). A fault of fastpgn, or of the pyarrow bytes it moves, never of
    the games: outside :class:`PGNError`, so ``except PGNError`` never takes it for bad input. (The converter
    reports it as its chunk's :class:`OutputError`, naming the chunk and its games.)

    >>> issubclass(ParquetWriteError, PGNError)
    False
    """


class Rejected:
    """A game that was not read: where, why, and its raw text (bytes).

    ``offset`` is where the game starts and ``error_offset`` where it goes
    wrong, both in bytes of the decompressed PGN; ``number`` counts games
    from 1, rejected ones included. Immutable, compared and hashed by value.
    (A plain class rather than a dataclass: ``dataclasses`` imports
    ``inspect``, about half of what ``import fastpgn`` would cost.)

    >>> r = Rejected(0, 3, "unterminated comment", 42, b"1. e4 { *")
    >>> r.error()
    PGNSyntaxError('unterminated comment (PGN byte 42, game 3)')
    >>> r
    Rejected(offset=0, number=3, reason='unterminated comment', error_offset=42, text=b'1. e4 { *')
    """

    __slots__ = ("offset", "number", "reason", "error_offset", "text")
    __match_args__ = ("offset", "number", "reason", "error_offset", "text")

    offset: int
    number: int
    reason: str
    error_offset: int
    text: bytes

    def __init__(self, offset: int, number: int, reason: str, error_offset: int, text: bytes) -> None:
        for name, value in zip(self.__slots__, (offset, number, reason, error_offset, text)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        return "Rejected(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Rejected) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self):
        return (Rejected, self._fields())

    def error(self) -> PGNError:
        return PGNSyntaxError(self.reason, self.error_offset, self.number)


#: Written before the movetext of a row of lichess's Parquet release that would read as more than
#: one game (fastpgn.io.lichess_parquet): the stray ``}`` makes the grammar reject the row whole,
#: and the note names why, in place of the grammar's ``unexpected '}'``.
SEVERAL_GAMES_NOTE = "this row's movetext reads as more than one game"
SEVERAL_GAMES_MARK = "} {fastpgn: " + SEVERAL_GAMES_NOTE + "} "


def row_reason(reason: str, text) -> str:
    """The reason a rejected game is given: the grammar's, or for a marked Parquet row, the note's.

    >>> row_reason("unexpected '}'", SEVERAL_GAMES_MARK.encode() + b"1. d4 *")
    "this row's movetext reads as more than one game"
    """
    if reason.startswith("unexpected '}'") and SEVERAL_GAMES_MARK.encode() in bytes(text):
        return SEVERAL_GAMES_NOTE + reason[len("unexpected '}'"):]
    return reason


def rejected_games(rejects, data, offset: int) -> list[Rejected]:
    """The scanner kernel's rejects of one block as records, their text copied out of ``data``.

    A kernel reports a rejected game as ``(reason, error_offset, number,
    start, end)``, ``start``/``end`` indexing ``data``, the block that begins
    at absolute ``offset``; the copy outlives the block's buffer, which
    later blocks reuse.

    >>> rejected_games([("bad", 7, 2, 4, 9)], b"....1. e4 *", 100)
    [Rejected(offset=104, number=2, reason='bad', error_offset=7, text=b'1. e4')]
    """
    if not rejects:
        return []
    texts = [bytes(data[start:end]) for _, _, _, start, end in rejects]
    return [Rejected(offset + start, number, row_reason(reason, text), error_offset, text)
            for (reason, error_offset, number, start, end), text in zip(rejects, texts)]


# ---------------------------------------------------------------- the words of a message

def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun``, its plural (``nouns``, else ``noun`` + s) unless it is 1: every count a
    summary or a progress bar gives goes through here.

    >>> plural(1, "game"), plural(2_000, "game"), plural(1, "ply", "plies"), plural(0, "ply", "plies")
    ('1 game', '2,000 games', '1 ply', '0 plies')
    """
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def not_utf8_note(games: int, first: int | None) -> str:
    """The stderr line for games read with bytes that are not UTF-8."""
    return (f"{plural(games, 'game')} held bytes that are not UTF-8 (first at PGN byte {first}); name the "
            f"input's encoding to read them as its characters: --encoding cp1252 (or latin-1, ...)")
