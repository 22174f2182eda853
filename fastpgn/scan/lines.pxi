# The 22-field line sink: python-lichess-db-pgn-parser's line, the opening codes, replay for --validate/--uci.
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit: no call
# between the parts costs more than it did in one file). Mirrors fastpgn/scan/lines.py.

cdef struct Opening:
    uint64_t hash                  # 0: an empty slot
    const char *key
    Py_ssize_t key_len
    const char *code
    Py_ssize_t code_len


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 32
    h *= 0xD6E8FEB86659FD93ULL
    h ^= h >> 32
    return h


cdef inline uint64_t _span_hash(const char *p, Py_ssize_t n) noexcept nogil:
    """A hash of ``p[:n]`` read eight bytes at a time (the last word overlapping the one before it)."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL * <uint64_t>(n + 1)
    cdef uint32_t a, b
    if n >= 8:
        while n > 8:
            h = _mix(h ^ _load64(p))
            p += 8
            n -= 8
        return _mix(h ^ _load64(p + n - 8))
    if n >= 4:
        memcpy(&a, p, 4)
        memcpy(&b, p + n - 4, 4)
        return _mix(h ^ ((<uint64_t>a << 32) | b))
    if n > 0:
        return _mix(h ^ ((<uint64_t><unsigned char>p[0] << 16) | (<uint64_t><unsigned char>p[n >> 1] << 8)
                         | <unsigned char>p[n - 1]))
    return h


cdef inline uint64_t _opening_hash(const char *ep, Py_ssize_t en, const char *np, Py_ssize_t nn) noexcept nogil:
    """The table's hash of the key ``ECO + "│" + Opening``, from its two parts (never 0)."""
    return (_mix(_span_hash(ep, en) * 0xFF51AFD7ED558CCDULL) ^ _span_hash(np, nn)) | 1


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
    cdef readonly object source       # the map it copies (the CSV sink reads it as a dict)
    cdef Py_ssize_t source_len

    def __cinit__(self, object source):
        cdef Py_ssize_t size = 16
        cdef Opening *slot
        cdef uint64_t h
        cdef const char *p
        cdef const char *sep
        cdef Py_ssize_t n
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
            # hashed as _table_code hashes it: the parts before and after the first separator (a key
            # without one is no ECO + "│" + Opening; an ECO value that holds the separator is split
            # elsewhere, misses here and is looked up in the map itself, as a gap)
            p = PyBytes_AS_STRING(key)
            n = PyBytes_GET_SIZE(key)
            sep = <const char *>memmem(p, n, b"\xe2\x94\x82", 3)
            if sep == NULL:
                continue
            self.held.append(key)
            self.held.append(code)
            h = _opening_hash(p, sep - p, sep + 3, n - (sep - p) - 3)
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
    cdef uint64_t h = _opening_hash(ep, en, np, nn)
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
    cdef char *d
    cdef const long long *clock_secs
    cdef const Py_ssize_t *clock_frac
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
    # 4 result: fastpgn.lichess.RESULT_CODES (field 5: TERMINATION_CODES), mirrored here in C (tests/test_lichess.py)
    if slots[S_RESULT] >= 0:
        if _cspan(buf, game, slots[S_RESULT], scratch, &vp, &vn) < 0:
            return -1
    else:
        vp = _result_at(buf, game)
        vn = _result_len(game)
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
    # 22 clocks in seconds (through a local pointer, as _wmoves writes: a space after each, the last one
    # overwritten by the line's end)
    d = out.data + out.size
    if nclocks:
        clock_secs = game.clock_secs
        clock_frac = game.clock_frac
        for i in range(n):
            if clock_secs[i] >= 0:
                d = _psmall(d, clock_secs[i])
                s = clock_frac[2 * i]
                e = clock_frac[2 * i + 1]
                if e > s:
                    memcpy(d, buf + s, e - s)
                    d += e - s
                d[0] = b' '
                d += 1
        if d != out.data + out.size:
            d -= 1
    d[0] = b'\n'
    out.size = d + 1 - out.data
    return 0


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
    cdef int replayed
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
            replayed = _replay_game(buf, end, game, replay, board_starts, board, uci)
            if replayed < 0:
                return -1
            if replayed > 0:
                held[0] = True
                return pos
        if _line(out, buf, game, gaps, scratch) < 0:
            game.out_of_memory = True
            return -1
    return pos


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


