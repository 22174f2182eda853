"""Open any input: a decompressed byte stream, whatever the compression, with its name and progress.

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
so ``fastpgn.io.zstd`` follows the frame headers on the way to tell the two
apart. Parallel bzip2 decoding and its check that no block went missing
live in ``fastpgn.io.bzip2``.

``Source.readinto`` fills the cutter's buffers in place (zstd and plain
files; gzip and bzip2 copy from their decoder). Cutting the stream into
game-aligned blocks is ``fastpgn.io.blocks``'s (``cut_blocks``, re-exported
here with the rest of its public names).
"""

from __future__ import annotations

import io
import os
import stat
import sys
import zlib

from fastpgn.io.blocks import (BLOCK_SIZE, Block, _ChunkFiller, blocks, cut_blocks, cut_buffer, find_cut, has_moves,
                             line_blocks)
from fastpgn.errors import InputDamageError, InputError

# Each decoder (fastpgn.io.zstd, _bzip2, bz2, ISA-L), pathlib and typing are imported where
# they are needed: start-up is a good part of reading a file's headers (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterator, Protocol

__all__ = ["BLOCK_SIZE", "Block", "READ_SIZE", "Source", "blocks", "check_pgn", "cut_blocks", "cut_buffer", "detect",
           "find_cut", "has_moves", "HEAD_SIZE", "is_parquet_input", "line_blocks", "not_utf8", "open_source"]

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


class Source:
    """A decompressed byte stream with its name, kind and progress in the raw input."""

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
        self.in_memory: bytes | None = None  # the whole input, when it was given as bytes
        self.encoding = _codec_name(encoding)  # None: UTF-8, read as it is; else transcoded to UTF-8 on the way in
        self._pending: InputError | None = None   # damage met while reading the head, raised by the next read
        self._restore: Callable[[], None] | None = None   # undoes what open_source changed on a text file given
        head = self._peek(4)
        self.kind = detect(head)

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
            return cut_buffer(self.in_memory, block_size)
        return cut_blocks(self.readinto, block_size, head=head, pool=pool)

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
                from fastpgn.io.zstd import _ZstdStream

                self._fill = _ZstdStream(self, READ_SIZE).readinto
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
            from fastpgn.io.zstd import _ZstdStream

            stream = _ZstdStream(self, READ_SIZE)
            while True:
                data = stream.read(4 * READ_SIZE)
                if not data:
                    return
                yield data
        elif self.kind == "bz2" and self.path is not None and self._threads > 1 and _parallel_bzip2() is not None:
            yield from self._indexed_bzip2()
        else:
            yield from self._frames()

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


