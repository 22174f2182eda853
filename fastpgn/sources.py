"""Open any input and cut it into game-aligned blocks.

Inputs: a path, ``-`` (stdin), ``bytes``, or a binary file object. The
compression is recognised by the first bytes, never by the name: zstd
(``28 b5 2f fd``, several frames allowed), bzip2 (``BZh``, several streams
allowed; parallel decoding with ``indexed_bzip2`` when installed and the
input is a file), gzip (``1f 8b``, several members allowed; ISA-L when
installed), else plain PGN.

Damage (a truncated or corrupt compressed stream) surfaces as
``InputError`` carrying the decompressed offset reached; the block reader
first hands out every whole game before it (see ``Block.damage``). zstd is
decoded by python-zstandard's stream reader straight into the block
buffers; that reader reports corrupt data but not a stream that stops early,
so ``_ZstdFrames`` follows the frame headers on the way to tell the two apart.

Buffers: ``Source.readinto`` fills the cutter's buffers in place (zstd and
plain files; gzip and bzip2 copy from their decoder), a block is a view of
its buffer, and a released block's buffer holds a later one, so a run
allocates a handful of buffers whatever the input size.

Block cuts: a block always ends where a blank line is followed by a line
starting with ``[`` (a game boundary for the scanner too), at the first such
boundary at or after the next multiple of ``block_size`` in absolute
decompressed offset. Cuts therefore depend only on the data, never on read
sizes or on where reading started, which is what lets ``--resume`` and any
``-j`` reproduce the same output bytes.
"""

from __future__ import annotations

import bz2
import io
import os
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from fastpgn.errors import InputError

READ_SIZE = 1 << 20
FEED_SIZE = 64 << 10     # compressed bytes given to a bzip2/gzip decoder at a time
BLOCK_SIZE = 4 << 20

try:  # ISA-L inflates gzip several times faster than zlib.
    from isal import isal_zlib as _gzip_zlib
except ImportError:  # pragma: no cover - optional speed-up
    _gzip_zlib = zlib

try:
    import indexed_bzip2 as _ibz2
except ImportError:  # pragma: no cover - optional speed-up
    _ibz2 = None

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


