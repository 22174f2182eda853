"""A decompressed byte stream with its name, kind and progress in the raw input: ``Source``.

The compression is recognised by the first bytes (``detect``), never by
the name; each decoder (``fastpgn.io.zstd``, ``fastpgn.io.bzip2``, bz2,
gzip through ISA-L or zlib) is imported when a stream needs it. Which
source an argument opens (a path, stdin, bytes, a file object, lines, a
Parquet release) is ``fastpgn.io.sources``'s (``open_source``).
"""

from __future__ import annotations

import io
import zlib

from fastpgn.errors import InputDamageError, InputError
from fastpgn.io.blocks import BLOCK_SIZE, Block, _ChunkFiller, cut_blocks, cut_buffer

# typing's, without importing typing (a reader's start-up: docs/performance.md)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Protocol

READ_SIZE = 1 << 20
HEAD_SIZE = 1 << 16     # the first bytes check_pgn decides on, whatever the block size
FEED_SIZE = 64 << 10     # compressed bytes given to a bzip2/gzip decoder at a time


def _gzip_zlib():
    """The gzip decoder's module: ISA-L (several times faster than zlib) when installed."""
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - optional speed-up
        return zlib
    return isal_zlib


def _parallel_bzip2():
    """The parallel bzip2 decoder's module, indexed_bzip2; None when it is not installed (fastpgn.io.bzip2)."""
    from fastpgn.io import bzip2 as _bzip2

    return _bzip2._ibz2


def __getattr__(name: str):
    if name == "_ibz2":   # (what it was when imported here: tests ask whether it is in use)
        return _parallel_bzip2()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAGIC_ZSTD = b"\x28\xb5\x2f\xfd"
MAGIC_BZ2 = b"BZh"
MAGIC_GZIP = b"\x1f\x8b"


def detect(head: bytes) -> str:
    """Compression named by the first bytes: ``zst``, ``bz2``, ``gz`` or ``pgn``.

    >>> detect(b"BZh91AY&SY"), detect(b"[Event"), detect(b"\\x28\\xb5\\x2f\\xfd")
    ('bz2', 'pgn', 'zst')
    """
    if head.startswith(MAGIC_ZSTD) or (len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50):
        return "zst"  # a zstd frame, or a skippable frame (which a zstd stream may start with)
    if head.startswith(MAGIC_BZ2):
        return "bz2"
    if head.startswith(MAGIC_GZIP):
        return "gz"
    return "pgn"


if TYPE_CHECKING:
    class _RawInput(Protocol):
        """What a Source reads: a binary file object whose ``read`` gives bytes (b"" at the end)."""

        def read(self, size: int = -1, /) -> bytes: ...

        def close(self) -> None: ...

        def seek(self, offset: int, whence: int = 0, /) -> int: ...  # (of a file: a Source with a path)

    from fastpgn.io.frames import FrameTable


