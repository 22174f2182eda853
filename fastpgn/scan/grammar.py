"""The PGN grammar, pure Python: twin of fastpgn/scan/grammar.pxi (same functions, same order, same errors).

Part of the pure scanner kernel fastpgn.scan._scan_py (see its docstring for the parts).

The kernel works on a block of bytes that holds whole games (the reader cuts
blocks at game boundaries) and never uses regular expressions.

Grammar accepted, per game:

* Games are line-oriented. A game starts at the start of the block, at a tag
  line (first non-blank byte ``[``) that follows a blank line, or at a tag
  line that follows a movetext line outside a comment. A blank line followed
  by a tag line always starts a new game, even inside an open comment, so a
  broken comment never swallows the games after it. Games without tags
  (pasted, exported): a result token ends a game, so a move or move number
  after it starts the next one, and so does a line starting ``1.`` after a
  blank line in a game that has moves.
* Tag section: ``[Name "value"]`` pairs, several per line allowed, ``\\"`` and
  ``\\\\`` escapes in values; text after the last pair on a line is movetext.
* Movetext tokens: move numbers (``12.``, ``12...``), SAN moves (checked
  lexically: castling with ``O``/``0``, piece letter, disambiguation, capture,
  promotion with or without ``=``, ``+``/``#``, ``!``/``?`` annotations,
  drops, null moves ``--`` and ``Z0``), results (``1-0``, ``0-1``,
  ``1/2-1/2``, ``*``), brace comments (``[%eval ...]``, its value without
  a ``,depth`` after it, and ``[%clk H:MM:SS[.f]]`` are read, everything
  else is skipped), ``;`` comments, NAGs
  ``$n`` and variations ``( ... )`` (skipped, nested; a ``(`` before the first
  move and a ``)`` with no variation open are stray and ignored, as
  python-chess does). A ``%`` in the first column escapes the line.
* Other tools' dialects (docs/differences.md): ``e.p.``/``ep`` after a move,
  castling and results with en or em dashes, ``½-½``, evaluation glyphs
  (``+-``, ``+--``) apart or after a move, Crafty's ``...``, forum
  ``[pgn]``/``[/pgn]`` wrappers, tag values whose quotes are not escaped or
  not closed and tags without their ``]``.
* UTF-8 BOM at the start of the stream, CRLF line ends and a missing final
  newline are accepted. The readers hand the kernel LF text: CR-only line
  ends and a BOM before a later game are rewritten first (fastpgn.io.blocks,
  ``lf_text``).

A bad game is reported as ``(reason, error_offset, game_number, start, end)``
with the whole of its raw text between ``start`` and ``end``; the next game
parses. The Cython twin mirrors every function below in the same order, up to
the fast path.

Headers only (headers_from_block) and filters (a where_plan passed to any
front end; the tests themselves are fastpgn/scan/filters.py's): _scan_game reads the tag section as always, then, for a game
whose tags a filter refuses or for every game when reading headers only,
skips its movetext with _skip_movetext, which follows _movetext's game
boundaries (comments, variations, results, ``1.`` after a blank line)
without reading moves, clocks or evals: a refused game is never built. A
bad tag still rejects a game; so do the movetext errors that decide where
it ends (unterminated comment or variation, stray ``}``); other movetext
errors go unnoticed in a skipped movetext.

The fast path (fastpgn/scan/fastpath.py; pure Python only) reads a game
written the way lichess writes them (tag lines ``[Name "value"]``, a blank
line, the movetext on one line, ``{ [%eval ...] [%clk ...] }`` comments)
with whole-string bytes operations and caches of tokens the exact functions
already accepted, ten times faster than the byte walk; anything it does not
recognise with certainty, it hands back, and the game is scanned again from
its first byte by _scan_game, which alone reports errors. The Cython twin has
no such second path: it walks bytes at C speed, with a few shortcuts inside
the mirrored functions for lichess's commonest shapes (_plain_tag_line for a
tag line, _quick_san for the commonest moves, _lichess_comment for comments,
with a one-word test of ``{ [%clk H:MM:SS] }``; the runs over skipped
movetext, one-line comments and plain tag values, sixteen bytes at a time
with SSE2), each reading to the same spans as the general code beside it.
The differential tests (tests/test_differential.py against the Cython twin,
where every byte of those shapes is replaced by each of 256 values;
tests/test_scan_py_fastpath.py against the byte walk) hold all of them to
the same lines, records and errors.
"""

from __future__ import annotations

from fastpgn import lichess
from fastpgn.lichess import DRAW_OFFER_COMMENTS, RESULT_CODES, TERMINATION_CODES

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from typing_extensions import Buffer

    from fastpgn.scan.filters import _Where

