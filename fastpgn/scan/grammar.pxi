# The PGN grammar: games, tags, movetext, comments, results (the filters it tests: scan/filters.pxi).
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit: no call
# between the parts costs more than it did in one file). Mirrors fastpgn/scan/grammar.py function by function.
# What it hands the sinks is a _Game: spans into the block, no Python object.

cdef enum:
    S_DATE = 16
    S_TIME = 17


# Character classes, one table lookup per byte on the hot paths.
cdef enum:
    C_DELIM = 1     # ends a movetext token: space, tab, CR, LF, { } ( ) ; $
    C_WS = 2        # space, tab, CR
    C_DIGIT = 4
    C_FILE = 8      # a-h
    C_RANK = 16     # 1-8
    C_PIECE = 32    # K Q R B N P
    C_PROMO = 64    # Q R B N K, q r b n k
    C_SPACE = 128   # space, tab, CR, LF
    C_VALUE = 256   # what %clk and %eval values are made of: digits : . # + - ,
    C_LOWER = 512   # a-z, the letters of a comment command's name
    C_NAME_END = 1024  # ends a tag name: space, tab, '"', ']'
    C_EVAL = 2048   # what an %eval value is made of: C_VALUE without ':'
    C_TAG_NAME = 4096    # A-Z a-z 0-9 _: the tag names _plain_tag_line reads
    C_TAG_STOP = 8192    # '"', backslash, LF: what ends a plain tag value, or makes it not plain
    C_FIELD_CARE = 16384  # the separator's first byte (0xE2) and CR: _wfield must look at such a value
    C_SKIP = 32768  # where _skip_movetext stops running: LF { } ( ; $ and the result bytes - / * 0xE2 0xC2

cdef unsigned short _CLS[256]


# Runs over bytes that do not matter, sixteen at a time where SSE2 is there (every x86-64): each
# returns the first index from pos of a byte it stops at, or the first index from which fewer than
# sixteen bytes are left before end (the caller reads those one by one, with _CLS).
cdef extern from *:
    """
    #if defined(__SSE2__) && defined(__GNUC__)
    #include <emmintrin.h>
    #define FASTPGN_EQ(v, c) _mm_cmpeq_epi8((v), _mm_set1_epi8(c))
    /* what ends a plain tag value or makes it not plain (C_TAG_STOP, C_FIELD_CARE): " \\ LF, CR, 0xE2 */
    static Py_ssize_t fastpgn_value_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) {
        while (end - pos >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(buf + pos));
            __m128i hit = _mm_or_si128(_mm_or_si128(FASTPGN_EQ(v, '"'), FASTPGN_EQ(v, 0x5C)),
                                       _mm_or_si128(_mm_or_si128(FASTPGN_EQ(v, 0x0A), FASTPGN_EQ(v, 0x0D)),
                                                    FASTPGN_EQ(v, (char)0xE2)));
            int mask = _mm_movemask_epi8(hit);
            if (mask)
                return pos + __builtin_ctz(mask);
            pos += 16;
        }
        return pos;
    }
    /* a tag name's bytes (C_TAG_NAME: A-Z a-z 0-9 _): a letter is a byte that ORed with 0x20 lies in
       a-z (bytes from 0x80 compare as negative, so they are none of the three) */
    static Py_ssize_t fastpgn_name_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) {
        while (end - pos >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(buf + pos));
            __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
            __m128i name = _mm_or_si128(
                _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)),
                                           _mm_cmplt_epi8(low, _mm_set1_epi8('z' + 1))),
                             _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                           _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)))),
                FASTPGN_EQ(v, '_'));
            int mask = ~_mm_movemask_epi8(name) & 0xFFFF;
            if (mask)
                return pos + __builtin_ctz(mask);
            pos += 16;
        }
        return pos;
    }
    /* a comment's end or a line break */
    static __attribute__((noinline)) Py_ssize_t fastpgn_brace_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) {
        while (end - pos >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(buf + pos));
            int mask = _mm_movemask_epi8(_mm_or_si128(FASTPGN_EQ(v, '}'), FASTPGN_EQ(v, 0x0A)));
            if (mask)
                return pos + __builtin_ctz(mask);
            pos += 16;
        }
        return pos;
    }
    /* _skip_movetext's run: to the first byte of C_SKIP (LF { } ( ; $ - / * 0xE2 0xC2) outside the
       comments closed on their line, which it runs over too (lichess writes one after every
       ply: one loop, where a run to each '{' and another to its '}' cost two calls and a stop
       a comment), or to a '{' whose '}' is not on its line (the caller's _skip_comment reads
       that one), or to where fewer than sixteen bytes are left. */
    static __attribute__((noinline)) Py_ssize_t fastpgn_skip_comments_run(const char *buf, Py_ssize_t pos,
                                                                          Py_ssize_t end) {
        while (end - pos >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(buf + pos));
            __m128i hit = _mm_or_si128(
                _mm_or_si128(_mm_or_si128(FASTPGN_EQ(v, 0x0A), FASTPGN_EQ(v, '{')),
                             _mm_or_si128(FASTPGN_EQ(v, '}'), FASTPGN_EQ(v, '('))),
                _mm_or_si128(_mm_or_si128(_mm_or_si128(FASTPGN_EQ(v, ';'), FASTPGN_EQ(v, '$')),
                                          _mm_or_si128(FASTPGN_EQ(v, (char)0xE2), FASTPGN_EQ(v, (char)0xC2))),
                             _mm_or_si128(_mm_or_si128(FASTPGN_EQ(v, '-'), FASTPGN_EQ(v, '/')),
                                          FASTPGN_EQ(v, '*'))));
            int mask = _mm_movemask_epi8(hit);
            Py_ssize_t open, close;
            if (!mask) {
                pos += 16;
                continue;
            }
            open = pos + __builtin_ctz(mask);
            if (buf[open] != '{')
                return open;
            close = open + 1;
            for (;;) {
                if (end - close < 16) {
                    while (close < end && buf[close] != '}' && buf[close] != 0x0A)
                        close++;
                    break;
                }
                v = _mm_loadu_si128((const __m128i *)(buf + close));
                mask = _mm_movemask_epi8(_mm_or_si128(FASTPGN_EQ(v, '}'), FASTPGN_EQ(v, 0x0A)));
                if (mask) {
                    close += __builtin_ctz(mask);
                    break;
                }
                close += 16;
            }
            if (close >= end || buf[close] != '}')
                return open;
            pos = close + 1;
        }
        return pos;
    }
    #else
    #define fastpgn_brace_run(buf, pos, end) (pos)
    #define fastpgn_value_run(buf, pos, end) (pos)
    #define fastpgn_name_run(buf, pos, end) (pos)
    #define fastpgn_skip_comments_run(buf, pos, end) (pos)
    #endif
    """
    Py_ssize_t fastpgn_brace_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) nogil
    Py_ssize_t fastpgn_value_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) nogil
    Py_ssize_t fastpgn_name_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) nogil
    Py_ssize_t fastpgn_skip_comments_run(const char *buf, Py_ssize_t pos, Py_ssize_t end) nogil


cdef void _init_classes():
    cdef int i
    for i in range(256):
        _CLS[i] = 0
    for i in b" \t\r\n{}();$":
        _CLS[i] |= C_DELIM
    for i in b" \t\r":
        _CLS[i] |= C_WS | C_SPACE
    _CLS[b'\n'] |= C_SPACE
    for i in range(48, 58):
        _CLS[i] |= C_DIGIT
    for i in b"abcdefgh":
        _CLS[i] |= C_FILE
    for i in b"12345678":
        _CLS[i] |= C_RANK
    for i in b"KQRBNP":
        _CLS[i] |= C_PIECE
    for i in b"QRBNKqrbnk":     # (lower case as python-chess reads it: "e8=q")
        _CLS[i] |= C_PROMO
    for i in b"0123456789:.#+-,":
        _CLS[i] |= C_VALUE
    for i in range(97, 123):
        _CLS[i] |= C_LOWER
    for i in b' \t"]':
        _CLS[i] |= C_NAME_END
    for i in b"0123456789.#+-,":
        _CLS[i] |= C_EVAL
    for i in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_":
        _CLS[i] |= C_TAG_NAME
    for i in b'"\\\n':
        _CLS[i] |= C_TAG_STOP
    # by number, not a bytes loop: Cython before 3.2 iterated b"\xe2" as a signed char (index -30)
    _CLS[0xE2] |= C_FIELD_CARE
    _CLS[13] |= C_FIELD_CARE
    for i in b"\n{}(;$-/*":
        _CLS[i] |= C_SKIP
    _CLS[0xE2] |= C_SKIP    # an en or em dash ("1–0")
    _CLS[0xC2] |= C_SKIP    # the first byte of "½" ("½-½")


_init_classes()