def open_source(source, threads: int = 1, encoding: str | None = None) -> Source:
    """Open ``source`` for reading: a path (str or ``os.PathLike``), ``-`` (stdin), bytes, a binary
    or text file object, or an iterable of lines (str or bytes).

    ``encoding`` names the encoding of the input's bytes (``"cp1252"``,
    ``"latin-1"``): they are transcoded to UTF-8 as they are read, and byte
    offsets count the UTF-8. None (the default) reads UTF-8 as it is. Text
    (a text file, ``io.StringIO``, str lines) is decoded already: it is
    encoded as UTF-8 as it is read, a piece at a time (byte offsets count
    those bytes); ``encoding`` is refused for it. A text file opened with
    strict errors (``open(path)``) is switched to ``errors="surrogateescape"``
    before it is read (and back at ``close`` once it was read to its end), so a
    byte that is not in its encoding reaches the reader as that byte, as it
    would from the file's path. An
    item of an iterable is one line, and one that does not end in ``\\n``
    gets one (``text.splitlines()`` reads as the text does). A file object
    or iterable given is never closed; a file opened here is closed by
    ``Source.close``. An error raised by an iterable or by a file object's
    ``read`` comes after every byte before it, as an InputError naming the
    source and the byte offset (or as itself, for what is not an OSError or
    ValueError). Raises InputError for a missing file, a folder, or an
    unreadable one; TypeError for what is none of these.

    >>> open_source(b"[Event \\"x\\"]\\n\\n*\\n").kind
    'pgn'
    >>> import io
    >>> b"".join(open_source(io.StringIO('[Event "\\u00e9"]\\n\\n*\\n')).chunks())
    b'[Event "\\xc3\\xa9"]\\n\\n*\\n'
    >>> b"".join(open_source(['[Event "x"]', "", b"*\\n"]).chunks())
    b'[Event "x"]\\n\\n*\\n'
    """
    codec = _codec_name(encoding)

    # Helpers for text and lines, kept inside open_source, the one function of this module they serve.
    def utf8(text: str) -> bytes:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate no decoder made
            return text.encode("utf-8", "surrogatepass")

    def failed(exc: Exception, name: str, offset: int) -> Exception:
        """What an error of the caller's iterable or file becomes, raised after the bytes before it."""
        cls = InputDamageError if offset else InputError
        if isinstance(exc, OSError):
            error = cls(f"cannot read {name}: {exc.strerror or exc}", offset)
        elif isinstance(exc, ValueError) and not isinstance(exc, InputError):   # UnicodeDecodeError too
            error = cls(f"cannot read {name}: {exc}", offset)
        else:
            return exc
        error.__cause__ = exc
        return error

    def pieces_of_reader(read, name: str, ended: list | None = None) -> Iterator[bytes]:
        offset = 0
        while True:
            try:
                piece = read(READ_SIZE)
            except Exception as exc:  # noqa: BLE001 - raised as the input's error, at its offset
                raise failed(exc, name, offset) from exc.__cause__
            if not piece:
                if ended is not None:
                    ended.append(True)
                return
            if isinstance(piece, str):
                if codec is not None:
                    text_only()
                data = utf8(piece)
            else:
                data = bytes(piece)
            offset += len(data)
            yield data

    def pieces_of_lines(lines, name: str) -> Iterator[bytes]:
        batch, size, offset = [], 0, 0
        error = None
        while True:
            try:
                line = next(lines, None)
            except Exception as exc:  # noqa: BLE001 - the lines before it are handed out first
                error = exc
                break
            if line is None:
                break
            if isinstance(line, str):
                line = utf8(line)
            elif isinstance(line, (bytes, bytearray, memoryview)):
                line = bytes(line)
            else:
                error = TypeError(f"cannot read PGN from an iterable holding {type(line).__name__}: "
                                  f"give lines as str or bytes")
                break
            if not line.endswith(b"\n"):
                line += b"\n"
            batch.append(line)
            size += len(line)
            if size >= READ_SIZE:   # lines a MiB at a time: a few Python calls per MiB, not per line
                yield b"".join(batch)
                offset += size
                batch, size = [], 0
        if batch:
            yield b"".join(batch)
            offset += size
        if error is not None:
            raise failed(error, name, offset)

    def text_only():
        if codec is not None:
            raise ValueError(f"encoding={encoding!r} names the encoding of bytes: this input is text, decoded "
                             f"already (open a file in binary mode, 'rb', to name its encoding)")

    if isinstance(source, (bytes, bytearray, memoryview)):
        opened = Source(io.BytesIO(bytes(source)), "<bytes>", len(source), None, True, threads, codec)
        if type(source) is bytes:   # immutable: its blocks may be views of it
            opened.in_memory = source
        return opened
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if text == "-":
            stdin = getattr(sys.stdin, "buffer", None)   # a program may have put a StringIO there
            if stdin is None:
                text_only()
            raw = stdin if stdin is not None else _Pieces(pieces_of_reader(sys.stdin.read, "<stdin>"))
            return Source(raw, "<stdin>", None, None, False, threads, codec)
        if is_parquet_input(text):
            from fastpgn.io import lichess_parquet   # lichess's Parquet release: its rows as PGN text

            return lichess_parquet.open_parquet(text, threads)
        # The file pathlib names: on POSIX that is the name itself unless it is empty or ends in
        # "/" or "/." (importing pathlib takes longer than the rest of a reader's start-up).
        if os.name == "posix" and text and not text.endswith(("/", "/.")):
            path = text
        else:
            from pathlib import Path

            path = os.fspath(Path(text))
        if os.path.isdir(path):     # (False for a name too long: PGN text given as a str, most likely)
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
        try:
            info = os.fstat(raw.fileno())
            if stat.S_ISREG(info.st_mode):
                return Source(raw, text, info.st_size, text, True, threads, codec)
            # A pipe or device (``<(zstdcat dump.pgn.zst)``): no size, and no path to open twice.
            return Source(raw, text, None, None, True, threads, codec)
        except BaseException:
            raw.close()
            raise
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        if isinstance(source, (io.RawIOBase, io.BufferedIOBase)):
            return Source(source, name, None, None, False, threads, codec)
        # A text file, or a reader that may be one (io.TextIOBase is not the only kind: codecs.open's
        # readers, a text-mode SpooledTemporaryFile): what a read returns says.
        restore = None
        ended: list = []
        if isinstance(source, io.TextIOBase):
            text_only()
        if isinstance(source, io.TextIOWrapper) and source.errors == "strict":
            # Before any read: a strict decoder that fails has consumed the bytes around the bad one.
            source.reconfigure(errors="surrogateescape")

            def restore(source=source):
                # Python sets errors only where no decoded text waits to be read: at the end, once a
                # read() has said so. A file read only in part keeps surrogateescape.
                if ended and not source.closed:
                    try:
                        source.read()
                        source.reconfigure(errors="strict")
                    except (OSError, ValueError):
                        pass
        try:
            opened = Source(_Pieces(pieces_of_reader(source.read, name, ended)), name, None, None, False, threads,
                            None)
        except BaseException:
            if restore is not None:
                restore()
            raise
        if codec is not None:
            # (a binary file object that returns bytes from read, but is no io class)
            opened.encoding = codec
        opened._restore = restore
        return opened
    try:
        lines = iter(source)
    except TypeError:
        raise TypeError(f"cannot read PGN from {type(source).__name__}: give a path, bytes, a file "
                        f"or an iterable of lines") from None
    return Source(_Pieces(pieces_of_lines(lines, "<lines>")), "<lines>", None, None, False, threads, codec)