SEP = lichess.SEP.encode()
# Pure Python holds the GIL: the converter gives this backend worker processes, not threads.
RELEASES_GIL = False
REPLAYS_WITHOUT_GIL = False
_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r"
_SPACE = b" \t\r\n"
_FILES = b"abcdefgh"
_RANKS = b"12345678"
_PIECES = b"KQRBNP"
_PROMO = b"QRBNKqrbnk"     # (lower case as python-chess reads it: "e8=q")
_DELIMS = frozenset(b" \t\r\n{}();$")

# The codes of fields 4 and 5, as fastpgn.lichess defines them (bytes here: the kernel writes bytes).
_RESULT_CODE = {k.encode(): v.encode() for k, v in RESULT_CODES.items()}
_TERMINATION_CODE = {k.encode(): v.encode() for k, v in TERMINATION_CODES.items()}

# Header names the 22-field line needs, in the order of _header_slot's slots.
LINE_TAGS = (
    b"Site", b"UTCDate", b"UTCTime", b"Result", b"Termination", b"ECO",
    b"Opening", b"TimeControl", b"White", b"WhiteElo", b"WhiteRatingDiff",
    b"WhiteTitle", b"Black", b"BlackElo", b"BlackRatingDiff", b"BlackTitle",
    b"Date", b"Time",
)
_SLOT = {name: i for i, name in enumerate(LINE_TAGS)}
(S_SITE, S_UTCDATE, S_UTCTIME, S_RESULT, S_TERMINATION, S_ECO, S_OPENING,
 S_TC, S_WHITE, S_WELO, S_WDIFF, S_WTITLE, S_BLACK, S_BELO, S_BDIFF, S_BTITLE,
 S_DATE, S_TIME) = range(len(LINE_TAGS))


class _Bad(Exception):
    """Internal: a game is malformed at ``pos`` (absolute to the buffer)."""

    def __init__(self, reason: str, pos: int) -> None:
        self.reason = reason
        self.pos = pos


def _show(token: bytes) -> str:
    text = token[:24].decode("utf-8", "replace")
    return text + ("..." if len(token) > 24 else "")


# ---------------------------------------------------------------- lines

def _line_end(buf: bytes, pos: int, end: int) -> int:
    """Index of the ``\\n`` ending the line at ``pos``, or ``end``."""
    nl = buf.find(b"\n", pos, end)
    return end if nl < 0 else nl


def _is_blank(buf: bytes, pos: int, stop: int) -> bool:
    return not buf[pos:stop].strip(_WS)


def _is_tag_line(buf: bytes, pos: int, end: int) -> bool:
    """Whether the line at ``pos`` starts (after spaces/tabs) with ``[``."""
    while pos < end and (buf[pos] == 32 or buf[pos] == 9):
        pos += 1
    return pos < end and buf[pos] == 91


def _starts_first_move(buf: bytes, pos: int, end: int) -> bool:
    """Whether the line at ``pos`` starts (after spaces/tabs) with the move number ``1.``."""
    while pos < end and (buf[pos] == 32 or buf[pos] == 9):
        pos += 1
    return pos + 1 < end and buf[pos] == 49 and buf[pos + 1] == 46


def _ends_blank_line(buf: bytes, nl: int) -> bool:
    """Whether the ``\n`` at ``nl`` ends a blank line (only spaces, tabs and CR since the ``\n`` before)."""
    j = nl - 1
    while j >= 0 and (buf[j] == 32 or buf[j] == 9 or buf[j] == 13):
        j -= 1
    return j >= 0 and buf[j] == 10


def _next_boundary(buf: bytes, pos: int, end: int) -> int:
    """First line start after ``pos`` where a blank line (and any escape lines) is followed by a tag line;
    else ``end``."""
    blank = False
    nl = buf.find(b"\n", pos, end)
    while nl >= 0:
        start = nl + 1
        stop = _line_end(buf, start, end)
        if blank and _is_tag_line(buf, start, stop):
            return start
        # (escape lines between the blank line and the tags: still a boundary)
        blank = _is_blank(buf, start, stop) or (blank and start < stop and buf[start] == 37)
        if stop >= end:
            return end
        nl = stop
    return end


# ---------------------------------------------------------------- tokens

