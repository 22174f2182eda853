"""The record sink, pure Python: twin of fastpgn/scan/records.pxi.

Games as record tuples (offset, number, headers, SAN moves, evals, clocks,
result token, first ply, start, end) and headers only, for fastpgn.reader.
"""

from __future__ import annotations

from fastpgn.scan.contract import ScanResult
from fastpgn.scan.fastpath import _each_game
from fastpgn.scan.filters import where_plan
from fastpgn.scan.grammar import _as_bytes, _first

TYPE_CHECKING = False   # typing's, without importing typing (the reader imports GameCore at its start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from typing_extensions import Buffer

    from fastpgn.scan.contract import Reject
    from fastpgn.scan.filters import Spec


def _ply_moves(moves: list[bytes]) -> list[str]:
    """games_from_block's moves: the SAN tokens as str (UTF-8: castling may be written with en dashes)."""
    return b" ".join(moves).decode("utf-8").split(" ") if moves else []


def _ply_evals(values: list[Any] | None, plies: int, mixed: bool) -> list[Any]:
    """games_from_block's evals: per ply, the value as str or None."""
    if values is None:
        return [None] * plies
    if mixed:
        return [None if v is None else v.decode("ascii") for v in values]
    return b" ".join(values).decode("ascii").split(" ")


def _clock(seconds: bytes) -> int | float:
    """A clock's seconds text (``b"180"``, ``b"177.7"``) as the reader gives it: int, float with tenths."""
    return float(seconds) if b"." in seconds else int(seconds)


def _ply_clocks(values: list[Any] | None, plies: int, mixed: bool) -> list[Any]:
    """games_from_block's clocks: per ply, the seconds (int, or float with tenths) or None."""
    if values is None:
        return [None] * plies
    if mixed:
        return [None if v is None else _clock(v) for v in values]
    if b"." in b"".join(values):
        return list(map(_clock, values))
    return list(map(int, values))


def _fast_record(fast: Any, start: int, number: int, base_offset: int) -> tuple[Any, ...]:
    """games_from_block's record of a game _fast_game read (with ``text``)."""
    end, _, (pieces, _, names), (moves, evals, clocks, result, first_ply, mixed) = fast
    plies = len(moves)
    return (
        base_offset + start,
        number,
        dict(zip(names, pieces[1::2])),
        _ply_moves(moves),
        _ply_evals(evals, plies, mixed),
        _ply_clocks(clocks, plies, mixed),
        result.decode("ascii"),
        first_ply,
        start,
        end,
    )


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


class GameCore:
    """A game as the reader hands it out: fastpgn.reader.Game is this, with its methods (once for both kernels).

    ``games_from_block(..., record=Game)`` (and ``headers_from_block``)
    gives these in place of the record tuples (the compiled twin fills them
    without calling ``__init__``).
    """

    __slots__ = ("offset", "number", "headers", "first_ply", "_moves", "_evals", "_clocks", "_result_token", "_text")

    def __init__(self, offset: int, number: int, headers: dict[str, str], moves: Any, evals: Any, clocks: Any,
                 result_token: str, first_ply: int = -1, text: bytes | None = None) -> None:
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
        #: The game's text as read (bytes: its first byte to the next game's); None for a game made by hand,
        #: b"" for one read headers only (not kept: copying it would cost more than reading the headers).
        self._text = text


class RecordFeed:
    """The reader's ``__next__``: fastpgn.reader.GameReader (and LineReader) is this, with the rest of a
    reader (pure twin of the compiled RecordFeed, which is there to spare a Python frame per game or line).

    Hands out the items of the lists ``self._next_list()`` returns (a
    block's games, or lines; StopIteration at the end), one a call, counting them in
    ``games_yielded``. The lists are read, never changed.
    """

    _items: list[Any] | None = None
    _at = 0
    games_yielded: int          # (the reader's)
    if TYPE_CHECKING:
        def _next_list(self) -> list[Any]: ...     # (the reader's)

    def __next__(self) -> Any:
        items = self._items
        at = self._at
        while items is None or at >= len(items):
            self._items = None
            items = self._items = self._next_list()
            at = 0
        item = items[at]
        self._at = at + 1
        self.games_yielded += 1
        return item

    def _drop(self) -> None:
        """Forget the items not handed out yet (the reader's close())."""
        self._items = None
        self._at = 0


