"""Cython block reader of compact moves lines; the pure-Python twin _compact_py is its specification.

Same function (``block_movetext``), same results on every input (the
differential tests prove it). One pass per line over the bytes: each byte's
class, then the marks _compact_py computes with big-integer shifts (move
number digits, first letters of White's and Black's plies) from the same
neighbours, the line's shape checked against '|1wb|2wb...' as it goes, each
ply checked with scan_ply's rules in C, and the PGN movetext written straight
into a C buffer: no Python object per ply, one str per line it vouches for.
"""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memchr
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeASCII

# Class bits of a byte, as _compact_py._CLASS: 1 digit, 2 file or piece, 4 file, 8 ends a ply
# ('+#!?' and 'O'), 16 '=', 32 starts a ply, 64 piece, 128 the rank a pawn promotes on.
# Bit 256 (ours): a byte that declines the line at once (a blank, a byte that is not ASCII).
cdef unsigned short _CLASS[256]
# What each digit and letter is, for the ply rules.
cdef unsigned char _KIND[256]
cdef enum:
    K_FILE = 1
    K_RANK = 2
    K_PIECE = 4
    K_PROMO = 8
    K_SUFFIX = 16
    DECLINE = 256

cdef void _init_tables():
    cdef int c
    for c in range(256):
        _CLASS[c] = DECLINE if c >= 128 else 0
        _KIND[c] = 0
    for c in b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f":  # what str.split() splits on, besides '\n'
        _CLASS[c] = DECLINE
    for c in b"0123456789":
        _CLASS[c] = 1 | (128 if c in b"18" else 0)
    for c in b"abcdefgh":
        _CLASS[c] = 2 | 4 | 32
        _KIND[c] = K_FILE
    for c in b"KQRBN":
        _CLASS[c] = 2 | 32 | 64
        _KIND[c] = K_PIECE
    for c in b"QRBN":
        _KIND[c] |= K_PROMO
    for c in b"12345678":
        _KIND[c] = K_RANK
    for c in b"+#!?":
        _CLASS[c] = 8
        _KIND[c] = K_SUFFIX
    _CLASS[ord("O")] = 8 | 32
    _CLASS[ord("=")] = 16

_init_tables()

# Every good shape is a prefix of this one: number, White's ply, Black's ply, ...
_GOOD_SHAPE = "".join(f"|{k}wb" for k in range(1, 1000)).encode("ascii")
cdef bytes _GOOD = _GOOD_SHAPE
cdef const char *_good = PyBytes_AS_STRING(_GOOD)
cdef Py_ssize_t _good_len = PyBytes_GET_SIZE(_GOOD)
cdef enum:
    PAD = 8  # zero classes before and after a line: the marks look up to 5 bytes back, 3 ahead


def block_movetext(bytes block):
    """The PGN movetext of each line of ``block`` ('\\n'-separated) when it is a moves line
    read for sure, else None (the line may still be one, for :func:`scan_moves` to read).

    >>> block_movetext(b"1e4e52Nf3Nc6\\n21.04.07W1-0\\n1d4d52Nf3 Nc6")
    ['\\n1. e4 e5\\n2. Nf3 Nc6', None, None]
    """
    cdef const char *buf = PyBytes_AS_STRING(block)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(block)
    cdef Py_ssize_t pos = 0, end, n, m, cap = 0, need
    cdef const char *nl
    cdef unsigned short *cls = NULL
    cdef char *out = NULL
    cdef list result = []
    try:
        while True:
            nl = <const char *>memchr(buf + pos, b"\n", size - pos)
            end = size if nl == NULL else nl - buf
            n = end - pos
            if nl != NULL and n > 0 and buf[end - 1] == b"\r":  # CRLF: the reader strips the '\r'
                n -= 1
            need = n + 2 * PAD
            if need > cap:
                cap = need if need > 4096 else 4096
                free(cls)
                free(out)
                cls = <unsigned short *>malloc(cap * sizeof(unsigned short))
                out = <char *>malloc(3 * cap)  # a ply's first letter becomes '. N' at most
                if cls == NULL or out == NULL:
                    raise MemoryError()
            m = _line(<const unsigned char *>buf + pos, n, cls, out)
            result.append(None if m < 0 else PyUnicode_DecodeASCII(out, m, NULL))
            if nl == NULL:
                return result
            pos = end + 1
    finally:
        free(cls)
        free(out)


cdef inline bint _number(const unsigned short *k, Py_ssize_t i) noexcept nogil:
    # A digit is part of a move number unless it is a rank: after a file or piece, not a promotion.
    return (k[i] & 1) != 0 and not ((k[i - 1] & 2) != 0 and (k[i - 2] & 16) == 0)


cdef inline bint _black_start(const unsigned short *k, Py_ssize_t i) noexcept nogil:
    # A ply starts after a square, after '+#!?' or 'O', or two bytes after '=' (a promotion).
    return (k[i] & 32) != 0 and (((k[i - 1] & 1) != 0 and (k[i - 2] & 4) != 0)
                                 or (k[i - 1] & 8) != 0 or (k[i - 2] & 16) != 0)


