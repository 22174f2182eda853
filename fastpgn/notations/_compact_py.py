"""The block reader of compact moves lines, pure-Python twin of ``_compact_cy``; and the ply rules.

``block_movetext(block)`` takes whole lines ('\\n'-separated bytes) and gives,
per line, the PGN movetext (``'\\n1. e4 e5\\n2. Nf3'``) of a moves line it
can vouch for, else None: the caller reads such a line with the careful
scanner (``lichess_text.scan_moves``), which names line and column. It
vouches for a line of the shape::

    line  := '1' white [black] { next-number white black } ... ; numbers 1, 2, 3 ... 999 in order
    white := one valid ply for White (scan_ply), black likewise for Black

with nothing else on the line (no blank, no byte that is not ASCII, a CRLF
line break allowed), every round but the last holding both plies, and the
plies where the marks below put them. ``scan_ply`` (the SAN shape of one
ply) lives here so that both the twin and lichess_text use the one copy; the
compiled kernel implements the same rules in C.
"""

from __future__ import annotations

import codecs

__all__ = ["scan_ply", "block_movetext"]

_FILES = frozenset("abcdefgh")
_RANKS = frozenset("12345678")
_PIECES = frozenset("KQRBN")
_PROMOTIONS = frozenset("QRBN")
_SUFFIX = frozenset("+#!?")


def _square(s: str, i: int, n: int) -> bool:
    return i + 1 < n and s[i] in _FILES and s[i + 1] in _RANKS


def scan_ply(s: str, i: int = 0, side: str | None = None) -> list[int]:
    """Every end position of a lexically valid ply starting at ``s[i]``, shortest first.

    A glued string can hold more than one reading (``Qh4e1`` is the queen to
    h4 followed by something, or the queen from h4 to e1); the caller picks.
    ``side`` (``"w"``/``"b"``) rules out pawn moves that side can never make.

    >>> scan_ply("Qh4e1Nf6")
    [3, 5]
    >>> scan_ply("exd5+Nc6"), scan_ply("e8Q"), scan_ply("e8"), scan_ply("O-O-O#")
    ([5], [3], [], [6])
    >>> scan_ply("h7#", side="b"), scan_ply("h7#", side="w")
    ([], [3])
    """
    n = len(s)
    if i >= n:
        return []
    c = s[i]
    ends: list[int] = []
    if c == "O":
        if s.startswith("O-O-O", i):
            ends.append(i + 5)
        elif s.startswith("O-O", i):
            ends.append(i + 3)
    elif c in _PIECES:
        j = i + 1
        # (start of the target square) for each disambiguation: none, file or
        # rank, square; each with or without the capture mark.
        starts = [j]
        if j < n and (s[j] in _FILES or s[j] in _RANKS):
            starts.append(j + 1)
        if _square(s, j, n):
            starts.append(j + 2)
        for k in starts:
            if k < n and s[k] == "x":
                k += 1
            if _square(s, k, n):
                ends.append(k + 2)
    elif c in _FILES:
        end = -1
        if i + 1 < n and s[i + 1] in _RANKS:
            end, rank = i + 2, s[i + 1]
        elif (i + 1 < n and s[i + 1] == "x" and _square(s, i + 2, n)
              and abs(ord(s[i + 2]) - ord(c)) == 1):
            end, rank = i + 4, s[i + 3]
        # Pawns only go forward from their second rank: White's never land on
        # ranks 1-2, Black's never on 7-8 (this settles 'Rh1h7#' at a line end).
        if end > 0 and not (side == "w" and rank in "12" or side == "b" and rank in "78"):
            # A pawn that reaches the last rank must promote and no other may,
            # which is what tells 'e8Q' (a promotion) from 'e8' + 'Q...'.
            if rank in "18":
                if end + 1 < n and s[end] == "=" and s[end + 1] in _PROMOTIONS:
                    ends.append(end + 2)
                elif end < n and s[end] in _PROMOTIONS:
                    ends.append(end + 1)
            else:
                ends.append(end)
    out = []
    for end in sorted(set(ends)):
        while end < n and s[end] in _SUFFIX:
            end += 1
        out.append(end)
    return out