def _san_ok(tok: bytes) -> bool:
    """Lexical SAN check: shapes found in real PGN, not legality."""
    n = len(tok)
    i = 0
    c = tok[0]
    if tok[:2] == b"--" or tok[:2] == b"Z0":  # a null move, with the suffixes any move takes ("--!?", "Z0+")
        i = 2
    elif c == 79 or c == 48:  # 'O' or '0': castling (the dashes may be en or em dashes)
        i = _castling_len(tok, c)
        if not i:
            return False
    else:
        if c in _PIECES:
            i = 1
        if i < n and tok[i] == 64:  # '@': a drop
            i += 1
            if i + 1 >= n or tok[i] not in _FILES or tok[i + 1] not in _RANKS:
                return False
            i += 2
        else:
            # body: [file][rank][x|-|:]file rank, then promotion
            j = i
            while j < n and (tok[j] in _FILES or tok[j] in _RANKS or tok[j] == 120
                             or tok[j] == 45 or tok[j] == 58):
                j += 1
            body = tok[i:j]
            m = len(body)
            if m < 2 or body[m - 2] not in _FILES or body[m - 1] not in _RANKS:
                return False
            k = 0
            lim = m - 2
            if k < lim and body[k] in _FILES:
                k += 1
            if k < lim and body[k] in _RANKS:
                k += 1
            if k < lim and (body[k] == 120 or body[k] == 45 or body[k] == 58):
                k += 1
            if k != lim:
                return False
            i = j
            if i < n and tok[i] == 61:  # '='
                i += 1
                if i >= n or tok[i] not in _PROMO:
                    return False
                i += 1
            elif i < n and tok[i] in _PROMO and c not in _PIECES:
                i += 1
    if i < n and tok[i] == 43:  # '+', '++'
        i += 1
        if i < n and tok[i] == 43:
            i += 1
    elif i < n and tok[i] == 35:  # '#'
        i += 1
    k = 0
    while i < n and (tok[i] == 33 or tok[i] == 63) and k < 2:  # '!' '?'
        i += 1
        k += 1
    return i == n


def _clock_seconds(value: bytes) -> bytes | None:
    """``H:MM:SS[.f]`` -> seconds as text (``b"600"``, ``b"177.7"``), None if malformed."""
    parts = value.split(b":")
    if len(parts) != 3:
        return None
    h, m, s = parts
    frac = b""
    dot = s.find(b".")
    if dot >= 0:
        frac = s[dot:]
        s = s[:dot]
        if len(frac) < 2 or not frac[1:].isdigit():
            return None
    if not (h.isdigit() and len(h) <= 15 and len(m) == 2 and m.isdigit() and len(s) == 2 and s.isdigit()):
        return None
    return str(int(h) * 3600 + int(m) * 60 + int(s)).encode() + frac


def _eval_ok(value: bytes) -> bool:
    """Whether ``value`` is an eval: digits and ``.#+-``, then maybe ``,depth`` (``0.17,20``, as python-chess
    writes it)."""
    if not value or value[0] == 44:
        return False
    for c in value:
        if not (48 <= c <= 57 or c == 46 or c == 35 or c == 45 or c == 43 or c == 44):
            return False
    return True


def _eval_value(value: bytes) -> bytes:
    """An eval's value without the search depth after its comma: ``0.17,20`` is ``0.17``."""
    comma = value.find(b",")
    return value if comma < 0 else value[:comma]


# ---------------------------------------------------------------- other tools' dialects
#
# What other programs write and python-chess, chess-library or scalachess read: castling and results with
# en or em dashes (and the other dashes), ``½-½``, ChessBase's forfeit results ``+--`` and ``--+``,
# evaluation glyphs (``+-``), ``e.p.`` after an en passant capture, Crafty's ``...`` for the absent White
# move, forum ``[pgn]...[/pgn]`` wrappers.

# The dashes other tools write for '-': hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal
# bar (U+2010 to U+2015) and the minus sign (U+2212).
_DASHES = tuple(bytes((0xE2, 0x80, c)) for c in range(0x90, 0x96)) + (b"\xe2\x88\x92",)
# Results written with those dashes or with the one-character half: the result they mean.
_DASH_RESULTS = {}
for _dash in (b"-",) + _DASHES:
    for _half in (b"\xc2\xbd", b"1/2"):
        _DASH_RESULTS[_half + _dash + _half] = b"1/2-1/2"
    if _dash != b"-":
        _DASH_RESULTS[b"1" + _dash + b"0"] = b"1-0"
        _DASH_RESULTS[b"0" + _dash + b"1"] = b"0-1"
del _DASH_RESULTS[b"1/2-1/2"]
# ChessBase's results of a game won by forfeit (the loser absent): "+--" White wins, "--+" Black wins.
_DASH_RESULTS[b"+--"] = b"1-0"
_DASH_RESULTS[b"--+"] = b"0-1"
# Evaluation glyphs written after a move ("Bb5+-"), longest first; and standing apart, with the
# Unicode ones (± ∓ ∞ ⩲ ⩱) and "=".
_GLYPH_SUFFIXES = (b"+/-", b"-/+", b"+/=", b"=/+", b"+-", b"-+", b"+=", b"=+")
_GLYPHS = frozenset(_GLYPH_SUFFIXES + (b"=", b"\xc2\xb1", b"\xe2\x88\x93", b"\xe2\x88\x9e",
                                       b"\xe2\xa9\xb2", b"\xe2\xa9\xb1", b"=/\xe2\x88\x9e"))


def _dash_at(tok: bytes, i: int) -> int:
    """The length of the dash at ``tok[i]`` (``-``: 1, an en or em dash: 3), 0 if none."""
    if tok[i:i + 1] == b"-":
        return 1
    return 3 if tok[i:i + 3] in _DASHES else 0


