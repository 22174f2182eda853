# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Cython scanner kernel; the pure-Python twin fastpgn._scan_py is its specification.

Same functions in the same order as _scan_py.py, same results, same errors
(the differential tests prove it). Everything works on a ``const char*`` over
the block with ``memchr`` skipping; a game's tags, moves, evals and clocks are
kept as spans into the block in reusable C arrays, and the 22-field line is
written straight into a growing C buffer: no Python object per move on the
path that writes lines. A filter (where_plan) is copied into C arrays and
tested on the tag spans; a game it refuses, and every game read headers
only, has its movetext skipped (_skip_movetext, with a memchr-style run to
the next byte that can matter).
"""

from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memchr, memcmp, memcpy
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.dict cimport PyDict_GetItem, PyDict_Check
from cpython.ref cimport PyObject
from cpython.list cimport PyList_New
from cpython.long cimport PyLong_FromLongLong
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from libc.stdint cimport uint64_t
from fastpgn._board_cy cimport play_from, spans_board, uci_spans, validate_spans

cdef extern from "string.h":
    void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen)

SEP = "\u2502".encode()
cdef bytes _SEP = SEP
# lines_from_block without a moves hook runs without the GIL: threads can share a dump.
RELEASES_GIL = True
# ... and so it does with board.moves_hook() or moves_hook(uci=True), but for the games
# it hands to the hook (start tags: FEN, Variant) and those it rejects.
REPLAYS_WITHOUT_GIL = True
_BOM = b"\xef\xbb\xbf"

LINE_TAGS = (
    b"Site", b"UTCDate", b"UTCTime", b"Result", b"Termination", b"ECO",
    b"Opening", b"TimeControl", b"White", b"WhiteElo", b"WhiteRatingDiff",
    b"WhiteTitle", b"Black", b"BlackElo", b"BlackRatingDiff", b"BlackTitle",
    b"Date", b"Time",
)
DEF NSLOTS = 18
DEF S_SITE = 0
DEF S_UTCDATE = 1
DEF S_UTCTIME = 2
DEF S_RESULT = 3
DEF S_TERMINATION = 4
DEF S_ECO = 5
DEF S_OPENING = 6
DEF S_TC = 7
DEF S_WHITE = 8
DEF S_WELO = 9
DEF S_WDIFF = 10
DEF S_WTITLE = 11
DEF S_BLACK = 12
DEF S_BELO = 13
DEF S_BDIFF = 14
DEF S_BTITLE = 15
DEF S_DATE = 16
DEF S_TIME = 17


# Character classes, one table lookup per byte on the hot paths.
DEF C_DELIM = 1     # ends a movetext token: space, tab, CR, LF, { } ( ) ; $
DEF C_WS = 2        # space, tab, CR
DEF C_DIGIT = 4
DEF C_FILE = 8      # a-h
DEF C_RANK = 16     # 1-8
DEF C_PIECE = 32    # K Q R B N P
DEF C_PROMO = 64    # Q R B N K
DEF C_SPACE = 128   # space, tab, CR, LF
DEF C_VALUE = 256   # what %clk and %eval values are made of: digits : . # + - ,
DEF C_LOWER = 512   # a-z, the letters of a comment command's name
DEF C_NAME_END = 1024  # ends a tag name: space, tab, '"', ']'
DEF C_EVAL = 2048   # what an %eval value is made of: C_VALUE without ':'
DEF C_TAG_NAME = 4096    # A-Z a-z 0-9 _: the tag names _plain_tag_line reads
DEF C_TAG_STOP = 8192    # '"', backslash, LF: what ends a plain tag value, or makes it not plain
DEF C_FIELD_CARE = 16384  # the separator's first byte (0xE2) and CR: _wfield must look at such a value
DEF C_SKIP = 32768  # where _skip_movetext stops running: LF { } ( ; $ and the result bytes - / *

cdef unsigned short _CLS[256]


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
    for i in b"QRBNK":
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
    for i in b"\xe2\r":
        _CLS[i] |= C_FIELD_CARE
    for i in b"\n{}(;$-/*":
        _CLS[i] |= C_SKIP


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


cdef inline bint _is_delim(char c) noexcept nogil:
    return _CLS[<unsigned char>c] & C_DELIM


cdef class _Bad(Exception):
    pass


cdef str _show(const char *p, Py_ssize_t n):
    cdef Py_ssize_t m = 24 if n > 24 else n
    cdef str text = PyUnicode_DecodeUTF8(p, m, "replace")
    return text + ("..." if n > 24 else "")


# Why a game is rejected. The scanner records a code and the token to quote,
# so it needs no Python object (and no GIL) while it reads; _reason words it.
DEF BAD_TAG = 1
DEF BAD_TAG_VALUE = 2
DEF BAD_COMMENT = 3
DEF BAD_CLOCK = 4
DEF BAD_EVAL = 5
DEF BAD_VARIATION = 6
DEF BAD_TOKEN = 7
DEF BAD_NAG = 9
DEF BAD_BRACE = 11
DEF BAD_HOOK = 12


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
        blank = _is_blank(buf, start, stop)
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
    if n == 2 and ((tok[0] == b'-' and tok[1] == b'-') or (tok[0] == b'Z' and tok[1] == b'0')):
        return True
    c = tok[0]
    if c == b'O' or c == b'0':
        if n < 3 or tok[1] != b'-' or tok[2] != c:
            return False
        i = 3
        if i + 1 < n and tok[i] == b'-' and tok[i + 1] == c:
            i += 2
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
    if n == 0:
        return False
    for i in range(n):
        c = p[i]
        if not (_is_digit(c) or c == b'.' or c == b'#' or c == b'-' or c == b'+' or c == b','):
            return False
    return True


# ---------------------------------------------------------------- one game

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

    cdef void reset(self, Py_ssize_t start) noexcept nogil:
        self.start = start
        self.end = start
        self.ntags = 0
        self.nmoves = 0
        self.nevals = 0
        self.nclocks = 0
        self.result_start = 0
        self.result_end = 0
        self.first_ply = -1
        self.bad = 0
        self.bad_pos = -1
        self.plain_values = True
        self.moves_text = NULL
        self.moves_len = 0
        self.filtered = False

    cdef inline int add_tag(self, Py_ssize_t ns, Py_ssize_t ne, Py_ssize_t vs, Py_ssize_t ve) noexcept nogil:
        if self.ntags == self.cap_tags and self.grow_tags() < 0:
            return -1
        self.tags[4 * self.ntags] = ns
        self.tags[4 * self.ntags + 1] = ne
        self.tags[4 * self.ntags + 2] = vs
        self.tags[4 * self.ntags + 3] = ve
        self.ntags += 1
        return 0

    cdef inline int add_move(self, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        """A ply whose SAN is ``buf[s:e]``, without eval or clock yet; -1 when memory is short."""
        if self.nmoves == self.cap_moves and self.grow_moves() < 0:
            return -1
        self.moves[2 * self.nmoves] = s
        self.moves[2 * self.nmoves + 1] = e
        self.evals[2 * self.nmoves] = -1
        self.clock_secs[self.nmoves] = -1
        self.nmoves += 1
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


cdef Py_ssize_t _tags_on_line(const char *buf, Py_ssize_t pos, Py_ssize_t stop, _Game game) noexcept nogil:
    cdef Py_ssize_t here, name_start, name_end, value_start, q, back
    cdef const char *hit
    while True:
        while pos < stop and _is_ws(buf[pos]):
            pos += 1
        if pos >= stop:
            return stop
        if buf[pos] != b'[':
            return pos
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
                return game.fail(BAD_TAG_VALUE, here, 0, 0)
            q = hit - buf
            back = q - 1
            while back >= value_start and buf[back] == b'\\':
                back -= 1
            if (q - 1 - back) % 2 == 0:
                break
            pos = q + 1
        pos = q + 1
        while pos < stop and _is_ws(buf[pos]):
            pos += 1
        if pos >= stop or buf[pos] != b']':
            return game.fail(BAD_TAG, here, 0, 0)
        pos += 1
        game.plain_values = False
        if game.add_tag(name_start, name_end, value_start, q) < 0:
            return -1


cdef inline uint64_t _load64(const char *p) noexcept nogil:
    """Eight bytes as one machine word."""
    cdef uint64_t x
    memcpy(&x, p, 8)
    return x


# "{ [%clk " as a word, and the tests on the eight bytes "MM:SS] }" after the
# hour: ':' ']' ' ' '}' in bytes 2, 5, 6, 7; digits in bytes 0, 1, 3, 4 (a
# byte is a digit when its high nibble is 3 and stays 3 with 6 added; no carry
# reaches a tested byte, since a byte that carries fails the first test).
# Built from byte strings, so they hold whatever the byte order.
cdef uint64_t _CLK_OPEN = _load64(b"{ [%clk ")
cdef uint64_t _CLK_FIXED_MASK = _load64(b"\x00\x00\xff\x00\x00\xff\xff\xff")
cdef uint64_t _CLK_FIXED = _load64(b"\x00\x00:\x00\x00] }")
cdef uint64_t _CLK_DIGIT_HIGH = _load64(b"\xf0\xf0\x00\xf0\xf0\x00\x00\x00")
cdef uint64_t _CLK_DIGIT_ZEROS = _load64(b"\x30\x30\x00\x30\x30\x00\x00\x00")
cdef uint64_t _CLK_DIGIT_SIXES = _load64(b"\x06\x06\x00\x06\x06\x00\x00\x00")


cdef inline Py_ssize_t _plain_tag_line(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    """``[Name "value"]`` then LF at ``pos``, the shape of every tag line lichess writes:
    the tag added and the index after the LF returned; -1 (nothing added) for any
    other line, which the general reading (_line_end, _tags_on_line) then reads.

    The name is letters, digits and ``_``; the value holds no quote, backslash or
    LF. _tags_on_line reads such a line to the same spans, so the result is the
    same. A value holding the separator's first byte or CR clears plain_values.
    """
    cdef Py_ssize_t i = pos + 1, name_end, value_start
    while i < end and _CLS[<unsigned char>buf[i]] & C_TAG_NAME:
        i += 1
    name_end = i
    if name_end == pos + 1 or i + 1 >= end or buf[i] != b' ' or buf[i + 1] != b'"':
        return -1
    i += 2
    value_start = i
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
    cdef uint64_t x
    if pos + 18 <= end and _load64(buf + pos) == _CLK_OPEN and _is_digit(buf[pos + 8]) and buf[pos + 9] == b':':
        # "{ [%clk H:MM:SS] }", the comment on most plies of a dump: the eight
        # bytes after the hour checked at once ("MM:SS] }")
        x = _load64(buf + pos + 10)
        if ((x & _CLK_FIXED_MASK) == _CLK_FIXED and (x & _CLK_DIGIT_HIGH) == _CLK_DIGIT_ZEROS
                and ((x + _CLK_DIGIT_SIXES) & _CLK_DIGIT_HIGH) == _CLK_DIGIT_ZEROS):
            if ply >= 0 and game.clock_secs[ply] < 0:
                game.clock_secs[ply] = ((buf[pos + 8] - 48) * 3600
                                        + ((buf[pos + 10] - 48) * 10 + (buf[pos + 11] - 48)) * 60
                                        + (buf[pos + 13] - 48) * 10 + (buf[pos + 14] - 48))
                game.nclocks += 1
                game.clock_frac[2 * ply] = pos + 15
                game.clock_frac[2 * ply + 1] = pos + 15
            return pos + 18
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
            if i >= end or buf[i] != b']' or i == vs:
                return -1
            if ply >= 0 and game.evals[2 * ply] < 0:
                game.evals[2 * ply] = vs
                game.evals[2 * ply + 1] = i
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
                game.evals[2 * ply + 1] = ve
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


cdef inline Py_ssize_t _quick_san(const char *buf, Py_ssize_t pos, unsigned short cls) noexcept nogil:
    """Length of the move at ``pos`` when it has one of the shapes most moves have
    ("e4", "Nf3", "exd5", "Nxe5", each maybe with "+" or "#") and a delimiter
    follows it; 0 otherwise (the general reading in _movetext, which gives the
    same answer for these, decides). ``buf[pos:pos + 6]`` must be readable.
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