cdef list _gap_codes(const char *buf, Gaps *gaps, object openings, Py_ssize_t *size):
    """Each gap's opening code (the map's value, ``?`` when absent); ``size`` grows by their lengths."""
    cdef bint plain_dict = _reads_as_dict(openings)
    cdef list codes = []
    cdef Py_ssize_t i
    cdef PyObject *hit
    cdef bytes key, code
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
        size[0] += PyBytes_GET_SIZE(code)
    return codes


cdef Py_ssize_t _fill_gaps(Out *out, Gaps *gaps, list codes, char *target, Py_ssize_t size):
    """The lines of ``out`` with the gaps' ``codes`` written into ``target`` (``size`` bytes); the bytes written."""
    cdef Py_ssize_t i, at = 0
    cdef bytes code
    cdef Out dest
    dest.data = target
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
    return dest.size


cdef bytes _fill_openings(const char *buf, Out *out, Gaps *gaps, object openings):
    """The lines of ``out`` with each gap's opening code (the map's value, ``?`` when absent)."""
    cdef Py_ssize_t size = out.size, written
    cdef list codes = _gap_codes(buf, gaps, openings, &size)
    cdef bytes result = PyBytes_FromStringAndSize(NULL, size)
    written = _fill_gaps(out, gaps, codes, PyBytes_AS_STRING(result), size)
    if written == size:
        return result
    return result[:written]  # a code held a separator or line break, which _wfield dropped


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* n bytes of UTF-8 as UCS-2 code units in out (room for n + 16): their number, or -1 for a sequence
       that is not valid UTF-8 or is above U+FFFF (CPython's decoder reads those). *top gets the
       highest code point above U+007F, 0 when all are ASCII. */
    static Py_ssize_t fastpgn_utf8_ucs2(const unsigned char *p, Py_ssize_t n, Py_UCS2 *out, Py_UCS4 *top) {
        Py_ssize_t i = 0, k = 0;
        Py_UCS4 high = 0;
        while (i < n) {
    #if defined(__SSE2__) && defined(__GNUC__)
            if (n - i >= 16) {
                /* 16 bytes widened at once (out has room for 16 past any unit): all of them when they
                   are ASCII, else the ASCII ones before the first that is not */
                __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
                __m128i z = _mm_setzero_si128();
                int high_bits = _mm_movemask_epi8(v);
                _mm_storeu_si128((__m128i *)(out + k), _mm_unpacklo_epi8(v, z));
                _mm_storeu_si128((__m128i *)(out + k + 8), _mm_unpackhi_epi8(v, z));
                if (high_bits == 0) {
                    i += 16;
                    k += 16;
                    continue;
                }
                i += __builtin_ctz(high_bits);
                k += __builtin_ctz(high_bits);
                if (i + 2 < n && p[i] == 0xE2 && p[i + 1] == 0x94 && p[i + 2] == 0x82) {   /* the separator, U+2502 */
                    out[k++] = 0x2502;
                    i += 3;
                    if (high < 0x2502) high = 0x2502;
                    continue;
                }
            }
    #endif
            Py_UCS4 c = p[i];
            if (c < 0x80) {
                out[k++] = (Py_UCS2)c;
                i++;
                continue;
            }
            if (c >= 0xC2 && c <= 0xDF) {
                if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) return -1;
                c = ((c & 0x1F) << 6) | (p[i + 1] & 0x3F);
                i += 2;
            } else if (c >= 0xE0 && c <= 0xEF) {
                if (i + 2 >= n) return -1;
                Py_UCS4 c1 = p[i + 1], c2 = p[i + 2];
                if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80) return -1;
                if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return -1;  /* overlong; surrogate */
                c = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F);
                i += 3;
            } else {
                return -1;
            }
            out[k++] = (Py_UCS2)c;
            if (c > high) high = c;
        }
        *top = high;
        return k;
    }
    """
    Py_ssize_t fastpgn_utf8_ucs2(const unsigned char *p, Py_ssize_t n, Py_UCS2 *out, Py_UCS4 *top) nogil


cdef list _line_texts(const char *p, Py_ssize_t n):
    """The lines of ``p[:n]`` (each ends with ``\\n``) as str, as ``p[:n].decode("utf-8", "replace").split("\\n")``
    gives them, less the empty last one.

    Every line holds the separator U+2502, so a line is UCS-2 text: it is decoded here into a str of that
    kind, and a line this does not read (not valid UTF-8, a code point above U+FFFF) by CPython's
    decoder, line by line: a line break never falls inside a UTF-8 sequence, so the answer is the same.
    """
    cdef list lines = []
    cdef const char *end = p + n
    cdef const char *nl
    cdef Py_ssize_t size, room = 4096, k
    cdef Py_UCS2 *units = <Py_UCS2 *>malloc((room + 16) * sizeof(Py_UCS2))
    cdef Py_UCS2 *grown
    cdef Py_UCS4 top
    cdef object text
    if units == NULL:
        raise MemoryError()
    try:
        while p < end:
            nl = <const char *>memchr(p, b'\n', end - p)
            if nl == NULL:
                nl = end
            size = nl - p
            if size > room:
                room = 2 * size
                grown = <Py_UCS2 *>realloc(units, (room + 16) * sizeof(Py_UCS2))
                if grown == NULL:
                    raise MemoryError()
                units = grown
            k = fastpgn_utf8_ucs2(<const unsigned char *>p, size, units, &top)
            if k < 0 or top < 0x100:
                text = PyUnicode_DecodeUTF8(p, size, "replace")
            else:
                text = PyUnicode_New(k, top)
                memcpy(PyUnicode_DATA(text), units, k * sizeof(Py_UCS2))
            lines.append(text)
            p = nl + 1
    finally:
        free(units)
    return lines


cdef list _texts_of(const char *buf, Out *out, Gaps *gaps, object openings):
    """The lines of ``out`` as a list of str, each gap (``gaps`` not NULL) filled with its opening code."""
    cdef Py_ssize_t size = out.size, written
    cdef list codes
    cdef char *filled
    if gaps == NULL or gaps.n == 0:
        return _line_texts(out.data, out.size)
    codes = _gap_codes(buf, gaps, openings, &size)
    filled = <char *>malloc(size if size > 0 else 1)
    if filled == NULL:
        raise MemoryError()
    try:
        written = _fill_gaps(out, gaps, codes, filled, size)
        return _line_texts(filled, written)
    finally:
        free(filled)


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


def lines_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                     long long first_game=0, bint at_stream_start=True, bint stop_on_error=False,
                     object where=None, object openings=None, object moves_hook=None, bint text=False):
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
        return ScanResult(*_lines_from_block(<const char *>view.buf, start, end, base_offset, first_game,
                                             at_stream_start, openings, stop_on_error, moves_hook, where_plan(where),
                                             text))
    finally:
        PyBuffer_Release(&view)


cdef tuple _lines_from_block(const char *buf, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                             long long first_game, bint at_stream_start, object openings,
                             bint stop_on_error, object moves_hook, _WherePlan plan, bint text):
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
        if text:
            lines = _texts_of(buf, &out, use_gaps, openings)
        elif use_gaps == NULL:
            lines = PyBytes_FromStringAndSize(out.data, out.size)
        else:
            lines = _fill_openings(buf, &out, &gaps, openings)
        return lines, number - first_game, rejects, filtered
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
    """``p[:n].decode("utf-8", "replace")``; ASCII (most tag values) copied straight into a new str."""
    cdef Py_ssize_t i = 0
    cdef object text
    while i + 8 <= n:
        if _load64(p + i) & 0x8080808080808080ULL:
            return PyUnicode_DecodeUTF8(p, n, "replace")
        i += 8
    while i < n:
        if <unsigned char>p[i] >= 0x80:
            return PyUnicode_DecodeUTF8(p, n, "replace")
        i += 1
    text = PyUnicode_New(n, 127)
    memcpy(PyUnicode_DATA(text), p, n)
    return text


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
