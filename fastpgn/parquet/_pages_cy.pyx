"""Cython list-page writer; the pure-Python twin fastpgn.parquet._pages_py is its specification.

A per-ply list column (numbers or strings) as one Parquet data page: levels, dictionary indices,
dictionary. The twin's docstring says what the bytes are; this one writes the same bytes in one pass
without the GIL, with no Python object a value. fastpgn.parquet.list_chunks adds the page headers,
zstd and the column chunk's metadata.
"""

from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t
from fastpgn._buffer cimport Out, _reserve, _w, _wc

DICTIONARY_LIMIT = 1 << 16
DICTIONARY_BYTES = 1 << 20
cdef enum:
    _DICT_LIMIT = 1 << 16
    _DICT_BYTES = 1 << 20
    _PAGE_RUN_GROUPS = 63


cdef int _page_varint(Out *out, uint64_t n) noexcept nogil:
    if _reserve(out, 10) < 0:
        return -1
    while n > 0x7F:
        _wc(out, <char>((n & 0x7F) | 0x80))
        n >>= 7
    _wc(out, <char>n)
    return 0


cdef struct _Levels:
    Out runs
    int value           # the open run's level (-1: none open)
    uint64_t count      # and its length


cdef inline int _level(_Levels *lv, int value, uint64_t n) noexcept nogil:
    """``n`` more levels ``value``: the open run grows, or is written and a new one opened."""
    if lv.value == value:
        lv.count += n
        return 0
    if lv.value >= 0:
        if _page_varint(&lv.runs, lv.count << 1) < 0 or _reserve(&lv.runs, 1) < 0:
            return -1
        _wc(&lv.runs, <char>lv.value)
    lv.value = value
    lv.count = n
    return 0


cdef int _levels_out(Out *out, _Levels *lv) noexcept nogil:
    """The levels' runs (the open one closed) behind their 4-byte length."""
    cdef uint32_t size
    if _level(lv, -2, 0) < 0:        # a value no level takes: closes the open run
        return -1
    size = <uint32_t>lv.runs.size
    if _reserve(out, 4 + lv.runs.size) < 0:
        return -1
    _w(out, <const char *>&size, 4)     # little-endian (x86-64, aarch64)
    _w(out, lv.runs.data, lv.runs.size)
    return 0


# The list's child: numbers of ``size`` bytes at ``data``, or (``size`` 0) strings, item ``j`` being
# ``data[ends[j]:ends[j + 1]]``; ``valid`` its validity bitmap or NULL; ``first`` its offset (item 0's
# position in the buffers).
cdef struct _Items:
    const char *data
    const int32_t *ends
    Py_ssize_t room         # the bytes at data (strings: a hash may read 8 at a time within them)
    const unsigned char *valid
    Py_ssize_t first
    int size


cdef inline uint32_t _word(const char *values, Py_ssize_t j, int size) noexcept nogil:
    """Item ``j`` as the 4 bytes PLAIN writes: a float's bits, an int widened with its sign."""
    cdef uint32_t w
    if size == 4:
        memcpy(&w, values + 4 * j, 4)
        return w
    if size == 2:
        return <uint32_t><int32_t>(<const signed short *>values)[j]
    return <uint32_t><int32_t>(<const signed char *>values)[j]


cdef inline uint64_t _page_mix(uint64_t h, uint64_t w) noexcept nogil:
    h = (h ^ w) * <uint64_t>0x9E3779B97F4A7C15u
    return h ^ (h >> 29)


cdef inline uint32_t _string_key(const char *p, Py_ssize_t n, Py_ssize_t room, uint64_t *head) noexcept nogil:
    """A string's 32-bit hash, and its first 8 bytes (zeros after its end) in ``head``: 8 bytes a step; the
    last ones read 8 at a time (and masked) where ``room``, the bytes from ``p`` to the buffer's end,
    allows, else one by one."""
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15u, w
    cdef Py_ssize_t i = 0, rest
    while True:
        rest = n - i
        if rest >= 8:
            memcpy(&w, p + i, 8)
        elif rest <= 0:
            if i == 0:
                head[0] = 0
            break
        elif room - i >= 8:
            memcpy(&w, p + i, 8)
            w &= (<uint64_t>1 << (8 * rest)) - 1
        else:
            w = 0
            memcpy(&w, p + i, rest)
        if i == 0:
            head[0] = w
        h = _page_mix(h, w)
        i += 8
    return <uint32_t>(h ^ (h >> 32))


