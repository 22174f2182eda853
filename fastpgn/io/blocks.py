"""Game-aligned blocks: a decompressed stream cut where one game ends and the next begins.

A block always ends where a blank line is followed by a line starting with
``[`` (a game boundary for the scanner too), at the first such boundary at or
after the next multiple of ``block_size`` in absolute decompressed offset.
Cuts therefore depend only on the data, never on read sizes or on where
reading started, which is what lets ``--resume`` and any ``-j`` reproduce the
same output bytes.

Buffers: the stream is read straight into the buffers the blocks are views
of (``Source.readinto`` fills them in place for zstd and plain files), and a
released block's buffer holds a later one, so a run allocates a handful of
buffers whatever the input size. A stream already in memory (``bytes``) is
cut in place (``cut_buffer``): its blocks are views of it, the same blocks.

Damage: a stream that ends in an ``InputError``, or inside its last game
(inside its tags; or inside its movetext: its last line cut before a
result, or a comment or variation not closed) yields every whole game
before it, then the cut-short game as a block marked ``truncated``, the
error on it (``Block.damage``).

Dialects: the scanner reads LF text (CRLF too). The cutter rewrites, in
place and byte for byte (offsets stay the input's), the two line-start
habits other PGN readers accept: a CR not followed by LF (old Mac line
ends) is a line end, and a UTF-8 BOM at the start of a later line (files
concatenated) is three blank lines, so the game before it has ended
(``_settle``). A stream in memory is rewritten in a copy, only if it has
either (``lf_text``).

The line-based notations (compact strings, PGN Crypt) read a file in blocks
of whole lines instead: ``line_blocks``.
"""

from __future__ import annotations

from fastpgn.errors import InputDamageError, InputError

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

BLOCK_SIZE = 4 << 20


class Block:
    """Whole games: ``data`` starts at decompressed ``offset`` of the stream.

    ``data`` is a read-only view of a buffer the cutter may fill again once
    ``release()`` is called: keep a copy (``bytes(...)``) of anything needed
    after that.
    """

    # A plain class, not a dataclass: importing dataclasses costs a reader's start-up (fastpgn.errors).
    __slots__ = ("data", "offset", "at_stream_start", "damage", "truncated", "_buffer", "_pool")

    def __init__(self, data: memoryview, offset: int, at_stream_start: bool, damage: InputError | None = None,
                 truncated: bool = False, _buffer: bytearray | None = None, _pool: list | None = None) -> None:
        self.data = data
        self.offset = offset
        self.at_stream_start = at_stream_start
        self.damage = damage            # set on the last block when the input is damaged
        self.truncated = truncated      # the data is the start of a game the damage cut short
        self._buffer = _buffer
        self._pool = _pool

    def __repr__(self) -> str:
        return (f"Block(offset={self.offset}, {len(self.data)} bytes, at_stream_start={self.at_stream_start}, "
                f"damage={self.damage!r}, truncated={self.truncated})")

    def truncation(self) -> tuple[str, int]:
        """A truncated block's cut-short game: why it is rejected, and the byte where it breaks."""
        damage = self.damage
        # A truncated block carries the damage that cut it: cut_blocks's own, or a read error, which
        # names the decompressed offset reached (fastpgn.io.sources).
        assert damage is not None and damage.offset is not None
        # said once: "input ends inside this game (inside the tags...)", not "(the input ends inside...)"
        reason = damage.reason.removeprefix("the input ends ")
        return f"input ends inside this game ({reason})", damage.offset

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


def _ends_blank_or_escapes(buf, i: int) -> bool:
    """Whether the ``\\n`` at index ``i`` ends a blank line, or ``%`` escape lines that follow one."""
    while not _blank_line_ends_at(buf.__getitem__, i):
        j = buf.rfind(b"\n", 0, i)
        if j < 0 or buf[j + 1] != 37:     # the line is not an escape line (or no line came before it)
            return False
        i = j
    return True


_BOM = b"\xef\xbb\xbf"
_LINE_BOM = b"\n" + _BOM
_LONE_CR = None     # a CR without its LF: re.compile(b"\r(?!\n)"), made by _lone_cr on first need


def _lone_cr():
    """The pattern of a CR without its LF (``re`` imported only for text with CRs: not for a plain LF read)."""
    global _LONE_CR
    if _LONE_CR is None:
        import re

        _LONE_CR = re.compile(b"\r(?!\n)")
    return _LONE_CR