def _castling_len(tok: bytes, c: int) -> int:
    """The length of ``O-O`` or ``O-O-O`` (``0`` for ``O``, any dash) at the start of ``tok``; 0 if none."""
    d = _dash_at(tok, 1) if tok[0] == c else 0
    if not d or len(tok) <= 1 + d or tok[1 + d] != c:
        return 0
    i = 2 + d
    d = _dash_at(tok, i) if i < len(tok) else 0
    if d and i + d < len(tok) and tok[i + d] == c:
        i += d + 1
    return i


def _dash_result(tok: bytes) -> bytes | None:
    """The result a result token written with another dash or ``½`` means, else None."""
    return _DASH_RESULTS.get(tok)


def _wrapper_len(buf: bytes, pos: int, stop: int) -> int:
    """The length of a forum wrapper ``[pgn]`` or ``[/pgn]`` (any case) at ``pos``, else 0."""
    if pos + 5 <= stop and buf[pos:pos + 5].lower() == b"[pgn]":
        return 5
    return 6 if pos + 6 <= stop and buf[pos:pos + 6].lower() == b"[/pgn]" else 0


def _wrapper_line(buf: bytes, pos: int, stop: int) -> bool:
    """Whether the line is forum wrappers only (``[/pgn]``): no game's, like a blank line."""
    found = False
    while True:
        while pos < stop and buf[pos] in _WS:
            pos += 1
        if pos >= stop:
            return found
        w = _wrapper_len(buf, pos, stop)
        if not w:
            return False
        found = True
        pos += w


def _stands_apart(tok: bytes) -> bool:
    """Whether a token is read as nothing: an annotation or glyph apart from its move (``!?``, ``+-``),
    ``e.p.``, Crafty's ``...``."""
    n = len(tok)
    if n <= 2 and tok.strip(b"!?") == b"":
        return True
    return tok in _GLYPHS or tok == b"e.p." or tok == b"ep" or tok.strip(b".") == b""


def _move_len(tok: bytes) -> int:
    """How much of a token is the move: all of it for SAN, less an evaluation glyph or ``e.p.``
    after it (``e4+--``, ``exf6e.p.``); 0 if it is no move."""
    if _san_ok(tok):
        return len(tok)
    m = len(tok)
    for glyph in _GLYPH_SUFFIXES:
        if tok.endswith(glyph):
            m -= len(glyph)
            break
    k = m
    while k > 0 and tok[k - 1] in b"+#":     # "exf6e.p.+"
        k -= 1
    if tok.endswith(b"e.p.", 0, k):
        m = k - 4
    elif tok.endswith(b"ep", 0, k):
        m = k - 2
    return m if 0 < m < len(tok) and _san_ok(tok[:m]) else 0


# ---------------------------------------------------------------- NAGs

NAG_LIMIT = 32767   # the nags column is int16: a larger $N is a null entry
# The move-assessment glyphs written after a move (in its token or apart) and their NAGs (PGN standard 10.2).
_GLYPH_NAGS = {b"!": 1, b"?": 2, b"!!": 3, b"??": 4, b"!?": 5, b"?!": 6}


def _glyph_nag(tok: bytes) -> int:
    """The NAG of the ``!``/``?`` glyph a move token ends with (``e4!?`` is 5); 0 if none."""
    k = len(tok)
    while k > 0 and (tok[k - 1] == 33 or tok[k - 1] == 63) and len(tok) - k < 2:
        k -= 1
    return _GLYPH_NAGS.get(tok[k:], 0)


def _nag_value(digits: bytes) -> int | None:
    """A ``$N``'s N; None above NAG_LIMIT."""
    value = int(digits)
    return value if value <= NAG_LIMIT else None


def game_offers(text: bytes) -> list[tuple[int, int]]:
    """The draw offers of the one game ``text`` holds: ``(ply, side)`` pairs in the order written (ply 0 is the
    first move; side 0 White, 1 Black, as the comment names it), from lichess's comments
    (``{ White offers draw }``, a comment block of its own after a move). One before the first move is left out.

    >>> game_offers(b"1. e4 { White offers draw } { [%clk 0:03:00] } e5 2. Qh5 { Black offers draw } *")
    [(0, 0), (2, 1)]
    """
    game = _scan_game(text, 0, len(text)) if b" offers draw" in text else None
    return [] if game is None else game.offers


def game_nags(text: bytes) -> list[tuple[int, int | None]]:
    """The NAGs of the one game ``text`` holds: ``(ply, NAG)`` pairs in the order written (NAG None: over
    NAG_LIMIT). Those written before the first move, after the result or inside a variation are not a main-line
    move's and are left out.

    >>> game_nags(b"1. e4!? $14 e5 (1... c5 $1) 2. Nf3 $256 $99999 *")
    [(0, 5), (0, 14), (2, 256), (2, None)]
    """
    game = _scan_game(text, 0, len(text)) if b"$" in text or b"!" in text or b"?" in text else None
    return [] if game is None else game.nags


# ---------------------------------------------------------------- one game

