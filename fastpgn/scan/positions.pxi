# The positions sink: one row per position of a block's games (the position before each move; with
# ``final`` the last one too), from the column sink's replay (its UCI moves and each ply's FEN, its rejects).
#
# Included by scan/_scan_cy.pyx after columns.pxi (whose _columns_from_block replays the games) and
# buffers.pxi (the Cols the rows are appended to, each write taking its own room). The pure twin,
# scan/positions.py, is the specification: its docstring lists the columns. Each row's fields are read
# from a FEN the board wrote (the start of a game with a FEN tag is made once a game, with the GIL, by
# the twin's start_fen: the one rule); the rows are written without the GIL and without a Python object.

from libc.stdint cimport int8_t, int16_t, uint8_t
from fastpgn.scan.positions import POSITION_COLUMNS as _POSITION_COLUMNS, STANDARD_START as _STANDARD_START_STR, start_fen as _start_fen

cdef enum:
    P_GAME = 0
    P_PLY = 1
    P_BOARD = 2
    P_WHITE = 3
    P_CASTLING = 4
    P_EP = 5
    P_HALF = 6
    P_FULL = 7
    P_FROM = 8
    P_TO = 9
    P_PROMOTION = 10
    P_MOVE = 11
    NPCOLS = 12

cdef bytes _STANDARD_START = _STANDARD_START_STR.encode()
cdef const char *_PIECES = b"PNBRQKpnbrqk"


cdef inline const char *_data_of(object buffer):
    """The C memory of a column buffer the column sink made (None: NULL)."""
    return NULL if buffer is None else (<_Buffer>buffer).data


cdef inline bint _bit_set(const char *bits, Py_ssize_t i) noexcept nogil:
    return bits == NULL or (bits[i >> 3] >> (i & 7)) & 1


cdef inline int _king_file(const unsigned char *home, unsigned char king) noexcept nogil:
    """The file of ``king`` on its home rank (``home``: 8 squares), -1 when it is not there."""
    cdef int f
    for f in range(8):
        if home[f] == king:
            return f
    return -1


cdef inline uint16_t _count_field(const char *f, Py_ssize_t *i, Py_ssize_t n, uint16_t missing) noexcept nogil:
    """The digits at ``f[i[0]:]`` as a number held at 65535 (``missing`` when there are none), ``i`` past them
    and the space after."""
    cdef long v = 0
    if i[0] >= n:
        return missing
    while i[0] < n and 48 <= f[i[0]] <= 57:        # the digits
        v = v * 10 + (f[i[0]] - 48)
        if v > 0xFFFF:
            v = 0xFFFF
        i[0] += 1
    i[0] += 1
    return <uint16_t>v


cdef int _position_row(Col *cols, int32_t game, int16_t ply, const char *f, Py_ssize_t n) noexcept nogil:
    """Append the position of FEN ``f[:n]`` (one the board wrote) as a row of game ``game``; -1 when memory is
    short, -2 for a FEN the board would not write."""
    cdef unsigned char board[64]
    cdef const char *hit
    cdef Py_ssize_t i = 0
    cdef int rank = 7, file = 0, king
    cdef char c
    cdef bint white
    cdef uint8_t castling = 0
    cdef int8_t ep = -1
    cdef uint16_t half, full
    memset(board, 0, 64)
    while i < n and f[i] != b' ':
        c = f[i]
        i += 1
        if c == b'/':
            rank -= 1
            file = 0
        elif 49 <= c <= 56:          # 1-8 empty squares
            file += c - 48
        else:
            hit = <const char *>memchr(_PIECES, c, 12)
            if hit == NULL or rank < 0 or file > 7:
                return -2
            board[8 * rank + file] = <unsigned char>(hit - _PIECES + 1)
            file += 1
    i += 1
    white = i < n and f[i] == b'w'
    i += 2
    while i < n and f[i] != b' ':
        c = f[i]
        i += 1
        if c == b'K':
            castling |= 1
        elif c == b'Q':
            castling |= 2
        elif c == b'k':
            castling |= 4
        elif c == b'q':
            castling |= 8
        elif 65 <= c <= 72:           # a file A-H (Chess960): the king's side when past the king
            king = _king_file(board, 6)
            castling |= 1 if c - 65 > king else 2
        elif 97 <= c <= 104:          # a-h
            king = _king_file(board + 56, 12)
            castling |= 4 if c - 97 > king else 8
    i += 1
    if i + 1 < n and f[i] != b'-':
        ep = <int8_t>((f[i] - 97) + 8 * (f[i + 1] - 49))
        i += 3
    else:
        i += 2
    half = _count_field(f, &i, n, 0)
    full = _count_field(f, &i, n, 1)
    if (_fixed(&cols[P_GAME], &game, 4, True) < 0 or _fixed(&cols[P_PLY], &ply, 2, True) < 0
            or _fixed(&cols[P_BOARD], board, 64, True) < 0 or _flag(&cols[P_WHITE], white) < 0
            or _fixed(&cols[P_CASTLING], &castling, 1, True) < 0 or _fixed(&cols[P_EP], &ep, 1, True) < 0
            or _fixed(&cols[P_HALF], &half, 2, True) < 0 or _fixed(&cols[P_FULL], &full, 2, True) < 0):
        return -1
    return 0