cdef Py_ssize_t _movetext(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef char c
    cdef unsigned short cls
    cdef Py_ssize_t j, k, stop, n
    cdef bint blank, ended = game.result_end != game.result_start   # the game's result is read
    while pos < end:
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
            n = j - pos
            if c == b'*' or (cls & C_DIGIT and _is_result(buf + pos, n)):
                if c == b'*' and n != 1:
                    return game.fail(BAD_TOKEN, pos, pos, n)
                if not ended:
                    game.result_start = pos
                    game.result_end = j
                    ended = True
                pos = j
                continue
            if cls & C_DIGIT and not (n >= 3 and c == b'0' and buf[pos + 1] == b'-' and buf[pos + 2] == b'0'):
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
            if n <= 2 and (c == b'!' or c == b'?') and (n == 1 or buf[pos + 1] == b'!' or buf[pos + 1] == b'?'):
                pos = j                 # an annotation standing apart from its move: "e4 !?"
                continue
            if ended:
                return pos              # so does a move
            if not _san_ok(buf + pos, n):
                return game.fail(BAD_TOKEN, pos, pos, n)
            if game.add_move(pos, j) < 0:
                return -1
            pos = j
        elif c == b'{':
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
            pos = j
        elif c == b')':
            pos += 1                    # stray: no variation open
        else:  # '}'
            return game.fail(BAD_BRACE, pos, 0, 0)
    return end


cdef Py_ssize_t _skip_movetext(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef char c
    cdef Py_ssize_t j, k, stop, since
    cdef bint moves = False, blank
    while pos < end:
        if moves and game.result_end == game.result_start:
            # Compiled only: once the game has a move and no result, no token but a
            # result changes where it ends, and every result holds '-', '/' or '*';
            # run to the next such byte, or one that ends a line or opens a
            # comment, variation or NAG, then back to the start of its token (after
            # the last delimiter: a token boundary of the reading below).
            since = pos
            while pos < end and not (_CLS[<unsigned char>buf[pos]] & C_SKIP):
                pos += 1
            if pos >= end:
                return end
            c = buf[pos]
            if c == b'-' or c == b'/' or c == b'*':
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
            if (j - pos == 1 and c == b'*') or (_is_digit(c) and _is_result(buf + pos, j - pos)):
                if game.result_end == game.result_start:
                    game.result_start = pos
                    game.result_end = j
                pos = j
                continue
            if _is_digit(c) and not (j - pos >= 3 and c == b'0' and buf[pos + 1] == b'-' and buf[pos + 2] == b'0'):
                if game.result_end != game.result_start:
                    return pos
                k = pos
                while k < j and _is_digit(buf[k]):
                    k += 1
                while k < j and buf[k] == b'.':
                    k += 1
                pos = k
                continue
            if j - pos <= 2 and (c == b'!' or c == b'?') and (j - pos == 1 or buf[pos + 1] == b'!' or buf[pos + 1] == b'?'):
                pos = j
                continue
            if game.result_end != game.result_start:
                return pos
            moves = True
            pos = j
    return end


cdef Py_ssize_t _skip_comment(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game) noexcept nogil:
    cdef const char *hit = <const char *>memchr(buf + pos + 1, b'}', end - pos - 1) if pos + 1 < end else NULL
    cdef Py_ssize_t close = -1 if hit == NULL else hit - buf
    cdef Py_ssize_t limit = end if close < 0 else close
    if pos + 1 < limit and memchr(buf + pos + 1, b'\n', limit - pos - 1) != NULL:
        if _next_boundary(buf, pos, limit) < limit:
            return game.fail(BAD_COMMENT, pos, 0, 0)
    if close < 0:
        return game.fail(BAD_COMMENT, pos, 0, 0)
    return close + 1


# A filter as the kernel reads it (the filters section after _scan_game fills it).
DEF TAG_EQUAL = 0
DEF TAG_FOLD = 1
DEF TAG_PREFIX = 2


cdef struct TagTest:
    int nnames                     # 1 or 2: the test passes if one of the tags does
    const char *names[2]
    Py_ssize_t name_lens[2]
    int kind                       # TAG_*
    Py_ssize_t nvalues
    const char **values            # (lowered for TAG_FOLD)
    Py_ssize_t *value_lens
    const char *default_value      # the value of an absent tag; NULL: an absent tag fails
    Py_ssize_t default_len


cdef struct Where:
    int elo_mode                   # -1: no rating test
    long long min_elo, max_elo     # -1: no bound
    int speeds                     # bits of SPEEDS; 0: no speed test
    bint has_since, has_until
    char since[10]
    char until[10]
    TagTest *tests
    Py_ssize_t ntests
    bint evals, clocks
    long long min_plies, max_plies  # -1: no bound
    bint needs_moves


cdef bint _scan_game(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game, Where *where,
                     bint headers) noexcept nogil:
    """Scan the next game into ``game``; False if only blank lines remain (see the pure twin for ``where``
    and ``headers``)."""
    cdef Py_ssize_t stop, rest, r
    cdef bint skip
    while pos < end:
        stop = _line_end(buf, pos, end)
        if not _is_blank(buf, pos, stop):
            break
        pos = stop + 1
    if pos >= end:
        return False
    game.reset(pos)
    r = 0
    while True:
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
    return True


# ---------------------------------------------------------------- filters
#
# The pure twin's _Where, in C: where_plan copies a spec into a Where the
# scanner reads without the GIL. Tag values are compared with their escapes
# undone, as the twin compares the values _tags_on_line unescaped.

ELO_WHITE, ELO_BLACK, ELO_BOTH, ELO_EITHER = range(4)
SPEEDS = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")
SPEED_LIMITS = (30, 180, 480, 1500, 21600)


cdef inline char _lower(char c) noexcept nogil:
    return c + 32 if b'A' <= c <= b'Z' else c


cdef long long _digits(const char *p, Py_ssize_t n) noexcept nogil:
    """The number 1 to 9 ASCII digits say, else -1."""
    cdef long long v = 0
    cdef Py_ssize_t i
    if n < 1 or n > 9:
        return -1
    for i in range(n):
        if not _is_digit(p[i]):
            return -1
        v = v * 10 + (p[i] - 48)
    return v


cdef int _speed_bit(const char *p, Py_ssize_t n) noexcept nogil:
    cdef const char *plus
    cdef long long base, increment, seconds
    if n == 1 and p[0] == b'-':
        return 32
    plus = <const char *>memchr(p, b'+', n) if n > 0 else NULL
    if plus == NULL:
        return 0
    base = _digits(p, plus - p)
    increment = _digits(plus + 1, n - (plus - p) - 1)
    if base < 0 or increment < 0:
        return 0
    seconds = base + 40 * increment
    if seconds < 30:
        return 1
    if seconds < 180:
        return 2
    if seconds < 480:
        return 4
    if seconds < 1500:
        return 8
    if seconds < 21600:
        return 16
    return 32


def speed_bit(time_control):
    """The bit (1 << index in SPEEDS) of lichess's speed for a TimeControl value (bytes or str); 0 if none."""
    cdef bytes raw = time_control.encode() if isinstance(time_control, str) else bytes(time_control)
    return _speed_bit(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw))


cdef bint _well_formed_date(const char *p, Py_ssize_t n) noexcept nogil:
    cdef int i
    if n != 10 or p[4] != b'.' or p[7] != b'.':
        return False
    for i in range(10):
        if i != 4 and i != 7 and not _is_digit(p[i]):
            return False
    return True


cdef Py_ssize_t _last_tag(const char *buf, _Game game, const char *name, Py_ssize_t n) noexcept nogil:
    """The index of the game's last tag named ``name``, or -1 (the last of a name counts, as in a dict)."""
    cdef Py_ssize_t t, found = -1
    for t in range(game.ntags):
        if game.tags[4 * t + 1] - game.tags[4 * t] == n and memcmp(buf + game.tags[4 * t], name, n) == 0:
            found = t
    return found


cdef bint _value_is(const char *p, Py_ssize_t n, bint raw, const char *lit, Py_ssize_t m, int kind) noexcept nogil:
    """Whether value ``p[:n]`` (escaped if ``raw``) equals ``lit`` (lowered first for TAG_FOLD) or, for
    TAG_PREFIX, starts with it."""
    cdef Py_ssize_t i = 0, k = 0
    cdef char c
    while i < n:
        c = p[i]
        if raw and c == b'\\' and i + 1 < n and (p[i + 1] == b'"' or p[i + 1] == b'\\'):
            i += 1
            c = p[i]
        if k == m:
            return kind == TAG_PREFIX
        if kind == TAG_FOLD:
            c = _lower(c)
        if c != lit[k]:
            return False
        i += 1
        k += 1
    return k == m


cdef bint _keep_tags(const char *buf, _Game game, Where *w) noexcept nogil:
    """The pure twin's _Where.keep_tags on the game's tag spans."""
    cdef Py_ssize_t t, i, k, v, n
    cdef long long white, black
    cdef bint ok_white, ok_black, ok, raw
    cdef const char *p
    cdef TagTest *test
    if w.elo_mode >= 0:
        t = _last_tag(buf, game, b"WhiteElo", 8)
        white = -1 if t < 0 else _digits(buf + game.tags[4 * t + 2], game.tags[4 * t + 3] - game.tags[4 * t + 2])
        t = _last_tag(buf, game, b"BlackElo", 8)
        black = -1 if t < 0 else _digits(buf + game.tags[4 * t + 2], game.tags[4 * t + 3] - game.tags[4 * t + 2])
        ok_white = white >= 0 and w.min_elo <= white and (w.max_elo < 0 or white <= w.max_elo)
        ok_black = black >= 0 and w.min_elo <= black and (w.max_elo < 0 or black <= w.max_elo)
        if w.elo_mode == 0:
            ok = ok_white
        elif w.elo_mode == 1:
            ok = ok_black
        elif w.elo_mode == 2:
            ok = ok_white and ok_black
        else:
            ok = ok_white or ok_black
        if not ok:
            return False
    if w.speeds:
        t = _last_tag(buf, game, b"TimeControl", 11)
        if t < 0 or not (_speed_bit(buf + game.tags[4 * t + 2], game.tags[4 * t + 3] - game.tags[4 * t + 2])
                         & w.speeds):
            return False
    if w.has_since or w.has_until:
        t = _last_tag(buf, game, b"UTCDate", 7)
        if t < 0:
            t = _last_tag(buf, game, b"Date", 4)
        if t < 0:
            return False
        p = buf + game.tags[4 * t + 2]
        if (not _well_formed_date(p, game.tags[4 * t + 3] - game.tags[4 * t + 2])
                or (w.has_since and memcmp(p, w.since, 10) < 0) or (w.has_until and memcmp(p, w.until, 10) > 0)):
            return False
    for i in range(w.ntests):
        test = &w.tests[i]
        ok = False
        for k in range(test.nnames):
            t = _last_tag(buf, game, test.names[k], test.name_lens[k])
            if t >= 0:
                p = buf + game.tags[4 * t + 2]
                n = game.tags[4 * t + 3] - game.tags[4 * t + 2]
                raw = True
            elif test.default_value != NULL:
                p = test.default_value
                n = test.default_len
                raw = False
            else:
                continue
            for v in range(test.nvalues):
                if _value_is(p, n, raw, test.values[v], test.value_lens[v], test.kind):
                    ok = True
                    break
            if ok:
                break
        if not ok:
            return False
    return True


cdef inline bint _keep_moves(_Game game, Where *w) noexcept nogil:
    """The pure twin's _Where.keep_moves on a game read in full."""
    return ((not w.evals or game.nevals > 0) and (not w.clocks or game.nclocks > 0)
            and game.nmoves >= w.min_plies and (w.max_plies < 0 or game.nmoves <= w.max_plies))


cdef class _WherePlan:
    """A where_spec copied into a C Where (the pure twin's _Where)."""
    cdef Where c
    cdef list keep                 # the bytes objects the C arrays point into
    cdef readonly tuple spec

    def __cinit__(self, tuple spec):
        cdef Py_ssize_t i, k
        cdef TagTest *test
        cdef bytes b
        self.c.tests = NULL
        self.c.ntests = 0
        self.keep = []
        self.spec = spec
        (elo_mode, min_elo, max_elo, speeds, since, until, tests, evals, clocks, min_plies, max_plies) = spec
        self.c.elo_mode, self.c.min_elo, self.c.max_elo, self.c.speeds = elo_mode, min_elo, max_elo, speeds
        self.c.has_since = since is not None
        self.c.has_until = until is not None
        for bound in (since, until):
            if bound is not None and len(bound) != 10:
                raise ValueError(f"a date bound is YYYY.MM.DD, not {bound!r}")
        if since is not None:
            memcpy(self.c.since, PyBytes_AS_STRING(since), 10)
        if until is not None:
            memcpy(self.c.until, PyBytes_AS_STRING(until), 10)
        self.c.evals, self.c.clocks = evals, clocks
        self.c.min_plies, self.c.max_plies = min_plies, max_plies
        self.c.needs_moves = bool(evals or clocks or min_plies >= 0 or max_plies >= 0)
        self.c.tests = <TagTest *>calloc(len(tests) + 1, sizeof(TagTest))
        if self.c.tests == NULL:
            raise MemoryError()
        for i, (names, kind, values, default) in enumerate(tests):
            if not 1 <= len(names) <= 2:
                raise ValueError("a tag test names one or two tags")
            test = &self.c.tests[i]
            self.c.ntests = i + 1
            test.nnames = len(names)
            test.kind = kind
            for k, b in enumerate(names):
                self.keep.append(b)
                test.names[k] = PyBytes_AS_STRING(b)
                test.name_lens[k] = PyBytes_GET_SIZE(b)
            test.values = <const char **>calloc(len(values) + 1, sizeof(char *))
            test.value_lens = <Py_ssize_t *>calloc(len(values) + 1, sizeof(Py_ssize_t))
            if test.values == NULL or test.value_lens == NULL:
                raise MemoryError()
            test.nvalues = len(values)
            for k, b in enumerate(values):
                self.keep.append(b)
                test.values[k] = PyBytes_AS_STRING(b)
                test.value_lens[k] = PyBytes_GET_SIZE(b)
            if default is not None:
                b = default
                self.keep.append(b)
                test.default_value = PyBytes_AS_STRING(b)
                test.default_len = PyBytes_GET_SIZE(b)

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.c.tests != NULL:
            for i in range(self.c.ntests):
                free(self.c.tests[i].values)
                free(self.c.tests[i].value_lens)
            free(self.c.tests)

    def __reduce__(self):
        return (_WherePlan, (self.spec,))

    @property
    def needs_moves(self):
        return self.c.needs_moves


def where_plan(spec):
    """A filter spec (fastpgn.filters.Where.spec()) as the kernel reads it; None stays None (see the pure twin)."""
    if spec is None or isinstance(spec, _WherePlan):
        return spec
    return _WherePlan(spec)


# ---------------------------------------------------------------- output buffer

cdef struct Out:
    char *data
    Py_ssize_t size
    Py_ssize_t cap


cdef int _reserve(Out *out, Py_ssize_t extra) noexcept nogil:
    """Room for ``extra`` more bytes; -1 (buffer untouched) when memory is short."""
    cdef Py_ssize_t cap
    cdef char *grown
    if out.size + extra <= out.cap:
        return 0
    cap = out.cap * 2 if out.cap > 0 else 4096
    while cap < out.size + extra:
        cap *= 2
    grown = <char *>realloc(out.data, cap)
    if grown == NULL:
        return -1
    out.data = grown
    out.cap = cap
    return 0


# Unchecked writers for _line, which reserves room for a whole line first:
# every field is at most as long as the source bytes it comes from, plus a
# fixed allowance for separators, codes and counts (LINE_SLACK).
DEF LINE_SLACK = 256


cdef inline void _w(Out *out, const char *p, Py_ssize_t n) noexcept nogil:
    # Short spans (moves, evals) as two overlapping fixed-size copies, which
    # compile to plain loads and stores: no loop, no call, no read outside p[:n].
    cdef char *d = out.data + out.size
    if n > 16:
        memcpy(d, p, n)
    elif n >= 8:
        memcpy(d, p, 8)
        memcpy(d + n - 8, p + n - 8, 8)
    elif n >= 4:
        memcpy(d, p, 4)
        memcpy(d + n - 4, p + n - 4, 4)
    elif n > 0:
        d[0] = p[0]
        d[n >> 1] = p[n >> 1]
        d[n - 1] = p[n - 1]
    out.size += n


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


cdef inline void _wc(Out *out, char c) noexcept nogil:
    out.data[out.size] = c
    out.size += 1


cdef inline void _wsep(Out *out) noexcept nogil:
    cdef char *d = out.data + out.size
    d[0] = b'\xe2'
    d[1] = b'\x94'
    d[2] = b'\x82'
    out.size += 3


cdef char _DIGIT_PAIRS[200]     # "00" "01" ... "99"


cdef void _init_digit_pairs() noexcept:
    cdef int i
    for i in range(100):
        _DIGIT_PAIRS[2 * i] = <char>(48 + i // 10)
        _DIGIT_PAIRS[2 * i + 1] = <char>(48 + i % 10)


_init_digit_pairs()


cdef inline void _wsmall(Out *out, long long v) noexcept nogil:
    """A non-negative integer in decimal; below 10,000 (clocks in seconds, ply counts) without a loop."""
    cdef char *d = out.data + out.size
    cdef int hi, lo
    if v < 10:
        d[0] = <char>(48 + v)
        out.size += 1
    elif v < 100:
        memcpy(d, _DIGIT_PAIRS + 2 * v, 2)
        out.size += 2
    elif v < 10000:
        hi = <int>(v // 100)
        lo = <int>(v - 100 * hi)
        if hi < 10:
            d[0] = <char>(48 + hi)
            memcpy(d + 1, _DIGIT_PAIRS + 2 * lo, 2)
            out.size += 3
        else:
            memcpy(d, _DIGIT_PAIRS + 2 * hi, 2)
            memcpy(d + 2, _DIGIT_PAIRS + 2 * lo, 2)
            out.size += 4
    else:
        _wint(out, v)


cdef inline void _wint(Out *out, long long v) noexcept nogil:
    """A non-negative integer in decimal, two digits at a time."""
    cdef long long t = v
    cdef Py_ssize_t n = 1
    cdef char *d
    cdef int r
    while t >= 10:
        t //= 10
        n += 1
    out.size += n
    d = out.data + out.size
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


cdef inline void _wmoves(Out *out, const char *buf, _Game game) noexcept nogil:
    """The game's SAN moves as written, joined by single spaces (field 20).

    ``out`` has room for the game's text and LINE_SLACK more (see _wshort).
    """
    cdef Py_ssize_t i
    cdef const char *limit = buf + game.end
    for i in range(game.nmoves):
        if i:
            _wc(out, b' ')
        _wshort(out, buf + game.moves[2 * i], game.moves[2 * i + 1] - game.moves[2 * i], limit)


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
    if plain and not undots:
        _w(out, p, n)
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


# ---------------------------------------------------------------- front ends

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
    cdef int k
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


cdef int _write_tag(Out *out, const char *buf, _Game game, Py_ssize_t t, bint undots,
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


cdef struct Opening:
    uint64_t hash                  # 0: an empty slot
    const char *key
    Py_ssize_t key_len
    const char *code
    Py_ssize_t code_len


cdef inline uint64_t _fnv(uint64_t h, const char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <unsigned char>p[i]) * 1099511628211ULL
    return h


cdef class _OpeningTable:
    """A C copy of an openings dict (bytes -> bytes), so lines can take their code without the GIL.

    Keys and codes point into the dict's own bytes objects, held here: a
    snapshot of the map when opening_table made it. A key that is not in it
    (or a tag with escapes) leaves a gap that _fill_openings fills from the
    dict itself, with its ``__missing__``, whose answers the dict keeps.
    """
    cdef Opening *slots
    cdef uint64_t mask
    cdef list held
    cdef object source
    cdef Py_ssize_t source_len

    def __cinit__(self, object source):
        cdef Py_ssize_t size = 16
        cdef Opening *slot
        cdef uint64_t h
        self.source = source
        self.source_len = len(source)
        self.held = []
        while size < 2 * len(source) + 16:
            size *= 2
        self.slots = <Opening *>calloc(size, sizeof(Opening))
        if self.slots == NULL:
            raise MemoryError()
        self.mask = size - 1
        for key, code in dict.items(source):
            if type(key) is not bytes or type(code) is not bytes:
                continue
            self.held.append(key)
            self.held.append(code)
            h = _fnv(14695981039346656037ULL, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)) | 1
            slot = &self.slots[h & self.mask]
            while slot.hash != 0:
                slot = &self.slots[(slot - self.slots + 1) & self.mask]
            slot.hash = h
            slot.key = PyBytes_AS_STRING(key)
            slot.key_len = PyBytes_GET_SIZE(key)
            slot.code = PyBytes_AS_STRING(code)
            slot.code_len = PyBytes_GET_SIZE(code)

    def __dealloc__(self):
        free(self.slots)


cdef bint _table_code(Opening *slots, uint64_t mask, const char *ep, Py_ssize_t en, const char *np,
                      Py_ssize_t nn, const char **code, Py_ssize_t *code_len) noexcept nogil:
    """Look ``ECO + "│" + Opening`` up without building it; False when it is not in the table."""
    cdef uint64_t h = _fnv(_fnv(_fnv(14695981039346656037ULL, ep, en), b"\xe2\x94\x82", 3), np, nn) | 1
    cdef Opening *slot = &slots[h & mask]
    while slot.hash != 0:
        if (slot.hash == h and slot.key_len == en + 3 + nn and memcmp(slot.key, ep, en) == 0
                and memcmp(slot.key + en, b"\xe2\x94\x82", 3) == 0 and memcmp(slot.key + en + 3, np, nn) == 0):
            code[0] = slot.code
            code_len[0] = slot.code_len
            return True
        slot = &slots[(slot - slots + 1) & mask]
    return False


cdef struct Gap:
    # A line's field 10, left empty in the first pass: where it goes in the
    # output and the raw (escaped) ECO and Opening values its code comes
    # from (start -1: no such tag). Filled in with the GIL (_fill_openings).
    Py_ssize_t at
    Py_ssize_t eco_s, eco_e, name_s, name_e


cdef struct Gaps:
    Gap *items
    Py_ssize_t n, cap
    Opening *table                 # the map's C table (NULL: none), read before leaving a gap
    uint64_t table_mask


cdef bint _table_opening(Out *out, const char *buf, _Game game, Gaps *gaps, Py_ssize_t eco_tag,
                         Py_ssize_t name_tag) noexcept nogil:
    """Write the opening code from the map's C table; False (nothing written) to leave a gap."""
    cdef const char *ep = buf
    cdef const char *np = buf
    cdef const char *code
    cdef Py_ssize_t en = 0, nn = 0, code_len
    if gaps.table == NULL:
        return False
    if eco_tag >= 0:
        ep = buf + game.tags[4 * eco_tag + 2]
        en = game.tags[4 * eco_tag + 3] - game.tags[4 * eco_tag + 2]
        if not game.plain_values and memchr(ep, b'\\', en) != NULL:
            return False
    if name_tag >= 0:
        np = buf + game.tags[4 * name_tag + 2]
        nn = game.tags[4 * name_tag + 3] - game.tags[4 * name_tag + 2]
        if not game.plain_values and memchr(np, b'\\', nn) != NULL:
            return False
    if not _table_code(gaps.table, gaps.table_mask, ep, en, np, nn, &code, &code_len):
        return False
    if _reserve(out, code_len + LINE_SLACK) < 0:
        return False  # the gap path reports the shortage
    _wfield(out, code, code_len, False, False)
    return True


cdef int _add_gap(Gaps *gaps, Py_ssize_t at, _Game game, Py_ssize_t eco_tag, Py_ssize_t name_tag) noexcept nogil:
    cdef Gap *g
    if gaps.n == gaps.cap:
        if not _grow(<void **>&gaps.items, 2 * (gaps.cap + 64) * sizeof(Gap)):
            return -1
        gaps.cap = 2 * (gaps.cap + 64)
    g = &gaps.items[gaps.n]
    g.at = at
    g.eco_s = game.tags[4 * eco_tag + 2] if eco_tag >= 0 else -1
    g.eco_e = game.tags[4 * eco_tag + 3] if eco_tag >= 0 else -1
    g.name_s = game.tags[4 * name_tag + 2] if name_tag >= 0 else -1
    g.name_e = game.tags[4 * name_tag + 3] if name_tag >= 0 else -1
    gaps.n += 1
    return 0


cdef bytes _opening_key(const char *buf, Gap *g):
    """``ECO + "│" + Opening``, the openings map's key (escapes undone)."""
    cdef Py_ssize_t en = g.eco_e - g.eco_s if g.eco_s >= 0 else 0
    cdef Py_ssize_t nn = g.name_e - g.name_s if g.name_s >= 0 else 0
    cdef bytes key
    cdef char *k
    if (en and memchr(buf + g.eco_s, b'\\', en) != NULL) or (nn and memchr(buf + g.name_s, b'\\', nn) != NULL):
        return (_unescape(buf + g.eco_s, en) if en else b"") + _SEP + (_unescape(buf + g.name_s, nn) if nn else b"")
    key = PyBytes_FromStringAndSize(NULL, en + 3 + nn)
    k = PyBytes_AS_STRING(key)
    if en:
        memcpy(k, buf + g.eco_s, en)
    memcpy(k + en, b"\xe2\x94\x82", 3)
    if nn:
        memcpy(k + en + 3, buf + g.name_s, nn)
    return key


cdef int[9] _PLAYER_SLOTS = [S_TC, S_WHITE, S_WELO, S_WDIFF, S_WTITLE, S_BLACK, S_BELO, S_BDIFF, S_BTITLE]


cdef int _line(Out *out, const char *buf, _Game game, Gaps *gaps, Out *scratch) noexcept nogil:
    """Append the game's 22-field line to ``out``; -1 when memory is short.

    With ``gaps`` (an openings map is in use) field 10 is left empty and its
    place recorded; without, it is the ECO tag as written.
    """
    cdef Py_ssize_t slots[NSLOTS]
    cdef Py_ssize_t i, t, s, e, n, nevals, nclocks, vn
    cdef int slot
    cdef bint mate = False, first
    cdef const char *vp
    cdef long long secs
    for i in range(NSLOTS):
        slots[i] = -1
    for t in range(game.ntags):
        slot = _slot_of(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t])
        if slot >= 0:
            slots[slot] = t
    n = game.nmoves
    if n > 0:
        s = game.moves[2 * n - 2]
        e = game.moves[2 * n - 1]
        mate = memchr(buf + s, b'#', e - s) != NULL
    nevals = game.nevals
    nclocks = game.nclocks
    if _reserve(out, game.end - game.start + LINE_SLACK + game.moves_len) < 0:
        return -1
    # 1 id: the Site tag after its last '/'
    if slots[S_SITE] >= 0:
        if _cspan(buf, game, slots[S_SITE], scratch, &vp, &vn) < 0:
            return -1
        s = vn
        while s > 0 and vp[s - 1] != b'/':
            s -= 1
        _wfield(out, vp + s, vn - s, False, game.plain_values)
    _wsep(out)
    # 2 date
    if _write_tag(out, buf, game, slots[S_UTCDATE] if slots[S_UTCDATE] >= 0 else slots[S_DATE], True, scratch) < 0:
        return -1
    _wsep(out)
    # 3 second of the day
    t = slots[S_UTCTIME] if slots[S_UTCTIME] >= 0 else slots[S_TIME]
    if t >= 0:
        if _cspan(buf, game, t, scratch, &vp, &vn) < 0:
            return -1
        secs = _seconds_of_day(vp, vn)
        if secs >= 0:
            _wint(out, secs)
    _wsep(out)
    # 4 result
    if slots[S_RESULT] >= 0:
        if _cspan(buf, game, slots[S_RESULT], scratch, &vp, &vn) < 0:
            return -1
    else:
        vp = buf + game.result_start
        vn = game.result_end - game.result_start
    if _eq(vp, vn, b"1-0", 3):
        _wc(out, b'W')
    elif _eq(vp, vn, b"0-1", 3):
        _wc(out, b'B')
    elif _eq(vp, vn, b"1/2-1/2", 7):
        _wc(out, b'D')
    else:
        _wc(out, b'*')
    _wsep(out)
    # 5 termination
    vn = 0
    if slots[S_TERMINATION] >= 0:
        if _cspan(buf, game, slots[S_TERMINATION], scratch, &vp, &vn) < 0:
            return -1
    if _eq(vp, vn, b"Normal", 6):
        _wc(out, b'N')
    elif _eq(vp, vn, b"Time forfeit", 12):
        _wc(out, b'T')
    elif _eq(vp, vn, b"Abandoned", 9):
        _wc(out, b'A')
    elif _eq(vp, vn, b"Unterminated", 12):
        _wc(out, b'U')
    elif _eq(vp, vn, b"Rules infraction", 16):
        _wc(out, b'R')
    else:
        _wc(out, b'*')
    _wsep(out)
    # 6-9 mate, hasEval, hasClock, plies
    _wc(out, b'Y' if mate else b'N')
    _wsep(out)
    _wc(out, b'Y' if nevals else b'N')
    _wsep(out)
    _wc(out, b'Y' if nclocks else b'N')
    _wsep(out)
    _wsmall(out, n)
    _wsep(out)
    # 10 opening code: looked up later, or the ECO tag
    if gaps != NULL:
        if not _table_opening(out, buf, game, gaps, slots[S_ECO], slots[S_OPENING]):
            if _add_gap(gaps, out.size, game, slots[S_ECO], slots[S_OPENING]) < 0:
                return -1
    elif _write_tag(out, buf, game, slots[S_ECO], False, scratch) < 0:
        return -1
    _wsep(out)
    # 11-19 time control and players
    for i in range(9):
        if _write_tag(out, buf, game, slots[_PLAYER_SLOTS[i]], False, scratch) < 0:
            return -1
        _wsep(out)
    # 20 moves
    if game.moves_text != NULL:
        _w(out, game.moves_text, game.moves_len)
    else:
        _wmoves(out, buf, game)
    _wsep(out)
    # 21 evals, with the extra '#' after a mating move
    first = True
    for i in range(n if nevals else 0):
        if game.evals[2 * i] >= 0:
            if not first:
                _wc(out, b' ')
            first = False
            _wshort(out, buf + game.evals[2 * i], game.evals[2 * i + 1] - game.evals[2 * i], buf + game.end)
    if nevals and mate:
        _w(out, b" #", 2)
    _wsep(out)
    # 22 clocks in seconds
    first = True
    for i in range(n if nclocks else 0):
        if game.clock_secs[i] >= 0:
            if not first:
                _wc(out, b' ')
            first = False
            _wsmall(out, game.clock_secs[i])
            _w(out, buf + game.clock_frac[2 * i], game.clock_frac[2 * i + 1] - game.clock_frac[2 * i])
    _wc(out, b'\n')
    return 0


cdef Py_ssize_t _first(const char *buf, Py_ssize_t start, Py_ssize_t end, bint at_stream_start) noexcept nogil:
    if at_stream_start and end - start >= 3 and memcmp(buf + start, b"\xef\xbb\xbf", 3) == 0:
        return start + 3
    return start


cdef inline bint _start_tag(const char *p, Py_ssize_t n) noexcept nogil:
    """FEN, SetUp and Variant: the tags that say where a game starts, all a moves hook reads."""
    return ((n == 3 and memcmp(p, b"FEN", 3) == 0) or (n == 5 and memcmp(p, b"SetUp", 5) == 0)
            or (n == 7 and memcmp(p, b"Variant", 7) == 0))


cdef bint _has_start_tags(const char *buf, _Game game) noexcept nogil:
    cdef Py_ssize_t t
    for t in range(game.ntags):
        if _start_tag(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]):
            return True
    return False


cdef int _variant_kind(const char *p, Py_ssize_t n) noexcept nogil:
    """board.declared_start's reading of a Variant value (lowercased, without spaces, '-' or '_'):
    1 Chess960 (it holds "960" or starts "fischerandom"/"fischerrandom"), 0 standard chess (empty,
    "standard", "chess", "normal", "classical", "fromposition"), -1 any other variant."""
    cdef char key[16]
    cdef int h = 0
    cdef char c, last = 0, before = 0
    cdef bint has_960 = False
    cdef Py_ssize_t i
    for i in range(n):
        c = p[i]
        if c == b' ' or c == b'-' or c == b'_':
            continue
        if 65 <= c <= 90:
            c += 32
        if h < 16:
            key[h] = c
        h += 1
        if before == b'9' and last == b'6' and c == b'0':
            has_960 = True
        before, last = last, c
    if (has_960 or (h >= 12 and memcmp(key, b"fischerandom", 12) == 0)
            or (h >= 13 and memcmp(key, b"fischerrandom", 13) == 0)):
        return 1
    if (h == 0 or (h == 8 and memcmp(key, b"standard", 8) == 0) or (h == 5 and memcmp(key, b"chess", 5) == 0)
            or (h == 6 and memcmp(key, b"normal", 6) == 0) or (h == 9 and memcmp(key, b"classical", 9) == 0)
            or (h == 12 and memcmp(key, b"fromposition", 12) == 0)):
        return 0
    return -1


cdef int _start_of(const char *buf, _Game game, const char **fen, Py_ssize_t *fenlen, bint *chess960) noexcept nogil:
    """The start tags as board.moves_hook reads them: the last FEN's value and whether the last
    Variant names Chess960; -1 when one of those values holds an escape or names a variant the
    board does not play (the hook reads it then, and rejects the game).
    """
    cdef Py_ssize_t t, name, vs, ve
    cdef int kind
    for t in range(game.ntags):
        name = game.tags[4 * t]
        vs, ve = game.tags[4 * t + 2], game.tags[4 * t + 3]
        if game.tags[4 * t + 1] - name == 3 and memcmp(buf + name, b"FEN", 3) == 0:
            if memchr(buf + vs, b'\\', ve - vs) != NULL:
                return -1
            fen[0], fenlen[0] = buf + vs, ve - vs
        elif game.tags[4 * t + 1] - name == 7 and memcmp(buf + name, b"Variant", 7) == 0:
            if memchr(buf + vs, b'\\', ve - vs) != NULL:
                return -1
            kind = _variant_kind(buf + vs, ve - vs)
            if kind < 0:
                return -1           # a variant the board does not play: the hook names it
            chess960[0] = kind == 1
    return 0


cdef list _tag_list(const char *buf, _Game game):
    cdef list tags = []
    cdef Py_ssize_t t
    for t in range(game.ntags):
        if _start_tag(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]):
            tags.append((PyBytes_FromStringAndSize(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]),
                         _value(buf, game, t)))
    return tags


