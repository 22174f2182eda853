"""Pure-Python twin of the scanner kernel (fastpgn._scan_cy): same functions, same order, same errors.

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
  promotion with or without ``=``, ``+``/``#``, ``!``/``?`` annotations, drops,
  null moves), results (``1-0``, ``0-1``, ``1/2-1/2``, ``*``), brace comments
  (``[%eval ...]`` and ``[%clk H:MM:SS[.f]]`` are read, everything else is
  skipped), ``;`` comments, NAGs ``$n`` and variations ``( ... )`` (skipped,
  nested; a ``(`` before the first move and a ``)`` with no variation open
  are stray and ignored, as python-chess does). A ``%`` in the first column
  escapes the line.
* UTF-8 BOM at the start of the stream, CRLF line ends and a missing final
  newline are accepted.

A bad game is reported as ``(reason, error_offset, game_number, start, end)``
with the whole of its raw text between ``start`` and ``end``; the next game
parses. The Cython twin mirrors every function below in the same order, up to
the fast path.

Headers only (headers_from_block) and filters (a where_plan passed to any
front end): _scan_game reads the tag section as always, then, for a game
whose tags a filter refuses or for every game when reading headers only,
skips its movetext with _skip_movetext, which follows _movetext's game
boundaries (comments, variations, results, ``1.`` after a blank line)
without reading moves, clocks or evals: a refused game is never built. A
bad tag still rejects a game; so do the movetext errors that decide where
it ends (unterminated comment or variation, stray ``}``); other movetext
errors go unnoticed in a skipped movetext.

The fast path (the section after _scan_game; pure Python only) reads a game
written the way lichess writes them (tag lines ``[Name "value"]``, a blank
line, the movetext on one line, ``{ [%eval ...] [%clk ...] }`` comments)
with whole-string bytes operations and caches of tokens the exact functions
already accepted, ten times faster than the byte walk; anything it does not
recognise with certainty, it hands back, and the game is scanned again from
its first byte by _scan_game, which alone reports errors. The Cython twin has
no such second path: it walks bytes at C speed, with a few shortcuts inside
the mirrored functions for lichess's commonest shapes (_plain_tag_line for a
tag line, _quick_san for the commonest moves, _lichess_comment for comments,
with a one-word test of ``{ [%clk H:MM:SS] }``), each reading to the same
spans as the general code beside it. The differential tests
(tests/test_differential.py against the Cython twin, where every byte of
those shapes is replaced by each of 256 values; tests/test_scan_py_fastpath.py
against the byte walk) hold all of them to the same lines, records and errors.
"""

from __future__ import annotations

from operator import itemgetter

SEP = "\u2502".encode()
# Pure Python holds the GIL: the converter gives this backend worker processes, not threads.
RELEASES_GIL = False
REPLAYS_WITHOUT_GIL = False
_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r"
_SPACE = b" \t\r\n"
_FILES = b"abcdefgh"
_RANKS = b"12345678"
_PIECES = b"KQRBNP"
_PROMO = b"QRBNK"
_DELIMS = frozenset(b" \t\r\n{}();$")

_RESULT_CODE = {b"1-0": b"W", b"0-1": b"B", b"1/2-1/2": b"D"}
_TERMINATION_CODE = {
    b"Normal": b"N",
    b"Time forfeit": b"T",
    b"Abandoned": b"A",
    b"Unterminated": b"U",
    b"Rules infraction": b"R",
}

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
    """First line start after ``pos`` where a blank line is followed by a tag line; else ``end``."""
    blank = False
    nl = buf.find(b"\n", pos, end)
    while nl >= 0:
        start = nl + 1
        stop = _line_end(buf, start, end)
        if blank and _is_tag_line(buf, start, stop):
            return start
        blank = _is_blank(buf, start, stop)
        if stop >= end:
            return end
        nl = stop
    return end


# ---------------------------------------------------------------- tokens

def _san_ok(tok: bytes) -> bool:
    """Lexical SAN check: shapes found in real PGN, not legality."""
    n = len(tok)
    i = 0
    if tok == b"--" or tok == b"Z0":
        return True
    c = tok[0]
    if c == 79 or c == 48:  # 'O' or '0': castling
        if n < 3 or tok[1] != 45 or tok[2] != c:
            return False
        i = 3
        if i + 1 < n and tok[i] == 45 and tok[i + 1] == c:
            i += 2
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
    if not value:
        return False
    for c in value:
        if not (48 <= c <= 57 or c == 46 or c == 35 or c == 45 or c == 43 or c == 44):
            return False
    return True


# ---------------------------------------------------------------- one game

class _Game:
    """Everything scanned from one game; the two front ends read what they need."""

    __slots__ = ("start", "end", "tags", "moves", "evals", "clocks", "result",
                 "first_ply", "bad", "bad_pos", "moves_field", "filtered")

    def __init__(self, start: int) -> None:
        self.start = start
        self.end = start
        self.tags: list = []          # (name, raw value) pairs, escapes undone
        self.moves: list = []         # SAN tokens as written
        self.evals: list = []         # per ply: bytes or None
        self.clocks: list = []        # per ply: seconds text or None
        self.result = b""
        self.first_ply = -1           # ply index the move number before the first move names
        self.bad = ""
        self.bad_pos = -1
        self.moves_field = None       # replaces field 20 when a moves hook rewrote it
        self.filtered = False         # a where_plan dropped it (a bad game is rejected instead)


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


