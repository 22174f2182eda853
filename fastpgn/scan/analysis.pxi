# What lichess computes from a game's evals and clocks: the analysis columns of the column sink.
#
# Included by scan/_scan_cy.pyx after columns.pxi, whose rows (_plies) fill them from the evals and clocks
# _plies reads (Columns.kinds, .values, .secs). Mirrors fastpgn/scan/analysis.py, which applies
# fastpgn.accuracy (the reference) to the pure column sink's lists; the tests hold the two to equal
# columns, to the bit.

from libc.stdint cimport int16_t, int32_t
from libc.string cimport memset, strlen
from libc.math cimport exp, fabs, floor, sqrt

# ---------------------------------------------------------------- what lichess computes from evals and clocks
#
# fastpgn/accuracy.py is the reference and docs/schema.md ("Accuracy, ACPL, judgements") the rules, with
# lila's sources. Each value is the same double operations in the same order as the pure twin's (sums left
# to right, exp and sqrt from the same libm), cast to float32 once, so the columns are equal to the bit.

cdef inline double _chances(double cp) noexcept nogil:
    """scalachess WinPercent.winningChances: White's winning chances in [-1, 1]."""
    cdef double x = 2.0 / (1.0 + exp(-0.00368208 * cp)) - 1.0
    if x > 1.0:
        return 1.0
    return -1.0 if x < -1.0 else x


# _chances of each centipawn value in [-1000, 1000], made by _chances itself (so equal to the bit): the
# clamped evals of win_percent and most raw ones of the judgements read it instead of calling exp
cdef double _CHANCES[2001]


cdef void _fill_chances() noexcept nogil:
    cdef int cp
    for cp in range(-1000, 1001):
        _CHANCES[cp + 1000] = _chances(<double>cp)


_fill_chances()


cdef inline double _chances_cp(int32_t cp) noexcept nogil:
    """_chances of a whole number of centipawns."""
    if -1000 <= cp <= 1000:
        return _CHANCES[cp + 1000]
    return _chances(<double>cp)


cdef inline int _ceiled(int kind, int32_t value) noexcept nogil:
    """An eval as centipawns clamped to +-1000, a mate as +-1000 (mate 0 as White's: lila #21104)."""
    if kind == 2:
        return -1000 if value < 0 else 1000
    return -1000 if value < -1000 else (1000 if value > 1000 else value)


cdef inline double _move_accuracy(double before, double after) noexcept nogil:
    """lila AccuracyPercent.fromWinPercents, +1 for imperfect analysis, clamped to [0, 100]."""
    cdef double raw
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * exp(-0.04354415386753951 * (before - after)) + -3.166924740191411 + 1.0
    return 0.0 if raw < 0.0 else (100.0 if raw > 100.0 else raw)


cdef inline double _pstdev(const double *w, Py_ssize_t n) noexcept nogil:
    cdef double total = 0.0, mean, d
    cdef Py_ssize_t i
    for i in range(n):
        total += w[i]
    mean = total / n
    total = 0.0
    for i in range(n):
        d = w[i] - mean
        total += d * d
    return sqrt(total / n)


