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

import contextlib
import functools
import os
from collections.abc import Iterator

from fastpgn import openings as _openings, scan as _scan, schema
from fastpgn.errors import OutputError, PGNError
from fastpgn.io.sources import BLOCK_SIZE
from fastpgn.parquet.batches import record_batch
from fastpgn.parquet.settings import LIST_STRING_BYTES, list_string_sizes, parquet_writer, rows_within
from fastpgn.reader import _RecordReader
from fastpgn.scan import columns as _columns_py

BATCH_SIZE = 65_536


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
            # (the shipped map, whose index costs about 0.1 s to build, only where its column is asked for)
            openings = _columns_py.default_openings() if "opening_code" in self.columns else {}
        elif not isinstance(openings, dict):
            openings = _openings.load(openings)
        self.openings = openings
        # the map as the kernel reads it fastest (the compiled one: a C copy), made once a reader
        self._table = openings if lists else _scan.kernel.opening_table(openings)
        self._threads_scan = not lists     # (the lists' sink is Python's, holding the GIL)
        from fastpgn.reader import _filters_need_movetext

        # Asked for no column made from the moves, no filter on them and no replay: each movetext is skipped
        # (read_headers' reading), and a Parquet release's movetext is not read at all.
        self._without_movetext = not (schema.FROM_MOVETEXT & set(self.columns)) and not (
            self.where is not None and _filters_need_movetext(self.where)) and not (
            self.uci or self.positions or self.fens)
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
        if self._without_movetext:
            extra["headers"] = True
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

    def read_all(self):
        """The batches not yet read, as one ``pyarrow.Table`` (``pyarrow.RecordBatchReader.read_all``'s).

        >>> read_arrow(b'[WhiteElo "1500"]\\n\\n1. e4 *\\n', columns=["white_elo", "plies"]).read_all().to_pylist()
        [{'white_elo': 1500, 'plies': 1}]
        """
        return self._pa.Table.from_batches(list(self), schema=self.schema)

    def to_reader(self):
        """The batches not yet read, as a ``pyarrow.RecordBatchReader`` (read once, as a stream)."""
        return self._pa.RecordBatchReader.from_batches(self.schema, self)

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow C stream interface: DuckDB (``duckdb.sql("FROM reader")``), polars (``pl.from_arrow``)
        and pyarrow (``pa.table(reader)``) read the batches straight from the reader."""
        return self.to_reader().__arrow_c_stream__(requested_schema)

    def _selected_schema(self):
        full = schema.arrow_schema(self.uci, self.positions, self.fens)
        return self._pa.schema([full.field(name) for name in self.columns], metadata=full.metadata)

    def _maker(self):
        # Arrow arrays hold a block's games in far less memory than Python lists: made on the worker.
        return functools.partial(_batch, self.columns, self.uci, self.positions, self.fens)

    def _read(self) -> Iterator:
        # (through the class: ``self`` is the reader's weak proxy, which a bound method would make strong)
        return ArrowReader._batched(self, (batch for batch, _ in ColumnReader._column_blocks(self)))

    def _yielded(self, batch) -> None:
        """Count a batch handed out."""
        self.games_yielded += batch.num_rows

    def _batched(self, blocks: Iterator) -> Iterator:
        """The batches of whole blocks ``blocks`` gives, cut into ``batch_size`` rows, each counted
        (``_yielded``) as it is handed out."""
        pending = []    # batches of whole blocks, not yet batch_size rows together
        rows = 0
        try:
            for batch in blocks:
                pending.append(batch)
                rows += batch.num_rows
                while rows >= self.batch_size:
                    batch, pending, rows = self._cut(pending, self.batch_size)
                    self._yielded(batch)
                    yield batch
        except PGNError:
            # The rows before the error are yielded first, as read_games does.
            while rows:
                batch, pending, rows = self._cut(pending, rows)
                self._yielded(batch)
                yield batch
            raise
        while rows:
            batch, pending, rows = self._cut(pending, rows)
            self._yielded(batch)
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
