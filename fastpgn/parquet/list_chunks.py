"""The per-ply lists' Parquet column chunks, written by fastpgn; pyarrow writes the other columns.

A dump's bulk is per-ply lists: the SAN ``moves`` and ``judgement``
(``list<string>``), ``clock``, ``move_seconds``, ``win_percent``
(``list<float32>``), ``eval_cp`` (``list<int16>``) and ``eval_mate``
(``list<int8>``), and ``uci`` when asked for (``fens`` stays pyarrow's:
``PYARROWS``). pyarrow encodes a
list through its general nested-column path (levels computed a batch of
1,024 at a time, a hash a value, indices buffered and packed again), which
made these lists two thirds of a Parquet conversion's encoding
(``benchmarks.parquet_encoding``). Their shape is fixed (an optional list of
optional values), so the kernel writes each as one data page in one pass
(``fastpgn/parquet/pages.py``, the list-page writer: levels as RLE runs, the values
dictionary-encoded), and here the page gets its headers and zstd, as pyarrow
compresses its own, and the column chunk its metadata.

:func:`encode_row_group` has pyarrow encode the other columns as a
one-row-group file, then puts these chunks among pyarrow's, in the schema's
order, and gives the footer the whole schema (its Parquet schema, column
orders and ``ARROW:schema``, from pyarrow's file of the whole schema with no
rows). What comes out is what ``row_groups.JoinedParquetFile`` joins: a
reader sees the same schema and the same values as if pyarrow had written
every column (tests/parquet/test_list_chunks.py reads them back with
pyarrow, DuckDB, polars and Spark). The converter encodes its row groups on
its encoder threads; :class:`ParquetFileWriter` writes a file a row group at
a time for ``to_parquet``, ``fastpgn.spark.convert`` and ``analyse --format parquet``.

``writer="pyarrow"`` (``--parquet-writer pyarrow``) leaves every column to
pyarrow, these lists too: the file is then the very bytes one pyarrow
``ParquetWriter`` writes with fastpgn's settings (the row groups are still
encoded apart and joined, which gives those bytes).
"""

from __future__ import annotations

import threading

from fastpgn.parquet import pages, thrift
from fastpgn.parquet.row_groups import (
    CC_META,
    FILE_ROW_GROUPS,
    MAGIC,
    RG_COLUMNS,
    RG_TOTAL_COMPRESSED,
    EncodedRowGroup,
    JoinedParquetFile,
    JoinError,
    encode_row_group as pyarrow_row_group,
    moved_column,
)
from fastpgn.parquet.settings import list_string_sizes, rows_within

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

# parquet.thrift's numbers
_PAGE_DATA, _PAGE_DICTIONARY = 0, 2
_PLAIN, _RLE, _RLE_DICTIONARY = 0, 3, 8
_FLOAT, _INT32, _BYTE_ARRAY = 4, 1, 6
_ZSTD = 6
_RG_TOTAL_BYTES = 2                             # RowGroup.total_byte_size
_FILE_SCHEMA, _FILE_KEY_VALUES, _FILE_COLUMN_ORDERS = 2, 5, 7

#: The value types of the lists written here (pyarrow's names) and their Parquet physical types.
PHYSICAL = {"float": _FLOAT, "int16": _INT32, "int8": _INT32, "string": _BYTE_ARRAY}

#: Lists left to pyarrow: ``fens``, a whole position a ply (60 bytes), is megabytes a row group, which
#: pyarrow cuts into pages of 1 MB where the kernel writes one page.
PYARROWS = frozenset({"fens"})

#: Who writes the per-ply lists' pages: fastpgn's list-page writer (the default), or pyarrow, as it writes
#: every other column.
WRITERS = ("fastpgn", "pyarrow")

_templates: dict[tuple[bytes, Any], list[Any]] = {}
_templates_lock = threading.Lock()


def check_writer(writer: str) -> str:
    """``writer`` if it is one of :data:`WRITERS`, else a ValueError saying which are."""
    if writer not in WRITERS:
        raise ValueError(f"the Parquet writer must be {' or '.join(WRITERS)}, not {writer!r}")
    return writer


def own_columns(arrow_schema: Any, writer: str = "fastpgn") -> list[str]:
    """The schema's columns written here: lists of float32, int16, int8 or string (none for ``writer``
    ``"pyarrow"``)."""
    import pyarrow as pa

    if check_writer(writer) == "pyarrow":
        return []
    return [f.name for f in arrow_schema
            if pa.types.is_list(f.type) and str(f.type.value_type) in PHYSICAL and f.name not in PYARROWS]