cdef bytes _joined_moves(const char *buf, _Game game):
    cdef Out out
    out.cap = game.end - game.start + LINE_SLACK  # the moves and their spaces fit in the game's text
    out.size = 0
    out.data = <char *>malloc(out.cap)
    if out.data == NULL:
        raise MemoryError()
    try:
        _wmoves(&out, buf, game)
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        free(out.data)


cdef struct Bad:
    # A rejected game, recorded without the GIL; _rejects words it.
    int why
    Py_ssize_t pos, tok, n, start, end
    long long number


cdef struct Bads:
    Bad *items
    Py_ssize_t n, cap


cdef int _add_bad(Bads *bads, _Game game, long long number) noexcept nogil:
    cdef Bad *b
    if bads.n == bads.cap:
        if not _grow(<void **>&bads.items, 2 * (bads.cap + 16) * sizeof(Bad)):
            return -1
        bads.cap = 2 * (bads.cap + 16)
    b = &bads.items[bads.n]
    b.why, b.pos, b.tok, b.n = game.bad, game.bad_pos, game.bad_tok, game.bad_len
    b.start, b.end, b.number = game.start, game.end, number
    bads.n += 1
    return 0


cdef inline int _uci_room(Out *uci, _Game game) noexcept nogil:
    """``uci`` emptied, with room for the game's UCI moves (at most 3 bytes a byte of the game, as uci_spans
    asks); -1 when memory is short."""
    uci.size = 0
    return _reserve(uci, 3 * (game.end - game.start) + 16)