class _Game:
    """Everything scanned from one game; the two front ends read what they need."""

    __slots__ = ("start", "end", "tags", "moves", "evals", "clocks", "result",
                 "first_ply", "bad", "bad_pos", "moves_field", "filtered", "nags", "offers")

    def __init__(self, start: int) -> None:
        self.start = start
        self.end = start
        self.tags: list[tuple[bytes, bytes]] = []   # (name, raw value) pairs, escapes undone
        self.moves: list[bytes] = []      # SAN tokens as written
        self.evals: list[bytes | None] = []   # per ply: bytes or None
        self.clocks: list[bytes | None] = []  # per ply: seconds text or None
        self.result = b""
        self.first_ply = -1           # ply index the move number before the first move names
        self.bad = ""
        self.bad_pos = -1
        self.moves_field: bytes | None = None  # replaces field 20 when a moves hook rewrote it
        self.filtered = False         # a where_plan dropped it (a bad game is rejected instead)
        self.nags: list[tuple[int, int | None]] = []   # (ply, NAG or None when over NAG_LIMIT) in the order written: the column sink's
        self.offers: list[tuple[int, int]] = []  # (ply, side: 0 White, 1 Black) of each draw-offer comment, in order


def _unescape(raw: bytes) -> bytes:
    if b"\\" not in raw:
        return raw
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == 92 and i + 1 < n and (raw[i + 1] == 34 or raw[i + 1] == 92):
            out.append(raw[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


def _tags_on_line(buf: bytes, pos: int, stop: int, tags: list[tuple[bytes, bytes]]) -> int:
    """Read the tag pairs of one line; return where movetext starts on it (``stop`` if none)."""
    while True:
        while pos < stop and buf[pos] in _WS:
            pos += 1
        if pos >= stop:
            return stop
        if buf[pos] != 91:
            return pos
        w = _wrapper_len(buf, pos, stop)
        if w:
            pos += w        # a forum's [pgn] or [/pgn]
            continue
        here = pos
        pos += 1
        name_start = pos
        while pos < stop and buf[pos] not in b" \t\"]":
            pos += 1
        name = buf[name_start:pos]
        while pos < stop and buf[pos] in _WS:
            pos += 1
        if not name or pos >= stop or buf[pos] != 34:
            raise _Bad("malformed tag", here)
        pos += 1
        value_start = pos
        while True:
            q = buf.find(b'"', pos, stop)
            if q < 0:
                break
            back = q - 1
            while back >= value_start and buf[back] == 92:
                back -= 1
            if (q - 1 - back) % 2 == 0:
                break
            pos = q + 1
        after = _skip_ws(buf, q + 1, stop) if q >= 0 else stop
        if q >= 0 and after < stop and buf[after] == 93:
            pos = after + 1
        elif q >= 0 and after >= stop:
            pos = stop      # an unfinished tag: no ']'
        else:
            q, pos = _loose_value_end(buf, value_start, stop, q)
            if q < 0:
                raise _Bad("malformed tag" if q == -1 else "unterminated tag value", here)
        tags.append((name, _unescape(buf[value_start:q])))


def _skip_ws(buf: bytes, pos: int, stop: int) -> int:
    while pos < stop and buf[pos] in _WS:
        pos += 1
    return pos


def _loose_value_end(buf: bytes, value_start: int, stop: int, q: int) -> tuple[int, int]:
    """Where a tag value that is not closed as the standard says ends, and where reading goes on after
    its tag, as python-chess reads such a line: ``[A "x "y" z"]`` (quotes not escaped) and ``[A "x\\"]``
    end at the first ``"]`` followed by the line's end or another tag; ``[A "x]`` (no closing quote)
    at the line's last ``]``, ``[A "x`` at the line's end, if that value holds no ``[ ] { }`` (else it is
    more likely text run together, a damaged input's, than a tag: ``(-2, -2)``). ``(-1, -1)`` when none
    fits (``q`` is the closing quote found, -1 if none)."""
    k = buf.find(b'"', value_start, stop)
    while k >= 0:
        close = _skip_ws(buf, k + 1, stop)
        if close < stop and buf[close] == 93:
            nxt = _skip_ws(buf, close + 1, stop)
            if nxt >= stop or buf[nxt] == 91:
                return k, close + 1
        k = buf.find(b'"', k + 1, stop)
    if q >= 0:
        return -1, -1
    e = stop
    while e > value_start and buf[e - 1] in _WS:
        e -= 1
    if e > value_start and buf[e - 1] == 93:
        e -= 1
    for c in buf[value_start:e]:
        if c == 91 or c == 93 or c == 123 or c == 125:
            return -2, -2
    return e, stop


# lichess's draw-offer comments (each 17 bytes), trimmed, to the side that offered: 0 White, 1 Black
_OFFERS = {text.encode(): ("white", "black").index(side) for text, side in DRAW_OFFER_COMMENTS.items()}


def _comment(buf: bytes, pos: int, end: int, game: _Game) -> int:
    """Read the brace comment opening at ``pos``; return the index after ``}``."""
    close = buf.find(b"}", pos + 1, end)
    limit = end if close < 0 else close
    if buf.find(b"\n", pos + 1, limit) >= 0:
        boundary = _next_boundary(buf, pos, limit)
        if boundary < limit:
            raise _Bad("unterminated comment", pos)
    if close < 0:
        raise _Bad("unterminated comment", pos)
    ply = len(game.moves) - 1
    if ply >= 0 and close - pos - 1 >= 17:
        side = _OFFERS.get(buf[pos + 1:close].strip(_SPACE), -1)
        if side >= 0:
            game.offers.append((ply, side))
    cmd = buf.find(b"[%", pos + 1, close)
    while cmd >= 0:
        name_end = cmd + 2
        while name_end < close and buf[name_end] not in _SPACE and buf[name_end] != 93:
            name_end += 1
        shut = buf.find(b"]", name_end, close)
        if shut < 0:
            break
        name = buf[cmd + 2:name_end]
        if name == b"clk" or name == b"eval":
            value = buf[name_end:shut].strip(_SPACE)
            if name == b"clk":
                seconds = _clock_seconds(value)
                if seconds is None:
                    raise _Bad("malformed clock '" + _show(value) + "'", cmd)
                if ply >= 0 and game.clocks[ply] is None:
                    game.clocks[ply] = seconds
            else:
                if not _eval_ok(value):
                    raise _Bad("malformed eval '" + _show(value) + "'", cmd)
                if ply >= 0 and game.evals[ply] is None:
                    game.evals[ply] = _eval_value(value)
        cmd = buf.find(b"[%", shut + 1, close)
    return close + 1


def _variation(buf: bytes, pos: int, end: int) -> int:
    """Skip the variation opening at ``pos`` (nested, with comments); return the index after ``)``."""
    depth = 0
    i = pos
    while i < end:
        c = buf[i]
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == 123:
            close = buf.find(b"}", i + 1, end)
            limit = end if close < 0 else close
            if buf.find(b"\n", i + 1, limit) >= 0 and _next_boundary(buf, i, limit) < limit:
                raise _Bad("unterminated variation", pos)
            if close < 0:
                raise _Bad("unterminated variation", pos)
            i = close
        elif c == 59:
            i = _line_end(buf, i, end) - 1
        elif c == 10:
            stop = _line_end(buf, i + 1, end)
            if _is_tag_line(buf, i + 1, stop):
                raise _Bad("unterminated variation", pos)
        i += 1
    raise _Bad("unterminated variation", pos)


def _first_ply(buf: bytes, pos: int, stop: int) -> int:
    """The ply a move number token ``buf[pos:stop]`` names: ``12.`` is 22 (White), ``12...`` 23 (Black).

    -1 when the number is 0 or has more than 9 digits.
    """
    digits = pos
    while digits < stop and 48 <= buf[digits] <= 57:
        digits += 1
    if digits - pos > 9:
        return -1
    number = int(buf[pos:digits])
    if number == 0:
        return -1
    return 2 * (number - 1) + (1 if stop - digits >= 3 else 0)


def _unwrapped(buf: bytes, pos: int, j: int) -> int:
    """The end of the token ``buf[pos:j]`` without a forum's ``[/pgn]`` (or ``[pgn]``) after it
    (``*[/pgn]``); ``pos`` when the token is that wrapper."""
    k = buf.find(b"[", pos, j)
    if k >= 0 and _wrapper_len(buf, k, j) == j - k:
        return k
    return j


def _movetext(buf: bytes, pos: int, end: int, game: _Game) -> int:
    """Scan movetext from ``pos``; return where the game ends, or ``end``.

    A game ends before a tag line outside comments; before a move or move
    number after its result; and, once it has moves, before a line that
    starts with ``1.`` after a blank line (games pasted without tags).
    """
    moves = game.moves
    while pos < end:
        c = buf[pos]
        if c == 32 or c == 9 or c == 13:
            pos += 1
        elif c == 10:
            blank = moves and _ends_blank_line(buf, pos)
            pos += 1
            stop = _line_end(buf, pos, end)
            if _is_tag_line(buf, pos, stop) or (blank and _starts_first_move(buf, pos, stop)):
                return pos
            if pos < end and buf[pos] == 37:  # '%' escape line
                pos = stop
        elif c == 123:
            pos = _comment(buf, pos, end, game)
        elif c == 40:
            # A variation needs a move to vary; before the first, a '(' is stray, as a ')' with none open.
            pos = _variation(buf, pos, end) if moves else pos + 1
        elif c == 59:
            pos = _line_end(buf, pos, end)
        elif c == 36:  # '$' NAG
            j = pos + 1
            while j < end and 48 <= buf[j] <= 57:
                j += 1
            if j == pos + 1:
                raise _Bad("malformed NAG", pos)
            if moves and not game.result:
                game.nags.append((len(moves) - 1, _nag_value(buf[pos + 1:j])))
            pos = j
        elif c == 41:
            pos += 1
        elif c == 125:
            raise _Bad("unexpected '}'", pos)
        else:
            j = pos
            while j < end and buf[j] not in _DELIMS:
                j += 1
            j = _unwrapped(buf, pos, j)
            if j == pos:
                pos += _wrapper_len(buf, pos, end)      # a forum's [/pgn] after the moves
                continue
            tok = buf[pos:j]
            if c == 42 or tok == b"1-0" or tok == b"0-1" or tok == b"1/2-1/2" or tok in _DASH_RESULTS:
                if tok != b"*" and c == 42:
                    raise _Bad("invalid move token '" + _show(tok) + "'", pos)
                if not game.result:
                    game.result = _DASH_RESULTS.get(tok, tok)
                pos = j
                continue
            if 48 <= c <= 57 and not _castling_len(tok, 48):
                if game.result:
                    return pos      # a move number after the result starts the next game
                k = pos
                while k < j and 48 <= buf[k] <= 57:
                    k += 1
                while k < j and buf[k] == 46:
                    k += 1
                if k < j and 48 <= buf[k - 1] <= 57:
                    raise _Bad("invalid move token '" + _show(tok) + "'", pos)
                if not moves:
                    game.first_ply = _first_ply(buf, pos, k)
                pos = k
                continue
            if _stands_apart(tok):
                # an annotation or glyph apart from its move ("e4 !?", "e4 +-", "exf6 e.p."), Crafty's "...":
                # after a move number and before any move, "..." says Black moves first
                if not moves and game.first_ply >= 0 and game.first_ply % 2 == 0 and tok.strip(b".") == b"":
                    game.first_ply += 1
                elif moves and not game.result and tok in _GLYPH_NAGS:
                    game.nags.append((len(moves) - 1, _GLYPH_NAGS[tok]))
                pos = j
                continue
            if game.result:
                return pos          # so does a move
            m = _move_len(tok)
            if not m:
                raise _Bad("invalid move token '" + _show(tok) + "'", pos)
            moves.append(tok[:m])
            game.evals.append(None)
            game.clocks.append(None)
            if tok[m - 1] == 33 or tok[m - 1] == 63:    # '!' '?': a glyph in the move's token ("e4!?")
                game.nags.append((len(moves) - 1, _glyph_nag(tok[:m])))
            pos = j
    return end


def _skip_movetext(buf: bytes, pos: int, end: int, game: _Game) -> int:
    """_movetext without reading moves: return where the game ends, as _movetext does for a good game.

    Tokens are classed (move number, result, annotation, anything else is a
    move) but not checked; comments and variations are skipped with
    _movetext's rules, so an unterminated comment or variation and a stray
    ``}`` still end the game where the full read ends it, as a bad game.
    """
    moves = False
    while pos < end:
        c = buf[pos]
        if c == 32 or c == 9 or c == 13:
            pos += 1
        elif c == 10:
            blank = moves and _ends_blank_line(buf, pos)
            pos += 1
            stop = _line_end(buf, pos, end)
            if _is_tag_line(buf, pos, stop) or (blank and _starts_first_move(buf, pos, stop)):
                return pos
            if pos < end and buf[pos] == 37:  # '%' escape line
                pos = stop
        elif c == 123:
            pos = _skip_comment(buf, pos, end)
        elif c == 40:
            pos = _variation(buf, pos, end) if moves else pos + 1
        elif c == 59:
            pos = _line_end(buf, pos, end)
        elif c == 36:  # '$' NAG, not checked
            pos += 1
            while pos < end and 48 <= buf[pos] <= 57:
                pos += 1
        elif c == 41:
            pos += 1
        elif c == 125:
            raise _Bad("unexpected '}'", pos)
        else:
            j = pos
            while j < end and buf[j] not in _DELIMS:
                j += 1
            j = _unwrapped(buf, pos, j)
            if j == pos:
                pos += _wrapper_len(buf, pos, end)
                continue
            tok = buf[pos:j]
            if tok == b"*" or tok == b"1-0" or tok == b"0-1" or tok == b"1/2-1/2" or tok in _DASH_RESULTS:
                if not game.result:
                    game.result = _DASH_RESULTS.get(tok, tok)
                pos = j
                continue
            if 48 <= c <= 57 and not _castling_len(tok, 48):
                if game.result:
                    return pos      # a move number after the result starts the next game
                k = pos
                while k < j and 48 <= buf[k] <= 57:
                    k += 1
                while k < j and buf[k] == 46:
                    k += 1
                pos = k
                continue
            if _stands_apart(tok):
                pos = j
                continue
            if game.result:
                return pos          # so does a move
            moves = True
            pos = j
    return end


def _skip_comment(buf: bytes, pos: int, end: int) -> int:
    """_comment without reading its commands: the index after ``}``."""
    close = buf.find(b"}", pos + 1, end)
    limit = end if close < 0 else close
    if buf.find(b"\n", pos + 1, limit) >= 0:
        boundary = _next_boundary(buf, pos, limit)
        if boundary < limit:
            raise _Bad("unterminated comment", pos)
    if close < 0:
        raise _Bad("unterminated comment", pos)
    return close + 1


def _scan_game(buf: bytes, pos: int, end: int, where: _Where | None = None, headers: bool = False) -> _Game | None:
    """Scan the game whose first line starts at or after ``pos``; None if only blank lines remain.

    ``where`` (a where_plan) drops a game whose tags it refuses before its
    movetext is read (``game.filtered``; the movetext is skipped by
    _skip_movetext), and one whose moves it refuses after. ``headers``:
    skip the movetext of every game (unless ``where`` needs it).
    """
    while pos < end:
        stop = _line_end(buf, pos, end)
        if not (_is_blank(buf, pos, stop) or buf[pos] == 37 or _wrapper_line(buf, pos, stop)):
            break       # (a '%' escape line or a forum's [/pgn] is no game's)
        pos = stop + 1
    if pos >= end:
        return None
    game = _Game(pos)
    try:
        while True:
            stop = _line_end(buf, pos, end)
            if buf[pos] == 37:  # an escape line among the tags
                pos = stop + 1
                if pos >= end:
                    break
                continue
            if not _is_tag_line(buf, pos, stop):
                break
            rest = _tags_on_line(buf, pos, stop, game.tags)
            if rest < stop:
                pos = rest
                break
            pos = stop + 1
            if pos >= end:
                break
        skip = headers
        if where is not None:
            if not where.keep_tags(game.tags, False):
                game.filtered = True
                skip = True
            elif where.needs_moves:
                skip = False
        if pos >= end:
            game.end = end
        elif skip:
            game.end = _skip_movetext(buf, pos, end, game)
        else:
            game.end = _movetext(buf, pos, end, game)
        if not game.filtered and not skip and where is not None and not where.keep_moves(
                len(game.moves), game.evals.count(None) < len(game.evals), game.clocks.count(None) < len(game.clocks)):
            game.filtered = True
    except _Bad as bad:
        game.bad = bad.reason
        game.bad_pos = bad.pos
        game.end = _next_boundary(buf, bad.pos, end)
        return game
    nul = buf.find(b"\0", game.start, game.end)
    if nul >= 0:    # a stray NUL (binary data) rejects its game, not the input (fastpgn.io.sources.check_pgn)
        game.bad = _NUL_REASON
        game.bad_pos = nul
    return game


_NUL_REASON = "NUL byte in the game (binary data)"


def _first(buf: bytes, start: int, end: int, at_stream_start: bool) -> int:
    if at_stream_start and buf.startswith(_BOM, start, end):
        return start + 3
    return start


def _as_bytes(buf: Buffer) -> bytes:
    """The block as bytes (the compiled kernel reads any bytes-like object in place)."""
    return buf if type(buf) is bytes else bytes(buf)


# -- the last game of an input: what its text ends inside (fastpgn.io.blocks: a plain input cut short) --

def last_game(data: Buffer, start: int, end: int, *, at_stream_start: bool = True) -> tuple[int, str]:
    """Where the last game of ``data[start:end]`` starts, and what the text ends inside.

    The games are those the scanner reads (tags read, movetext skipped as
    headers_from_block skips it). The second item is ``"comment"`` or
    ``"variation"`` when the text ends inside an unterminated one,
    ``"movetext"`` when no result (``1-0``, ``0-1``, ``1/2-1/2``, ``*``, or
    one written with other dashes) ends the game, and ``""`` when one does,
    or when a stray ``}`` or a NUL rejects the game anyway. ``(-1, "")``
    when only blank lines remain. (A game of tags alone is ``"movetext"``
    too: whether it is one is the caller's to tell.)

    >>> last_game(b"1. e4 *\\n\\n[Event \\"b\\"]\\n\\n1. d4 d5\\n", 0, 33), last_game(b"1. e4 1-0 {end}", 0, 15)
    ((9, 'movetext'), (0, ''))
    >>> last_game(b"1. e4 { [%clk 0:0", 0, 17), last_game(b"1. e4 e5 1-0 2. d4", 0, 18)
    ((0, 'comment'), (13, 'movetext'))
    """
    buf = _as_bytes(data)
    if start < 0 or start > len(buf):
        raise ValueError(f"start {start} is outside the data ({len(buf)} bytes)")
    end = min(end, len(buf))
    pos = _first(buf, start, end, at_stream_start)
    last = None
    while True:
        game = _scan_game(buf, pos, end, None, True)
        if game is None:
            break
        last = game
        pos = game.end
    if last is None:
        return -1, ""
    if last.bad == "unterminated comment":
        return last.start, "comment"
    if last.bad == "unterminated variation":
        return last.start, "variation"
    return last.start, "" if last.result or last.bad else "movetext"
