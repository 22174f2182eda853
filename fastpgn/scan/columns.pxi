# The column sink: the analysis schema (fastpgn.schema) filled straight into Arrow buffers.
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit) after buffers.pxi (the
# buffers, Col) and before analysis.pxi (what lichess computes from the evals and clocks). Mirrors
# fastpgn/scan/columns.py, which builds the same columns as Python lists; the
# tests hold the two to equal tables. Each column is a few growing C buffers
# (values, offsets, a validity bitmap), filled without the GIL and without a
# Python object per game or per move; fastpgn.arrow wraps them as Arrow
# arrays without copying. Rules for each value: docs/schema.md.

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t
from libc.stdlib cimport strtod
from libc.limits cimport LLONG_MIN
from libc.string cimport memset, strlen
from libc.stdio cimport snprintf

# The sink's buffers: one Col each for a column and for each level of its lists' items. The numbers are
# the sink's own (in no order the schema knows: a run of them read as a range is declared in that order);
# which schema column each buffer makes is _FILLS, and the schema's order, the columns' layout and the
# offsets to start all come from fastpgn.schema.COLUMNS through it (_make_tables).
cdef enum:
    K_GAME_ID
    K_SITE
    K_EVENT
    K_UTC
    K_DATE
    K_WHITE
    K_BLACK
    K_WHITE_ELO
    K_BLACK_ELO
    K_WHITE_DIFF
    K_BLACK_DIFF
    K_WHITE_TITLE
    K_BLACK_TITLE
    K_RESULT
    K_TERMINATION
    K_TIME_CONTROL
    K_BASE
    K_INCREMENT
    K_SPEED
    K_ECO
    K_OPENING
    K_OPENING_CODE
    K_VARIANT
    K_FEN
    K_PLIES
    K_MATE
    K_MOVES
    K_EVAL_CP
    K_EVAL_MATE
    K_CLOCK
    K_NAGS
    # what lichess computes from the evals and clocks (fastpgn.accuracy)
    K_WIN_PERCENT
    K_JUDGEMENT
    K_MOVE_SECONDS
    K_WHITE_ACCURACY            # then K_BLACK_ACCURACY: K_WHITE_ACCURACY + side
    K_BLACK_ACCURACY
    K_WHITE_ACPL                # then K_BLACK_ACPL: K_WHITE_ACPL + side
    K_BLACK_ACPL
    K_WHITE_INACCURACIES        # then the rest of the six counts: K_WHITE_INACCURACIES + 3 * side + j
    K_WHITE_MISTAKES
    K_WHITE_BLUNDERS
    K_BLACK_INACCURACIES
    K_BLACK_MISTAKES
    K_BLACK_BLUNDERS
    K_BYTE_OFFSET
    K_TAGS
    K_UCI
    # the children of the list and map columns
    K_MOVES_ITEM
    K_EVAL_CP_ITEM
    K_EVAL_MATE_ITEM
    K_CLOCK_ITEM
    K_TAG_KEY
    K_TAG_VALUE
    K_UCI_ITEM
    K_WIN_PERCENT_ITEM
    K_JUDGEMENT_ITEM
    K_MOVE_SECONDS_ITEM
    # with positions / fens: each ply's Polyglot key and FEN (the replay's, scan/replay.pxi)
    K_ZOBRIST
    K_ZOBRIST_ITEM
    K_FENS
    K_FENS_ITEM
    # the nags' per-ply lists and their NAGs
    K_NAGS_PLY
    K_NAGS_ITEM
    # lichess's draw offers by side (then K_BLACK_DRAW_OFFERS: K_WHITE_DRAW_OFFERS + side), the flags
    K_WHITE_DRAW_OFFERS
    K_BLACK_DRAW_OFFERS
    K_WHITE_DRAW_OFFERS_ITEM    # then K_BLACK_DRAW_OFFERS_ITEM: + side
    K_BLACK_DRAW_OFFERS_ITEM
    K_FLAGS
    K_FLAGS_ITEM
    NCOLS
    MAX_COLUMNS = 128           # the schema's columns the tables below can hold (a CSV column number is a byte)

# Which buffers make each column of fastpgn.schema (by name): the column's, then its items' in the order its
# Arrow type nests them (a list's items; a struct's fields in order). Adding a column to the schema means a
# row here and the code that fills its buffers (_columns_row); the schema's order, its layout and the CSV
# writer come from fastpgn.schema.COLUMNS, checked against this table when the kernel is loaded (_make_tables).
_FILLS = {
    "game_id": (K_GAME_ID,), "site": (K_SITE,), "event": (K_EVENT,), "utc": (K_UTC,), "date": (K_DATE,),
    "white": (K_WHITE,), "black": (K_BLACK,), "white_elo": (K_WHITE_ELO,), "black_elo": (K_BLACK_ELO,),
    "white_rating_diff": (K_WHITE_DIFF,), "black_rating_diff": (K_BLACK_DIFF,), "white_title": (K_WHITE_TITLE,),
    "black_title": (K_BLACK_TITLE,), "result": (K_RESULT,), "termination": (K_TERMINATION,),
    "time_control": (K_TIME_CONTROL,), "base_seconds": (K_BASE,), "increment_seconds": (K_INCREMENT,),
    "speed": (K_SPEED,), "eco": (K_ECO,), "opening": (K_OPENING,), "opening_code": (K_OPENING_CODE,),
    "variant": (K_VARIANT,), "fen": (K_FEN,), "plies": (K_PLIES,), "mate": (K_MATE,),
    "moves": (K_MOVES, K_MOVES_ITEM), "eval_cp": (K_EVAL_CP, K_EVAL_CP_ITEM),
    "eval_mate": (K_EVAL_MATE, K_EVAL_MATE_ITEM), "clock": (K_CLOCK, K_CLOCK_ITEM),
    "nags": (K_NAGS, K_NAGS_PLY, K_NAGS_ITEM),
    "win_percent": (K_WIN_PERCENT, K_WIN_PERCENT_ITEM), "judgement": (K_JUDGEMENT, K_JUDGEMENT_ITEM),
    "move_seconds": (K_MOVE_SECONDS, K_MOVE_SECONDS_ITEM),
    "white_accuracy": (K_WHITE_ACCURACY,), "black_accuracy": (K_BLACK_ACCURACY,),
    "white_acpl": (K_WHITE_ACPL,), "black_acpl": (K_BLACK_ACPL,),
    "white_inaccuracies": (K_WHITE_INACCURACIES,), "white_mistakes": (K_WHITE_MISTAKES,),
    "white_blunders": (K_WHITE_BLUNDERS,), "black_inaccuracies": (K_BLACK_INACCURACIES,),
    "black_mistakes": (K_BLACK_MISTAKES,), "black_blunders": (K_BLACK_BLUNDERS,),
    "white_draw_offers": (K_WHITE_DRAW_OFFERS, K_WHITE_DRAW_OFFERS_ITEM),
    "black_draw_offers": (K_BLACK_DRAW_OFFERS, K_BLACK_DRAW_OFFERS_ITEM), "flags": (K_FLAGS, K_FLAGS_ITEM),
    "byte_offset": (K_BYTE_OFFSET,), "tags": (K_TAGS, K_TAG_KEY, K_TAG_VALUE),
    "uci": (K_UCI, K_UCI_ITEM), "zobrist": (K_ZOBRIST, K_ZOBRIST_ITEM), "fens": (K_FENS, K_FENS_ITEM),
}
_SINK = "the compiled column sink (fastpgn/scan/columns.pxi)"
_WIDTHS = {"bool": 0, "int8": 1, "int16": 2, "int32": 4, "date32": 4, "float32": 4, "int64": 8,
           "timestamp[s, tz=UTC]": 8}

from _thread import allocate_lock as _allocate_lock

cdef object _against = None        # the fastpgn.schema.COLUMNS the tables were made from
cdef object _TABLES_LOCK = _allocate_lock()
cdef object _schema = None         # (fastpgn.schema, imported by check_columns when the kernel is loaded)
cdef list _PLAN = []               # per column of schema.columns(uci=True, positions=True, fens=True): (name, the
                                   # flag that adds it or None, its buffers as a tree: (k, type text, children))
cdef bint _STARTS_OFFSETS[NCOLS]   # the buffers with offsets (strings and lists): their first offset, 0, written


cdef tuple _tree(str name, str kind, tuple ks, list at):
    """Column ``name``'s buffer tree of type ``kind`` from ``ks`` (``at[0]``: the next buffer to take)."""
    if at[0] >= len(ks):
        raise ColumnError(f"{_SINK} names too few buffers for the column {name!r} ({kind}) in _FILLS")
    cdef int k = ks[at[0]]
    at[0] += 1
    cdef list children = []
    if kind.startswith("list<"):
        inner = kind[5:-1]
        if inner.startswith("struct<"):      # (a list of structs: the fields' buffers are the list's children)
            for field, field_kind in _schema.struct_fields(inner):
                children.append(_tree(name, field_kind, ks, at))
        else:
            children.append(_tree(name, inner, ks, at))
    elif kind != "string" and kind not in _WIDTHS:
        raise ColumnError(f"{_SINK} has no buffer layout for the column {name!r} ({kind})")
    return (k, kind, tuple(children))


def check_columns():
    """That this kernel's column sinks make every column of ``fastpgn.schema.COLUMNS`` as its type lays it out,
    and no other: a ColumnError naming the first that differs and the sink. Run when the kernel is loaded
    (the end of scan/_scan_cy.pyx), and by every block when ``COLUMNS`` is another tuple (_ready)."""
    _ready()


cdef int _ready() except -1:
    """The tables made from fastpgn.schema.COLUMNS, made again when that is another tuple (a ColumnError naming
    the first column this sink does not make as the schema types it)."""
    global _schema
    if _schema is None:
        from fastpgn import schema
        _schema = schema
    if _schema.COLUMNS is not _against:
        with _TABLES_LOCK:         # (one thread makes them: another may be reading them without the GIL)
            if _schema.COLUMNS is not _against:
                _make_tables()
    return 0


cdef int _own_buffers(str name, tuple tree, dict owners) except -1:
    """Each buffer of ``tree`` taken for column ``name`` in ``owners`` (buffer: column): a ColumnError for one that
    another row of _FILLS names too (two columns filling one buffer would each write into the other's rows)."""
    cdef int k = tree[0]
    if k in owners:
        raise ColumnError(f"{_SINK} makes the columns {owners[k]!r} and {name!r} from one buffer (their rows in "
                          f"_FILLS name the same one)")
    owners[k] = name
    for child in tree[2]:
        _own_buffers(name, child, owners)
    return 0


cdef void _mark_offsets(tuple tree):
    if tree[1] == "string" or tree[1].startswith("list<"):
        _STARTS_OFFSETS[<int>tree[0]] = True
    for child in tree[2]:
        _mark_offsets(child)


cdef int _make_tables() except -1:
    global _against, _PLAN
    cdef list plan = []
    cdef dict owners = {}
    _against = None                # (until the tables are whole: a failure here is made again next block)
    every = _schema.columns(uci=True, positions=True, fens=True)
    names = [c.name for c in every]
    if len(every) > MAX_COLUMNS:
        raise ColumnError(f"{_SINK} holds at most {MAX_COLUMNS} columns; fastpgn.schema names {len(every)}")
    for name in _FILLS:
        if name not in names:
            raise ColumnError(f"{_SINK} makes a column {name!r} that fastpgn.schema.COLUMNS does not name")
    for i in range(NCOLS):
        _STARTS_OFFSETS[i] = False
    flags = {name: flag for name, flag in _schema.OPTIONAL.items()}
    for column in every:
        ks = _FILLS.get(column.name)
        if ks is None:
            raise ColumnError(f"{_SINK} makes no column {column.name!r} of fastpgn.schema.COLUMNS")
        at = [0]
        tree = _tree(column.name, column.type, ks, at)
        if at[0] != len(ks):
            raise ColumnError(f"{_SINK} names more buffers for the column {column.name!r} ({column.type}) in "
                              f"_FILLS than its type has")
        _own_buffers(column.name, tree, owners)
        plan.append((column.name, flags.get(column.name), tree))
    for entry in plan:
        _mark_offsets(entry[2])
    _csv_tables(plan)
    _known_months()
    _PLAN = plan
    _against = _schema.COLUMNS
    return 0


cdef int _check_tree(Columns *c, str name, tuple tree, Py_ssize_t rows) except -1:
    """That buffer ``tree`` of column ``name`` holds ``rows`` items laid out as its type says, before anything
    reads it (a buffer left unfilled is this ColumnError, never a read past its end)."""
    cdef Col *col = &c.cols[<int>tree[0]]
    cdef str kind = tree[1]
    cdef Py_ssize_t width, last = 0
    cdef bint ok = col.n == rows and col.nulls <= rows and (col.nulls == 0 or col.valid.size * 8 >= rows)
    if ok and (kind == "string" or kind.startswith("list<")):
        ok = col.off.size == 4 * (rows + 1)
        if ok:
            last = (<int32_t *>col.off.data)[rows]
            ok = (<int32_t *>col.off.data)[0] == 0 and last >= 0
        if ok and kind == "string":
            ok = last == col.data.size
    elif ok:
        width = _WIDTHS[kind]
        if c.csv and kind == "float32":       # doubles for the CSV sink (_real), its clock entries their text
            width = sizeof(ClockEntry) if tree[0] == K_CLOCK_ITEM else 8
        ok = col.data.size == ((rows + 7) >> 3 if width == 0 else rows * width)
    if not ok:
        raise ColumnError(f"{_SINK} left the column {name!r} ({tree[1]}) unfilled or not as its type lays it out "
                          f"({col.n} of {rows} items)")
    for child in tree[2]:
        _check_tree(c, name, child, last)
    return 0


cdef list _filled(Columns *c):
    """The plan's columns this block made (``uci``, ``zobrist``, ``fens`` when asked), each checked."""
    cdef list chosen = []
    made = {"uci": c.uci, "positions": c.pos != NULL and c.pos.keys, "fens": c.pos != NULL and c.pos.fens}
    for name, flag, tree in _PLAN:
        if flag is None or made[flag]:
            _check_tree(c, name, tree, c.rows)
            chosen.append((name, tree))
    return chosen


cdef const char *_SPEED_NAMES[6]
_SPEED_NAMES[0] = b"ultraBullet"
_SPEED_NAMES[1] = b"bullet"
_SPEED_NAMES[2] = b"blitz"
_SPEED_NAMES[3] = b"rapid"
_SPEED_NAMES[4] = b"classical"
_SPEED_NAMES[5] = b"correspondence"


cdef struct Columns:
    Col cols[NCOLS]
    const char **codes             # per row: the opening code, NULL for none, or _GAP for a gap
    Py_ssize_t *code_lens
    Py_ssize_t ncodes, cap_codes
    Gaps gaps                      # the rows whose code the map's C table did not give, and the table
    bint have_map                  # an openings map is in use (else opening_code is null)
    bint uci
    Positions *pos                 # the replay's positions (zobrist, fens), NULL when not asked
    bint csv                       # for the CSV sink (scan/csv.pxi): clock entries kept as their source text
    Py_ssize_t *tag_scratch        # _tag_map_hashed's table, grown on demand
    Py_ssize_t tag_cap
    long long row_base, row_increment   # the row's time control (-1: none), for move_seconds
    bint row_white_first                # the row's first move is White's (its FEN), for the analysis
    double *wins                   # per ply + 1: win percents (the start first), for game accuracy
    double *secs                   # per ply: the clock's seconds as the pure twin's int or float holds them
    signed char *kinds             # per ply: 0 no eval, 1 centipawns, 2 mate (_eval_value)
    int32_t *values                # per ply: the centipawns or the mate
    Py_ssize_t ply_cap
    Py_ssize_t rows                # the rows written (_columns_row)


cdef const char *_GAP = b"gap"     # (a distinct address)


cdef int _columns_start(Columns *c, bint uci) noexcept nogil:
    cdef int i
    memset(c, 0, sizeof(Columns))
    c.uci = uci
    for i in range(NCOLS):
        if _STARTS_OFFSETS[i] and _offset(&c.cols[i], 0) < 0:
            return -1
    return 0


# Each column's offsets and data in the last block, in bytes, and that block's length: a block's buffers
# start with that room, scaled to its length, so they are not copied as they grow (a doubling buffer
# copies as much again as it ends with). Room only: every write still makes its own (_reserve). Read and
# written with the GIL held (a reader's worker threads share them).
cdef Py_ssize_t _last_room[NCOLS][2]
cdef Py_ssize_t _last_length = 0


cdef int _columns_room(Columns *c, Py_ssize_t length) noexcept nogil:
    """Room in ``c``'s buffers for a block of ``length`` bytes, as the last block's took; -1 when memory is
    short."""
    cdef int k, j
    cdef Out *out
    cdef Py_ssize_t want
    if _last_length <= 0 or length <= 0:
        return 0
    for k in range(NCOLS):
        for j in range(2):
            out = &c.cols[k].off if j == 0 else &c.cols[k].data
            # an eighth more than the last block's share, so a block a little richer is not copied either
            want = <Py_ssize_t>(<double>_last_room[k][j] * length / _last_length * 1.125)
            if want > out.cap and want > 4096:
                if not _grow(<void **>&out.data, want):
                    return -1
                out.cap = want
    return 0


cdef void _columns_note_room(Columns *c, Py_ssize_t length) noexcept nogil:
    """What ``c``'s buffers hold, for the next block's _columns_room."""
    global _last_length
    cdef int k
    for k in range(NCOLS):
        _last_room[k][0] = c.cols[k].off.size
        _last_room[k][1] = c.cols[k].data.size
    _last_length = length


cdef void _columns_free(Columns *c) noexcept nogil:
    cdef int i
    for i in range(NCOLS):
        free(c.cols[i].off.data)
        free(c.cols[i].data.data)
        free(c.cols[i].valid.data)
    free(c.codes)
    free(c.code_lens)
    free(c.gaps.items)
    free(c.tag_scratch)
    free(c.wins)
    free(c.secs)
    free(c.kinds)
    free(c.values)


cdef inline int _tag_string(Col *col, const char *buf, _Game game, Py_ssize_t t, Out *scratch) noexcept nogil:
    """Tag ``t``'s value (escapes undone) into string column ``col``; a null when ``t`` < 0."""
    cdef const char *p
    cdef Py_ssize_t n
    if t < 0:
        return _string(col, NULL, 0)
    if _cspan(buf, game, t, scratch, &p, &n) < 0:
        return -1
    return _string(col, p, n)


cdef long long _small_int(const char *p, Py_ssize_t n, long long low, long long high) noexcept nogil:
    """The integer ``p[:n]`` says (``+`` or ``-``, then 1 to 10 ASCII digits) if it lies in ``[low, high]``;
    else LLONG_MIN, meaning null."""
    cdef long long v = 0
    cdef bint negative = False
    cdef Py_ssize_t i = 0
    if n > 0 and (p[0] == b'+' or p[0] == b'-'):
        negative = p[0] == b'-'
        i = 1
    if n - i < 1 or n - i > 10:
        return LLONG_MIN
    while i < n:
        if not _is_digit(p[i]):
            return LLONG_MIN
        v = v * 10 + (p[i] - 48)
        i += 1
    if negative:
        v = -v
    if v < low or v > high:
        return LLONG_MIN
    return v


cdef int _tag_int(Col *col, const char *buf, _Game game, Py_ssize_t t, Out *scratch) noexcept nogil:
    """An int16 tag value (a rating, a rating change): null if absent, not an integer, or outside int16."""
    cdef const char *p
    cdef Py_ssize_t n
    cdef long long v = LLONG_MIN
    cdef int16_t v16
    if t >= 0:
        if _cspan(buf, game, t, scratch, &p, &n) < 0:
            return -1
        v = _small_int(p, n, -32768, 32767)
    v16 = <int16_t>v
    return _fixed(col, &v16, 2, v != LLONG_MIN)


cdef long long _days(const char *p, Py_ssize_t n) noexcept nogil:
    """Days since 1970-01-01 of a ``YYYY.MM.DD`` date that exists (year 1 on); LLONG_MIN otherwise."""
    cdef long long y, m, d, era, yoe, doy, doe
    cdef int mdays
    if not _well_formed_date(p, n):
        return LLONG_MIN
    y = (p[0] - 48) * 1000 + (p[1] - 48) * 100 + (p[2] - 48) * 10 + (p[3] - 48)
    m = (p[5] - 48) * 10 + (p[6] - 48)
    d = (p[8] - 48) * 10 + (p[9] - 48)
    if y < 1 or m < 1 or m > 12 or d < 1:
        return LLONG_MIN
    if m == 2:
        mdays = 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    elif m == 4 or m == 6 or m == 9 or m == 11:
        mdays = 30
    else:
        mdays = 31
    if d > mdays:
        return LLONG_MIN
    # days from civil (proleptic Gregorian)
    if m <= 2:
        y -= 1
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef int _when(Columns *c, const char *buf, _Game game, Py_ssize_t date_tag, Py_ssize_t time_tag,
               Out *scratch) noexcept nogil:
    """The utc and date columns."""
    cdef const char *p
    cdef Py_ssize_t n
    cdef long long days = LLONG_MIN, secs = -1
    cdef int32_t day32
    cdef int64_t stamp
    if date_tag >= 0:
        if _cspan(buf, game, date_tag, scratch, &p, &n) < 0:
            return -1
        days = _days(p, n)
    if time_tag >= 0 and days != LLONG_MIN:
        if _cspan(buf, game, time_tag, scratch, &p, &n) < 0:
            return -1
        secs = _seconds_of_day(p, n)
    stamp = days * 86400 + secs
    if _fixed(&c.cols[K_UTC], &stamp, 8, secs >= 0) < 0:
        return -1
    day32 = <int32_t>days
    return _fixed(&c.cols[K_DATE], &day32, 4, days != LLONG_MIN)


cdef int _time_control(Columns *c, const char *buf, _Game game, Py_ssize_t t, Out *scratch) noexcept nogil:
    """The time_control, base_seconds, increment_seconds and speed columns."""
    cdef const char *p = NULL
    cdef const char *plus = NULL
    cdef Py_ssize_t n = 0
    cdef long long base = -1, increment = -1
    cdef int32_t base32
    cdef int16_t inc16
    cdef int bit = 0, i
    if t >= 0:
        if _cspan(buf, game, t, scratch, &p, &n) < 0:
            return -1
        plus = <const char *>memchr(p, b'+', n) if n > 0 else NULL
        if plus != NULL:
            base = _digits(p, plus - p)
            increment = _digits(plus + 1, n - (plus - p) - 1)
            if base < 0 or increment < 0:
                base = increment = -1
        bit = _speed_bit(p, n)
    if _string(&c.cols[K_TIME_CONTROL], p, n) < 0:
        return -1
    base32 = <int32_t>base
    inc16 = <int16_t>increment
    c.row_base, c.row_increment = base, increment
    if (_fixed(&c.cols[K_BASE], &base32, 4, base >= 0) < 0
            or _fixed(&c.cols[K_INCREMENT], &inc16, 2, 0 <= increment <= 32767) < 0):
        return -1
    for i in range(6):
        if bit == (1 << i):
            return _string(&c.cols[K_SPEED], _SPEED_NAMES[i], strlen(_SPEED_NAMES[i]))
    return _string(&c.cols[K_SPEED], NULL, 0)


cdef int _opening_code(Columns *c, const char *buf, _Game game, Py_ssize_t eco_tag,
                       Py_ssize_t name_tag) noexcept nogil:
    """Note the row's opening code: from the map's C table, none (no map), or a gap to fill with the GIL."""
    cdef const char *ep = buf
    cdef const char *np = buf
    cdef const char *code = NULL
    cdef Py_ssize_t en = 0, nn = 0, code_len = 0
    if c.ncodes == c.cap_codes:
        if not (_grow(<void **>&c.codes, 2 * (c.cap_codes + 256) * sizeof(char *))
                and _grow(<void **>&c.code_lens, 2 * (c.cap_codes + 256) * sizeof(Py_ssize_t))):
            return -1
        c.cap_codes = 2 * (c.cap_codes + 256)
    if c.have_map:
        if eco_tag >= 0:
            ep = buf + game.tags[4 * eco_tag + 2]
            en = game.tags[4 * eco_tag + 3] - game.tags[4 * eco_tag + 2]
        if name_tag >= 0:
            np = buf + game.tags[4 * name_tag + 2]
            nn = game.tags[4 * name_tag + 3] - game.tags[4 * name_tag + 2]
        if (c.gaps.table == NULL or not (game.plain_values or (memchr(ep, b'\\', en) == NULL
                                                               and memchr(np, b'\\', nn) == NULL))
                or not _table_code(c.gaps.table, c.gaps.table_mask, ep, en, np, nn, &code, &code_len)):
            code = _GAP
            if _add_gap(&c.gaps, c.ncodes, game, eco_tag, name_tag) < 0:
                return -1
    c.codes[c.ncodes] = code
    c.code_lens[c.ncodes] = code_len
    c.ncodes += 1
    return 0


cdef int _eval_value(const char *p, Py_ssize_t n, long long *value) noexcept nogil:
    """An %eval value: 1 centipawns (``-1.5`` -> -150: the pawns' text shifted two places, half a centipawn
    rounded away from zero, clamped to int16), 2 mate in N (``#-3`` -> -3, clamped to int8), 0 neither (then
    it is null in both columns). fastpgn.schema.eval_value is the rule."""
    cdef Py_ssize_t i = 0, k = 0, whole_digits = 0
    cdef bint negative = False
    cdef long long whole = 0, frac = 0
    if n > 0 and p[0] == b'#':
        if n > 1 and (p[1] == b'+' or p[1] == b'-'):
            negative = p[1] == b'-'
            i = 2
        else:
            i = 1
        if n - i < 1 or n - i > 10:
            return 0
        while i < n:
            if not _is_digit(p[i]):
                return 0
            whole = whole * 10 + (p[i] - 48)
            i += 1
        if whole > 127:
            whole = 127
        value[0] = -whole if negative else whole
        return 2
    if n > 0 and (p[0] == b'+' or p[0] == b'-'):
        negative = p[0] == b'-'
        i = 1
    while i < n and _is_digit(p[i]):
        if whole < 1000:        # past 1,000 pawns the value is clamped anyway
            whole = whole * 10 + (p[i] - 48)
        whole_digits += 1
        i += 1
    if whole_digits == 0:
        return 0
    if i < n:
        if p[i] != b'.':
            return 0
        i += 1
        if i == n:
            return 0            # "5." is no number here
        while i < n:
            if not _is_digit(p[i]):
                return 0
            if k < 2:
                frac = frac * 10 + (p[i] - 48)
            elif k == 2 and p[i] >= b'5':
                frac += 1       # half a centipawn, away from zero
            k += 1
            i += 1
        if k == 1:
            frac *= 10
    whole = whole * 100 + frac
    if whole > 32767:
        whole = 32767
    value[0] = -whole if negative else whole
    return 1


cdef int _uci_items(Col *items, const char *text, Py_ssize_t n) noexcept nogil:
    """The uci list's items: the replay's UCI text ``text[:n]`` (moves a space apart) cut at its spaces.

    The replay writes ASCII moves of 4 or 5 bytes: room is taken once for the
    game, each move found by looking 4 bytes ahead and copied 8 bytes at once
    where the text holds 8, its end offset written in place. Text of another
    shape (not ASCII) goes through _string token by token, as every move did.
    """
    cdef Py_ssize_t s = 0, e
    cdef int32_t *off
    if items.nulls or not _ascii(text, n):
        while s < n:
            e = s
            while e < n and text[e] != b' ':
                e += 1
            if e > s and _string(items, text + s, e - s) < 0:
                return -1
            s = e + 1
        return 0
    # at most (n + 1) // 2 moves: each takes a byte and the space after it; 8 bytes more for the copies
    if _reserve(&items.data, n + 8) < 0 or _reserve(&items.off, 4 * ((n + 1) // 2)) < 0:
        return -1
    off = <int32_t *>(items.off.data + items.off.size)
    while s < n:
        if text[s] == b' ':
            s += 1
            continue
        e = s + 4
        if e > n or (e < n and text[e] != b' '):
            e = s + 1
            while e < n and text[e] != b' ':
                e += 1
        if e - s <= 8 and s + 8 <= n:   # the move and the bytes after it copied whole (room: 8 bytes more)
            memcpy(items.data.data + items.data.size, text + s, 8)
            items.data.size += e - s
        else:
            _w(&items.data, text + s, e - s)
        off[0] = <int32_t>items.data.size
        off += 1
        s = e + 1
    items.n += (<char *>off - (items.off.data + items.off.size)) // 4
    items.off.size = <char *>off - items.off.data
    return 0


cdef int _plies(Columns *c, const char *buf, _Game game) noexcept nogil:
    """The per-ply columns: moves, eval_cp, eval_mate, clock (and uci when asked)."""
    cdef Py_ssize_t i, s, e, k
    cdef long long v
    cdef int kind
    cdef int16_t cp
    cdef int8_t mate
    cdef float seconds
    cdef char text[48]
    cdef Col *moves = &c.cols[K_MOVES_ITEM]
    cdef Col *cps = &c.cols[K_EVAL_CP_ITEM]
    cdef Col *mates = &c.cols[K_EVAL_MATE_ITEM]
    cdef Col *clocks = &c.cols[K_CLOCK_ITEM]
    if _span_strings(moves, buf, game.moves, game.nmoves, game.end) < 0:
        return -1
    if _list_end(&c.cols[K_MOVES], moves, True) < 0:
        return -1
    if game.nmoves >= c.ply_cap:       # the analysis's scratch: a value per ply, and one more
        k = 2 * game.nmoves + 64
        if not (_grow(<void **>&c.wins, k * sizeof(double)) and _grow(<void **>&c.secs, k * sizeof(double))
                and _grow(<void **>&c.kinds, k) and _grow(<void **>&c.values, k * sizeof(int32_t))):
            return -1
        c.ply_cap = k
    for i in range(game.nmoves if game.nevals else 0):
        kind = 0
        if game.evals[2 * i] >= 0:
            kind = _eval_value(buf + game.evals[2 * i], game.evals[2 * i + 1] - game.evals[2 * i], &v)
        if kind == 1:
            cp = <int16_t>v
        elif kind == 2:
            mate = <int8_t>v
        c.kinds[i] = kind
        c.values[i] = cp if kind == 1 else (mate if kind == 2 else 0)
        if _fixed(cps, &cp, 2, kind == 1) < 0 or _fixed(mates, &mate, 1, kind == 2) < 0:
            return -1
    if (_list_end(&c.cols[K_EVAL_CP], cps, game.nevals > 0) < 0
            or _list_end(&c.cols[K_EVAL_MATE], mates, game.nevals > 0) < 0):
        return -1
    if _analysis(c, buf, game) < 0:
        return -1
    for i in range(game.nmoves if game.nclocks else 0):
        v = game.clock_secs[i]
        s, e = game.clock_frac[2 * i], game.clock_frac[2 * i + 1]
        if v >= 0 and s != e:  # "177" + ".7", read as float("177.7") reads it: correctly rounded (move_seconds)
            k = snprintf(text, 24, "%lld", v)
            if e - s > 20:
                e = s + 20
            memcpy(text + k, buf + s, e - s)
            text[k + e - s] = 0
            c.secs[i] = strtod(text, NULL)
        if c.csv:
            if _csv_clock_entry(clocks, v, game.clock_frac[2 * i], game.clock_frac[2 * i + 1]) < 0:
                return -1
            continue
        if v >= 0:
            # as the twin's float: the int rounded to double first; tenths as read, then to float32
            seconds = <float><double>v if s == e else <float>c.secs[i]
        if _fixed(clocks, &seconds, 4, v >= 0) < 0:
            return -1
    if _list_end(&c.cols[K_CLOCK], clocks, game.nclocks > 0) < 0:
        return -1
    if _nags(c, game) < 0:
        return -1
    if _move_seconds(c, game) < 0:
        return -1
    if c.uci:
        if _uci_items(&c.cols[K_UCI_ITEM], game.moves_text, game.moves_len) < 0:
            return -1
        if _list_end(&c.cols[K_UCI], &c.cols[K_UCI_ITEM], True) < 0:
            return -1
    if c.pos != NULL and _positions(c, c.pos) < 0:
        return -1
    return 0


cdef int _nags(Columns *c, _Game game) noexcept nogil:
    """The nags list of a row: per ply, the NAGs the grammar noted for it, in order; null when it noted none."""
    cdef Col *plies = &c.cols[K_NAGS_PLY]
    cdef Col *items = &c.cols[K_NAGS_ITEM]
    cdef Py_ssize_t i, j = 0
    cdef int16_t value
    if game.nnags:
        for i in range(game.nmoves):
            while j < game.nnags and game.nags[2 * j] == i:
                value = <int16_t>game.nags[2 * j + 1]
                if _fixed(items, &value, 2, game.nags[2 * j + 1] >= 0) < 0:
                    return -1
                j += 1
            if _list_end(plies, items, True) < 0:
                return -1
    return _list_end(&c.cols[K_NAGS], plies, game.nnags > 0)


cdef int _draw_offers(Columns *c, _Game game) noexcept nogil:
    """The white_draw_offers and black_draw_offers lists of a row: the plies (1: the first move) after which each
    side's offer comment is written, in order (null over int16); null for a side with none (the twin's _offers)."""
    cdef int side
    cdef Py_ssize_t j, count
    cdef int16_t ply
    cdef Col *items
    for side in range(2):
        items = &c.cols[K_WHITE_DRAW_OFFERS_ITEM + side]
        count = 0
        for j in range(game.noffers):
            if game.offers[2 * j + 1] == side:
                ply = <int16_t>(game.offers[2 * j] + 1)
                if _fixed(items, &ply, 2, game.offers[2 * j] + 1 <= 32767) < 0:
                    return -1
                count += 1
        if _list_end(&c.cols[K_WHITE_DRAW_OFFERS + side], items, count > 0) < 0:
            return -1
    return 0


# KNOWN_ISSUES' months (fastpgn.lichess), as year * 100 + month: first, last of each row (_known_months)
cdef enum:
    MAX_KNOWN_ISSUES = 64
cdef int _KNOWN[2 * MAX_KNOWN_ISSUES]
cdef int _NKNOWN = 0


cdef int _known_months() except -1:
    global _NKNOWN
    from fastpgn.lichess import KNOWN_ISSUES
    if len(KNOWN_ISSUES) > MAX_KNOWN_ISSUES:
        raise ColumnError(f"{_SINK} holds at most {MAX_KNOWN_ISSUES} rows of fastpgn.lichess.KNOWN_ISSUES")
    for i, row in enumerate(KNOWN_ISSUES):
        _KNOWN[2 * i] = int(row[0][:4]) * 100 + int(row[0][5:7])
        _KNOWN[2 * i + 1] = int(row[1][:4]) * 100 + int(row[1][5:7])
    _NKNOWN = len(KNOWN_ISSUES)
    return 0


cdef inline bint _digit(char ch) noexcept nogil:
    return b'0' <= ch <= b'9'


cdef bint _known_issue(const char *p, Py_ssize_t n) noexcept nogil:
    """Whether date ``p[:n]`` (``YYYY.MM...`` or ``YYYY-MM...``) falls in a month of KNOWN_ISSUES (known_issues)."""
    cdef int month, i
    if n < 7 or not (p[4] == b'.' or p[4] == b'-'):
        return False
    if not (_digit(p[0]) and _digit(p[1]) and _digit(p[2]) and _digit(p[3]) and _digit(p[5]) and _digit(p[6])):
        return False
    month = (((p[0] - 48) * 1000 + (p[1] - 48) * 100 + (p[2] - 48) * 10 + (p[3] - 48)) * 100
             + (p[5] - 48) * 10 + (p[6] - 48))
    for i in range(_NKNOWN):
        if _KNOWN[2 * i] <= month <= _KNOWN[2 * i + 1]:
            return True
    return False


cdef int _flags(Columns *c, const char *buf, _Game game, Py_ssize_t *slots, Out *scratch) noexcept nogil:
    """The flags list of a row (fastpgn.lichess.game_flags: from its Termination, Result and date tags and its
    plies, in FLAGS' order); null when none holds."""
    cdef Col *items = &c.cols[K_FLAGS_ITEM]
    cdef const char *vp
    cdef Py_ssize_t vn, t
    cdef int count = 0
    cdef bint unterminated = False
    if slots[S_TERMINATION] >= 0:
        if _cspan(buf, game, slots[S_TERMINATION], scratch, &vp, &vn) < 0:
            return -1
        unterminated = _eq(vp, vn, b"Unterminated", 12)
        if unterminated:
            if _string(items, b"unterminated", 12) < 0:
                return -1
            count += 1
        elif _eq(vp, vn, b"Abandoned", 9):
            if _string(items, b"abandoned", 9) < 0:
                return -1
            count += 1
    if slots[S_RESULT] >= 0 and game.nmoves > 0 and not unterminated:
        if _cspan(buf, game, slots[S_RESULT], scratch, &vp, &vn) < 0:
            return -1
        if _eq(vp, vn, b"*", 1):
            if _string(items, b"truncated", 9) < 0:
                return -1
            count += 1
    t = slots[S_UTCDATE]                 # UTCDate, else (absent or empty) Date
    vn = 0
    if t >= 0 and _cspan(buf, game, t, scratch, &vp, &vn) < 0:
        return -1
    if vn == 0 and slots[S_DATE] >= 0 and _cspan(buf, game, slots[S_DATE], scratch, &vp, &vn) < 0:
        return -1
    if vn and _known_issue(vp, vn):
        if _string(items, b"known_issue", 11) < 0:
            return -1
        count += 1
    return _list_end(&c.cols[K_FLAGS], items, count > 0)


cdef int _positions(Columns *c, Positions *pos) noexcept nogil:
    """The zobrist and fens lists of a row: the positions its replay left in ``pos``."""
    cdef Col *keys = &c.cols[K_ZOBRIST_ITEM]
    cdef Col *fens = &c.cols[K_FENS_ITEM]
    cdef const Py_ssize_t *ends = <const Py_ssize_t *>pos.end_buf.data
    cdef Py_ssize_t i, n = pos.nplies, at = 0
    if pos.keys:
        if _reserve(&keys.data, 8 * n) < 0:
            return -1
        memcpy(keys.data.data + keys.data.size, pos.key_buf.data, 8 * n)   # uint64 as int64: the same bits
        keys.data.size += 8 * n
        keys.n += n
        if _list_end(&c.cols[K_ZOBRIST], keys, True) < 0:
            return -1
    if pos.fens:
        if _reserve(&fens.data, ends[n - 1] if n else 0) < 0 or _reserve(&fens.off, 4 * n) < 0:
            return -1
        for i in range(n):
            _w(&fens.data, pos.fen_buf.data + at, ends[i] - at)     # (ASCII, written by the board)
            at = ends[i]
            (<int32_t *>(fens.off.data + fens.off.size))[0] = <int32_t>fens.data.size
            fens.off.size += 4
        fens.n += n
        if _list_end(&c.cols[K_FENS], fens, True) < 0:
            return -1
    return 0


cdef inline bint _named(const char *buf, _Game game, Py_ssize_t t, const char *name, Py_ssize_t n) noexcept nogil:
    return game.tags[4 * t + 1] - game.tags[4 * t] == n and memcmp(buf + game.tags[4 * t], name, n) == 0


cdef inline bint _own_column(const char *buf, _Game game, Py_ssize_t t) noexcept nogil:
    """Whether tag ``t`` has a column of its own (so the tags map leaves it out)."""
    cdef int slot = _slot_of(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t])
    return ((slot >= 0 and slot != S_DATE and slot != S_TIME) or _named(buf, game, t, b"Event", 5)
            or _named(buf, game, t, b"Variant", 7) or _named(buf, game, t, b"FEN", 3))


# Up to this many tags, a game's repeated names are found by comparing every pair (a lichess game has 18);
# above it, through a hash table, so a game of 100,000 tags costs no more per tag than one of 18.
cdef enum:
    FEW_TAGS = 32


cdef int _tag_map(Columns *c, const char *buf, _Game game, Out *scratch) noexcept nogil:
    """The tags without a column of their own, in order; a repeated name: the last value, at the first place."""
    cdef Py_ssize_t t, u, last, nn
    cdef const char *name
    if game.ntags > FEW_TAGS:
        return _tag_map_hashed(c, buf, game, scratch)
    for t in range(game.ntags):
        if _own_column(buf, game, t):
            continue
        name = buf + game.tags[4 * t]
        nn = game.tags[4 * t + 1] - game.tags[4 * t]
        last = t
        for u in range(game.ntags):
            if _named(buf, game, u, name, nn):
                if u < t:
                    last = -1          # written at its first place already
                    break
                last = u
        if last < 0:
            continue
        if _string(&c.cols[K_TAG_KEY], name, nn) < 0 or _tag_string(&c.cols[K_TAG_VALUE], buf, game, last,
                                                                     scratch) < 0:
            return -1
    return _list_end(&c.cols[K_TAGS], &c.cols[K_TAG_KEY], True)


cdef int _tag_map_hashed(Columns *c, const char *buf, _Game game, Out *scratch) noexcept nogil:
    """_tag_map for a game of many tags, in time linear in their number: the same map.

    An open-addressing table of first occurrences, keyed by name, gives each
    first occurrence the index of its name's last tag (``last``); a later
    occurrence is marked -1 there and skipped.
    """
    cdef Py_ssize_t n = game.ntags, size = 1, mask, t, f, nn, i
    cdef Py_ssize_t *table
    cdef Py_ssize_t *last
    cdef const char *name
    cdef uint64_t h
    while size < 2 * n:
        size *= 2
    mask = size - 1
    if c.tag_cap < size + n:
        if not _grow(<void **>&c.tag_scratch, (size + n) * sizeof(Py_ssize_t)):
            return -1
        c.tag_cap = size + n
    table = c.tag_scratch
    last = c.tag_scratch + size
    for i in range(size):
        table[i] = -1
    for t in range(n):
        name = buf + game.tags[4 * t]
        nn = game.tags[4 * t + 1] - game.tags[4 * t]
        h = 14695981039346656037ULL     # FNV-1a
        for i in range(nn):
            h = (h ^ <unsigned char>name[i]) * 1099511628211ULL
        i = <Py_ssize_t>(h & <uint64_t>mask)
        while True:
            f = table[i]
            if f < 0:
                table[i] = t
                last[t] = t
                break
            if _named(buf, game, f, name, nn):
                last[f] = t
                last[t] = -1            # written at its first place
                break
            i = (i + 1) & mask
    for t in range(n):
        if last[t] < 0 or _own_column(buf, game, t):
            continue
        if (_string(&c.cols[K_TAG_KEY], buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]) < 0
                or _tag_string(&c.cols[K_TAG_VALUE], buf, game, last[t], scratch) < 0):
            return -1
    return _list_end(&c.cols[K_TAGS], &c.cols[K_TAG_KEY], True)


cdef int _columns_row(Columns *c, const char *buf, _Game game, long long base_offset, Out *scratch) noexcept nogil:
    """Append game ``game`` as one row of every column; -1 when memory is short."""
    cdef Py_ssize_t slots[NSLOTS]
    cdef Py_ssize_t t, event = -1, variant = -1, fen = -1, vn, s, n
    cdef const char *vp
    cdef int slot
    cdef int16_t plies
    cdef int64_t offset
    for t in range(NSLOTS):
        slots[t] = -1
    for t in range(game.ntags):
        slot = _slot_of(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t])
        if slot >= 0:
            slots[slot] = t
        elif _named(buf, game, t, b"Event", 5):
            event = t
        elif _named(buf, game, t, b"Variant", 7):
            variant = t
        elif _named(buf, game, t, b"FEN", 3):
            fen = t
    # game_id: the Site tag after its last '/'; site: the tag whole
    if slots[S_SITE] >= 0:
        if _cspan(buf, game, slots[S_SITE], scratch, &vp, &vn) < 0:
            return -1
        s = vn
        while s > 0 and vp[s - 1] != b'/':
            s -= 1
        if _string(&c.cols[K_GAME_ID], vp + s, vn - s) < 0 or _string(&c.cols[K_SITE], vp, vn) < 0:
            return -1
    elif _string(&c.cols[K_GAME_ID], NULL, 0) < 0 or _string(&c.cols[K_SITE], NULL, 0) < 0:
        return -1
    if _tag_string(&c.cols[K_EVENT], buf, game, event, scratch) < 0:
        return -1
    if _when(c, buf, game, slots[S_UTCDATE] if slots[S_UTCDATE] >= 0 else slots[S_DATE],
             slots[S_UTCTIME] if slots[S_UTCTIME] >= 0 else slots[S_TIME], scratch) < 0:
        return -1
    if (_tag_string(&c.cols[K_WHITE], buf, game, slots[S_WHITE], scratch) < 0
            or _tag_string(&c.cols[K_BLACK], buf, game, slots[S_BLACK], scratch) < 0
            or _tag_int(&c.cols[K_WHITE_ELO], buf, game, slots[S_WELO], scratch) < 0
            or _tag_int(&c.cols[K_BLACK_ELO], buf, game, slots[S_BELO], scratch) < 0
            or _tag_int(&c.cols[K_WHITE_DIFF], buf, game, slots[S_WDIFF], scratch) < 0
            or _tag_int(&c.cols[K_BLACK_DIFF], buf, game, slots[S_BDIFF], scratch) < 0
            or _tag_string(&c.cols[K_WHITE_TITLE], buf, game, slots[S_WTITLE], scratch) < 0
            or _tag_string(&c.cols[K_BLACK_TITLE], buf, game, slots[S_BTITLE], scratch) < 0):
        return -1
    # result: the rule of the line's field 4
    if slots[S_RESULT] >= 0:
        if _cspan(buf, game, slots[S_RESULT], scratch, &vp, &vn) < 0:
            return -1
    else:
        vp = _result_at(buf, game)
        vn = _result_len(game)
    if not (_eq(vp, vn, b"1-0", 3) or _eq(vp, vn, b"0-1", 3) or _eq(vp, vn, b"1/2-1/2", 7)):
        vp, vn = b"*", 1
    if (_string(&c.cols[K_RESULT], vp, vn) < 0
            or _tag_string(&c.cols[K_TERMINATION], buf, game, slots[S_TERMINATION], scratch) < 0
            or _time_control(c, buf, game, slots[S_TC], scratch) < 0
            or _tag_string(&c.cols[K_ECO], buf, game, slots[S_ECO], scratch) < 0
            or _tag_string(&c.cols[K_OPENING], buf, game, slots[S_OPENING], scratch) < 0
            or _opening_code(c, buf, game, slots[S_ECO], slots[S_OPENING]) < 0
            or _tag_string(&c.cols[K_VARIANT], buf, game, variant, scratch) < 0
            or _tag_string(&c.cols[K_FEN], buf, game, fen, scratch) < 0):
        return -1
    c.row_white_first = True
    if fen >= 0:
        if _cspan(buf, game, fen, scratch, &vp, &vn) < 0:
            return -1
        c.row_white_first = _white_first(vp, vn)
    n = game.nmoves
    plies = <int16_t>n
    if _fixed(&c.cols[K_PLIES], &plies, 2, n <= 32767) < 0:
        return -1
    if _flag(&c.cols[K_MATE], n > 0 and memchr(buf + game.moves[2 * n - 2], b'#',
                                               game.moves[2 * n - 1] - game.moves[2 * n - 2]) != NULL) < 0:
        return -1
    if _plies(c, buf, game) < 0 or _draw_offers(c, game) < 0 or _flags(c, buf, game, slots, scratch) < 0:
        return -1
    offset = base_offset + game.start
    if _fixed(&c.cols[K_BYTE_OFFSET], &offset, 8, True) < 0 or _tag_map(c, buf, game, scratch) < 0:
        return -1
    c.rows += 1
    return 0


