# The record sink: games (headers, SAN, evals, clocks) and headers only, as Python objects.
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit: no call
# between the parts costs more than it did in one file). Mirrors fastpgn/scan/records.py; the str and int caches live here, nowhere else.

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


cdef enum:
    TOKEN_BITS = 15
    TOKEN_SLOTS = 1 << TOKEN_BITS
    TOKEN_BYTES = 7       # longer tokens (rare: "Rfxe1+?!") are decoded each time

# Key: the token's bytes, little end first, with its length in the top byte.
cdef CacheSlot _tokens[TOKEN_SLOTS]
cdef Py_ssize_t _token_count = 0

cdef enum:
    VALUE_BITS = 13
    VALUE_SLOTS = 1 << VALUE_BITS
    VALUE_BYTES = 128     # longer tag values are decoded each time

# Key: a hash of the value's bytes (never 0); the str (ASCII only) is compared.
cdef CacheSlot _values[VALUE_SLOTS]
cdef Py_ssize_t _value_count = 0

cdef enum:
    CLOCK_INTS = 21601    # whole seconds up to 6 hours; above, a new int each time
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
    text = _text(p, n)
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
        if game.nevals == 0 or game.evals[2 * i] < 0:      # (no eval in the game: its spans hold none)
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
        if game.nclocks == 0 or game.clock_secs[i] < 0:    # (no clock in the game: its spans hold none)
            _incref(none)
            _list_set(clocks, i, none)
        else:
            _list_set(clocks, i, _clock_ref(buf, game, i))
    _untrack(clocks)
    return clocks


# ---------------------------------------------------------------- records: games as the reader hands them out

cdef class GameCore:
    """A game as the reader hands it out: fastpgn.reader.Game is this, with its methods (once for both kernels).

    ``games_from_block(..., record=Game)`` (and ``headers_from_block``)
    fills these in place of the record tuples, without calling ``__init__``:
    a game costs an allocation and some pointer stores, where a tuple and a
    Python ``__init__`` cost about three times that.
    """

    cdef public object offset, number, headers, first_ply
    cdef public object _moves, _evals, _clocks, _result_token, _text

    def __init__(self, offset, number, headers, moves, evals, clocks, result_token, first_ply=-1, text=None):
        self.offset = offset
        self.number = number
        self.headers = headers
        #: The ply the movetext's move number before the first move names
        #: (``1.`` is 0, ``12...`` is 23: Black's twelfth move); None without one.
        self.first_ply = first_ply if first_ply >= 0 else None
        self._moves = moves
        self._evals = evals
        self._clocks = clocks
        self._result_token = result_token
        self._text = text


cdef extern from "Python.h":
    PyObject *_list_item "PyList_GET_ITEM" (object, Py_ssize_t)
    Py_ssize_t _list_size "PyList_GET_SIZE" (object)
    void _track "PyObject_GC_Track" (PyObject *)
    Py_ssize_t _refcnt "Py_REFCNT" (PyObject *)
    bint _is_tracked "PyObject_GC_IsTracked" (PyObject *)
    bint _is_gc "PyObject_IS_GC" (PyObject *)


cdef class RecordFeed:
    """The reader's ``__next__``, in C: fastpgn.reader.GameReader (and LineReader) is this, with the rest
    of a reader.

    Hands out the items of the lists ``self._next_list()`` returns (a
    block's games, or lines; StopIteration at the end), one a call, counting them in
    ``games_yielded``: a Python ``__next__`` cost more than the kernel's
    making of the game. A list no one else holds (GameReader hands its
    lists over) gives up each item as it is handed out, so a game lives as
    long as its caller keeps it; a list held elsewhere too is only read.
    The kernel makes a block's games untracked by the garbage collector
    (see ``_game_record``); each is tracked here, when it is handed out and
    can first be changed. Both spare the collector: a block's games waiting
    or read, tracked and still held, were walked at every collection.
    """

    cdef list _items
    cdef Py_ssize_t _at
    cdef bint _owned        # _items is held by this feed alone: its items are handed over
    cdef public long long games_yielded

    def __next__(self):
        cdef list items = self._items
        cdef Py_ssize_t at = self._at
        cdef PyObject *item
        cdef object out
        while items is None or at >= _list_size(items):
            self._items = None
            items = self._next_list()
            self._owned = _refcnt(<PyObject *>items) == 1   # (the local alone)
            self._items = items
            at = 0
        item = _list_item(items, at)
        self._at = at + 1
        self.games_yielded += 1
        if _is_gc(item) and not _is_tracked(item):
            _track(item)
        if not self._owned:
            return <object>item
        _incref(<PyObject *>None)
        _list_set(items, at, <PyObject *>None)   # the list's reference, handed over
        out = <object>item
        _decref(item)
        return out

    def _drop(self):
        """Forget the items not handed out yet (the reader's close())."""
        self._items = None
        self._at = 0


