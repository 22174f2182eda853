"""The dump converter's output: what a worker makes of a block, and the chunk files made of it.

Three parts, each with one job:

- a :class:`ChunkFormat` says what a block becomes (a *payload*: the
  block's written games, in input order, in the format's own shape), how a
  payload is cut at a count of games, and how a chunk file is written;
  :class:`LinesFormat`, the 22-field lines, is the one there is;
- :class:`ChunkFiles` makes chunks of exactly ``size`` games of payloads, in
  order: ``NAME.part_NNNNNN<suffix>``, written as ``.NAME.part_NNNNNN<suffix>.tmp``, made durable
  (fsync) and renamed when complete, so a chunk that exists is whole;
- :class:`ChunkWriter` is the chunk files' own thread.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from fastpgn import scan as _scan
from fastpgn.errors import OutputError, Rejected, rejected_games  # noqa: F401 (OutputError's home was here)
from fastpgn.io import output as _output

_gzip: ModuleType
try:
    from isal import igzip as _gzip

    GZIP_LIBRARY = "isal"
    # ISA-L level 2 is both faster and smaller than level 1 on 22-field lines
    # (2026-11-22, 37 MB of lines from the 100 MB corpus: 340 vs 300 MB/s, ratio 2.21 vs 2.15).
    GZIP_LEVEL = 2
except ImportError:  # pragma: no cover - exercised where isal is absent
    import gzip as _gzip

    GZIP_LIBRARY = "zlib"
    GZIP_LEVEL = 1

ZSTD_LEVEL = 3
SUFFIX = {"gz": ".cri.gz", "zst": ".cri.zst", "none": ".cri"}


def compress(data: bytes, kind: str) -> bytes:
    """One gzip member / zstd frame / plain bytes; deterministic (gzip mtime 0)."""
    if kind == "gz":
        packed: bytes = _gzip.compress(data, GZIP_LEVEL, mtime=0)
        return packed
    if kind == "zst":
        import zstandard

        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)
    return data


def decompress(data: bytes, kind: str) -> bytes:
    if kind == "gz":
        unpacked: bytes = _gzip.decompress(data)
        return unpacked
    if kind == "zst":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


class BlockResult(NamedTuple):
    """What a worker made of one block.

    ``payload`` holds the ``written`` games, in input order (None for
    none); ``read`` games were read, of which ``rejects`` (numbered from 1
    within the block) were rejected and ``filtered`` dropped by the filter:
    ``read == written + len(rejects) + filtered``. (Not ``count``: that
    name is the tuple's own method.)
    """

    payload: object
    written: int
    read: int
    rejects: list[Rejected]
    filtered: int


class ChunkFile:
    """One chunk being written: payloads appended to a binary file as they are."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = _output.create(path)     # (a link planted at the .tmp name is refused, never written)

    def write(self, payload: Any) -> None:
        self._file.write(payload)

    def finish(self) -> None:
        """Everything on disk (fsync), then closed: the chunk may be renamed to its final name."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def commit(self, final: Path) -> list[Path]:
        """After ``finish``: the chunk under its final name (its ``.tmp`` renamed); the paths it now has."""
        os.replace(self.path, final)
        return [final]

    def discard(self) -> None:
        """Close without a word (after an error: a full disk may fail this too)."""
        try:
            self._file.close()
        except OSError:
            pass


class ChunkFormat:
    """What the converter writes: the interface a format of chunk files implements.

    - ``suffix``: the end of a chunk's name (``.cri.gz``).
    - ``block(data, offset, at_stream_start, setup)`` runs on a worker (a
      thread, or a process for the pure backend: the format object and the
      results it returns are pickled then) and turns one block of whole
      games into a :class:`BlockResult`; ``setup`` carries the opening
      table, the moves hook and the filter plan the scanner's calls take.
    - ``split(payload, skip, sizes)`` cuts a payload: the games after the
      first ``skip``, in pieces of ``sizes`` games (the rest dropped). The
      writer thread cuts a block that straddles a chunk boundary, and a
      resumed run's first block (its first ``skip`` games are in a chunk
      already); the main thread cuts the block that ``--limit`` ends in.
    - ``open(path)`` starts a chunk file at ``path`` (a ``.tmp`` name): an
      object with ``write(payload)``, ``finish()`` (on disk and closed),
      ``commit(final)`` (renamed to its final name) and ``discard()``; when
      to rename and exact chunk sizes are :class:`ChunkFiles`' business. A
      chunk may be several files (Parquet partitioned by month): ``commit``
      renames them all and returns their paths.

    A second format plugs in as a subclass and a choice of it in
    ``pipeline.Converter`` (and in the resume state's options, so a run
    resumes only in the format it began in): Parquet, say, reads the
    block with ``columns_from_block`` into an Arrow record batch in
    ``block``, slices batches in ``split`` and returns from ``open`` a
    chunk file that hands its row groups to encoder threads and joins
    them, one ``.part_NNNNNN.parquet`` per chunk; CSV is lines with a header row that
    ``open`` writes first. Output that is one stream rather than chunks
    (``-o -``) replaces :class:`ChunkFiles` instead, with the same
    ``room``/``append``/``close``/``abandon``.
    """

    suffix = ""

    def block(self, data: Any, offset: int, at_stream_start: bool, setup: Any) -> BlockResult:
        raise NotImplementedError

    def split(self, payload: Any, skip: int, sizes: list[int]) -> list[Any]:
        raise NotImplementedError

    def open(self, path: Path) -> ChunkFile:
        return ChunkFile(path)


class LinesFormat(ChunkFormat):
    """The 22-field lines (python-lichess-db-pgn-parser's format), a block's lines one gzip member,
    zstd frame or plain run of bytes; a chunk is its members one after the other."""

    def __init__(self, compression: str = "gz") -> None:
        self.compression = compression
        self.suffix = SUFFIX[compression]

    def block(self, data: Any, offset: int, at_stream_start: bool, setup: Any) -> BlockResult:
        lines, read, rejects, filtered = _scan.kernel.lines_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
            openings=setup.openings, moves_hook=setup.hook)
        rejected = rejected_games(rejects, data, offset)
        return BlockResult(compress(lines, self.compression), read - len(rejected) - filtered, read, rejected,
                           filtered)

    def split(self, payload: bytes, skip: int, sizes: list[int]) -> list[bytes]:
        # Once per chunk boundary, so cheap at dump-sized chunks: inflate, cut at line ends, compress each piece.
        pieces = _split_lines(decompress(payload, self.compression), [skip, *sizes] if skip else sizes)
        return [compress(piece, self.compression) for piece in pieces[1 if skip else 0:][:len(sizes)]]


def _split_lines(text: bytes, counts: list[int]) -> list[bytes]:
    pieces = []
    pos = 0
    for count in counts:
        end = pos
        for _ in range(count):
            end = text.index(b"\n", end) + 1
        pieces.append(text[pos:end])
        pos = end
    if pos != len(text):
        pieces.append(text[pos:])
    return pieces


class ChunkFiles:
    """Chunk files: exactly ``size`` games each, written under .tmp and renamed when complete.

    ``index`` is the chunk being written (numbered from 0), ``written`` the
    games in all chunks, ``finished`` the paths of the chunks completed.
    """

    def __init__(self, folder: Path, prefix: str, fmt: ChunkFormat, size: int, index: int, written: int) -> None:
        self.folder = folder
        self.prefix = prefix
        self.format = fmt
        self.size = size
        self.index = index
        self.lines = 0              # games in the open chunk
        self.written = written      # games written in all chunks
        self.file: ChunkFile | None = None
        self.finished: list[Path] = []

    def path(self, index: int) -> Path:
        return self.folder / f"{self.prefix}.part_{index:06d}{self.format.suffix}"

    def _tmp(self) -> Path:
        # Hidden until whole: pandas, pyarrow and Spark reading the folder meanwhile pass over dot files.
        return self.path(self.index).with_name("." + self.path(self.index).name + ".tmp")

    def room(self) -> int:
        return self.size - self.lines

    def add(self, payload: Any, count: int, skip: int) -> Iterator[int]:
        """Append a block's ``count`` games but its first ``skip``, cut at chunk boundaries.

        Yields, each time that completes a chunk, how many of the block's
        games are in chunks by then (the next chunk starts after them).
        """
        if count - skip <= 0:
            return
        if skip == 0 and count <= self.room():
            if self.append(payload, count):
                yield count
            return
        sizes = []
        left = count - skip
        room = self.room()
        while left > 0:
            take = min(room, left)
            sizes.append(take)
            left -= take
            room = self.size
        done = skip
        for piece, size in zip(self.format.split(payload, skip, sizes), sizes):
            done += size
            if self.append(piece, size):
                yield done

    def append(self, payload: Any, count: int) -> bool:
        """Append ``count`` games held in ``payload``; True when that completed a chunk."""
        if count == 0:
            return False
        if self.file is None:
            self.file = self.format.open(self._tmp())
        self.file.write(payload)
        self.lines += count
        self.written += count
        if self.lines == self.size:
            self.close()
            return True
        return False

    def close(self) -> None:
        """Complete the open chunk: on disk, then renamed to its final name."""
        if self.file is None:
            return
        self.file.finish()
        done = self.file.commit(self.path(self.index))
        self.file = None            # only now: until renamed, abandon() still removes the .tmp
        self.finished.extend(done)
        self.index += 1
        self.lines = 0

    def abandon(self) -> None:
        """Drop the open chunk's temporary file (after an error: a full disk may fail the close too)."""
        if self.file is not None:
            file, self.file = self.file, None
            file.discard()
            try:
                os.unlink(self._tmp())
            except OSError:
                pass


class StreamOutput:
    """``-o -``: every payload written to one binary stream (stdout), in order, with no chunks.

    It stands in for :class:`ChunkFiles` (``add``, ``close``, ``abandon``,
    ``index``, ``written``, ``finished``); a format whose chunks open with a
    header (CSV) has it written once, first, unless ``header`` is False (the
    stream goes on after another input's games). Nothing is checkpointed: a
    stream cannot be resumed.
    """

    def __init__(self, stream: Any, fmt: ChunkFormat, header: bool = True) -> None:
        self.stream = stream
        self.format = fmt
        self.index = 0
        self.written = 0
        self.finished: list[Path] = []
        header_row = getattr(fmt, "header", None) if header else None
        if header_row:
            assert isinstance(fmt, LinesFormat)  # a header row is CSV's, a LinesFormat: compressed alike
            stream.write(compress(header_row, fmt.compression))

    def add(self, payload: Any, count: int, skip: int) -> Iterator[int]:
        if count - skip <= 0:
            return
        if skip:
            payload = self.format.split(payload, skip, [count - skip])[0]
        self.stream.write(payload)
        self.written += count - skip
        yield from ()

    def close(self) -> None:
        self.stream.flush()

    def abandon(self) -> None:
        try:
            self.stream.flush()
        except OSError:
            pass


class ChunkWriter:
    """The chunk files' own thread: appends, fsyncs, renames and checkpoints, in order.

    Only one thread can decode the input's one zstd stream, and it waits
    while the main thread cannot take its blocks; on a machine of many
    cores every moment the main thread spends elsewhere (a chunk's fsync,
    its writes, a straddling block split and compressed again) idles the
    reader and all the workers at once. Deliveries come through a bounded queue
    and are made in the order they came; the first error (a full disk, say)
    is kept, later deliveries are dropped, and ``check``/``finish`` raise it
    on the main thread, which owns the error handling.
    """

    def __init__(self, deliver: Any, depth: int = 8) -> None:
        self._deliver = deliver
        self._queue: queue.Queue[Any] = queue.Queue(depth)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="fastpgn-writer", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self.error is None:
                try:
                    self._deliver(*item)
                except BaseException as exc:  # noqa: B036 - handed to the main thread, which re-raises it
                    self.error = exc

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def put(self, *item: Any) -> None:
        self.check()
        self._queue.put(item)

    def finish(self) -> None:
        """Wait until every delivery is made; raise the first error."""
        self.stop()
        self.check()

    def stop(self) -> None:
        """Make the deliveries already queued and end (the thread drains the queue, so this returns).

        After an error on the main thread too: what was queued lies before
        it in the input (a bad game under ``--errors raise``, Ctrl-C), so
        the chunks it completes are kept, as when the main thread appended.
        """
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
