"""The converter's analysis-schema formats: Parquet files and CSV chunks (``--format parquet|csv``).

Both write the columns of ``fastpgn.schema`` (docs/schema.md), one row per
game, through the ``ChunkFormat`` interface of ``fastpgn.convert.chunks``:

- :class:`ParquetFormat`: a worker turns its block into an Arrow record batch
  (the kernel's column sink: Arrow buffers from the compiled kernel); a
  chunk is one ``NAME.part_NNNNNN.parquet`` file, zstd, dictionary pages
  where they pay, row groups of ``ROW_GROUP_ROWS`` games (fewer where a
  ``list<string>`` column would pass ``parquet.settings.LIST_STRING_BYTES``), each encoded on
  an encoder thread (:class:`RowGroupEncoders`) and joined in order; with
  ``partition="month"`` (``--partition month``), a chunk's games go to
  ``year=YYYY/month=MM/`` folders under that name, lichess's own layout.
- :class:`CsvFormat`: RFC 4180 rows (``fastpgn.csv_text``'s text, written by
  the kernel's CSV sink: in C from the column sink's buffers, without the
  GIL, with the compiled kernel), a block's rows one gzip member / zstd
  frame / plain run as for the lines; each chunk starts with the header row.

Every byte of a chunk is a function of its games: batches are cut by game
counts only, and a row group is written from one contiguous table, so any
``-j`` and any ``--resume`` give identical files, as for the lines.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from fastpgn import scan as _scan, schema
from fastpgn.convert.chunks import BlockResult, ChunkFile, ChunkFormat, LinesFormat, compress
from fastpgn.errors import OutputError, rejected_games
from fastpgn.io import output as _output
from fastpgn.parquet.list_chunks import check_writer, encode_row_group
from fastpgn.parquet.row_groups import JoinedParquetFile

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

ROW_GROUP_ROWS = 16_384
FORMATS = ("lines", "parquet", "csv", "pgn")
PARTITIONS = (None, "month")    # --partition: none, or hive folders by month of play (Parquet only)


def _replays(setup: Any) -> bool:
    """Whether the run replays its games (--validate, --uci, --positions, --fens): the column sinks then replay
    them with UCI."""
    return setup.hook is not None


def _extras(positions: bool, fens: bool) -> dict[str, Any]:
    """The column sinks' keywords for --positions and --fens (none when not asked)."""
    return {**({"positions": True} if positions else {}), **({"fens": True} if fens else {})}


class ParquetFormat(ChunkFormat):
    """The analysis schema as Parquet files, one per chunk.

    A chunk's row groups are encoded by ``encoders`` (a :class:`RowGroupEncoders`,
    which the converter gives it for a run: its encoder threads), or one
    after the other on the writing thread when it has none. ``writer``: who
    writes the per-ply lists' pages, fastpgn (the default) or pyarrow
    (``--parquet-writer``; ``fastpgn.parquet.list_chunks.WRITERS``).
    """

    suffix = ".parquet"

    def __init__(self, uci: bool = False, partition: str | None = None, positions: bool = False,
                 fens: bool = False, writer: str = "fastpgn") -> None:
        if partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {', '.join(p for p in PARTITIONS if p)}, not {partition!r}")
        self.writer = check_writer(writer)
        self.uci = uci
        self.partition = partition
        self.positions = positions
        self.fens = fens
        self._schema = None
        self.encoders: RowGroupEncoders | None = None

    def __getstate__(self) -> dict[str, Any]:
        # (a worker makes its own schema; the encoders are the writing process's threads)
        return {"uci": self.uci, "partition": self.partition, "positions": self.positions, "fens": self.fens,
                "writer": self.writer, "_schema": None, "encoders": None}

    def schema(self) -> Any:
        if self._schema is None:
            self._schema = schema.arrow_schema(self.uci, self.positions, self.fens)
        return self._schema

    def block(self, data: Any, offset: int, at_stream_start: bool, setup: Any) -> BlockResult:
        from fastpgn.parquet.batches import record_batch

        replay = _replays(setup)
        columns, read, rejects, filtered = _scan.kernel.columns_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
            openings=setup.openings, uci=replay, **_extras(self.positions, self.fens))
        if replay and not self.uci:
            del columns["uci"]      # --validate: the games replayed, the UCI moves not asked for
        batch = record_batch(columns, self.uci, self.positions, self.fens)
        rejected = rejected_games(rejects, data, offset)
        return BlockResult(batch, batch.num_rows, read, rejected, filtered)

    def split(self, payload: Any, skip: int, sizes: list[int]) -> list[Any]:
        pieces = []
        at = skip
        for size in sizes:
            pieces.append(payload.slice(at, size))
            at += size
        return pieces

    def open(self, path: Path) -> ChunkFile:
        encoders = self.encoders if self.encoders is not None else RowGroupEncoders(None)
        if self.partition == "month":
            return MonthPartitionedChunkFile(path, self.schema(), encoders, self.writer)
        return ParquetChunkFile(path, self.schema(), encoders, self.writer)