cdef extern from *:
    """
    /* An instance of cls (a GameCore subclass: the caller checked) made by its tp_new alone. */
    static PyObject *fastpgn_bare_instance(PyObject *cls, PyObject *no_args) {
        return ((PyTypeObject *)cls)->tp_new((PyTypeObject *)cls, no_args, NULL);
    }
    """
    object _bare_instance "fastpgn_bare_instance" (object cls, object no_args)

cdef tuple _NO_ARGS = ()


cdef GameCore _game_record(object cls, long long offset, long long number, dict headers, object moves,
                           object evals, object clocks, object result, long long first_ply, object text):
    """A game's record, untracked by the garbage collector until RecordFeed hands it out.

    Nothing in a record as made can be part of a reference cycle (a dict of
    str, lists of str, int, float and None), and a block's records wait
    together for the reader: tracked, the collector would walk each of them
    several times before it is read, for nothing.
    """
    cdef GameCore game = <GameCore>_bare_instance(cls, _NO_ARGS)
    _untrack(game)
    game.offset = PyLong_FromLongLong(offset)
    game.number = PyLong_FromLongLong(number)
    game.headers = headers
    if first_ply >= 0:
        game.first_ply = PyLong_FromLongLong(first_ply)
    game._moves = moves
    game._evals = evals
    game._clocks = clocks
    game._result_token = result
    game._text = text
    return game


cdef object _record_class(object record):
    """games_from_block's ``record``, checked: None, or a subclass of GameCore."""
    if record is not None and not (isinstance(record, type) and issubclass(record, GameCore)):
        raise TypeError(f"record must be None or a subclass of GameCore, not {record!r}")
    return record


def games_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                     long long first_game=0, bint at_stream_start=True, bint stop_on_error=False, object where=None,
                     object record=None):
    """Scan the whole games in ``data[start:end]`` (any bytes-like object) into record tuples, or instances of
    ``record`` (see the pure twin)."""
    cdef Py_buffer view
    record = _record_class(record)
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return ScanResult(*_games_from_block(<const char *>view.buf, start, end, base_offset, first_game,
                                             at_stream_start, stop_on_error, where_plan(where), False, record))
    finally:
        PyBuffer_Release(&view)


cdef dict _headers(const char *buf, _Game game, Out *scratch, const char *stop):
    """The game's tags as a dict of str (the last of a name wins); ``stop`` ends the block's readable bytes."""
    cdef dict headers = _sized_dict(game.ntags)
    cdef Py_ssize_t t, vn, ns, nn
    cdef const char *vp
    cdef int slot
    cdef bint repeats
    cdef str name
    cdef PyObject *value
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
        if repeats and 0 < vn <= TOKEN_BYTES:
            # A short value (a result, rating, ECO code, time control) is a token as a move is:
            # its bytes are its cache key, so it costs no hash and no compare.
            value = _token_ref(vp, vn, stop if vp != scratch.data else vp + vn)
            headers[name] = <object>value
            _decref(value)
        else:
            headers[name] = _value_text(vp, vn) if repeats else _text(vp, vn)
    return headers