def _tags_on_line(buf: bytes, pos: int, stop: int, tags: list) -> int:
    """Read the tag pairs of one line; return where movetext starts on it (``stop`` if none)."""
    while True:
        while pos < stop and buf[pos] in _WS:
            pos += 1
        if pos >= stop:
            return stop
        if buf[pos] != 91:
            return pos
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
                raise _Bad("unterminated tag value", here)
            back = q - 1
            while back >= value_start and buf[back] == 92:
                back -= 1
            if (q - 1 - back) % 2 == 0:
                break
            pos = q + 1
        value = _unescape(buf[value_start:q])
        pos = q + 1
        while pos < stop and buf[pos] in _WS:
            pos += 1
        if pos >= stop or buf[pos] != 93:
            raise _Bad("malformed tag", here)
        pos += 1
        tags.append((name, value))


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
                    game.evals[ply] = value
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
            pos = j
        elif c == 41:
            pos += 1
        elif c == 125:
            raise _Bad("unexpected '}'", pos)
        else:
            j = pos
            while j < end and buf[j] not in _DELIMS:
                j += 1
            tok = buf[pos:j]
            if c == 42 or tok == b"1-0" or tok == b"0-1" or tok == b"1/2-1/2":
                if tok != b"*" and c == 42:
                    raise _Bad("invalid move token '" + _show(tok) + "'", pos)
                if not game.result:
                    game.result = tok
                pos = j
                continue
            if 48 <= c <= 57 and not tok.startswith(b"0-0"):
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
            if tok.strip(b"!?") == b"" and len(tok) <= 2:
                pos = j             # an annotation standing apart from its move: "e4 !?"
                continue
            if game.result:
                return pos          # so does a move
            if not _san_ok(tok):
                raise _Bad("invalid move token '" + _show(tok) + "'", pos)
            moves.append(tok)
            game.evals.append(None)
            game.clocks.append(None)
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
            tok = buf[pos:j]
            if tok == b"*" or tok == b"1-0" or tok == b"0-1" or tok == b"1/2-1/2":
                if not game.result:
                    game.result = tok
                pos = j
                continue
            if 48 <= c <= 57 and not tok.startswith(b"0-0"):
                if game.result:
                    return pos      # a move number after the result starts the next game
                k = pos
                while k < j and 48 <= buf[k] <= 57:
                    k += 1
                while k < j and buf[k] == 46:
                    k += 1
                pos = k
                continue
            if tok.strip(b"!?") == b"" and len(tok) <= 2:
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


def _scan_game(buf: bytes, pos: int, end: int, where=None, headers: bool = False) -> _Game | None:
    """Scan the game whose first line starts at or after ``pos``; None if only blank lines remain.

    ``where`` (a where_plan) drops a game whose tags it refuses before its
    movetext is read (``game.filtered``; the movetext is skipped by
    _skip_movetext), and one whose moves it refuses after. ``headers``:
    skip the movetext of every game (unless ``where`` needs it).
    """
    while pos < end:
        stop = _line_end(buf, pos, end)
        if not _is_blank(buf, pos, stop):
            break
        pos = stop + 1
    if pos >= end:
        return None
    game = _Game(pos)
    try:
        while True:
            stop = _line_end(buf, pos, end)
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


# ---------------------------------------------------------------- filters
#
# fastpgn.filters.Where compiles to a spec of plain values (where_spec);
# where_plan turns the spec into what the kernel reads. A game's tags are
# tested when its tag section is read, before its movetext: a game they
# refuse is never built, its movetext only skipped (_skip_movetext).

ELO_WHITE, ELO_BLACK, ELO_BOTH, ELO_EITHER = range(4)
TAG_EQUAL, TAG_FOLD, TAG_PREFIX = range(3)
SPEEDS = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")
# lichess (scalachess Speed): estimated seconds = base + 40 x increment; the
# upper bounds, exclusive, of ultraBullet, bullet, blitz, rapid, classical.
SPEED_LIMITS = (30, 180, 480, 1500, 21600)


def _ascii_lower(value):
    """``value`` (bytes or str) with A-Z lowered, nothing else."""
    if isinstance(value, bytes):
        return value.lower()
    return value.lower() if value.isascii() else value.encode().lower().decode()


def _digits(value) -> int:
    """The number 1 to 9 ASCII digits say, else -1."""
    if 0 < len(value) <= 9 and value.isdigit() and value.isascii():
        return int(value)
    return -1


def speed_bit(time_control) -> int:
    """The bit (1 << index in SPEEDS) of lichess's speed for a TimeControl value; 0 if it names none."""
    if time_control == b"-" or time_control == "-":
        return 32
    plus = b"+" if isinstance(time_control, bytes) else "+"
    parts = time_control.split(plus)
    if len(parts) != 2:
        return 0
    base = _digits(parts[0])
    increment = _digits(parts[1])
    if base < 0 or increment < 0:
        return 0
    seconds = base + 40 * increment
    bit = 1
    for limit in SPEED_LIMITS:
        if seconds < limit:
            return bit
        bit <<= 1
    return bit


def _well_formed_date(value) -> bool:
    """``YYYY.MM.DD`` with ASCII digits (what a date range compares)."""
    if len(value) != 10 or not value.isascii():
        return False
    for i in (0, 1, 2, 3, 5, 6, 8, 9):
        if not value[i:i + 1].isdigit():
            return False
    return value[4:5] in (b".", ".") and value[7:8] in (b".", ".")