def _has_dialect(buf, lo: int, stop: int, hi: int) -> bool:
    """Whether ``buf[lo:stop]`` may hold what _settle rewrites (``buf[stop:hi]``: the bytes known after it).

    On LF text, two memchr passes (no CR, no 0xEF byte); CRLF text costs a
    search for a CR without its LF.
    """
    ahead = min(stop + 1, hi)
    cr = buf.find(b"\r", lo, stop)
    if cr >= 0:
        lone = _lone_cr().search(buf, cr, ahead)
        if lone is not None and lone.start() < stop:
            return True
    return buf.find(b"\xef", lo, stop) >= 0 and buf.find(_LINE_BOM, max(lo - 1, 0), min(stop + 2, hi)) >= 0


def _settle(buf: bytearray, lo: int, hi: int, final: bool) -> int:
    """Rewrite the dialects in ``buf[lo:hi]`` in place as LF text; return the index up to which bytes are settled.

    A CR not followed by LF becomes LF; then a BOM that starts a line after
    the first (an LF before it) becomes three LFs. (Index 0 is the stream's
    start, whose BOM the scanner skips, or a game's ``[``.) Unless
    ``final``, the last two bytes wait for the bytes after them (a CR's LF,
    the rest of a BOM): the return value is then ``hi - 2``.
    """
    stop = hi if final else hi - 2
    if stop <= lo or not _has_dialect(buf, lo, stop, hi):
        return max(stop, lo)
    ahead = min(stop + 1, hi)       # (with the byte after: a CR at stop - 1 may start CRLF)
    buf[lo:stop] = _lone_cr().sub(b"\n", bytes(buf[lo:ahead]))[:stop - lo]
    at = buf.find(_LINE_BOM, max(lo - 1, 0), min(stop + 2, hi))
    while 0 <= at < stop - 1:
        buf[at + 1:at + 4] = b"\n\n\n"
        at = buf.find(_LINE_BOM, at + 1, min(stop + 2, hi))
    return stop


def lf_text(data):
    """``data`` with its dialects read as LF text (see _settle): ``data`` itself when it has none.

    >>> lf_text(b"[Event \\"a\\"]\\r\\r1. e4 *\\r"), lf_text(b"1. e4 *\\r\\n")
    (b'[Event "a"]\\n\\n1. e4 *\\n', b'1. e4 *\\r\\n')
    """
    if not _has_dialect(data, 0, len(data), len(data)):
        return data
    buf = bytearray(data)
    _settle(buf, 0, len(buf), True)
    return bytes(buf)


def find_cut(buf, lo: int, hi: int | None = None) -> int:
    """First index ``q`` in ``[lo, hi]`` where a blank line (and any escape lines) is followed by a line
    starting with ``[``; -1 if none."""
    hi = len(buf) if hi is None else hi
    i = buf.find(b"\n[", max(lo, 1) - 1, hi)
    while i >= 0:
        if _ends_blank_or_escapes(buf, i):
            return i + 1
        i = buf.find(b"\n[", i + 1, hi)
    return -1


def _last_cut(buf, hi: int) -> int:
    """Last game boundary in ``buf[:hi]``; 0 if none."""
    i = buf.rfind(b"\n[", 0, hi)
    while i > 0:
        if _ends_blank_or_escapes(buf, i):
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


def _moves_after_tags(line: bytes) -> bool:
    """Whether text follows the whole tag pairs a line starts with (``[Event "?"] 1. e4 e5 *``: the tags and
    moves of a game on one line, which the scanner reads so)."""
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in b" \t\r":
            i += 1
        if i >= n:
            return False
        if line[i] != 0x5B:
            return True
        i = line.find(b'"', i)
        while i >= 0:                   # the value's closing quote: one not escaped by a backslash
            i = line.find(b'"', i + 1)
            back = i - 1
            while back >= 0 and line[back] == 0x5C:
                back -= 1
            if i < 0 or (i - 1 - back) % 2 == 0:
                break
        if i < 0:
            return False                # a pair cut short (or not a tag at all): no moves here
        i += 1
        while i < n and line[i] in b" \t":
            i += 1
        if i >= n or line[i] != 0x5D:
            return False
        i += 1


def has_moves(buf, end: int, start: int = 0) -> bool:
    """Whether ``buf[start:end]`` has a line of movetext: not blank, not a tag line (``[`` first) unless
    moves follow its tags, not an escape line (``%`` first)."""
    i = start
    while i < end:
        j = buf.find(b"\n", i, end)
        j = end if j < 0 else j
        line = bytes(buf[i:j]).strip(b" \t\r\xef\xbb\xbf")
        if line and (line[:1] != b"[" or _moves_after_tags(line)) and buf[i:i + 1] != b"%":
            return True                 # (an escape line is no movetext)
        i = j + 1
    return False


