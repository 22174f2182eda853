"""zstd inputs of many frames (lichess's dumps): their frame table read without decoding, and their frames
decoded on several threads, handed out in order.

lichess compresses every dump with ``pzstd -p10 -19``: independent zstd
frames, each holding 32 MiB of PGN cut at a fixed byte step (mid-game),
each behind a 12-byte skippable frame (magic ``0x184D2A50``, size 4, the
next frame's compressed size as a little-endian u32). ``frame_table`` reads
those headers (or, for other multi-frame files, the frame and block headers:
RFC 8878, section 3.1) with a seek each, and ``FrameDecoder`` decodes the
frames on worker threads (python-zstandard releases the GIL as it decodes)
and hands their bytes out in input order, at most a few frames in flight.

The stream that comes out is byte for byte what the single-thread decoder
(``fastpgn.io.zstd``) makes, and so are its errors: the first frame that
fails to decode, or that the file cuts short, or any bytes that are not a
frame, are decoded block by block as the single-thread decoder decodes
them, which names the damage at the same decompressed offset. Everything
after the decoder (cutting blocks at game boundaries, the scan) is the
serial path's, so the games, offsets and output are those of a serial read
whatever the frame boundaries.
"""

from __future__ import annotations

import os

from fastpgn.io.zstd import _CONTENT_SIZE_SIZE, _DICT_ID_SIZE, _ZSTD_FRAME, _ZSTD_SKIPPABLE

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from collections.abc import Iterator

#: The pzstd habit: a skippable frame of 4 bytes before each frame, its payload the frame's compressed size.
PZSTD_HEADER = 12


class FrameTable:
    """Where each zstd frame of a file lies: ``frames`` holds ``(start, end)`` byte ranges of the file, in
    order (skippable frames left out).

    ``end`` is where the walk stopped: the file's size when every byte is a
    whole frame (``complete``), else the first byte of what is not (a frame
    the file cuts short, bytes that are not a frame): the decoder's to name.
    ``pzstd``: every frame stood behind pzstd's 12-byte header, so the
    frames were cut from the text at a fixed step. ``content_sizes``: each
    frame's decompressed size as its header states it (None where it does
    not; pzstd's frames do not).
    """

    __slots__ = ("frames", "end", "size", "pzstd", "content_sizes")

    def __init__(self, frames: list[tuple[int, int]], end: int, size: int, pzstd: bool,
                 content_sizes: list[int | None]) -> None:
        self.frames = frames
        self.end = end
        self.size = size
        self.pzstd = pzstd
        self.content_sizes = content_sizes

    @property
    def complete(self) -> bool:
        return self.end == self.size

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        return (f"FrameTable({len(self.frames)} frames, end={self.end}, size={self.size}, "
                f"pzstd={self.pzstd})")


def frame_table(path: str | os.PathLike[str]) -> FrameTable:
    """The frame table of the zstd file at ``path``, from its headers alone (nothing is decoded).

    >>> import zstandard, tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".zst") as f:
    ...     _ = f.write(zstandard.compress(b"[Event \\"a\\"]\\n\\n*\\n") + zstandard.compress(b"\\n"))
    ...     f.flush()
    ...     table = frame_table(f.name)
    >>> len(table), table.complete, table.pzstd
    (2, True, False)
    """
    with open(path, "rb", buffering=0) as f:
        return _walk(f.fileno(), os.fstat(f.fileno()).st_size)


def _walk(fd: int, size: int) -> FrameTable:
    frames: list[tuple[int, int]] = []
    sizes: list[int | None] = []
    pzstd = True
    pos = 0
    hint = None             # the next frame's compressed size, as a pzstd header gave it
    while pos < size:
        head = os.pread(fd, 4, pos)
        if len(head) < 4:
            break
        magic = int.from_bytes(head, "little")
        if magic & ~0xF == _ZSTD_SKIPPABLE:
            head = os.pread(fd, 8, pos + 4)
            if len(head) < 4:
                break
            length = int.from_bytes(head[:4], "little")
            if pos + 8 + length > size:
                break
            hint = int.from_bytes(head[4:8], "little") if length == 4 and len(head) == 8 else None
            pos += 8 + length
            continue
        if magic != _ZSTD_FRAME:
            break
        end, content = _frame_end(fd, pos, size, hint)
        if end < 0:
            break
        pzstd = pzstd and hint is not None
        frames.append((pos, end))
        sizes.append(content)
        pos, hint = end, None
    return FrameTable(frames, pos, size, pzstd and bool(frames), sizes)