class Source:
    """A decompressed byte stream with its name, kind and progress in the raw input."""

    # Whether the stream cannot end inside a game, so that no last game is damage (cut_blocks's
    # whole_games): true of lichess's Parquet release (a row is one game), never of PGN text.
    whole_games = False
    # Whether the input's end is its last game's end, so that a last game without a result is a game and
    # not one the input cut short (cut_blocks's ends_whole): PGN Crypt's game files, read by fastpgn.crypt.
    ends_whole = False

    def __init__(self, raw: _RawInput, name: str, size: int | None, path: str | None,
                 close_raw: bool, threads: int = 1, encoding: str | None = None) -> None:
        self.name = name
        self.size = size            # raw (compressed) size when known
        self.path = path
        self._raw: _RawInput = raw
        self._close_raw = close_raw
        self._threads = threads
        self.raw_read = 0           # raw bytes consumed so far (for progress)
        self.offset = 0             # decompressed bytes handed out so far
        self._fill: Callable[[memoryview], int] | None = None  # readinto of the decoder, made on first use
        self.fallback: str | None = None   # why the parallel bzip2 decoder gave way to the stream decoder
        self.frame_table: FrameTable | None = None  # a zstd file's frames, read to decode them on threads
        self.split_note: str | None = None   # why a zstd file asked to decode on threads decodes on one
        self.frame_starts: list[int] = []    # the decompressed offset of each frame handed out ...
        self._frame_raw: list[int] = []      # ... and of its first byte in the file
        self._first_frame = 0                # the frame to begin at (resume_at_frame)
        self.in_memory: bytes | None = None  # the whole input, when it was given as bytes
        self.encoding = _codec_name(encoding)  # None: UTF-8, read as it is; else transcoded to UTF-8 on the way in
        self._pending: InputError | None = None   # damage met while reading the head, raised by the next read
        self._restore: Callable[[], None] | None = None   # undoes what open_source changed on a text file given
        head = self._peek(4)
        self.kind = detect(head)

    @property
    def read_as_is(self) -> bool:
        """The input is PGN read as it is (not decompressed, transcoded or made from Parquet rows): a block
        costs a read and a cut, so no thread of its own pays for reading it (fastpgn._parallel.ordered)."""
        return self.kind == "pgn" and self.encoding is None

    def head(self, size: int = HEAD_SIZE) -> bytes:
        """The first ``size`` decompressed bytes (fewer at the end, or where the input is damaged).

        Read to decide whether the input can be PGN (``check_pgn``) on the
        same bytes whatever the block size; ``blocks(head=...)`` reads on
        after them. Damage met here (InputDamageError) is raised by the next
        read, once the bytes before it were handed out.
        """
        if self.kind == "pgn" and self.in_memory is not None and self.encoding is None:
            return self.in_memory[:size]
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            try:
                n = self.readinto(view[got:])
            except InputDamageError as exc:
                self._pending = exc
                break
            if not n:
                break
            got += n
        view.release()
        return bytes(buf[:got])

    def blocks(self, block_size: int = BLOCK_SIZE, pool: list | None = None, head: bytes = b"") -> Iterator[Block]:
        """The decompressed stream in game-aligned blocks (``cut_blocks``); plain PGN given as bytes is cut in place.

        ``head`` holds the bytes ``head()`` read already.
        """
        if self.kind == "pgn" and self.in_memory is not None and self.encoding is None:
            return cut_buffer(self.in_memory, block_size, self.ends_whole)
        return cut_blocks(self.readinto, block_size, head=head, pool=pool, whole_games=self.whole_games,
                          ends_whole=self.ends_whole)

    def _peek(self, n: int) -> bytes:
        # An error here is the input's (a generator that raises, a file that cannot be read): it is
        # raised, never taken for an empty input.
        peek = getattr(self._raw, "peek", None)
        if peek is not None:
            return self._raw_io(peek, n)[:n]
        data = self._raw_io(self._raw.read, n)
        self._raw = _Prefixed(data, self._raw)
        return data

    def _raw_io(self, call, arg):
        """``call(arg)`` on the raw input, an OSError as InputError at the offset reached."""
        try:
            return call(arg)
        except OSError as exc:
            # (a read that fails at the start: the input cannot be read; later: it is damaged there)
            cls = InputDamageError if self.offset or self.raw_read else InputError
            raise cls(f"cannot read {self.name}: {exc.strerror or exc}", self.offset) from exc

    def _read_raw(self, n: int) -> bytes:
        # read1, where there is one: a buffered read that fails after its first raw read drops what
        # that read got; read1 makes one raw read, so an error comes from a read that got nothing.
        data = self._raw_io(getattr(self._raw, "read1", self._raw.read), n)
        self.raw_read += len(data)
        return data

    def _raw_chunks(self) -> Iterator[bytes]:
        while True:
            data = self._read_raw(READ_SIZE)
            if not data:
                return
            yield data

    def readinto(self, view) -> int:
        """Fill ``view`` with the next decompressed bytes; the count, 0 at the end.

        Damage raises InputError once every byte before it was handed out.
        zstd and plain files are read straight into ``view``; the other
        kinds copy from their decoder's output.
        """
        if self._pending is not None:
            pending, self._pending = self._pending, None
            raise pending
        if self._fill is None:
            if self.encoding is not None:
                self._fill = _ChunkFiller(self._transcoded()).readinto
            elif self.kind == "zst":
                frames = self._zstd_frames()
                self._fill = _ChunkFiller(frames if frames is not None else self._zstd_decoded()).readinto
            elif self.kind == "pgn" and isinstance(self._raw, (io.BufferedReader, io.FileIO, io.BytesIO, _Pieces)):
                self._raw_readinto = getattr(self._raw, "readinto1", self._raw.readinto)   # (see _read_raw)
                self._fill = self._plain_readinto
            else:
                self._fill = _ChunkFiller(self._decompressed()).readinto
        return self._fill(view)

    def _plain_readinto(self, view) -> int:
        n = self._raw_io(self._raw_readinto, view)
        self.raw_read += n
        self.offset += n
        return n

    def _transcoded(self) -> Iterator[bytes]:
        """The decompressed stream decoded from ``encoding`` and written as UTF-8; offsets count the UTF-8.

        A byte the encoding has no character for (five in cp1252) passes as
        it is, so the readers count it as a byte that is not UTF-8.
        """
        import codecs

        assert self.encoding is not None
        decoder = codecs.getincrementaldecoder(self.encoding)("surrogateescape")
        made = 0
        pieces = self._decompressed()
        while True:
            try:
                data = next(pieces, None)
            except InputError as exc:
                # The damage's offset in the UTF-8 stream the blocks count.
                raise exc.at(offset=made) from None
            final = data is None
            text = decoder.decode(data if data is not None else b"", final)
            out = text.encode("utf-8", "surrogateescape")
            made += len(out)
            if out:
                yield out
            if final:
                return

    def chunks(self) -> Iterator[bytes]:
        """Decompressed data (transcoded to UTF-8 when ``encoding`` is given), in pieces of about a MiB or more."""
        if self.encoding is not None:
            return self._transcoded()
        return self._decompressed()

    def _decompressed(self) -> Iterator[bytes]:
        """Decompressed data, in pieces of about a MiB or more."""
        if self.kind == "pgn":
            for data in self._raw_chunks():
                self.offset += len(data)
                yield data
        elif self.kind == "zst":
            frames = self._zstd_frames()
            if frames is not None:
                for piece in frames:
                    yield bytes(piece)      # (a view of a buffer that holds a later frame once asked for more)
                return
            held: list[bytes] = []      # blocks gathered into pieces of a few MiB (each a block's bytes or fewer)
            size = 0
            try:
                for out in self._zstd_decoded():
                    held.append(out)
                    size += len(out)
                    if size >= 4 * READ_SIZE:
                        yield b"".join(held)
                        held, size = [], 0
            except InputError:
                if held:
                    yield b"".join(held)        # (the bytes before the damage, then the damage)
                raise
            if held:
                yield b"".join(held)
        elif self.kind == "bz2" and self.path is not None and self._threads > 1 and _parallel_bzip2() is not None:
            yield from self._indexed_bzip2()
        else:
            yield from self._frames()

    def _zstd_frames(self) -> Iterator[bytes | memoryview] | None:
        """The frames of a multi-frame zstd file decoded on ``threads`` threads (``fastpgn.io.frames``); None
        where one thread decodes: one thread asked for, no file to read at offsets (a pipe, bytes), or one
        frame (``split_note`` then says how to recompress it)."""
        table = self._read_frame_table()
        if table is None or len(table) <= 1 or self.path is None:
            return None
        from fastpgn.io import frames as _frames

        return self._frames_then_stream(_frames.FrameDecoder(self.path, table, self._threads, self._first_frame))

    def _read_frame_table(self) -> FrameTable | None:
        """The frame table of a zstd file to decode on threads (None where one thread decodes), read once."""
        if self.frame_table is not None:
            return self.frame_table
        if self.kind != "zst" or self.path is None or self._threads <= 1 or self.raw_read:
            return None
        from fastpgn.io import frames as _frames

        try:
            table = _frames.frame_table(self.path)
        except OSError:
            return None         # (the single-thread decoder reads it, and names what fails)
        self.frame_table = table
        self.split_note = _frames.split_note(self.name, table)
        return table

    def frame_at(self, offset: int) -> tuple[int, int]:
        """``(file byte, decompressed offset)`` of the start of the last frame handed out that starts at or
        before decompressed ``offset`` (``(0, 0)``: none, or one thread decodes): where a resumed run may
        begin decoding (``resume_at_frame``)."""
        import bisect

        i = bisect.bisect_right(self.frame_starts, offset) - 1
        return (self._frame_raw[i], self.frame_starts[i]) if i >= 0 else (0, 0)

    def resume_at_frame(self, raw: int, offset: int) -> bool:
        """Begin decoding at the frame whose first byte is file byte ``raw`` and whose text begins at
        decompressed ``offset`` (a ``frame_at`` of an earlier run on the same input), before any read;
        whether it can (a zstd file decoded on threads that has that frame)."""
        table = self._read_frame_table()
        if table is None or len(table) <= 1 or self.offset or self._fill is not None:
            return False
        import bisect

        i = bisect.bisect_left(table.frames, (raw, 0))
        if i >= len(table.frames) or table.frames[i][0] != raw:
            return False
        self._first_frame = i
        self.offset = offset
        self.raw_read = raw
        return True

    def _frames_then_stream(self, decoder) -> Iterator[bytes | memoryview]:
        """The frames ``decoder`` hands out, then, from the first it could not (damage, a frame cut short,
        bytes that are no frame), the single-thread decoder from that frame's first byte: the same bytes and
        the same error, at the same offset, as a single-thread read."""
        import contextlib

        with contextlib.closing(iter(decoder)) as frames:
            for out in frames:
                self.frame_starts.append(self.offset)
                self._frame_raw.append(decoder.table.frames[decoder.handed - 1][0])
                self.offset += len(out)
                self.raw_read = decoder.raw_done
                yield out
        at = decoder.resume_at
        if decoder.failed is None and at == self.size:
            return
        yield from self._damaged_frame(decoder.damaged)

    def _damaged_frame(self, span: tuple[int, int]) -> Iterator[bytes]:
        """The bytes of the frame at ``span`` of the file that failed to decode (or of what follows the
        last whole frame), block by block up to the damage, then the damage, as the single-thread decoder
        names it."""
        start, end = span
        self._raw_io(self._raw.seek, start)      # (a file: open_source gives a path only for one)
        data = self._raw_io(self._raw.read, end - start)
        self.raw_read = start + len(data)
        yield from self._zstd_decoded(iter((data,)))
        raise InputDamageError(f"truncated zst data in {self.name}", self.offset)   # pragma: no cover

    def _zstd_decoded(self, chunks: Iterator[bytes] | None = None) -> Iterator[bytes]:
        """The zstd stream of ``chunks`` (the raw input's, by default) decoded on this thread, block by
        block (``fastpgn.io.zstd.decoded_blocks``), ``offset`` counting its bytes; damage raises InputError
        once every byte before it was handed out."""
        import zstandard

        from fastpgn.io.zstd import FrameCut, corrupt, decoded_blocks

        try:
            for out in decoded_blocks(self._raw_chunks() if chunks is None else chunks):
                self.offset += len(out)
                yield out
        except zstandard.ZstdError as exc:
            raise corrupt(self.name, exc, self.offset) from None
        except FrameCut:
            raise InputDamageError(f"truncated zst data in {self.name}", self.offset) from None

    def _new_decoder(self):
        if self.kind == "bz2":
            import bz2

            return bz2.BZ2Decompressor()
        return _gzip_zlib().decompressobj(31)

    def _decoded(self, decoder, data: bytes) -> Iterator[bytes]:
        """What ``decoder`` makes of ``data``, bzip2 in pieces of at most FEED_SIZE bytes.

        A bzip2 decoder hands out a block once the block is whole, and reads
        on into the next block's header in the same call if there is room
        left for output: when that header is damaged, the call fails and
        the good block is lost with it. Capping each call's output bounds
        that loss to less than FEED_SIZE bytes before the damage.
        """
        try:
            if self.kind != "bz2":
                out = decoder.decompress(data)
                if out:
                    yield out
                return
            out = decoder.decompress(data, FEED_SIZE)
            while True:
                if out:
                    yield out
                if decoder.eof or decoder.needs_input:
                    return
                out = decoder.decompress(b"", FEED_SIZE)
        except (OSError, EOFError, zlib.error) as exc:  # bzip2's OSError, zlib's or ISA-L's error
            raise InputDamageError(f"corrupt {self.kind} data in {self.name}: {exc}", self.offset) from None
        except Exception as exc:  # pragma: no cover - another decoder's own error class
            raise InputDamageError(f"corrupt {self.kind} data in {self.name}: {exc}", self.offset) from None

    def _frames(self) -> Iterator[bytes]:
        """Multi-stream/member decoding (bzip2, gzip) with damage detection."""
        decoder = None
        fed = False
        for chunk in self._raw_chunks():
            # Fed in small pieces: a decoder that fails loses the output of the call that failed,
            # so this bounds what damage takes with it to the blocks of one piece.
            for start in range(0, len(chunk), FEED_SIZE):
                data = chunk[start:start + FEED_SIZE]
                while data:
                    if decoder is None:
                        decoder = self._new_decoder()
                        fed = False
                    for out in self._decoded(decoder, data):
                        self.offset += len(out)
                        yield out
                    fed = True
                    data = b""
                    if getattr(decoder, "eof", False):
                        data = decoder.unused_data
                        decoder = None
        if decoder is not None and fed:
            flush = getattr(decoder, "flush", None)
            if flush is not None and self.kind == "gz":
                try:
                    out = flush()
                except Exception:  # pragma: no cover - defensive
                    out = b""
                if out:
                    self.offset += len(out)
                    yield out
            raise InputDamageError(f"truncated {self.kind} data in {self.name}", self.offset)

    def _indexed_bzip2(self) -> Iterator[bytes]:
        """Parallel bzip2 decoding; on any failure, the standard decoder takes over where it stopped.

        indexed_bzip2 reports damage less precisely than the stream decoder
        (and may pass over a damaged block: see ``fastpgn.io.bzip2``), so the
        stream decoder re-reads the file, drops what was already handed out,
        and names the exact offset of the damage.
        """
        import contextlib

        from fastpgn.io.bzip2 import parallel_decode

        path = self.path
        assert path is not None  # chunks() comes here for a file alone
        handed_out = 0
        try:
            with contextlib.closing(parallel_decode(path, self._threads)) as pieces:
                for out, compressed in pieces:
                    handed_out += len(out)
                    self.offset += len(out)
                    if compressed is not None:
                        self.raw_read = min(self.size or 0, compressed)
                    yield out
            self.raw_read = self.size or self.raw_read
            return
        except Exception as exc:
            self.fallback = str(exc)
        self._raw.close()
        self._raw = open(path, "rb")
        self.raw_read = 0
        self.offset -= handed_out
        skip = handed_out
        for out in self._frames():
            if skip:
                if len(out) <= skip:
                    skip -= len(out)
                    continue
                out = out[skip:]
                skip = 0
            yield out

    def close(self) -> None:
        if self._restore is not None:
            restore, self._restore = self._restore, None
            restore()
        if self._close_raw:
            self._raw.close()