def encoder_limit(jobs: int) -> int:
    """Row groups a run keeps in flight with ``jobs`` encoder threads: one each and one more waiting."""
    return jobs + 1


class RowGroupEncoders:
    """The threads that encode a run's Parquet row groups, the bound on them, and their order.

    pyarrow encodes a row group without the GIL, so ``pool`` (a thread
    pool; None: encode on the calling thread) encodes several at once,
    of one chunk or of several (the files of a month-partitioned chunk).
    The writing thread submits each row group as it fills and appends
    the encoded ones to their files in the order it submitted them, so
    each file's row groups are in input order and its bytes are those of
    one writer writing them one after the other. Memory: at most ``limit``
    row groups are submitted and not yet appended (a table of
    ROW_GROUP_ROWS games being encoded or waiting, or its encoded bytes);
    a submission beyond waits for the oldest. A chunk is renamed, and
    the run checkpointed, only once all its row groups are appended, by
    the writing thread, in order, as before.
    """

    def __init__(self, pool: Any, limit: int = 1) -> None:
        self.pool = pool
        self.limit = max(1, limit)
        self._flight: deque[Any] = deque()   # (file, job), in the order submitted

    def submit(self, file: ParquetChunkFile, table: Any, first: int) -> None:
        """Encode ``table`` (games ``first`` + 1 ... of ``file``'s chunk) as ``file``'s next row group."""
        while len(self._flight) >= self.limit:
            self._append_oldest()
        if self.pool is None:
            file.append_encoded(_encode(table, file.schema, file.writer, file.name, first))
            return
        self._flight.append((file, self.pool.submit(_encode, table, file.schema, file.writer, file.name, first)))
        self.settle()

    def settle(self) -> None:
        """Append the row groups encoded by now, in order (without waiting)."""
        while self._flight and self._flight[0][1].done():
            self._append_oldest()

    def drain(self, file: ParquetChunkFile) -> None:
        """Wait until every row group of ``file`` is appended (and those submitted before them)."""
        while any(f is file for f, _ in self._flight):
            self._append_oldest()

    def forget(self, file: ParquetChunkFile) -> None:
        """Drop ``file``'s row groups (after an error): those not begun are cancelled, the others left to end."""
        for f, job in self._flight:
            if f is file:
                job.cancel()
        self._flight = deque((f, job) for f, job in self._flight if f is not file)

    def _append_oldest(self) -> None:
        file, job = self._flight.popleft()
        try:
            group = job.result()
        except BaseException:
            self.forget(file)
            raise
        file.append_encoded(group)


def _encode(table: Any, arrow_schema: Any, writer: str, name: str, first: int) -> Any:
    """One row group encoded (on an encoder thread); an error becomes one line naming the chunk and games."""
    from fastpgn.parquet.settings import parquet_writer

    try:
        # One contiguous table a row group: its bytes do not depend on where the blocks were cut.
        return encode_row_group(table.combine_chunks(), arrow_schema, parquet_writer, writer)
    except Exception as exc:  # noqa: BLE001 - any encoder fault is the run's output error, said on one line
        why = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise OutputError(f"cannot write {name}: encoding its games {first + 1:,} to {first + table.num_rows:,} "
                          f"failed ({why})") from exc


