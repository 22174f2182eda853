# Lichess's Parquet release: one record batch written as the PGN text of its games.
#
# Included by scan/_scan_cy.pyx. The twin of fastpgn/scan/release.py, which writes the same bytes with
# pyarrow.compute (its docstring has the kinds and the text of each); tests/test_lichess_parquet.py
# holds the two to equal bytes. Here the rows are written in one pass, straight from the Arrow
# buffers and without the GIL, so the reading thread writes a batch while the scanner reads the
# one before: the compute version makes a new array for every step of every column, and cost more
# than the scan of its text.

from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE

cdef enum:
    R_TEXT = 0
    R_INT = 1
    R_DATE = 2
    R_TIME = 3

cdef dict _RELEASE_KINDS = {"text": (R_TEXT, ("string",)), "int": (R_INT, ("int8", "int16", "int32", "int64")),
                            "date": (R_DATE, ("date32[day]",)),
                            "time": (R_TIME, ("time32[s]", "time32[ms]", "time64[us]", "time64[ns]"))}
# a time's units in a second, by type
cdef dict _TIME_UNITS = {"time32[s]": (4, 1), "time32[ms]": (4, 1000), "time64[us]": (8, 1000000),
                         "time64[ns]": (8, 1000000000)}
# The values the date and time kinds write (days since 1970-01-01: 0001-01-01 to 9999-12-31; a day's seconds).
cdef enum:
    FIRST_DAY = -719162
    LAST_DAY = 2932896
    LAST_SECOND = 86399


cdef struct RCol:
    const char *prefix             # '[Name "'
    Py_ssize_t prefix_len
    int kind
    int width                      # bytes of an int or time value
    int64_t units                  # a time's units in a second
    bint signed                    # + before 0 and up (rating changes)
    bint unrated                   # a null written as ? (ratings), not left out
    const uint8_t *valid           # NULL: no nulls
    const int32_t *offsets         # strings
    const char *data
    Py_ssize_t first               # the array's offset into its buffers


cdef inline bint _valid_at(const RCol *c, Py_ssize_t i) noexcept nogil:
    return c.valid == NULL or (c.valid[i >> 3] >> (i & 7)) & 1


cdef inline bint _needs_escape(const char *p, Py_ssize_t n) noexcept nogil:
    """Whether ``p[:n]`` holds ``"``, ``\\`` or a byte below 0x0E (CR and LF among them; the others
    take the careful path for nothing), eight bytes at a time."""
    cdef uint64_t w, q, b, lo
    cdef Py_ssize_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        q = w ^ 0x2222222222222222ULL
        b = w ^ 0x5C5C5C5C5C5C5C5CULL
        lo = (w - 0x0E0E0E0E0E0E0E0EULL) & ~w
        if (((q - 0x0101010101010101ULL) & ~q) | ((b - 0x0101010101010101ULL) & ~b) | lo) & 0x8080808080808080ULL:
            return True
        i += 8
    while i < n:
        if p[i] == b'"' or p[i] == b'\\' or <unsigned char>p[i] < 0x0E:
            return True
        i += 1
    return False


cdef inline Py_ssize_t _escaped(char *d, const char *p, Py_ssize_t n) noexcept nogil:
    """Write ``p[:n]`` as a tag value at ``d`` (``"`` and ``\\`` escaped, CR and LF each a space); the bytes it
    takes. ``d`` NULL: only count them (_release_rows measures with the code that writes)."""
    cdef Py_ssize_t i, k = 0
    cdef char c
    if not _needs_escape(p, n):
        if d != NULL:
            memcpy(d, p, n)
        return n
    for i in range(n):
        c = p[i]
        if c == b'"' or c == b'\\':
            if d != NULL:
                d[k] = b'\\'
                d[k + 1] = c
            k += 2
        else:
            if d != NULL:
                d[k] = b' ' if c == b'\r' or c == b'\n' else c
            k += 1
    return k


cdef inline Py_ssize_t _int_text(char *d, int64_t v, bint signed) noexcept nogil:
    """Write ``v`` in decimal at ``d`` (``+`` before 0 and up when ``signed``); the bytes it takes (``d`` NULL: count)."""
    cdef char text[24]
    cdef char digits[24]
    cdef int k = 0, n = 0
    cdef uint64_t u
    if v < 0:
        u = <uint64_t>0 - <uint64_t>v
        text[n] = b'-'
        n += 1
    else:
        u = <uint64_t>v
        if signed:
            text[n] = b'+'
            n += 1
    while True:
        digits[k] = <char>(48 + u % 10)
        k += 1
        u //= 10
        if u == 0:
            break
    while k > 0:
        k -= 1
        text[n] = digits[k]
        n += 1
    if d != NULL:
        memcpy(d, text, n)
    return n