cdef object _record_of(const char *buf, Py_ssize_t end, _Game game, long long base_offset, long long number,
                       bint headers_only, object cls, Out *scratch):
    """The record of a good game read into ``game`` (a tuple, or an instance of ``cls``): what
    games_from_block, headers_from_block and records_from_spans hand out for it."""
    cdef object record
    cdef dict headers = _headers(buf, game, scratch, buf + end)
    cdef object result = _token(_result_at(buf, game), _result_len(game),
                                buf + end if game.result_lit == NULL else game.result_lit + game.result_lit_len)
    if cls is not None:
        if headers_only:   # (the per-ply lists: None, made when asked for: reader.Game)
            return _game_record(cls, base_offset + game.start, number, headers, None, None, None, result, -1,
                                b"")     # (headers only: the text is not kept, a copy would double the cost)
        return _game_record(cls, base_offset + game.start, number, headers, _ply_moves(buf, buf + end, game),
                            _ply_evals(buf, buf + end, game), _ply_clocks(buf, game), result, game.first_ply,
                            PyBytes_FromStringAndSize(buf + game.start, game.end - game.start))
    if headers_only:
        record = (base_offset + game.start, number, headers, result, game.start, game.end)
    else:
        record = (base_offset + game.start, number, headers, _ply_moves(buf, buf + end, game),
                  _ply_evals(buf, buf + end, game), _ply_clocks(buf, game), result, game.first_ply,
                  game.start, game.end)
    _untrack(record)  # (what the collector's first pass would do: nothing in it is tracked)
    return record


cdef tuple _games_from_block(const char *buf, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                             long long first_game, bint at_stream_start, bint stop_on_error, _WherePlan plan,
                             bint headers_only, object cls):
    """games_from_block, or with ``headers_only`` headers_from_block; ``cls``: their ``record``."""
    cdef _Game game = _Game()
    cdef list out = [], rejects = []
    cdef long long number = first_game, filtered = 0
    cdef Py_ssize_t pos
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
            out.append(_record_of(buf, end, game, base_offset, number, headers_only, cls, &scratch))
        return out, number - first_game, rejects, filtered
    finally:
        free(scratch.data)


# ---------------------------------------------------------------- records in two steps: spans, then objects

# A reader on worker threads (read_games and read_headers with jobs above 1) cannot make a game's Python
# objects there: they need the GIL, which the threads would only contend for. So its games are read in
# two steps: spans_from_block scans a block without the GIL into a _GameSpans (each good game's _Game
# spans, copied out), and records_from_spans makes the records from them on the reader's thread, with
# _record_of, as games_from_block makes them: the same objects, whichever way they were read.

cdef struct _Span:
    # One good game of a _GameSpans: its _Game fields, its tags and plies at tag_at and ply_at in the pools.
    Py_ssize_t start, end, ntags, nmoves, tag_at, ply_at, result_start, result_end, result_lit_len
    Py_ssize_t nevals, nclocks                              # 0: the plies' evals (clocks) were not copied
    const char *result_lit
    long long number, first_ply
    bint plain_values


cdef struct _SpanPools:
    # A _GameSpans' arrays and their room (in games, tags, plies); kept for the next block when it is freed.
    _Span *games
    Py_ssize_t cap_games
    Py_ssize_t *tags                                        # 4 per tag
    Py_ssize_t cap_tags
    Py_ssize_t *moves
    Py_ssize_t *evals
    Py_ssize_t *clock_frac                                  # 2 per ply each
    long long *clock_secs
    Py_ssize_t cap_plies


cdef void _free_pools(_SpanPools *p) noexcept nogil:
    free(p.games)
    free(p.tags)
    free(p.moves)
    free(p.evals)
    free(p.clock_frac)
    free(p.clock_secs)
    memset(p, 0, sizeof(_SpanPools))