def _cut_before_unfinished_tags(buf, end: int, moves_seen: bool, start: int = 0) -> int:
    """Where the last game of ``buf[start:end]`` starts if the input ends inside its tags, before any moves; else -1.

    A lichess game always has movetext (at least its result): a dump cut
    short at a bzip2 stream or zstd frame boundary still decodes cleanly,
    and its last game would read as a game of no moves. That is damage when
    the text ends inside a tag (no closing ``]``), or after complete tags
    in an input whose other games have moves. An input of tags alone (a
    lichess broadcast exported before its games began) is not.
    """
    hi = end
    while hi > start and buf[hi - 1] in b" \t\r\n":
        hi -= 1
    first = -1
    while hi > start:
        lo = buf.rfind(b"\n", start, hi) + 1 or start
        if buf[lo:lo + 1] == b"%":      # an escape line among (or after) the tags
            hi = lo - 1 if lo > start else start
            if lo == start:
                break
            continue
        cut_at_bracket = hi == end and bytes(buf[lo:hi]).strip(b" \t") == b"["     # (a tag cut after its '[')
        if not (_line_starts_tag(buf, lo, hi) or cut_at_bracket) or _moves_after_tags(bytes(buf[lo:hi])):
            break                       # (moves on the tag line: the game it holds has moves)
        if first < 0:
            first = lo
            last_line = bytes(buf[lo:hi]).rstrip()
        game = lo
        hi = lo - 1 if lo > start else start
        if lo == start:
            break
    if first < 0:
        return -1
    if not last_line.endswith(b"]") or moves_seen or has_moves(buf, game, start):
        return game
    return -1


# What the input ends inside, as the kernel's last_game says: why its last game is damage.
_ENDS_INSIDE = {"movetext": "the input ends inside the movetext of its last game, before its result",
                "comment": "the input ends inside a comment of its last game",
                "variation": "the input ends inside a variation of its last game"}


def _cut_inside_movetext(buf, end: int, start: int = 0, at_stream_start: bool = True,
                         ends_whole: bool = False) -> tuple[int, str]:
    """Where the last game of ``buf[start:end]`` starts, and why it is damage, if the input ends inside its
    movetext; else ``(-1, "")``.

    PGN ends a game's movetext with its result (``1-0``, ``0-1``,
    ``1/2-1/2``, ``*``): a last game with moves and no result whose last
    line is cut (no line end after it), or whose text ends inside a comment
    or a variation, is a game the input cut short (a download interrupted,
    ``head -c``), as a compressed stream cut short is. A game with no result
    whose last line is whole is a game written so (python-chess reads it).
    A lichess game's movetext is one line that ends with its result, so a
    dump cut anywhere in it is found. The games are those the scanner reads
    (the kernel's ``last_game``); a last game of tags alone is
    _cut_before_unfinished_tags's. ``at_stream_start``: ``buf[start]`` is
    the stream's first byte. ``ends_whole``: the input's end is its last
    game's end (PGN Crypt's game files end with a move, no result and no
    line end), so a last game without a result is never a cut one.
    """
    from fastpgn import scan as _scan

    lo = max(_last_cut(buf, end), start)
    game, inside = _scan.kernel.last_game(bytes(buf[lo:end]), 0, end - lo,
                                          at_stream_start=at_stream_start and lo == start)
    if inside == "movetext":
        tail = bytes(buf[lo + game:end]).rstrip(b" \t")
        if ends_whole or tail.endswith(b"\n") or not has_moves(buf, end, lo + game):
            return -1, ""           # (its last line whole: a game written without a result)
    if not inside:
        return -1, ""
    return lo + game, _ENDS_INSIDE[inside]


def _end_damage(buf, end: int, moves_seen: bool, start: int = 0, at_stream_start: bool = True,
                ends_whole: bool = False) -> tuple[int, str]:
    """Where the input's last game starts, and why it is damage, if the input (``buf[start:end]`` its last
    bytes) ends inside that game: inside its tags (_cut_before_unfinished_tags) or its movetext
    (_cut_inside_movetext); else ``(-1, "")``."""
    cut = _cut_before_unfinished_tags(buf, end, moves_seen, start)
    if cut >= 0:
        return cut, "the input ends inside the tags of its last game, before any moves"
    return _cut_inside_movetext(buf, end, start, at_stream_start, ends_whole)


# Past the next block's target, the cutter reads this much at a time, so the
# bytes after a cut, copied into the next block's buffer, stay few.
_STEP = 64 << 10