def _template(arrow_schema: Any, make_writer: Any) -> list[Any]:
    """The footer pyarrow writes for ``arrow_schema`` and no rows (its schema fields are taken from it)."""
    # by its IPC bytes: a schema with metadata hashes only from pyarrow 22 on (before, a dict in a tuple)
    key = (arrow_schema.serialize().to_pybytes(), make_writer)
    footer = _templates.get(key)
    if footer is None:
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        make_writer(sink, arrow_schema).close()
        data = sink.getvalue().to_pybytes()
        size = int.from_bytes(data[-8:-4], "little")
        footer = thrift.read_struct(data[-8 - size:-8])[0]
        with _templates_lock:
            _templates[key] = footer
    return footer


def _i32(fid: int, value: int) -> list[Any]:
    return [fid, thrift.I32, value]


def _page_header(kind: int, raw: int, packed: int, detail: list[Any]) -> bytes:
    fields = [_i32(1, kind), _i32(2, raw), _i32(3, packed),
              [7 if kind == _PAGE_DICTIONARY else 5, thrift.STRUCT, detail]]
    out = bytearray()
    thrift.write_struct(out, fields)
    return bytes(out)


def column_chunk(name: str, array: Any, codec: Any) -> tuple[bytes, list[Any], int]:
    """``array``'s column chunk: its bytes, its ``ColumnChunk`` structure (offsets from the chunk's start),
    and its uncompressed size."""
    body, dictionary, entries, distinct = pages.kernel.list_page(array)
    out = bytearray()
    raw_total = 0
    stats = []
    dictionary_at = None
    if dictionary is not None:
        packed = codec.compress(dictionary, asbytes=True)
        header = _page_header(_PAGE_DICTIONARY, len(dictionary), len(packed),
                              [_i32(1, distinct), _i32(2, _PLAIN), [3, thrift.FALSE, False]])
        dictionary_at = 0
        out += header + packed
        raw_total += len(header) + len(dictionary)
        stats.append([_i32(1, _PAGE_DICTIONARY), _i32(2, _PLAIN), _i32(3, 1)])
    encoding = _RLE_DICTIONARY if dictionary is not None else _PLAIN
    packed = codec.compress(body, asbytes=True)
    header = _page_header(_PAGE_DATA, len(body), len(packed),
                          [_i32(1, entries), _i32(2, encoding), _i32(3, _RLE), _i32(4, _RLE)])
    data_at = len(out)
    out += header + packed
    raw_total += len(header) + len(body)
    stats.append([_i32(1, _PAGE_DATA), _i32(2, encoding), _i32(3, 1)])
    meta = [_i32(1, PHYSICAL[str(array.type.value_type)]),
            [2, thrift.LIST, (thrift.I32, [_PLAIN, _RLE] + ([_RLE_DICTIONARY] if dictionary is not None else []))],
            [3, thrift.LIST, (thrift.BINARY, [name.encode(), b"list", b"element"])],
            _i32(4, _ZSTD),
            [5, thrift.I64, entries],
            [6, thrift.I64, raw_total],
            [7, thrift.I64, len(out)],
            [9, thrift.I64, data_at]]
    if dictionary_at is not None:
        meta.append([11, thrift.I64, dictionary_at])
    meta.append([13, thrift.LIST, (thrift.STRUCT, stats)])
    return bytes(out), [[2, thrift.I64, 0], [3, thrift.STRUCT, meta]], raw_total


def _chunk_span(column: list[Any]) -> tuple[int, int]:
    """Where a pyarrow column chunk's bytes start in its file, and how many."""
    meta = thrift.field(column, CC_META)[2]
    start = thrift.field(meta, 9)[2]
    dictionary = thrift.field(meta, 11)
    if dictionary is not None and dictionary[2]:
        start = min(start, dictionary[2])
    return start, thrift.field(meta, 7)[2]


