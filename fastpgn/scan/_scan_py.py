"""Pure-Python twin of the scanner kernel fastpgn.scan._scan_cy: same functions, same results, same errors.

The kernel is a grammar and its sinks, in the same parts as the compiled twin
(whose ``.pxi`` files are included into one module), so a review is a
side-by-side read of each pair:

==========================  ============================  =========================================
pure Python                 Cython                        owns
==========================  ============================  =========================================
``scan/contract.py``         (imported)                    ScanResult, what every entry point returns,
                                                          and ColumnError, a column a sink leaves out;
                                                          the interface typed: ``scan/_kernel.pyi``
``scan/grammar.py``          ``scan/grammar.pxi``           where games start and end, tags, movetext,
                                                          comments, results
``scan/filters.py``          ``scan/filters.pxi``           the filters (``where_plan``) the grammar tests
                                                          on a game's tags and then on its movetext;
                                                          lichess's speed of a TimeControl
``scan/utf8.py``             ``scan/utf8.pxi``              where the first byte that is not UTF-8 is
``scan/fastpath.py``         (none needed)                 lichess-shaped games read with whole-string
                                                          operations, else handed back to the grammar;
                                                          ``_each_game``: the one path choice the sinks
                                                          read their games from
``scan/lines.py``            ``scan/output.pxi``,           the 22-field line sink: fields, opening codes,
                            ``scan/lines.pxi``             moves hooks (validation, UCI)
(``fastpgn.board``)         ``scan/replay.pxi``            the declared start (FEN, Variant) and the
                                                          replay on the compiled board without the GIL
``scan/records.py``          ``scan/records.pxi``           game records and headers only, with caches;
                                                          in two steps (spans_from_block on a worker,
                                                          records_from_spans on the reader's thread);
                                                          GameCore and RecordFeed, under reader.Game and
                                                          reader.GameReader
``scan/columns.py``          ``scan/columns.pxi``           the analysis schema's columns (lists here,
                                                          Arrow buffers there)
(Python lists)              ``scan/buffers.pxi``           the column sink's growing Arrow buffers,
                                                          handed to Arrow without a copy
``scan/analysis.py``         ``scan/analysis.pxi``          what lichess computes from the evals and
                                                          clocks (fastpgn.accuracy's formulas)
``scan/csv.py``              ``scan/csv.pxi``               those columns as CSV rows (csv_text's rules)
``scan/positions.py``        ``scan/positions.pxi``         one row per position (board, side, castling,
                                                          en passant, clocks, the move) from the
                                                          column sink's replay
``scan/release.py``          ``scan/release.pxi``           a record batch of lichess's Parquet release
                                                          written as PGN text (not a sink: the
                                                          grammar's input)
==========================  ============================  =========================================

The contract between the grammar and a sink: the grammar reads one game into
a ``_Game`` (its tags, and unless its movetext is skipped, its moves, evals,
clocks and result, all as spans or bytes of the block; ``bad`` and
``filtered`` say whether it is rejected or refused by a filter) and the sink
turns that into its output; a sink never reads the block's text except
through those spans. Here a sink takes its games from ``_each_game``, which
hands a lichess-shaped game over as the fast path read it (the sink's fast
writer writes it) and any other as a ``_Game``. A filter (``where_plan``)
is the keep/skip decision, taken between the tag section and the movetext,
so a refused game's moves are never read. Every entry point takes a block of
whole games and its bounds, ``(data, start, end)``, every option by keyword
(``base_offset``, ``first_game``, ``at_stream_start``, ``stop_on_error``,
``where``, then the sink's own), and returns a ``ScanResult(output,
games_read, rejects, filtered)``; a reject is ``(reason, error_offset,
game_number, start, end)``.
"""

import typing as _typing  # (a private name: every public name of a kernel is _kernel.pyi's)