class _Where:
    """A where_spec as the pure kernel reads it: the same tests on bytes (lines) or str (records)."""

    __slots__ = ("elo_mode", "min_elo", "max_elo", "speeds", "dates", "tests", "min_plies", "max_plies",
                 "evals", "clocks", "needs_moves", "spec")

    def __init__(self, spec: tuple) -> None:
        (self.elo_mode, self.min_elo, self.max_elo, self.speeds, since, until, tests, self.evals, self.clocks,
         self.min_plies, self.max_plies) = spec
        self.spec = spec
        self.dates = None
        if since is not None or until is not None:
            self.dates = ((since, until), (None if since is None else since.decode(),
                                           None if until is None else until.decode()))
        self.tests = (tests, tuple(
            (tuple(n.decode() for n in names), kind, tuple(v.decode() for v in values),
             None if default is None else default.decode())
            for names, kind, values, default in tests))
        self.needs_moves = bool(self.evals or self.clocks or self.min_plies >= 0 or self.max_plies >= 0)

    def __reduce__(self):
        return (_Where, (self.spec,))

    def keep_tags(self, tags, text: bool) -> bool:
        """Whether a game with these ``(name, value)`` pairs (the last of a name counts) passes the tag tests."""
        d = dict(tags)
        if self.elo_mode >= 0:
            white = _digits(d.get("WhiteElo" if text else b"WhiteElo", ""))
            black = _digits(d.get("BlackElo" if text else b"BlackElo", ""))
            lo, hi = self.min_elo, self.max_elo
            ok_white = white >= 0 and lo <= white and (hi < 0 or white <= hi)
            ok_black = black >= 0 and lo <= black and (hi < 0 or black <= hi)
            mode = self.elo_mode
            if not (ok_white if mode == ELO_WHITE else ok_black if mode == ELO_BLACK
                    else ok_white and ok_black if mode == ELO_BOTH else ok_white or ok_black):
                return False
        if self.speeds:
            tc = d.get("TimeControl" if text else b"TimeControl")
            if tc is None or not speed_bit(tc) & self.speeds:
                return False
        if self.dates is not None:
            since, until = self.dates[text]
            date = d.get("UTCDate" if text else b"UTCDate")
            if date is None:
                date = d.get("Date" if text else b"Date")
            if (date is None or not _well_formed_date(date) or (since is not None and date < since)
                    or (until is not None and date > until)):
                return False
        for names, kind, values, default in self.tests[text]:
            for name in names:
                value = d.get(name, default)
                if value is None:
                    continue
                if kind == TAG_EQUAL:
                    if value in values:
                        break
                elif kind == TAG_FOLD:
                    if _ascii_lower(value) in values:
                        break
                elif value.startswith(values):
                    break
            else:
                return False
        return True

    def keep_moves(self, plies: int, has_evals: bool, has_clocks: bool) -> bool:
        """Whether a game read in full passes the movetext tests."""
        return ((not self.evals or has_evals) and (not self.clocks or has_clocks)
                and plies >= self.min_plies and (self.max_plies < 0 or plies <= self.max_plies))


def where_plan(spec):
    """A filter spec (fastpgn.filters.Where.spec()) as the kernel reads it; None stays None.

    Make it once per run, as opening_table: the compiled kernel copies the
    spec into C arrays it reads without the GIL.
    """
    return spec if spec is None or isinstance(spec, _Where) else _Where(spec)


# ---------------------------------------------------------------- fast path (pure Python only)
#
# lichess writes every game alike: one [Name "value"] per line, a blank line,
# the movetext on one line, single spaces between tokens, comments only
# { [%eval x] [%clk h:mm:ss] }. Looking at that one byte at a time, as the
# functions above do, costs CPython ten times more than cutting it with
# split/join/count and looking tokens up in caches of tokens that the exact
# functions above already accepted (_learn_*). So the front ends first try
# _fast_game, which recognises that shape or returns None; on None they scan
# the game again from its first byte with _scan_game. The fast path never
# reports an error and never decides a boundary _scan_game would not: it only
# accepts text on which _scan_game's answer is certain. The Cython twin has no
# fast path and needs none; tests/test_scan_py_fastpath.py compares the two
# paths on mutated real games.

