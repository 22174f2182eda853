"""The settings of every Parquet file fastpgn writes, and the row-group bound of its ``list<string>`` columns.

``parquet_writer`` is pyarrow's ``ParquetWriter`` as fastpgn sets it up (the
converter's chunks, ``to_parquet``, ``fastpgn.spark.convert``, ``analyse
--format parquet``); ``rows_within`` cuts a row group (and ``read_arrow``'s
batches) before a ``list<string>`` column passes Arrow's int32 offsets.
pyarrow is imported on first use.
"""

from __future__ import annotations

import bisect

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: The most string bytes one ``list<string>`` column (``fens``, ``moves``, ...) may hold in one row group: an
#: Arrow string array's offsets are int32, so pyarrow cannot make one array of a row group's strings beyond it
#: (16,384 games of 2,200 plies of FENs pass it). A constant of the module, so a test can make it small.
LIST_STRING_BYTES = (1 << 31) - 1


def list_string_sizes(data: Any) -> list[list[int]]:
    """Each ``list<string>`` column of ``data`` (a record batch or table): its string bytes before each row,
    ``n + 1`` counts from 0, read from the columns' own offsets.

    >>> import pyarrow as pa
    >>> list_string_sizes(pa.table({"moves": [["e4", "e5"], None, ["Nf3"]], "plies": [2, 0, 1]}))
    [[0, 4, 4, 7]]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = []
    for column in data.columns:
        if not (pa.types.is_list(column.type) and pa.types.is_string(column.type.value_type)):
            continue
        counts = [0]
        for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
            if len(chunk) == 0:
                continue
            values = chunk.values       # (a string array shows no offsets: read from its buffer)
            starts = pa.Array.from_buffers(pa.int32(), len(values) + 1, [None, values.buffers()[1]], values.offset)
            # the string offset at each list offset: where each row's strings start in the bytes
            at = pc.take(starts, chunk.offsets).to_pylist()
            shift = counts[-1] - at[0]
            counts.extend(a + shift for a in at[1:])
        sizes.append(counts)
    return sizes


def rows_within(sizes: list[list[int]], rows: int, start: int = 0) -> int:
    """How many of the ``rows`` rows from ``start`` (one at least) go in one row group: no ``list<string>``
    column's strings (``sizes``: ``list_string_sizes``) past ``LIST_STRING_BYTES``.

    >>> rows_within([[0, 4, 4, 7]], 3), rows_within([[0, 2**30, 2**31, 2**31 + 9]], 3)
    (3, 1)
    """
    fit = rows
    for counts in sizes:
        fit = min(fit, bisect.bisect_right(counts, counts[start] + LIST_STRING_BYTES, start, start + rows + 1)
                  - 1 - start)
    return max(fit, 1)


# Unique to a game (or nearly, a position after the opening): a dictionary would only cost there (plain pages
# are smaller and written faster).
_PLAIN_COLUMNS = ("game_id", "site", "byte_offset", "zobrist", "fens")


def _leaf_paths(field: Any) -> list[str]:
    """The Parquet column paths of an Arrow field of the schema (as pyarrow names them: lists and maps
    in the standard's layout)."""
    import pyarrow as pa

    if pa.types.is_list(field.type):
        path = f"{field.name}.list.element"
        kind = field.type.value_type
        while pa.types.is_list(kind):       # (nags: a list of lists)
            path += ".list.element"
            kind = kind.value_type
        if pa.types.is_struct(kind):        # (tags: a list of name and value pairs)
            return [f"{path}.{f.name}" for f in kind]
        return [path]
    return [field.name]


def parquet_writer(where: Any, arrow_schema: Any) -> Any:
    """A ``pyarrow.parquet.ParquetWriter`` with the settings of every Parquet file fastpgn writes (the
    converter's chunks, ``to_parquet``, ``fastpgn.spark.convert``): pyarrow encodes every column with
    them but the per-ply lists, which fastpgn's list-page writer writes (``fastpgn.parquet.list_chunks``;
    all of them, with ``--parquet-writer pyarrow``).

    zstd; dictionary pages for every column but ``game_id`` and ``offset``
    (the writer falls back to plain pages where a dictionary grows past its
    limit, so they pay where values repeat, SAN moves included; game ids and
    offsets never repeat, and plain pages are smaller and written faster
    there; byte-stream-split pages would suit the clocks better, but Spark
    3.5's reader refuses them); min/max statistics on the scalar columns that are not text
    (numbers, dates, times, the mate flag): readers skip row groups by them (a range of dates,
    of ratings), while no reader prunes by the min/max of a row group's names, events or
    openings (thousands of games span the alphabet) nor by those of the per-ply lists and the
    tags, and their string comparisons cost 8% of the writing (the lists) and 6% more
    (the text columns; docs/schema.md).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    scalars = [f.name for f in arrow_schema
               if not (pa.types.is_list(f.type) or pa.types.is_string(f.type))]
    dictionaries = [path for f in arrow_schema if f.name not in _PLAIN_COLUMNS for path in _leaf_paths(f)]
    return pq.ParquetWriter(where, arrow_schema, compression="zstd", use_dictionary=dictionaries,
                            write_statistics=scalars)


__all__ = ["LIST_STRING_BYTES", "list_string_sizes", "parquet_writer", "rows_within"]