cdef int _move_row(Col *cols, const char *u, Py_ssize_t n) noexcept nogil:
    """Append the move played from a row's position, UCI ``u[:n]`` (NULL: none, the final position)."""
    cdef uint8_t frm = 0, to = 0, promotion = 0
    if u == NULL:
        if (_null(&cols[P_FROM], 1) < 0 or _null(&cols[P_TO], 1) < 0 or _null(&cols[P_PROMOTION], 1) < 0
                or _string(&cols[P_MOVE], NULL, 0) < 0):
            return -1
        return 0
    if n >= 4 and not (n == 4 and memcmp(u, b"0000", 4) == 0):
        frm = <uint8_t>((u[0] - 97) + 8 * (u[1] - 49))      # a1 = 0
        to = <uint8_t>((u[2] - 97) + 8 * (u[3] - 49))
        if n >= 5:
            promotion = 2 if u[4] == b'n' else 3 if u[4] == b'b' else 4 if u[4] == b'r' else 5 if u[4] == b'q' else 0
    if (_fixed(&cols[P_FROM], &frm, 1, True) < 0 or _fixed(&cols[P_TO], &to, 1, True) < 0
            or _fixed(&cols[P_PROMOTION], &promotion, 1, True) < 0 or _string(&cols[P_MOVE], u, n) < 0):
        return -1
    return 0


cdef int _positions_rows(Col *cols, Py_ssize_t ngames, const char **start_p, const Py_ssize_t *start_n,
                         const int32_t *fen_lists, const int32_t *fen_off, const char *fen_text,
                         const int32_t *uci_lists, const int32_t *uci_off, const char *uci_text,
                         bint final) noexcept nogil:
    """Every game's rows (see _position_row); -3 when a game's FENs and moves are not as many."""
    cdef Py_ssize_t g, j, k, nplies
    cdef int rc
    for g in range(ngames):
        nplies = fen_lists[g + 1] - fen_lists[g]
        if uci_lists[g + 1] - uci_lists[g] != nplies:
            return -3
        for j in range(nplies + (1 if final else 0)):
            if j == 0:
                rc = _position_row(cols, <int32_t>g, 0, start_p[g], start_n[g])
            else:
                k = fen_lists[g] + j - 1
                rc = _position_row(cols, <int32_t>g, <int16_t>j, fen_text + fen_off[k], fen_off[k + 1] - fen_off[k])
            if rc < 0:
                return rc
            if j < nplies:
                k = uci_lists[g] + j
                rc = _move_row(cols, uci_text + uci_off[k], uci_off[k + 1] - uci_off[k])
            else:
                rc = _move_row(cols, NULL, 0)
            if rc < 0:
                return rc
    return 0


cdef str _tag_text(tuple spec, Py_ssize_t i):
    """Row ``i`` of a string column the column sink made, or None."""
    cdef const int32_t *off = <const int32_t *>_data_of(spec[2][1])
    if not _bit_set(_data_of(spec[2][0]), i):
        return None
    return PyUnicode_DecodeUTF8(_data_of(spec[2][2]) + off[i], off[i + 1] - off[i], NULL)