def is_parquet_input(path: str | os.PathLike) -> bool:
    """True for a path of lichess's Parquet release: a ``.parquet`` file, or a folder holding ``.parquet`` files
    (``fastpgn.io.lichess_parquet`` reads it).

    Told here, where inputs are told apart, so that opening a ``.pgn`` file
    does not import the Parquet reader.

    >>> is_parquet_input("games.pgn.zst"), is_parquet_input("no/such/games.parquet")
    (False, True)
    """
    text = os.fspath(path)
    if text.lower().endswith(".parquet"):
        return True
    if not os.path.isdir(text):
        return False
    from fastpgn.io import lichess_parquet

    try:
        return bool(lichess_parquet.parquet_files(text))
    except OSError:
        return False


def check_pgn(head: bytes, name: str) -> None:
    """Raise InputError unless the first decompressed bytes can start PGN (text, not binary).

    ``head`` is the input's first ``HEAD_SIZE`` bytes (all of them when it
    is shorter: ``Source.head``), so the decision does not depend on how
    the input is read. PGN starts with a tag, a comment, an escape line, a
    move number or result, or (a game without tags) a SAN move. Text that
    starts with a word is PGN still when a tag line or a move number starts
    a line of its first bytes (a title line above the games becomes one
    rejected game, the games are read); otherwise (a note, a CSV, tags
    without brackets) it is refused here, where it would be one rejected
    "game" of the whole file. Bytes with a whole tag pair line or a line
    starting with ``1.`` and a move are PGN whatever else they hold (a stray
    byte rejects the game holding it, not the input); else a NUL byte makes
    them binary data.

    >>> check_pgn(b"e4 e5 *", "a.pgn"), check_pgn(b"A title\\n[Event", "a.pgn")
    (None, None)
    >>> check_pgn(b'[Event "x"]\\n[Site "\\0"]\\n\\n1. e4 *', "a.pgn")
    >>> check_pgn(b"hello world", "notes.pgn")
    Traceback (most recent call last):
      ...
    fastpgn.errors.InputError: notes.pgn is not PGN: it starts with b'hello world' (PGN byte 0)
    """
    head = head[:HEAD_SIZE]
    if _whole_pgn_line_in(head):
        return
    nul = head.find(b"\0")
    if nul >= 0:
        raise InputError(f"{name} is not PGN: binary data", nul)
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    text = text.lstrip(_LEADING)    # (a stray control byte first is its game's to reject)
    if not text or text[:1] in b"[{;%(*$!?)@0123456789" or _san_start(text[:3]):
        return
    if text[:1].isalpha() and _pgn_line_in(text):
        return
    raise InputError(f"{name} is not PGN: it starts with {text[:16]!r}", head.find(text[:1]))


