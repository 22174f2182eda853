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

from fastpgn.errors import InputDamageError, InputError
from fastpgn.io.blocks import BLOCK_SIZE, Block, blocks, cut_blocks, cut_buffer, find_cut, has_moves, line_blocks
from fastpgn.io.source import HEAD_SIZE, READ_SIZE, Source, _codec_name, _Pieces, detect

# Each decoder (fastpgn.io.zstd, _bzip2, bz2, ISA-L), pathlib and typing are imported where
# they are needed: start-up is a good part of reading a file's headers (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["BLOCK_SIZE", "Block", "READ_SIZE", "Source", "blocks", "check_pgn", "cut_blocks", "cut_buffer", "detect",
           "find_cut", "has_moves", "HEAD_SIZE", "is_parquet_input", "line_blocks", "not_utf8", "open_source"]


def open_source(source, threads: int = 1, encoding: str | None = None, headers_only: bool = False) -> Source:
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
    unreadable one; TypeError for what is none of these. ``headers_only``:
    the reader needs no movetext, so lichess's Parquet release is read
    without its movetext column (each game's movetext is its result).

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
            from fastpgn.io import lichess_parquet  # lichess's Parquet release: its rows as PGN text

            return lichess_parquet.open_parquet(text, threads, movetext=not headers_only)
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
    from fastpgn.io import frame_ranges

    if isinstance(source, frame_ranges.FrameRange):
        if source.whole:        # (the whole input: read as its path is)
            return open_source(source.path, threads, encoding, headers_only)
        return frame_ranges.open_range(source, threads, codec)
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
    if _tag_pair_line(head.split(b"\n", 1)[0]) or _whole_pgn_line_in(head):
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


def _tag_pair_line(line: bytes) -> bool:
    """Whether ``line`` (no LF) is a whole tag pair line as _whole_pgn_line_in's pattern reads one, tested
    without ``re`` (a dump's first line: its readers then import no regular expressions).

    >>> [_tag_pair_line(x) for x in (b'[Event "x"]', b' [A_1 "" ] \\r', b'[Event "x"', b'[E "a"b"]', b'[E"x"]')]
    [True, True, False, False, False]
    """
    if line.endswith(b"\r"):
        line = line[:-1]
    line = line.strip(b" \t")
    if len(line) < 5 or line[:1] != b"[" or line[-1:] != b"]":
        return False
    name_end = 1
    while name_end < len(line) and (line[name_end:name_end + 1].isalnum() or line[name_end] == 0x5F):
        name_end += 1
    quote = name_end
    while quote < len(line) and line[quote] in b" \t":
        quote += 1
    if name_end == 1 or quote == name_end or line[quote:quote + 1] != b'"':
        return False
    close = line.find(b'"', quote + 1)
    if close < 0 or line[close + 1:-1].strip(b" \t"):
        return False
    value = line[quote + 1:close]
    return b"\r" not in value and b"\0" not in value


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
    from fastpgn import scan as _scan

    error = _scan.kernel.utf8_error     # (in C, no str made: ASCII runs eight bytes a step)
    at = error(data)
    if at < 0:
        return None
    text = bytes(data)
    first = offset + at
    games = 0
    while True:
        games += 1
        start = find_cut(text, at + 1)      # the next game
        if start < 0:
            return games, first
        at = error(text, start)
        if at < 0:
            return games, first


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
