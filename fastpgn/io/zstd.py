"""zstd input decoded on one thread, block by block: what comes before damage comes out, whatever the read
sizes, and a stream that stops early is told from a whole one.

python-zstandard's decoders report corrupt data, but not a stream that
simply stops (a cut download), and a stream reader that fails loses what it
decoded in the call that failed (as much as the caller's buffer holds).
``decoded_blocks`` follows the frame layout on the way and gives the decoder
one whole block at a time, so the bytes before a damaged block all come out,
and an end of input anywhere but between two frames is a ``FrameCut``: the
readers' ``InputError`` ("truncated zst data") at the decompressed offset
reached. The decoder on threads (``fastpgn.io.frames``) decodes a frame
that fails with it, so both hand out the same bytes before the same damage.
"""

from __future__ import annotations

from fastpgn.errors import InputDamageError

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from collections.abc import Iterator


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


_ZSTD_FRAME = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50    # ... to 0x184D2A5F
_DICT_ID_SIZE = (0, 1, 2, 4)
_CONTENT_SIZE_SIZE = (0, 2, 4, 8)


class FrameCut(Exception):
    """The input ends inside a frame (``decoded_blocks``)."""


def decoded_blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The decompressed bytes of the zstd stream that comes in ``chunks``, block by block, up to any damage.

    The frame layout is followed on the way (RFC 8878, section 3.1: a frame
    header, then each block behind its three-byte header, whose size says
    where the next one is, then the checksum if the frame has one;
    skippable frames are skipped), and each piece is given to the decoder
    whole, so a block's bytes come out before the next block is read: a
    damaged block (``zstandard.ZstdError``) or a cut one (``FrameCut``, the
    bytes of a cut raw block that the decoder hands out first) loses only
    itself, and what comes out before the damage depends on the stream
    alone, never on the chunks' sizes. (A damaged checksum is found after
    the frame's last block: all its bytes come out.) Bytes that are no frame
    go to the decoder, which names them. The stream may end only between
    frames.

    >>> import zstandard
    >>> data = zstandard.compress(b"1. e4 *\\n") + zstandard.compress(b"1. d4 *\\n")
    >>> b"".join(decoded_blocks(iter([data[:5], data[5:]])))
    b'1. e4 *\\n1. d4 *\\n'
    >>> list(decoded_blocks(iter([data[:-3]])))
    Traceback (most recent call last):
    ...
    fastpgn.io.zstd.FrameCut
    """
    import zstandard

    decompressor = zstandard.ZstdDecompressor()
    buf = bytearray()
    pos = 0                 # where the next piece starts in buf

    def have(n: int) -> bool:
        """Whether n bytes from pos are in buf (more chunks taken while not)."""
        nonlocal buf, pos
        while len(buf) - pos < n:
            chunk = next(chunks, None)
            if chunk is None:
                return False
            if pos:
                del buf[:pos]
                pos = 0
            buf += chunk
        return True

    def cut(decoder) -> Iterator[bytes]:
        """What the decoder makes of the bytes left (a piece cut short), then the cut."""
        out = decoder.decompress(bytes(buf[pos:]))
        if out:
            yield out
        raise FrameCut

    while have(1):
        if not have(4):
            raise FrameCut
        magic = int.from_bytes(buf[pos:pos + 4], "little")
        if magic & ~0xF == _ZSTD_SKIPPABLE:
            if not have(8) or not have(8 + int.from_bytes(buf[pos + 4:pos + 8], "little")):
                raise FrameCut
            pos += 8 + int.from_bytes(buf[pos + 4:pos + 8], "little")
            continue
        decoder = decompressor.decompressobj()
        if magic != _ZSTD_FRAME or not have(5):
            yield from cut(decoder)     # (not a frame: the decoder names it from its first bytes)
        d = buf[pos + 4]
        single_segment = (d >> 5) & 1
        header = 5 + (1 - single_segment) + _DICT_ID_SIZE[d & 3] + (_CONTENT_SIZE_SIZE[d >> 6] or single_segment)
        if not have(header):
            yield from cut(decoder)
        decoder.decompress(bytes(buf[pos:pos + header]))
        pos += header
        last = False
        while not last:
            if not have(3):
                yield from cut(decoder)
            h = int.from_bytes(buf[pos:pos + 3], "little")
            size = 3 + (1 if (h >> 1) & 3 == 1 else h >> 3)     # an RLE block holds one byte
            last = bool(h & 1)
            if not have(size):
                yield from cut(decoder)
            with memoryview(buf) as view:
                out = decoder.decompress(view[pos:pos + size])
            pos += size
            if out:
                yield out
        if d & 4:
            if not have(4):
                yield from cut(decoder)
            with memoryview(buf) as view:
                decoder.decompress(view[pos:pos + 4])
            pos += 4