_LEADING = bytes(range(1, 33))     # what may come before PGN's first token: white space, control bytes


def _whole_pgn_line_in(text: bytes) -> bool:
    """Whether a line of ``text`` is a whole tag pair (``[Event "x"]``) or starts with ``1.`` and a move.

    Text of that shape does not happen by chance in binary data (an image,
    an archive, compressed bytes, UTF-16 text), where a NUL does; it is in
    the first bytes of any PGN file with tags or move numbers.
    """
    import re

    return re.search(rb'(?m)^[ \t]*(?:\[[A-Za-z0-9_]+[ \t]+"[^"\r\n\0]*"[ \t]*\][ \t]*\r?$|1\.[ \t]*[a-hKQRBNO])',
                     text) is not None


def not_utf8(data, offset: int = 0) -> tuple[int, int] | None:
    """None when ``data`` (whole games at decompressed ``offset``) is UTF-8; else how many of its games hold
    bytes that are not, and the offset of the first such byte.

    The kernels read such a byte as U+FFFD; the readers and commands count
    and say so (docs/encoding.md). A game is told by the blank line and
    ``[`` that start the next one, as the blocks are cut.

    >>> not_utf8(b'[A "\\xc3\\xa9"]\\n\\n*\\n'), not_utf8(b'[A "\\xe9"]\\n\\n*\\n\\n[A "\\xe9"]\\n\\n*\\n', 100)
    (None, (2, 104))
    """
    try:
        str(data, "utf-8")      # (several GB/s: a small part of reading a game)
        return None
    except UnicodeDecodeError as exc:
        at = exc.start
    text = bytes(data)
    view = memoryview(text)
    first = offset + at
    games = 0
    while True:
        games += 1
        start = find_cut(text, at + 1)      # the next game
        if start < 0:
            return games, first
        try:
            str(view[start:], "utf-8")
            return games, first
        except UnicodeDecodeError as exc:
            at = start + exc.start


def _san_start(three: bytes) -> bool:
    """Whether a game without tags could start with these bytes: a SAN move (or fewer than three bytes)."""
    if len(three) < 3:
        return True
    first, second = three[:1], three[1:2]
    if first in b"abcdefgh":                # e4, exd5, ed5
        return second in b"12345678x:" or (second in b"abcdefgh" and three[2:] in b"12345678")
    if first in b"KQRBNP":                  # Nf3, Nbd2, Qxe5, N:e5, N-f3, N@f3 (a drop)
        return second in b"abcdefgh12345678x:-@"
    return three[:2] in (b"O-", b"--", b"Z0")  # castling, null moves


def _pgn_line_in(text: bytes) -> bool:
    """Whether a line of ``text`` starts with a tag (``[`` and a letter) or a move number (``1.``)."""
    at = text.find(b"\n")
    while 0 <= at < len(text) - 2:
        line = text[at + 1:at + 3]
        if (line[:1] == b"[" and line[1:].isalpha()) or (line[:1].isdigit() and line[1:] in b"0123456789."):
            return True
        at = text.find(b"\n", at + 1)
    return False
