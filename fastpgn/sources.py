"""Open any input and cut it into game-aligned blocks.

Inputs: a path, ``-`` (stdin), ``bytes``, or a binary file object. The
compression is recognised by the first bytes, never by the name: zstd
(``28 b5 2f fd``, several frames allowed), bzip2 (``BZh``, several streams
allowed; parallel decoding with ``indexed_bzip2`` when installed and the
input is a file), gzip (``1f 8b``, several members allowed; ISA-L when
installed), else plain PGN.

Damage (a truncated or corrupt compressed stream) surfaces as
``InputError`` carrying the decompressed offset reached; the block reader
first hands out every whole game before it (see ``Block.damage``).

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
    if head.startswith(MAGIC_ZSTD):
        return "zst"
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

    def _raw_chunks(self) -> Iterator[bytes]:
        read = self._raw.read
        while True:
            try:
                data = read(READ_SIZE)
            except OSError as exc:
                raise InputError(f"cannot read {self.name}: {exc.strerror or exc}", self.offset) from None
            if not data:
                return
            self.raw_read += len(data)
            yield data

    def chunks(self) -> Iterator[bytes]:
        """Decompressed data, in pieces of about a MiB or more."""
        if self.kind == "pgn":
            for data in self._raw_chunks():
                self.offset += len(data)
                yield data
        elif self.kind == "bz2" and _ibz2 is not None and self.path is not None and self._threads > 1:
            yield from self._indexed_bzip2()
        else:
            yield from self._frames()

    def _new_decoder(self):
        if self.kind == "zst":
            import zstandard

            return zstandard.ZstdDecompressor().decompressobj()
        if self.kind == "bz2":
            return bz2.BZ2Decompressor()
        return _gzip_zlib.decompressobj(31)

    def _frames(self) -> Iterator[bytes]:
        """Multi-frame/stream/member decoding with damage detection."""
        decoder = None
        fed = False
        for data in self._raw_chunks():
            while data:
                if decoder is None:
                    decoder = self._new_decoder()
                    fed = False
                try:
                    out = decoder.decompress(data)
                except Exception as exc:  # zstd.ZstdError, OSError, zlib.error
                    raise InputError(f"corrupt {self.kind} data in {self.name}: {exc}", self.offset) from None
                fed = True
                data = b""
                if out:
                    self.offset += len(out)
                    yield out
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
        out, and names the exact offset of the damage.
        """
        handed_out = 0
        try:
            reader = _ibz2.open(self.path, parallelization=self._threads)
            try:
                while True:
                    out = reader.read(4 * READ_SIZE)
                    if not out:
                        break
                    handed_out += len(out)
                    self.offset += len(out)
                    try:
                        self.raw_read = min(self.size or 0, reader.tell_compressed() // 8)
                    except Exception:  # pragma: no cover - older indexed_bzip2
                        pass
                    yield out
            finally:
                reader.close()
            self.raw_read = self.size or self.raw_read
            return
        except Exception:
            pass
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
    """Open ``source`` (path, ``-``, bytes, or binary file object) for reading.

    Raises InputError for a missing file, a folder, or an unreadable one.
    >>> open_source(b"[Event \\"x\\"]\\n\\n*\\n").kind
    'pgn'
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Source(io.BytesIO(bytes(source)), "<bytes>", len(source), None, True, threads)
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if text == "-":
            return Source(sys.stdin.buffer, "<stdin>", None, None, False, threads)
        path = Path(text)
        if path.is_dir():
            raise InputError(f"{text} is a folder, not a PGN file")
        try:
            raw = open(path, "rb")
        except FileNotFoundError:
            raise InputError(f"{text}: no such file") from None
        except OSError as exc:
            raise InputError(f"{text}: cannot open ({exc.strerror or exc})") from None
        info = os.fstat(raw.fileno())
        if stat.S_ISREG(info.st_mode):
            return Source(raw, text, info.st_size, text, True, threads)
        # A pipe or device (``<(zstdcat dump.pgn.zst)``): no size, and no path to open twice.
        return Source(raw, text, None, None, True, threads)
    if hasattr(source, "read"):
        name = getattr(source, "name", "<stream>")
        return Source(source, str(name), None, None, False, threads)
    raise TypeError(f"cannot read PGN from {type(source).__name__}: give a path, bytes or a binary file")


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
    """Whole games: ``data`` starts at decompressed ``offset`` of the stream."""

    data: bytes
    offset: int
    at_stream_start: bool
    damage: InputError | None = None   # set on the last block when the input is damaged
    truncated: bool = False            # the data is the start of a game the damage cut short

    def truncation_reason(self) -> str:
        return f"input ends inside this game ({self.damage.reason})"


def _blank_line_ends_at(byte_at, i: int) -> bool:
    """Whether the ``\\n`` at index ``i`` ends a blank line (only spaces, tabs and CR since the one before)."""
    j = i - 1
    while j >= 0 and byte_at(j) in b" \t\r":
        j -= 1
    return j >= 0 and byte_at(j) == 10


def find_cut(buf, lo: int) -> int:
    """First index ``q >= lo`` where a blank line is followed by a line starting with ``[``; -1 if none."""
    i = buf.find(b"\n[", max(lo, 1) - 1)
    while i >= 0:
        if _blank_line_ends_at(buf.__getitem__, i):
            return i + 1
        i = buf.find(b"\n[", i + 1)
    return -1


def _last_cut(buf) -> int:
    """Last game boundary in ``buf``; 0 if none."""
    i = buf.rfind(b"\n[")
    while i > 0:
        if _blank_line_ends_at(buf.__getitem__, i):
            return i + 1
        i = buf.rfind(b"\n[", 0, i)
    return 0


class _Pending:
    """Decompressed bytes not yet handed out, kept as the chunks they came in (no copy until a block is cut)."""

    def __init__(self) -> None:
        self.pieces: list[memoryview] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        if chunk:
            self.pieces.append(memoryview(chunk))
            self.size += len(chunk)

    def byte(self, k: int) -> int:
        """The byte at index ``k`` (counted from the first pending byte); walks back from the newest piece."""
        end = self.size
        for piece in reversed(self.pieces):
            if k >= end - len(piece):
                return piece[k - (end - len(piece))]
            end -= len(piece)
        raise IndexError(k)

    def take(self, q: int) -> bytes:
        """The first ``q`` pending bytes as one bytes object (the one copy a block costs)."""
        out, rest, taken = [], [], 0
        for piece in self.pieces:
            if taken >= q:
                rest.append(piece)
            elif taken + len(piece) <= q:
                out.append(piece)
            else:
                out.append(piece[:q - taken])
                rest.append(piece[q - taken:])
            taken += len(piece)
        self.pieces = rest
        self.size -= q
        return out[0].tobytes() if len(out) == 1 else b"".join(out)

    def find_cut(self, lo: int) -> int:
        """``find_cut`` over the pending bytes, searching only the newest piece and its seam."""
        piece = self.pieces[-1]
        first = self.size - len(piece)          # index of the newest piece's first byte
        chunk = piece.obj                       # the bytes object behind the view
        skip = len(chunk) - len(piece)          # a view of a chunk's tail starts this far in
        i = max(lo, first, 1) - 1               # candidate index of the "\n" of "\n["
        while True:
            if i < first:                       # "\n" ends an older piece, "[" opens this one
                if piece[0] == 0x5B and self.byte(i) == 0x0A:
                    hit = i
                else:
                    i = first
                    continue
            else:
                at = chunk.find(b"\n[", i - first + skip)
                if at < 0:
                    return -1
                hit = at - skip + first
            if _blank_line_ends_at(self.byte, hit):
                return hit + 1
            i = hit + 1


def blocks(chunks: Iterator[bytes], block_size: int = BLOCK_SIZE, start: int = 0) -> Iterator[Block]:
    """Cut a decompressed stream (that begins at absolute ``start``) into game-aligned blocks.

    Each byte is copied once, into its block: the chunks are kept as they
    came until a cut is found, and each chunk is searched once (from where
    the next cut may fall) plus the seam with the chunk before it.
    """
    pending = _Pending()
    base = start
    target = (base // block_size + 1) * block_size
    damage = None
    try:
        for chunk in chunks:
            before = pending.size
            pending.add(chunk)
            if pending.size == before:
                continue
            while True:
                lo = max(target - base, 1)
                if pending.size <= lo:
                    break
                # Cuts before this chunk's seam were looked for when they arrived.
                q = pending.find_cut(max(lo, before))
                if q < 0:
                    break
                data = pending.take(q)
                yield Block(data, base, base == 0)
                base += q
                target = (base // block_size + 1) * block_size
                before = 0
    except InputError as exc:
        damage = exc
    rest = pending.take(pending.size)
    if damage is None:
        if rest:
            yield Block(rest, base, base == 0)
        return
    # Damaged input: the games before the last boundary are whole; the last
    # one is whole only if a blank line closed it before the damage.
    data = rest
    if data.endswith(b"\n\n") or data.endswith(b"\n\r\n"):
        yield Block(data, base, base == 0, damage)
        return
    cut = _last_cut(data)
    if cut > 0:
        yield Block(data[:cut], base, base == 0)
    yield Block(data[cut:], base + cut, base + cut == 0, damage, truncated=True)


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