_RESULT_TOKENS = frozenset((b"1-0", b"0-1", b"1/2-1/2", b"*"))
_CACHE_LIMIT = 200_000   # a cache that grows past this (hostile input) starts again
_SAN = set()             # tokens _movetext reads as SAN moves
_NUMBERS = {}            # move number tokens ("12.", "12...") -> the ply _first_ply gives
_NUMBER_SET = set()      # the same tokens, for set operations
_EVALS = {}              # "0.17]" (the token before "}") -> "0.17"
_CLOCKS = {}             # "0:03:00]" -> b"180"
_DAY_SECONDS = {}        # UTCTime value -> _seconds_of_day(value)
_COUNTS = [str(n).encode() for n in range(1000)]
_WHITE_NUMBERS = [b"%d." % n for n in range(1, 1000)]                   # 1. 2. 3. ...
_PLY_NUMBERS = [b"%d%s" % (n // 2 + 1, b"..." if n % 2 else b".") for n in range(1998)]  # 1. 1... 2.
_LAYOUTS = {  # (4th token, 6th token) -> (tokens a ply, index of the eval value, of the clock value)
    (b"[%eval", b"[%clk"): (8, 4, 6),
    (b"[%clk", b"}"): (6, 0, 4),
    (b"[%eval", b"}"): (6, 4, 0),
}
_TAG_LAYOUTS = {}        # a tag section's text outside the quotes -> its names
_TAG_LAYOUTS_TEXT = {}   # the same in str (apart: b"x" and "x" hash alike)
_LINE_PLANS = {}         # a _TAG_LAYOUTS key -> an itemgetter of _fast_line's tag values
_ECO_FIELDS = {}         # a code from the openings map -> _field(code)


def _learn_san(tok: bytes) -> bool:
    """Whether _movetext reads ``tok`` as a valid SAN move; remember it if so."""
    c = tok[0] if tok else 42
    if (48 <= c <= 57 and not tok.startswith(b"0-0")) or c == 42 or not _san_ok(tok):
        return False
    if len(_SAN) > _CACHE_LIMIT:
        _SAN.clear()
    _SAN.add(tok)
    return True


def _learn_number(tok: bytes) -> bool:
    """Whether _movetext reads ``tok`` whole as a move number (digits, then dots); remember it if so."""
    digits = tok.rstrip(b".")
    if not digits.isdigit() or tok.startswith(b"0-0"):
        return False
    if len(_NUMBERS) > _CACHE_LIMIT:
        _NUMBERS.clear()
        _NUMBER_SET.clear()
    _NUMBERS[tok] = _first_ply(tok, 0, len(tok))
    _NUMBER_SET.add(tok)
    return True


def _learn_eval(raw: bytes):
    """``raw`` is ``value]``: the value _comment reads for ``[%eval value]``, or None."""
    value = raw[:-1]
    if raw[-1:] != b"]" or not _eval_ok(value):
        return None
    if len(_EVALS) > _CACHE_LIMIT:
        _EVALS.clear()
    _EVALS[raw] = value
    return value


def _learn_clock(raw: bytes):
    """``raw`` is ``H:MM:SS]``: the seconds _comment reads for ``[%clk H:MM:SS]``, or None."""
    value = raw[:-1]
    seconds = _clock_seconds(value) if raw[-1:] == b"]" else None
    if seconds is None:  # (digits, ':' and '.' only, when not None)
        return None
    if len(_CLOCKS) > _CACHE_LIMIT:
        _CLOCKS.clear()
    _CLOCKS[raw] = seconds
    return seconds


def _all_known(known, toks, learn) -> bool:
    """Whether every token is in ``known`` or ``learn`` accepts it."""
    if known.issuperset(toks):
        return True
    for tok in toks:
        if tok not in known and not learn(tok):
            return False
    return True


def _values(cache: dict, raws: list, learn):
    """The cached values of ``raws`` (a tuple; learning new ones), or None if one is not valid."""
    try:
        return itemgetter(*raws)(cache) if len(raws) > 1 else (cache[raws[0]],)
    except KeyError:
        pass
    values = []
    for raw in raws:
        value = cache.get(raw)
        if value is None:
            value = learn(raw)
            if value is None:
                return None
        values.append(value)
    return tuple(values)


def _learn_tag_layout(key):
    """The names of a tag section whose text outside the quotes is ``key``, if plain; else None.

    Plain: ``[Name "`` then ``"]\n[Name "`` per line, then ``"]``: one space
    before each value, names without spaces, tabs, CR, LF, quotes, ``]``,
    backslashes (what _tags_on_line reads as one pair per line). ``key`` and
    the names are both bytes or both str.
    """
    text = isinstance(key, str)
    parts = (key.encode() if text else key).split(b'"')
    if len(parts) < 2 or parts[-1] != b"]":
        return None
    names = []
    for i, part in enumerate(parts[:-1]):
        head = 1 if i == 0 else 3
        name = part[head:-1]
        if (part[:head] != (b"[" if i == 0 else b"]\n[") or part[-1:] != b" " or not name
                or name.translate(None, b' \t\r\n"]\\') != name):
            return None
        names.append(name.decode() if text else name)
    known = _TAG_LAYOUTS_TEXT if text else _TAG_LAYOUTS
    if len(known) > _CACHE_LIMIT:
        known.clear()
    names = known[key] = tuple(names)
    return names


def _fast_tags(t: bytes, text: bool):
    """``(pieces, key, names)`` of a tag section of one ``[Name "value"]`` per line, or None.

    ``t`` starts with ``[``. ``pieces`` is ``t`` cut at the quotes, so the
    values are ``pieces[1::2]``, and ``key`` the text outside the quotes
    (what _learn_tag_layout checks once per distinct key); with ``text``,
    all three are str (None when ``t`` is not UTF-8). Quotes, backslashes,
    CR or LF in values, several pairs on a line or any other spacing give
    None.
    """
    if b"\\" in t or b"\r" in t:
        return None
    if text:
        try:
            t = t.decode("utf-8")
        except UnicodeDecodeError:
            return None
        quote, newline, known = '"', "\n", _TAG_LAYOUTS_TEXT
    else:
        quote, newline, known = b'"', b"\n", _TAG_LAYOUTS
    pieces = t.split(quote)
    if not len(pieces) & 1:
        return None
    key = quote.join(pieces[::2])
    names = known.get(key) or _learn_tag_layout(key)
    # Each joint holds one LF: no more anywhere, so no value spans lines.
    if names is None or t.count(newline) != len(names) - 1:
        return None
    return pieces, key, names


def _fast_tokens(toks: list, i: int, moves: list, evals: list, clocks: list, first_ply: int):
    """_movetext over single-spaced tokens from ``toks[i]``: numbers, SAN, eval/clock comments.

    Appends to ``moves``/``evals``/``clocks``; returns the first ply, or None
    for any other token (results included: the caller took the last one off).
    """
    n = len(toks)
    while i < n:
        tok = toks[i]
        i += 1
        if tok in _SAN:
            moves.append(tok)
            evals.append(None)
            clocks.append(None)
        elif tok in _NUMBERS:
            if not moves:
                first_ply = _NUMBERS[tok]
        elif tok == b"{":
            ply = len(moves) - 1
            while True:
                if i >= n:
                    return None
                tok = toks[i]
                if tok == b"}":
                    i += 1
                    break
                if i + 1 >= n:
                    return None
                raw = toks[i + 1]
                i += 2
                if tok == b"[%eval":
                    value = _EVALS.get(raw) or _learn_eval(raw)
                    if value is None:
                        return None
                    if ply >= 0 and evals[ply] is None:
                        evals[ply] = value
                elif tok == b"[%clk":
                    value = _CLOCKS.get(raw) or _learn_clock(raw)
                    if value is None:
                        return None
                    if ply >= 0 and clocks[ply] is None:
                        clocks[ply] = value
                else:
                    return None
        elif tok == b"":  # two spaces
            continue
        elif _learn_san(tok):
            moves.append(tok)
            evals.append(None)
            clocks.append(None)
        elif _learn_number(tok):
            if not moves:
                first_ply = _NUMBERS[tok]
        else:
            return None
    return first_ply


def _first_number(numbers: list, expected: list):
    """The ply the first of ``numbers`` names if all are move numbers, else None.

    ``expected`` is lichess's own numbering from move 1 (compared, not hashed).
    """
    if numbers == expected[:len(numbers)]:
        return 0
    if _all_known(_NUMBER_SET, numbers, _learn_number):
        return _first_ply(numbers[0], 0, len(numbers[0]))
    return None


def _fast_movetext(m: bytes):
    """``(moves, evals, clocks, result, first_ply, mixed)`` of one movetext line, or None.

    ``evals``/``clocks`` are None when no ply has one, else one entry per
    ply; an entry is None (a ply without one) only where ``mixed`` is true.
    The lichess layouts are cut with list slices: ``1. e4 e5 2. Nf3`` (3
    tokens a move pair), ``1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5``
    (8 a ply) and ``{ [%clk ...] }`` or ``{ [%eval ...] }`` (6); a short
    tail or any other mix goes through _fast_tokens. The last token must be
    the result, and may be the only one.
    """
    toks = m.split(b" ")
    result = toks.pop()
    count = len(toks)
    if result not in _RESULT_TOKENS:
        return None
    if not toks:  # a game lost before its first move: only the result
        return toks, None, None, result, -1, False
    if count < 3 or toks[2] != b"{":
        first_ply = _first_number(toks[::3], _WHITE_NUMBERS)
        if first_ply is None:
            return _fast_any(toks, result)
        del toks[::3]
        if _all_known(_SAN, toks, _learn_san):
            return toks, None, None, result, first_ply, False
        return _fast_any(m.split(b" ")[:-1], result)
    layout = _LAYOUTS.get((toks[3], toks[5])) if count > 5 else None
    if layout is None or count < layout[0]:
        return _fast_any(toks, result)
    period, eval_at, clock_at = layout
    plies = count // period
    body = toks if plies * period == count else toks[:plies * period]
    if not (body[2::period].count(b"{") == plies and body[period - 1::period].count(b"}") == plies
            and body[3::period].count(toks[3]) == plies
            and (period == 6 or body[5::period].count(b"[%clk") == plies)):
        return _fast_any(toks, result)
    first_ply = _first_number(body[::period], _PLY_NUMBERS)
    moves = body[1::period]
    if first_ply is None or not _all_known(_SAN, moves, _learn_san):
        return _fast_any(toks, result)
    evals = _values(_EVALS, body[eval_at::period], _learn_eval) if eval_at else None
    clocks = _values(_CLOCKS, body[clock_at::period], _learn_clock) if clock_at else None
    if (eval_at and evals is None) or (clock_at and clocks is None):
        return None  # a value _comment rejects: the byte walk reports it
    if plies * period == count:
        return moves, evals, clocks, result, first_ply, False
    # A short tail (a last move without its eval, say): token by token.
    evals = [None] * plies if evals is None else list(evals)
    clocks = [None] * plies if clocks is None else list(clocks)
    first_ply = _fast_tokens(toks, plies * period, moves, evals, clocks, first_ply)
    return None if first_ply is None else (moves, evals, clocks, result, first_ply, True)


def _fast_any(toks: list, result: bytes):
    """_fast_movetext's answer for a token list no layout fits: _fast_tokens from the start."""
    moves, evals, clocks = [], [], []
    first_ply = _fast_tokens(toks, 0, moves, evals, clocks, -1)
    return None if first_ply is None else (moves, evals, clocks, result, first_ply, True)


def _fast_shape(buf: bytes, pos: int, end: int):
    """``(blank, start, stop, game_end)`` of the game at ``pos`` if it has _fast_game's layout, else None.

    The layout: a tag section up to the first blank line (at ``blank``), one
    movetext line ``buf[start:stop]``, then the end of the block, or
    newlines and the next game's ``[`` (at ``game_end``).
    """
    blank = buf.find(b"\n\n", pos, end)
    if blank < 0:
        return None
    start = blank + 2
    stop = buf.find(b"\n", start, end)
    if stop < 0:
        stop = game_end = end
    elif buf.startswith(b"\n\n[", stop, end):
        game_end = stop + 2
    else:
        game_end = stop
        while game_end < end and buf[game_end] == 10:
            game_end += 1
        if game_end < end and buf[game_end] != 91:
            return None
    return blank, start, stop, game_end


def _fast_game(buf: bytes, pos: int, end: int, text: bool):
    """The game at ``pos`` (a ``[``) if it has lichess's shape, else None.

    Returns ``(end, tags_end, tags, scan)``: where the game ends (as
    _scan_game's ``end``), where its tag section ends, and _fast_tags's and
    _fast_movetext's answers.

    The shape: tag lines, one blank line, one movetext line, then the end
    of the block, or newlines and the next game's ``[``.
    """
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], text)
    if tags is None:
        return None
    scan = _fast_movetext(buf[start:stop])
    if scan is None:
        return None
    return game_end, blank, tags, scan