# ---------------------------------------------------------------- many lines at once
#
# scan_moves walks a line round by round in Python, about a microsecond a
# round. The converter instead reads a whole block of lines with a few
# C-level passes, and vouches for the moves lines whose reading is sure;
# a line it cannot vouch for goes to scan_moves. Why that gives what
# scan_moves gives, on every line it vouches for:
#
# - Which digits are move numbers follows from the characters before each:
#   a digit after a file or a piece letter is a rank (of a square or of a
#   disambiguation) unless that letter is a promotion ('=Q'), any other
#   digit is part of a move number. (A digit right after a promotion
#   without '=', 'e1Q2', can be either; such a line goes to scan_moves.)
# - A ply starts where a file, piece or 'O' follows the end of another ply:
#   a rank after a file, a '+#!?', the 'O' of a castle, or a promotion
#   letter after '=' (not between the squares of 'Nb6d7' when another ply
#   follows it). Where that guess is wrong the line fails the checks.
# - A line is vouched for only when it starts with its first move number,
#   its numbers are 1, 2, 3, ... in order, each followed by White's ply,
#   every round but the last holds exactly two plies, nothing else (no
#   blank) stands between them, and every ply is one valid ply for its side.
#   Such a reading is the only one: a valid ply has no valid ply as a proper
#   prefix, except that 'Qh4e1' starts with 'Qh4' and 'O-O-O' with 'O-O',
#   and then the rest ('e1', '-O', ...) followed by more text is never a
#   single valid ply. So scan_moves, whichever reading
#   it tries first, ends with this one; its last round too (two plies where
#   both readings fit), since the last round here has two plies whenever
#   they are valid.
#
# The passes, over a block of whole lines (see block_movetext):
#
# 1. Marks. Each byte gets a class (bytes.translate), the classes of the
#    whole block become one big integer, and shifts and masks of it find the
#    digits of every move number and the first letter of every ply. Those
#    bytes get their top bits flipped (one XOR of the block as an integer).
# 2. Expansion. A charmap decode maps each marked byte to a code point whose
#    UTF-8 form is two or three bytes (the lead byte says what the mark was);
#    the UTF-8 encoding of the block is what the views below translate.
# 3. Three views of it, each a bytes.translate that maps or deletes bytes and
#    turns the block's line breaks into '\x1f' (to split the lines apart):
#    - shapes: a move number as '|' and its digits, White's ply as 'w',
#      Black's as 'b', a blank (or a byte that is not text) as '_', nothing
#      else. A good line's shape is a prefix of '|1wb|2wb|3wb...' ending in
#      'w' or 'b', one startswith per line.
#    - plies: the plies alone, White's behind a 'W', separated by blanks. A
#      line of good shape is split and looked up in the set of plies seen
#      valid before (one issuperset); only a ply never seen before is checked
#      with scan_ply. Line by line rather than the whole block at once: a
#      line's plies stay in the processor's cache, a block's would not.
#    - PGN: what PGN puts in place of the marks: a line break before a move
#      number, '. ' after it, a space before Black's move. So the PGN
#      movetext of every vouched line comes out of C, ready to write.

# Class bits of a byte: 1 digit, 2 file or piece (a rank follows it),
# 4 file, 8 ends a ply ('+#!?' and 'O'), 16 '=', 32 starts a ply, 64 piece,
# 128 the rank a pawn promotes on.
_class = bytearray(256)
for _c in b"0123456789":
    _class[_c] = 1 | (128 if _c in b"18" else 0)
for _c in b"abcdefgh":
    _class[_c] = 2 | 4 | 32
for _c in b"KQRBN":
    _class[_c] = 2 | 32 | 64
for _c in b"+#!?":
    _class[_c] = 8