from fastpgn.scan import columns as _columns_py, csv as _csv_py, positions as _positions_py
from fastpgn.scan.columns import check_columns
from fastpgn.scan.contract import ColumnError, ScanResult
from fastpgn.scan.fastpath import _CLOCKS, _SAN, _fast_game, _fast_headers, _fast_where
from fastpgn.scan.filters import ELO_BLACK, ELO_BOTH, ELO_EITHER, ELO_WHITE, SPEED_LIMITS, SPEEDS, speed_bit, where_plan
from fastpgn.scan.grammar import LINE_TAGS, RELEASES_GIL, REPLAYS_WITHOUT_GIL, SEP, _scan_game, last_game
from fastpgn.scan.lines import lines_from_block, opening_table
from fastpgn.scan.records import (
    GameCore,
    RecordFeed,
    games_from_block,
    headers_from_block,
    records_from_spans,
    spans_from_block,
)
from fastpgn.scan.release import release_suspects, release_text
from fastpgn.scan.utf8 import utf8_error

if _typing.TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from typing_extensions import Buffer

    from fastpgn.scan.filters import Spec


def columns_from_block(data: "Buffer", start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: "Spec | None" = None,
                       openings: "Mapping[bytes, bytes] | None" = None, uci: bool = False, positions: bool = False,
                       fens: bool = False, headers: bool = False) -> "ScanResult[dict[str, list[Any]]]":
    """The analysis schema's columns of the games in ``data[start:end]``, as Python lists (see scan/columns.py)."""
    return _columns_py.columns_from_block(data, start, end, base_offset=base_offset, first_game=first_game,
                                          at_stream_start=at_stream_start, stop_on_error=stop_on_error, where=where,
                                          openings=openings, uci=uci, scan=games_from_block, positions=positions,
                                          fens=fens, headers=headers, scan_headers=headers_from_block)


def positions_from_block(data: "Buffer", start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                         at_stream_start: bool = True, stop_on_error: bool = False, where: "Spec | None" = None,
                         openings: "Mapping[bytes, bytes] | None" = None, final: bool = False) -> _typing.Any:
    """One row per position of the games in ``data[start:end]``, as Python lists (see scan/positions.py)."""
    return _positions_py.positions_from_block(data, start, end, base_offset=base_offset, first_game=first_game,
                                              at_stream_start=at_stream_start, stop_on_error=stop_on_error,
                                              where=where, openings=openings, final=final, scan=games_from_block)


def csv_from_block(data: "Buffer", start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                   at_stream_start: bool = True, stop_on_error: bool = False, where: "Spec | None" = None,
                   openings: "Mapping[bytes, bytes] | None" = None, uci: bool = False,
                   columns: "Sequence[str] | None" = None, positions: bool = False,
                   fens: bool = False) -> "ScanResult[bytes]":
    """The whole games in ``data[start:end]`` as CSV rows (see scan/csv.py)."""
    return _csv_py.csv_from_block(data, start, end, base_offset=base_offset, first_game=first_game,
                                  at_stream_start=at_stream_start, stop_on_error=stop_on_error, where=where,
                                  openings=openings, uci=uci, columns=columns, scan=games_from_block,
                                  positions=positions, fens=fens)


__all__ = [
    "ELO_BLACK", "ELO_BOTH", "ELO_EITHER", "ELO_WHITE", "LINE_TAGS", "RELEASES_GIL", "REPLAYS_WITHOUT_GIL", "SEP",
    "ColumnError", "GameCore", "RecordFeed", "ScanResult", "records_from_spans", "spans_from_block",
    "SPEED_LIMITS", "SPEEDS", "check_columns", "columns_from_block", "csv_from_block", "games_from_block", "headers_from_block", "lines_from_block", "opening_table",
    "last_game", "positions_from_block", "release_suspects", "release_text", "speed_bit", "utf8_error", "where_plan",
    # the pure kernel's inner parts that tests/test_scan_py_fastpath.py holds to each other
    "_CLOCKS", "_SAN", "_fast_game", "_fast_headers", "_fast_where", "_scan_game",
]

# The column sink checked against fastpgn.schema.COLUMNS as the kernel loads (as scan/_scan_cy.pyx does).
check_columns()
