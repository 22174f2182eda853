"""``analyse --format parquet|csv``'s output: the analysed games' PGN text turned into the analysis schema's
columns by the converter's sinks, a chunk of games at a time (:class:`TableOut`), and the names of the
chunks of ``-o FOLDER/``."""

from __future__ import annotations

import os
import sys
from typing import Any

from fastpgn.errors import OutputError
from fastpgn.io import output as _output

__all__ = ["CHUNK_GAMES", "TableOut", "chunk_files", "is_folder", "stem_of"]

CHUNK_GAMES = 16_384        # games turned into columns at once (a row group, a chunk)


def is_folder(output: str) -> bool:
    """Whether -o names a folder (an existing one, or a path ending with a separator): Parquet chunks there."""
    return output.endswith(("/", os.sep)) or os.path.isdir(output)


def chunk_files(folder: str) -> list[str]:
    """The Parquet chunks a run of ``--format parquet -o FOLDER/`` leaves in ``folder``."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if ".part_" in name and name.endswith(".parquet"))


def stem_of(path: str) -> str:
    """The chunks' name: INPUT's file name without its compression and .pgn suffixes."""
    if path == "-":
        return "stdin"
    name = _output.visible_name(path)      # (never a dot file: readers of the folder pass over those)
    for suffix in (".zst", ".zstd", ".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return name.removesuffix(".pgn") or "games"


class TableOut:
    """--format parquet|csv: the analysed games' PGN text (what --format pgn writes) turned into the
    analysis schema by the converter's sinks (its column sink for Parquet, its CSV sink for CSV: on the
    compiled backend both run in C), CHUNK_GAMES games at a time.

    ``offset`` and the game numbers are those of that PGN text: the table equals ``read_arrow`` of the
    ``--format pgn`` output of the same run. Parquet goes to one file (a row group per chunk) or, for a
    folder, one file per chunk (``NAME.part_NNNNNN.parquet``); CSV to one file or stdout.
    """

    def __init__(self, fmt: str, output: str | None, stem: str, overwrite: bool,
                 parquet_writer: str = "fastpgn") -> None:
        from fastpgn import schema
        from fastpgn.scan import columns as _columns_py  # (the default openings map, loaded once)

        self.format = fmt
        self.parquet_writer = parquet_writer    # who writes the per-ply lists' pages (--parquet-writer)
        self.names = schema.names(False)
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.offset = 0                 # bytes of PGN text turned into columns so far
        self.games = 0
        self.chunks = 0
        self.header = True              # CSV: the row of names not yet written
        self.writer: Any = None         # --format parquet, one file: a parquet.list_chunks.ParquetFileWriter
        self.stream: Any = None         # the file (or stdout) written; None for a folder
        self.openings = _columns_py.default_openings()
        self.folder = output if fmt == "parquet" and output is not None and is_folder(output) else None
        self.stem = stem
        self.output = output
        if self.folder is not None:
            os.makedirs(self.folder, exist_ok=True)
            if overwrite:
                for path in chunk_files(self.folder):
                    os.remove(path)
        elif output is None:
            self.stream = sys.stdout.buffer     # (csv only: parquet without -o is refused before)
        else:
            folder = os.path.dirname(output)
            if folder:
                os.makedirs(folder, exist_ok=True)
            self.stream = _output.open_named(output, "wb")
        from fastpgn import scan as _scan

        self.table = _scan.kernel.opening_table(self.openings)
        if fmt == "parquet":
            self.arrow_schema = schema.arrow_schema(False)

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.pending.append(data)
        self.pending_bytes += len(data)
        if len(self.pending) >= CHUNK_GAMES or self.pending_bytes >= 1 << 26:
            self._chunk()

    def flush(self) -> None:
        """(the games are written a chunk at a time)"""

    def _chunk(self) -> None:
        if not self.pending:
            return
        data = b"".join(self.pending)
        count = len(self.pending)
        self.pending, self.pending_bytes = [], 0
        from fastpgn import scan as _scan

        if self.format == "csv":
            # The converter's CSV sink (the compiled one writes the rows in C), the header row once atop.
            text, read, rejects, _ = _scan.kernel.csv_from_block(
                data, 0, len(data), base_offset=self.offset, first_game=self.games, openings=self.table,
                columns=self.names)
        else:
            columns, read, rejects, _ = _scan.kernel.columns_from_block(
                data, 0, len(data), base_offset=self.offset, first_game=self.games, openings=self.table)
        if rejects or read != count:     # written by lichess_pgn from games the reader read: not expected
            raise OutputError(f"no {self.format} row for an analysed game: "
                              f"{rejects[0][0] if rejects else f'{read} games of {count}'}")
        self.offset += len(data)
        self.games += count
        if self.format == "csv":
            self._csv_header()
            self.stream.write(text)
            self.stream.flush()
            return
        from fastpgn.arrow import record_batch

        batch = record_batch({name: columns[name] for name in self.names})
        if self.folder is not None:
            path = os.path.join(self.folder, f"{self.stem}.part_{self.chunks:06d}.parquet")
            temporary = os.path.join(self.folder, f".{self.stem}.part_{self.chunks:06d}.parquet.tmp")
            # (made as fastpgn.io.output.create makes a file: a link planted at the .tmp name since the run
            # began is an OutputError)
            writer = self._parquet_file(temporary)
            writer.write_batch(batch)
            writer.close()
            os.replace(temporary, path)
        else:
            if self.writer is None:
                self.writer = self._parquet_file(self.stream)
            self.writer.write_batch(batch)
        self.chunks += 1

    def _csv_header(self) -> None:
        """CSV: the row of names, before the first rows (as the converter's chunks and ``to_csv`` begin)."""
        if self.header:
            self.stream.write((",".join(self.names) + "\r\n").encode())
            self.header = False

    def _parquet_file(self, where: Any) -> Any:
        """A Parquet file as every Parquet file of fastpgn is written (the converter's encoding)."""
        from fastpgn.arrow import parquet_writer
        from fastpgn.parquet.list_chunks import ParquetFileWriter

        return ParquetFileWriter(where, self.arrow_schema, parquet_writer, self.parquet_writer)

    def close(self) -> None:
        """Write the games still pending (the finished games of an interrupted run too) and close the file."""
        try:
            self._chunk()
            if self.format == "csv":
                self._csv_header()      # (no games: the row of names alone)
            elif self.format == "parquet" and self.folder is None and self.writer is None:
                self.writer = self._parquet_file(self.stream)     # no games: the schema alone
            if self.writer is not None:
                self.writer.close()
        finally:
            if self.stream is not None and self.stream is not sys.stdout.buffer:
                self.stream.close()
            elif self.stream is not None:
                self.stream.flush()