class Source:
    """A decompressed byte stream with its name, kind and progress in the raw input."""

    def __init__(self, raw: BinaryIO, name: str, size: int | None, path: str | None,
                 close_raw: bool, threads: int = 1) -> None:
        self.name = name
        self.size = size            # raw (compressed) size when known
        self.path = path
        self._raw = raw
        self._close_raw = close_raw
        self._threads = threads
        self.raw_read = 0           # raw bytes consumed so far (for progress)
        self.offset = 0             # decompressed bytes handed out so far
        self._fill = None           # readinto of the decoder, made on first use
        self.fallback: str | None = None   # why the parallel bzip2 decoder gave way to the stream decoder
        head = self._peek(4)
        self.kind = detect(head)

    def _peek(self, n: int) -> bytes:
        peek = getattr(self._raw, "peek", None)
        if peek is not None:
            try:
                return peek(n)[:n]
            except (OSError, ValueError):
                pass
        data = self._raw.read(n)
        self._raw = _Prefixed(data, self._raw)
        return data

    def _raw_io(self, call, arg):
        """``call(arg)`` on the raw input, an OSError as InputError at the offset reached."""
        try:
            return call(arg)
        except OSError as exc:
            raise InputError(f"cannot read {self.name}: {exc.strerror or exc}", self.offset) from None

    def _read_raw(self, n: int) -> bytes:
        data = self._raw_io(self._raw.read, n)
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
        if self._fill is None:
            if self.kind == "zst":
                self._fill = _ZstdStream(self).readinto
            elif self.kind == "pgn" and isinstance(self._raw, (io.BufferedReader, io.FileIO, io.BytesIO)):
                self._fill = self._plain_readinto
            else:
                self._fill = _ChunkFiller(self.chunks()).readinto
        return self._fill(view)

    def _plain_readinto(self, view) -> int:
        n = self._raw_io(self._raw.readinto, view)
        self.raw_read += n
        self.offset += n
        return n

    def chunks(self) -> Iterator[bytes]:
        """Decompressed data, in pieces of about a MiB or more."""
        if self.kind == "pgn":
            for data in self._raw_chunks():
                self.offset += len(data)
                yield data
        elif self.kind == "zst":
            stream = _ZstdStream(self)
            while True:
                data = stream.read(4 * READ_SIZE)
                if not data:
                    return
                yield data
        elif self.kind == "bz2" and _ibz2 is not None and self.path is not None and self._threads > 1:
            yield from self._indexed_bzip2()
        else:
            yield from self._frames()

    def _new_decoder(self):
        if self.kind == "bz2":
            return bz2.BZ2Decompressor()
        return _gzip_zlib.decompressobj(31)

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
            raise InputError(f"corrupt {self.kind} data in {self.name}: {exc}", self.offset) from None
        except Exception as exc:  # pragma: no cover - another decoder's own error class
            raise InputError(f"corrupt {self.kind} data in {self.name}: {exc}", self.offset) from None

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
            raise InputError(f"truncated {self.kind} data in {self.name}: the input ends mid-stream",
                             self.offset)

    def _indexed_bzip2(self) -> Iterator[bytes]:
        """Parallel bzip2 decoding; on any failure, the standard decoder takes over where it stopped.

        indexed_bzip2 reports damage less precisely than the stream decoder,
        so the stream decoder re-reads the file, drops what was already handed
        out, and names the exact offset of the damage. Its block finder also
        passes over a block whose header is damaged where a block follows no
        other (the first of the file, the first of a later stream) without a
        word: ``_Bzip2Chain`` checks that no such block went missing before
        the data after it is handed out, so every ``-j`` gives the same games
        and the same damage.
        """
        handed_out = 0
        try:
            reader = _ibz2.open(self.path, parallelization=self._threads)
            chain = _Bzip2Chain(self.path)
            try:
                while True:
                    # 16 MiB a read: each check asks for the whole block index (about 0.1 us a block,
                    # 230,000 blocks in a 200 GB dump), so fewer, larger reads keep it a few percent.
                    out = reader.read(16 * READ_SIZE)
                    if not out:
                        chain.finish(reader.available_block_offsets(), handed_out)
                        break
                    chain.check(reader.available_block_offsets(), handed_out + len(out))
                    handed_out += len(out)
                    self.offset += len(out)
                    try:
                        self.raw_read = min(self.size or 0, reader.tell_compressed() // 8)
                    except Exception:  # pragma: no cover - older indexed_bzip2
                        pass
                    yield out
            finally:
                reader.close()
                chain.close()
            self.raw_read = self.size or self.raw_read
            return
        except Exception as exc:
            self.fallback = str(exc)
        self._raw.close()
        self._raw = open(self.path, "rb")
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
        if self._close_raw:
            self._raw.close()


_BZ2_END_MAGIC = 0x177245385090


class _Bzip2Chain:
    """Checks that the blocks indexed_bzip2 decoded follow each other with none left out.

    Within a stream the decoder itself checks that each block starts where
    the one before it ended; what it does not check is where the first block
    of a stream starts: right after the file's 4-byte ``BZh9`` header, and
    after an end-of-stream marker (48-bit magic, 32-bit CRC, padding to a
    byte) right after the next stream's header. ``check`` is given the
    compressed bit offsets of the blocks and end markers found so far (with
    their decompressed offsets) and raises where one is missing; ``finish``
    checks that the decoder's end is the file's.
    """

    def __init__(self, path: str) -> None:
        self._file = open(path, "rb")
        self._size_bits = os.fstat(self._file.fileno()).st_size * 8
        self._last: int | None = None      # bit offset of the last entry checked
        self._last_ends_stream = False

    def _magic(self, bit: int) -> int:
        self._file.seek(bit // 8)
        data = self._file.read(7)
        if len(data) < 7:
            return 0
        return (int.from_bytes(data, "big") >> (8 - bit % 8)) & 0xFFFFFFFFFFFF

    def check(self, offsets: dict, decoded: int) -> None:
        """Raise ValueError if a block is missing among those holding the first ``decoded`` bytes."""
        last = -1 if self._last is None else self._last
        for bit in sorted(k for k, v in offsets.items() if k > last and v <= decoded):
            if self._last is None:
                expected = [32]
            elif self._last_ends_stream:
                after = (self._last + 80 + 7) // 8 * 8
                expected = [after + 32, after]    # the next stream's first block, or the end of the file
            else:
                expected = None                   # the decoder checked this link itself
            if expected is not None and bit not in expected:
                raise ValueError(f"bzip2 block missing before bit {bit}")
            self._last = bit
            self._last_ends_stream = bit < self._size_bits and self._magic(bit) == _BZ2_END_MAGIC

    def finish(self, offsets: dict, decoded: int) -> None:
        """At the decoder's end: raise ValueError unless it went through the whole file.

        A damaged stream header after the first stream ends the parallel
        decoder's reading without an error, as if the file ended there.
        """
        self.check(offsets, decoded)
        if self._last != self._size_bits:
            raise ValueError(f"bzip2 data after bit {self._last} was not decoded")

    def close(self) -> None:
        self._file.close()


class _ZstdStream:
    """zstd frames decoded straight into the caller's buffer (``readinto``), or as bytes (``read``)."""

    def __init__(self, source: Source) -> None:
        import zstandard

        self._source = source
        self._frames = _ZstdFrames(source)
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            self._frames, read_size=READ_SIZE, read_across_frames=True, closefd=False)
        self._error = zstandard.ZstdError

    def _checked(self, n: int) -> int:
        source = self._source
        if n == 0 and not self._frames.complete:
            raise InputError(f"truncated zst data in {source.name}: the input ends mid-stream", source.offset)
        source.offset += n
        return n

    def _decoded(self, call, arg):
        """``call(arg)`` on the stream reader, its errors as InputError at the offset reached."""
        try:
            return call(arg)
        except self._error as exc:
            raise InputError(f"corrupt zst data in {self._source.name}: {exc}", self._source.offset) from None

    def readinto(self, view) -> int:
        return self._checked(self._decoded(self._reader.readinto, view))

    def read(self, size: int) -> bytes:
        data = self._decoded(self._reader.read, size)
        self._checked(len(data))
        return data


_ZSTD_FRAME = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50    # ... to 0x184D2A5F
_DICT_ID_SIZE = (0, 1, 2, 4)
_CONTENT_SIZE_SIZE = (0, 2, 4, 8)


class _ZstdFrames:
    """The compressed stream on its way to the decoder, its frame layout followed (RFC 8878, section 3.1).

    The decoder reports corrupt data, but not a stream that simply stops
    (a cut download): that shows here as an end of input anywhere but
    between two frames. Only headers are read: a frame header, then each
    block's three-byte header (its size says how far the next one is),
    then the checksum if the frame has one; skippable frames are skipped.
    """

    def __init__(self, source: Source) -> None:
        self._source = source
        self._state = "magic"
        self._need = 4              # header bytes the state waits for
        self._head = b""            # those gathered so far (a header may straddle two reads)
        self._skip = 0              # payload bytes to pass before the next header
        self._checksum = False

    @property
    def complete(self) -> bool:
        """Whether the input read so far ends between frames."""
        return self._state in ("magic", "unknown") and not self._head and not self._skip

    def read(self, n: int) -> bytes:
        data = self._source._read_raw(n)
        pos, size = 0, len(data)
        while pos < size and self._state != "unknown":
            if self._skip:
                take = min(self._skip, size - pos)
                self._skip -= take
                pos += take
                continue
            take = self._need - len(self._head)
            self._head += data[pos:pos + take]
            pos += take
            if len(self._head) == self._need:
                head, self._head = self._head, b""
                self._header(head)
        return data

    def _expect(self, state: str, need: int) -> None:
        self._state, self._need = state, need

    def _header(self, head: bytes) -> None:
        state = self._state
        if state == "magic":
            magic = int.from_bytes(head, "little")
            if magic == _ZSTD_FRAME:
                self._expect("descriptor", 1)
            elif magic & ~0xF == _ZSTD_SKIPPABLE:
                self._expect("skippable", 4)
            else:
                self._state = "unknown"     # not a frame: the decoder names the damage
        elif state == "descriptor":
            d = head[0]
            single_segment = (d >> 5) & 1
            self._checksum = bool(d & 4)
            content_size = _CONTENT_SIZE_SIZE[d >> 6] or single_segment
            rest = (1 - single_segment) + _DICT_ID_SIZE[d & 3] + content_size
            if rest:
                self._expect("header", rest)
            else:
                self._expect("block", 3)
        elif state == "header":
            self._expect("block", 3)
        elif state == "block":
            h = int.from_bytes(head, "little")
            self._skip = 1 if (h >> 1) & 3 == 1 else h >> 3     # an RLE block holds one byte
            if h & 1 and self._checksum:                        # the frame's last block
                self._expect("checksum", 4)
            elif h & 1:
                self._expect("magic", 4)
        elif state == "checksum":
            self._expect("magic", 4)
        elif state == "skippable":
            self._skip = int.from_bytes(head, "little")
            self._expect("magic", 4)


class _Prefixed(io.RawIOBase):
    """A stream that first returns bytes already read from another (for unpeekable inputs)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
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


def open_source(source, threads: int = 1) -> Source:
    """Open ``source`` for reading: a path (str or ``os.PathLike``), ``-`` (stdin), bytes, a binary
    or text file object, or an iterable of lines (str or bytes).

    Text (a text file, ``io.StringIO``, str lines) is encoded as UTF-8 as it
    is read, a piece at a time (byte offsets count those bytes; a file read
    with ``errors="surrogateescape"`` gives back its own bytes). An item of
    an iterable is one line, and one that does not end in ``\\n`` gets one
    (``text.splitlines()`` reads as the text does). A file object or
    iterable given is never closed; a file opened here is closed by
    ``Source.close``. Raises InputError for a missing file, a folder, or an
    unreadable one; TypeError for what is none of these.

    >>> open_source(b"[Event \\"x\\"]\\n\\n*\\n").kind
    'pgn'
    >>> import io
    >>> b"".join(open_source(io.StringIO('[Event "\\u00e9"]\\n\\n*\\n')).chunks())
    b'[Event "\\xc3\\xa9"]\\n\\n*\\n'
    >>> b"".join(open_source(['[Event "x"]', "", b"*\\n"]).chunks())
    b'[Event "x"]\\n\\n*\\n'
    """
    # Helpers for text and lines, kept inside open_source, the one function of this module they serve.
    def utf8(text: str) -> bytes:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate no decoder made
            return text.encode("utf-8", "surrogatepass")

    def pieces_of_reader(read) -> Iterator[bytes]:
        while piece := read(READ_SIZE):
            yield utf8(piece) if isinstance(piece, str) else bytes(piece)

    def pieces_of_lines(lines) -> Iterator[bytes]:
        batch, size = [], 0
        for line in lines:
            if isinstance(line, str):
                line = utf8(line)
            elif isinstance(line, (bytes, bytearray, memoryview)):
                line = bytes(line)
            else:
                raise TypeError(f"cannot read PGN from an iterable holding {type(line).__name__}: "
                                f"give lines as str or bytes")
            if not line.endswith(b"\n"):
                line += b"\n"
            batch.append(line)
            size += len(line)
            if size >= READ_SIZE:   # lines a MiB at a time: a few Python calls per MiB, not per line
                yield b"".join(batch)
                batch, size = [], 0
        if batch:
            yield b"".join(batch)

    class Pieces(io.RawIOBase):
        """A binary stream of ``pieces`` (bytes), each copied once, into the caller's buffer."""

        def __init__(self, pieces: Iterator[bytes]) -> None:
            self._pieces = pieces
            self._piece = memoryview(b"")

        def readable(self) -> bool:
            return True

        def readinto(self, view) -> int:
            while not self._piece:
                piece = next(self._pieces, None)
                if piece is None:
                    return 0
                self._piece = memoryview(piece)
            n = min(len(view), len(self._piece))
            view[:n] = self._piece[:n]
            self._piece = self._piece[n:]
            return n

    def encoded(pieces: Iterator[bytes]) -> io.BufferedReader:
        return io.BufferedReader(Pieces(pieces))

    if isinstance(source, (bytes, bytearray, memoryview)):
        return Source(io.BytesIO(bytes(source)), "<bytes>", len(source), None, True, threads)
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if text == "-":
            stdin = getattr(sys.stdin, "buffer", None)   # a program may have put a StringIO there
            raw = stdin if stdin is not None else encoded(pieces_of_reader(sys.stdin.read))
            return Source(raw, "<stdin>", None, None, False, threads)
        path = Path(text)
        try:
            folder = path.is_dir()
        except OSError:             # a name too long: PGN text given as a str, most likely
            folder = False
        if folder:
            raise InputError(f"{text} is a folder, not a PGN file")
        try:
            raw = open(path, "rb")
        except OSError as exc:
            if "\n" in text:       # no path holds a line break; PGN text does
                raise InputError(f"{text[:40]!r}...: no such file (a str is a path: give PGN text as "
                                 f"io.StringIO(text) or as bytes)") from None
            if isinstance(exc, FileNotFoundError):
                raise InputError(f"{text}: no such file") from None
            raise InputError(f"{text}: cannot open ({exc.strerror or exc})") from None
        info = os.fstat(raw.fileno())
        if stat.S_ISREG(info.st_mode):
            return Source(raw, text, info.st_size, text, True, threads)
        # A pipe or device (``<(zstdcat dump.pgn.zst)``): no size, and no path to open twice.
        return Source(raw, text, None, None, True, threads)
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        if isinstance(source, (io.RawIOBase, io.BufferedIOBase)):
            return Source(source, name, None, None, False, threads)
        # A text file, or a reader that may be one (io.TextIOBase is not the only kind: codecs.open's
        # readers, a text-mode SpooledTemporaryFile): what a read returns says.
        return Source(encoded(pieces_of_reader(source.read)), name, None, None, False, threads)
    try:
        lines = iter(source)
    except TypeError:
        raise TypeError(f"cannot read PGN from {type(source).__name__}: give a path, bytes, a file "
                        f"or an iterable of lines") from None
    return Source(encoded(pieces_of_lines(lines)), "<lines>", None, None, False, threads)


def check_pgn(head: bytes, name: str) -> None:
    """Raise InputError unless the first decompressed bytes can start PGN (text, not binary)."""
    nul = head.find(b"\0", 0, 1 << 16)
    if nul >= 0:
        raise InputError(f"{name} is not PGN: binary data", nul)
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    text = text.lstrip(b" \t\r\n")
    if text and text[:1] not in b"[{;%(*0123456789" and not text[:1].isalpha():
        raise InputError(f"{name} is not PGN: it starts with {text[:16]!r}", head.find(text[:1]))


@dataclass
class Block:
    """Whole games: ``data`` starts at decompressed ``offset`` of the stream.

    ``data`` is a read-only view of a buffer the cutter may fill again once
    ``release()`` is called: keep a copy (``bytes(...)``) of anything needed
    after that.
    """

    data: memoryview
    offset: int
    at_stream_start: bool
    damage: InputError | None = None   # set on the last block when the input is damaged
    truncated: bool = False            # the data is the start of a game the damage cut short
    _buffer: bytearray | None = None
    _pool: list | None = None

    def truncation_reason(self) -> str:
        return f"input ends inside this game ({self.damage.reason})"

    def release(self) -> None:
        """The block's data is no longer needed: its buffer may hold a later block."""
        if self._pool is not None and self._buffer is not None:
            self._pool.append(self._buffer)
        self._buffer = self._pool = None


def _blank_line_ends_at(byte_at, i: int) -> bool:
    """Whether the ``\\n`` at index ``i`` ends a blank line (only spaces, tabs and CR since the one before)."""
    j = i - 1
    while j >= 0 and byte_at(j) in b" \t\r":
        j -= 1
    return j >= 0 and byte_at(j) == 10


def find_cut(buf, lo: int, hi: int | None = None) -> int:
    """First index ``q`` in ``[lo, hi]`` where a blank line is followed by a line starting with ``[``; -1 if none."""
    hi = len(buf) if hi is None else hi
    i = buf.find(b"\n[", max(lo, 1) - 1, hi)
    while i >= 0:
        if _blank_line_ends_at(buf.__getitem__, i):
            return i + 1
        i = buf.find(b"\n[", i + 1, hi)
    return -1


def _last_cut(buf, hi: int) -> int:
    """Last game boundary in ``buf[:hi]``; 0 if none."""
    i = buf.rfind(b"\n[", 0, hi)
    while i > 0:
        if _blank_line_ends_at(buf.__getitem__, i):
            return i + 1
        i = buf.rfind(b"\n[", 0, i)
    return 0


def _line_starts_tag(buf, i: int, end: int) -> bool:
    """Whether the line at ``buf[i:end]`` starts like a tag pair: ``[`` then a letter (not ``[%clk``)."""
    while i < end and buf[i] in b" \t":
        i += 1
    if i + 1 >= end or buf[i] != 0x5B:
        return False
    letter = buf[i + 1] | 0x20          # ASCII lower case
    return 0x61 <= letter <= 0x7A


def has_moves(buf, end: int) -> bool:
    """Whether ``buf[:end]`` has a line of movetext: not blank, and not a tag line (``[`` first)."""
    i = 0
    while i < end:
        j = buf.find(b"\n", i, end)
        j = end if j < 0 else j
        line = bytes(buf[i:j]).strip(b" \t\r\xef\xbb\xbf")
        if line and line[:1] != b"[":
            return True
        i = j + 1
    return False


def _cut_before_unfinished_tags(buf, end: int, moves_seen: bool) -> int:
    """Where the last game starts if the input ends inside its tags, before any moves; else -1.

    A lichess game always has movetext (at least its result): a dump cut
    short at a bzip2 stream or zstd frame boundary still decodes cleanly,
    and its last game would read as a game of no moves. That is damage when
    the text ends inside a tag (no closing ``]``), or after complete tags
    in an input whose other games have moves. An input of tags alone (a
    lichess broadcast exported before its games began) is not.
    """
    hi = end
    while hi > 0 and buf[hi - 1] in b" \t\r\n":
        hi -= 1
    first = -1
    while hi > 0:
        lo = buf.rfind(b"\n", 0, hi) + 1
        if not _line_starts_tag(buf, lo, hi):
            break
        if first < 0:
            first = lo
            last_line = bytes(buf[lo:hi]).rstrip()
        start = lo
        hi = lo - 1 if lo > 0 else 0
        if lo == 0:
            break
    if first < 0:
        return -1
    if not last_line.endswith(b"]") or moves_seen or has_moves(buf, start):
        return start
    return -1


# Past the next block's target, the cutter reads this much at a time, so the
# bytes after a cut, copied into the next block's buffer, stay few.
_STEP = 64 << 10


def cut_blocks(readinto, block_size: int = BLOCK_SIZE, start: int = 0, head: bytes = b"",
               pool: list | None = None, moves_seen: bool | None = None) -> Iterator[Block]:
    """Cut a decompressed stream (that begins at absolute ``start``) into game-aligned blocks.

    ``readinto(view)`` fills a writable view and returns the byte count, 0
    at the end; ``head`` holds bytes already read from the stream. The
    stream is read straight into the buffers the blocks are views of, so no
    byte is copied except the few after each cut. A caller that calls
    ``Block.release()`` lets its buffer come back through ``pool`` (a list)
    instead of a new one being allocated. ``moves_seen`` says whether the
    stream had movetext before ``start`` (it decides whether a last game of
    tags alone is damage: see ``_cut_before_unfinished_tags``).
    """
    if moves_seen is None:
        moves_seen = start > 0
    step = min(_STEP, max(4096, block_size // 16))
    capacity = block_size + 2 * step
    if pool is None:
        pool = []

    def new_buffer(size: int) -> bytearray:
        while pool:
            buf = pool.pop()
            if len(buf) >= size:
                return buf
        return bytearray(size)

    buf = new_buffer(max(capacity, len(head)))
    buf[:len(head)] = head
    filled = len(head)          # bytes of buf holding the stream
    searched = 0                # no cut starts before this index (searched already)
    base = start                # absolute offset of buf[0]
    damage = None
    view = memoryview(buf)
    while True:
        target = (base // block_size + 1) * block_size
        lo = max(target - base, 1)
        if filled > lo:
            q = find_cut(buf, max(lo, searched), filled)
            if q >= 0:
                moves_seen = moves_seen or has_moves(buf, q)
                yield Block(view[:q].toreadonly(), base, base == 0, _buffer=buf, _pool=pool)
                rest = filled - q
                nxt = new_buffer(max(capacity, rest + step))
                nxt[:rest] = view[q:filled]
                view.release()
                buf, view = nxt, memoryview(nxt)
                base += q
                filled, searched = rest, 0
                continue
            searched = filled
        want = lo + step - filled if filled < lo else step
        if filled + want > len(buf):  # a game longer than a block: a bigger buffer
            bigger = bytearray(2 * (filled + want))
            bigger[:filled] = view[:filled]
            view.release()
            buf, view = bigger, memoryview(bigger)
        try:
            got = readinto(view[filled:filled + want])
        except InputError as exc:
            damage = exc
            break
        if not got:
            break
        filled += got
    if damage is None:
        cut = _cut_before_unfinished_tags(buf, filled, moves_seen)
        if cut < 0:
            if filled:
                yield Block(view[:filled].toreadonly(), base, base == 0, _buffer=buf, _pool=pool)
            return
        damage = InputError("the input ends inside the tags of its last game, before any moves", base + filled)
        if cut > 0:
            yield Block(view[:cut].toreadonly(), base, base == 0)
        yield Block(view[cut:filled].toreadonly(), base + cut, base + cut == 0, damage, truncated=True)
        return
    # Damaged input: the games before the last boundary are whole; the last
    # one is whole only if a blank line closed it before the damage.
    if buf.endswith(b"\n\n", 0, filled) or buf.endswith(b"\n\r\n", 0, filled):
        yield Block(view[:filled].toreadonly(), base, base == 0, damage)
        return
    cut = _last_cut(buf, filled)
    if cut > 0:
        yield Block(view[:cut].toreadonly(), base, base == 0)
    yield Block(view[cut:filled].toreadonly(), base + cut, base + cut == 0, damage, truncated=True)


class _ChunkFiller:
    """``readinto`` over an iterator of byte strings (one copy per byte, into the caller's buffer)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._piece = memoryview(b"")

    def readinto(self, view) -> int:
        while not self._piece:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._piece = memoryview(chunk)
        n = min(len(view), len(self._piece))
        view[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        return n


def blocks(chunks: Iterator[bytes], block_size: int = BLOCK_SIZE, start: int = 0) -> Iterator[Block]:
    """``cut_blocks`` over a stream given as an iterator of byte strings."""
    return cut_blocks(_ChunkFiller(chunks).readinto, block_size, start)


def line_blocks(data: BinaryIO, size: int) -> Iterator[bytes]:
    """A binary file in blocks of about ``size`` bytes of whole lines (each without its last line break)."""
    rest: list[bytes] = []  # a line longer than a block is gathered here
    while True:
        chunk = data.read(size)
        if not chunk:
            if rest:
                yield b"".join(rest)
            return
        cut = chunk.rfind(b"\n")
        if cut < 0:
            rest.append(chunk)
            continue
        rest.append(chunk[:cut])
        yield b"".join(rest)
        rest = [chunk[cut + 1:]] if cut + 1 < len(chunk) else []
