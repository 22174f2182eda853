# The CSV sink: a block's rows as CSV text, written in C from the column sink's buffers without the GIL.
#
# Included by scan/_scan_cy.pyx after columns.pxi. Mirrors fastpgn/scan/csv.py, which writes the pure
# column sink's lists through fastpgn.csv_text; the tests hold the two to equal bytes. Every value rule is
# the column sink's (docs/schema.md): _columns_from_block fills the columns as for Arrow (the clock
# entries excepted: kept as their source text, which a float32 cannot give back), then _csv_rows writes
# them row by row as csv_text writes them: RFC 4180, ``\r\n`` line ends, a field quoted only where it
# holds ``,`` ``"`` ``\r`` or ``\n``. Each writer reserves the room of what it writes itself, measured
# from the bytes it is about to write, never estimated elsewhere. Which writer a column gets is its type
# in fastpgn.schema (_csv_tables), never its name or number, and the column sink's buffers are checked
# (_filled) before a row is written: a column this sink cannot write, or one the column sink left
# unfilled, is a ColumnError naming it, never a read past a buffer.

from libc.float cimport DBL_MAX, DBL_MIN
from libc.math cimport frexp, ldexp, log10

cdef const char *_HEX = b"0123456789abcdef"

# How a column is written, from its type in fastpgn.schema (csv_text's rules; the types fastpgn.scan.csv.WRITES
# names): per column number of fastpgn.scan.csv's column_numbers, made with the column sink's tables.
cdef enum:
    W_NONE = 0          # a type with no writer here (column_numbers refuses it first: a ColumnError)
    W_STRING
    W_INT               # width 1, 2, 4 or 8 bytes
    W_BOOL
    W_DATE
    W_STAMP
    W_REAL              # float32, which the column sink keeps as doubles for CSV (_real)
    W_JOIN              # list<string>: joined by ``sep``
    W_NUMBERS           # a list of numbers (_csv_numbers' widths)
    W_NAGS              # list<list<int16>>
    W_TAGS              # list<struct<key: string, value: string>>

cdef struct CsvColumn:
    int writer, width
    char sep
    int k, item, item2  # the column's buffers (its items', its items' items')

cdef CsvColumn _CSV[MAX_COLUMNS]
cdef char _MUST_QUOTE[256]         # the bytes that make csv quote a field: , " CR LF
_MUST_QUOTE[<unsigned char>b','] = _MUST_QUOTE[<unsigned char>b'"'] = 1
_MUST_QUOTE[<unsigned char>b'\r'] = _MUST_QUOTE[<unsigned char>b'\n'] = 1


cdef struct ClockEntry:            # a clock entry as the CSV sink keeps it: its seconds and ".f" span
    long long secs
    Py_ssize_t frac_start, frac_end


cdef int _csv_clock_entry(Col *clocks, long long secs, Py_ssize_t frac_start, Py_ssize_t frac_end) noexcept nogil:
    """Append one clock entry (null when ``secs`` < 0) to ``clocks`` for _csv_clock."""
    cdef ClockEntry entry
    entry.secs, entry.frac_start, entry.frac_end = secs, frac_start, frac_end
    return _fixed(clocks, &entry, sizeof(ClockEntry), secs >= 0)


cdef inline bint _is_valid(Col *c, Py_ssize_t i) noexcept nogil:
    return c.nulls == 0 or (c.valid.data[i >> 3] >> (i & 7)) & 1


cdef inline int32_t _off_at(Col *c, Py_ssize_t i) noexcept nogil:
    return (<int32_t *>c.off.data)[i]