cdef Py_ssize_t _columns_pass(const char *buf, Py_ssize_t pos, Py_ssize_t end, _Game game, Columns *c,
                              long long base_offset, Bads *bads,
                              Out *scratch, long long *number, bint stop_on_error, int replay, void *board,
                              Out *uci, bint *held, Where *where, long long *filtered,
                              bint headers) noexcept nogil:
    """_lines_pass for columns: scan games from ``pos`` and append their rows, holding no Python object
    (``headers``: each movetext skipped, _skip_movetext)."""
    cdef int replayed
    while _scan_game(buf, pos, end, game, where, headers):
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
            replayed = _replay_game(buf, end, game, replay, True, board, uci, c.pos)
            if replayed < 0:
                return -1
            if replayed > 0:
                held[0] = True
                return pos
        if _columns_row(c, buf, game, base_offset, scratch) < 0:
            game.out_of_memory = True
            return -1
    return pos


cdef int _fill_codes(Columns *c, const char *buf, object openings) except -1:
    """The opening_code column: the codes noted per row, the gaps filled from ``openings`` with the GIL."""
    cdef Py_ssize_t i, g = 0
    cdef Col *codes = &c.cols[K_OPENING_CODE]
    cdef bytes code
    cdef bint plain_dict = openings is not None and _reads_as_dict(openings)
    cdef PyObject *hit
    for i in range(c.ncodes):
        if c.codes[i] == _GAP:
            key = _opening_key(buf, &c.gaps.items[g])
            g += 1
            hit = PyDict_GetItem(openings, key) if plain_dict else NULL
            if hit != NULL:
                code = <bytes>hit
            else:
                try:
                    code = openings[key]
                except KeyError:
                    code = b"?"
            if code == b"?":
                _string(codes, NULL, 0)
            else:
                _string(codes, PyBytes_AS_STRING(code), PyBytes_GET_SIZE(code))
        elif c.codes[i] == NULL or (c.code_lens[i] == 1 and c.codes[i][0] == b'?'):
            _string(codes, NULL, 0)
        else:
            _string(codes, c.codes[i], c.code_lens[i])
    if codes.n != c.ncodes:
        raise MemoryError()
    return 0