cdef int _pools_room(_SpanPools *p, Py_ssize_t games, Py_ssize_t tags, Py_ssize_t plies) noexcept nogil:
    """Room in ``p`` for at least so many games, tags and plies (what is in it kept); -1 when memory is short."""
    cdef Py_ssize_t cap
    if games > p.cap_games:
        cap = 2 * p.cap_games if 2 * p.cap_games > games else games
        if not _grow(<void **>&p.games, cap * sizeof(_Span)):
            return -1
        p.cap_games = cap
    if tags > p.cap_tags:
        cap = 2 * p.cap_tags if 2 * p.cap_tags > tags else tags
        if not _grow(<void **>&p.tags, 4 * cap * sizeof(Py_ssize_t)):
            return -1
        p.cap_tags = cap
    if plies > p.cap_plies:
        cap = 2 * p.cap_plies if 2 * p.cap_plies > plies else plies
        if not (_grow(<void **>&p.moves, 2 * cap * sizeof(Py_ssize_t))
                and _grow(<void **>&p.evals, 2 * cap * sizeof(Py_ssize_t))
                and _grow(<void **>&p.clock_frac, 2 * cap * sizeof(Py_ssize_t))
                and _grow(<void **>&p.clock_secs, cap * sizeof(long long))):
            return -1
        p.cap_plies = cap
    return 0


# The pools of freed _GameSpans, for the next blocks' (a reader's workers and its own thread take and give
# them with the GIL held): no fresh pages to fault in, no copies as they grow, block after block.
cdef enum:
    SPARE_POOLS = 4      # (a reader at jobs=2 has at most four blocks in hand)
cdef _SpanPools _spare_pools[SPARE_POOLS]
cdef int _spare_count = 0


cdef class _GameSpans:
    """A block's good games as spans_from_block read them (without the GIL): what records_from_spans
    makes records of, from the same block. Opaque; ``len()`` is the number of games."""

    cdef _SpanPools p
    cdef Py_ssize_t n, ntags, nplies
    cdef bint headers_only
    cdef long long base_offset
    cdef Py_ssize_t end         # the end of the block's bytes as the scan read them

    def __cinit__(self):
        global _spare_count
        if _spare_count:
            _spare_count -= 1
            self.p = _spare_pools[_spare_count]

    def __dealloc__(self):
        global _spare_count
        if _spare_count < SPARE_POOLS:
            _spare_pools[_spare_count] = self.p
            _spare_count += 1
        else:
            _free_pools(&self.p)

    def __len__(self):
        return self.n

    cdef int add(self, _Game game, long long number) noexcept nogil:
        """``game`` (good, read by _scan_game) kept as its spans; -1 when memory is short."""
        cdef _Span *s
        cdef Py_ssize_t plies = 0 if self.headers_only else game.nmoves
        if _pools_room(&self.p, self.n + 1, self.ntags + game.ntags, self.nplies + plies) < 0:
            return -1
        s = &self.p.games[self.n]
        s.start, s.end, s.ntags, s.nmoves = game.start, game.end, game.ntags, plies
        s.tag_at, s.ply_at = self.ntags, self.nplies
        s.result_start, s.result_end = game.result_start, game.result_end
        s.result_lit, s.result_lit_len = game.result_lit, game.result_lit_len
        s.number, s.first_ply, s.plain_values = number, game.first_ply, game.plain_values
        s.nevals, s.nclocks = game.nevals, game.nclocks
        memcpy(self.p.tags + 4 * self.ntags, game.tags, 4 * game.ntags * sizeof(Py_ssize_t))
        if plies:
            memcpy(self.p.moves + 2 * self.nplies, game.moves, 2 * plies * sizeof(Py_ssize_t))
            # Most games have no evals, many no clocks: nothing to copy (_ply_evals, _ply_clocks read none)
            if game.nevals:
                memcpy(self.p.evals + 2 * self.nplies, game.evals, 2 * plies * sizeof(Py_ssize_t))
            if game.nclocks:
                memcpy(self.p.clock_frac + 2 * self.nplies, game.clock_frac, 2 * plies * sizeof(Py_ssize_t))
                memcpy(self.p.clock_secs + self.nplies, game.clock_secs, plies * sizeof(long long))
        self.ntags += game.ntags
        self.nplies += plies
        self.n += 1
        return 0

    cdef void lend(self, Py_ssize_t i, _Game game) noexcept nogil:
        """Point ``game`` at game ``i``'s spans, as _scan_game left them for what _record_of reads (which
        only reads them): its own arrays must be put back (``_Game.unlend``) before it is used otherwise."""
        cdef _Span *s = &self.p.games[i]
        game.reset(s.start)
        game.end, game.ntags, game.nmoves = s.end, s.ntags, s.nmoves
        game.cap_tags, game.cap_moves = s.ntags, s.nmoves
        game.result_start, game.result_end = s.result_start, s.result_end
        game.result_lit, game.result_lit_len = s.result_lit, s.result_lit_len
        game.first_ply, game.plain_values = s.first_ply, s.plain_values
        game.nevals, game.nclocks = s.nevals, s.nclocks
        game.tags = self.p.tags + 4 * s.tag_at
        game.moves = self.p.moves + 2 * s.ply_at
        game.evals = self.p.evals + 2 * s.ply_at
        game.clock_frac = self.p.clock_frac + 2 * s.ply_at
        game.clock_secs = self.p.clock_secs + s.ply_at