def _frame_end(fd: int, pos: int, size: int, hint: int | None) -> tuple[int, int | None]:
    """Where the frame starting at ``pos`` ends (-1: past the file's end) and its stated content size.

    A pzstd header's size is taken at its word when a frame's magic (or the
    file's end) follows it; else the frame's blocks are walked.
    """
    head = os.pread(fd, 14, pos)        # magic, descriptor, and at most 9 more header bytes
    if len(head) < 6:
        return -1, None
    d = head[4]
    single_segment = (d >> 5) & 1
    checksum = 4 if d & 4 else 0
    dict_size = _DICT_ID_SIZE[d & 3]
    fcs_size = _CONTENT_SIZE_SIZE[d >> 6] or single_segment
    header = 5 + (1 - single_segment) + dict_size + fcs_size
    content = None
    if fcs_size:
        at = 5 + (1 - single_segment) + dict_size
        if len(head) < at + fcs_size:
            return -1, None
        content = int.from_bytes(head[at:at + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    if hint is not None:
        end = pos + hint
        if end == size or (end < size and _is_magic(os.pread(fd, 4, end))):
            return end, content
    at = pos + header
    while True:
        block = os.pread(fd, 3, at)
        if len(block) < 3:
            return -1, None
        h = int.from_bytes(block, "little")
        at += 3 + (1 if (h >> 1) & 3 == 1 else h >> 3)      # an RLE block holds one byte
        if h & 1:
            end = at + checksum
            return (end, content) if end <= size else (-1, None)
        if at > size:
            return -1, None


def _is_magic(head: bytes) -> bool:
    if len(head) < 4:
        return False
    magic = int.from_bytes(head, "little")
    return magic == _ZSTD_FRAME or magic & ~0xF == _ZSTD_SKIPPABLE


def decode_frame(data: bytes, buffer: bytearray | None = None) -> tuple[bytearray, int]:
    """One whole zstd frame decoded into ``buffer`` (a new one if None, or if it is too small): the buffer
    and the count of its bytes the frame filled (``zstandard.ZstdError`` if it is damaged).

    Decoding into a buffer used again costs a third less CPU than a new
    bytes object a frame (whose pages the system must map and clear each
    time), and python-zstandard decodes it without the GIL.

    >>> import zstandard
    >>> buf, n = decode_frame(zstandard.compress(b"1. e4 *\\n"))
    >>> bytes(buf[:n])
    b'1. e4 *\\n'
    """
    import zstandard

    if buffer is None:
        buffer = bytearray(max(1 << 20, 8 * len(data)))
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=False)
    n = 0
    while True:
        if n == len(buffer):
            bigger = bytearray(2 * len(buffer))     # (a frame bigger than the buffer: its bytes move once)
            bigger[:n] = buffer
            buffer = bigger
        with memoryview(buffer) as view:
            got = reader.readinto(view[n:])
        if not got:
            return buffer, n
        n += got


class FrameDecoder:
    """The decompressed bytes of a :class:`FrameTable`'s frames, in order, decoded on ``threads`` threads.

    Iterating gives each frame's bytes as a read-only memoryview of a buffer
    that holds a later frame once the next one is asked for (copy what is
    kept); ``handed`` counts the
    frames handed out, ``raw_done`` the file bytes they came from. It stops
    before the first frame that fails to decode, and then ``failed`` holds
    that frame's index; ``damaged`` is the span of the file the caller
    decodes block by block to name the damage (``fastpgn.io.zstd.decoded_blocks``).
    """

    def __init__(self, path: str, table: FrameTable, threads: int, first: int = 0) -> None:
        self._path = path
        self._table = self.table = table
        self._threads = max(1, threads)
        self._first = first         # the first frame to decode (a resumed run's)
        self.handed = first
        self.raw_done = table.frames[first][0] if first < len(table.frames) else table.end
        self.failed: int | None = None

    @property
    def resume_at(self) -> int:
        """Where the single-thread decoder goes on: the first frame not handed out, or the table's end."""
        frames = self._table.frames
        return frames[self.handed][0] if self.handed < len(frames) else self._table.end

    @property
    def damaged(self) -> tuple[int, int]:
        """The file's bytes the decoder could not hand out as a whole frame: the frame that failed, else
        what follows the table's last frame (a frame cut short, bytes that are no frame)."""
        if self.failed is not None:
            return self._table.frames[self.failed]
        return self._table.end, self._table.size

    def __iter__(self) -> Iterator[memoryview]:
        from concurrent.futures import ThreadPoolExecutor

        import zstandard

        from fastpgn.io.ordered import InOrder

        table = self._table
        fd = os.open(self._path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        pool = ThreadPoolExecutor(self._threads, thread_name_prefix="fastpgn-zstd")

        # Buffers the frames are decoded into, used again once the caller has taken their bytes (a frame
        # beyond one a thread in flight, and the one handed out: 32 MiB each, in lichess's dumps).
        spare: list[bytearray] = []

        def work(i: int) -> tuple[bytearray, int] | None:
            start, end = table.frames[i]
            data = os.pread(fd, end - start, start)
            if len(data) < end - start:
                return None         # (the file shrank: the single-thread decoder names it)
            try:
                buffer = spare.pop()
            except IndexError:      # (list.pop is atomic: the threads share the list)
                buffer = bytearray(max(1 << 20, table.content_sizes[i] or 0, 8 * len(data)))
            try:
                return decode_frame(data, buffer)
            except zstandard.ZstdError:
                spare.append(buffer)
                return None

        ordered = InOrder(iter(range(self._first, len(table.frames))), lambda i: (i, pool.submit(work, i)),
                          self._threads + 1)
        handed: bytearray | None = None
        try:
            for i, out in ordered:
                if handed is not None:
                    spare.append(handed)        # (the caller asked for more: it is done with the last frame)
                    handed = None
                if out is None:
                    self.failed = i
                    return
                self.handed = i + 1
                self.raw_done = table.frames[i][1]
                handed, n = out
                yield memoryview(handed)[:n].toreadonly()
        finally:
            ordered.cancel()
            pool.shutdown(wait=True)      # (the frames begun: decoded, and dropped)
            os.close(fd)


def split_note(name: str, table: FrameTable | None) -> str | None:
    """The summary's line for a zstd input that the decoder could not split (None when it could)."""
    if table is not None and len(table.frames) > 1:
        return None
    return (f"{name} is one zstd frame, so one thread decodes it: recompress it as lichess does "
            "(`zstd -dc FILE | pzstd -p 8 -19 -o NEW.pgn.zst`) to decode it on every core")