def _record_class(record: Any) -> Any:
    """games_from_block's ``record``, checked: None, or a subclass of GameCore (this twin's, or the compiled
    kernel's: this one only calls it, so reader.Game serves whichever kernel is live)."""
    if record is not None and not (isinstance(record, type) and (issubclass(record, GameCore)
                                                                 or _is_compiled_game_core(record))):
        raise TypeError(f"record must be None or a subclass of GameCore, not {record!r}")
    return record


def _is_compiled_game_core(record: type) -> bool:
    return any(base.__name__ == "GameCore" and base.__module__ == "fastpgn.scan._scan_cy" for base in record.__mro__)


def games_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                     record: type[GameCore] | None = None) -> ScanResult[list[Any]]:
    """Scan the whole games in ``data[start:end]`` into record tuples for the reader.

    Returns a ScanResult ``(games, games_read, rejects, filtered)``; each game is
    ``(offset, number, headers, moves, evals, clocks, result, first_ply, start, end)``
    where ``headers`` is a dict of str, ``moves`` the list of SAN tokens (str),
    ``evals`` and ``clocks`` lists with one entry per ply: the eval as str, the
    clock in seconds (int; float when the source has tenths), None where a ply
    has none; ``result`` the movetext's result token,
    ``first_ply`` the ply the move number before the first move names (``12...``
    is 23: Black's 12th move; -1 when no number precedes the first move).
    The rest is lines_from_block's: games numbered from ``first_game + 1``,
    offsets ``base_offset + index``; with ``where`` (a where_plan), games it
    refuses get no record and are counted in ``filtered``. With ``record``
    (a subclass of GameCore: fastpgn.reader.Game) each game is
    ``record(offset, number, headers, moves, evals, clocks, result, first_ply)``
    instead of a tuple.
    """
    return _games_from_block(data, start, end, base_offset, first_game, at_stream_start, stop_on_error, where, False,
                             _record_class(record))


def headers_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                       record: type[GameCore] | None = None) -> ScanResult[list[Any]]:
    """games_from_block without the moves: each game's tags, its movetext skipped (_skip_movetext).

    Returns a ScanResult ``(games, games_read, rejects, filtered)``; each game is
    ``(offset, number, headers, result, start, end)``, cut at the same
    boundaries as games_from_block's for every game the full read accepts.
    Movetext is not checked: only a bad tag, an unterminated comment or
    variation and a stray ``}`` reject a game (and, where ``where`` tests the
    movetext, any error in the movetext of a game whose tags it keeps).
    With ``record``, each game is ``record(offset, number, headers, None,
    None, None, result)`` (no per-ply lists: fastpgn.reader.Game makes
    empty ones when asked for).
    """
    return _games_from_block(data, start, end, base_offset, first_game, at_stream_start, stop_on_error, where, True,
                             _record_class(record))