cdef int _csv_quote_from(Out *out, Py_ssize_t at) noexcept nogil:
    """Quote the field written at ``out.data[at:]`` if it must be (``,`` ``"`` CR LF), its quotes doubled."""
    cdef Py_ssize_t i = at, n = out.size - at, quotes = 0, d
    cdef char ch
    cdef uint64_t w
    while i + 8 <= out.size:            # eight bytes a step: none of them , " CR LF (most fields)
        memcpy(&w, out.data + i, 8)
        if (_has_byte(w, 0x2C2C2C2C2C2C2C2CULL) | _has_byte(w, 0x2222222222222222ULL)
                | _has_byte(w, 0x0D0D0D0D0D0D0D0DULL) | _has_byte(w, 0x0A0A0A0A0A0A0A0AULL)):
            break
        i += 8
    while i < out.size and not _MUST_QUOTE[<unsigned char>out.data[i]]:
        i += 1
    if i == out.size:
        return 0
    for i in range(i, out.size):
        quotes += out.data[i] == b'"'
    if _reserve(out, quotes + 2) < 0:
        return -1
    d = at + n + quotes + 1             # the closing quote; the field moves right from its end
    out.data[d] = b'"'
    for i in range(at + n - 1, at - 1, -1):
        ch = out.data[i]
        d -= 1
        out.data[d] = ch
        if ch == b'"':
            d -= 1
            out.data[d] = b'"'
    out.data[at] = b'"'
    out.size = at + n + quotes + 2
    return 0


cdef int _csv_bytes(Out *out, const char *p, Py_ssize_t n) noexcept nogil:
    if _reserve(out, n) < 0:
        return -1
    _w(out, p, n)       # (a short run, a move or a separator, without a memcpy call)
    return 0


cdef int _csv_int(Out *out, long long v) noexcept nogil:
    """``str(v)``."""
    cdef unsigned long long u = <unsigned long long>v
    cdef char digits[24]
    cdef int k = 24
    if _reserve(out, 21) < 0:
        return -1
    if 0 <= v < 10000:                  # (clocks, ratings, evals: two digits a step, no loop)
        _wsmall(out, v)
        return 0
    if v < 0:
        out.data[out.size] = b'-'
        out.size += 1
        u = 0ULL - u
    while True:
        k -= 1
        digits[k] = <char>(48 + u % 10)
        u //= 10
        if u == 0:
            break
    memcpy(out.data + out.size, digits + k, 24 - k)
    out.size += 24 - k
    return 0


cdef int _csv_day(Out *out, long long days) noexcept nogil:
    """``YYYY-MM-DD`` of the day ``days`` after 1970-01-01 (year 1 to 9999, as the date column holds)."""
    if _reserve(out, 10) < 0:
        return -1
    _date_text(out.data + out.size, days)     # (scan/release.pxi: YYYY.MM.DD)
    out.data[out.size + 4] = out.data[out.size + 7] = b'-'
    out.size += 10
    return 0


cdef int _csv_stamp(Out *out, long long seconds) noexcept nogil:
    """``YYYY-MM-DD HH:MM:SSZ`` of ``seconds`` since 1970-01-01 UTC (the ``Z``: DuckDB and polars read it zoned)."""
    cdef long long days = seconds // 86400
    if days * 86400 > seconds:         # (C division truncates; the day is the floor)
        days -= 1
    if _csv_day(out, days) < 0 or _reserve(out, 10) < 0:
        return -1
    out.data[out.size] = b' '
    _time_text(out.data + out.size + 1, seconds - days * 86400)
    out.data[out.size + 9] = b'Z'
    out.size += 10
    return 0


cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"

cdef u128 _TEN[22]                 # 10**i, exact


cdef void _fill_ten() noexcept nogil:
    cdef int i
    _TEN[0] = 1
    for i in range(1, 22):
        _TEN[i] = _TEN[i - 1] * 10


_fill_ten()


cdef inline bint _at_least_ten_to(unsigned long long m, int sh, int t) noexcept nogil:
    """Whether m * 2**-sh >= 10**t (-21 <= t <= 21), exactly."""
    if t >= 0:
        return <u128>m >= _TEN[t] << sh
    return <u128>m * _TEN[-t] >= (<u128>1) << sh


