"""Games as Arrow record batches and Parquet files, in the analysis schema (``fastpgn.schema``).

``read_arrow`` reads any source the other readers read, block by block (the
readers' block machinery and error policy, ``fastpgn.reader``), turns each
block into columns with the column sink, and yields ``pyarrow.RecordBatch``
objects of ``batch_size`` rows: memory stays bounded whatever the input
size. ``to_parquet`` writes those batches to one Parquet file. pyarrow is
imported on first use (``pip install "fastpgn[arrow]"``): ``import
fastpgn`` does not need it, nor does CSV output (``fastpgn.csv_text``),
which reads the same column dicts through ``ColumnReader``.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
from typing import Iterator

from fastpgn import openings as _openings, schema
from fastpgn.scan import columns as _columns_py
from fastpgn import scan as _scan
from fastpgn.errors import OutputError, PGNError
from fastpgn.io.sources import BLOCK_SIZE
from fastpgn.reader import _RecordReader

BATCH_SIZE = 65_536
#: The most string bytes one ``list<string>`` column (``fens``, ``moves``, ...) may hold in one row group: an
#: Arrow string array's offsets are int32, so pyarrow cannot make one array of a row group's strings beyond it
#: (16,384 games of 2,200 plies of FENs pass it). A constant of the module, so a test can make it small.
LIST_STRING_BYTES = (1 << 31) - 1


def list_string_sizes(data) -> list[list[int]]:
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


class ColumnReader(_RecordReader):
    """Iterate the columns of each block; see ``read_arrow``.

    With ``lists`` (CSV output: needs no pyarrow) each column is a Python
    list; else each is what the live kernel's ``columns_from_block`` gives
    (Arrow buffers from the compiled kernel, lists from the pure one), for
    ``record_batch``.

    Counts as the other readers: ``games_read == games_yielded +
    len(rejected) + games_filtered``.
    """

    def __init__(self, source, errors: str = "raise", block_size: int = BLOCK_SIZE, where=None, uci: bool = False,
                 openings=None, columns=None, lists: bool = False, encoding: str | None = None,
                 positions: bool = False, fens: bool = False, jobs: int | None = None) -> None:
        from fastpgn import filters

        self.lists = lists
        self.uci = bool(uci)
        self.positions = bool(positions)
        self.fens = bool(fens)
        self.columns = schema.chosen_names(columns, self.uci, self.positions, self.fens)
        self.where = filters.as_where(where)
        self._plan = filters.plan(self.where)
        self.games_filtered = 0
        if openings is None:
            openings = _columns_py.default_openings()
        elif not isinstance(openings, dict):
            openings = _openings.load(openings)
        self.openings = openings
        # the map as the kernel reads it fastest (the compiled one: a C copy), made once a reader
        self._table = openings if lists else _scan.kernel.opening_table(openings)
        self._threads_scan = not lists     # (the lists' sink is Python's, holding the GIL)
        super().__init__(source, errors, block_size, encoding, jobs)

    def _read(self) -> Iterator[dict]:
        for columns, rows in ColumnReader._column_blocks(self):
            self.games_yielded += rows
            yield columns

    def _column_blocks(self) -> Iterator[tuple]:
        """``(columns, rows)`` per block with games (``columns`` as ``_made`` makes them); the policy's
        error after the block's good games."""
        sink = _columns_py.columns_from_block if self.lists else _scan.kernel.columns_from_block
        extra = {"positions": True} if self.positions else {}
        if self.fens:
            extra["fens"] = True
        scanned = _RecordReader._scanned(self, sink, made=self._maker(), openings=self._table, uci=self.uci,
                                         **extra)
        try:
            for columns, rows in scanned:
                if rows:
                    yield columns, rows
        finally:
            scanned.close()     # the source with it, now

    def _maker(self):
        """What makes ``(the chosen columns, rows)`` of a block's column sink output, on the thread that
        scanned it."""
        return functools.partial(_chosen, self.columns)