cdef bint _game_accuracy(const double *wins, Py_ssize_t m, bint white_first, double *out) noexcept nogil:
    """lila AccuracyPercent.gameAccuracy over ``wins[0..m]`` (the start's win percent first): each side's
    accuracy into ``out[0]``, ``out[1]``; False unless both sides moved."""
    cdef Py_ssize_t L = m + 1, size = m // 10, first, windows, ply, lo, hi
    cdef Py_ssize_t n[2]
    cdef double weighted[2]
    cdef double weights[2]
    cdef double harmonic[2]
    cdef double weight, accuracy
    cdef int side
    size = 2 if size < 2 else (8 if size > 8 else size)
    first = (size if size < L else L) - 2            # copies of the first window
    windows = first + (L - size + 1 if L - size + 1 > 1 else 1)
    n[0] = n[1] = 0
    weighted[0] = weighted[1] = weights[0] = weights[1] = harmonic[0] = harmonic[1] = 0.0
    for ply in range(m):
        if ply >= windows:
            break
        lo = 0 if ply < first else ply - first
        hi = lo + size if lo + size < L else L
        weight = _pstdev(wins + lo, hi - lo)
        weight = 0.5 if weight < 0.5 else (12.0 if weight > 12.0 else weight)
        side = 0 if (ply % 2 == 0) == white_first else 1
        accuracy = (_move_accuracy(wins[ply], wins[ply + 1]) if side == 0
                    else _move_accuracy(wins[ply + 1], wins[ply]))
        weighted[side] += accuracy * weight
        weights[side] += weight
        harmonic[side] += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
        n[side] += 1
    if n[0] == 0 or n[1] == 0:
        return False
    for side in range(2):
        out[side] = (weighted[side] / weights[side] + n[side] / harmonic[side]) / 2.0
    return True


cdef inline long long _java_round(double x) noexcept nogil:
    """Java's Math.round: half up."""
    cdef double low = floor(x)
    return <long long>low + (1 if x - low >= 0.5 else 0)


cdef int _judgement(int pkind, int32_t prev, int kind, int32_t value, bint white) noexcept nogil:
    """lila Advice: 0 none, 1 Inaccuracy, 2 Mistake, 3 Blunder, for the move from eval ``prev`` to ``value``."""
    cdef int sign = 1 if white else -1
    cdef double drop
    cdef long long before, after
    if pkind == 1 and kind == 1:     # the drop in the mover's winning chances of the raw centipawns
        drop = (_chances_cp(prev) - _chances_cp(value)) * sign
        return 3 if drop >= 0.3 else (2 if drop >= 0.2 else (1 if drop >= 0.1 else 0))
    before = <long long>prev * sign if pkind == 1 else 0    # centipawns, from the mover's side
    after = <long long>value * sign if kind == 1 else 0
    if pkind != 2 and kind == 2 and <long long>value * sign < 0:                          # mate created
        return 1 if before < -999 else (2 if before < -700 else 3)
    if pkind == 2 and <long long>prev * sign > 0 and (kind != 2 or <long long>value * sign < 0):  # mate lost
        return 1 if after > 999 else (2 if after > 700 else 3)
    return 0


cdef const char *_JUDGEMENT_NAMES[4]
_JUDGEMENT_NAMES[1] = b"Inaccuracy"
_JUDGEMENT_NAMES[2] = b"Mistake"
_JUDGEMENT_NAMES[3] = b"Blunder"


cdef int _no_analysis(Columns *c) noexcept nogil:
    """The analysis columns of a game without evals: all null."""
    cdef int k
    if (_list_end(&c.cols[K_WIN_PERCENT], &c.cols[K_WIN_PERCENT_ITEM], False) < 0
            or _list_end(&c.cols[K_JUDGEMENT], &c.cols[K_JUDGEMENT_ITEM], False) < 0):
        return -1
    for k in range(K_WHITE_ACCURACY, K_BLACK_ACCURACY + 1):
        if _null(&c.cols[k], 8 if c.csv else 4) < 0:
            return -1
    for k in range(K_WHITE_ACPL, K_WHITE_INACCURACIES + 6):
        if _null(&c.cols[k], 2) < 0:
            return -1
    return 0


