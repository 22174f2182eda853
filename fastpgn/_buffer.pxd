# The growing C output buffer of every compiled writer: the scanner's sinks (scan/output.pxi builds its
# writers on it) and the Parquet list-page writer (parquet/_pages_cy.pyx). Two modules compile it, so it
# is declared here once, inline (a .pxd holds no function that is not): no module behind it to import.

from libc.stdlib cimport realloc
from libc.string cimport memcpy


cdef struct Out:
    char *data
    Py_ssize_t size
    Py_ssize_t cap


cdef inline int _reserve(Out *out, Py_ssize_t extra) noexcept nogil:
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


cdef inline void _wc(Out *out, char c) noexcept nogil:
    out.data[out.size] = c
    out.size += 1