def _chosen(names: tuple, columns: dict) -> tuple:
    """``(the columns named, rows)`` of a block's column sink output."""
    offsets = columns["byte_offset"]
    rows = len(offsets) if isinstance(offsets, list) else offsets[0]
    return {name: columns[name] for name in names}, rows


def _batch(names: tuple, uci: bool, positions: bool, fens: bool, columns: dict) -> tuple:
    """``(a RecordBatch of the columns named, rows)`` of a block's column sink output (None for no rows)."""
    chosen, rows = _chosen(names, columns)
    return (record_batch(chosen, uci, positions, fens) if rows else None), rows


def record_batch(columns: dict, uci: bool = False, positions: bool = False, fens: bool = False):
    """A ``pyarrow.RecordBatch`` of a column dict (the schema's names; their order is kept).

    >>> batch = record_batch({"white": ["Ann", None], "white_elo": [1500, None]})
    >>> batch.schema.field("white_elo").type, batch.column(0).to_pylist()
    (DataType(int16), ['Ann', None])
    """
    pa = schema.require_pyarrow("fastpgn.arrow.record_batch()")
    full = schema.arrow_schema(uci, positions, fens)
    by_name = _fields(uci, positions, fens)
    fields = []
    arrays = []
    for name, values in columns.items():
        field = by_name.get(name)
        if field is None:
            flag = schema.OPTIONAL.get(name)
            raise ValueError(f"no column {name!r} in the schema" + (f" ({name} needs {flag}=True)" if flag else ""))
        fields.append(field)
        arrays.append(_column_array(pa, field, values))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, metadata=full.metadata))


@functools.cache
def _fields(uci: bool, positions: bool, fens: bool) -> dict:
    """The schema's fields by name."""
    return {field.name: field for field in schema.arrow_schema(uci, positions, fens)}


def _column_array(pa, field, values):
    """One column as an Arrow array of the field's type."""
    if isinstance(values, list):
        try:
            return pa.array(values, type=field.type)
        except pa.ArrowInvalid:
            if field.type != pa.list_(pa.float32()):
                raise
            # pyarrow refuses an int that float32 cannot hold exactly (a clock of 4661:00:01): as a double, it
            # rounds, as the compiled sink rounds it
            return pa.array([None if v is None else [None if x is None else float(x) for x in v] for v in values],
                            type=field.type)
    if isinstance(values, pa.Array):
        if values.type != field.type:
            raise TypeError(f"column {field.name} is {values.type}, the schema says {field.type}")
        return values
    if isinstance(values, tuple):
        return _from_buffers(pa, field.type, values)
    raise TypeError(f"column {field.name} must be a list or a pyarrow Array, not {type(values).__name__}")


def _from_buffers(pa, kind, spec):
    """An array from the compiled column sink's ``(length, null_count, buffers, children)``, without a copy."""
    length, nulls, buffers, children = spec
    wrapped = [None if b is None else pa.py_buffer(b) for b in buffers]
    if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):     # the tags: offsets, names, values
        offsets = pa.Array.from_buffers(pa.int32(), length + 1, [None, wrapped[1]])
        pairs = pa.StructArray.from_arrays([_from_buffers(pa, f.type, child) for f, child in zip(kind.value_type, children)],
                                           fields=list(kind.value_type))
        return pa.ListArray.from_arrays(offsets, pairs, type=kind)
    kids = [_from_buffers(pa, kind.value_type, children[0])] if pa.types.is_list(kind) else None
    return pa.Array.from_buffers(kind, length, wrapped, null_count=nulls, children=kids)