DEF REPLAY_NONE = 0      # no moves hook
DEF REPLAY_HOOK = 1      # a moves hook to call for every game
DEF REPLAY_VALIDATE = 2  # board.moves_hook(): every move checked, field 20 stays the SAN
DEF REPLAY_UCI = 3       # board.moves_hook(uci=True): field 20 becomes the UCI moves


cdef Py_ssize_t _lines_pass(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game, Out *out,
                            Gaps *gaps, Bads *bads, Out *scratch, long long *number,
                            bint stop_on_error, int replay, bint board_starts, void *board, Out *uci,
                            bint *held, Where *where, long long *filtered) noexcept nogil:
    """Scan games from ``pos`` and write their lines, holding no Python object.

    With ``replay`` REPLAY_VALIDATE or REPLAY_UCI, each game from the
    standard start, and with ``board_starts`` each game with start tags too
    (FEN, Variant: read as the hook reads them), is replayed on ``board``
    (play_from; the UCI moves go to ``uci``). A good game that needs Python
    (every one with REPLAY_HOOK; otherwise one with start tags the board
    does not read here, or whose replay fails) is left in ``game``
    unwritten, ``held`` is set, and the pass stops there, so the caller
    finishes it with the GIL (the moves hook, or the board's error).
    Stops at the end, after the first bad game when ``stop_on_error``, or
    when memory is short (-1; ``game.out_of_memory`` says so). Returns the
    position after the last game read.
    """
    cdef Py_ssize_t replayed, fenlen
    cdef const char *fen
    cdef bint chess960
    while _scan_game(buf, pos, end, game, where, False):
        if game.out_of_memory:
            return -1
        number[0] += 1
        pos = game.end
        if game.bad:
            if _add_bad(bads, game, number[0]) < 0:
                game.out_of_memory = True
                return -1
            if stop_on_error:
                break
            continue
        if game.filtered:
            filtered[0] += 1
            continue
        if replay != REPLAY_NONE:
            if replay == REPLAY_HOOK:
                held[0] = True
                return pos
            fen, fenlen, chess960 = NULL, 0, False
            if _has_start_tags(buf, game) and (not board_starts
                                               or _start_of(buf, game, &fen, &fenlen, &chess960) < 0):
                held[0] = True
                return pos
            if replay == REPLAY_UCI:
                if _uci_room(uci, game) < 0:
                    game.out_of_memory = True
                    return -1
                replayed = play_from(board, buf, end, game.moves, game.nmoves, uci.data, fen, fenlen, chess960)
                game.moves_text = uci.data
                game.moves_len = replayed
            else:
                replayed = play_from(board, buf, end, game.moves, game.nmoves, NULL, fen, fenlen, chess960)
            if replayed < 0:
                game.moves_text = NULL
                held[0] = True
                return pos
        if _line(out, buf, game, gaps, scratch) < 0:
            game.out_of_memory = True
            return -1
    return pos