def encode_row_group(table: Any, arrow_schema: Any, make_writer: Any, writer: str = "fastpgn") -> EncodedRowGroup:
    """``table`` as one row group: pyarrow's encoding of every column but :func:`own_columns`, which are
    written here, and the whole in the schema's order (``row_groups.encode_row_group``'s contract)."""
    import pyarrow as pa

    own = set(own_columns(arrow_schema, writer))
    if not own or not table.num_rows or len(own) == len(arrow_schema):     # (pyarrow's footer needs a column)
        return pyarrow_row_group(table, arrow_schema, make_writer)
    rest_schema = pa.schema([f for f in arrow_schema if f.name not in own], metadata=arrow_schema.metadata)
    theirs = pyarrow_row_group(table.select(rest_schema.names), rest_schema, make_writer)
    template = _template(arrow_schema, make_writer)
    codec = pa.Codec("zstd")
    group = thrift.field(theirs.footer, FILE_ROW_GROUPS)[2][1][0]
    their_columns = thrift.field(group, RG_COLUMNS)[2][1]
    by_field: dict[str, list[Any]] = {}
    for column in their_columns:
        top = thrift.field(thrift.field(column, CC_META)[2], 3)[2][1][0].decode()
        by_field.setdefault(top, []).append(column)
    body = bytearray()
    columns = []
    raw_added = 0
    base = len(MAGIC)
    for field in arrow_schema:
        if field.name in own:
            data, column, raw = column_chunk(field.name, table.column(field.name).combine_chunks(), codec)
            columns.append(moved_column(column, base + len(body)))
            body += data
            raw_added += raw
            continue
        for column in by_field.pop(field.name, ()):
            start, size = _chunk_span(column)
            columns.append(moved_column(column, base + len(body) - start))
            body += theirs.body[start - base:start - base + size]
    if by_field:
        raise JoinError(f"pyarrow wrote columns the schema does not name: {sorted(by_field)}")
    fields = []
    for fid, kind, value in group:
        if fid == RG_COLUMNS:
            value = (value[0], columns)
        elif fid == _RG_TOTAL_BYTES:            # the uncompressed column chunks
            value += raw_added
        elif fid == RG_TOTAL_COMPRESSED:
            value = len(body)
        fields.append([fid, kind, value])
    footer = []
    for fid, kind, value in theirs.footer:
        if fid == FILE_ROW_GROUPS:
            value = (value[0], [fields])
        elif fid in (_FILE_SCHEMA, _FILE_KEY_VALUES, _FILE_COLUMN_ORDERS):    # the whole schema's (ARROW:schema)
            found = thrift.field(template, fid)
            if found is None:
                continue
            value = found[2]
        footer.append([fid, kind, value])
    out = EncodedRowGroup.__new__(EncodedRowGroup)
    out.body = memoryview(bytes(body))
    out.footer = footer
    out.rows = theirs.rows
    return out


class ParquetFileWriter:
    """One Parquet file as the converter writes its chunks, with the face of pyarrow's ``ParquetWriter``
    that ``to_parquet``, ``fastpgn.spark.convert`` and ``analyse`` use (``write_table``, ``write_batch``, ``close``):
    each row group encoded by :func:`encode_row_group` on the calling thread, then joined
    (``row_groups.JoinedParquetFile``). ``where``: a path or a binary file object (left open); ``writer``:
    who writes the per-ply lists' pages (:data:`WRITERS`).
    """

    def __init__(self, where: Any, arrow_schema: Any, make_writer: Any, writer: str = "fastpgn") -> None:
        self.schema = arrow_schema
        self._make_writer = make_writer
        self._writer = check_writer(writer)
        empty = bytearray()
        thrift.write_struct(empty, _template(arrow_schema, make_writer))    # a file of no games: pyarrow's
        self._file = JoinedParquetFile(where, bytes(empty))

    def write_table(self, table: Any, row_group_size: int | None = None) -> None:
        """``table``'s rows as row groups of ``row_group_size`` rows (one row group without it), fewer where a
        ``list<string>`` column would pass ``settings.LIST_STRING_BYTES`` (int32 offsets)."""
        size = row_group_size or max(table.num_rows, 1)
        sizes = list_string_sizes(table)
        at = 0
        while at < table.num_rows:
            rows = rows_within(sizes, min(size, table.num_rows - at), at)
            part = table.slice(at, rows).combine_chunks()
            self._file.append(encode_row_group(part, self.schema, self._make_writer, self._writer))
            at += rows

    def write_batch(self, batch: Any) -> None:
        """One record batch as one row group."""
        import pyarrow as pa

        self.write_table(pa.Table.from_batches([batch], schema=self.schema))

    def close(self) -> None:
        self._file.close()
