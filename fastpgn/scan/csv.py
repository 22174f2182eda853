"""Pure-Python CSV sink: a block of games -> its rows as CSV text; the twin and reference of scan/csv.pxi.

The rows are the pure column sink's lists (fastpgn.scan.columns: the value
rules) written by ``fastpgn.csv_text.write_csv`` (the text rules: RFC 4180,
``\\r\\n``, quoted only where a field must be; docs/schema.md). The compiled
sink writes the compiled column sink's buffers as the same bytes, in C and
without the GIL.
"""

from __future__ import annotations

import io

from fastpgn import schema
from fastpgn.scan import columns as _columns
from fastpgn.scan.contract import ColumnError, ScanResult

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from typing_extensions import Buffer

    from fastpgn.scan._kernel import GameRecord
    from fastpgn.scan.filters import Spec

#: The column types the CSV sink writes (csv_text's rules: docs/schema.md), each sink dispatching on the type a
#: column has in fastpgn.schema: a column of another type is a ColumnError naming it, in both kernels.
WRITES = frozenset((
    "string", "bool", "int8", "int16", "int32", "int64", "float32", "date32", "timestamp[s, tz=UTC]",
    "list<string>", "list<int8>", "list<int16>", "list<int64>", "list<float32>", "list<list<int16>>",
    "list<struct<key: string, value: string>>",
))


def column_numbers(columns: Iterable[str] | None, uci: bool, positions: bool = False, fens: bool = False) -> bytes:
    """The column numbers (schema order, ``uci``, ``zobrist``, ``fens`` last) of the names in ``columns`` (None:
    every column); ColumnError for a column of a type the CSV sink does not write.

    >>> column_numbers(["white", "utc"], False)
    b'\\x05\\x03'
    """
    chosen = schema.chosen_names(columns, uci, positions, fens)
    if not chosen:
        raise ValueError("columns names no column")
    every = schema.columns(uci=True, positions=True, fens=True)
    numbers = {c.name: k for k, c in enumerate(every)}
    for name in chosen:
        kind = every[numbers[name]].type
        if kind not in WRITES:
            raise ColumnError(f"the CSV sink has no writer for the column {name!r} ({kind})")
    return bytes(numbers[name] for name in chosen)


def csv_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                   at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                   openings: Mapping[bytes, bytes] | None = None, uci: bool = False,
                   columns: Iterable[str] | None = None,
                   scan: Callable[..., ScanResult[list[GameRecord]]] | None = None, positions: bool = False,
                   fens: bool = False) -> ScanResult[bytes]:
    """The whole games in ``data[start:end]`` as CSV rows: a ScanResult ``(text, games_read, rejects, filtered)``.

    ``text`` is the rows of the good games as UTF-8 bytes, no header row,
    with the fields of ``columns`` (schema names, in that order; None: every
    column of ``schema.names(uci)``). The other arguments and answers are
    ``columns_from_block``'s (``uci``: the games replayed, one that does not
    replay rejected, and the ``uci`` column there to choose; ``positions``,
    ``fens``: the ``zobrist`` and ``fens`` columns too).

    >>> pgn = b'[White "Ann, Jr."]\\n[WhiteElo "1500"]\\n\\n1. e4 { [%clk 0:02:57.7] } *\\n'
    >>> csv_from_block(pgn, 0, len(pgn), columns=["white", "white_elo", "clock"])
    ScanResult(output=b'"Ann, Jr.",1500,177.7\\r\\n', games_read=1, rejects=[], filtered=0)
    """
    from fastpgn.csv_text import write_csv

    numbers = column_numbers(columns, uci, positions, fens)
    values, read, rejects, filtered = _columns.columns_from_block(
        data, start, end, base_offset=base_offset, first_game=first_game, at_stream_start=at_stream_start,
        stop_on_error=stop_on_error, where=where, openings=openings, uci=uci, scan=scan, positions=positions,
        fens=fens)
    names = schema.names(uci=True, positions=True, fens=True)
    out = io.BytesIO()
    write_csv({names[k]: values[names[k]] for k in numbers}, out, header=False)
    return ScanResult(out.getvalue(), read, rejects, filtered)


__all__ = ["WRITES", "column_numbers", "csv_from_block"]