cdef int _analysis(Columns *c, const char *buf, _Game game) noexcept nogil:
    """win_percent, judgement and the per-game columns from ``c.kinds`` / ``c.values`` (set by _plies)."""
    cdef Py_ssize_t n = game.nmoves if game.nevals else 0, i, m
    cdef int kind, pkind = 1, j, side, loss
    cdef int32_t prev = 15                           # the start counts as 15 cp
    cdef double accuracy[2]
    cdef long long losses[2]
    cdef long long pairs[2]
    cdef long long counts[6]
    cdef int16_t v16
    cdef bint white, analysed, accurate
    cdef Col *wins = &c.cols[K_WIN_PERCENT_ITEM]
    cdef Col *names = &c.cols[K_JUDGEMENT_ITEM]
    if game.nevals == 0:                             # (most games: no evals, every column null)
        return _no_analysis(c)
    memset(counts, 0, sizeof(counts))
    losses[0] = losses[1] = pairs[0] = pairs[1] = 0
    if n > 0:
        c.wins[0] = 50.0 + 50.0 * _chances_cp(15)
    m = n
    if n > 0 and c.kinds[n - 1] == 0 and buf[game.moves[2 * n - 1] - 1] == b'#':
        m = n - 1                                    # a mating last move has no eval in lichess's analysis
    analysed = m > 0
    for i in range(n):
        kind = c.kinds[i]
        white = (i % 2 == 0) == c.row_white_first
        if kind:
            c.wins[i + 1] = 50.0 + 50.0 * _chances_cp(_ceiled(kind, c.values[i]))
        elif i < m:
            analysed = False
        if _real(wins, c.wins[i + 1] if kind else 0.0, kind != 0, c.csv) < 0:
            return -1
        j = _judgement(pkind, prev, kind, c.values[i], white) if kind and pkind else 0
        if _string(names, _JUDGEMENT_NAMES[j] if j else NULL, strlen(_JUDGEMENT_NAMES[j]) if j else 0) < 0:
            return -1
        side = 0 if white else 1
        if j:
            counts[3 * side + j - 1] += 1
        if kind and pkind:
            loss = (_ceiled(pkind, prev) - _ceiled(kind, c.values[i])) * (1 if white else -1)
            losses[side] += loss if loss > 0 else 0
            pairs[side] += 1
        pkind, prev = kind, c.values[i]
    if (_list_end(&c.cols[K_WIN_PERCENT], wins, game.nevals > 0) < 0
            or _list_end(&c.cols[K_JUDGEMENT], names, game.nevals > 0) < 0):
        return -1
    accurate = analysed and _game_accuracy(c.wins, m, c.row_white_first, accuracy)
    for side in range(2):
        if _real(&c.cols[K_WHITE_ACCURACY + side], accuracy[side] if accurate else 0.0, accurate, c.csv) < 0:
            return -1
    for side in range(2):
        v16 = <int16_t>_java_round(<double>losses[side] / pairs[side]) if analysed and pairs[side] else 0
        if _fixed(&c.cols[K_WHITE_ACPL + side], &v16, 2, analysed and pairs[side] > 0) < 0:
            return -1
    for j in range(6):
        v16 = <int16_t>counts[j]
        if _fixed(&c.cols[K_WHITE_INACCURACIES + j], &v16, 2, analysed and counts[j] <= 32767) < 0:
            return -1
    return 0


cdef inline bint _whole_clocks(_Game game, Py_ssize_t n) noexcept nogil:
    """Whether every ply of the game has a clock, in whole seconds (lichess's since 2017)."""
    cdef Py_ssize_t i
    for i in range(n):
        if game.clock_secs[i] < 0 or game.clock_frac[2 * i] != game.clock_frac[2 * i + 1]:
            return False
    return True


cdef int _move_seconds_whole(Columns *c, _Game game, Py_ssize_t n, long long start) noexcept nogil:
    """_move_seconds where every ply has a whole-second clock (``_whole_clocks``), the time control known:
    the same values, written in one pass (each side's first move from the start, the next from its last
    clock, two plies before)."""
    cdef Py_ssize_t i
    cdef long long base = c.row_base, increment = c.row_increment, iv
    cdef long long inc[2]
    cdef double spent
    cdef int width = 8 if c.csv else 4
    cdef Col *items = &c.cols[K_MOVE_SECONDS_ITEM]
    cdef char *at
    if items.data.size + n * width > items.data.cap and _reserve(&items.data, n * width) < 0:
        return -1
    at = items.data.data + items.data.size
    for i in range(n):
        iv = game.clock_secs[i]
        if i < 2:        # the side's first move: the clock is not running yet, no increment (berserk: none after)
            if base > 0 and base >= 40 * increment and iv != start and fabs(<double>iv - base / 2.0) < 1.0:
                inc[i] = 0
                spent = 0.0
            else:
                inc[i] = increment
                spent = <double>(start - iv)
        else:
            spent = <double>(game.clock_secs[i - 2] + inc[i & 1] - iv)
        if c.csv:
            (<double *>at)[i] = spent
        else:
            (<float *>at)[i] = <float>spent
    items.data.size += n * width
    if items.nulls == 0:
        items.n += n
    else:
        for i in range(n):
            if _item_slow(items, True) < 0:
                return -1
    return _list_end(&c.cols[K_MOVE_SECONDS], items, True)