cdef dict _columns_dict(Columns *c, const char *buf, object openings):
    """Every column's buffers by name, in the schema's order, the opening codes' gaps filled from ``openings``
    with the GIL."""
    _fill_codes(c, buf, openings)
    cdef dict out = {}
    for name, tree in _filled(c):
        out[name] = _spec(c, tree)
    return out


cdef tuple _spec(Columns *c, tuple tree):
    """A buffer tree as fastpgn.arrow reads it (_col_spec), its children first."""
    cdef str kind = tree[1]
    cdef list children = [_spec(c, child) for child in tree[2]]
    return _col_spec(&c.cols[<int>tree[0]], 2 if kind.startswith("list<") else (1 if kind == "string" else 0),
                     tuple(children))


cdef object _uci_hook():
    """board.moves_hook(uci=True): what finishes, with the GIL, a game the compiled replay hands back."""
    from fastpgn.board import moves_hook
    return moves_hook(uci=True)


def columns_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                       long long first_game=0, bint at_stream_start=True, bint stop_on_error=False,
                       object where=None, object openings=None, bint uci=False, bint positions=False,
                       bint fens=False, bint headers=False):
    """The whole games in ``data[start:end]`` as the analysis schema's columns (see the pure twin).

    Returns a ScanResult ``(columns, games_read, rejects, filtered)``; ``columns`` maps each
    column's name to ``(length, null_count, buffers, children)``, the Arrow
    layout fastpgn.arrow wraps. ``openings`` is a map or opening_table's C
    copy (None: opening_code is null); ``uci`` adds the ``uci`` column, the moves
    replayed as the converter's ``--uci`` replays them (a game that does not
    replay is rejected); ``positions`` the ``zobrist`` column and ``fens`` the
    ``fens`` column, from the same replay.
    """
    cdef Py_buffer view
    _ready()
    if headers and (uci or positions or fens):
        raise ValueError(_HEADERS_REPLAY)
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        return ScanResult(*_columns_from_block(<const char *>view.buf, start, end, base_offset, first_game,
                                               at_stream_start, stop_on_error, where_plan(where), openings,
                                               _uci_hook() if uci or positions or fens else None, None, uci,
                                               positions, fens, headers))
    finally:
        PyBuffer_Release(&view)


