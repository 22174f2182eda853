# The filters tested on a game's tags and movetext (where_plan): the kernel's half of fastpgn.filters.
#
# Included by scan/_scan_cy.pyx after scan/grammar.pxi, whose _scan_game calls _keep_tags between a
# game's tag section and its movetext and _keep_moves after it (one translation unit: no call between the
# parts costs more than it did in one file). Mirrors fastpgn/scan/filters.py function by function.

# A filter as the kernel reads it (_WherePlan, below, fills it). A test's kind is
# bits: TAG_FOLD compares ignoring the case of A-Z, TAG_PREFIX a start of the value (both: an ECO prefix).
cdef enum:
    TAG_EQUAL = 0
    TAG_FOLD = 1
    TAG_PREFIX = 2


cdef struct TagTest:
    int nnames                     # 1 or 2: the test passes if one of the tags does
    const char *names[2]
    Py_ssize_t name_lens[2]
    int kind                       # TAG_EQUAL, or the bits TAG_FOLD, TAG_PREFIX
    Py_ssize_t nvalues
    const char **values            # (lowered with TAG_FOLD)
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


# The pure twin's _Where, in C: where_plan copies a spec into a Where the
# scanner reads without the GIL. Tag values are compared with their escapes
# undone, as the twin compares the values _tags_on_line unescaped.

ELO_WHITE, ELO_BLACK, ELO_BOTH, ELO_EITHER = range(4)
# fastpgn.lichess's speed table, copied for C (_speed_bit, and columns.pxi's names): tests/test_lichess.py holds
# these, and what _speed_bit answers at each limit, to it.
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
    """Whether value ``p[:n]`` (escaped if ``raw``) equals ``lit`` (lowered first with TAG_FOLD) or, with
    TAG_PREFIX, starts with it."""
    cdef Py_ssize_t i = 0, k = 0
    cdef char c
    while i < n:
        c = p[i]
        if raw and c == b'\\' and i + 1 < n and (p[i + 1] == b'"' or p[i + 1] == b'\\'):
            i += 1
            c = p[i]
        if k == m:
            return (kind & TAG_PREFIX) != 0
        if kind & TAG_FOLD:
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