class ArrowReader(ColumnReader):
    """Iterate ``pyarrow.RecordBatch`` objects of ``batch_size`` rows (the last one may be shorter, and one of
    strings past ``LIST_STRING_BYTES``); see ``read_arrow``."""

    def __init__(self, source, batch_size: int = BATCH_SIZE, **options) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of rows, at least 1, not {batch_size!r}")
        self.batch_size = batch_size
        self._pa = schema.require_pyarrow("fastpgn.read_arrow()")
        super().__init__(source, **options)
        self.schema = self._selected_schema()

    def _selected_schema(self):
        full = schema.arrow_schema(self.uci, self.positions, self.fens)
        return self._pa.schema([full.field(name) for name in self.columns], metadata=full.metadata)

    def _maker(self):
        # Arrow arrays hold a block's games in far less memory than Python lists: made on the worker.
        return functools.partial(_batch, self.columns, self.uci, self.positions, self.fens)

    def _read(self) -> Iterator:
        pending = []    # batches of whole blocks, not yet batch_size rows together
        rows = 0
        try:
            for batch, n in ColumnReader._column_blocks(self):
                pending.append(batch)
                rows += n
                while rows >= self.batch_size:
                    batch, pending, rows = self._cut(pending, self.batch_size)
                    self.games_yielded += batch.num_rows
                    yield batch
        except PGNError:
            # The games before the error are yielded first, as read_games does.
            while rows:
                batch, pending, rows = self._cut(pending, rows)
                self.games_yielded += batch.num_rows
                yield batch
            raise
        while rows:
            batch, pending, rows = self._cut(pending, rows)
            self.games_yielded += batch.num_rows
            yield batch

    def _cut(self, pending: list, size: int):
        """The first ``size`` rows of ``pending`` as one batch (fewer where a ``list<string>`` column would pass
        ``LIST_STRING_BYTES``: one array cannot hold more), and what is left."""
        table = self._pa.Table.from_batches(pending, schema=self.schema)
        size = rows_within(list_string_sizes(table), size)
        head = table.slice(0, size).combine_chunks().to_batches()
        batch = head[0] if head else self._pa.RecordBatch.from_pylist([], schema=self.schema)
        rest = table.slice(size)
        return batch, rest.to_batches(), rest.num_rows


def read_arrow(source, *, batch_size: int = BATCH_SIZE, columns=None, errors: str = "raise", where=None,
               uci: bool = False, openings=None, block_size: int = BLOCK_SIZE,
               encoding: str | None = None, positions: bool = False, fens: bool = False,
               jobs: int | None = None) -> ArrowReader:
    """Iterate the games of ``source`` as ``pyarrow.RecordBatch`` objects in the analysis schema.

    ``source`` is anything ``read_games`` reads (a path, ``-``, bytes, a file
    object, an iterable of lines; compressed or not). Each batch holds
    ``batch_size`` games (rows), the last one fewer (and any where a ``list<string>``
    column, ``fens`` of long games, would pass 2 GiB, Arrow's int32 offsets); the columns are those of
    ``fastpgn.schema`` (docs/schema.md), or ``columns`` (a list of names, in
    that order). ``errors``, ``where`` and the counts (``reader.games_read``,
    ``games_yielded``, ``games_filtered``, ``rejected``) are read_games'.
    ``uci=True`` adds the ``uci`` column: the moves replayed on fastpgn's
    board, and a game whose moves do not replay is rejected, as the
    converter's ``--uci`` rejects it. ``positions=True`` adds the ``zobrist``
    column (each ply's position as its Polyglot key, see ``fastpgn.position_key``)
    and ``fens=True`` the ``fens`` column (each ply's FEN), from the same
    replay and with the same rejects. ``openings`` is the map of
    ``opening_code`` (default: the shipped map; or a path, as ``read_lines``).
    The reader is an iterator and a context manager; ``reader.schema`` is the
    batches' schema. ``encoding`` names the input's encoding, as in read_games.

    ``jobs`` worker threads scan the blocks and make their columns without
    the GIL (None, the default: every core, ``os.cpu_count()``, on the
    compiled backend, one on the pure one; 1: the calling thread alone),
    while a thread of its own reads and decompresses the input; the batches
    come out in input order, the same for any ``jobs`` (rows, rejected
    games, errors raised after the same games). Memory stays bounded: at
    most ``2 * jobs`` blocks of ``block_size`` bytes are in the workers'
    hands or waiting, and two more are read ahead; breaking out of the loop
    ends the threads.

    >>> pgn = b'[Site "https://lichess.org/abc"]\\n[WhiteElo "1500"]\\n\\n1. e4 { [%eval 0.33] } e5 { [%eval #-3] } 0-1\\n'
    >>> batch = next(read_arrow(pgn))
    >>> row = batch.to_pylist()[0]
    >>> row["game_id"], row["white_elo"], row["result"], row["moves"], row["eval_cp"], row["eval_mate"]
    ('abc', 1500, '0-1', ['e4', 'e5'], [33, None], [None, -3])
    >>> with read_arrow(pgn, columns=["moves", "plies"], uci=True) as batches:
    ...     [b.to_pydict() for b in batches]
    [{'moves': [['e4', 'e5']], 'plies': [2]}]
    """
    return ArrowReader(source, batch_size, errors=errors, block_size=block_size, where=where, uci=uci,
                       openings=openings, columns=columns, encoding=encoding, positions=positions, fens=fens,
                       jobs=jobs)