cdef tuple _columns_from_block(const char *buf, Py_ssize_t start, Py_ssize_t end, long long base_offset,
                               long long first_game, bint at_stream_start, bint stop_on_error, _WherePlan plan,
                               object openings, object uci_hook, bytes csv_columns=None, bint uci_column=True,
                               bint positions=False, bint fens=False, bint headers=False):
    """The column sink's work (``uci_hook``: the games replayed; ``uci_column``: the uci column then kept;
    ``positions``, ``fens``: the zobrist and fens columns, from that replay; ``headers``: each movetext
    skipped and the columns made from the moves left out)."""
    cdef _Game game = _Game()
    cdef Where *where = NULL if plan is None else &plan.c
    cdef long long number = first_game, filtered = 0
    cdef Py_ssize_t pos
    cdef Columns *c = <Columns *>malloc(sizeof(Columns))
    cdef Out scratch, uci
    cdef Bads bads
    cdef list hook_reasons = [], gap_keys = []
    cdef int replay = REPLAY_NONE if uci_hook is None else REPLAY_UCI
    cdef object board = spans_board() if replay == REPLAY_UCI else None
    cdef object replaced
    cdef bint held
    cdef _OpeningTable table = None
    cdef Positions plies
    if c == NULL:
        raise MemoryError()
    memset(&plies, 0, sizeof(Positions))
    plies.keys, plies.fens = positions, fens
    if isinstance(openings, _OpeningTable):
        table = openings
        openings = table.source
    bads.items, bads.n, bads.cap = NULL, 0, 0
    scratch.data, scratch.size, scratch.cap = NULL, 0, 0
    uci.data, uci.size, uci.cap = NULL, 0, 0
    try:
        if _columns_start(c, uci_hook is not None and uci_column) < 0 or _columns_room(c, end - start) < 0:
            raise MemoryError()
        if positions or fens:
            c.pos = &plies
        c.have_map = openings is not None
        c.csv = csv_columns is not None
        c.gaps.table = table.slots if table is not None else NULL
        c.gaps.table_mask = table.mask if table is not None else 0
        pos = _first(buf, start, end, at_stream_start)
        while True:
            held = False
            with nogil:
                pos = _columns_pass(buf, pos, end, game, c, base_offset, &bads, &scratch, &number, stop_on_error,
                                    replay, <void *>board, &uci, &held, where, &filtered, headers)
            if not held:
                break
            pos = game.end
            replaced = _hook_game(buf, end, game, uci_hook, replay, &uci, hook_reasons)
            if game.bad:
                if _add_bad(&bads, game, number) < 0:
                    raise MemoryError()
                if stop_on_error:
                    break
                continue
            if c.pos != NULL:
                found = _game_positions(buf, game, fens)
                _positions_from(c.pos, found[0], found[1])
            if _columns_row(c, buf, game, base_offset, &scratch) < 0:
                raise MemoryError()
        if game.out_of_memory:
            raise MemoryError()
        _columns_note_room(c, end - start)
        if csv_columns is not None:
            made = _csv_text(c, buf, openings, csv_columns)
        else:
            made = _columns_dict(c, buf, openings)
            if headers:
                for name in _schema.FROM_MOVES:
                    made.pop(name, None)
        return made, number - first_game, _rejects(buf, &bads, base_offset, hook_reasons), filtered
    finally:
        free(bads.items)
        free(scratch.data)
        free(uci.data)
        _positions_free(&plies)
        _columns_free(c)
        free(c)