class _Prefixed(io.RawIOBase):
    """A stream that first returns bytes already read from another (for unpeekable inputs)."""

    def __init__(self, head: bytes, rest: _RawInput) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(n)
        if n < 0:
            head, self._head = self._head, b""
            return head + self._rest.read()
        # A short read is fine: callers read until b"".
        head, self._head = self._head[:n], self._head[n:]
        return head

    def close(self) -> None:
        self._rest.close()


class _Pieces(io.RawIOBase):
    """A binary stream of ``pieces`` (bytes), each copied once, into the caller's buffer.

    Not wrapped in a BufferedReader: that drops the bytes of a read whose
    second raw read fails. Here an error raised by the pieces comes from a
    read that hands out nothing, after every byte before it.
    """

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._filler = _ChunkFiller(pieces)

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        return self._filler.readinto(view)

    def peek(self, n: int = 1) -> bytes:
        return self._filler.peek(n)


def _codec_name(encoding: str | None) -> str | None:
    """The codec ``encoding`` names (``cp1252`` for ``Windows-1252``); None for UTF-8, read as it is.

    >>> _codec_name("Windows-1252"), _codec_name("UTF8"), _codec_name(None)
    ('cp1252', None, None)
    """
    if encoding is None:
        return None
    import codecs

    try:
        name = codecs.lookup(encoding).name
    except (LookupError, TypeError):
        raise ValueError(f"unknown encoding {encoding!r} (give a Python codec name: 'cp1252', 'latin-1', "
                         f"'utf-16'...)") from None
    return None if name == "utf-8" else name