_NOT_BRACES = bytes(c for c in range(256) if c not in b"{}")
_BRACE_PAIRS = b"{}" * 4096


def _fast_skips(buf: bytes, start: int, stop: int):
    """The result token _skip_movetext reads on movetext line ``buf[start:stop]`` of _fast_shape's layout
    (``b""`` for none), if it reads the line to its end without error; else None.

    Certain when: the line does not start a tag line or an escape, its braces
    pair up in order (no comment spans lines, no stray ``}``), it has no
    variation or ``;`` comment, and no result token can stand before its last
    token (no ``1-0``, ``0-1``, ``1/2``, ``*`` there).
    """
    m = buf[start:stop]
    if not m or m[0] in b" \t[%\r" or b"(" in m or b")" in m or b";" in m:
        return None
    if b"{" in m or b"}" in m:
        braces = m.translate(None, _NOT_BRACES)
        if len(braces) & 1 or len(braces) > len(_BRACE_PAIRS) or braces != _BRACE_PAIRS[:len(braces)]:
            return None
    space = m.rfind(b" ")
    last = m[space + 1:]
    result = last in _RESULT_TOKENS
    head = m[:max(space, 0)] if result else m
    if b"1-0" in head or b"0-1" in head or b"1/2" in head or b"*" in head:
        return None
    return last if result else b""


