# The growing Arrow buffers the column sink fills (scan/columns.pxi) and hands to Arrow without a copy.
#
# Included by scan/_scan_cy.pyx after output.pxi (the Out buffer) and before columns.pxi. A column is a
# Col: its offsets (strings and lists), its values (fixed width, a string's bytes, or a bool bitmap) and a
# validity bitmap made only once a null comes, each appended in order without the GIL; _col_spec hands
# them to fastpgn.arrow as (length, null count, buffers, children). The pure twin has no buffers: its
# values are Python lists (scan/columns.py), which Arrow copies.

cimport cython
from libc.stdint cimport int32_t
from libc.string cimport memset
from cpython.buffer cimport PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND

cdef struct Col:
    Out off                        # int32 offsets (strings, lists, maps): n + 1 of them
    Out data                       # fixed-width values, a string's bytes, or a bool bitmap
    Out valid                      # validity bitmap, least significant bit first
    Py_ssize_t n, nulls


cdef int _bit(Out *bits, Py_ssize_t i, bint value) noexcept nogil:
    """Set bit ``i`` of a bitmap that grows a byte at a time (bits are appended in order)."""
    if (i & 7) == 0:
        if _reserve(bits, 1) < 0:
            return -1
        bits.data[bits.size] = 0
        bits.size += 1
    if value:
        bits.data[i >> 3] |= <char>(1 << (i & 7))
    return 0


cdef int _item_slow(Col *c, bint valid) noexcept nogil:
    cdef Py_ssize_t full
    if c.nulls == 0:  # the first null: the bitmap starts, every item so far valid
        full = c.n >> 3
        if _reserve(&c.valid, full + 1) < 0:
            return -1
        memset(c.valid.data, 0xFF, full)
        c.valid.size = full
        if c.n & 7:
            c.valid.data[full] = <char>((1 << (c.n & 7)) - 1)
            c.valid.size = full + 1
    if _bit(&c.valid, c.n, valid) < 0:
        return -1
    if not valid:
        c.nulls += 1
    c.n += 1
    return 0


cdef inline int _item(Col *c, bint valid) noexcept nogil:
    """Count one more item of ``c``, valid or null (a bitmap only once a null has come)."""
    if valid and c.nulls == 0:
        c.n += 1
        return 0
    return _item_slow(c, valid)


cdef inline int _offset(Col *c, Py_ssize_t at) noexcept nogil:
    if _reserve(&c.off, 4) < 0:
        return -1
    (<int32_t *>(c.off.data + c.off.size))[0] = <int32_t>at
    c.off.size += 4
    return 0


