"""One zstd input read as many independent parts: the games whose first byte lies in a range of its frames.

A task of a cluster (fastpgn's Spark data source, ``fastpgn.spark``) reads
``FrameRange(path, a, b)``: the games from the first game boundary at or
after D(a) to the first at or after D(b), where D(k) is the decompressed
offset of frame k's first byte (the last range reads to the input's end,
with the end-of-input damage rules). A game boundary is the splitting
rule's (docs/differences.md: a line starting with ``[`` after a blank line
and any escape lines), found in the text as the serial reader reads it, so
the ranges ``[0, a1), [a1, a2), ... [ak, n)`` give, one after the other,
the serial read's games with its exact byte offsets.

D(k) comes from the frames' stated content sizes, or, for pzstd's frames
(no content size), from pzstd's fixed step: pzstd cuts its input into
frames of ``1 << (windowLog + 2)`` bytes each (32 MiB at ``-19``; less when
the input's size is known and small against its threads), every frame but
the last one holding a whole step. So D(k) = k × step, step being the
decoded size of a frame that is not the last; every frame a range decodes
is checked against it (InputError naming the file and frame where one
differs). Other files are one range (``frame_ranges``).

Whether a boundary at or after D(a) is one depends on the bytes before it
(the blank line, escape lines): the range decodes frame a - 1 too, and as
many frames before it as the test reaches back (frames of a few bytes), and
on as many after as a game longer than a frame needs.
"""

from __future__ import annotations

import os

from fastpgn.errors import InputError
from fastpgn.io.blocks import BLOCK_SIZE, Block, _settle, cut_blocks, find_cut
from fastpgn.io.source import HEAD_SIZE, Source, detect

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from fastpgn.io.frames import FrameTable

class UnevenFrames(InputError):
    """A file behind pzstd's headers whose frames do not all hold pzstd's step of PGN (another writer's): it
    reads whole, but not in frame ranges (``fastpgn.spark.convert`` then converts it in one task)."""


#: A range of about this much PGN by default: a few hundred MB, a task of a few seconds on one core.
RANGE_SIZE = 256 << 20


class FrameRange:
    """Frames ``[first, stop)`` of the zstd file at ``path`` (``stop`` None: to its end): a source every reader
    reads (``read_arrow(FrameRange(...))``), its games those whose first byte lies in those frames.

    >>> import fastpgn, tempfile, zstandard
    >>> text = b'[Event "a"]\\n\\n1. e4 *\\n\\n[Event "b"]\\n\\n1. d4 *\\n'
    >>> with tempfile.NamedTemporaryFile(suffix=".zst") as f:
    ...     _ = f.write(zstandard.compress(text[:30]) + zstandard.compress(text[30:]))
    ...     f.flush()
    ...     [(g.headers["Event"], g.offset) for r in (FrameRange(f.name, 0, 1), FrameRange(f.name, 1))
    ...      for g in fastpgn.read_games(r)]
    [('a', 0), ('b', 22)]
    """

    __slots__ = ("path", "first", "stop")

    def __init__(self, path: str | os.PathLike[str], first: int = 0, stop: int | None = None) -> None:
        self.path = os.fspath(path)
        self.first = first
        self.stop = stop

    @property
    def whole(self) -> bool:
        """The range is the whole input (read as any file is)."""
        return self.first == 0 and self.stop is None

    def __repr__(self) -> str:
        return f"FrameRange({self.path!r}, {self.first}, {self.stop})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameRange) and (self.path, self.first, self.stop) == (other.path, other.first,
                                                                                       other.stop)

    def __hash__(self) -> int:
        return hash((self.path, self.first, self.stop))

    def __reduce__(self):
        return (FrameRange, (self.path, self.first, self.stop))


def splittable(table: FrameTable | None) -> bool:
    """Whether a zstd file of frame table ``table`` can be read in frame ranges: several frames, each
    stating its size or all cut by pzstd at its fixed step."""
    return (table is not None and len(table) > 1
            and (table.pzstd or all(size is not None for size in table.content_sizes)))


def frame_ranges(path: str | os.PathLike[str], size: int = RANGE_SIZE) -> list[FrameRange]:
    """``path`` cut into frame ranges of about ``size`` bytes of PGN each; one range (the whole input) for an
    input that is not a zstd file of several frames stating their sizes or cut by pzstd.

    A pzstd file's step is learnt by decoding its first frame (here, once).

    >>> import tempfile, zstandard
    >>> games = b'[Event "a"]\\n\\n1. e4 *\\n\\n' * 4
    >>> with tempfile.NamedTemporaryFile(suffix=".zst") as f:
    ...     _ = f.write(b"".join(zstandard.compress(games[i:i + 20]) for i in range(0, len(games), 20)))
    ...     f.flush()
    ...     [(r.first, r.stop) for r in frame_ranges(f.name, 40)]
    [(0, 2), (2, 4), (4, None)]
    """
    from fastpgn.io import frames as _frames

    if size < 1:
        raise ValueError(f"a frame range's size must be at least 1 byte, not {size!r}")
    path = os.fspath(path)
    whole = [FrameRange(path)]
    try:
        with open(path, "rb") as f:
            if detect(f.read(4)) != "zst":
                return whole
        table = _frames.frame_table(path)
    except OSError:
        return whole        # (the reader names what fails)
    if not splittable(table):
        return whole
    n = len(table)
    if table.pzstd:
        start, end = table.frames[0]
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        try:
            step = _frames.decode_frame(data)[1]
        except Exception:       # noqa: BLE001 - a damaged first frame: the reader names it
            return whole
        if not step:
            return whole
        sizes = [step] * n
    else:
        sizes = [s or 0 for s in table.content_sizes]
    firsts = [0]
    held = 0
    for k in range(n - 1):
        held += sizes[k]
        if held >= size:
            firsts.append(k + 1)
            held = 0
    if len(firsts) == 1:
        return whole
    stops: list[int | None] = [*firsts[1:], None]
    return [FrameRange(path, a, b) for a, b in zip(firsts, stops)]