def _any_value(values, mixed: bool) -> bool:
    """Whether a _fast_movetext eval or clock list holds a value for some ply."""
    if values is None:
        return False
    return values.count(None) < len(values) if mixed else len(values) > 0


def _fast_where(buf: bytes, pos: int, end: int, text: bool, where):
    """_fast_game with a filter: its answer for a game ``where`` keeps, ``(end, tags_end, None, None)``
    for one it drops, None where the byte walk must decide."""
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], text)
    if tags is None:
        return None
    pieces, _, names = tags
    if not where.keep_tags(zip(names, pieces[1::2]), text):
        return None if _fast_skips(buf, start, stop) is None else (game_end, blank, None, None)
    scan = _fast_movetext(buf[start:stop])
    if scan is None:
        return None
    if where.needs_moves and not where.keep_moves(len(scan[0]), _any_value(scan[1], scan[5]),
                                                  _any_value(scan[2], scan[5])):
        return game_end, blank, None, None
    return game_end, blank, tags, scan


def _fast_headers(buf: bytes, pos: int, end: int, where):
    """headers_from_block's ``(end, headers, result)`` of the game at ``pos`` (a ``[``), ``(end, None, None)``
    if ``where`` drops it, or None where the byte walk must decide."""
    if where is not None and where.needs_moves:
        return None
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], True)
    if tags is None:
        return None
    result = _fast_skips(buf, start, stop)
    if result is None:
        return None
    pieces, _, names = tags
    if where is not None and not where.keep_tags(zip(names, pieces[1::2]), True):
        return game_end, None, None
    return game_end, dict(zip(names, pieces[1::2])), result.decode("ascii")


def _line_plan(names: tuple):
    """An itemgetter of _fast_line's 16 tag values from ``pieces + [b"", movetext result]``."""
    at = {}
    for i, name in enumerate(names):
        at[name] = 2 * i + 1  # the last of two same names wins, as in _line
    empty = 2 * len(names) + 1
    get = lambda name, default=empty: at.get(name, default)  # noqa: E731
    return itemgetter(
        get(b"Site"), get(b"UTCDate", get(b"Date")), get(b"UTCTime", get(b"Time")),
        get(b"Result", empty + 1), get(b"Termination"), get(b"ECO"), get(b"Opening"),
        get(b"TimeControl"), get(b"White"), get(b"WhiteElo"), get(b"WhiteRatingDiff"),
        get(b"WhiteTitle"), get(b"Black"), get(b"BlackElo"), get(b"BlackRatingDiff"),
        get(b"BlackTitle"),
    )


def _fast_line(tags, scan, openings) -> bytes:
    """_line for a game _fast_game read whose tags hold no separator (nor CR, LF)."""
    pieces, key, names = tags
    moves, evals, clocks, result, _, mixed = scan
    plan = _LINE_PLANS.get(key)
    if plan is None:
        if len(_LINE_PLANS) > _CACHE_LIMIT:
            _LINE_PLANS.clear()
        plan = _LINE_PLANS[key] = _line_plan(names)
    pieces.append(b"")
    pieces.append(result)
    (site, date, time, played, termination, eco, opening, time_control, white, white_elo,
     white_diff, white_title, black, black_elo, black_diff, black_title) = plan(pieces)
    day_seconds = _DAY_SECONDS.get(time)
    if day_seconds is None:
        day_seconds = _seconds_of_day(time)
        if len(_DAY_SECONDS) > _CACHE_LIMIT:
            _DAY_SECONDS.clear()
        _DAY_SECONDS[time] = day_seconds
    mate = b"#" in moves[-1] if moves else False
    if evals is None:
        evals = ()
    elif mixed:
        evals = [e for e in evals if e is not None]
    if clocks is None:
        clocks = ()
    elif mixed:
        clocks = [c for c in clocks if c is not None]
    if openings is not None:
        try:
            eco = openings[eco + SEP + opening]
        except KeyError:
            eco = b"?"
        clean = _ECO_FIELDS.get(eco)
        if clean is None:
            if len(_ECO_FIELDS) > _CACHE_LIMIT:
                _ECO_FIELDS.clear()
            clean = _ECO_FIELDS[eco] = _field(eco)
        eco = clean
    plies = len(moves)
    return SEP.join((
        site[site.rfind(b"/") + 1:],
        date.replace(b".", b""),
        day_seconds,
        _RESULT_CODE.get(played, b"*"),
        _TERMINATION_CODE.get(termination, b"*"),
        b"Y" if mate else b"N",
        b"Y" if evals else b"N",
        b"Y" if clocks else b"N",
        _COUNTS[plies] if plies < 1000 else str(plies).encode(),
        eco,
        time_control,
        white,
        white_elo,
        white_diff,
        white_title,
        black,
        black_elo,
        black_diff,
        black_title,
        b" ".join(moves),
        b" ".join(evals) + b" #" if evals and mate else b" ".join(evals),
        b" ".join(clocks) + b"\n",
    ))


def _fast_as_game(start: int, fast) -> _Game:
    """A _Game holding what _fast_game read, for the general code of the front ends."""
    end, _, (pieces, _, names), (moves, evals, clocks, result, first_ply, _) = fast
    game = _Game(start)
    game.end = end
    game.tags = list(zip(names, pieces[1::2]))
    game.moves = moves
    game.evals = [None] * len(moves) if evals is None else evals
    game.clocks = [None] * len(moves) if clocks is None else clocks
    game.result = result
    game.first_ply = first_ply
    return game