cdef int _exact_digits(double x, char *digits, int *exp10) noexcept nogil:
    """For 1e-4 <= x < 1e14 (win percents, accuracies, seconds): what _csv_float would take from printf, in
    128-bit integers: the digits of x rounded to 15, else 16, else 17 significant digits, the first that read
    back as x (ties to even, as printf and strtod round), into ``digits`` (their count returned; 0: x out of
    range) and the power of ten of the first into ``exp10``.

    x is m * 2**-sh exactly (m < 2**53, 3 <= sh <= 66) and 10**P <= x < 10**(P + 1) (-4 <= P <= 13); its k
    digits are q = round(m * 10**s / 2**sh) with s = k - 1 - P (0 <= s <= 20, so m * 10**s < 2**120; q is
    10**k where the rounding carries into a new first digit); q / 10**s reads back as x when it lies within
    half the gap to x's neighbours: 2 * |q * 2**sh - m * 10**s| below 10**s (the gap below a power of two is
    half the gap above it), or at it where m is even."""
    cdef int E, sh, k, s, P
    cdef unsigned long long m, small
    cdef u128 N, q, r, half, above, below, gap
    cdef bint power_of_two
    if not (1e-4 <= x < 1e14):
        return 0
    m = <unsigned long long>ldexp(frexp(x, &E), 53)
    sh = 53 - E
    power_of_two = m == (1ULL << 52)
    P = <int>floor(log10(x))
    while P > -4 and not _at_least_ten_to(m, sh, P):
        P -= 1
    while P < 13 and _at_least_ten_to(m, sh, P + 1):
        P += 1
    for k in range(15, 18):
        s = k - 1 - P
        N = <u128>m * _TEN[s]
        q = N >> sh
        r = N - (q << sh)
        half = (<u128>1) << (sh - 1)
        if r > half or (r == half and (q & 1)):
            q += 1
        above = q << sh
        below = N
        gap = _TEN[s]
        if above >= below:
            r = 2 * (above - below)
        else:
            r = (4 if power_of_two else 2) * (below - above)
        if r < gap or (r == gap and (m & 1) == 0):
            break
    if q == _TEN[k]:                   # 9.99...95 rounded up: 1 and zeros, a power higher
        q = _TEN[k - 1]
        P += 1
    small = <unsigned long long>q       # (q < 10**17: the digits in 64 bits)
    s = k
    while s > 0:
        s -= 1
        digits[s] = <char>(48 + <int>(small % 10))
        small //= 10
    exp10[0] = P
    return k