_class[ord("O")] = 8 | 32
_class[ord("=")] = 16
_CLASS = bytes(_class)
# Marked byte -> code point. A move number's first digit d is d^0x80: U+0080
# + d&63, UTF-8 C2 xx; its other digits are d^0xC0: U+0100 + d&63, C4 xx.
# The first letter c of a black ply is c^0x80: U+00C0 + c&63, UTF-8 C3 xx.
# The first letter of a white ply (after a number) is c^0xC0: U+0FC0 + c&63,
# UTF-8 E0 BF xx. Continuation bytes xx = 0x80 | c&63 are distinct for the
# 24 characters involved. Any other byte is U+FFFD, UTF-8 EF BF BD. (A byte
# of the block that is not ASCII can equal a marked byte, so block_movetext
# declines lines that hold one.)
_marked_chars = [chr(b) for b in range(128)] + ["\ufffd"] * 128
for _c in b"0123456789":
    _marked_chars[_c ^ 0x80] = chr(0x80 | _c & 63)
    _marked_chars[_c ^ 0xC0] = chr(0x100 | _c & 63)
for _c in b"abcdefghKQRBNO":
    _marked_chars[_c ^ 0x80] = chr(0xC0 | _c & 63)
    _marked_chars[_c ^ 0xC0] = chr(0xFC0 | _c & 63)
_MARKED = "".join(_marked_chars)
# UTF-8 continuation byte of a mark -> the character marked.
_DIGIT_TAILS = {0x80 | _c & 63: _c for _c in b"0123456789"}
_LETTER_TAILS = {0x80 | _c & 63: _c for _c in b"abcdefghKQRBNO"}


def _view(mapping: dict[int, int], keep_ascii: bool) -> tuple[bytes, bytes]:
    """A (table, delete) pair for bytes.translate: ``mapping`` first, then ASCII kept or not,
    line breaks to '\\x1f' (a '\\x1f' of the block's own to '?'), every other byte deleted."""
    table = bytearray(range(256))
    keep = set(range(128)) if keep_ascii else set()
    table[0x1F] = ord("?")
    for byte, to in {0x0A: 0x1F, **mapping}.items():
        table[byte] = to
        keep.add(byte)
    return bytes(table), bytes(b for b in range(256) if b not in keep)


_BLANK = b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.split() splits on, besides the line break
_SHAPES = _view({0xC2: ord("|"), **_DIGIT_TAILS, 0xE0: ord("w"),
                 0xC3: ord("b"), 0xEF: ord("_"), **{b: ord("_") for b in _BLANK}}, keep_ascii=False)
_PLIES = _view({0xE0: ord(" "), 0xBF: ord("W"), 0xC3: ord(" "), **_LETTER_TAILS}, keep_ascii=True)
_PGN = _view({0xC2: 0x0A, 0xE0: ord("."), 0xBF: ord(" "), 0xC3: ord(" "), **_DIGIT_TAILS, **_LETTER_TAILS},
             keep_ascii=True)
# Every good shape is a prefix of this one: number, White's ply, Black's ply, ...
_GOOD_SHAPE = "".join(f"|{k}wb" for k in range(1, 1000))
_PLY_ENDS = ("w", "b")
_ONES: dict[int, int] = {}  # n -> the integer whose n bytes are all 1