cdef Py_ssize_t _line(const unsigned char *s, Py_ssize_t n, unsigned short *cls, char *out) noexcept nogil:
    """Length of the PGN movetext of line ``s[:n]`` written into ``out``, or -1 to decline it."""
    cdef Py_ssize_t i, g = 0, o = 0, tok = -1
    cdef const unsigned short *k = cls + PAD
    cdef unsigned short c
    cdef unsigned char b
    cdef char sym
    cdef bint white_tok = False, later
    if n == 0 or s[0] != b"1":  # a line starts with its first move number
        return -1
    for i in range(PAD):
        cls[i] = 0
        cls[PAD + n + i] = 0
    for i in range(n):
        c = _CLASS[s[i]]
        if c & DECLINE:
            return -1
        cls[PAD + i] = c
    for i in range(n):
        b = s[i]
        c = k[i]
        sym = 0
        if c & 1:
            # number | promoted ('d1Q2': leaves the line to scan_moves), as _compact_py._marked.
            if _number(k, i):
                later = _number(k, i - 1)
            elif ((k[i - 1] & 64) and (k[i - 2] & 128) and (k[i - 3] & 4)
                  and not (k[i - 4] & 64)):
                later = True
            else:
                later = False
                sym = -1
            if sym == 0:
                if not later:
                    if g >= _good_len or _good[g] != b"|":
                        return -1
                    g += 1
                    out[o] = b"\n"
                    o += 1
                sym = <char>b
        elif c & 32:
            if _number(k, i - 1):
                sym = b"w"
            elif _black_start(k, i):
                # Not between the squares of 'Nb6d7' (see _compact_py._marked).
                if not ((k[i - 1] & 1) and (k[i - 2] & 4) and (k[i - 3] & 64) and (c & 4)
                        and (k[i + 1] & 1)
                        and (_black_start(k, i - 3) or (k[i + 2] & 32)
                             or ((k[i + 2] & 8) and (k[i + 3] & 32)))):
                    sym = b"b"
        if sym > 0:
            if g >= _good_len or _good[g] != sym:
                return -1
            g += 1
            if sym == b"w" or sym == b"b" or _good[g - 2] == b"|":
                if tok >= 0 and not _valid_ply(s + tok, i - tok, white_tok):
                    return -1
                tok = -1
            if sym == b"w":
                out[o] = b"."
                out[o + 1] = b" "
                o += 2
                tok, white_tok = i, True
            elif sym == b"b":
                out[o] = b" "
                o += 1
                tok, white_tok = i, False
        out[o] = <char>b
        o += 1
    if g == 0 or (_good[g - 1] != b"w" and _good[g - 1] != b"b"):
        return -1
    if not _valid_ply(s + tok, n - tok, white_tok):
        return -1
    return o


cdef inline Py_ssize_t _suffixed(const unsigned char *s, Py_ssize_t end, Py_ssize_t n) noexcept nogil:
    while end < n and _KIND[s[end]] & K_SUFFIX:
        end += 1
    return end


cdef inline bint _square(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    return i + 1 < n and (_KIND[s[i]] & K_FILE) != 0 and (_KIND[s[i + 1]] & K_RANK) != 0


cdef bint _valid_ply(const unsigned char *s, Py_ssize_t n, bint white) noexcept nogil:
    """Whether ``s[:n]`` is one valid ply for the side: ``n in scan_ply(s, 0, side)``."""
    cdef unsigned char c = s[0]
    cdef Py_ssize_t end = -1, j, k
    cdef unsigned char rank = 0
    if c == b"O":
        if n >= 5 and s[1] == b"-" and s[2] == b"O" and s[3] == b"-" and s[4] == b"O":
            return _suffixed(s, 5, n) == n
        if n >= 3 and s[1] == b"-" and s[2] == b"O":
            return _suffixed(s, 3, n) == n
        return False
    if _KIND[c] & K_PIECE:
        # The target square after no disambiguation, a file or rank, or a square.
        for j in range(1, 4):
            if j == 2 and not (n > 1 and _KIND[s[1]] & (K_FILE | K_RANK)):
                continue
            if j == 3 and not _square(s, 1, n):
                continue
            k = j + 1 if j < n and s[j] == b"x" else j
            if _square(s, k, n) and _suffixed(s, k + 2, n) == n:
                return True
        return False
    if _KIND[c] & K_FILE:
        if n > 1 and _KIND[s[1]] & K_RANK:
            end, rank = 2, s[1]
        elif (n > 1 and s[1] == b"x" and _square(s, 2, n)
              and (s[2] == c + 1 or s[2] + 1 == c)):
            end, rank = 4, s[3]
        else:
            return False
        # Pawns only go forward from their second rank.
        if white and (rank == b"1" or rank == b"2") or not white and (rank == b"7" or rank == b"8"):
            return False
        if rank == b"1" or rank == b"8":  # a pawn on the last rank must promote
            if end + 1 < n and s[end] == b"=" and _KIND[s[end + 1]] & K_PROMO:
                end += 2
            elif end < n and _KIND[s[end]] & K_PROMO:
                end += 1
            else:
                return False
        return _suffixed(s, end, n) == n
    return False