cdef inline bint _is_ws(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_WS


cdef inline bint _is_space(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_SPACE


cdef inline bint _is_file(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_FILE


cdef inline bint _is_rank(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_RANK


cdef inline bint _is_digit(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_DIGIT


cdef inline bint _is_piece(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_PIECE


cdef inline bint _is_promo(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_PROMO


cdef str _show(const char *p, Py_ssize_t n):
    cdef Py_ssize_t m = 24 if n > 24 else n
    cdef str text = PyUnicode_DecodeUTF8(p, m, "replace")
    return text + ("..." if n > 24 else "")


# Why a game is rejected. The scanner records a code and the token to quote,
# so it needs no Python object (and no GIL) while it reads; _reason words it.
cdef enum:
    BAD_TAG = 1
    BAD_TAG_VALUE = 2
    BAD_COMMENT = 3
    BAD_CLOCK = 4
    BAD_EVAL = 5
    BAD_VARIATION = 6
    BAD_TOKEN = 7
    BAD_NAG = 9
    BAD_BRACE = 11
    BAD_HOOK = 12
    BAD_NUL = 13


cdef str _reason_of(const char *buf, int why, Py_ssize_t tok, Py_ssize_t n, list hook_reasons):
    """The message of a game's error, as the pure twin words it (a hook's: ``hook_reasons[tok]``)."""
    if why == BAD_HOOK:
        return hook_reasons[tok]
    if why == BAD_TAG:
        return "malformed tag"
    if why == BAD_TAG_VALUE:
        return "unterminated tag value"
    if why == BAD_COMMENT:
        return "unterminated comment"
    if why == BAD_VARIATION:
        return "unterminated variation"
    if why == BAD_NAG:
        return "malformed NAG"
    if why == BAD_BRACE:
        return "unexpected '}'"
    if why == BAD_NUL:
        return "NUL byte in the game (binary data)"
    quoted = _show(buf + tok, n)
    if why == BAD_CLOCK:
        return "malformed clock '" + quoted + "'"
    if why == BAD_EVAL:
        return "malformed eval '" + quoted + "'"
    return "invalid move token '" + quoted + "'"


# ---------------------------------------------------------------- lines

cdef inline Py_ssize_t _line_end(const char *buf, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    if pos >= end:
        return end
    cdef const char *nl = <const char *>memchr(buf + pos, b'\n', end - pos)
    return end if nl == NULL else nl - buf


cdef inline bint _is_blank(const char *buf, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil:
    while pos < stop:
        if not _is_ws(buf[pos]):
            return False
        pos += 1
    return True


cdef inline bint _is_tag_line(const char *buf, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    while pos < end and (buf[pos] == b' ' or buf[pos] == b'\t'):
        pos += 1
    return pos < end and buf[pos] == b'['


cdef inline bint _starts_first_move(const char *buf, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    while pos < end and (buf[pos] == b' ' or buf[pos] == b'\t'):
        pos += 1
    return pos + 1 < end and buf[pos] == b'1' and buf[pos + 1] == b'.'


cdef inline bint _ends_blank_line(const char *buf, Py_ssize_t nl) noexcept nogil:
    cdef Py_ssize_t j = nl - 1
    while j >= 0 and (buf[j] == b' ' or buf[j] == b'\t' or buf[j] == b'\r'):
        j -= 1
    return j >= 0 and buf[j] == b'\n'


cdef Py_ssize_t _next_boundary(const char *buf, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    cdef bint blank = False
    cdef Py_ssize_t start, stop
    cdef Py_ssize_t nl = _line_end(buf, pos, end)
    if nl >= end:
        return end
    while True:
        start = nl + 1
        stop = _line_end(buf, start, end)
        if blank and _is_tag_line(buf, start, stop):
            return start
        # (escape lines between the blank line and the tags: still a boundary)
        blank = _is_blank(buf, start, stop) or (blank and start < stop and buf[start] == b'%')
        if stop >= end:
            return end
        nl = stop


# ---------------------------------------------------------------- tokens

cdef inline bint _san_ok(const char *tok, Py_ssize_t n) noexcept nogil:
    # The two shapes of most moves first ("e4", "Nf3"); the full check gives the same answer.
    if n == 2:
        if _CLS[<unsigned char>tok[0]] & C_FILE and _CLS[<unsigned char>tok[1]] & C_RANK:
            return True
    elif n == 3:
        if (_CLS[<unsigned char>tok[0]] & C_PIECE and _CLS[<unsigned char>tok[1]] & C_FILE
                and _CLS[<unsigned char>tok[2]] & C_RANK):
            return True
    elif n == 4:
        # captures ("exd5", "Nxe5")
        if (_CLS[<unsigned char>tok[0]] & (C_FILE | C_PIECE) and tok[1] == b'x'
                and _CLS[<unsigned char>tok[2]] & C_FILE and _CLS[<unsigned char>tok[3]] & C_RANK):
            return True
    return _san_full(tok, n)


cdef inline bint _san_full(const char *tok, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0, j, k, lim, m
    cdef char c
    c = tok[0]
    if n >= 2 and ((c == b'-' and tok[1] == b'-') or (c == b'Z' and tok[1] == b'0')):
        i = 2   # a null move, with the suffixes any move takes ("--!?", "Z0+")
    elif c == b'O' or c == b'0':
        i = _castling_len(tok, n, c)    # (the dashes may be en or em dashes)
        if not i:
            return False
    else:
        if _is_piece(c):
            i = 1
        if i < n and tok[i] == b'@':
            i += 1
            if i + 1 >= n or not _is_file(tok[i]) or not _is_rank(tok[i + 1]):
                return False
            i += 2
        else:
            j = i
            while j < n and (_is_file(tok[j]) or _is_rank(tok[j]) or tok[j] == b'x'
                             or tok[j] == b'-' or tok[j] == b':'):
                j += 1
            m = j - i
            if m < 2 or not _is_file(tok[j - 2]) or not _is_rank(tok[j - 1]):
                return False
            k = i
            lim = j - 2
            if k < lim and _is_file(tok[k]):
                k += 1
            if k < lim and _is_rank(tok[k]):
                k += 1
            if k < lim and (tok[k] == b'x' or tok[k] == b'-' or tok[k] == b':'):
                k += 1
            if k != lim:
                return False
            i = j
            if i < n and tok[i] == b'=':
                i += 1
                if i >= n or not _is_promo(tok[i]):
                    return False
                i += 1
            elif i < n and _is_promo(tok[i]) and not _is_piece(c):
                i += 1
    if i < n and tok[i] == b'+':
        i += 1
        if i < n and tok[i] == b'+':
            i += 1
    elif i < n and tok[i] == b'#':
        i += 1
    k = 0
    while i < n and (tok[i] == b'!' or tok[i] == b'?') and k < 2:
        i += 1
        k += 1
    return i == n


# ---------------------------------------------------------------- other tools' dialects (the pure twin's list)

cdef inline Py_ssize_t _dash_at(const char *t, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    if i < n and t[i] == b'-':
        return 1
    # U+2010 to U+2015 (hyphens, figure, en and em dashes, horizontal bar), U+2212 (minus sign)
    if i + 3 <= n and <unsigned char>t[i] == 0xE2 and (
            (<unsigned char>t[i + 1] == 0x80 and 0x90 <= <unsigned char>t[i + 2] <= 0x95)
            or (<unsigned char>t[i + 1] == 0x88 and <unsigned char>t[i + 2] == 0x92)):
        return 3
    return 0


cdef inline Py_ssize_t _castling_len(const char *t, Py_ssize_t n, char c) noexcept nogil:
    cdef Py_ssize_t d = _dash_at(t, 1, n) if n > 0 and t[0] == c else 0
    cdef Py_ssize_t i
    if not d or n <= 1 + d or t[1 + d] != c:
        return 0
    i = 2 + d
    d = _dash_at(t, i, n) if i < n else 0
    if d and i + d < n and t[i + d] == c:
        i += d + 1
    return i


cdef inline Py_ssize_t _half_len(const char *t, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    if i + 2 <= n and <unsigned char>t[i] == 0xC2 and <unsigned char>t[i + 1] == 0xBD:
        return 2
    if i + 3 <= n and t[i] == b'1' and t[i + 1] == b'/' and t[i + 2] == b'2':
        return 3
    return 0


cdef const char *_dash_result(const char *t, Py_ssize_t n) noexcept nogil:
    """The result a token written with an en or em dash or with '½' means ("1-0"), else NULL."""
    cdef Py_ssize_t h, d
    cdef unsigned char c = <unsigned char>t[0]
    if n == 3 and (memcmp(t, b"+--", 3) == 0 or memcmp(t, b"--+", 3) == 0):
        return "1-0" if c == b'+' else "0-1"    # ChessBase: won by forfeit
    if c != b'1' and c != b'0' and c != 0xC2:
        return NULL
    h = _half_len(t, 0, n)
    if h:
        d = _dash_at(t, h, n)
        if d and n - h - d == h and _half_len(t, h + d, n) == h and not (h == 3 and d == 1):
            return "1/2-1/2"
        return NULL
    if n == 5 and _dash_at(t, 1, n) == 3:
        if c == b'1' and t[4] == b'0':
            return "1-0"
        if c == b'0' and t[4] == b'1':
            return "0-1"
    return NULL


cdef inline bint _lit(const char *t, Py_ssize_t n, const char *lit, Py_ssize_t m) noexcept nogil:
    return n == m and memcmp(t, lit, m) == 0


cdef inline bint _ends(const char *t, Py_ssize_t n, const char *lit, Py_ssize_t m) noexcept nogil:
    return n >= m and memcmp(t + n - m, lit, m) == 0


cdef Py_ssize_t _glyph_suffix(const char *t, Py_ssize_t n) noexcept nogil:
    """The length of the evaluation glyph a token ends with (the pure twin's _GLYPH_SUFFIXES), else 0."""
    if _ends(t, n, "+/-", 3) or _ends(t, n, "-/+", 3) or _ends(t, n, "+/=", 3) or _ends(t, n, "=/+", 3):
        return 3
    if _ends(t, n, "+-", 2) or _ends(t, n, "-+", 2) or _ends(t, n, "+=", 2) or _ends(t, n, "=+", 2):
        return 2
    return 0


cdef bint _stands_apart(const char *t, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if n <= 2 and (t[0] == b'!' or t[0] == b'?') and (n == 1 or t[1] == b'!' or t[1] == b'?'):
        return True
    if n <= 3 and _glyph_suffix(t, n) == n:
        return True
    if (_lit(t, n, "=", 1) or _lit(t, n, "\xc2\xb1", 2) or _lit(t, n, "\xe2\x88\x93", 3)
            or _lit(t, n, "\xe2\x88\x9e", 3) or _lit(t, n, "\xe2\xa9\xb2", 3) or _lit(t, n, "\xe2\xa9\xb1", 3)
            or _lit(t, n, "=/\xe2\x88\x9e", 5) or _lit(t, n, "e.p.", 4) or _lit(t, n, "ep", 2)):
        return True
    for i in range(n):
        if t[i] != b'.':
            return False
    return True


cdef inline bint _all_dots(const char *t, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if t[i] != b'.':
            return False
    return True


cdef Py_ssize_t _move_len(const char *t, Py_ssize_t n) noexcept nogil:
    """How much of a token is the move (less a glyph or "e.p." after it); 0 if it is no move."""
    cdef Py_ssize_t m, k
    if _san_ok(t, n):
        return n
    m = n - _glyph_suffix(t, n)
    k = m
    while k > 0 and (t[k - 1] == b'+' or t[k - 1] == b'#'):
        k -= 1
    if _ends(t, k, "e.p.", 4):
        m = k - 4
    elif _ends(t, k, "ep", 2):
        m = k - 2
    return m if 0 < m < n and _san_ok(t, m) else 0


cdef inline char _low(char c) noexcept nogil:
    return c + 32 if b'A' <= c <= b'Z' else c


cdef Py_ssize_t _wrapper_len(const char *buf, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil:
    """The length of a forum wrapper [pgn] or [/pgn] (any case) at ``pos``, else 0."""
    if (pos + 5 <= stop and buf[pos] == b'[' and _low(buf[pos + 1]) == b'p' and _low(buf[pos + 2]) == b'g'
            and _low(buf[pos + 3]) == b'n' and buf[pos + 4] == b']'):
        return 5
    if (pos + 6 <= stop and buf[pos] == b'[' and buf[pos + 1] == b'/' and _low(buf[pos + 2]) == b'p'
            and _low(buf[pos + 3]) == b'g' and _low(buf[pos + 4]) == b'n' and buf[pos + 5] == b']'):
        return 6
    return 0


cdef bint _wrapper_line(const char *buf, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil:
    cdef bint found = False
    cdef Py_ssize_t w
    while True:
        while pos < stop and _is_ws(buf[pos]):
            pos += 1
        if pos >= stop:
            return found
        w = _wrapper_len(buf, pos, stop)
        if not w:
            return False
        found = True
        pos += w


cdef inline Py_ssize_t _unwrapped(const char *buf, Py_ssize_t pos, Py_ssize_t j) noexcept nogil:
    cdef const char *hit = <const char *>memchr(buf + pos, b'[', j - pos)
    cdef Py_ssize_t k
    if hit != NULL:
        k = hit - buf
        if _wrapper_len(buf, k, j) == j - k:
            return k
    return j


cdef bint _clock_seconds(const char *p, Py_ssize_t n, long long *seconds, Py_ssize_t *frac) noexcept nogil:
    """Parse ``H:MM:SS[.f]``; ``frac`` gets the index of the ``.`` (or n)."""
    cdef Py_ssize_t i = 0, hs
    cdef long long h = 0
    while i < n and _is_digit(p[i]):
        h = h * 10 + (p[i] - 48)
        i += 1
    if i == 0 or i + 6 > n or i > 15:
        return False
    if (p[i] != b':' or not _is_digit(p[i + 1]) or not _is_digit(p[i + 2]) or p[i + 3] != b':'
            or not _is_digit(p[i + 4]) or not _is_digit(p[i + 5])):
        return False
    seconds[0] = (h * 3600 + ((p[i + 1] - 48) * 10 + (p[i + 2] - 48)) * 60
                  + (p[i + 4] - 48) * 10 + (p[i + 5] - 48))
    i += 6
    frac[0] = i
    if i == n:
        return True
    if p[i] != b'.' or i + 1 >= n:
        return False
    i += 1
    while i < n:
        if not _is_digit(p[i]):
            return False
        i += 1
    return True


cdef bint _eval_ok(const char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef char c
    if n == 0 or p[0] == b',':
        return False
    for i in range(n):
        c = p[i]
        if not (_is_digit(c) or c == b'.' or c == b'#' or c == b'-' or c == b'+' or c == b','):
            return False
    return True


cdef inline Py_ssize_t _eval_end(const char *buf, Py_ssize_t vs, Py_ssize_t ve) noexcept nogil:
    """Where an eval's value ``buf[vs:ve]`` ends: at the comma before a search depth (``0.17,20``), or ``ve``.
    (A loop, not memchr: the values are a few bytes long.)"""
    while vs < ve and buf[vs] != b',':
        vs += 1
    return vs


# ---------------------------------------------------------------- one game

cdef struct _GameArrays:
    # A _Game's own arrays and their room, kept aside while it points at spans it does not own
    # (records_from_spans: a GameSpans' game lent to it).
    Py_ssize_t *tags
    Py_ssize_t *moves
    Py_ssize_t *evals
    long long *clock_secs
    Py_ssize_t *clock_frac
    Py_ssize_t cap_tags, cap_moves


cdef class _Game:
    """Reusable per-game scratch: spans into the block, grown on demand."""
    cdef Py_ssize_t start, end
    cdef Py_ssize_t ntags, cap_tags
    cdef Py_ssize_t *tags          # 4 per tag: name start/end, value start/end (raw, escaped)
    cdef Py_ssize_t nmoves, cap_moves
    cdef Py_ssize_t *moves         # 2 per ply
    cdef Py_ssize_t *evals         # 2 per ply; start -1 = none
    cdef long long *clock_secs     # per ply; -1 = none
    cdef Py_ssize_t *clock_frac    # 2 per ply: the ".f" span
    cdef Py_ssize_t nevals, nclocks  # plies that have an eval, a clock
    cdef Py_ssize_t result_start, result_end
    cdef const char *result_lit    # the result a token written otherwise ("1–0") means; NULL: the token
    cdef Py_ssize_t result_lit_len
    cdef long long first_ply
    cdef int bad                   # BAD_*: why the game is rejected (0: it is not)
    cdef Py_ssize_t bad_pos        # where the error is
    cdef Py_ssize_t bad_tok, bad_len  # the token the message quotes
    cdef bint out_of_memory        # a C array could not grow: MemoryError once the GIL is back
    cdef bint plain_values         # every tag line was plain (_plain_tag_line) and no value holds
                                   # the separator's first byte or CR: values are written as they are
    cdef const char *moves_text    # field 20 from a moves hook (NULL: the SAN as written);
    cdef Py_ssize_t moves_len      # the caller keeps the bytes object alive
    cdef bint filtered             # a filter dropped it (a bad game is rejected instead)
    cdef int32_t *nags             # 2 per NAG, in the order written: its ply, its value (-1: over NAG_LIMIT)
    cdef Py_ssize_t nnags, cap_nags
    cdef int32_t *offers           # 2 per draw-offer comment, in the order written: its ply, its side (0 White)
    cdef Py_ssize_t noffers, cap_offers

    def __cinit__(self):
        self.cap_tags = 32
        self.tags = <Py_ssize_t *>malloc(4 * self.cap_tags * sizeof(Py_ssize_t))
        self.cap_moves = 256
        self.moves = <Py_ssize_t *>malloc(2 * self.cap_moves * sizeof(Py_ssize_t))
        self.evals = <Py_ssize_t *>malloc(2 * self.cap_moves * sizeof(Py_ssize_t))
        self.clock_secs = <long long *>malloc(self.cap_moves * sizeof(long long))
        self.clock_frac = <Py_ssize_t *>malloc(2 * self.cap_moves * sizeof(Py_ssize_t))
        if not (self.tags and self.moves and self.evals and self.clock_secs and self.clock_frac):
            raise MemoryError()

    def __dealloc__(self):
        free(self.tags)
        free(self.moves)
        free(self.evals)
        free(self.clock_secs)
        free(self.clock_frac)
        free(self.nags)
        free(self.offers)

    cdef void keep(self, _GameArrays *own) noexcept nogil:
        """Its own arrays into ``own``, before it is pointed at arrays it does not own (GameSpans.lend)."""
        own.tags, own.moves, own.evals = self.tags, self.moves, self.evals
        own.clock_secs, own.clock_frac = self.clock_secs, self.clock_frac
        own.cap_tags, own.cap_moves = self.cap_tags, self.cap_moves

    cdef void unlend(self, _GameArrays *own) noexcept nogil:
        """Its own arrays back from ``own`` (what ``keep`` put there): it owns, and frees, what it points at."""
        self.tags, self.moves, self.evals = own.tags, own.moves, own.evals
        self.clock_secs, self.clock_frac = own.clock_secs, own.clock_frac
        self.cap_tags, self.cap_moves = own.cap_tags, own.cap_moves

    cdef void reset(self, Py_ssize_t start) noexcept nogil:
        self.start = start
        self.end = start
        self.ntags = 0
        self.nmoves = 0
        self.nevals = 0
        self.nclocks = 0
        self.result_start = 0
        self.result_end = 0
        self.result_lit = NULL
        self.result_lit_len = 0
        self.first_ply = -1
        self.bad = 0
        self.bad_pos = -1
        self.plain_values = True
        self.moves_text = NULL
        self.moves_len = 0
        self.filtered = False
        self.nnags = 0
        self.noffers = 0

    cdef inline int add_tag(self, Py_ssize_t ns, Py_ssize_t ne, Py_ssize_t vs, Py_ssize_t ve) noexcept nogil:
        cdef Py_ssize_t n = self.ntags
        cdef Py_ssize_t *tag
        if n == self.cap_tags and self.grow_tags() < 0:
            return -1
        tag = self.tags + 4 * n
        self.ntags = n + 1
        tag[0] = ns
        tag[1] = ne
        tag[2] = vs
        tag[3] = ve
        return 0

    cdef inline int add_move(self, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        """A ply whose SAN is ``buf[s:e]``, without eval or clock yet; -1 when memory is short."""
        # (the count and the arrays read once, before the stores: the compiler would reload
        # them after each, since a store through one of the arrays may alias them)
        cdef Py_ssize_t n = self.nmoves
        cdef Py_ssize_t *moves
        cdef Py_ssize_t *evals
        cdef long long *clock_secs
        if n == self.cap_moves and self.grow_moves() < 0:
            return -1
        moves = self.moves
        evals = self.evals
        clock_secs = self.clock_secs
        self.nmoves = n + 1
        moves[2 * n] = s
        moves[2 * n + 1] = e
        evals[2 * n] = -1
        clock_secs[n] = -1
        return 0

    cdef int add_nag(self, int32_t value) noexcept nogil:
        """A NAG of the last ply (``value`` -1: over NAG_LIMIT); -1 when memory is short."""
        if self.nnags == self.cap_nags:
            if not _grow(<void **>&self.nags, 2 * (2 * self.cap_nags + 16) * sizeof(int32_t)):
                self.out_of_memory = True
                return -1
            self.cap_nags = 2 * self.cap_nags + 16
        self.nags[2 * self.nnags] = <int32_t>(self.nmoves - 1)
        self.nags[2 * self.nnags + 1] = value
        self.nnags += 1
        return 0

    cdef int add_offer(self, int32_t side) noexcept nogil:
        """A draw offer by ``side`` (0 White, 1 Black) after the last ply; -1 when memory is short."""
        if self.noffers == self.cap_offers:
            if not _grow(<void **>&self.offers, 2 * (2 * self.cap_offers + 4) * sizeof(int32_t)):
                self.out_of_memory = True
                return -1
            self.cap_offers = 2 * self.cap_offers + 4
        self.offers[2 * self.noffers] = <int32_t>(self.nmoves - 1)
        self.offers[2 * self.noffers + 1] = side
        self.noffers += 1
        return 0

    # Growth without the GIL: on failure the arrays stay as they were and
    # out_of_memory is set; the caller turns it into MemoryError.
    cdef int grow_tags(self) noexcept nogil:
        if not _grow(<void **>&self.tags, 8 * self.cap_tags * sizeof(Py_ssize_t)):
            self.out_of_memory = True
            return -1
        self.cap_tags *= 2
        return 0

    cdef int grow_moves(self) noexcept nogil:
        cdef Py_ssize_t cap = 2 * self.cap_moves
        if not (_grow(<void **>&self.moves, 2 * cap * sizeof(Py_ssize_t))
                and _grow(<void **>&self.evals, 2 * cap * sizeof(Py_ssize_t))
                and _grow(<void **>&self.clock_secs, cap * sizeof(long long))
                and _grow(<void **>&self.clock_frac, 2 * cap * sizeof(Py_ssize_t))):
            self.out_of_memory = True
            return -1
        self.cap_moves = cap
        return 0

    cdef inline Py_ssize_t fail(self, int why, Py_ssize_t pos, Py_ssize_t tok, Py_ssize_t n) noexcept nogil:
        """Mark the game bad (``why`` at ``pos``, quoting ``buf[tok:tok+n]``); returns -1."""
        self.bad = why
        self.bad_pos = pos
        self.bad_tok = tok
        self.bad_len = n
        return -1


cdef inline const char *_result_at(const char *buf, _Game game) noexcept nogil:
    """The text of the movetext's result: the token, or what a token written otherwise means."""
    return game.result_lit if game.result_lit != NULL else buf + game.result_start


cdef inline Py_ssize_t _result_len(_Game game) noexcept nogil:
    return game.result_lit_len if game.result_lit != NULL else game.result_end - game.result_start


cdef bint _grow(void **p, size_t size) noexcept nogil:
    """realloc ``*p`` in place; False (``*p`` untouched) when memory is short."""
    cdef void *q = realloc(p[0], size)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef Py_ssize_t _unescape_into(const char *p, Py_ssize_t n, char *d) noexcept nogil:
    """Copy a tag value to ``d`` with ``\\"`` and ``\\\\`` undone; returns the length written (<= n)."""
    cdef Py_ssize_t i = 0, k = 0
    while i < n:
        if p[i] == b'\\' and i + 1 < n and (p[i + 1] == b'"' or p[i + 1] == b'\\'):
            i += 1
        d[k] = p[i]
        k += 1
        i += 1
    return k


cdef bytes _unescape(const char *p, Py_ssize_t n):
    if memchr(p, b'\\', n) == NULL:
        return PyBytes_FromStringAndSize(p, n)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n)
    return out[:_unescape_into(p, n, PyBytes_AS_STRING(out))]


cdef inline Py_ssize_t _skip_ws(const char *buf, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil:
    while pos < stop and _is_ws(buf[pos]):
        pos += 1
    return pos


cdef Py_ssize_t _loose_value_end(const char *buf, Py_ssize_t value_start, Py_ssize_t stop, Py_ssize_t q,
                                 Py_ssize_t *resume) noexcept nogil:
    """Where a tag value not closed as the standard says ends (see the pure twin); -1 if none fits, -2 for a
    value with no closing quote that holds [ ] { }."""
    cdef Py_ssize_t k = value_start, close, nxt, e
    while k < stop:
        if buf[k] == b'"':
            close = _skip_ws(buf, k + 1, stop)
            if close < stop and buf[close] == b']':
                nxt = _skip_ws(buf, close + 1, stop)
                if nxt >= stop or buf[nxt] == b'[':
                    resume[0] = close + 1
                    return k
        k += 1
    if q >= 0:
        return -1
    e = stop
    while e > value_start and _is_ws(buf[e - 1]):
        e -= 1
    if e > value_start and buf[e - 1] == b']':
        e -= 1
    for k in range(value_start, e):
        if buf[k] == b'[' or buf[k] == b']' or buf[k] == b'{' or buf[k] == b'}':
            return -2
    resume[0] = stop
    return e


cdef Py_ssize_t _tags_on_line(const char *buf, Py_ssize_t pos, Py_ssize_t stop, _Game game) noexcept nogil:
    cdef Py_ssize_t here, name_start, name_end, value_start, q, back, after, w
    cdef const char *hit
    while True:
        while pos < stop and _is_ws(buf[pos]):
            pos += 1
        if pos >= stop:
            return stop
        if buf[pos] != b'[':
            return pos
        w = _wrapper_len(buf, pos, stop)
        if w:
            pos += w        # a forum's [pgn] or [/pgn]
            continue
        here = pos
        pos += 1
        name_start = pos
        while pos < stop and not (_CLS[<unsigned char>buf[pos]] & C_NAME_END):
            pos += 1
        name_end = pos
        while pos < stop and _is_ws(buf[pos]):
            pos += 1
        if name_end == name_start or pos >= stop or buf[pos] != b'"':
            return game.fail(BAD_TAG, here, 0, 0)
        pos += 1
        value_start = pos
        while True:
            hit = <const char *>memchr(buf + pos, b'"', stop - pos) if pos < stop else NULL
            if hit == NULL:
                q = -1
                break
            q = hit - buf
            back = q - 1
            while back >= value_start and buf[back] == b'\\':
                back -= 1
            if (q - 1 - back) % 2 == 0:
                break
            pos = q + 1
        after = _skip_ws(buf, q + 1, stop) if q >= 0 else stop
        if q >= 0 and after < stop and buf[after] == b']':
            pos = after + 1
        elif q >= 0 and after >= stop:
            pos = stop      # an unfinished tag: no ']'
        else:
            q = _loose_value_end(buf, value_start, stop, q, &pos)
            if q < 0:
                return game.fail(BAD_TAG if q == -1 else BAD_TAG_VALUE, here, 0, 0)
        game.plain_values = False
        if game.add_tag(name_start, name_end, value_start, q) < 0:
            return -1


cdef inline uint64_t _load64(const char *p) noexcept nogil:
    """Eight bytes as one machine word."""
    cdef uint64_t x
    memcpy(&x, p, 8)
    return x


# "{ [%clk " as a word, and the tests on the eight bytes "H:MM:SS]" of a clock
# value: ':' ':' ']' in bytes 1, 4, 7; digits in bytes 0, 2, 3, 5, 6 (a byte is
# a digit when its high nibble is 3 and stays 3 with 6 added; no carry reaches
# a tested byte, since a byte that carries fails the first test).
# Built from byte strings, so they hold whatever the byte order.
cdef uint64_t _CLK_OPEN = _load64(b"{ [%clk ")
cdef uint64_t _CLK_FIXED_MASK = _load64(b"\x00\xff\x00\x00\xff\x00\x00\xff")
cdef uint64_t _CLK_FIXED = _load64(b"\x00:\x00\x00:\x00\x00]")
cdef uint64_t _CLK_DIGIT_HIGH = _load64(b"\xf0\x00\xf0\xf0\x00\xf0\xf0\x00")
cdef uint64_t _CLK_DIGIT_ZEROS = _load64(b"\x30\x00\x30\x30\x00\x30\x30\x00")
cdef uint64_t _CLK_DIGIT_SIXES = _load64(b"\x06\x00\x06\x06\x00\x06\x06\x00")


cdef inline bint _clock_word(const char *p) noexcept nogil:
    """Whether the eight bytes at ``p`` are ``H:MM:SS]``: a one-digit hour, minutes, seconds, ``]``."""
    cdef uint64_t x = _load64(p)
    return ((x & _CLK_FIXED_MASK) == _CLK_FIXED and (x & _CLK_DIGIT_HIGH) == _CLK_DIGIT_ZEROS
            and ((x + _CLK_DIGIT_SIXES) & _CLK_DIGIT_HIGH) == _CLK_DIGIT_ZEROS)


cdef inline long long _clock_word_seconds(const char *p) noexcept nogil:
    """The seconds of a ``H:MM:SS]`` word (_clock_word)."""
    return ((p[0] - 48) * 3600 + ((p[2] - 48) * 10 + (p[3] - 48)) * 60 + (p[5] - 48) * 10 + (p[6] - 48))


cdef inline Py_ssize_t _plain_tag_line(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """``[Name "value"]`` then LF at ``pos``, the shape of every tag line lichess writes:
    the tag added and the index after the LF returned; -1 (nothing added) for any
    other line, which the general reading (_line_end, _tags_on_line) then reads.

    The name is letters, digits and ``_``; the value holds no quote, backslash or
    LF. _tags_on_line reads such a line to the same spans, so the result is the
    same. A value holding the separator's first byte or CR clears plain_values.
    """
    cdef Py_ssize_t i = fastpgn_name_run(buf, pos + 1, end), name_end, value_start
    while i < end and _CLS[<unsigned char>buf[i]] & C_TAG_NAME:
        i += 1
    name_end = i
    if name_end == pos + 1 or i + 1 >= end or buf[i] != b' ' or buf[i + 1] != b'"':
        return -1
    i += 2
    value_start = i
    i = fastpgn_value_run(buf, i, end)
    while i < end and not (_CLS[<unsigned char>buf[i]] & (C_TAG_STOP | C_FIELD_CARE)):
        i += 1
    if i < end and _CLS[<unsigned char>buf[i]] & C_FIELD_CARE:
        game.plain_values = False
        while i < end and not (_CLS[<unsigned char>buf[i]] & C_TAG_STOP):
            i += 1
    if i + 2 >= end or buf[i] != b'"' or buf[i + 1] != b']' or buf[i + 2] != b'\n':
        return -1
    if game.add_tag(pos + 1, name_end, value_start, i) < 0:
        return -2
    return i + 3


cdef inline Py_ssize_t _clock_comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """``{ [%clk H:MM:SS] }`` at ``pos``, the comment on most plies of a dump, read as _lichess_comment reads
    it: the index after ``}``, else -1 (nothing read). Inline in _movetext, before the call to
    _lichess_comment, whose other shapes are rarer. (Compiled only, as _lichess_comment.)
    """
    cdef Py_ssize_t ply = game.nmoves - 1
    if (pos + 18 <= end and _load64(buf + pos) == _CLK_OPEN and _clock_word(buf + pos + 8)
            and buf[pos + 16] == b' ' and buf[pos + 17] == b'}'):
        if ply >= 0 and game.clock_secs[ply] < 0:
            game.clock_secs[ply] = _clock_word_seconds(buf + pos + 8)
            game.nclocks += 1
            game.clock_frac[2 * ply] = pos + 15
            game.clock_frac[2 * ply + 1] = pos + 15
        return pos + 18
    return -1


cdef Py_ssize_t _lichess_comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """The comments lichess writes, ``{ [%eval 0.17] [%clk 0:03:00] }``, in one pass.

    Accepts only that exact shape (one space before each command and before
    ``}``, a lowercase name, a value of digits and ``:.#+-,``, valid clock and
    eval values) and returns the index after ``}``; -1 for anything else,
    which _comment then reads. Over that shape both give the same result:
    nothing in it is ``}``, ``]`` or a newline, so the spans _comment would
    find with memchr are the ones walked here. ``%clk`` and ``%eval`` values
    are parsed as they are walked (the grammar of _clock_seconds and
    _eval_ok, ending at ``]``); any surprise returns -1, so _comment reports
    it. (No pure-Python twin: this is a shortcut inside the mirrored
    _comment, not a different grammar.)
    """
    cdef Py_ssize_t i = pos + 1, name, vs, hs, frac, ply = game.nmoves - 1
    cdef long long seconds
    while True:
        if i + 1 >= end or buf[i] != b' ':
            return -1
        i += 1
        if buf[i] == b'}':
            return i + 1
        if i + 2 >= end or buf[i] != b'[' or buf[i + 1] != b'%':
            return -1
        name = i + 2
        if name + 12 <= end and memcmp(buf + name, b"clk ", 4) == 0:
            # H:MM:SS[.f] then ']': hours are 1 to 15 digits
            vs = name + 4
            if vs + 8 <= end and _clock_word(buf + vs):
                # one digit of hours, no fraction: the eight bytes checked at once
                if ply >= 0 and game.clock_secs[ply] < 0:
                    game.clock_secs[ply] = _clock_word_seconds(buf + vs)
                    game.nclocks += 1
                    game.clock_frac[2 * ply] = vs + 7
                    game.clock_frac[2 * ply + 1] = vs + 7
                i = vs + 8
                continue
            i = vs
            seconds = 0
            while i < end and _CLS[<unsigned char>buf[i]] & C_DIGIT:
                seconds = seconds * 10 + (buf[i] - 48)
                i += 1
            hs = i - vs
            if hs == 0 or hs > 15 or i + 7 > end:
                return -1
            if (buf[i] != b':' or not _is_digit(buf[i + 1]) or not _is_digit(buf[i + 2]) or buf[i + 3] != b':'
                    or not _is_digit(buf[i + 4]) or not _is_digit(buf[i + 5])):
                return -1
            seconds = (seconds * 3600 + ((buf[i + 1] - 48) * 10 + (buf[i + 2] - 48)) * 60
                       + (buf[i + 4] - 48) * 10 + (buf[i + 5] - 48))
            i += 6
            frac = i
            if buf[i] == b'.':
                i += 1
                while i < end and _is_digit(buf[i]):
                    i += 1
                if i == frac + 1:
                    return -1
            if i >= end or buf[i] != b']':
                return -1
            if ply >= 0 and game.clock_secs[ply] < 0:
                game.clock_secs[ply] = seconds
                game.nclocks += 1
                game.clock_frac[2 * ply] = frac
                game.clock_frac[2 * ply + 1] = i
            i += 1
            continue
        if name + 5 < end and memcmp(buf + name, b"eval ", 5) == 0:
            vs = name + 5
            i = vs
            while i < end and _CLS[<unsigned char>buf[i]] & C_EVAL:
                i += 1
            if i >= end or buf[i] != b']' or i == vs or buf[vs] == b',':
                return -1
            if ply >= 0 and game.evals[2 * ply] < 0:
                game.evals[2 * ply] = vs
                game.evals[2 * ply + 1] = _eval_end(buf, vs, i)
                game.nevals += 1
            i += 1
            continue
        # another command (%csl, %cal, ...): its name and value are only walked
        i = name
        while i < end and _CLS[<unsigned char>buf[i]] & C_LOWER:
            i += 1
        if i >= end or buf[i] != b' ':
            return -1
        vs = i + 1
        i = vs
        while i < end and _CLS[<unsigned char>buf[i]] & C_VALUE:
            i += 1
        if i >= end or buf[i] != b']' or i == vs:
            return -1
        i += 1


cdef Py_ssize_t _comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef const char *hit = <const char *>memchr(buf + pos + 1, b'}', end - pos - 1) if pos + 1 < end else NULL
    cdef Py_ssize_t close = -1 if hit == NULL else hit - buf
    cdef Py_ssize_t limit = end if close < 0 else close
    cdef Py_ssize_t ply, cmd, name_end, shut, vs, ve, frac
    cdef long long seconds
    if pos + 1 < limit and memchr(buf + pos + 1, b'\n', limit - pos - 1) != NULL:
        if _next_boundary(buf, pos, limit) < limit:
            return game.fail(BAD_COMMENT, pos, 0, 0)
    if close < 0:
        return game.fail(BAD_COMMENT, pos, 0, 0)
    ply = game.nmoves - 1
    if ply >= 0 and close - pos - 1 >= 17:      # lichess's draw offer, a comment of its own: the twin's _OFFERS
        vs = pos + 1
        ve = close
        while vs < ve and _is_space(buf[vs]):
            vs += 1
        while ve > vs and _is_space(buf[ve - 1]):
            ve -= 1
        if ve - vs == 17 and memcmp(buf + vs + 5, b" offers draw", 12) == 0:
            if memcmp(buf + vs, b"White", 5) == 0:
                if game.add_offer(0) < 0:
                    return -1
            elif memcmp(buf + vs, b"Black", 5) == 0:
                if game.add_offer(1) < 0:
                    return -1
    cmd = _find2(buf, pos + 1, close, b'[', b'%')
    while cmd >= 0:
        name_end = cmd + 2
        while name_end < close and not _is_space(buf[name_end]) and buf[name_end] != b']':
            name_end += 1
        hit = <const char *>memchr(buf + name_end, b']', close - name_end) if name_end < close else NULL
        if hit == NULL:
            break
        shut = hit - buf
        if (name_end - cmd - 2 == 3 and memcmp(buf + cmd + 2, b"clk", 3) == 0):
            vs = name_end
            ve = shut
            while vs < ve and _is_space(buf[vs]):
                vs += 1
            while ve > vs and _is_space(buf[ve - 1]):
                ve -= 1
            if not _clock_seconds(buf + vs, ve - vs, &seconds, &frac):
                return game.fail(BAD_CLOCK, cmd, vs, ve - vs)
            if ply >= 0 and game.clock_secs[ply] < 0:
                game.clock_secs[ply] = seconds
                game.nclocks += 1
                game.clock_frac[2 * ply] = vs + frac
                game.clock_frac[2 * ply + 1] = ve
        elif (name_end - cmd - 2 == 4 and memcmp(buf + cmd + 2, b"eval", 4) == 0):
            vs = name_end
            ve = shut
            while vs < ve and _is_space(buf[vs]):
                vs += 1
            while ve > vs and _is_space(buf[ve - 1]):
                ve -= 1
            if not _eval_ok(buf + vs, ve - vs):
                return game.fail(BAD_EVAL, cmd, vs, ve - vs)
            if ply >= 0 and game.evals[2 * ply] < 0:
                game.evals[2 * ply] = vs
                game.evals[2 * ply + 1] = _eval_end(buf, vs, ve)
                game.nevals += 1
        cmd = _find2(buf, shut + 1, close, b'[', b'%')
    return close + 1


cdef inline Py_ssize_t _find2(const char *buf, Py_ssize_t pos, Py_ssize_t end, char a, char b) noexcept nogil:
    """Index of the two-byte sequence ``ab`` in ``buf[pos:end]``, or -1."""
    cdef const char *hit
    while pos + 1 < end:
        hit = <const char *>memchr(buf + pos, a, end - pos - 1)
        if hit == NULL:
            return -1
        if hit[1] == b:
            return hit - buf
        pos = hit - buf + 1
    return -1


cdef Py_ssize_t _variation(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef Py_ssize_t depth = 0, i = pos, close, limit, stop
    cdef const char *hit
    cdef char c
    while i < end:
        c = buf[i]
        if c == b'(':
            depth += 1
        elif c == b')':
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == b'{':
            hit = <const char *>memchr(buf + i + 1, b'}', end - i - 1) if i + 1 < end else NULL
            close = -1 if hit == NULL else hit - buf
            limit = end if close < 0 else close
            if (i + 1 < limit and memchr(buf + i + 1, b'\n', limit - i - 1) != NULL
                    and _next_boundary(buf, i, limit) < limit):
                break
            if close < 0:
                break
            i = close
        elif c == b';':
            i = _line_end(buf, i, end) - 1
        elif c == b'\n':
            stop = _line_end(buf, i + 1, end)
            if _is_tag_line(buf, i + 1, stop):
                break
        i += 1
    return game.fail(BAD_VARIATION, pos, 0, 0)


# NAGs. The move-assessment glyphs (PGN standard 10.2) after a move, in its token or apart: ! ? !! ?? !? ?!
# are NAGs 1 to 6 (the pure twin's _GLYPH_NAGS); the nags column is int16, so a larger $N is a null entry.
cdef enum:
    NAG_LIMIT = 32767


cdef inline Py_ssize_t _glyph_len(const char *t, Py_ssize_t n) noexcept nogil:
    """How many of the last (at most two) bytes of ``t[:n]`` are ``!`` or ``?``."""
    cdef Py_ssize_t k = n
    while k > 0 and (t[k - 1] == b'!' or t[k - 1] == b'?') and n - k < 2:
        k -= 1
    return n - k


cdef int32_t _glyph_nag(const char *t, Py_ssize_t n) noexcept nogil:
    """The NAG of the glyph ``t[:n]`` ends with (``e4!?`` is 5); 0 if none (the pure twin's _glyph_nag)."""
    cdef Py_ssize_t g = _glyph_len(t, n)
    cdef const char *p = t + n - g
    if g == 1:
        return 1 if p[0] == b'!' else 2
    if g == 2:
        if p[0] == p[1]:
            return 3 if p[0] == b'!' else 4
        return 5 if p[0] == b'!' else 6
    return 0


cdef int32_t _nag_value(const char *p, Py_ssize_t n) noexcept nogil:
    """A ``$N``'s N from its ``n`` >= 1 digits; -1 above NAG_LIMIT (the pure twin's _nag_value)."""
    cdef int32_t v = 0
    cdef Py_ssize_t i
    for i in range(n):
        v = v * 10 + (p[i] - 48)
        if v > NAG_LIMIT:
            return -1
    return v


cdef inline Py_ssize_t _quick_san(const char *buf, Py_ssize_t pos, unsigned short cls) noexcept nogil:
    """Length of the move at ``pos`` when it has one of the shapes most moves have
    ("e4", "Nf3", "exd5", "Nxe5", "Nbd7", "R1e2", "O-O", each maybe with "+"
    or "#"; "O-O-O" without) and a delimiter follows it; 0 otherwise (the
    general reading in _movetext, which gives the same answer for these,
    decides). ``buf[pos:pos + 6]`` must be readable.
    """
    cdef Py_ssize_t n
    cdef unsigned short c1 = _CLS[<unsigned char>buf[pos + 1]]
    if cls & C_FILE and c1 & C_RANK:
        n = 2
    elif cls & C_PIECE and c1 & C_FILE and _CLS[<unsigned char>buf[pos + 2]] & C_RANK:
        n = 3
    elif (cls & (C_FILE | C_PIECE) and buf[pos + 1] == b'x' and _CLS[<unsigned char>buf[pos + 2]] & C_FILE
          and _CLS[<unsigned char>buf[pos + 3]] & C_RANK):
        n = 4
    elif (cls & C_PIECE and c1 & (C_FILE | C_RANK) and _CLS[<unsigned char>buf[pos + 2]] & C_FILE
          and _CLS[<unsigned char>buf[pos + 3]] & C_RANK):
        n = 4       # the piece's file or rank given ("Nbd7", "R1e2")
    elif buf[pos] == b'O' and buf[pos + 1] == b'-' and buf[pos + 2] == b'O':
        if buf[pos + 3] == b'-' and buf[pos + 4] == b'O':
            # (a check after it would put the delimiter past the six bytes: the general reading's)
            return 5 if _CLS[<unsigned char>buf[pos + 5]] & C_DELIM else 0
        n = 3
    else:
        return 0
    if buf[pos + n] == b'+' or buf[pos + n] == b'#':
        n += 1
    return n if _CLS[<unsigned char>buf[pos + n]] & C_DELIM else 0


cdef inline bint _is_result(const char *t, Py_ssize_t n) noexcept nogil:
    if n == 3 and ((t[0] == b'1' and t[1] == b'-' and t[2] == b'0') or (t[0] == b'0' and t[1] == b'-' and t[2] == b'1')):
        return True
    return n == 7 and memcmp(t, b"1/2-1/2", 7) == 0


cdef long long _first_ply(const char *buf, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t digits = pos
    cdef long long number = 0
    while digits < stop and _is_digit(buf[digits]):
        number = number * 10 + (buf[digits] - 48) if digits - pos < 9 else number
        digits += 1
    if digits - pos > 9 or number == 0:
        return -1
    return 2 * (number - 1) + (1 if stop - digits >= 3 else 0)


cdef inline bint _set(const char **p, const char *value) noexcept nogil:
    p[0] = value
    return value != NULL


cdef Py_ssize_t _plies_run(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """Compiled only: _movetext's readings of the commonest tokens, in a loop of their own.

    Before the game's result, from ``pos``: spaces, move numbers (``12.``,
    ``12...``), moves of the shapes _quick_san reads and comments
    _clock_comment or _lichess_comment read, each read as _movetext reads
    it; returns the index of the first byte it does not read so (or where
    fewer than 18 bytes are left), which _movetext then reads; -1 when
    memory is short. A loop with few live values, which the compiler keeps
    in registers, where _movetext's many readings make it spill them.
    """
    cdef char c
    cdef unsigned short cls
    cdef Py_ssize_t j, k, n
    while end - pos >= 18:
        c = buf[pos]
        if c == b' ':
            pos += 1
            continue
        cls = _CLS[<unsigned char>c]
        if cls & C_DIGIT:
            k = pos + 1
            while k - pos < 17 and _is_digit(buf[k]):    # (up to 17 digits: still within the 18 bytes)
                k += 1
            if buf[k] != b'.':
                return pos
            k += 1
            if k < end and buf[k] == b'.':
                k += 1
                while k < end and buf[k] == b'.':
                    k += 1
            if game.nmoves == 0:
                game.first_ply = _first_ply(buf, pos, k)
            pos = k + 1 if k < end and buf[k] == b' ' else k
        elif c == b'{':
            j = _clock_comment(buf, pos, end, game)
            if j < 0:
                j = _lichess_comment(buf, pos, end, game)
                if j < 0:
                    return pos
            pos = j + 1 if j < end and buf[j] == b' ' else j
        else:
            n = _quick_san(buf, pos, cls)
            if not n:
                return pos
            j = pos + n
            if game.add_move(pos, j) < 0:
                return -1
            pos = j + 1 if buf[j] == b' ' else j
    return pos


cdef Py_ssize_t _movetext(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef char c
    cdef unsigned short cls
    cdef Py_ssize_t j, k, stop, n
    cdef const char *lit
    cdef bint blank, ended = game.result_end != game.result_start   # the game's result is read
    while pos < end:
        if not ended:
            pos = _plies_run(buf, pos, end, game)
            if pos < 0:
                return -1
            if pos >= end:
                break
        c = buf[pos]
        if c == b' ':
            pos += 1
            continue
        cls = _CLS[<unsigned char>c]
        if not (cls & C_DELIM):
            # a token: move number, result, or SAN move. First the two shapes
            # most tokens have, each read once; the general reading below
            # gives the same answer for them.
            if cls & C_DIGIT:
                # "12." or "12...": digits then a dot cannot be a result or castling
                k = pos + 1
                while k < end and _is_digit(buf[k]):
                    k += 1
                if k < end and buf[k] == b'.':
                    if ended:
                        return pos      # a move number after the result starts the next game
                    k += 1
                    if k < end and buf[k] == b'.':
                        k += 1
                        while k < end and buf[k] == b'.':
                            k += 1
                    if game.nmoves == 0:
                        game.first_ply = _first_ply(buf, pos, k)
                    pos = k + 1 if k < end and buf[k] == b' ' else k
                    continue
            elif pos + 5 < end and not ended:
                n = _quick_san(buf, pos, cls)
                if n:
                    # a move of a common shape; the space after it taken too
                    j = pos + n
                    if game.add_move(pos, j) < 0:
                        return -1
                    pos = j + 1 if buf[j] == b' ' else j
                    continue
            j = pos + 1
            while j < end and not (_CLS[<unsigned char>buf[j]] & C_DELIM):
                j += 1
            if not ended and (cls & (C_FILE | C_PIECE) or c == b'O') and _san_ok(buf + pos, j - pos):
                # A move of another shape ("Nbd7", "O-O", "e8=Q", "Bb5+?!"), read as the general
                # reading below reads it: a token that starts with a letter and is SAN holds no '['
                # (no wrapper to cut off) and is no result, move number, or annotation apart
                # ("e.p." and "ep" are no SAN), so it is a move of its whole length.
                if game.add_move(pos, j) < 0:
                    return -1
                if buf[j - 1] == b'!' or buf[j - 1] == b'?':   # a glyph in the move's token ("e4!?")
                    if game.add_nag(_glyph_nag(buf + pos, j - pos)) < 0:
                        return -1
                pos = j
                continue
            j = _unwrapped(buf, pos, j)
            if j == pos:
                pos += _wrapper_len(buf, pos, end)      # a forum's [/pgn] after the moves
                continue
            n = j - pos
            lit = NULL
            if c == b'*' or (cls & C_DIGIT and _is_result(buf + pos, n)) or _set(&lit, _dash_result(buf + pos, n)):
                if c == b'*' and n != 1:
                    return game.fail(BAD_TOKEN, pos, pos, n)
                if not ended:
                    game.result_start = pos
                    game.result_end = j
                    game.result_lit = lit
                    game.result_lit_len = strlen(lit) if lit != NULL else 0
                    ended = True
                pos = j
                continue
            if cls & C_DIGIT and not _castling_len(buf + pos, n, b'0'):
                if ended:
                    return pos
                k = pos + 1
                while k < j and _is_digit(buf[k]):
                    k += 1
                while k < j and buf[k] == b'.':
                    k += 1
                if k < j and _is_digit(buf[k - 1]):
                    return game.fail(BAD_TOKEN, pos, pos, n)
                if game.nmoves == 0:
                    game.first_ply = _first_ply(buf, pos, k)
                pos = k
                continue
            if _stands_apart(buf + pos, n):
                # an annotation or glyph apart from its move ("e4 !?", "e4 +-"), Crafty's "..."
                if game.nmoves == 0 and game.first_ply >= 0 and game.first_ply % 2 == 0 and _all_dots(buf + pos, n):
                    game.first_ply += 1
                elif game.nmoves > 0 and not ended and _glyph_nag(buf + pos, n) and _glyph_len(buf + pos, n) == n:
                    if game.add_nag(_glyph_nag(buf + pos, n)) < 0:
                        return -1
                pos = j
                continue
            if ended:
                return pos              # so does a move
            k = _move_len(buf + pos, n)
            if not k:
                return game.fail(BAD_TOKEN, pos, pos, n)
            if game.add_move(pos, pos + k) < 0:
                return -1
            if buf[pos + k - 1] == b'!' or buf[pos + k - 1] == b'?':   # a glyph in the move's token ("e4!?")
                if game.add_nag(_glyph_nag(buf + pos, k)) < 0:
                    return -1
            pos = j
        elif c == b'{':
            j = _clock_comment(buf, pos, end, game)
            if j < 0:
                j = _lichess_comment(buf, pos, end, game)
            if j >= 0:
                pos = j + 1 if j < end and buf[j] == b' ' else j
                continue
            pos = _comment(buf, pos, end, game)
            if pos < 0:
                return -1
        elif cls & C_WS:
            pos += 1
        elif c == b'\n':
            blank = game.nmoves > 0 and _ends_blank_line(buf, pos)
            pos += 1
            stop = _line_end(buf, pos, end)
            if _is_tag_line(buf, pos, stop) or (blank and _starts_first_move(buf, pos, stop)):
                return pos
            if pos < end and buf[pos] == b'%':
                pos = stop
        elif c == b'(':
            if game.nmoves == 0:
                pos += 1                # stray: no move to vary yet
                continue
            pos = _variation(buf, pos, end, game)
            if pos < 0:
                return -1
        elif c == b';':
            pos = _line_end(buf, pos, end)
        elif c == b'$':
            j = pos + 1
            while j < end and _is_digit(buf[j]):
                j += 1
            if j == pos + 1:
                return game.fail(BAD_NAG, pos, 0, 0)
            if game.nmoves > 0 and not ended and game.add_nag(_nag_value(buf + pos + 1, j - pos - 1)) < 0:
                return -1
            pos = j
        elif c == b')':
            pos += 1                    # stray: no variation open
        else:  # '}'
            return game.fail(BAD_BRACE, pos, 0, 0)
    return end


cdef Py_ssize_t _skip_movetext(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef char c
    cdef Py_ssize_t j, k, stop, since
    cdef const char *lit
    cdef bint moves = False, blank
    while pos < end:
        if moves and game.result_end == game.result_start:
            # Compiled only: once the game has a move and no result, no token but a
            # result changes where it ends, and every result holds '-', '/', '*' or
            # the first byte of another dash (0xE2) or of '½' (0xC2);
            # run to the next such byte, or one that ends a line or opens a
            # variation, NAG or a comment not closed on its line (closed ones are
            # run over), then back to the start of its token (after the last
            # delimiter: a token boundary of the reading below).
            since = pos
            pos = fastpgn_skip_comments_run(buf, pos, end)
            while pos < end and not (_CLS[<unsigned char>buf[pos]] & C_SKIP):
                pos += 1
            if pos >= end:
                return end
            c = buf[pos]
            if (c == b'-' or c == b'/' or c == b'*' or <unsigned char>c == 0xE2
                    or <unsigned char>c == 0xC2):
                while pos > since and not (_CLS[<unsigned char>buf[pos - 1]] & C_DELIM):
                    pos -= 1
        c = buf[pos]
        if c == b' ' or c == b'\t' or c == b'\r':
            pos += 1
        elif c == b'\n':
            blank = moves and _ends_blank_line(buf, pos)
            pos += 1
            stop = _line_end(buf, pos, end)
            if _is_tag_line(buf, pos, stop) or (blank and _starts_first_move(buf, pos, stop)):
                return pos
            if pos < end and buf[pos] == b'%':
                pos = stop
        elif c == b'{':
            pos = _skip_comment(buf, pos, end, game)
            if pos < 0:
                return -1
        elif c == b'(':
            if not moves:
                pos += 1
                continue
            pos = _variation(buf, pos, end, game)
            if pos < 0:
                return -1
        elif c == b';':
            pos = _line_end(buf, pos, end)
        elif c == b'$':
            pos += 1
            while pos < end and _is_digit(buf[pos]):
                pos += 1
        elif c == b')':
            pos += 1
        elif c == b'}':
            return game.fail(BAD_BRACE, pos, 0, 0)
        else:
            j = pos + 1
            while j < end and not (_CLS[<unsigned char>buf[j]] & C_DELIM):
                j += 1
            j = _unwrapped(buf, pos, j)
            if j == pos:
                pos += _wrapper_len(buf, pos, end)
                continue
            lit = NULL
            if ((j - pos == 1 and c == b'*') or (_is_digit(c) and _is_result(buf + pos, j - pos))
                    or _set(&lit, _dash_result(buf + pos, j - pos))):
                if game.result_end == game.result_start:
                    game.result_start = pos
                    game.result_end = j
                    game.result_lit = lit
                    game.result_lit_len = strlen(lit) if lit != NULL else 0
                pos = j
                continue
            if _is_digit(c) and not _castling_len(buf + pos, j - pos, b'0'):
                if game.result_end != game.result_start:
                    return pos
                k = pos
                while k < j and _is_digit(buf[k]):
                    k += 1
                while k < j and buf[k] == b'.':
                    k += 1
                pos = k
                continue
            if _stands_apart(buf + pos, j - pos):
                pos = j
                continue
            if game.result_end != game.result_start:
                return pos
            moves = True
            pos = j
    return end


cdef Py_ssize_t _skip_comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    # Compiled only: most comments close on their line, which one run finds.
    cdef Py_ssize_t close = fastpgn_brace_run(buf, pos + 1, end)
    while close < end and buf[close] != b'}' and buf[close] != b'\n':
        close += 1
    if close < end and buf[close] == b'}':
        return close + 1
    return _skip_long_comment(buf, pos, end, game)


cdef Py_ssize_t _skip_long_comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """_skip_comment for a comment that spans lines or is not closed."""
    cdef const char *hit = <const char *>memchr(buf + pos + 1, b'}', end - pos - 1) if pos + 1 < end else NULL
    cdef Py_ssize_t close = -1 if hit == NULL else hit - buf
    cdef Py_ssize_t limit = end if close < 0 else close
    if pos + 1 < limit and memchr(buf + pos + 1, b'\n', limit - pos - 1) != NULL:
        if _next_boundary(buf, pos, limit) < limit:
            return game.fail(BAD_COMMENT, pos, 0, 0)
    if close < 0:
        return game.fail(BAD_COMMENT, pos, 0, 0)
    return close + 1


cdef bint _scan_game(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game, Where *where,
                     bint headers) noexcept nogil:
    """Scan the next game into ``game``; False if only blank lines remain (see the pure twin for ``where``
    and ``headers``)."""
    cdef Py_ssize_t stop, rest, r
    cdef bint skip
    cdef const char *nul
    while pos < end:
        stop = _line_end(buf, pos, end)
        if not (_is_blank(buf, pos, stop) or buf[pos] == b'%' or _wrapper_line(buf, pos, stop)):
            break       # (an escape line or a forum's [/pgn] is no game's)
        pos = stop + 1
    if pos >= end:
        return False
    game.reset(pos)
    r = 0
    while True:
        if buf[pos] == b'%':        # an escape line among the tags
            pos = _line_end(buf, pos, end) + 1
            if pos >= end:
                break
            continue
        if buf[pos] == b'[':
            rest = _plain_tag_line(buf, pos, end, game)
            if rest >= 0:
                pos = rest
                if pos >= end:
                    break
                continue
            if rest == -2:
                r = -1
                break
        stop = _line_end(buf, pos, end)
        if not _is_tag_line(buf, pos, stop):
            break
        rest = _tags_on_line(buf, pos, stop, game)
        if rest < 0:
            r = -1
            break
        if rest < stop:
            pos = rest
            break
        pos = stop + 1
        if pos >= end:
            break
    if r == 0:
        skip = headers
        if where != NULL:
            if not _keep_tags(buf, game, where):
                game.filtered = True
                skip = True
            elif where.needs_moves:
                skip = False
        if pos >= end:
            r = end
        elif skip:
            r = _skip_movetext(buf, pos, end, game)
        else:
            r = _movetext(buf, pos, end, game)
        if r >= 0 and not game.filtered and not skip and where != NULL and not _keep_moves(game, where):
            game.filtered = True
    if r < 0:
        game.end = end if game.out_of_memory else _next_boundary(buf, game.bad_pos, end)
    else:
        game.end = r
        # a stray NUL (binary data) rejects its game, not the input (fastpgn.io.sources.check_pgn)
        nul = <const char *>memchr(buf + game.start, 0, r - game.start) if r > game.start else NULL
        if nul != NULL:
            game.fail(BAD_NUL, nul - buf, 0, 0)
    return True


cdef Py_ssize_t _first(const char *buf, Py_ssize_t start, Py_ssize_t end, bint at_stream_start) noexcept nogil:
    if at_stream_start and end - start >= 3 and memcmp(buf + start, b"\xef\xbb\xbf", 3) == 0:
        return start + 3
    return start


# -- the last game of an input: what its text ends inside (fastpgn.io.blocks: a plain input cut short) --

def last_game(object data, Py_ssize_t start, Py_ssize_t end, *, bint at_stream_start=True):
    """Where the last game of ``data[start:end]`` starts, and what the text ends inside (see the pure twin)."""
    cdef Py_buffer view
    cdef _Game game = _Game()
    cdef Py_ssize_t pos, last = -1
    cdef int bad = 0
    cdef bint result = False, memory_short = False
    cdef const char *buf
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if start < 0 or start > view.len:
            raise ValueError(f"start {start} is outside the data ({view.len} bytes)")
        if end > view.len:
            end = view.len
        buf = <const char *>view.buf
        with nogil:
            pos = _first(buf, start, end, at_stream_start)
            while _scan_game(buf, pos, end, game, NULL, True):
                if game.out_of_memory:
                    memory_short = True
                    break
                last, bad, result = game.start, game.bad, game.result_end != game.result_start
                pos = game.end
    finally:
        PyBuffer_Release(&view)
    if memory_short:
        raise MemoryError()
    if last < 0:
        return -1, ""
    if bad == BAD_COMMENT:
        return last, "comment"
    if bad == BAD_VARIATION:
        return last, "variation"
    return last, "" if result or bad else "movetext"
