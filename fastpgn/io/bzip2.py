"""bzip2 input decoded in parallel (``indexed_bzip2``), with a check that no block was left out.

indexed_bzip2 decodes a file's blocks on several threads. Its block finder
passes over a block whose header is damaged where a block follows no other
(the first of the file, the first of a later stream) without a word:
``_Bzip2Chain`` checks that no such block went missing before the data after
it is handed out, so every ``-j`` gives the same games and the same damage.
Any failure here is the caller's cue to fall back to the stream decoder
(``Source._frames``), which names the exact offset of the damage.
"""

from __future__ import annotations

import os
from collections.abc import Generator

try:
    import indexed_bzip2 as _ibz2
except ImportError:  # pragma: no cover - optional speed-up
    _ibz2 = None

# 16 MiB a read: each check asks for the whole block index (about 0.1 us a block,
# 230,000 blocks in a 200 GB dump), so fewer, larger reads keep it a few percent.
_READ = 16 << 20


def parallel_decode(path: str, threads: int) -> Generator[tuple[bytes, int | None], None, None]:
    """The decompressed file at ``path``, decoded on ``threads`` threads and checked by ``_Bzip2Chain``.

    Yields each piece with the compressed bytes read so far (None where the
    installed indexed_bzip2 cannot say). Raises, whatever the exception,
    where the decoder fails or a block went missing.
    """
    reader = _ibz2.open(path, parallelization=threads)
    chain = _Bzip2Chain(path)
    decoded = 0
    try:
        while True:
            out = reader.read(_READ)
            if not out:
                chain.finish(reader.available_block_offsets(), decoded)
                return
            chain.check(reader.available_block_offsets(), decoded + len(out))
            decoded += len(out)
            try:
                compressed = reader.tell_compressed() // 8
            except Exception:  # pragma: no cover - older indexed_bzip2
                compressed = None
            yield out, compressed
    finally:
        reader.close()
        chain.close()


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
