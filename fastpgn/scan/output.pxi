# What every sink shares: a growing C output buffer, and a game's tag values read by name.
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit: no call
# between the parts costs more than it did in one file). Mirrors the helpers at the top of fastpgn/scan/lines.py.

# ---------------------------------------------------------------- output buffer

# Out, _reserve, _w and _wc: fastpgn/_buffer.pxd (the Parquet list-page writer writes with them too).
from fastpgn._buffer cimport Out, _reserve, _w, _wc


# Unchecked writers for _line, which reserves room for a whole line first:
# every field is at most as long as the source bytes it comes from, plus a
# fixed allowance for separators, codes and counts (LINE_SLACK).
cdef enum:
    LINE_SLACK = 256


cdef inline void _wshort(Out *out, const char *p, Py_ssize_t n, const char *limit) noexcept nogil:
    """``_w`` for a token (a move, an eval): one 8-byte copy when ``p[:8]`` lies before ``limit``.

    The bytes past ``n`` land in room _line reserved and are overwritten by
    what comes next; one copy whatever the length saves the branches on it,
    which SAN tokens (2 to 7 bytes, in no order) mispredict.
    """
    if n <= 8 and p + 8 <= limit:
        memcpy(out.data + out.size, p, 8)
        out.size += n
    else:
        _w(out, p, n)


cdef inline void _wsep(Out *out) noexcept nogil:
    cdef char *d = out.data + out.size
    d[0] = b'\xe2'
    d[1] = b'\x94'
    d[2] = b'\x82'
    out.size += 3