def open_range(frame_range: FrameRange, threads: int = 1, encoding: str | None = None) -> Source:
    """The ``RangeSource`` of ``frame_range``, a range short of the whole input (``open_source`` hands such a
    FrameRange here, and reads a whole one as its path). It reads the text as it is (no ``encoding``: the
    offsets of transcoded text depend on all the text before them)."""
    if encoding is not None:    # (a codec name: UTF-8 is None)
        raise ValueError(f"a frame range of {frame_range.path} reads UTF-8 text as it is: read the whole file "
                         f"to transcode it from {encoding!r}")
    path = frame_range.path
    try:
        raw = open(path, "rb")
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError(f"{path}: no such file") from None
        raise InputError(f"{path}: cannot open ({exc.strerror or exc})") from None
    try:
        return RangeSource(raw, path, frame_range.first, frame_range.stop)
    except BaseException:
        raw.close()
        raise


class RangeSource(Source):
    """The decompressed text of a zstd file from the first game boundary at or after D(``first``) to the first
    at or after D(``stop``) (``stop`` None: to the input's end, its damage named as a serial read names it).

    Its blocks (``blocks``) are cut as a serial read cuts (at the same absolute multiples of the block
    size) and carry their absolute offsets; the input's first bytes are checked as PGN (``check_pgn``) by
    the range that holds them, the first (``head`` is empty for the others).
    """

    def __init__(self, raw, path: str, first: int, stop: int | None) -> None:
        from fastpgn.io import frames as _frames

        size = os.fstat(raw.fileno()).st_size
        super().__init__(raw, path, size, path, True)
        table = _frames.frame_table(path)
        if not splittable(table):
            raise InputError(f"{path} cannot be read in frame ranges: it is not a zstd file of several frames "
                             f"that state their sizes or that pzstd cut (read it whole)")
        n = len(table)
        if not 0 <= first < n or (stop is not None and not first < stop <= n):
            raise ValueError(f"frames [{first}, {stop}) are not a range of the {n} frames of {path}")
        self.table = table
        self.first = first
        self.stop = None if stop == n else stop
        self._n = n
        self._fd = raw.fileno()
        self._step: int | None = None          # pzstd's: the decoded size of every frame but the last
        self._starts: list[int] | None = None  # else D(k), from the stated sizes
        if not table.pzstd:
            starts = [0]
            for s in table.content_sizes:
                starts.append(starts[-1] + (s or 0))
            self._starts = starts
        self._cache: dict[int, bytes] = {}
        self._bad: int | None = None           # the first frame found that does not decode
        self.kind = "zst"
        self._start: int | None = 0 if first == 0 else -1   # (found on first use: _begin)

    # -- the frames -------------------------------------------------------------------------------------

    def _at(self, k: int) -> int:
        """D(k): the decompressed offset of frame ``k``'s first byte."""
        if self._starts is not None:
            return self._starts[k]
        assert self._step is not None
        return k * self._step

    def _good(self) -> int:
        """The frames known to decode: those before the first that failed (so far), or all."""
        return self._n if self._bad is None else self._bad

    def _frame(self, k: int) -> bytes | None:
        """Frame ``k`` decoded (None: it does not decode; the damage is named when the stream reaches it)."""
        data = self._cache.get(k)
        if data is not None:
            return data
        if k >= self._good():
            return None
        import zstandard

        from fastpgn.io import frames as _frames

        start, end = self.table.frames[k]
        raw = os.pread(self._fd, end - start, start)
        try:
            if len(raw) == end - start:
                buffer, n = _frames.decode_frame(raw)
                data = bytes(memoryview(buffer)[:n])
            else:
                data = None
        except zstandard.ZstdError:
            data = None
        if data is None:
            self._bad = k
            return None
        if self.table.pzstd:
            self._check_step(k, len(data))
        self._cache[k] = data
        return data

    def _check_step(self, k: int, size: int) -> None:
        last = k == self._n - 1
        if self._step is None and not last:
            if not size:
                raise UnevenFrames(f"{self.name}: zstd frame {k} is empty, which pzstd never writes: read the "
                                   f"file whole", 0)
            self._step = size
            return
        step = self._step
        if step is not None and (size > step if last else size != step):
            raise UnevenFrames(f"{self.name}: zstd frame {k} holds {size} bytes of PGN where pzstd's frames hold "
                               f"{step} ({'at most, the last' if last else 'every one but the last'}), so it "
                               f"cannot be read in frame ranges: read it whole", k * step)

    def _forget(self, below: int) -> None:
        for k in [k for k in self._cache if k < below]:
            del self._cache[k]

    # -- the boundaries ---------------------------------------------------------------------------------

    def _boundary(self, t: int) -> int | None:
        """The first game boundary at or after D(``t``) (``t`` > 0), as an absolute offset; None when there is
        none before the end of the frames that decode (the range before then reads to the input's end)."""
        back, ahead = t - 1, t + 1      # the frames [back, ahead) in hand
        while True:
            if self._frame(back) is None:
                return None             # (damage before the boundary: the range before names it)
            base = self._at(back)
            target = self._at(t) - base
            if back > 0 and target < 8:
                back -= 1               # (frames of a few bytes: more of the text before the target first)
                continue
            pieces = []
            final = False
            for k in range(back, ahead):
                data = self._frame(k)
                if data is None:
                    final = True
                    break
                pieces.append(data)
            final = final or ahead >= self._n
            buf = bytearray(b"".join(pieces))
            settled = _settle(buf, 0, len(buf), final)
            if back == 0:
                earliest = latest = find_cut(buf, target, settled)
            else:
                # What comes before the window is unknown: a boundary test that reaches back past the window's
                # first bytes reads "a boundary" on the one prefix and "none" on the other; where they agree,
                # the text before does not matter. (The first 3 bytes are left out: a BOM there is a line's
                # first bytes or not by the byte before them, so they may be settled wrong.)
                earliest = _cut_behind(b"\n\n%", buf, target, settled)
                latest = _cut_behind(b"x", buf, target, settled)
            if latest < 0 and not final:
                ahead += 1
            elif earliest == latest:
                return None if latest < 0 else base + latest
            else:
                back -= 1

    def _begin(self) -> int | None:
        """Where the range's text starts (None: it holds no game's first byte)."""
        if self._start == -1:
            self._start = 0 if self.first == 0 else self._boundary(self.first)
        return self._start

    # -- the stream -------------------------------------------------------------------------------------

    def _frame_of(self, offset: int) -> int:
        import bisect

        if self._starts is not None:
            return bisect.bisect_right(self._starts, offset, 0, self._n) - 1
        assert self._step is not None
        return min(offset // self._step, self._n - 1)

    def _stream(self) -> Iterator[bytes]:
        """The range's text, from its start to its end boundary (or the input's end, and its damage)."""
        pos = self._begin()
        if pos is None:
            return
        if self.first == 0:
            self._frame(0)          # (pzstd's step, before any offset is asked for)
        end: int | None = None      # the end boundary, once found (None: the input's end)
        stop = self.stop
        known = stop is None
        k = self._frame_of(pos) if pos else 0
        self._forget(k)
        self.offset = pos
        while k < self._n:
            if stop is not None and not known and k >= stop - 1:
                end, known = self._boundary(stop), True
                if end is not None and end <= pos:
                    return
            data = self._frame(k)
            if data is None:
                break
            at = self._at(k)
            hi = len(data) if end is None else min(len(data), end - at)
            if hi > pos - at:
                yield data[pos - at:hi]
            self.offset = pos = at + hi
            self.raw_read = self.table.frames[k][1]
            self._forget(k + 1)
            if end is not None and pos >= end:
                return
            k += 1
        if self._bad is not None and self._bad <= k:
            yield from self._damaged_frame(self.table.frames[self._bad])
        elif not self.table.complete:
            yield from self._damaged_frame((self.table.end, self.table.size))

    # -- what the readers call --------------------------------------------------------------------------

    def readinto(self, view) -> int:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            raise pending
        if self._fill is None:
            from fastpgn.io.blocks import _ChunkFiller

            self._fill = _ChunkFiller(self._stream()).readinto
        return self._fill(view)

    def chunks(self) -> Iterator[bytes]:
        return self._stream()

    def head(self, size: int = HEAD_SIZE) -> bytes:
        """The input's first bytes for the range that starts with them (``check_pgn``); b"" for the others."""
        return b"" if self.first else super().head(size)

    def blocks(self, block_size: int = BLOCK_SIZE, pool: list | None = None, head: bytes = b"") -> Iterator[Block]:
        start = self._begin()
        return cut_blocks(self.readinto, block_size, start=start or 0, head=head, pool=pool,
                          moves_seen=None if self.first == 0 else True, whole_games=self.stop is not None)


def _cut_behind(prefix: bytes, buf, lo: int, hi: int) -> int:
    """``find_cut(buf, lo, hi)`` with ``buf``'s first 3 bytes replaced by ``prefix`` (the same indices)."""
    shift = len(prefix) - 3
    q = find_cut(prefix + bytes(buf[3:hi]), lo + shift, hi + shift)
    return q - shift if q >= 0 else -1