def spans_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                     long long first_game=0, bint at_stream_start=True, bint stop_on_error=False, object where=None,
                     bint headers_only=False):
    """games_from_block (headers_from_block with ``headers_only``) in two steps, the first: the block
    scanned without the GIL, its good games kept as spans (see the pure twin)."""
    cdef Py_buffer view
    cdef _WherePlan plan = where_plan(where)
    cdef Where *w = NULL if plan is None else &plan.c
    cdef _Game game = _Game()
    cdef _GameSpans spans = _GameSpans()
    cdef Bads bads
    cdef long long number = first_game, filtered = 0
    cdef Py_ssize_t pos
    cdef bint memory_short = False
    cdef const char *buf
    bads.items, bads.n, bads.cap = NULL, 0, 0
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        buf = <const char *>view.buf
        spans.headers_only, spans.base_offset, spans.end = headers_only, base_offset, end
        with nogil:
            pos = _first(buf, start, end, at_stream_start)
            while _scan_game(buf, pos, end, game, w, headers_only):
                number += 1
                pos = game.end
                if game.out_of_memory:
                    memory_short = True
                    break
                if game.bad:
                    if _add_bad(&bads, game, number) < 0:
                        memory_short = True
                        break
                    if stop_on_error:
                        break
                    continue
                if game.filtered:
                    filtered += 1
                    continue
                if spans.add(game, number) < 0:
                    memory_short = True
                    break
        if memory_short:
            raise MemoryError()
        return ScanResult(spans, number - first_game, _rejects(buf, &bads, base_offset, None), filtered)
    finally:
        free(bads.items)
        PyBuffer_Release(&view)


def records_from_spans(object data, object spans, *, long long first_game=0, object record=None):
    """The second step: the records of ``spans``'s games (spans_from_block's output for ``data``, the same
    bytes), numbered ``first_game`` on from the scan's numbers: equal to what games_from_block (or
    headers_from_block) gives for the same block (see the pure twin)."""
    cdef Py_buffer view
    cdef _Game game = _Game()
    cdef list out = []
    cdef Py_ssize_t i
    cdef Out scratch
    cdef object cls = _record_class(record)
    cdef _GameSpans kept
    if not isinstance(spans, _GameSpans):
        raise TypeError(f"spans must be what spans_from_block gave, not {type(spans).__name__}")
    kept = <_GameSpans>spans
    scratch.data, scratch.size, scratch.cap = NULL, 0, 0
    cdef _GameArrays own
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    game.keep(&own)
    try:
        if view.len < kept.end:
            raise ValueError("records_from_spans: data is shorter than the block its spans were read from")
        for i in range(kept.n):
            kept.lend(i, game)
            out.append(_record_of(<const char *>view.buf, kept.end, game, kept.base_offset,
                                  first_game + kept.p.games[i].number, kept.headers_only, cls, &scratch))
        return out
    finally:
        game.unlend(&own)
        free(scratch.data)
        PyBuffer_Release(&view)


def headers_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                       long long first_game=0, bint at_stream_start=True, bint stop_on_error=False, object where=None,
                       object record=None):
    """games_from_block without the moves: each game's tags, its movetext skipped (see the pure twin)."""
    cdef Py_buffer view
    record = _record_class(record)
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return ScanResult(*_games_from_block(<const char *>view.buf, start, end, base_offset, first_game,
                                             at_stream_start, stop_on_error, where_plan(where), True, record))
    finally:
        PyBuffer_Release(&view)