cdef int _csv_tenths(Out *out, long long tenths) noexcept nogil:
    """``repr(tenths / 10)`` of a number of tenths that is not whole (``7.5``, ``-0.5``)."""
    cdef unsigned long long u = <unsigned long long>tenths
    if _reserve(out, 24) < 0:
        return -1
    if tenths < 0:
        out.data[out.size] = b'-'
        out.size += 1
        u = 0ULL - u
    if _csv_int(out, <long long>(u // 10)) < 0 or _reserve(out, 2) < 0:
        return -1
    out.data[out.size] = b'.'
    out.data[out.size + 1] = <char>(48 + u % 10)
    out.size += 2
    return 0


cdef int _csv_float(Out *out, double x) noexcept nogil:
    """``repr(x)`` of a double that is not a whole number: the shortest digits that read back as ``x``, in
    Python's layout (positional, or ``1.5e-05`` below 1e-4)."""
    cdef char text[40]
    cdef char shorter[40]
    cdef char digits[20]
    cdef int p, i, n = 0, exp10 = 0, point
    cdef bint negative = x < 0
    cdef char *d
    cdef long long tenths
    if fabs(x) < 1e15:                 # a number of tenths (clocks, times spent): its text, no printf
        tenths = <long long>floor(x * 10.0 + 0.5)
        if <double>tenths / 10.0 == x:
            return _csv_tenths(out, tenths)
    n = _exact_digits(fabs(x), digits, &exp10)
    if n == 0:
        # The fewest significant digits, rounded, that read back as x. A normal double read back from
        # some text of 15 digits or fewer (DBL_DIG) is also read back from its 15 digits, which are that
        # text and zeros (dropped below), and any reads back from its 17: so 15 where they do, else 16
        # where they do, else 17 (16 tried first: most values of a formula need 16 or 17).
        if DBL_MIN <= fabs(x) <= DBL_MAX:
            snprintf(text, 40, "%.15e", x)
            if strtod(text, NULL) == x:
                snprintf(shorter, 40, "%.14e", x)
                if strtod(shorter, NULL) == x:
                    memcpy(text, shorter, 40)
            else:
                snprintf(text, 40, "%.16e", x)
        else:
            for p in range(1, 18):
                snprintf(text, 40, "%.*e", p - 1, x)
                if strtod(text, NULL) == x:
                    break
        i = 1 if negative else 0
        while text[i] != b'e':             # "-1.2345e-05": the digits, then the exponent
            if text[i] != b'.':
                digits[n] = text[i]
                n += 1
            i += 1
        exp10 = <int>strtod(text + i + 1, NULL)
    while n > 1 and digits[n - 1] == b'0':
        n -= 1
    point = exp10 + 1                  # the digits are 0.DDD times 10**point
    if _reserve(out, n + 30) < 0:
        return -1
    d = out.data + out.size
    if negative:
        d[0] = b'-'
        d += 1
    if point <= -4 or point > 16:      # the layout of float_repr_style 'short'
        d[0] = digits[0]
        d += 1
        if n > 1:
            d[0] = b'.'
            memcpy(d + 1, digits + 1, n - 1)
            d += n
        d[0] = b'e'
        d[1] = b'-' if exp10 < 0 else b'+'
        d += 2 + snprintf(d + 2, 6, "%02d", -exp10 if exp10 < 0 else exp10)
    elif point <= 0:
        d[0], d[1] = b'0', b'.'
        d += 2
        for i in range(-point):
            d[0] = b'0'
            d += 1
        memcpy(d, digits, n)
        d += n
    else:                              # (x is not whole, so the point falls inside the digits)
        memcpy(d, digits, point)
        d[point] = b'.'
        memcpy(d + point + 1, digits + point, n - point)
        d += n + 1
    out.size = d - out.data
    return 0


cdef int _csv_clock(Out *out, const char *buf, ClockEntry *entry, Out *scratch) noexcept nogil:
    """A clock entry as csv_text.number_text writes the reader's value: the seconds (``180``), or
    ``float("177" + ".7")``'s shortest text (``177.7``; ``180`` for ``180.0``)."""
    cdef Py_ssize_t n = entry.frac_end - entry.frac_start
    cdef double x
    if n == 0:
        return _csv_int(out, entry.secs)
    scratch.size = 0
    if _reserve(scratch, n + 24) < 0:
        return -1
    scratch.size = snprintf(scratch.data, 24, "%lld", entry.secs)
    memcpy(scratch.data + scratch.size, buf + entry.frac_start, n)
    scratch.data[scratch.size + n] = 0
    x = strtod(scratch.data, NULL)
    if x == <double><long long>x:
        return _csv_int(out, <long long>x)
    return _csv_float(out, x)


cdef int _csv_real(Out *out, double x) noexcept nogil:
    """A double as csv_text.number_text writes it: a whole number as an int (``2``), else its repr."""
    if fabs(x) < 9e18 and x == <double><long long>x:
        return _csv_int(out, <long long>x)
    return _csv_float(out, x)


cdef int _csv_join(Out *out, Col *lists, Col *items, Py_ssize_t row, char sep=b' ') noexcept nogil:
    """A list of strings: its entries joined by single spaces (``sep``: the fens' ``;``), quoted if it must be."""
    cdef Py_ssize_t at = out.size, k, first, last, n
    cdef const char *p
    if not _is_valid(lists, row):
        return 0
    first, last = _off_at(lists, row), _off_at(lists, row + 1)
    if first == last:
        return 0
    # the entries lie one after the other in the items' data: their bytes, and a space between two
    if _reserve(out, _off_at(items, last) - _off_at(items, first) + last - first - 1) < 0:
        return -1
    for k in range(first, last):
        if k > first:
            out.data[out.size] = sep
            out.size += 1
        p = items.data.data + _off_at(items, k)
        n = _off_at(items, k + 1) - _off_at(items, k)
        _w(out, p, n)
    return _csv_quote_from(out, at)


cdef int _csv_numbers(Out *out, Col *lists, Col *items, Py_ssize_t row, int width, const char *buf,
                      Out *scratch) noexcept nogil:
    """A list of numbers (``width`` 2: int16, 1: int8, 64: int64, 0: clock entries, 8: doubles): joined by spaces,
    a null entry empty."""
    cdef Py_ssize_t k, first, last
    cdef long long v
    if not _is_valid(lists, row):
        return 0
    first, last = _off_at(lists, row), _off_at(lists, row + 1)
    for k in range(first, last):
        if k > first and _csv_bytes(out, b" ", 1) < 0:
            return -1
        if not _is_valid(items, k):
            continue
        if width == 0:
            if _csv_clock(out, buf, (<ClockEntry *>items.data.data) + k, scratch) < 0:
                return -1
            continue
        if width == 8:
            if _csv_real(out, (<double *>items.data.data)[k]) < 0:
                return -1
            continue
        if width == 64:
            if _csv_int(out, (<int64_t *>items.data.data)[k]) < 0:
                return -1
            continue
        v = (<int16_t *>items.data.data)[k] if width == 2 else (<int8_t *>items.data.data)[k]
        if _csv_int(out, v) < 0:
            return -1
    return 0


cdef int _csv_nags(Out *out, Col *lists, Col *plies, Col *items, Py_ssize_t row) noexcept nogil:
    """The nags: the plies' entries separated by spaces, a ply's NAGs by ``;`` (a null NAG empty)."""
    cdef Py_ssize_t p, k
    if not _is_valid(lists, row):
        return 0
    for p in range(_off_at(lists, row), _off_at(lists, row + 1)):
        if p > _off_at(lists, row) and _csv_bytes(out, b" ", 1) < 0:
            return -1
        for k in range(_off_at(plies, p), _off_at(plies, p + 1)):
            if k > _off_at(plies, p) and _csv_bytes(out, b";", 1) < 0:
                return -1
            if _is_valid(items, k) and _csv_int(out, (<int16_t *>items.data.data)[k]) < 0:
                return -1
    return 0


cdef int _json_string(Out *out, const char *p, Py_ssize_t n) noexcept nogil:
    """``p[:n]`` as a JSON string, as json.dumps(ensure_ascii=False) writes it."""
    cdef Py_ssize_t i
    cdef unsigned char ch
    cdef char *d
    if _reserve(out, 6 * n + 2) < 0:  # (each byte at most \u00XX)
        return -1
    d = out.data + out.size
    d[0] = b'"'
    d += 1
    for i in range(n):
        ch = <unsigned char>p[i]
        if ch == b'"' or ch == b'\\':
            d[0], d[1] = b'\\', <char>ch
            d += 2
        elif ch >= 0x20:
            d[0] = <char>ch
            d += 1
        elif ch == b'\n' or ch == b'\r' or ch == b'\t' or ch == 8 or ch == 12:
            d[0] = b'\\'
            d[1] = b'n' if ch == b'\n' else b'r' if ch == b'\r' else b't' if ch == b'\t' else b'b' if ch == 8 else b'f'
            d += 2
        else:
            memcpy(d, b"\\u00", 4)
            d[4] = _HEX[ch >> 4]
            d[5] = _HEX[ch & 15]
            d += 6
    d[0] = b'"'
    out.size = d + 1 - out.data
    return 0


cdef int _csv_tags(Out *out, Col *lists, Col *keys, Col *values, Py_ssize_t row) noexcept nogil:
    """The tags map as a JSON object (``{"Date":"2024.01.02"}``), quoted."""
    cdef Py_ssize_t at = out.size, k, first, last
    if not _is_valid(lists, row):
        return 0
    first, last = _off_at(lists, row), _off_at(lists, row + 1)
    if _csv_bytes(out, b"{", 1) < 0:
        return -1
    for k in range(first, last):
        if ((k > first and _csv_bytes(out, b",", 1) < 0)
                or _json_string(out, keys.data.data + _off_at(keys, k), _off_at(keys, k + 1) - _off_at(keys, k)) < 0
                or _csv_bytes(out, b":", 1) < 0
                or _json_string(out, values.data.data + _off_at(values, k),
                                _off_at(values, k + 1) - _off_at(values, k)) < 0):
            return -1
    if _csv_bytes(out, b"}", 1) < 0:
        return -1
    return _csv_quote_from(out, at)


cdef int _csv_field(Out *out, Columns *c, const CsvColumn *w, Py_ssize_t row, const char *buf,
                    Out *scratch) noexcept nogil:
    """A column's field of row ``row`` as its writer ``w`` writes it; a null is an empty field."""
    cdef Col *col = &c.cols[w.k]
    cdef Py_ssize_t at = out.size
    if w.writer == W_JOIN:             # (judgement's null entry: no bytes, so an empty entry)
        return _csv_join(out, col, &c.cols[w.item], row, w.sep)
    if w.writer == W_NUMBERS:
        return _csv_numbers(out, col, &c.cols[w.item], row, w.width, buf, scratch)
    if w.writer == W_NAGS:
        return _csv_nags(out, col, &c.cols[w.item], &c.cols[w.item2], row)
    if w.writer == W_TAGS:
        return _csv_tags(out, col, &c.cols[w.item], &c.cols[w.item2], row)
    if not _is_valid(col, row):
        return 0
    if w.writer == W_REAL:
        return _csv_real(out, (<double *>col.data.data)[row])
    if w.writer == W_BOOL:
        if (col.data.data[row >> 3] >> (row & 7)) & 1:
            return _csv_bytes(out, b"true", 4)
        return _csv_bytes(out, b"false", 5)
    if w.writer == W_STAMP:
        return _csv_stamp(out, (<int64_t *>col.data.data)[row])
    if w.writer == W_DATE:
        return _csv_day(out, (<int32_t *>col.data.data)[row])
    if w.writer == W_INT:
        if w.width == 8:
            return _csv_int(out, (<int64_t *>col.data.data)[row])
        if w.width == 4:
            return _csv_int(out, (<int32_t *>col.data.data)[row])
        if w.width == 2:
            return _csv_int(out, (<int16_t *>col.data.data)[row])
        return _csv_int(out, (<int8_t *>col.data.data)[row])
    # a string column
    if _csv_bytes(out, col.data.data + _off_at(col, row), _off_at(col, row + 1) - _off_at(col, row)) < 0:
        return -1
    return _csv_quote_from(out, at)


cdef int _csv_rows(Out *out, Columns *c, const unsigned char *chosen, Py_ssize_t nchosen, const char *buf,
                   Out *scratch) noexcept nogil:
    """Every row of ``c``: the fields of the ``chosen`` columns (column numbers), ``\\r\\n`` after each row."""
    cdef Py_ssize_t row, j, at
    for row in range(c.rows):
        at = out.size
        for j in range(nchosen):
            if j > 0 and _csv_bytes(out, b",", 1) < 0:
                return -1
            if _csv_field(out, c, &_CSV[chosen[j]], row, buf, scratch) < 0:
                return -1
        if out.size == at and _csv_bytes(out, b'""', 2) < 0:   # (one empty field: csv quotes it, so the row
            return -1                                           # is not read as a blank line)
        if _csv_bytes(out, b"\r\n", 2) < 0:
            return -1
    return 0


cdef int _csv_tables(list plan) except -1:
    """_CSV from the column sink's plan (_make_tables): each column's writer, from its type."""
    cdef int i
    cdef CsvColumn *w
    for i in range(len(plan)):
        name, flag, tree = plan[i]
        kind = tree[1]
        w = &_CSV[i]
        memset(w, 0, sizeof(CsvColumn))
        w.k = tree[0]
        if tree[2]:
            w.item = tree[2][0][0]
            if len(tree[2]) > 1:
                w.item2 = tree[2][1][0]
            elif tree[2][0][2]:
                w.item2 = tree[2][0][2][0][0]
        w.sep = b' '
        if kind == "string":
            w.writer = W_STRING
        elif kind in ("int8", "int16", "int32", "int64"):
            w.writer, w.width = W_INT, _WIDTHS[kind]
        elif kind == "bool":
            w.writer = W_BOOL
        elif kind == "date32":
            w.writer = W_DATE
        elif kind == "timestamp[s, tz=UTC]":
            w.writer = W_STAMP
        elif kind == "float32":
            w.writer = W_REAL
        elif kind == "list<string>":
            w.writer = W_JOIN
            if name == "fens":         # (csv_text's rule: a position's FEN holds spaces)
                w.sep = b';'
        elif kind in ("list<int8>", "list<int16>", "list<int64>"):
            w.writer, w.width = W_NUMBERS, {"list<int8>": 1, "list<int16>": 2, "list<int64>": 64}[kind]
        elif kind == "list<float32>":  # doubles, or the clock's entries (kept as their text for CSV)
            w.writer, w.width = W_NUMBERS, (0 if w.item == K_CLOCK_ITEM else 8)
        elif kind == "list<list<int16>>":
            w.writer = W_NAGS
        elif kind == "list<struct<key: string, value: string>>":
            w.writer = W_TAGS
        else:
            w.writer = W_NONE
    return 0


cdef bytes _csv_text(Columns *c, const char *buf, object openings, bytes chosen):
    """The rows of a filled column sink as CSV text (no header), the opening codes filled first with the GIL."""
    cdef Out out, scratch
    cdef int failed
    cdef Py_ssize_t j
    cdef const unsigned char *numbers = <const unsigned char *>PyBytes_AS_STRING(chosen)
    cdef Py_ssize_t nchosen = PyBytes_GET_SIZE(chosen)
    _fill_codes(c, buf, openings)
    _filled(c)                         # (each column's buffers checked: a ColumnError, never a read past them)
    for j in range(nchosen):
        if _CSV[numbers[j]].writer == W_NONE:
            name, flag, tree = _PLAN[numbers[j]]
            raise ColumnError(f"the CSV sink (fastpgn/scan/csv.pxi) has no writer for the column {name!r} "
                              f"({tree[1]})")
    out.data, out.size, out.cap = NULL, 0, 0
    scratch.data, scratch.size, scratch.cap = NULL, 0, 0
    try:
        with nogil:
            failed = _csv_rows(&out, c, numbers, nchosen, buf, &scratch)
        if failed:
            raise MemoryError()
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        free(out.data)
        free(scratch.data)


def csv_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                   long long first_game=0, bint at_stream_start=True, bint stop_on_error=False,
                   object where=None, object openings=None, bint uci=False, object columns=None,
                   bint positions=False, bint fens=False):
    """The whole games in ``data[start:end]`` as CSV rows (see the pure twin, fastpgn.scan.csv).

    Returns a ScanResult ``(text, games_read, rejects, filtered)``: ``text`` the rows of the
    good games as bytes, no header, in ``columns`` (names of the schema;
    default all, ``uci``, ``zobrist``, ``fens`` too with ``uci``, ``positions``, ``fens``); the rest as
    ``columns_from_block``.
    """
    cdef bytes chosen
    cdef Py_buffer view
    from fastpgn.scan.csv import column_numbers

    _ready()
    chosen = column_numbers(columns, uci, positions, fens)
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return ScanResult(*_columns_from_block(<const char *>view.buf, start, end, base_offset, first_game,
                                               at_stream_start, stop_on_error, where_plan(where), openings,
                                               _uci_hook() if uci or positions or fens else None, chosen, uci,
                                               positions, fens))
    finally:
        PyBuffer_Release(&view)