def cut_blocks(readinto, block_size: int = BLOCK_SIZE, start: int = 0, head: bytes = b"",
               pool: list | None = None, moves_seen: bool | None = None,
               whole_games: bool = False, ends_whole: bool = False) -> Iterator[Block]:
    """Cut a decompressed stream (that begins at absolute ``start``) into game-aligned blocks.

    ``readinto(view)`` fills a writable view and returns the byte count, 0
    at the end; ``head`` holds bytes already read from the stream. The
    stream is read straight into the buffers the blocks are views of, so no
    byte is copied except the few after each cut. A caller that calls
    ``Block.release()`` lets its buffer come back through ``pool`` (a list)
    instead of a new one being allocated. ``moves_seen`` says whether the
    stream had movetext before ``start`` (it decides whether a last game of
    tags alone is damage: see ``_cut_before_unfinished_tags``). A stream
    that ends inside its last game's tags or movetext is damage
    (``_end_damage``), unless ``whole_games`` says it cannot end inside a
    game (lichess's Parquet release: a row is one game); ``ends_whole``: a
    last game without a result is a game (see ``_cut_inside_movetext``).
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
    settled = 0                 # bytes of buf read as LF text (_settle); the cutter looks no further
    searched = 0                # no cut starts before this index (searched already)
    base = start                # absolute offset of buf[0]
    damage = None
    ended = False               # the stream has no more bytes: the last ones settle too
    view = memoryview(buf)
    while True:
        settled = _settle(buf, settled, filled, ended)
        target = (base // block_size + 1) * block_size
        lo = max(target - base, 1)
        if settled > lo:
            q = find_cut(buf, max(lo, searched), settled)
            if q >= 0:
                moves_seen = moves_seen or has_moves(buf, q)
                yield Block(view[:q].toreadonly(), base, base == 0, _buffer=buf, _pool=pool)
                rest = filled - q
                nxt = new_buffer(max(capacity, rest + step))
                nxt[:rest] = view[q:filled]
                view.release()
                buf, view = nxt, memoryview(nxt)
                base += q
                filled, settled, searched = rest, settled - q, 0
                continue
            searched = settled
        if ended:
            break
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
            ended = True
        filled += got
    _settle(buf, settled, filled, True)     # (after damage: the bytes read so far)
    if damage is None:
        cut, reason = (-1, "") if whole_games else _end_damage(buf, filled, moves_seen, 0, base == 0, ends_whole)
        if cut < 0:
            if filled:
                yield Block(view[:filled].toreadonly(), base, base == 0, _buffer=buf, _pool=pool)
            return
        damage = InputDamageError(reason, base + filled)
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


def cut_buffer(data: bytes, block_size: int = BLOCK_SIZE, ends_whole: bool = False) -> Iterator[Block]:
    """``cut_blocks`` over a whole stream already in memory: the same blocks, views of ``data`` (no copy,
    unless it has dialects to rewrite: see ``lf_text``).

    The cuts are cut_blocks's: the first game boundary at or after each next
    multiple of ``block_size``, and at the end the last game cut short inside
    its tags or its movetext as damage.
    """
    data = lf_text(data)
    view = memoryview(data)
    n = len(data)
    base = 0
    moves_seen = False
    while True:
        target = (base // block_size + 1) * block_size
        q = find_cut(data, max(target, base + 1), n) if target < n else -1
        if q < 0:
            break
        moves_seen = moves_seen or has_moves(data, q, base)
        yield Block(view[base:q], base, base == 0)
        base = q
    cut, reason = _end_damage(data, n, moves_seen, base, base == 0, ends_whole)
    if cut < 0:
        if n > base:
            yield Block(view[base:n], base, base == 0)
        return
    damage = InputDamageError(reason, n)
    if cut > base:
        yield Block(view[base:cut], base, base == 0)
    yield Block(view[cut:n], cut, cut == 0, damage, truncated=True)


class _ChunkFiller:
    """``readinto`` over an iterator of byte strings or views (one copy per byte, into the caller's buffer;
    a view is done with once the next one is asked for)."""

    def __init__(self, chunks: Iterator[bytes] | Iterator[bytes | memoryview]) -> None:
        self._chunks = chunks
        self._piece = memoryview(b"")

    def _more(self) -> bool:
        """Whether bytes are in hand, the next chunk taken if need be (an error of the chunks is raised)."""
        while not self._piece:
            chunk = next(self._chunks, None)
            if chunk is None:
                return False
            self._piece = memoryview(chunk)
        return True

    def peek(self, n: int) -> bytes:
        """Up to ``n`` of the next bytes, left to be read (fewer at a chunk's end; b"" at the end)."""
        return bytes(self._piece[:n]) if self._more() else b""

    def readinto(self, view) -> int:
        if not self._more():
            return 0
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
