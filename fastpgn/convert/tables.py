"""The converter's analysis-schema formats: Parquet files and CSV chunks (``--format parquet|csv``).

Both write the columns of ``fastpgn.schema`` (docs/schema.md), one row per
game, through the ``ChunkFormat`` interface of ``fastpgn.convert.chunks``:

- :class:`ParquetFormat`: a worker turns its block into an Arrow record batch
  (the kernel's column sink: Arrow buffers from the compiled kernel); a
  chunk is one ``NAME.part_NNNNNN.parquet`` file, zstd, dictionary pages
  where they pay, row groups of ``ROW_GROUP_ROWS`` games; with
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
from pathlib import Path

from fastpgn import schema
from fastpgn import scan as _scan
from fastpgn.convert.chunks import BlockResult, ChunkFile, ChunkFormat, LinesFormat, compress
from fastpgn.errors import rejected_games

ROW_GROUP_ROWS = 16_384
FORMATS = ("lines", "parquet", "csv", "pgn")
PARTITIONS = (None, "month")    # --partition: none, or hive folders by month of play (Parquet only)


def _replays(setup) -> bool:
    """Whether the run replays its games (--validate, --uci): the column sinks then replay them with UCI."""
    return setup.hook is not None


class ParquetFormat(ChunkFormat):
    """The analysis schema as Parquet files, one per chunk."""

    suffix = ".parquet"

    def __init__(self, uci: bool = False, partition: str | None = None) -> None:
        if partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {', '.join(p for p in PARTITIONS if p)}, not {partition!r}")
        self.uci = uci
        self.partition = partition
        self._schema = None

    def __getstate__(self):
        return {"uci": self.uci, "partition": self.partition, "_schema": None}  # (a worker makes its own schema)

    def schema(self):
        if self._schema is None:
            self._schema = schema.arrow_schema(self.uci)
        return self._schema

    def block(self, data, offset: int, at_stream_start: bool, setup) -> BlockResult:
        from fastpgn.arrow import record_batch

        replay = _replays(setup)
        columns, read, rejects, filtered = _scan.kernel.columns_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
            openings=setup.openings, uci=replay)
        if replay and not self.uci:
            del columns["uci"]      # --validate: the games replayed, the UCI moves not asked for
        batch = record_batch(columns, self.uci)
        rejected = rejected_games(rejects, data, offset)
        return BlockResult(batch, batch.num_rows, read, rejected, filtered)

    def split(self, payload, skip: int, sizes: list[int]) -> list:
        pieces = []
        at = skip
        for size in sizes:
            pieces.append(payload.slice(at, size))
            at += size
        return pieces

    def open(self, path: Path) -> ChunkFile:
        if self.partition == "month":
            return MonthPartitionedChunkFile(path, self.schema())
        return ParquetChunkFile(path, self.schema())


class ParquetChunkFile(ChunkFile):
    """One Parquet chunk: batches gathered into row groups of ROW_GROUP_ROWS games, written as they fill."""

    def __init__(self, path: Path, arrow_schema) -> None:
        from fastpgn.arrow import parquet_writer

        self.path = path
        self._pending: list = []
        self._rows = 0
        self._writer = parquet_writer(path, arrow_schema)

    def write(self, payload) -> None:
        self._pending.append(payload)
        self._rows += payload.num_rows
        while self._rows >= ROW_GROUP_ROWS:
            self._flush(ROW_GROUP_ROWS)

    def _flush(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.Table.from_batches(self._pending)
        # One contiguous table a row group: its bytes do not depend on where the blocks were cut.
        self._writer.write_table(table.slice(0, rows).combine_chunks(), row_group_size=rows)
        rest = table.slice(rows)
        self._pending = rest.to_batches()
        self._rows = rest.num_rows

    def finish(self) -> None:
        if self._rows:
            self._flush(self._rows)
        self._writer.close()
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def discard(self) -> None:
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - after an error already on its way; the .tmp is removed next
            pass


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

    def __init__(self, path: Path, arrow_schema) -> None:
        self.path = path                            # the unpartitioned .tmp name: the folder and file name
        self._schema = arrow_schema
        self._files: dict[str, ParquetChunkFile] = {}

    def _chunk(self, folder: str) -> ParquetChunkFile:
        chunk = self._files.get(folder)
        if chunk is None:
            where = self.path.parent / folder
            where.mkdir(parents=True, exist_ok=True)
            chunk = self._files[folder] = ParquetChunkFile(where / self.path.name, self._schema)
        return chunk

    def write(self, payload) -> None:
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

    def __init__(self, compression: str = "gz", uci: bool = False) -> None:
        super().__init__(compression)
        self.suffix = ".csv" + self.suffix[len(".cri"):]
        self.uci = uci
        self.columns = schema.names(uci)    # (with --validate and no --uci, the games replay; no uci column)
        self.header = (",".join(self.columns) + "\r\n").encode()

    def block(self, data, offset: int, at_stream_start: bool, setup) -> BlockResult:
        # The live kernel's CSV sink: the compiled one writes the rows in C, without the GIL.
        text, read, rejects, filtered = _scan.kernel.csv_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
            openings=setup.openings, uci=_replays(setup), columns=self.columns)
        rejected = rejected_games(rejects, data, offset)
        return BlockResult(compress(text, self.compression), read - len(rejected) - filtered, read, rejected,
                           filtered)

    def open(self, path: Path) -> ChunkFile:
        chunk = ChunkFile(path)
        chunk.write(compress(self.header, self.compression))
        return chunk


def chunk_format(name: str, compression: str, uci: bool, partition: str | None = None) -> ChunkFormat:
    """The converter's format called ``name`` (lines, parquet, csv or pgn); only Parquet is partitioned."""
    if partition is not None and name != "parquet":
        raise ValueError(f"--partition {partition} writes Parquet folders: add --format parquet")
    if name == "lines":
        return LinesFormat(compression)
    if name == "parquet":
        schema.require_pyarrow("--format parquet")
        return ParquetFormat(uci, partition)
    if name == "csv":
        return CsvFormat(compression, uci)
    if name == "pgn":
        if uci:
            raise ValueError("--uci writes UCI moves, and --format pgn writes each game as it was read: "
                             "use --validate to keep only the games that replay")
        from fastpgn.convert.pgn import PgnFormat

        return PgnFormat(compression)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {name!r}")
