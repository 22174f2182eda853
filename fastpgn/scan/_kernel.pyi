"""The scanner kernel's interface, typed once for both backends (python-zstandard's one ``.pyi``).

``fastpgn.scan.kernel`` is ``_scan_cy`` (compiled from the ``.pxi`` parts) or
``_scan_py`` (the pure twin); a type checker reads this file for either, as
``fastpgn/scan/__init__.py`` says under TYPE_CHECKING. No module
``fastpgn.scan._kernel`` exists at run time. tests/scan/test_kernel_contract.py
holds both backends to it: the same public names, and each function's
parameters (names, kinds, defaults) as written here.

The entry points take a block of whole games (``data[start:end]``, any
bytes-like object) positionally and everything else by keyword, and return
a ScanResult ``(output, games_read, rejects, filtered)``.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

from typing_extensions import Buffer

from fastpgn.scan.contract import ColumnError as ColumnError, ScanResult as ScanResult
from fastpgn.scan.records import GameCore as GameCore, RecordFeed as RecordFeed

SEP: bytes                          # the 22-field line's separator, "│" in UTF-8
LINE_TAGS: tuple[bytes, ...]        # the tags the line reads, in slot order
RELEASES_GIL: bool                  # lines_from_block without a moves hook runs without the GIL
REPLAYS_WITHOUT_GIL: bool           # ... and with board.moves_hook(), but for the games handed to it
ELO_WHITE: int                      # where_spec's elo modes
ELO_BLACK: int
ELO_BOTH: int
ELO_EITHER: int
SPEEDS: tuple[str, ...]             # lichess's speeds, fastest first
SPEED_LIMITS: tuple[int, ...]       # their upper bounds in estimated seconds, exclusive

class WherePlan:
    """A filter as the kernel reads it (where_plan's; compiled: a C copy, pure: scan/filters.py's _Where)."""

    @property
    def needs_moves(self) -> bool: ...

class GameSpans:
    """A block's good games as spans_from_block read them, for records_from_spans (compiled: their spans in
    C arrays, pure: the records); ``len()``: the games."""

    def __len__(self) -> int: ...

class OpeningTable:
    """An openings map as the compiled kernel reads it without the GIL (opening_table's C copy)."""

    @property
    def source(self) -> Mapping[bytes, bytes]: ...

# The map of field 10 / opening_code: b"ECO│Opening" -> code (fastpgn.openings.OpeningMap), or opening_table's form.
Openings = Mapping[bytes, bytes] | OpeningTable
# A filter: fastpgn.filters.Where.spec()'s tuple, or where_plan's form of it.
Where = tuple[Any, ...] | WherePlan
# moves_hook(SAN moves joined by spaces, the start tags (FEN, SetUp, Variant) as (name, value) pairs) -> field 20;
# raising PGNError (a ValueError) rejects the game.
MovesHook = Callable[[bytes, list[tuple[bytes, bytes]]], bytes]
# games_from_block's record: (offset, number, headers, moves, evals, clocks, result, first_ply, start, end)
GameRecord = tuple[int, int, dict[str, str], list[str], list[str | None], list[int | float | None], str, int, int, int]
# headers_from_block's record: (offset, number, headers, result, start, end)
HeadersRecord = tuple[int, int, dict[str, str], str, int, int]

_G = TypeVar("_G", bound=GameCore)

# ---------------------------------------------------------------- the sinks' entry points

@overload
def lines_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     openings: Openings | None = None, moves_hook: MovesHook | None = None,
                     text: Literal[False] = False) -> ScanResult[bytes]: ...
@overload
def lines_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     openings: Openings | None = None, moves_hook: MovesHook | None = None,
                     text: Literal[True]) -> ScanResult[list[str]]: ...
@overload
def lines_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     openings: Openings | None = None, moves_hook: MovesHook | None = None,
                     text: bool = False) -> ScanResult[bytes] | ScanResult[list[str]]: ...
@overload
def games_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     record: None = None) -> ScanResult[list[GameRecord]]: ...
@overload
def games_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     record: type[_G]) -> ScanResult[list[_G]]: ...
@overload
def games_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     record: type[_G] | None = None) -> ScanResult[list[_G]] | ScanResult[list[GameRecord]]: ...
@overload
def headers_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                       record: None = None) -> ScanResult[list[HeadersRecord]]: ...
@overload
def headers_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                       record: type[_G]) -> ScanResult[list[_G]]: ...
@overload
def headers_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                       record: type[_G] | None = None) -> ScanResult[list[_G]] | ScanResult[list[HeadersRecord]]: ...
# games_from_block / headers_from_block in two steps (a reader's worker threads take the first, without the GIL)
def spans_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                     headers_only: bool = False) -> ScanResult[GameSpans]: ...
@overload
def records_from_spans(data: Buffer, spans: GameSpans, *, first_game: int = 0,
                       record: None = None) -> list[GameRecord] | list[HeadersRecord]: ...
@overload
def records_from_spans(data: Buffer, spans: GameSpans, *, first_game: int = 0, record: type[_G]) -> list[_G]: ...
@overload
def records_from_spans(data: Buffer, spans: GameSpans, *, first_game: int = 0, record: type[_G] | None = None
                       ) -> list[_G] | list[GameRecord] | list[HeadersRecord]: ...
def columns_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                       openings: Openings | None = None, uci: bool = False, positions: bool = False,
                       fens: bool = False, headers: bool = False) -> ScanResult[dict[str, Any]]: ...
# ((the games' column dict, without uci and fens), one row per position: scan/positions.py's columns)
def positions_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                         at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                         openings: Openings | None = None,
                         final: bool = False) -> ScanResult[tuple[dict[str, Any], dict[str, Any]]]: ...
def csv_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                   at_stream_start: bool = True, stop_on_error: bool = False, where: Where | None = None,
                   openings: Openings | None = None, uci: bool = False,
                   columns: Sequence[str] | None = None, positions: bool = False,
                   fens: bool = False) -> ScanResult[bytes]: ...

# that the column sinks make every column of fastpgn.schema.COLUMNS as its type lays it out (ColumnError naming
# the first that differs and the sink); run as the kernel loads
def check_columns() -> None: ...

# ---------------------------------------------------------------- what the entry points are given

def opening_table(openings: Openings | None) -> Openings | None: ...
@overload
def where_plan(spec: None) -> None: ...
@overload
def where_plan(spec: Where) -> WherePlan: ...
@overload
def where_plan(spec: Where | None) -> WherePlan | None: ...
def speed_bit(time_control: bytes | str) -> int: ...
def utf8_error(data: Any, start: int = 0) -> int: ...
# where the last game of data[start:end] starts, and what the text ends inside: "" (a result ends it),
# "movetext" (no result does), "comment", "variation" (one not closed); (-1, "") for blank lines only
def last_game(data: Buffer, start: int, end: int, *, at_stream_start: bool = True) -> tuple[int, str]: ...

# ---------------------------------------------------------------- lichess's Parquet release as the grammar's input

def release_text(columns: list[tuple[str, str, bool, bool, Any]], movetext: Any) -> Any: ...
def release_suspects(movetext: Any) -> list[int]: ...