def _ply_moves(moves: list) -> list:
    """games_from_block's moves: the SAN tokens as str (ASCII: _san_ok allows nothing else)."""
    return b" ".join(moves).decode("ascii").split(" ") if moves else []


def _ply_evals(values, plies: int, mixed: bool) -> list:
    """games_from_block's evals: per ply, the value as str or None."""
    if values is None:
        return [None] * plies
    if mixed:
        return [None if v is None else v.decode("ascii") for v in values]
    return b" ".join(values).decode("ascii").split(" ")


def _clock(seconds: bytes):
    """A clock's seconds text (``b"180"``, ``b"177.7"``) as the reader gives it: int, float with tenths."""
    return float(seconds) if b"." in seconds else int(seconds)


def _ply_clocks(values, plies: int, mixed: bool) -> list:
    """games_from_block's clocks: per ply, the seconds (int, or float with tenths) or None."""
    if values is None:
        return [None] * plies
    if mixed:
        return [None if v is None else _clock(v) for v in values]
    if b"." in b"".join(values):
        return list(map(_clock, values))
    return list(map(int, values))


def _fast_record(fast, start: int, number: int, base_offset: int) -> tuple:
    """games_from_block's record of a game _fast_game read (with ``text``)."""
    end, _, (pieces, _, names), (moves, evals, clocks, result, first_ply, mixed) = fast
    plies = len(moves)
    return (
        base_offset + start,
        number,
        dict(zip(names, pieces[1::2])),
        _ply_moves(moves),
        _ply_evals(evals, plies, mixed),
        _ply_clocks(clocks, plies, mixed),
        result.decode("ascii"),
        first_ply,
        start,
        end,
    )


# ---------------------------------------------------------------- front ends

def _field(value: bytes) -> bytes:
    if SEP in value:
        value = value.replace(SEP, b"")
    if b"\n" in value or b"\r" in value:
        value = value.replace(b"\n", b"").replace(b"\r", b"")
    return value


def _seconds_of_day(value: bytes) -> bytes:
    parts = value.split(b":")
    if len(parts) != 3 or not all(p.isdigit() and 1 <= len(p) <= 2 for p in parts):
        return b""
    h, m, s = (int(p) for p in parts)
    if h > 23 or m > 59 or s > 60:
        return b""
    return str(h * 3600 + m * 60 + s).encode()


def _line(game: _Game, openings) -> bytes:
    slots = [None] * len(LINE_TAGS)
    for name, value in game.tags:
        i = _SLOT.get(name)
        if i is not None:
            slots[i] = value
    get = lambda i: b"" if slots[i] is None else slots[i]  # noqa: E731
    site = get(S_SITE)
    gid = site[site.rfind(b"/") + 1:]
    date = slots[S_UTCDATE] if slots[S_UTCDATE] is not None else get(S_DATE)
    time = slots[S_UTCTIME] if slots[S_UTCTIME] is not None else get(S_TIME)
    result = slots[S_RESULT] if slots[S_RESULT] is not None else game.result
    moves = game.moves
    mate = b"Y" if moves and b"#" in moves[-1] else b"N"
    evals = [e for e in game.evals if e is not None]
    clocks = [c for c in game.clocks if c is not None]
    if evals and mate == b"Y":
        evals.append(b"#")
    if openings is None:
        eco = get(S_ECO)
    else:
        try:
            eco = openings[get(S_ECO) + SEP + get(S_OPENING)]
        except KeyError:
            eco = b"?"
    fields = [
        gid,
        _field(date).replace(b".", b""),
        _seconds_of_day(time),
        _RESULT_CODE.get(result, b"*"),
        _TERMINATION_CODE.get(get(S_TERMINATION), b"*"),
        mate,
        b"Y" if evals else b"N",
        b"Y" if clocks else b"N",
        str(len(moves)).encode(),
        eco,
        get(S_TC),
        get(S_WHITE),
        get(S_WELO),
        get(S_WDIFF),
        get(S_WTITLE),
        get(S_BLACK),
        get(S_BELO),
        get(S_BDIFF),
        get(S_BTITLE),
    ]
    fields = [_field(f) for f in fields]
    fields.append(b" ".join(moves) if game.moves_field is None else game.moves_field)
    fields.append(b" ".join(evals))
    fields.append(b" ".join(clocks))
    return SEP.join(fields) + b"\n"


def _first(buf: bytes, start: int, end: int, at_stream_start: bool) -> int:
    if at_stream_start and buf.startswith(_BOM, start, end):
        return start + 3
    return start


# The tags a moves hook gets: where the game starts (a hook needs nothing else).
_START_TAGS = frozenset((b"FEN", b"SetUp", b"Variant"))


def opening_table(openings):
    """``openings`` ready for lines_from_block: here the map itself.

    The compiled kernel copies a plain map into a C table it reads without
    the GIL; call this once per run and pass its result as ``openings``.
    """
    return openings


def _as_bytes(buf) -> bytes:
    """The block as bytes (the compiled kernel reads any bytes-like object in place)."""
    return buf if type(buf) is bytes else bytes(buf)