def _games_from_block(buf: Buffer, start: int, end: int, base_offset: int, first_game: int, at_stream_start: bool,
                      stop_on_error: bool, where: Spec | None, headers: bool,
                      record: type[GameCore] | None = None) -> ScanResult[list[Any]]:
    """games_from_block's records, or with ``headers`` headers_from_block's (the compiled twin's shape);
    ``record``: their record class."""
    buf = _as_bytes(buf)
    where = where_plan(where)
    out: list[tuple[Any, ...]] = []
    rejects: list[Reject] = []
    number = first_game
    filtered = 0
    for pos, fast, game in _each_game(buf, _first(buf, start, end, at_stream_start), end, where, True, headers):
        number += 1
        if game is None:
            if fast is None:
                filtered += 1
            elif headers:
                out.append((base_offset + pos, number, fast[1], fast[2], pos, fast[0]))
            else:
                out.append(_fast_record(fast, pos, number, base_offset))
            continue
        if game.filtered and not game.bad:
            filtered += 1
            continue
        if game.bad:
            rejects.append((game.bad, base_offset + game.bad_pos, number, game.start, game.end))
            if stop_on_error:
                break
            continue
        tags = {}
        for name, value in game.tags:
            tags[_text(name)] = _text(value)
        if headers:
            out.append((base_offset + game.start, number, tags, _text(game.result), game.start, game.end))
            continue
        out.append((
            base_offset + game.start,
            number,
            tags,
            _ply_moves(game.moves),
            _ply_evals(game.evals, len(game.moves), True),
            _ply_clocks(game.clocks, len(game.moves), True),
            _text(game.result),
            game.first_ply,
            game.start,
            game.end,
        ))
    return ScanResult(_as_records(out, buf, headers, record), number - first_game, rejects, filtered)


def _as_records(out: list[tuple[Any, ...]], buf: bytes, headers: bool, record: Callable[..., Any] | None) -> list[Any]:
    """The record tuples ``out`` of ``buf``'s games as instances of ``record`` (None: as they are)."""
    if record is None:
        return out
    if headers:
        return [record(offset, number, tags, None, None, None, result, -1, b"")
                for offset, number, tags, result, _, _ in out]
    return [record(*fields, buf[s:e]) for *fields, s, e in out]


# ---------------------------------------------------------------- records in two steps: spans, then objects

class _GameSpans:
    """A block's good games as spans_from_block read them: what records_from_spans makes records of, from
    the same block. Opaque; ``len()`` is the number of games. (The compiled twin keeps each game's spans,
    read without the GIL, and makes the objects in the second step; here the first step reads the records
    and the second numbers them: the same records either way.)"""

    __slots__ = ("_records", "_headers", "_end")

    def __init__(self, records: list[tuple[Any, ...]], headers: bool, end: int) -> None:
        self._records = records
        self._headers = headers
        self._end = end

    def __len__(self) -> int:
        return len(self._records)


def spans_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                     headers_only: bool = False) -> ScanResult[_GameSpans]:
    """games_from_block (headers_from_block with ``headers_only``) in two steps, the first: the block read
    into a _GameSpans (its good games), with the counts and rejects games_from_block gives.

    A reader on worker threads takes this step there (the compiled kernel
    takes it without the GIL) and the second, ``records_from_spans``, on
    its own thread: the records are the same as games_from_block's.
    """
    buf = _as_bytes(data)
    end = min(end, len(buf))
    records, read, rejects, filtered = _games_from_block(buf, start, end, base_offset, first_game, at_stream_start,
                                                         stop_on_error, where, headers_only)
    return ScanResult(_GameSpans(records, headers_only, end), read, rejects, filtered)


def records_from_spans(data: Buffer, spans: _GameSpans, *, first_game: int = 0,
                       record: type[GameCore] | None = None) -> list[Any]:
    """The second step: the records of ``spans``'s games (spans_from_block's output for ``data``, the same
    bytes), ``first_game`` added to the numbers the scan gave: equal to what games_from_block (or
    headers_from_block) gives for the same block, instances of ``record`` when given."""
    record = _record_class(record)
    if not isinstance(spans, _GameSpans):
        raise TypeError(f"spans must be what spans_from_block gave, not {type(spans).__name__}")
    buf = _as_bytes(data)
    if len(buf) < spans._end:
        raise ValueError("records_from_spans: data is shorter than the block its spans were read from")
    out = spans._records
    if first_game:
        out = [(offset, number + first_game, *rest) for offset, number, *rest in out]
    return _as_records(out, buf, spans._headers, record)