cdef object _hook_game(const char *buf, Py_ssize_t end, _Game game, object moves_hook, int replay, Out *uci,
                       list hook_reasons):
    """Finish good game ``game`` with the GIL: field 20 from the moves hook, or from the compiled board
    (``replay``) for a game from the standard start; a ValueError marks the game bad (BAD_HOOK).

    Returns the object field 20 now points into (keep it until the line is written), or None.
    """
    cdef object replaced = None
    try:
        # a game from the standard start: what the hook would do, on the moves where they lie
        if replay == REPLAY_HOOK or _has_start_tags(buf, game):
            replaced = moves_hook(_joined_moves(buf, game), _tag_list(buf, game))
        elif replay == REPLAY_VALIDATE:
            validate_spans(buf, end, game.moves, game.nmoves, NULL, 0, False)
        else:
            if _uci_room(uci, game) < 0:
                raise MemoryError()
            game.moves_len = uci_spans(buf, end, game.moves, game.nmoves, NULL, 0, False, uci.data)
            game.moves_text = uci.data
    except ValueError as exc:
        # the C record quotes the reason by its index in hook_reasons
        game.fail(BAD_HOOK, game.start, len(hook_reasons), 0)
        hook_reasons.append(getattr(exc, "reason", str(exc)))
    else:
        if replaced is not None:  # None: field 20 stays the SAN, as in the twin
            if type(replaced) is not bytes:
                raise TypeError(f"a moves hook returns bytes, not {type(replaced).__name__}")
            game.moves_text = PyBytes_AS_STRING(replaced)
            game.moves_len = PyBytes_GET_SIZE(replaced)
    return replaced