# Unique to a game (or nearly, a position after the opening): a dictionary would only cost there (plain pages
# are smaller and written faster).
_PLAIN_COLUMNS = ("game_id", "site", "byte_offset", "zobrist", "fens")


def _leaf_paths(field) -> list[str]:
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


def parquet_writer(where, arrow_schema):
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


def to_parquet(source, path, *, writer: str = "fastpgn", **read_arrow_options) -> ArrowReader:
    """Write the games of ``source`` to one Parquet file at ``path`` (a path or a binary file object).

    Takes ``read_arrow``'s options (``jobs`` too). One row group per batch, encoded as the
    converter encodes its chunks (zstd, dictionary pages where they pay, the per-ply lists by
    fastpgn's list-page writer: docs/schema.md); ``writer="pyarrow"`` has pyarrow write every
    column, those lists too (the bytes of pyarrow's own ``ParquetWriter``; the same table read
    back). A path is written in full or not at all: the file is
    made in a hidden folder of its own beside ``path`` and renamed onto it once whole, so on an
    error (a full disk, damaged input) nothing is left behind and a file already at ``path``
    stays as it was. A symbolic link at ``path`` is never written through: the finished file
    replaces the link (``fastpgn.io.output.staged``). A failed write raises
    ``fastpgn.OutputError`` in one line naming the file (``cannot write games.parquet: No space
    left on device``); the input's own errors are raised as the readers raise them. Returns the
    finished reader, for its counts (``games_read``, ``games_yielded``, ``rejected``, ...).

    >>> import io, pyarrow.parquet as pq
    >>> out = io.BytesIO()
    >>> to_parquet(b'[White "Ann"]\\n\\n1. e4 *\\n', out).games_yielded
    1
    >>> pq.read_table(out).column("white").to_pylist()
    ['Ann']
    """
    from fastpgn.io import output
    from fastpgn.parquet.list_chunks import check_writer

    check_writer(writer)
    reader = read_arrow(source, **read_arrow_options)
    with reader:
        if not isinstance(path, (str, os.PathLike)):
            _write_parquet(reader, path, str(getattr(path, "name", "the Parquet output")), writer)
            return reader
        name = os.fspath(path)
        with _writing(name), output.staged(name) as where:
            if where == name:       # a device (/dev/null), written directly
                with output.open_named(name, "wb") as stream:
                    _write_parquet(reader, stream, name, writer)
            else:
                _write_parquet(reader, where, name, writer)
    return reader


def _write_parquet(reader, where, name: str, writer: str) -> None:
    """``reader``'s batches as one Parquet file at ``where`` (a path or a file object); a failed write is an
    ``OutputError`` naming ``name``."""
    from fastpgn.parquet.list_chunks import ParquetFileWriter

    with _writing(name):
        file = ParquetFileWriter(where, reader.schema, parquet_writer, writer)
    for batch in reader:
        with _writing(name):
            file.write_batch(batch)
    with _writing(name):
        file.close()


@contextlib.contextmanager
def _writing(name: str) -> Iterator[None]:
    """An ``OSError`` of the output (a full disk, a folder that cannot be written) as one line naming it."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None


__all__ = ["ArrowReader", "ColumnReader", "LIST_STRING_BYTES", "list_string_sizes", "parquet_writer", "read_arrow",
           "record_batch", "rows_within", "to_parquet"]