class ParquetChunkFile(ChunkFile):
    """One Parquet chunk: batches gathered into row groups of ROW_GROUP_ROWS games, each encoded as it fills.

    The row groups are encoded by the run's :class:`RowGroupEncoders`,
    several at once, and joined into one file in order
    (``fastpgn.parquet.row_groups``): the bytes one ``ParquetWriter``
    would write, whatever the threads.
    """

    def __init__(self, path: Path, arrow_schema: Any, encoders: RowGroupEncoders, writer: str = "fastpgn") -> None:
        self.path = path
        self.schema = arrow_schema
        self.writer = writer
        # The chunk's own name, for messages (in its month's folder with --partition month).
        self.name = path.name[1:-len(".tmp")] if path.name.startswith(".") else path.name
        if path.parent.name.startswith("month="):
            self.name = f"{path.parent.parent.name}/{path.parent.name}/{self.name}"
        self._encoders = encoders
        self._pending: list[Any] = []
        self._rows = 0
        self._sizes: list[list[int]] = []    # the pending rows' list<string> bytes (settings.list_string_sizes)
        self._submitted = 0
        self._joined = JoinedParquetFile(path)

    def write(self, payload: Any) -> None:
        from fastpgn.parquet import settings

        self._pending.append(payload)
        self._rows += payload.num_rows
        added = settings.list_string_sizes(payload)
        if not self._sizes:
            self._sizes = [[0] for _ in added]
        for counts, more in zip(self._sizes, added):
            base = counts[-1]
            counts.extend(base + n for n in more[1:])
        # A row group ends at ROW_GROUP_ROWS games, or sooner where a list<string> column would pass the int32
        # offsets of one Arrow array (--fens: 16,384 long games pass 2 GiB).
        while self._rows >= ROW_GROUP_ROWS or any(c[-1] > settings.LIST_STRING_BYTES for c in self._sizes):
            self._submit(settings.rows_within(self._sizes, min(self._rows, ROW_GROUP_ROWS)))
        self._encoders.settle()

    def _submit(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.Table.from_batches(self._pending)
        self._encoders.submit(self, table.slice(0, rows), self._submitted)
        self._submitted += rows
        rest = table.slice(rows)
        self._pending = rest.to_batches()
        self._rows = rest.num_rows
        self._sizes = [[n - counts[rows] for n in counts[rows:]] for counts in self._sizes]

    def append_encoded(self, group: Any) -> None:
        self._joined.append(group)

    def finish(self) -> None:
        from fastpgn.parquet import settings

        while self._rows:
            self._submit(settings.rows_within(self._sizes, self._rows))
        self._encoders.drain(self)
        self._joined.close()
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def discard(self) -> None:
        self._encoders.forget(self)
        self._joined.discard()


class MonthPartitionedChunkFile(ChunkFile):
    """One chunk as Parquet files in hive folders by month of play: ``year=YYYY/month=MM/NAME``.

    The layout of lichess's own Parquet release (``data/year=2024/month=01/``),
    so queries written for it run on the converter's output. A game's
    month is ``fastpgn.schema.by_month``'s (``utc``'s, else ``date``'s; no
    date: ``year=0/month=00``), as in ``fastpgn.spark``'s datasets. A chunk
    of a monthly dump is one file, in one folder; a chunk that spans months
    is a file in each, under the same name, its games in input order in
    each. The files are written as ``.tmp`` and renamed together once the
    chunk is whole: a rerun of a chunk that was cut short renames over
    whatever of it was renamed before, so nothing is duplicated.
    """

    def __init__(self, path: Path, arrow_schema: Any, encoders: RowGroupEncoders, writer: str = "fastpgn") -> None:
        self.path = path                            # the unpartitioned .tmp name: the folder and file name
        self._schema = arrow_schema
        self._writer = writer
        self._encoders = encoders
        self._files: dict[str, ParquetChunkFile] = {}

    def _chunk(self, folder: str) -> ParquetChunkFile:
        chunk = self._files.get(folder)
        if chunk is None:
            where = _output.folders(self.path.parent, folder)     # (a link at year=/month= refused)
            chunk = self._files[folder] = ParquetChunkFile(where / self.path.name, self._schema,
                                                                self._encoders, self._writer)
        return chunk

    def write(self, payload: Any) -> None:
        for folder, rows in schema.by_month(payload):
            self._chunk(folder).write(rows)

    def finish(self) -> None:
        for chunk in self._files.values():
            chunk.finish()

    def commit(self, final: Path) -> list[Path]:
        done = []
        for folder, chunk in sorted(self._files.items()):
            done += chunk.commit(final.parent / folder / final.name)
        return done

    def discard(self) -> None:
        for chunk in self._files.values():
            chunk.discard()
            try:
                os.unlink(chunk.path)
            except OSError:
                pass


class CsvFormat(LinesFormat):
    """The analysis schema as CSV text: a block's rows one compressed member, a header row atop each chunk."""

    def __init__(self, compression: str = "gz", uci: bool = False, positions: bool = False,
                 fens: bool = False) -> None:
        super().__init__(compression)
        self.suffix = ".csv" + self.suffix[len(".cri"):]
        self.uci = uci
        self.positions = positions
        self.fens = fens
        # (with --validate and no --uci, the games replay; no uci column)
        self.columns = schema.names(uci, positions, fens)
        self.header = (",".join(self.columns) + "\r\n").encode()

    def block(self, data: Any, offset: int, at_stream_start: bool, setup: Any) -> BlockResult:
        # The live kernel's CSV sink: the compiled one writes the rows in C, without the GIL.
        text, read, rejects, filtered = _scan.kernel.csv_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
            openings=setup.openings, uci=_replays(setup), columns=self.columns,
            **_extras(self.positions, self.fens))
        rejected = rejected_games(rejects, data, offset)
        return BlockResult(compress(text, self.compression), read - len(rejected) - filtered, read, rejected,
                           filtered)

    def open(self, path: Path) -> ChunkFile:
        chunk = ChunkFile(path)
        chunk.write(compress(self.header, self.compression))
        return chunk