def _marked(block: bytes) -> bytes:
    """``block`` with the first digit of every move number and the first letter of every ply
    marked (pass 1 above)."""
    # A long block is padded with empty lines to a multiple of 64 KiB, so that blocks share ``ones``.
    n = len(block)
    pad = -n % 65536 if n > 65536 else 0
    if pad:
        block += b"\n" * pad
        n += pad
    ones = _ONES.get(n)
    if ones is None:
        if len(_ONES) > 16:
            _ONES.clear()
        ones = _ONES[n] = int.from_bytes(b"\x01" * n, "little")
    # Byte i of x is the class of block[i]; x << 8*k - b puts bit b of byte
    # i-k at bit 0 of byte i, x >> 8*k + b bit b of byte i+k.
    x = int.from_bytes(block.translate(_CLASS), "little")
    digit = x & ones
    equals2 = x << 12                                  # '=' two bytes before
    rank = digit & (x << 7)                            # after a file or piece ...
    number = digit ^ (rank ^ (rank & equals2))         # ... unless it is a promotion
    after_number = number << 8
    later = number & after_number                      # a move number's digits after the first
    start = (x >> 5) & ones
    white = start & after_number                       # a ply right after a number
    square = (x << 8) & (x << 14)                      # after a rank after a file
    black = start & (square | (x << 5) | equals2)      # or after +#!? or O, or a promotion
    # Not between the squares of 'Nb6d7' (older lichess games write such moves): after a
    # piece and a square comes a square, and either that piece started Black's move or
    # another move follows (after a '+' perhaps); 'Nf3' + 'e5' is followed by a number.
    inside = (square & (x << 18) & (x >> 2) & (x >> 8)
              & ((black << 24) | (x >> 21) | ((x >> 19) & (x >> 29))))
    black ^= black & inside
    # 'd1Q2e4' is 'd1Q' and move 2 or 'Q2e4' (after 'Nf3d1', say): such a line is left to
    # scan_moves. The digit is marked as a later digit of a number, right after the 'Q'
    # that starts Black's ply, which no good shape holds ('b2'). ('Rd1Q2' is no
    # promotion: a piece stands before the square.)
    promoted = digit & (x << 2) & (x << 9) & (x << 22)  # a digit after a piece after a1..h8
    promoted ^= promoted & (x << 26)
    mark = ((number | black | white | promoted) << 7) | ((white | later | promoted) << 6)
    marked = (int.from_bytes(block, "little") ^ mark).to_bytes(n, "little")
    return marked[:n - pad] if pad else marked


def block_movetext(block: bytes) -> list[str | None]:
    """The PGN movetext of each line of ``block`` ('\\n'-separated) when it is a moves line
    read for sure, else None (the line may still be one, for :func:`scan_moves` to read).

    >>> block_movetext(b"1e4e52Nf3Nc6\\n21.04.07W1-0\\n1d4d52Nf3 Nc6")
    ['\\n1. e4 e5\\n2. Nf3 Nc6', None, None]
    """
    if b"\r" in block:  # CRLF: the reader strips the '\r' from each line
        block = block.replace(b"\r\n", b"\n")
    text = codecs.charmap_decode(_marked(block), "strict", _MARKED)[0].encode("utf-8")
    starts = _GOOD_SHAPE.startswith
    good = [shape.endswith(_PLY_ENDS) and starts(shape)
            for shape in text.translate(*_SHAPES).decode("ascii").split("\x1f")]
    if not block.isascii():  # a byte that is not ASCII can pass for a mark
        good = [ok and line.isascii() for line, ok in zip(block.split(b"\n"), good)]
    known = _KNOWN_PLIES.issuperset
    # A line's plies view starts with the blank before White's first ply unless text stands
    # before the first move number ('e51e4e5'), which is no moves line of ours.
    good = [ok and plies[:1] == " " and (known(plies.split()) or _valid_plies(plies))
            for plies, ok in zip(text.translate(*_PLIES).decode("ascii").split("\x1f"), good)]
    pgn = text.translate(*_PGN).decode("ascii").split("\x1f")
    return [movetext if ok else None for movetext, ok in zip(pgn, good)]


# Plies-view tokens known to be valid plies: 'W' + White's ply, Black's as it is. Bounded.
_KNOWN_PLIES: set[str] = set()
_KNOWN_MAX = 1 << 17


def _valid_plies(plies: str) -> bool:
    """Whether every token of a line of the plies view is a valid ply; learns the new valid ones."""
    for token in set(plies.split()) - _KNOWN_PLIES:
        ply, side = (token[1:], "w") if token[0] == "W" else (token, "b")
        if len(ply) not in scan_ply(ply, 0, side):
            return False
        if len(_KNOWN_PLIES) >= _KNOWN_MAX:
            _KNOWN_PLIES.clear()
        _KNOWN_PLIES.add(token)
    return True