def lines_from_block(buf, start, end, base_offset, first_game, at_stream_start,
                     openings, stop_on_error, moves_hook=None, where=None):
    """Turn the whole games in ``buf[start:end]`` into 22-field lines.

    Returns ``(lines, games_read, rejects)``; ``lines`` is bytes, one
    ``\\n``-terminated line per good game; ``rejects`` lists
    ``(reason, error_offset, game_number, start, end)`` with ``start``/``end``
    indexing ``buf``. Offsets in reasons are ``base_offset + index``.
    ``moves_hook(moves_bytes, tags)`` returns the bytes of field 20 (the SAN
    itself after validation, or UCI moves) or raises PGNError to reject the
    game; ``tags`` is the list of ``(name, value)`` bytes pairs of the tags
    that say where the game starts (FEN, SetUp, Variant), in file order.
    With ``where`` (a where_plan), games it refuses get no line, and the
    answer is ``(lines, games_read, rejects, games_filtered)``; games_read
    counts them too.
    """
    buf = _as_bytes(buf)
    where = where_plan(where)
    out = []
    rejects = []
    number = first_game
    filtered = 0
    pos = _first(buf, start, end, at_stream_start)
    while True:
        fast = None
        if pos < end and buf[pos] == 91:
            if where is None:
                fast = _fast_game(buf, pos, end, False)
            else:
                fast = _fast_where(buf, pos, end, False, where)
                if fast is not None and fast[2] is None:
                    number += 1
                    filtered += 1
                    pos = fast[0]
                    continue
        # A separator in a tag value goes to _line, which removes it (b"\xe2" is its first byte).
        if fast is not None and moves_hook is None and (
                buf.find(b"\xe2", pos, fast[1]) < 0 or buf.find(SEP, pos, fast[1]) < 0):
            number += 1
            out.append(_fast_line(fast[2], fast[3], openings))
            pos = fast[0]
            continue
        game = _scan_game(buf, pos, end, where) if fast is None else _fast_as_game(pos, fast)
        if game is None:
            break
        number += 1
        pos = game.end
        if game.filtered and not game.bad:
            filtered += 1
            continue
        if not game.bad and moves_hook is not None:
            try:
                replaced = moves_hook(b" ".join(game.moves), [t for t in game.tags if t[0] in _START_TAGS])
            except ValueError as exc:
                game.bad = getattr(exc, "reason", str(exc))
                game.bad_pos = game.start
            else:
                game.moves_field = replaced
        if game.bad:
            rejects.append((game.bad, base_offset + game.bad_pos, number, game.start, game.end))
            if stop_on_error:
                break
            continue
        out.append(_line(game, openings))
    if where is not None:
        return b"".join(out), number - first_game, rejects, filtered
    return b"".join(out), number - first_game, rejects


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def games_from_block(buf, start, end, base_offset, first_game, at_stream_start, stop_on_error, where=None):
    """Scan the whole games in ``buf[start:end]`` into record tuples for the reader.

    Returns ``(games, games_read, rejects)``; each game is
    ``(offset, number, headers, moves, evals, clocks, result, first_ply, start, end)``
    where ``headers`` is a dict of str, ``moves`` the list of SAN tokens (str),
    ``evals`` and ``clocks`` lists with one entry per ply: the eval as str, the
    clock in seconds (int; float when the source has tenths), None where a ply
    has none; ``result`` the movetext's result token,
    ``first_ply`` the ply the move number before the first move names (``12...``
    is 23: Black's 12th move; -1 when no number precedes the first move).
    With ``where`` (a where_plan), games it refuses get no record, and the
    answer is ``(games, games_read, rejects, games_filtered)``.
    """
    return _games_from_block(buf, start, end, base_offset, first_game, at_stream_start, stop_on_error, where, False)


def headers_from_block(buf, start, end, base_offset, first_game, at_stream_start, stop_on_error, where=None):
    """games_from_block without the moves: each game's tags, its movetext skipped (_skip_movetext).

    Returns ``(games, games_read, rejects)``, or with ``where``
    ``(games, games_read, rejects, games_filtered)``; each game is
    ``(offset, number, headers, result, start, end)``, cut at the same
    boundaries as games_from_block's for every game the full read accepts.
    Movetext is not checked: only a bad tag, an unterminated comment or
    variation and a stray ``}`` reject a game (and, where ``where`` tests the
    movetext, any error in the movetext of a game whose tags it keeps).
    """
    return _games_from_block(buf, start, end, base_offset, first_game, at_stream_start, stop_on_error, where, True)


def _games_from_block(buf, start, end, base_offset, first_game, at_stream_start, stop_on_error, where, headers):
    """games_from_block's records, or with ``headers`` headers_from_block's (the compiled twin's shape)."""
    buf = _as_bytes(buf)
    where = where_plan(where)
    out = []
    rejects = []
    number = first_game
    filtered = 0
    pos = _first(buf, start, end, at_stream_start)
    while True:
        fast = None
        if pos < end and buf[pos] == 91:
            if headers:
                fast = _fast_headers(buf, pos, end, where)
            else:
                fast = _fast_game(buf, pos, end, True) if where is None else _fast_where(buf, pos, end, True, where)
        if fast is not None:
            number += 1
            if fast[1 if headers else 2] is None:
                filtered += 1
            elif headers:
                out.append((base_offset + pos, number, fast[1], fast[2], pos, fast[0]))
            else:
                out.append(_fast_record(fast, pos, number, base_offset))
            pos = fast[0]
            continue
        game = _scan_game(buf, pos, end, where, headers)
        if game is None:
            break
        number += 1
        pos = game.end
        if game.filtered and not game.bad:
            filtered += 1
            continue
        if game.bad:
            rejects.append((game.bad, base_offset + game.bad_pos, number, game.start, game.end))
            if stop_on_error:
                break
            continue
        tags = {}
        for name, value in game.tags:
            tags[_text(name)] = _text(value)
        if headers:
            out.append((base_offset + game.start, number, tags, _text(game.result), game.start, game.end))
            continue
        out.append((
            base_offset + game.start,
            number,
            tags,
            _ply_moves(game.moves),
            _ply_evals(game.evals, len(game.moves), True),
            _ply_clocks(game.clocks, len(game.moves), True),
            _text(game.result),
            game.first_ply,
            game.start,
            game.end,
        ))
    if where is not None:
        return out, number - first_game, rejects, filtered
    return out, number - first_game, rejects