cdef inline uint64_t _has_byte(uint64_t w, uint64_t pattern) noexcept nogil:
    """Nonzero when a byte of ``w`` equals the byte repeated in ``pattern``."""
    w ^= pattern
    return (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL


cdef char _DIGIT_PAIRS[200]     # "00" "01" ... "99"


cdef void _init_digit_pairs() noexcept:
    cdef int i
    for i in range(100):
        _DIGIT_PAIRS[2 * i] = <char>(48 + i // 10)
        _DIGIT_PAIRS[2 * i + 1] = <char>(48 + i % 10)


_init_digit_pairs()


cdef inline char *_psmall(char *d, long long v) noexcept nogil:
    """A non-negative integer in decimal at ``d``; below 10,000 (clocks in seconds, ply counts) without a
    loop. Returns the end of what it wrote."""
    cdef int hi, lo
    if v < 10:
        d[0] = <char>(48 + v)
        return d + 1
    if v < 100:
        memcpy(d, _DIGIT_PAIRS + 2 * v, 2)
        return d + 2
    if v < 10000:
        hi = <int>(v // 100)
        lo = <int>(v - 100 * hi)
        if hi < 10:
            d[0] = <char>(48 + hi)
            memcpy(d + 1, _DIGIT_PAIRS + 2 * lo, 2)
            return d + 3
        memcpy(d, _DIGIT_PAIRS + 2 * hi, 2)
        memcpy(d + 2, _DIGIT_PAIRS + 2 * lo, 2)
        return d + 4
    return _pint(d, v)


cdef inline void _wsmall(Out *out, long long v) noexcept nogil:
    """``_psmall`` at the end of ``out``."""
    out.size = _psmall(out.data + out.size, v) - out.data


cdef char *_pint(char *d, long long v) noexcept nogil:
    """A non-negative integer in decimal at ``d``, two digits at a time; returns the end of what it wrote."""
    cdef long long t = v
    cdef Py_ssize_t n = 1
    cdef char *e
    cdef int r
    while t >= 10:
        t //= 10
        n += 1
    e = d + n
    d = e
    while v >= 100:
        r = <int>(v % 100)
        v //= 100
        d -= 2
        d[0] = _DIGIT_PAIRS[2 * r]
        d[1] = _DIGIT_PAIRS[2 * r + 1]
    if v >= 10:
        d -= 2
        d[0] = _DIGIT_PAIRS[2 * v]
        d[1] = _DIGIT_PAIRS[2 * v + 1]
    else:
        d -= 1
        d[0] = <char>(48 + v)
    return e


cdef inline void _wint(Out *out, long long v) noexcept nogil:
    """A non-negative integer in decimal."""
    out.size = _pint(out.data + out.size, v) - out.data


cdef inline void _wmoves(Out *out, const char *buf, _Game game) noexcept nogil:
    """The game's SAN moves as written, joined by single spaces (field 20).

    ``out`` has room for the game's text and LINE_SLACK more (see _wshort).
    Written through a local pointer, each move with a space after it and the
    last space taken back: the compiler keeps the pointer in a register, where
    it reloads ``out``'s fields after every byte stored through them.
    """
    cdef Py_ssize_t i, s, n
    cdef Py_ssize_t nmoves = game.nmoves
    cdef const Py_ssize_t *moves = game.moves
    cdef const char *limit = buf + game.end
    cdef char *d = out.data + out.size
    if nmoves == 0:
        return
    for i in range(nmoves):
        s = moves[2 * i]
        n = moves[2 * i + 1] - s
        if n <= 8 and buf + s + 8 <= limit:
            memcpy(d, buf + s, 8)
        else:
            memcpy(d, buf + s, n)
        d[n] = b' '
        d += n + 1
    out.size = d - 1 - out.data


cdef inline void _wfield(Out *out, const char *p, Py_ssize_t n, bint undots, bint plain) noexcept nogil:
    """A text field without the separator, CR and LF (and dots, for dates).

    ``plain``: the text is known to hold none of them (a tag value of a game
    whose values are plain, _Game.plain_values), so it is copied as it is
    unless dots must go.
    """
    cdef Py_ssize_t i = 0
    cdef char c
    cdef char *d = out.data + out.size
    cdef Py_ssize_t k = 0
    if plain:
        if not undots:
            _w(out, p, n)
            return
        if n == 10 and p[4] == b'.' and p[7] == b'.':
            # a date, YYYY.MM.DD: its eight other bytes copied at once, unless one is a dot too
            memcpy(d, p, 4)
            memcpy(d + 4, p + 5, 2)
            memcpy(d + 6, p + 8, 2)
            if not _has_byte(_load64(d), 0x2E2E2E2E2E2E2E2EULL):
                out.size += 8
                return
    while i < n:
        c = p[i]
        if c == b'\xe2' and i + 2 < n and p[i + 1] == b'\x94' and p[i + 2] == b'\x82':
            i += 3
            continue
        if not (c == b'\n' or c == b'\r' or (undots and c == b'.')):
            d[k] = c
            k += 1
        i += 1
    out.size += k


# ---------------------------------------------------------------- tag values by name

cdef int _slot_of(const char *p, Py_ssize_t n) noexcept nogil:
    if n == 4:
        if memcmp(p, b"Site", 4) == 0: return S_SITE
        if memcmp(p, b"Date", 4) == 0: return S_DATE
        if memcmp(p, b"Time", 4) == 0: return S_TIME
    elif n == 3:
        if memcmp(p, b"ECO", 3) == 0: return S_ECO
    elif n == 5:
        if memcmp(p, b"White", 5) == 0: return S_WHITE
        if memcmp(p, b"Black", 5) == 0: return S_BLACK
    elif n == 6:
        if memcmp(p, b"Result", 6) == 0: return S_RESULT
    elif n == 7:
        if memcmp(p, b"UTCDate", 7) == 0: return S_UTCDATE
        if memcmp(p, b"UTCTime", 7) == 0: return S_UTCTIME
        if memcmp(p, b"Opening", 7) == 0: return S_OPENING
    elif n == 8:
        if memcmp(p, b"WhiteElo", 8) == 0: return S_WELO
        if memcmp(p, b"BlackElo", 8) == 0: return S_BELO
    elif n == 10:
        if memcmp(p, b"WhiteTitle", 10) == 0: return S_WTITLE
        if memcmp(p, b"BlackTitle", 10) == 0: return S_BTITLE
    elif n == 11:
        if memcmp(p, b"Termination", 11) == 0: return S_TERMINATION
        if memcmp(p, b"TimeControl", 11) == 0: return S_TC
    elif n == 15:
        if memcmp(p, b"WhiteRatingDiff", 15) == 0: return S_WDIFF
        if memcmp(p, b"BlackRatingDiff", 15) == 0: return S_BDIFF
    return -1


cdef bytes _value(const char *buf, _Game game, Py_ssize_t t):
    """Tag ``t``'s value with escapes undone."""
    return _unescape(buf + game.tags[4 * t + 2], game.tags[4 * t + 3] - game.tags[4 * t + 2])


cdef long long _seconds_of_day(const char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0, start
    cdef long long parts[3]
    cdef int k, h, m, sec
    if (n == 8 and p[2] == b':' and p[5] == b':' and _is_digit(p[0]) and _is_digit(p[1]) and _is_digit(p[3])
            and _is_digit(p[4]) and _is_digit(p[6]) and _is_digit(p[7])):
        # HH:MM:SS, as every UTCTime is written: the reading below gives the same
        h = (p[0] - 48) * 10 + (p[1] - 48)
        m = (p[3] - 48) * 10 + (p[4] - 48)
        sec = (p[6] - 48) * 10 + (p[7] - 48)
        if h > 23 or m > 59 or sec > 60:
            return -1
        return h * 3600 + m * 60 + sec
    for k in range(3):
        start = i
        parts[k] = 0
        while i < n and _is_digit(p[i]):
            parts[k] = parts[k] * 10 + (p[i] - 48)
            i += 1
        if i - start < 1 or i - start > 2:
            return -1
        if k < 2:
            if i >= n or p[i] != b':':
                return -1
            i += 1
    if i != n or parts[0] > 23 or parts[1] > 59 or parts[2] > 60:
        return -1
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


cdef inline int _cspan(const char *buf, _Game game, Py_ssize_t t, Out *scratch,
                       const char **p, Py_ssize_t *n) noexcept nogil:
    """Point ``p``/``n`` at tag ``t``'s value with escapes undone: the block's own text,
    or a copy in ``scratch`` (valid until its next use) when it has escapes.

    Returns -1 when ``scratch`` cannot grow.
    """
    cdef Py_ssize_t s = game.tags[4 * t + 2], e = game.tags[4 * t + 3]
    if game.plain_values or memchr(buf + s, b'\\', e - s) == NULL:
        p[0] = buf + s
        n[0] = e - s
        return 0
    scratch.size = 0
    if _reserve(scratch, e - s) < 0:
        return -1
    p[0] = scratch.data
    n[0] = _unescape_into(buf + s, e - s, scratch.data)
    return 0


cdef inline int _write_tag(Out *out, const char *buf, _Game game, Py_ssize_t t, bint undots,
                           Out *scratch) noexcept nogil:
    cdef const char *p
    cdef Py_ssize_t n
    if t >= 0:
        if _cspan(buf, game, t, scratch, &p, &n) < 0:
            return -1
        _wfield(out, p, n, undots, game.plain_values)
    return 0


cdef inline bint _eq(const char *p, Py_ssize_t n, const char *lit, Py_ssize_t m) noexcept nogil:
    return n == m and memcmp(p, lit, m) == 0
