# UTF-8 validity: where the first byte that is not UTF-8 is (the readers count such games).
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit). Mirrors fastpgn/scan/utf8.py.

cdef Py_ssize_t _utf8_error(const unsigned char *p, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
    """The index of the first byte of ``p[start:n]`` that starts no valid UTF-8 sequence, or -1.

    The index Python's decoder gives as ``UnicodeDecodeError.start``; ASCII
    runs are skipped eight bytes a step."""
    cdef Py_ssize_t i = start
    cdef unsigned char c, c1
    cdef uint64_t w
    while i < n:
        while i + 8 <= n:
            memcpy(&w, p + i, 8)
            if w & 0x8080808080808080ULL:
                break
            i += 8
        if i >= n:
            break
        c = p[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return i
        elif c < 0xE0:
            if i + 1 >= n or (p[i + 1] & 0xC0) != 0x80:
                return i
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return i
            c1 = p[i + 1]
            if (c1 & 0xC0) != 0x80 or (p[i + 2] & 0xC0) != 0x80 or (c == 0xE0 and c1 < 0xA0) \
                    or (c == 0xED and c1 >= 0xA0):
                return i
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return i
            c1 = p[i + 1]
            if (c1 & 0xC0) != 0x80 or (p[i + 2] & 0xC0) != 0x80 or (p[i + 3] & 0xC0) != 0x80 \
                    or (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return i
            i += 4
        else:
            return i
    return -1


def utf8_error(data, Py_ssize_t start=0):
    """The index of the first byte of ``data[start:]`` that is not UTF-8 (``UnicodeDecodeError.start``), or -1."""
    cdef Py_buffer view
    cdef Py_ssize_t found
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if start < 0 or start > view.len:
            raise ValueError(f"start {start} is outside the data ({view.len} bytes)")
        with nogil:
            found = _utf8_error(<const unsigned char *>view.buf, start, view.len)
    finally:
        PyBuffer_Release(&view)
    return found