cdef inline void _two(char *d, long v) noexcept nogil:
    d[0] = <char>(48 + v // 10)
    d[1] = <char>(48 + v % 10)


cdef inline Py_ssize_t _date_text(char *d, long days) noexcept nogil:
    """Write ``YYYY.MM.DD`` of a date32 (years 1 to 9999: _release_writable checked); 10 bytes (``d`` NULL: count)."""
    cdef long z = days + 719468, era, doe, yoe, y, doy, mp, day, month
    if d == NULL:
        return 10
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    if month <= 2:
        y += 1
    _two(d, y // 100)
    _two(d + 2, y % 100)
    d[4] = b'.'
    _two(d + 5, month)
    d[7] = b'.'
    _two(d + 8, day)
    return 10


cdef inline Py_ssize_t _time_text(char *d, long seconds) noexcept nogil:
    """Write ``HH:MM:SS`` of a second of the day (0 to 86,399: _release_writable checked); 8 bytes (``d`` NULL: count)."""
    if d == NULL:
        return 8
    _two(d, seconds // 3600)
    d[2] = b':'
    _two(d + 3, seconds // 60 % 60)
    d[5] = b':'
    _two(d + 6, seconds % 60)
    return 8


cdef inline int64_t _int_at(const RCol *c, Py_ssize_t i) noexcept nogil:
    if c.width == 8:
        return (<const int64_t *>c.data)[i]
    if c.width == 4:
        return (<const int32_t *>c.data)[i]
    if c.width == 2:
        return (<const int16_t *>c.data)[i]
    return (<const int8_t *>c.data)[i]


cdef bint _release_writable(const RCol *cols, Py_ssize_t ncols, Py_ssize_t rows) noexcept nogil:
    """Whether every date and time lies in the range the kinds write (nulls aside)."""
    cdef Py_ssize_t c, r, i
    cdef int64_t low, high, v
    for c in range(ncols):
        if cols[c].kind == R_DATE:
            low, high = FIRST_DAY, LAST_DAY
        elif cols[c].kind == R_TIME:
            low, high = 0, (LAST_SECOND + 1) * cols[c].units - 1
        else:
            continue
        for r in range(rows):
            i = cols[c].first + r
            v = _int_at(&cols[c], i)
            if (v < low or v > high) and _valid_at(&cols[c], i):
                return False
    return True


cdef inline char *_at(char *d, Py_ssize_t n) noexcept nogil:
    """Where the next bytes go: NULL while _release_rows only counts."""
    return d + n if d != NULL else NULL


cdef inline Py_ssize_t _put(char *d, const char *p, Py_ssize_t n) noexcept nogil:
    if d != NULL:
        memcpy(d, p, n)
    return n


cdef Py_ssize_t _release_rows(const RCol *cols, Py_ssize_t ncols, const RCol *moves, Py_ssize_t rows,
                              char *d) noexcept nogil:
    """Write the batch's games at ``d``; the bytes they take. Called first with ``d`` NULL, it only counts
    them: the room is measured by the code that writes, so the two cannot disagree (an estimate made
    apart once reserved a byte too few for a null rating written as ``?``)."""
    cdef Py_ssize_t n = 0, r, c, i, m
    cdef const RCol *col
    for r in range(rows):
        for c in range(ncols):
            col = &cols[c]
            i = col.first + r
            if not _valid_at(col, i):
                if not col.unrated:
                    continue
                n += _put(_at(d, n), col.prefix, col.prefix_len)
                n += _put(_at(d, n), "?", 1)
            else:
                n += _put(_at(d, n), col.prefix, col.prefix_len)
                if col.kind == R_TEXT:
                    n += _escaped(_at(d, n), col.data + col.offsets[i],
                                  col.offsets[i + 1] - col.offsets[i])
                elif col.kind == R_INT:
                    n += _int_text(_at(d, n), _int_at(col, i), col.signed)
                elif col.kind == R_DATE:
                    n += _date_text(_at(d, n), (<const int32_t *>col.data)[i])
                else:       # whole seconds, as the dumps write them
                    n += _time_text(_at(d, n), _int_at(col, i) // col.units)
            n += _put(_at(d, n), '"]\n', 3)
        n += _put(_at(d, n), "\n", 1)
        i = moves.first + r
        m = moves.offsets[i + 1] - moves.offsets[i] if _valid_at(moves, i) else 0
        if m > 0:           # no movetext reads as a game without moves (*): one game a row
            n += _put(_at(d, n), moves.data + moves.offsets[i], m)
        else:
            n += _put(_at(d, n), "*", 1)
        n += _put(_at(d, n), "\n\n", 2)
    return n


cdef inline bint _suspect_at(const char *p, Py_ssize_t j, Py_ssize_t e) noexcept nogil:
    """Whether the byte at ``j`` (of text that ends at ``e``, trailing blanks aside) is a line break, or
    ends a result with text after it."""
    cdef char c = p[j]
    if c == b'\n' or c == b'\r':
        return True
    if c == b'*':
        return j + 1 < e
    if c == b'-' and j >= 1 and j + 2 < e:       # 1-0 or 0-1 with text after it
        if (p[j - 1] == b'1' and p[j + 1] == b'0') or (p[j - 1] == b'0' and p[j + 1] == b'1'):
            return True
        return j >= 3 and j + 4 < e and p[j - 3] == b'1' and p[j - 2] == b'/' and p[j - 1] == b'2' \
            and p[j + 1] == b'1' and p[j + 2] == b'/' and p[j + 3] == b'2'
    return False


cdef extern from *:
    """
    #if defined(__SSE2__) && defined(__GNUC__)
    #include <emmintrin.h>
    #endif
    /* The first index from pos of LF, CR, '*' or '-' (the bytes _suspect_at may find suspect), or the
       first index from which fewer than sixteen bytes are left before end (read one by one then):
       sixteen bytes at a time with SSE2, eight without. */
    static Py_ssize_t fastpgn_suspect_run(const char *p, Py_ssize_t pos, Py_ssize_t end) {
    #if defined(__SSE2__) && defined(__GNUC__)
        while (end - pos >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + pos));
            __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x0A)),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8(0x0D))),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('*')),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('-'))));
            int mask = _mm_movemask_epi8(hit);
            if (mask)
                return pos + __builtin_ctz(mask);
            pos += 16;
        }
    #else
        while (end - pos >= 16) {
            static const unsigned char stops[4] = {0x0A, 0x0D, 0x2A, 0x2D};    /* LF CR * - */
            uint64_t w, x, hit = 0;
            int k;
            memcpy(&w, p + pos, 8);
            for (k = 0; k < 4; k++) {
                x = w ^ (0x0101010101010101ULL * stops[k]);
                hit |= (x - 0x0101010101010101ULL) & ~x;
            }
            if (hit & 0x8080808080808080ULL)
                return pos;     /* one of these eight: the caller steps through them */
            pos += 8;
        }
    #endif
        return pos;
    }
    """
    Py_ssize_t fastpgn_suspect_run(const char *p, Py_ssize_t pos, Py_ssize_t end) nogil


cdef bint _movetext_suspect(const char *p, Py_ssize_t n) noexcept nogil:
    """Whether a movetext may read as more than one game (the pure twin's _suspect, byte for byte);
    a run over the bytes that are none of LF, CR, ``*`` and ``-`` (fastpgn_suspect_run) between those
    it looks at."""
    cdef Py_ssize_t e = n, i = 0, j
    while e > 0 and (p[e - 1] == b' ' or p[e - 1] == b'\t'):
        e -= 1
    while i < e and (p[i] == b' ' or p[i] == b'\t'):
        i += 1
    if i < e and p[i] == b'[':
        return True
    j = i
    while True:
        j = fastpgn_suspect_run(p, j, e)
        if e - j < 16:
            break
        if _suspect_at(p, j, e):
            return True
        j += 1
    while j < e:
        if _suspect_at(p, j, e):
            return True
        j += 1
    return False


def release_suspects(object movetext):
    """The rows of a string array whose movetext may read as more than one game: a line break, a ``[``
    first, or a result (``*``, ``1-0``, ``0-1``, ``1/2-1/2``) with text after it. A cheap test, for
    fastpgn.io.lichess_parquet, which scans each such row alone."""
    cdef Py_buffer views[3]
    cdef int nviews = 0, i
    cdef RCol col
    cdef Py_ssize_t rows = len(movetext), r, k
    cdef list found = []
    cdef uint8_t *marks = NULL
    if str(movetext.type) != "string":
        raise TypeError(f"the movetext must be string, not {movetext.type}")
    try:
        _release_col(&col, R_TEXT, 4, 1, movetext, rows, views, &nviews)
        marks = <uint8_t *>calloc(rows + 1, 1)
        if marks == NULL:
            raise MemoryError()
        with nogil:
            for r in range(rows):
                k = col.first + r
                marks[r] = _valid_at(&col, k) and _movetext_suspect(col.data + col.offsets[k],
                                                                   col.offsets[k + 1] - col.offsets[k])
        for r in range(rows):
            if marks[r]:
                found.append(r)
    finally:
        free(marks)
        for i in range(nviews):
            PyBuffer_Release(&views[i])
    return found


cdef const void *_buffer_of(object buffer, Py_ssize_t need, Py_buffer *views, int *nviews) except? NULL:
    """The address of an Arrow buffer (None: NULL), held in ``views`` until released; ValueError when
    it is shorter than ``need`` bytes."""
    if buffer is None:
        if need > 0:
            raise ValueError("an Arrow array without the buffer its type needs")
        return NULL
    PyObject_GetBuffer(buffer, &views[nviews[0]], PyBUF_SIMPLE)
    nviews[0] += 1
    if views[nviews[0] - 1].len < need:
        raise ValueError("an Arrow buffer shorter than its array")
    return views[nviews[0] - 1].buf


cdef int _release_col(RCol *col, int kind, int width, int64_t units, object array, Py_ssize_t rows,
                      Py_buffer *views, int *nviews) except -1:
    """Point ``col`` at ``array``'s buffers (checked against its length)."""
    cdef list buffers = array.buffers()
    cdef Py_ssize_t first = array.offset, end
    if len(array) != rows:
        raise ValueError(f"a column of {len(array)} rows in a batch of {rows}")
    col.kind = kind
    col.width = width
    col.units = units
    col.first = first
    col.valid = <const uint8_t *>_buffer_of(buffers[0], 0, views, nviews)
    if col.valid != NULL and views[nviews[0] - 1].len < (first + rows + 7) // 8:
        raise ValueError("an Arrow validity bitmap shorter than its array")
    if kind == R_TEXT:
        col.offsets = <const int32_t *>_buffer_of(buffers[1], 4 * (first + rows + 1), views, nviews)
        end = col.offsets[first + rows]
        col.data = <const char *>_buffer_of(buffers[2], end, views, nviews)
        if col.offsets[first] < 0 or col.offsets[first] > end:
            raise ValueError("Arrow string offsets out of order")
    else:
        col.data = <const char *>_buffer_of(buffers[1], width * (first + rows), views, nviews)
    return 0


def release_text(list columns, object movetext):
    """The PGN text of one record batch of lichess's Parquet release (see the pure twin): bytes.

    ``columns`` is a list of ``(name, kind, signed, unrated, array)`` in tag order, ``movetext`` a
    string array; each array is of a type its kind takes (``text``: string, ``int``: int8 to
    int64, ``date``: date32, ``time``: time32 or time64). None when a date or a time lies outside
    the range its kind writes.
    """
    cdef Py_ssize_t ncols = len(columns), rows = len(movetext), room, written = 0, c
    cdef RCol *cols = <RCol *>calloc(ncols + 1, sizeof(RCol))
    cdef Py_buffer *views = <Py_buffer *>calloc(3 * (ncols + 1), sizeof(Py_buffer))
    cdef int nviews = 0, i, width
    cdef int64_t units
    cdef bint writable
    cdef list prefixes = []
    cdef bytes prefix, text
    cdef char *d
    try:
        if cols == NULL or views == NULL:
            raise MemoryError()
        if str(movetext.type) != "string":
            raise TypeError(f"the movetext must be string, not {movetext.type}")
        for c in range(ncols):
            name, kind, signed, unrated, array = columns[c]
            spec = _RELEASE_KINDS.get(kind)
            if spec is None:
                raise ValueError(f"no column kind {kind!r}")
            type_name = str(array.type)
            if type_name not in spec[1]:
                raise TypeError(f"a {kind} column must be {' or '.join(spec[1])}, not {type_name}")
            width, units = (int(type_name[3:]) // 8, 1) if spec[0] == R_INT else \
                _TIME_UNITS[type_name] if spec[0] == R_TIME else (4, 1)
            prefix = f'[{name} "'.encode()
            prefixes.append(prefix)
            cols[c].prefix = PyBytes_AS_STRING(prefix)
            cols[c].prefix_len = PyBytes_GET_SIZE(prefix)
            cols[c].signed = bool(signed)
            cols[c].unrated = bool(unrated)
            _release_col(&cols[c], spec[0], width, units, array, rows, views, &nviews)
        _release_col(&cols[ncols], R_TEXT, 4, 1, movetext, rows, views, &nviews)
        with nogil:
            writable = _release_writable(cols, ncols, rows)
            if writable:
                room = _release_rows(cols, ncols, &cols[ncols], rows, NULL)
        if not writable:
            return None
        # bytes written in place (its room measured above): the readers take bytes as they are, where a
        # buffer object of our own was copied into bytes once more (lichess_parquet._cut_texts)
        text = PyBytes_FromStringAndSize(NULL, room)
        d = PyBytes_AS_STRING(text)
        with nogil:
            written = _release_rows(cols, ncols, &cols[ncols], rows, d)
        if written != room:
            raise RuntimeError(f"release_text wrote {written} bytes into room for {room}")
        return text
    finally:
        for i in range(nviews):
            PyBuffer_Release(&views[i])
        free(views)
        free(cols)