def chunk_format(name: str, compression: str, uci: bool, partition: str | None = None, positions: bool = False,
                 fens: bool = False, parquet_writer: str = "fastpgn") -> ChunkFormat:
    """The converter's format called ``name`` (lines, parquet, csv or pgn); only Parquet is partitioned, and only
    the schema's formats have the zobrist and fens columns."""
    if partition is not None and name != "parquet":
        raise ValueError(f"--partition {partition} writes Parquet folders: add --format parquet")
    if check_writer(parquet_writer) != "fastpgn" and name != "parquet":
        raise ValueError(f"--parquet-writer {parquet_writer} writes Parquet files: add --format parquet")
    if name == "lines":
        if positions or fens:
            raise ValueError(f"{'--positions' if positions else '--fens'} writes a column of the analysis schema: "
                             "add --format parquet or --format csv")
        return LinesFormat(compression)
    if name == "parquet":
        schema.require_pyarrow("--format parquet")
        return ParquetFormat(uci, partition, positions, fens, parquet_writer)
    if name == "csv":
        return CsvFormat(compression, uci, positions, fens)
    if name == "pgn":
        if positions or fens:
            raise ValueError(f"{'--positions' if positions else '--fens'} writes a column of the analysis schema: "
                             "add --format parquet or --format csv")
        if uci:
            raise ValueError("--uci writes UCI moves, and --format pgn writes each game as it was read: "
                             "use --validate to keep only the games that replay")
        from fastpgn.convert.pgn import PgnFormat

        return PgnFormat(compression)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {name!r}")