cdef inline bint _ascii(const char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        if w & 0x8080808080808080ULL:
            return False
        i += 8
    while i < n:
        if <unsigned char>p[i] >= 0x80:
            return False
        i += 1
    return True


cdef Py_ssize_t _utf8_into(const unsigned char *p, Py_ssize_t n, char *d) noexcept nogil:
    """``p[:n]`` as UTF-8 into ``d`` (room for 3 bytes a byte), each ill-formed part one U+FFFD: what
    ``bytes.decode("utf-8", "replace")`` reads (its maximal subparts), so Arrow strings are the records'."""
    cdef Py_ssize_t i = 0, k = 0, need, j
    cdef unsigned char c, lo, hi
    while i < n:
        c = p[i]
        if c < 0x80:
            d[k] = <char>c
            k += 1
            i += 1
            continue
        lo, hi = 0x80, 0xBF
        if 0xC2 <= c <= 0xDF:
            need = 1
        elif 0xE0 <= c <= 0xEF:
            need = 2
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
        elif 0xF0 <= c <= 0xF4:
            need = 3
            if c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
        else:
            need = 0                # never a lead byte
        j = 1
        while j <= need and i + j < n:
            if not ((lo if j == 1 else 0x80) <= p[i + j] <= (hi if j == 1 else 0xBF)):
                break
            j += 1
        if need and j == need + 1:  # a whole sequence
            memcpy(d + k, p + i, j)
            k += j
            i += j
        else:                       # the lead byte and the continuation bytes that fit: one U+FFFD
            d[k], d[k + 1], d[k + 2] = b'\xef', b'\xbf', b'\xbd'
            k += 3
            i += j if need else 1
    return k


cdef int _text_bytes(Out *out, const char *p, Py_ssize_t n) noexcept nogil:
    """Append ``p[:n]`` to ``out`` as valid UTF-8 (see _utf8_into)."""
    if _ascii(p, n):
        if _reserve(out, n) < 0:
            return -1
        memcpy(out.data + out.size, p, n)
        out.size += n
        return 0
    if _reserve(out, 3 * n) < 0:
        return -1
    out.size += _utf8_into(<const unsigned char *>p, n, out.data + out.size)
    return 0


cdef int _string(Col *c, const char *p, Py_ssize_t n) noexcept nogil:
    """Append ``p[:n]`` to string column ``c``; NULL ``p``: a null."""
    if p != NULL and _text_bytes(&c.data, p, n) < 0:
        return -1
    if _offset(c, c.data.size) < 0:
        return -1
    return _item(c, p != NULL)


cdef int _span_strings(Col *c, const char *buf, const Py_ssize_t *spans, Py_ssize_t n,
                       Py_ssize_t limit) noexcept nogil:
    """Append the ``n`` strings ``buf[spans[2i]:spans[2i+1]]`` (never null) to ``c``: room taken once.

    ``buf[:limit]`` may be read (a few bytes past a string's end)."""
    cdef Py_ssize_t i, m, total = 0
    cdef int32_t *off
    cdef uint64_t w
    for i in range(n):
        total += spans[2 * i + 1] - spans[2 * i]
    if _reserve(&c.data, total + 8) < 0 or _reserve(&c.off, 4 * n) < 0:
        return -1
    if c.nulls and _reserve(&c.valid, (n >> 3) + 2) < 0:
        return -1
    off = <int32_t *>(c.off.data + c.off.size)
    for i in range(n):
        m = spans[2 * i + 1] - spans[2 * i]
        if m <= 8 and spans[2 * i] + 8 <= limit:
            # the move and the bytes after it in the game, 8 read at once: when all are ASCII, copied
            # whole into the 8 bytes of room past the strings
            memcpy(&w, buf + spans[2 * i], 8)
            if not w & 0x8080808080808080ULL:
                memcpy(c.data.data + c.data.size, &w, 8)
                c.data.size += m
                off[i] = <int32_t>c.data.size
                continue
        if _ascii(buf + spans[2 * i], m):
            _w(&c.data, buf + spans[2 * i], m)
        else:                       # (a token with other bytes: rare, and the room is taken again)
            if (_text_bytes(&c.data, buf + spans[2 * i], m) < 0
                    or _reserve(&c.data, total + 8) < 0):   # room for the rest again
                return -1
        off[i] = <int32_t>c.data.size
    c.off.size += 4 * n
    if c.nulls:
        for i in range(n):
            _item_slow(c, True)
    else:
        c.n += n
    return 0


cdef inline int _fixed(Col *c, const void *value, int width, bint valid) noexcept nogil:
    """Append a fixed-width value (zeros when null)."""
    if c.data.size + width > c.data.cap and _reserve(&c.data, width) < 0:
        return -1
    if valid:
        memcpy(c.data.data + c.data.size, value, width)
    else:
        memset(c.data.data + c.data.size, 0, width)
    c.data.size += width
    return _item(c, valid)


cdef inline int _null(Col *c, int width) noexcept nogil:
    """Append a null fixed-width value (zeros)."""
    if c.data.size + width > c.data.cap and _reserve(&c.data, width) < 0:
        return -1
    memset(c.data.data + c.data.size, 0, width)
    c.data.size += width
    if c.nulls and c.n & 7:     # the bitmap's last byte is there, and its bits past c.n are zeros (_bit)
        c.nulls += 1
        c.n += 1
        return 0
    return _item_slow(c, False)


cdef int _flag(Col *c, bint value) noexcept nogil:
    """Append a bool (Arrow packs them as bits)."""
    if _bit(&c.data, c.n, value) < 0:
        return -1
    return _item(c, True)


cdef inline int _list_end(Col *c, Col *child, bint valid) noexcept nogil:
    """Close one list of ``c`` whose items are ``child``'s since the last one."""
    if _offset(c, child.n) < 0:
        return -1
    return _item(c, valid)


cdef inline int _real(Col *col, double x, bint valid, bint wide) noexcept nogil:
    """A float32 entry (Arrow's), or for the CSV sink (``wide``) the double itself, which csv_text writes."""
    cdef float f = <float>x
    if wide:
        return _fixed(col, &x, 8, valid)
    return _fixed(col, &f, 4, valid)



@cython.auto_pickle(False)
cdef class _Buffer:
    """A column buffer handed to Arrow without a copy: the C memory the sink filled, freed with this object."""
    cdef char *data
    cdef Py_ssize_t size
    cdef Py_ssize_t shape[1]

    def __dealloc__(self):
        free(self.data)

    def __len__(self):
        return self.size

    def __getbuffer__(self, Py_buffer *view, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("a column buffer is read-only")
        self.shape[0] = self.size
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 1
        view.itemsize = 1
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = b"B"
        view.ndim = 1
        view.shape = self.shape if flags & PyBUF_ND else NULL
        view.strides = NULL
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef _Buffer _out_bytes(Out *out):
    """``out``'s memory, now owned by a _Buffer (``out`` is left empty)."""
    cdef _Buffer b = _Buffer.__new__(_Buffer)
    if out.data == NULL:  # (Arrow wants an address even for no bytes)
        out.data = <char *>malloc(1)
        if out.data == NULL:
            raise MemoryError()
    b.data = out.data
    b.size = out.size
    out.data = NULL
    out.size = out.cap = 0
    return b


cdef tuple _col_spec(Col *c, int kind, tuple children):
    """A column as fastpgn.arrow reads it: (length, null count, buffers, children); kind 0 fixed or bool,
    1 string, 2 list or map (offsets, then the children)."""
    cdef object valid = _out_bytes(&c.valid) if c.nulls else None
    if kind == 0:
        return (c.n, c.nulls, (valid, _out_bytes(&c.data)), children)
    if kind == 1:
        return (c.n, c.nulls, (valid, _out_bytes(&c.off), _out_bytes(&c.data)), children)
    return (c.n, c.nulls, (valid, _out_bytes(&c.off)), children)