cdef list _rejects(const char *buf, Bads *bads, long long base_offset, list hook_reasons):
    cdef list rejects = []
    cdef Py_ssize_t i
    cdef Bad *b
    for i in range(bads.n):
        b = &bads.items[i]
        rejects.append((_reason_of(buf, b.why, b.tok, b.n, hook_reasons),
                        base_offset + b.pos, b.number, b.start, b.end))
    return rejects


cdef inline bint _reads_as_dict(object mapping):
    """A dict, or a subclass that keeps dict's lookup (OpeningMap): read in C, its ``__missing__`` still asked."""
    return PyDict_Check(mapping) and type(mapping).__getitem__ is dict.__getitem__


cdef bytes _fill_openings(const char *buf, Out *out, Gaps *gaps, object openings):
    """The lines of ``out`` with each gap's opening code (the map's value, ``?`` when absent)."""
    cdef bint plain_dict = _reads_as_dict(openings)
    cdef list codes = []
    cdef Py_ssize_t i, size = out.size, at = 0
    cdef PyObject *hit
    cdef bytes key, code, result
    cdef Out dest
    for i in range(gaps.n):
        key = _opening_key(buf, &gaps.items[i])
        # a miss still goes through openings[key], so __missing__ answers
        hit = PyDict_GetItem(openings, key) if plain_dict else NULL
        if hit != NULL:
            code = <bytes>hit
        else:
            try:
                code = openings[key]
            except KeyError:
                code = b"?"
        codes.append(code)
        size += PyBytes_GET_SIZE(code)
    result = PyBytes_FromStringAndSize(NULL, size)
    dest.data = PyBytes_AS_STRING(result)
    dest.size = 0
    dest.cap = size
    for i in range(gaps.n):
        code = <bytes>codes[i]
        memcpy(dest.data + dest.size, out.data + at, gaps.items[i].at - at)
        dest.size += gaps.items[i].at - at
        at = gaps.items[i].at
        _wfield(&dest, PyBytes_AS_STRING(code), PyBytes_GET_SIZE(code), False, False)
    memcpy(dest.data + dest.size, out.data + at, out.size - at)
    dest.size += out.size - at
    if dest.size == size:
        return result
    return result[:dest.size]  # a code held a separator or line break, which _wfield dropped


cdef char *_spare = NULL       # lines_from_block's output buffer, kept between calls (taken with the GIL)
cdef Py_ssize_t _spare_cap = 0


def opening_table(object openings):
    """The openings map as lines_from_block reads it fastest (see the pure twin).

    A dict that keeps dict's lookup (OpeningMap does) is copied into a C
    table, read without the GIL; anything else is returned as it is and asked
    per game. Make it once per run: the copy is the map as it is now.
    """
    if openings is not None and _reads_as_dict(openings):
        return _OpeningTable(openings)
    return openings