cdef dict _positions_table(dict games, bint final):
    """The rows of the games the column sink left in ``games`` (its uci and fens columns), as
    ``{name: (length, null count, buffers, children)}``; ``board`` a fixed-size list of 64 uint8."""
    cdef tuple fens = games["fens"], ucis = games["uci"], fen_tags = games["fen"], variants = games["variant"]
    cdef Py_ssize_t g, ngames = fens[0]
    cdef tuple fen_items = fens[3][0], uci_items = ucis[3][0]
    cdef const char *fen_valid = _data_of(fen_tags[2][0])
    cdef list starts = []
    cdef bytes text
    cdef const char **start_p = <const char **>malloc(sizeof(char *) * (ngames + 1))
    cdef Py_ssize_t *start_n = <Py_ssize_t *>malloc(sizeof(Py_ssize_t) * (ngames + 1))
    cdef Col cols[NPCOLS]
    cdef int rc, k
    cdef dict out = {}
    cdef tuple board
    cdef const int32_t *fen_lists
    cdef const int32_t *fen_off
    cdef const int32_t *uci_lists
    cdef const int32_t *uci_off
    cdef const char *fen_text
    cdef const char *uci_text
    memset(cols, 0, sizeof(cols))
    try:
        if start_p == NULL or start_n == NULL:
            raise MemoryError()
        for g in range(ngames):
            start_p[g], start_n[g] = PyBytes_AS_STRING(_STANDARD_START), PyBytes_GET_SIZE(_STANDARD_START)
            if fen_tags[1] != ngames and _bit_set(fen_valid, g):     # a FEN tag: the start made once a game
                text = _start_fen(_tag_text(fen_tags, g), _tag_text(variants, g)).encode()
                starts.append(text)
                start_p[g], start_n[g] = PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text)
        if _offset(&cols[P_MOVE], 0) < 0:
            raise MemoryError()
        fen_lists, fen_off = <const int32_t *>_data_of(fens[2][1]), <const int32_t *>_data_of(fen_items[2][1])
        uci_lists, uci_off = <const int32_t *>_data_of(ucis[2][1]), <const int32_t *>_data_of(uci_items[2][1])
        fen_text, uci_text = _data_of(fen_items[2][2]), _data_of(uci_items[2][2])
        with nogil:
            rc = _positions_rows(cols, ngames, start_p, start_n, fen_lists, fen_off, fen_text, uci_lists, uci_off,
                                 uci_text, final)
        if rc == -1:
            raise MemoryError()
        if rc < 0:
            raise ColumnError("the positions sink (fastpgn/scan/positions.pxi) read a replay it cannot: "
                              + ("a FEN the board does not write" if rc == -2 else "FENs and moves not as many"))
        for k in range(NPCOLS):
            name = _POSITION_COLUMNS[k]
            if k == P_BOARD:
                board = (64 * cols[k].n, 0, (None, _out_bytes(&cols[k].data)), ())
                out[name] = (cols[k].n, 0, (None,), (board,))
            else:
                out[name] = _col_spec(&cols[k], 1 if k == P_MOVE else 0, ())
        return out
    finally:
        free(start_p)
        free(start_n)
        for k in range(NPCOLS):
            free(cols[k].off.data)
            free(cols[k].data.data)
            free(cols[k].valid.data)


def positions_from_block(object data, Py_ssize_t start, Py_ssize_t end, *, long long base_offset=0,
                         long long first_game=0, bint at_stream_start=True, bint stop_on_error=False,
                         object where=None, object openings=None, bint final=False):
    """One row per position of the whole games in ``data[start:end]`` (see the pure twin, scan/positions.py).

    Returns a ScanResult ``((games, positions), games_read, rejects, filtered)``:
    ``games`` is columns_from_block's column dict of the games kept (without
    ``uci`` and ``fens``), ``positions`` the rows' columns, each as
    ``(length, null_count, buffers, children)``, the Arrow layout fastpgn.arrow wraps.
    """
    cdef Py_buffer view
    cdef dict games
    _ready()
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        if end > view.len:
            end = view.len
        games, read, rejects, filtered = _columns_from_block(<const char *>view.buf, start, end, base_offset,
                                                             first_game, at_stream_start, stop_on_error,
                                                             where_plan(where), openings, _uci_hook(), None, True,
                                                             False, True)
    finally:
        PyBuffer_Release(&view)
    rows = _positions_table(games, final)
    del games["fens"], games["uci"]
    return ScanResult((games, rows), read, rejects, filtered)