cdef int _move_seconds(Columns *c, _Game game) noexcept nogil:
    """move_seconds from the clocks (``game.clock_secs``, ``c.secs``) and the row's time control, as
    fastpgn.accuracy.move_seconds computes them: an int clock stays whole until the value is made."""
    cdef Py_ssize_t n = game.nmoves if game.nclocks else 0, i
    cdef long long base = c.row_base, increment = c.row_increment, start, iv, whole
    cdef bint known = base >= 0 and 0 <= increment <= 32767, has, exact, berserk, valid
    cdef bint seen[2]
    cdef bint last_has[2]
    cdef bint last_exact[2]
    cdef bint no_increment[2]
    cdef long long last_iv[2]
    cdef double last_dv[2]
    cdef double dv, spent = 0.0
    cdef int side
    cdef long long inc
    cdef Col *items = &c.cols[K_MOVE_SECONDS_ITEM]
    start = base if base > 0 else (increment if increment > 3 else 3)
    if known and n > 0 and _whole_clocks(game, n):
        return _move_seconds_whole(c, game, n, start)
    seen[0] = seen[1] = False
    for i in range(n if known else 0):
        iv = game.clock_secs[i]
        has = iv >= 0
        exact = game.clock_frac[2 * i] == game.clock_frac[2 * i + 1]     # no tenths: the twin holds an int
        dv = <double>iv if exact else c.secs[i]
        side = 0 if (i % 2 == 0) == c.row_white_first else 1
        valid = False
        if not seen[side]:           # the side's first move: the clock is not running yet, no increment
            seen[side] = True
            berserk = (has and base > 0 and base >= 40 * increment and (iv != start if exact else dv != <double>start)
                       and fabs(dv - base / 2.0) < 1.0)
            no_increment[side] = berserk
            if has:
                valid = True
                spent = 0.0 if berserk else (<double>(start - iv) if exact else <double>start - dv)
        elif has and last_has[side]:
            valid = True
            inc = 0 if no_increment[side] else increment
            if last_exact[side]:
                whole = last_iv[side] + inc
                spent = <double>(whole - iv) if exact else <double>whole - dv
            else:
                spent = (last_dv[side] + <double>inc) - dv
        last_has[side], last_exact[side], last_iv[side], last_dv[side] = has, exact, iv, dv
        if _real(items, spent, valid, c.csv) < 0:
            return -1
    return _list_end(&c.cols[K_MOVE_SECONDS], items, known and game.nclocks > 0)


cdef inline bint _fen_space(char b) noexcept nogil:
    return b == b' ' or b == b'\t' or b == b'\n' or b == b'\r' or b == b'\x0b' or b == b'\x0c'


cdef bint _white_first(const char *p, Py_ssize_t n) noexcept nogil:
    """fastpgn.accuracy.starts_white: a FEN's second field (split at ASCII whitespace) is not ``b``."""
    cdef Py_ssize_t i = 0, k
    while i < n and _fen_space(p[i]):
        i += 1
    while i < n and not _fen_space(p[i]):
        i += 1
    while i < n and _fen_space(p[i]):
        i += 1
    k = i
    while i < n and not _fen_space(p[i]):
        i += 1
    return not (i - k == 1 and p[k] == b'b')