def lines_from_block(object data, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                     long long first_game, bint at_stream_start, object openings,
                     bint stop_on_error, object moves_hook=None, object where=None):
    """Turn the whole games in ``data[start:end]`` into 22-field lines (see the pure twin).

    ``data`` is any bytes-like object (bytes, bytearray, memoryview). Without
    a moves hook the games are read and written with the GIL released, so
    threads can share the work; the opening codes are then filled in with
    it (the map is a Python object).
    """
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return _lines_from_block(<const char *>view.buf, start, end, base_offset, first_game, at_stream_start,
                                 openings, stop_on_error, moves_hook, where_plan(where))
    finally:
        PyBuffer_Release(&view)


cdef tuple _lines_from_block(const char *buf, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                             long long first_game, bint at_stream_start, object openings,
                             bint stop_on_error, object moves_hook, _WherePlan plan):
    cdef _Game game = _Game()
    cdef Where *where = NULL if plan is None else &plan.c
    cdef long long filtered = 0
    cdef list rejects
    cdef long long number = first_game
    cdef Py_ssize_t pos
    cdef Out out, scratch
    cdef Gaps gaps
    cdef Bads bads
    cdef Gaps *use_gaps = NULL if openings is None else &gaps
    cdef object replaced
    cdef list hook_reasons = []
    # A hook that says it validates SAN as fastpgn's board does (board.moves_hook()):
    # games from the standard start are replayed by the compiled board in place.
    cdef bint native = moves_hook is not None and getattr(moves_hook, "validates_san", False) is True
    # ... or that it writes the UCI moves san_to_uci gives (board.moves_hook(uci=True))
    cdef bint native_uci = moves_hook is not None and getattr(moves_hook, "writes_uci", False) is True
    # ... and, if it reads FEN and Variant as board.moves_hook does, games with start tags too
    cdef bint board_starts = getattr(moves_hook, "reads_start_tags", False) is True
    cdef int replay = (REPLAY_NONE if moves_hook is None else REPLAY_VALIDATE if native
                       else REPLAY_UCI if native_uci else REPLAY_HOOK)
    # this call's own board: threads may share a dump
    cdef object board = spans_board() if replay == REPLAY_VALIDATE or replay == REPLAY_UCI else None
    cdef bint held
    cdef Out uci
    global _spare, _spare_cap
    gaps.items, gaps.n, gaps.cap = NULL, 0, 0
    cdef _OpeningTable table = None
    if isinstance(openings, _OpeningTable):
        table = openings
        openings = table.source
    gaps.table = table.slots if table is not None else NULL
    gaps.table_mask = table.mask if table is not None else 0
    bads.items, bads.n, bads.cap = NULL, 0, 0
    scratch.data, scratch.size, scratch.cap = NULL, 0, 0
    uci.data, uci.size, uci.cap = NULL, 0, 0
    out.size = 0
    if _spare != NULL:  # reuse the last call's buffer: no fresh pages to fault in per block
        out.data, out.cap = _spare, _spare_cap
        _spare = NULL
    else:
        out.cap = (end - start) // 2 + 4096
        out.data = <char *>malloc(out.cap)
        if out.data == NULL:
            raise MemoryError()
    try:
        pos = _first(buf, start, end, at_stream_start)
        # Without the GIL but for the games that need Python (a moves hook, start tags, errors).
        while True:
            held = False
            with nogil:
                pos = _lines_pass(buf, pos, end, game, &out, use_gaps, &bads, &scratch, &number,
                                  stop_on_error, replay, board_starts, <void *>board, &uci, &held, where, &filtered)
            if not held:
                break
            pos = game.end
            replaced = _hook_game(buf, end, game, moves_hook, replay, &uci, hook_reasons)
            if game.bad:
                if _add_bad(&bads, game, number) < 0:
                    raise MemoryError()
                if stop_on_error:
                    break
                continue
            if _line(&out, buf, game, use_gaps, &scratch) < 0:
                raise MemoryError()
        if game.out_of_memory:
            raise MemoryError()
        rejects = _rejects(buf, &bads, base_offset, hook_reasons)
        if use_gaps == NULL:
            lines = PyBytes_FromStringAndSize(out.data, out.size)
        else:
            lines = _fill_openings(buf, &out, &gaps, openings)
        if plan is not None:
            return lines, number - first_game, rejects, filtered
        return lines, number - first_game, rejects
    finally:
        free(gaps.items)
        free(bads.items)
        free(scratch.data)
        free(uci.data)
        if _spare == NULL:
            _spare, _spare_cap = out.data, out.cap
        else:
            free(out.data)


cdef str _text(const char *p, Py_ssize_t n):
    return PyUnicode_DecodeUTF8(p, n, "replace")


# Header names as ready str objects (hash cached): most of a game's dict keys.
cdef tuple _SLOT_NAMES = tuple(name.decode() for name in LINE_TAGS)


cdef str _header_name(const char *p, Py_ssize_t n):
    cdef int slot = _slot_of(p, n)
    if slot >= 0:
        return <str>_SLOT_NAMES[slot]
    if n == 5 and memcmp(p, b"Event", 5) == 0:
        return "Event"
    if n == 5 and memcmp(p, b"Round", 5) == 0:
        return "Round"
    return _text(p, n)


# ---------------------------------------------------------------- records: cached str and int objects

# games_from_block hands the reader each game's moves, evals and clocks as
# lists and its tags as a dict. A dump's SAN moves and evals are a vocabulary
# of a few thousand short tokens, its clocks a few thousand whole seconds, and
# most tag values (Event, Result, ECO, Opening, Elo...) repeat from game to
# game, so those objects come from caches: most plies and tags cost a
# reference count and a pointer store instead of a new object. Every cache is
# bounded: a full one starts again, whatever the input. (The caches have no
# pure-Python twin; _ply_moves, _ply_evals and _ply_clocks have, beside the
# twin's _fast_record, and give the same lists.)

cdef extern from "Python.h":
    void _list_set "PyList_SET_ITEM" (object, Py_ssize_t, PyObject *)
    void _incref "Py_INCREF" (PyObject *)
    void _decref "Py_DECREF" (PyObject *)
    void _untrack "PyObject_GC_UnTrack" (object)
    bint _is_ascii "PyUnicode_IS_ASCII" (PyObject *)
    void *_str_data "PyUnicode_DATA" (PyObject *)
    Py_ssize_t _str_len "PyUnicode_GET_LENGTH" (PyObject *)
    int PY_LITTLE_ENDIAN

cdef extern from *:
    """
    /* A dict with room for n items: no resizing while a game's tags go in. */
    #if defined(PYPY_VERSION) || defined(Py_LIMITED_API)
    #define fastpgn_sized_dict(n) PyDict_New()
    #else
    #define fastpgn_sized_dict(n) _PyDict_NewPresized(n)
    #endif
    """
    dict _sized_dict "fastpgn_sized_dict" (Py_ssize_t)

cdef struct CacheSlot:
    uint64_t key          # 0: free
    PyObject *text        # an owned str


DEF TOKEN_BITS = 15
DEF TOKEN_SLOTS = 1 << TOKEN_BITS
DEF TOKEN_BYTES = 7       # longer tokens (rare: "Rfxe1+?!") are decoded each time

# Key: the token's bytes, little end first, with its length in the top byte.
cdef CacheSlot _tokens[TOKEN_SLOTS]
cdef Py_ssize_t _token_count = 0

DEF VALUE_BITS = 13
DEF VALUE_SLOTS = 1 << VALUE_BITS
DEF VALUE_BYTES = 128     # longer tag values are decoded each time

# Key: a hash of the value's bytes (never 0); the str (ASCII only) is compared.
cdef CacheSlot _values[VALUE_SLOTS]
cdef Py_ssize_t _value_count = 0

DEF CLOCK_INTS = 21601    # whole seconds up to 6 hours; above, a new int each time
cdef PyObject *_clock_ints[CLOCK_INTS]


cdef void _forget(CacheSlot *slots, Py_ssize_t n) noexcept:
    cdef Py_ssize_t h
    for h in range(n):
        if slots[h].key:
            slots[h].key = 0
            _decref(slots[h].text)
            slots[h].text = NULL


cdef PyObject *_token_miss(const char *p, Py_ssize_t n, uint64_t key, size_t h) except NULL:
    """_token_ref for a token not in the cache: decoded, and remembered at slot ``h`` when ``key``."""
    global _token_count
    cdef object text = PyUnicode_DecodeUTF8(p, n, "replace")
    cdef PyObject *s = <PyObject *>text
    if key:
        if _token_count >= TOKEN_SLOTS // 2:
            _forget(_tokens, TOKEN_SLOTS)
            _token_count = 0
            h = <size_t>((key * <uint64_t>0x9E3779B97F4A7C15ULL) >> (64 - TOKEN_BITS))
        _incref(s)  # the cache's reference
        _tokens[h].key = key
        _tokens[h].text = s
        _token_count += 1
    _incref(s)  # the caller's
    return s


cdef inline PyObject *_token_ref(const char *p, Py_ssize_t n, const char *stop) except NULL:
    """A new reference to ``p[:n]`` decoded, from the token cache when short; ``stop`` ends the readable bytes."""
    cdef uint64_t key = 0, k
    cdef size_t h
    cdef Py_ssize_t i
    cdef PyObject *s
    if n < 1 or n > TOKEN_BYTES:
        return _token_miss(p, n, 0, 0)
    if PY_LITTLE_ENDIAN and p + 8 <= stop:
        memcpy(&key, p, 8)  # one load, the bytes after the token masked off: the loop's key
        key &= ((<uint64_t>1) << (8 * n)) - 1
    else:
        for i in range(n):
            key |= (<uint64_t><unsigned char>p[i]) << (8 * i)
    key |= (<uint64_t>n) << 56
    h = <size_t>((key * <uint64_t>0x9E3779B97F4A7C15ULL) >> (64 - TOKEN_BITS))
    while True:
        k = _tokens[h].key
        if k == key:
            s = _tokens[h].text
            _incref(s)
            return s
        if k == 0:
            return _token_miss(p, n, key, h)
        h = (h + 1) & (TOKEN_SLOTS - 1)