cdef struct _Dict:
    uint32_t *keys      # a number's word, or a string's hash
    int32_t *starts     # strings: where the entry's bytes start in the items' data,
    int32_t *lengths    # its length
    uint64_t *heads     # and its first 8 bytes (_string_key)
    int32_t *slots      # the entry's index + 1 (0: free)
    uint32_t mask
    uint32_t shift      # 32 - log2(slots)
    uint32_t n
    Py_ssize_t plain    # the dictionary page's bytes
    bint strings


cdef inline uint32_t _slot_of_key(uint32_t key, uint32_t shift) noexcept nogil:
    """Fibonacci hashing: the top bits of the product, which every bit of the key moves (a float's low
    bits are zeros for whole numbers of seconds)."""
    return (key * <uint32_t>2654435761u) >> shift


cdef int _dict_grow(_Dict *d) noexcept nogil:
    """Twice the slots (1,024 at first), the entries placed again; room for as many entries as slots / 2."""
    cdef uint32_t cap = (d.mask + 1) * 2 if d.slots != NULL else 1024
    cdef int32_t *slots = <int32_t *>calloc(cap, sizeof(int32_t))
    cdef uint32_t *keys = <uint32_t *>realloc(d.keys, (cap // 2) * sizeof(uint32_t))
    cdef int32_t *starts
    cdef int32_t *lengths
    cdef uint64_t *heads
    cdef uint32_t i, s
    if keys != NULL:
        d.keys = keys
    if slots == NULL or keys == NULL:
        free(slots)
        return -1
    if d.strings:
        starts = <int32_t *>realloc(d.starts, (cap // 2) * sizeof(int32_t))
        if starts != NULL:
            d.starts = starts
        lengths = <int32_t *>realloc(d.lengths, (cap // 2) * sizeof(int32_t))
        if lengths != NULL:
            d.lengths = lengths
        heads = <uint64_t *>realloc(d.heads, (cap // 2) * sizeof(uint64_t))
        if heads != NULL:
            d.heads = heads
        if starts == NULL or lengths == NULL or heads == NULL:
            free(slots)
            return -1
    d.shift = 32
    while (<uint32_t>1 << (32 - d.shift)) < cap:
        d.shift -= 1
    for i in range(d.n):
        s = _slot_of_key(keys[i], d.shift)
        while slots[s]:
            s = (s + 1) & (cap - 1)
        slots[s] = <int32_t>(i + 1)
    free(d.slots)
    d.slots = slots
    d.mask = cap - 1
    return 0


cdef struct _Page:
    _Levels reps
    _Levels defs
    _Dict d
    uint16_t *idx       # each value's dictionary index, in order (at most _DICT_LIMIT entries)
    Py_ssize_t nitems   # the values (items that are set)
    Py_ssize_t entries  # the levels
    bint use_dict


cdef inline bint _valid_bit(const unsigned char *bits, Py_ssize_t i) noexcept nogil:
    return bits == NULL or (bits[i >> 3] >> (i & 7)) & 1


cdef int _dict_full(_Page *p, Py_ssize_t grown) noexcept nogil:
    """Whether one more entry, the dictionary page then ``grown`` bytes, is one too many (the page turns
    PLAIN)."""
    if p.d.n == _DICT_LIMIT or grown > _DICT_BYTES:
        p.use_dict = False
        return 1
    return 0


cdef int _dict_indices(_Page *p, const _Items *it, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """The dictionary indices of items ``lo`` to ``hi`` (all set; positions in the buffers) into ``p.idx``,
    the new values added to the dictionary; past its limits the page turns PLAIN. -1: out of memory."""
    cdef _Dict *d = &p.d
    cdef uint32_t *keys = d.keys
    cdef int32_t *slots = d.slots
    cdef int32_t *starts = d.starts
    cdef int32_t *lengths = d.lengths
    cdef uint64_t *heads = d.heads
    cdef uint32_t mask = d.mask, shift = d.shift, n = d.n, w, s
    cdef int32_t slot, a = 0, length = 0, e
    cdef uint64_t head = 0
    cdef uint16_t *idx = p.idx + p.nitems
    cdef const char *text = NULL
    cdef Py_ssize_t j
    for j in range(lo, hi):
        if it.size:
            w = _word(it.data, j, it.size)
        else:
            a = it.ends[j]
            length = it.ends[j + 1] - a
            text = it.data + a
            w = _string_key(text, length, it.room - a, &head)
        s = _slot_of_key(w, shift)
        slot = slots[s]
        while slot:
            e = slot - 1
            if keys[e] == w and (it.size or (
                    lengths[e] == length and heads[e] == head
                    and (length <= 8 or memcmp(it.data + starts[e] + 8, text + 8, length - 8) == 0))):
                break
            s = (s + 1) & mask
            slot = slots[s]
        if slot:
            idx[0] = <uint16_t>(slot - 1)
        else:
            d.n = n
            if _dict_full(p, d.plain + (4 if it.size else 4 + length)):
                break
            d.plain += 4 if it.size else 4 + length
            keys[n] = w
            if not it.size:
                starts[n] = a
                lengths[n] = length
                heads[n] = head
            slots[s] = <int32_t>(n + 1)
            idx[0] = <uint16_t>n
            n += 1
            if n * 4 >= mask + 1:
                d.n = n
                if _dict_grow(d) < 0:
                    return -1
                keys = d.keys
                slots = d.slots
                starts = d.starts
                lengths = d.lengths
                heads = d.heads
                mask = d.mask
                shift = d.shift
        idx += 1
    d.n = n
    p.nitems += hi - lo
    return 0


cdef int _page_levels(_Page *p, const int32_t *offsets, Py_ssize_t count, const unsigned char *list_valid,
                      Py_ssize_t list_bit, const _Items *it) noexcept nogil:
    """The levels of every list and the dictionary index of every value; -1: out of memory."""
    cdef Py_ssize_t i, j, lo, hi, run
    for i in range(count):
        lo = offsets[i]
        hi = offsets[i + 1]
        p.entries += 1
        if not _valid_bit(list_valid, list_bit + i):
            if _level(&p.reps, 0, 1) < 0 or _level(&p.defs, 0, 1) < 0:
                return -1
            continue
        if lo == hi:
            if _level(&p.reps, 0, 1) < 0 or _level(&p.defs, 1, 1) < 0:
                return -1
            continue
        p.entries += hi - lo - 1
        if _level(&p.reps, 0, 1) < 0 or (hi - lo > 1 and _level(&p.reps, 1, <uint64_t>(hi - lo - 1)) < 0):
            return -1
        j = lo
        while j < hi:       # runs of set items, then of null ones
            run = j if it.valid != NULL else hi
            while run < hi and _valid_bit(it.valid, it.first + run):
                run += 1
            if run > j:
                if _level(&p.defs, 3, <uint64_t>(run - j)) < 0:
                    return -1
                if not p.use_dict:
                    p.nitems += run - j
                elif _dict_indices(p, it, it.first + j, it.first + run) < 0:
                    return -1
            j = run
            while run < hi and not _valid_bit(it.valid, it.first + run):
                run += 1
            if run > j and _level(&p.defs, 2, <uint64_t>(run - j)) < 0:
                return -1
            j = run
    return 0


cdef void _pack(char *out, const uint16_t *idx, Py_ssize_t k, uint32_t width) noexcept nogil:
    """``k`` indices of ``width`` bits (at most 16) packed least significant bit first into ``out``
    (zeroed, room for whole groups of 8), 4 bytes a store."""
    cdef uint64_t acc = 0
    cdef uint32_t nbits = 0, word
    cdef Py_ssize_t j
    if width == 8:
        for j in range(k):
            out[j] = <char>idx[j]
        return
    for j in range(k):
        acc |= <uint64_t>idx[j] << nbits
        nbits += width
        if nbits >= 32:
            word = <uint32_t>acc
            memcpy(out, &word, 4)       # little-endian (x86-64, aarch64)
            out += 4
            acc >>= 32
            nbits -= 32
    while nbits > 0:
        out[0] = <char>(acc & 0xFF)
        out += 1
        acc >>= 8
        nbits -= 8 if nbits >= 8 else nbits


cdef int _plain_item(Out *out, const _Items *it, Py_ssize_t j) noexcept nogil:
    """Item ``j`` (a position in the buffers) as PLAIN writes it: 4 bytes, or a string's length and bytes."""
    cdef uint32_t w
    cdef int32_t n
    if it.size:
        if _reserve(out, 4) < 0:
            return -1
        w = _word(it.data, j, it.size)
        _w(out, <const char *>&w, 4)        # little-endian (x86-64, aarch64)
        return 0
    n = it.ends[j + 1] - it.ends[j]
    if _reserve(out, 4 + n) < 0:
        return -1
    _w(out, <const char *>&n, 4)
    _w(out, it.data + it.ends[j], n)
    return 0


cdef int _page_indices(_Page *p, const _Items *it, Out *body, Out *plain) noexcept nogil:
    """The bit width, the indices bit-packed in runs, and the dictionary's values; -1: out of memory."""
    cdef uint32_t width = 1, e
    cdef Py_ssize_t run, k, groups
    while (<uint32_t>1 << width) < p.d.n:
        width += 1
    if _reserve(body, 1) < 0:
        return -1
    _wc(body, <char>width)
    if it.size:
        if _reserve(plain, 4 * p.d.n) < 0:
            return -1
        _w(plain, <const char *>p.d.keys, 4 * p.d.n)      # PLAIN: little-endian (x86-64, aarch64)
    else:
        for e in range(p.d.n):
            if _reserve(plain, 4 + p.d.lengths[e]) < 0:
                return -1
            _w(plain, <const char *>&p.d.lengths[e], 4)
            _w(plain, it.data + p.d.starts[e], p.d.lengths[e])
    run = 0
    while run < p.nitems:
        k = min(p.nitems - run, 8 * _PAGE_RUN_GROUPS)
        groups = (k + 7) // 8
        if _page_varint(body, <uint64_t>(groups << 1 | 1)) < 0 or _reserve(body, groups * width) < 0:
            return -1
        memset(body.data + body.size, 0, groups * width)
        _pack(body.data + body.size, p.idx + run, k, width)
        body.size += groups * width
        run += k
    return 0


cdef int _page_plain(Out *body, const int32_t *offsets, Py_ssize_t count, const unsigned char *list_valid,
                     Py_ssize_t list_bit, const _Items *it) noexcept nogil:
    """Every value in order, PLAIN (a second pass: a page falls back only past the dictionary's limits)."""
    cdef Py_ssize_t i, j
    for i in range(count):
        if _valid_bit(list_valid, list_bit + i):
            for j in range(offsets[i], offsets[i + 1]):
                if _valid_bit(it.valid, it.first + j) and _plain_item(body, it, it.first + j) < 0:
                    return -1
    return 0


cdef int _list_page(const int32_t *offsets, Py_ssize_t count, const unsigned char *list_valid, Py_ssize_t list_bit,
                    const _Items *it, Out *body, Out *plain, Py_ssize_t *entries, Py_ssize_t *distinct) noexcept nogil:
    """The page (``body``) and the dictionary (``plain``, left empty for PLAIN values); -1: out of memory.

    ``offsets``: the ``count + 1`` offsets of the lists (checked by the caller: in order, within the items,
    and so are a string's ends); ``list_bit``: the first list's bit in ``list_valid``.
    """
    cdef _Page p
    cdef int rc = -1
    memset(&p, 0, sizeof(p))
    p.reps.value = -1
    p.defs.value = -1
    p.use_dict = True
    p.d.strings = it.size == 0
    p.idx = <uint16_t *>malloc((offsets[count] - offsets[0] + 1) * sizeof(uint16_t))
    if (p.idx != NULL and _dict_grow(&p.d) == 0
            and _page_levels(&p, offsets, count, list_valid, list_bit, it) == 0
            and _levels_out(body, &p.reps) == 0 and _levels_out(body, &p.defs) == 0):
        if p.use_dict and p.nitems:
            rc = _page_indices(&p, it, body, plain)
            distinct[0] = p.d.n
        else:
            rc = _page_plain(body, offsets, count, list_valid, list_bit, it)
    entries[0] = p.entries
    free(p.idx)
    free(p.d.keys)
    free(p.d.starts)
    free(p.d.lengths)
    free(p.d.heads)
    free(p.d.slots)
    free(p.reps.runs.data)
    free(p.defs.runs.data)
    return rc


def list_page(array):
    """``(body, dictionary, entries, distinct)`` of a ``list<float32|int16|int8|string>`` array
    (fastpgn/parquet/_pages_py.py)."""
    cdef Py_buffer views[5]           # the list's offsets and validity, the child's validity, data, ends
    cdef bint held[5]
    cdef const int32_t *offsets
    cdef Py_ssize_t count = len(array), first = array.offset, entries = 0, distinct = 0, n_values, i, lo, hi
    cdef _Items it
    cdef Out body, plain
    cdef int rc
    cdef int32_t no_lists = 0
    kind = str(array.type.value_type)
    if kind == "float":
        it.size = 4
    elif kind == "int16":
        it.size = 2
    elif kind == "int8":
        it.size = 1
    elif kind == "string":
        it.size = 0
    else:
        raise TypeError(f"list_page takes a list of float, int16, int8 or string, not {array.type}")
    list_buffer, offsets_buffer = array.buffers()[:2]
    child = array.values
    child_buffers = child.buffers()
    it.first = child.offset
    n_values = len(child)
    memset(&body, 0, sizeof(body))
    memset(&plain, 0, sizeof(plain))
    memset(held, 0, sizeof(held))
    it.data = NULL
    it.ends = NULL
    it.valid = NULL
    it.room = 0
    try:
        if count == 0:
            offsets = &no_lists
        else:
            if offsets_buffer is None:
                raise ValueError("list_page: the list's offsets are not in order within its values")
            PyObject_GetBuffer(offsets_buffer, &views[0], PyBUF_SIMPLE)
            held[0] = True
            if views[0].len < 4 * (first + count + 1):
                raise ValueError("list_page: the list's offsets are not in order within its values")
            offsets = <const int32_t *>views[0].buf + first
        if offsets[0] < 0 or offsets[count] > n_values:
            raise ValueError("list_page: the list's offsets are not in order within its values")
        for i in range(count):
            if offsets[i] > offsets[i + 1]:
                raise ValueError("list_page: the list's offsets are not in order within its values")
        lo = offsets[0]
        hi = offsets[count]
        data_buffer = child_buffers[1] if it.size else child_buffers[2]
        if data_buffer is not None:
            PyObject_GetBuffer(data_buffer, &views[3], PyBUF_SIMPLE)
            held[3] = True
            it.data = <const char *>views[3].buf
            it.room = views[3].len
        if it.size and (it.first + n_values) * it.size > it.room:
            raise ValueError("list_page: the values are shorter than the array says")
        if not it.size and hi > lo:
            if child_buffers[1] is None:
                raise ValueError("list_page: the strings' offsets are not in order within their bytes")
            PyObject_GetBuffer(child_buffers[1], &views[4], PyBUF_SIMPLE)
            held[4] = True
            if views[4].len < 4 * (it.first + n_values + 1):
                raise ValueError("list_page: the strings' offsets are not in order within their bytes")
            it.ends = <const int32_t *>views[4].buf
            if it.ends[it.first + lo] < 0 or it.ends[it.first + hi] > it.room:
                raise ValueError("list_page: the strings' offsets are not in order within their bytes")
            for i in range(it.first + lo, it.first + hi):
                if it.ends[i] > it.ends[i + 1]:
                    raise ValueError("list_page: the strings' offsets are not in order within their bytes")
        if list_buffer is not None:
            PyObject_GetBuffer(list_buffer, &views[1], PyBUF_SIMPLE)
            held[1] = True
            if views[1].len * 8 < first + count:
                raise ValueError("list_page: the validity bitmap is shorter than the array")
        if child_buffers[0] is not None:
            PyObject_GetBuffer(child_buffers[0], &views[2], PyBUF_SIMPLE)
            held[2] = True
            if views[2].len * 8 < it.first + n_values:
                raise ValueError("list_page: the validity bitmap is shorter than the values")
            it.valid = <const unsigned char *>views[2].buf
        with nogil:
            rc = _list_page(offsets, count, <const unsigned char *>views[1].buf if held[1] else NULL, first, &it,
                            &body, &plain, &entries, &distinct)
        if rc < 0:
            raise MemoryError()
        return (PyBytes_FromStringAndSize(body.data, body.size),
                PyBytes_FromStringAndSize(plain.data, plain.size) if distinct else None, entries, distinct)
    finally:
        free(body.data)
        free(plain.data)
        for i in range(5):
            if held[i]:
                PyBuffer_Release(&views[i])
