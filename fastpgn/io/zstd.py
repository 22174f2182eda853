"""zstd input: frames decoded straight into the caller's buffer, a stream that stops early told from a whole one.

python-zstandard's stream reader decodes any number of frames and reports
corrupt data, but not a stream that simply stops (a cut download).
``_ZstdFrames`` sits between the raw input and the decoder and follows the
frame layout on the way (headers only), so an end of input anywhere but
between two frames is an ``InputError`` ("truncated zst data") at the
decompressed offset reached.
"""

from __future__ import annotations

from fastpgn.errors import InputDamageError

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Protocol

    class Source(Protocol):
        """What the decoder reads of a ``fastpgn.io.source.Source`` (not imported: it imports this)."""

        name: str
        offset: int

        def _read_raw(self, n: int) -> bytes: ...


def corrupt(name: str, exc: Exception, offset: int) -> InputDamageError:
    """The damage python-zstandard reports, in the words of libzstd (its own prefix, which differs between
    its decoders, left out).

    >>> corrupt("a.zst", Exception("zstd decompress error: Data corruption detected"), 7)
    InputDamageError('corrupt zst data in a.zst: Data corruption detected (PGN byte 7)')
    """
    reason = str(exc)
    for prefix in ("zstd decompress error: ", "zstd decompressor error: "):
        reason = reason.removeprefix(prefix)
    return InputDamageError(f"corrupt zst data in {name}: {reason}", offset)


class _ZstdStream:
    """zstd frames decoded straight into the caller's buffer (``readinto``), or as bytes (``read``)."""

    def __init__(self, source: Source, read_size: int) -> None:
        import zstandard

        self._source = source
        self._frames = _ZstdFrames(source)
        # zstandard's stub asks for IO[bytes], but stream_reader takes "any object with a read(size)
        # method" (its docstring) and calls nothing else: _ZstdFrames is one.
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            self._frames, read_size=read_size, read_across_frames=True, closefd=False)  # type: ignore[arg-type]
        self._error = zstandard.ZstdError

    def _checked(self, n: int) -> int:
        source = self._source
        if n == 0 and not self._frames.complete:
            raise InputDamageError(f"truncated zst data in {source.name}", source.offset)
        source.offset += n
        return n

    def _decoded(self, call, arg):
        """``call(arg)`` on the stream reader, its errors as InputError at the offset reached."""
        try:
            return call(arg)
        except self._error as exc:
            raise corrupt(self._source.name, exc, self._source.offset) from None

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