cdef object _token(const char *p, Py_ssize_t n, const char *stop):
    cdef PyObject *s = _token_ref(p, n, stop)
    cdef object text = <object>s
    _decref(s)  # text holds the reference _token_ref gave
    return text


cdef inline uint64_t _hash_bytes(const char *p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL, w
    cdef Py_ssize_t i = 0, k
    while True:
        w = 0
        if i + 8 <= n:
            memcpy(&w, p + i, 8)
        else:
            for k in range(n - i):
                w |= (<uint64_t><unsigned char>p[i + k]) << (8 * k)
        h = (h ^ w) * <uint64_t>0xFF51AFD7ED558CCDULL
        h ^= h >> 29
        i += 8
        if i >= n:
            return h | 1


cdef object _value_text(const char *p, Py_ssize_t n):
    """``p[:n]`` decoded, from the tag value cache (for tags whose values repeat)."""
    global _value_count
    cdef uint64_t key
    cdef size_t h
    cdef PyObject *s
    cdef object text
    if n > VALUE_BYTES:
        return PyUnicode_DecodeUTF8(p, n, "replace")
    key = _hash_bytes(p, n)
    h = <size_t>(key >> (64 - VALUE_BITS))
    while _values[h].key:
        if _values[h].key == key:
            s = _values[h].text
            if _str_len(s) == n and memcmp(_str_data(s), p, n) == 0:
                return <object>s
        h = (h + 1) & (VALUE_SLOTS - 1)
    text = PyUnicode_DecodeUTF8(p, n, "replace")
    s = <PyObject *>text
    if not _is_ascii(s):  # (then the str's data is not the bytes to compare)
        return text
    if _value_count >= VALUE_SLOTS // 2:
        _forget(_values, VALUE_SLOTS)
        _value_count = 0
        h = <size_t>(key >> (64 - VALUE_BITS))
    _incref(s)  # the cache's reference
    _values[h].key = key
    _values[h].text = s
    _value_count += 1
    return text


cdef bint _repeats(const char *p, Py_ssize_t n) noexcept nogil:
    """Whether values of the tag named ``p[:n]`` repeat across a dump (so are worth caching)."""
    cdef int slot = _slot_of(p, n)
    if slot >= 0:
        return not (slot == S_SITE or slot == S_WHITE or slot == S_BLACK or slot == S_UTCTIME
                    or slot == S_TIME)
    return ((n == 5 and (memcmp(p, b"Event", 5) == 0 or memcmp(p, b"Round", 5) == 0))
            or (n == 7 and memcmp(p, b"Variant", 7) == 0))


cdef PyObject *_clock_ref(const char *buf, _Game game, Py_ssize_t i) except NULL:
    """A new reference to ply ``i``'s clock: int seconds, float when the source has tenths."""
    cdef long long secs = game.clock_secs[i]
    cdef Py_ssize_t fs = game.clock_frac[2 * i], fe = game.clock_frac[2 * i + 1]
    cdef PyObject *s
    cdef object value
    if fs == fe and secs < CLOCK_INTS:
        s = _clock_ints[secs]
        if s == NULL:
            value = PyLong_FromLongLong(secs)
            s = <PyObject *>value
            _incref(s)  # the cache's reference
            _clock_ints[secs] = s
        _incref(s)
        return s
    if fs == fe:
        value = PyLong_FromLongLong(secs)
    else:  # float() of the text "177.7", as the reader always read it
        value = float(str(secs) + PyUnicode_DecodeUTF8(buf + fs, fe - fs, "replace"))
    _incref(<PyObject *>value)
    return <PyObject *>value


# The per-ply lists hold only str, int, float and None, so no reference cycle
# can run through them as built: they are left out of the garbage collector,
# which would otherwise walk every ply of every game of a block several times.

cdef list _ply_moves(const char *buf, const char *stop, _Game game):
    cdef Py_ssize_t i
    cdef list moves = PyList_New(game.nmoves)
    for i in range(game.nmoves):
        _list_set(moves, i, _token_ref(buf + game.moves[2 * i], game.moves[2 * i + 1] - game.moves[2 * i], stop))
    _untrack(moves)
    return moves


cdef list _ply_evals(const char *buf, const char *stop, _Game game):
    cdef Py_ssize_t i
    cdef list evals = PyList_New(game.nmoves)
    cdef PyObject *none = <PyObject *>None
    for i in range(game.nmoves):
        if game.evals[2 * i] < 0:
            _incref(none)
            _list_set(evals, i, none)
        else:
            _list_set(evals, i, _token_ref(buf + game.evals[2 * i], game.evals[2 * i + 1] - game.evals[2 * i],
                                           stop))
    _untrack(evals)
    return evals


cdef list _ply_clocks(const char *buf, _Game game):
    cdef Py_ssize_t i
    cdef list clocks = PyList_New(game.nmoves)
    cdef PyObject *none = <PyObject *>None
    for i in range(game.nmoves):
        if game.clock_secs[i] < 0:
            _incref(none)
            _list_set(clocks, i, none)
        else:
            _list_set(clocks, i, _clock_ref(buf, game, i))
    _untrack(clocks)
    return clocks


def games_from_block(object data, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                     long long first_game, bint at_stream_start, bint stop_on_error, object where=None):
    """Scan the whole games in ``data[start:end]`` (any bytes-like object) into record tuples (see the pure twin)."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return _games_from_block(<const char *>view.buf, start, end, base_offset, first_game, at_stream_start,
                                 stop_on_error, where_plan(where), False)
    finally:
        PyBuffer_Release(&view)


cdef dict _headers(const char *buf, _Game game, Out *scratch):
    """The game's tags as a dict of str (the last of a name wins)."""
    cdef dict headers = _sized_dict(game.ntags)
    cdef Py_ssize_t t, vn, ns, nn
    cdef const char *vp
    cdef int slot
    cdef bint repeats
    cdef str name
    for t in range(game.ntags):
        ns = game.tags[4 * t]
        nn = game.tags[4 * t + 1] - ns
        # _header_name and _repeats, the name looked up once
        slot = _slot_of(buf + ns, nn)
        if slot >= 0:
            name = <str>_SLOT_NAMES[slot]
            repeats = not (slot == S_SITE or slot == S_WHITE or slot == S_BLACK or slot == S_UTCTIME
                           or slot == S_TIME)
        else:
            name = _header_name(buf + ns, nn)
            repeats = _repeats(buf + ns, nn)
        if game.plain_values:
            vp = buf + game.tags[4 * t + 2]
            vn = game.tags[4 * t + 3] - game.tags[4 * t + 2]
        elif _cspan(buf, game, t, scratch, &vp, &vn) < 0:
            raise MemoryError()
        headers[name] = _value_text(vp, vn) if repeats else _text(vp, vn)
    return headers


cdef tuple _games_from_block(const char *buf, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                             long long first_game, bint at_stream_start, bint stop_on_error, _WherePlan plan,
                             bint headers_only):
    """games_from_block, or with ``headers_only`` headers_from_block."""
    cdef _Game game = _Game()
    cdef list out = [], rejects = []
    cdef long long number = first_game, filtered = 0
    cdef Py_ssize_t pos
    cdef tuple record
    cdef Out scratch
    cdef Where *where = NULL if plan is None else &plan.c
    scratch.data, scratch.size, scratch.cap = NULL, 0, 0
    try:
        pos = _first(buf, start, end, at_stream_start)
        while _scan_game(buf, pos, end, game, where, headers_only):
            number += 1
            pos = game.end
            if game.out_of_memory:
                raise MemoryError()
            if game.bad:
                rejects.append((_reason_of(buf, game.bad, game.bad_tok, game.bad_len, None),
                                base_offset + game.bad_pos, number, game.start, game.end))
                if stop_on_error:
                    break
                continue
            if game.filtered:
                filtered += 1
                continue
            if headers_only:
                record = (base_offset + game.start, number, _headers(buf, game, &scratch),
                          _token(buf + game.result_start, game.result_end - game.result_start, buf + end),
                          game.start, game.end)
            else:
                record = (base_offset + game.start, number, _headers(buf, game, &scratch),
                          _ply_moves(buf, buf + end, game), _ply_evals(buf, buf + end, game),
                          _ply_clocks(buf, game),
                          _token(buf + game.result_start, game.result_end - game.result_start, buf + end),
                          game.first_ply, game.start, game.end)
            _untrack(record)  # (what the collector's first pass would do: nothing in it is tracked)
            out.append(record)
        if plan is not None:
            return out, number - first_game, rejects, filtered
        return out, number - first_game, rejects
    finally:
        free(scratch.data)


def headers_from_block(object data, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                       long long first_game, bint at_stream_start, bint stop_on_error, object where=None):
    """games_from_block without the moves: each game's tags, its movetext skipped (see the pure twin)."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return _games_from_block(<const char *>view.buf, start, end, base_offset, first_game, at_stream_start,
                                 stop_on_error, where_plan(where), True)
    finally:
        PyBuffer_Release(&view)
