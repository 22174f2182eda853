"""Cython board kernel (twin of fastpgn.board._board_py): same functions, same order, same errors.

What the kernel owns, how it represents a position, the FEN, SAN and UCI it
accepts and the errors it raises are the pure twin's, and that module's
docstring says them once. This one adds what is compiled only: beside the
0x88 mailbox each board keeps a bitboard per piece (``bb``), which the
attack tests and the replay read, and the undo records are a C array.

The kernel's part of the public ``Board`` is ``BoardCore``; fastpgn.board
subclasses it and writes the rest (game end, copies, pickling, printing)
once for both kernels, and ``replay`` hands out that Board.

The replay hot path (``san_to_uci``, ``validate_san``) reads the UTF-8 bytes
of the move list through a pointer (bytes and ASCII str in place), resolves
each SAN by looking back from the target square (per-piece bitboards beside
the mailbox give the candidate origins) and plays it in the same pass, and
writes UCI into a C buffer, or nothing for validate_san: no Python object
per move. Tokens outside its common shapes take the general resolver, so
results and errors match the pure twin's. That path has no twin and stands
apart, in the "Compiled only" part at the end of this file.
"""

import sys

from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport PyObject, PyTypeObject
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_New

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)

from fastpgn.errors import AmbiguousMoveError, BoardError, IllegalMoveError, InvalidFENError

cdef enum:
    WHITE = 0
    BLACK = 1
    PAWN = 1
    KNIGHT = 2
    BISHOP = 3
    ROOK = 4
    QUEEN = 5
    KING = 6
    FLAG_CASTLE = 1
    FLAG_EP = 2
    FLAG_DOUBLE = 3
    FLAG_NULL = 4
    # The null move, a pass: from 0x08 to 0x08, a square off the board whose name in
    # _SQ_NAMES is "00", so _write_uci writes 0000 without a test of its own.
    NULL_MOVE = 0x08 | 0x08 << 7 | FLAG_NULL << 17
    MAX_MOVES = 512

MAX_CLOCK = 1_000_000_000

cdef int _KNIGHT_D[8]
cdef int _KING_D[8]
cdef int _ROOK_D[4]
cdef int _BISHOP_D[4]
cdef int _PAWN_FWD[2]
cdef int _SQUARES[64]
_KNIGHT_D[:] = [33, 31, 18, 14, -14, -18, -31, -33]
_KING_D[:] = [16, 17, 1, -15, -16, -17, -1, 15]
_ROOK_D[:] = [16, 1, -16, -1]
_BISHOP_D[:] = [17, -15, -17, 15]
_PAWN_FWD[:] = [16, -16]
for _i in range(64):
    _SQUARES[_i] = 16 * (_i >> 3) + (_i & 7)
_FILES = "abcdefgh"
_SYMBOLS = ".PNBRQK..pnbrqk."
_NAMES = ("", "pawn", "knight", "bishop", "rook", "queen", "king")
_COLOURS = ("white", "black")
_PROMO_UCI = "..nbrq"
_PROMO_SAN = "..NBRQ"
_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
cdef const char* _FILE_CHARS = b"abcdefgh"
cdef const char* _SYMBOL_CHARS = b".PNBRQK..pnbrqk."
cdef const char* _PROMO_CHARS = b"..nbrq"
cdef char _SQ_NAMES[128][2]  # each 0x88 square's name, for writing UCI
for _i in range(128):
    _SQ_NAMES[_i][0] = _FILE_CHARS[_i & 7]
    _SQ_NAMES[_i][1] = 49 + ((_i >> 4) & 7)
_SQ_NAMES[0x08][0] = _SQ_NAMES[0x08][1] = 48  # the null move's square: 0000 in UCI

# Resolution codes of _resolve_san / _resolve_castle (moves are >= 0).
cdef enum:
    ERR_SYNTAX = -1
    ERR_NONE = -2
    ERR_CHECK = -3
    ERR_AMBIGUOUS = -4
    ERR_PROMO_MISSING = -5
    ERR_PROMO_BAD = -6
    ERR_OWN = -7
    ERR_NO_RIGHT = -8
    ERR_BLOCKED = -9
    ERR_ATTACKED = -10
    ERR_NULL_CHECK = -11


cdef signed char _LINE[239]
cdef bint _KNIGHT_REACH[239]


cdef void _build_line():
    # _LINE[to - from + 119] is the step from `from` towards `to` when the two
    # squares share a rank, file or diagonal, else 0: a move whose origin is
    # not on a line with its own king cannot expose that king.
    cdef int i, d, n
    for i in range(239):
        _LINE[i] = 0
    for i in range(8):
        d = _KING_D[i]
        for n in range(1, 8):
            _LINE[d * n + 119] = d


_build_line()


cdef void _build_knight_reach():
    cdef int i
    for i in range(239):
        _KNIGHT_REACH[i] = False
    for i in range(8):
        _KNIGHT_REACH[_KNIGHT_D[i] + 119] = True


_build_knight_reach()

# _STEP[t][to - from + 119]: the step by which a piece of type t (knight,
# bishop, rook, queen, king) goes from `from` towards `to` when its move
# pattern reaches `to` on an empty board, else 0. A knight's or king's step
# is the whole move, so one walk (`s = from + step` until `to` or a piece)
# serves every type, with no test on the type. Compiled twin only.
cdef signed char _STEP[7][239]


cdef void _build_step() noexcept:
    cdef int t, i, n, d
    for t in range(7):
        for i in range(239):
            _STEP[t][i] = 0
    for i in range(8):
        _STEP[KNIGHT][_KNIGHT_D[i] + 119] = _KNIGHT_D[i]
        _STEP[KING][_KING_D[i] + 119] = _KING_D[i]
        for n in range(1, 8):
            d = _KING_D[i]
            _STEP[QUEEN][d * n + 119] = d
            _STEP[BISHOP if i & 1 else ROOK][d * n + 119] = d


_build_step()


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static __inline int fastpgn_ctz64(unsigned long long x) {
        unsigned long i; _BitScanForward64(&i, x); return (int)i;
    }
    #else
    #define fastpgn_ctz64(x) __builtin_ctzll(x)
    #endif
    """
    # The index of the lowest set bit (x != 0).
    int fastpgn_ctz64(unsigned long long x) nogil

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #define fastpgn_popcount64(x) ((int)__popcnt64(x))
    #else
    #define fastpgn_popcount64(x) __builtin_popcountll(x)
    #endif
    """
    # The number of set bits.
    int _popcount "fastpgn_popcount64" (unsigned long long x) nogil

# _REACH[t][s]: the squares (bitboard bits, a1 = bit 0) from which a piece of
# type t reaches 0x88 square s on an empty board (knight, bishop, rook, queen,
# king); a slider's path is then checked on the 0x88 board. Indexed by the
# 0x88 square (nothing off the board), so no square is converted to look up.
cdef uint64_t _REACH[7][128]


cdef inline int _sq88(int i) noexcept nogil:
    return i + (i & 56)


cdef uint64_t _BIT[128]  # the bitboard bit of each 0x88 square (0 off the board)
for _i in range(64):
    _BIT[_SQUARES[_i]] = 1ULL << _i


cdef inline uint64_t _bit(int s) noexcept nogil:
    """The bitboard bit of 0x88 square ``s``."""
    return _BIT[s]


cdef inline int _line_piece(int d) noexcept nogil:
    """The slider type (other than the queen) that moves by step ``d``."""
    return ROOK if d == 1 or d == -1 or d == 16 or d == -16 else BISHOP


cdef void _build_reach() noexcept:
    cdef int i, j, s, t, d
    for t in range(7):
        for i in range(128):
            _REACH[t][i] = 0
    for i in range(64):
        s = _SQUARES[i]
        for j in range(8):
            t = s + _KNIGHT_D[j]
            if not t & 0x88:
                _REACH[KNIGHT][s] |= _bit(t)
            t = s + _KING_D[j]
            if not t & 0x88:
                _REACH[KING][s] |= _bit(t)
        for j in range(4):
            d = _BISHOP_D[j]
            t = s + d
            while not t & 0x88:
                _REACH[BISHOP][s] |= _bit(t)
                t += d
            d = _ROOK_D[j]
            t = s + d
            while not t & 0x88:
                _REACH[ROOK][s] |= _bit(t)
                t += d
        _REACH[QUEEN][s] = _REACH[BISHOP][s] | _REACH[ROOK][s]


_build_reach()

# _LINE_DIR[to - from + 119]: the index in _KING_D of _LINE's step (8 when
# none); _RAY[j][s]: the squares (bitboard bits) beyond 0x88 square s in
# direction _KING_D[j] (even j: rook lines, odd j: diagonals). Compiled twin
# only: a bitboard test that finds no slider on a ray spares walking it.
cdef signed char _LINE_DIR[239]
cdef uint64_t _RAY[9][128]  # _RAY[8]: no line, no squares


cdef void _build_rays() noexcept:
    cdef int i, j, t, n
    for i in range(239):
        _LINE_DIR[i] = 8
    for j in range(9):
        for i in range(128):
            _RAY[j][i] = 0
    for j in range(8):
        for n in range(1, 8):
            _LINE_DIR[_KING_D[j] * n + 119] = j
        for i in range(64):
            t = _SQUARES[i] + _KING_D[j]
            while not t & 0x88:
                _RAY[j][_SQUARES[i]] |= _bit(t)
                t += _KING_D[j]


_build_rays()


cdef inline bint _slider_on_ray(BoardCore b, int colour, int s, int j) noexcept nogil:
    """Whether the bitboards put a ``colour`` slider of direction ``j``'s kind on the ray from ``s``.

    False for ``j`` = 8 (no line) without a branch, so callers test a line
    and a slider on it at once, and that test is rarely true.
    """
    cdef int c = colour << 3
    return ((b.bb[QUEEN | c] | b.bb[(BISHOP if j & 1 else ROOK) | c]) & _RAY[j][s]) != 0

cdef uint64_t _Z[16 * 128 + 128 + 8 + 1]
cdef int _Z_CASTLE = 16 * 128
cdef int _Z_EP = 16 * 128 + 128
cdef uint64_t _Z_TURN


cdef void _zobrist():
    # splitmix64, fixed seed: both backends draw the same keys in the same
    # order, so position keys are equal across backends.
    global _Z_TURN
    cdef uint64_t state = 0x9E3779B97F4A7C15ULL
    cdef uint64_t z
    cdef int i
    for i in range(16 * 128 + 128 + 8 + 1):
        state += 0x9E3779B97F4A7C15ULL
        z = state
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        _Z[i] = z ^ (z >> 31)
    _Z_TURN = _Z[16 * 128 + 128 + 8]


_zobrist()

# The Polyglot key's numbers (fastpgn/board/_polyglot.py, from the book format's specification): the key
# opening books and python-chess's chess.polyglot.zobrist_hash give, beside the board's own key above.
cdef uint64_t _PG[781]


cdef struct PieceKey:
    # The pieces' part of a Polyglot key and the bitboards it was made of (_pg_pieces_since).
    bint known
    uint64_t key
    uint64_t bb[16]


cdef void _polyglot_table():
    from fastpgn.board._polyglot import RANDOM64
    cdef int i
    for i in range(781):
        _PG[i] = RANDOM64[i]


_polyglot_table()


def _sq_name(int s):
    return _FILES[s & 7] + str((s >> 4) + 1)


def _square_arg(square):
    """0..63 or a name like ``"e4"`` -> 0x88 square."""
    if isinstance(square, str):
        if len(square) == 2 and "a" <= square[0] <= "h" and "1" <= square[1] <= "8":
            return (ord(square[1]) - 49) * 16 + ord(square[0]) - 97
    elif isinstance(square, int) and not isinstance(square, bool) and 0 <= square < 64:
        return (square >> 3) * 16 + (square & 7)
    raise BoardError(f"bad square {square!r}: use 0..63 or a name like 'e4'")


def _quote(text):
    return repr(text if len(text) <= 100 else text[:100] + "...")


cdef class Move:
    """A move as squares 0..63 (a1 = 0) and a promotion letter (``fastpgn.Move``).

    A board hands out castling as its ``uci`` writes it: the king to the g or
    c file (``e1g1``), or the king taking its own rook on a Chess960 board
    (``e1h1``); a board takes either form back. The null move (a pass) is
    ``Move.null()``: a1 to a1, false as a bool, ``0000`` in UCI.
    """

    cdef readonly int from_square
    cdef readonly int to_square
    cdef readonly object promotion

    def __init__(self, from_square, to_square, promotion=None):
        if not (isinstance(from_square, int) and 0 <= from_square < 64
                and isinstance(to_square, int) and 0 <= to_square < 64):
            raise BoardError(f"bad move squares {from_square!r}, {to_square!r}: use 0..63")
        if promotion is not None and (not isinstance(promotion, str) or len(promotion) != 1
                                      or promotion not in "nbrq"):
            raise BoardError(f"bad promotion {promotion!r}: use 'n', 'b', 'r' or 'q'")
        self.from_square = from_square
        self.to_square = to_square
        self.promotion = promotion

    @classmethod
    def null(cls):
        """The null move: a pass (``0000`` in UCI, ``--`` in SAN).

        >>> Move.null(), bool(Move.null()), Move.null() == Move.from_uci("0000")
        (Move.from_uci('0000'), False, True)
        """
        return cls(0, 0)

    @classmethod
    def from_uci(cls, text):
        """Parse ``e2e4``/``e7e8q`` (``0000``: the null move) without a board (no legality check)."""
        if text == "0000":
            return cls(0, 0)
        if (isinstance(text, str) and 4 <= len(text) <= 5 and "a" <= text[0] <= "h"
                and "1" <= text[1] <= "8" and "a" <= text[2] <= "h" and "1" <= text[3] <= "8"
                and (len(text) == 4 or text[4] in "nbrq")):
            return cls((ord(text[1]) - 49) * 8 + ord(text[0]) - 97,
                       (ord(text[3]) - 49) * 8 + ord(text[2]) - 97,
                       text[4] if len(text) == 5 else None)
        raise IllegalMoveError(f"illegal move {text!r}: not a UCI move")

    def uci(self):
        """The move in UCI (castling as the board that made the move writes it).

        >>> Move(12, 28).uci(), Move.from_uci("a7a8n").uci(), Move.null().uci()
        ('e2e4', 'a7a8n', '0000')
        """
        f, t = self.from_square, self.to_square
        if not (f or t or self.promotion):
            return "0000"
        return (_FILES[f & 7] + str((f >> 3) + 1) + _FILES[t & 7] + str((t >> 3) + 1)
                + (self.promotion or ""))

    def __bool__(self):
        """False for the null move, as python-chess's ``Move.null()``."""
        return bool(self.from_square or self.to_square or self.promotion)

    def __eq__(self, other):
        if not isinstance(other, Move):
            return NotImplemented
        return (self.from_square == (<Move>other).from_square
                and self.to_square == (<Move>other).to_square
                and self.promotion == (<Move>other).promotion)

    def __hash__(self):
        return hash((self.from_square, self.to_square, self.promotion))

    def __repr__(self):
        return f"Move.from_uci({self.uci()!r})"

    def __str__(self):
        return self.uci()

    def __reduce__(self):
        return (Move, (self.from_square, self.to_square, self.promotion))


cdef struct Undo:
    int mv
    int captured
    int castle[4]
    int ep
    int halfmove
    uint64_t key
    bint checked


cdef class BoardCore:
    """A position and the moves that led to it: the kernel's part of ``fastpgn.Board``.

    fastpgn.board's Board subclasses it and adds, once for both kernels,
    what is not hot: game end, copies, pickling, printing, the docs.
    """

    cdef signed char sq[128]
    # Squares (0..63) of each piece code, kept by make/unmake beside sq. The
    # legality probes move pieces on sq alone, so readers confirm on sq.
    # bb[0] and bb[8] (no piece) are scratch: nothing reads them.
    cdef uint64_t bb[16]
    cdef int king[2]
    cdef int castle[4]
    cdef int stm
    cdef int ep
    cdef int halfmove
    cdef int fullmove
    cdef uint64_t zkey
    cdef int fen_ep            # the FEN's en passant square as written (-1: none), for the Polyglot key
    cdef bint checked
    cdef readonly bint chess960
    cdef Undo* stack
    cdef int nstack
    cdef int capstack

    def __cinit__(self):
        self.stack = NULL
        self.nstack = 0
        self.capstack = 0

    def __dealloc__(self):
        free(self.stack)

    def __init__(self, fen=None, chess960=False):
        self.chess960 = bool(chess960)
        if fen is None:
            _set_start(self)
        else:
            _set_fen(self, fen, self.chess960)

    # -- position --------------------------------------------------------
    def fen(self, shredder=False):
        """Six-field FEN; castling as X-FEN (``KQkq``) or Shredder-FEN (``HAha``)."""
        return _get_fen(self, shredder)

    def piece_at(self, square):
        """The piece on a square (0..63 or ``"e4"``) as a FEN letter, or None."""
        p = self.sq[<int>_square_arg(square)]
        return _SYMBOLS[p] if p else None

    @property
    def turn(self):
        """The side to move: ``"w"`` or ``"b"``."""
        return "wb"[self.stm]

    @property
    def castling_rights(self):
        """The FEN castling field (X-FEN), ``"-"`` when none."""
        return _castling_field(self, False)

    def has_castling_right(self, colour, side):
        """Whether ``colour`` (``"w"``/``"b"``) keeps the right to castle on ``side`` (``"k"``/``"q"``)."""
        if colour not in ("w", "b") or side not in ("k", "q"):
            raise BoardError(f"bad castling query {colour!r}, {side!r}: use 'w'/'b' and 'k'/'q'")
        return self.castle[(colour == "b") * 2 + (side == "q")] >= 0

    @property
    def ep_square(self):
        """The en passant target square's name when an en passant capture is legal, else None."""
        return _sq_name(self.ep) if self.ep >= 0 else None

    @property
    def halfmove_clock(self):
        return self.halfmove

    @property
    def fullmove_number(self):
        return self.fullmove

    @property
    def ply(self):
        """Moves pushed since this board was set up."""
        return self.nstack

    def key(self):
        """The position key (64-bit Zobrist): equal keys, same position for repetition."""
        return self.zkey

    def zobrist(self):
        """The Polyglot key of the position, as a signed 64-bit integer (the same bits as opening books' key)."""
        cdef uint64_t key = _polyglot(self, _pg_ep(self))
        return <long long>key

    # -- moves -----------------------------------------------------------
    def legal_moves(self):
        """Every legal move, in generation order."""
        cdef int moves[MAX_MOVES]
        cdef int n = _gen_legal(self, moves)
        return [_to_move(self, moves[i]) for i in range(n)]

    def is_legal(self, move):
        """Whether ``move`` is one of ``legal_moves()``: never the null move, which ``push`` plays all the same."""
        mv = _from_move(self, move)
        return mv >= 0 and mv != NULL_MOVE

    def push(self, move):
        """Play a legal Move, or the null move (not in check); IllegalMoveError otherwise."""
        mv = _from_move(self, move)
        if mv < 0:
            raise _not_legal(self, move, mv)
        _push(self, mv)

    def pop(self):
        """Take back the last move and return it."""
        if not self.nstack:
            raise IllegalMoveError("no move to take back")
        return _to_move(self, _pop(self))

    def parse_san(self, san):
        """The legal move a SAN string names (annotations and check marks allowed)."""
        return _to_move(self, _san_move(self, san))

    def push_san(self, san):
        """Parse SAN, play it, return the move (castling as ``uci`` writes it on this board)."""
        mv = _san_move(self, san)
        _push(self, mv)
        return _to_move(self, mv)

    def parse_uci(self, uci):
        """The legal move a UCI string names (castling as e1g1 or e1h1)."""
        return _to_move(self, _uci_move(self, uci))

    def push_uci(self, uci):
        """Parse UCI, play it, return the move."""
        mv = _uci_move(self, uci)
        _push(self, mv)
        return _to_move(self, mv)

    def san(self, move):
        """Canonical SAN of a legal move, with ``+``/``#``; ``--`` for the null move."""
        mv = _from_move(self, move)
        if mv < 0:
            raise _not_legal(self, move, mv)
        return _san_of(self, mv)

    def uci(self, move):
        """UCI of a move here: castling as e1g1 (king takes rook for Chess960), the null move as ``0000``."""
        mv = _from_move(self, move)
        return _uci_of(self, mv) if mv >= 0 else _move_text(move)

    @property
    def move_stack(self):
        """The moves pushed since set-up, oldest first."""
        return [_to_move(self, self.stack[i].mv) for i in range(self.nstack)]

    def is_check(self):
        return _in_check(self)

    # -- what fastpgn.board writes Board's rules, copies and perft over ----
    def _has_legal_move(self):
        return _any_legal(self)

    def _lacks_mating_material(self, int colour):
        return _insufficient(self, colour)

    def _repetition_count(self):
        return _repetitions(self)

    def _fifty_claimable(self):
        return _can_claim_fifty(self)

    def _threefold_claimable(self):
        return _can_claim_threefold(self)

    def _count_leaves(self, int depth, bint bulk):
        return _perft(self, depth, bulk)

    def _copy(self):
        """An independent copy, history included, of this board's class."""
        return _copy(self)

    def _unwind(self):
        """Take back every pushed move."""
        while self.nstack:
            _pop(self)


# -- set-up -------------------------------------------------------------

cdef inline void _copy_position(BoardCore dst, BoardCore src) noexcept nogil:
    """The position of ``src`` (pieces, side, castling, en passant, clocks, key, check) onto ``dst``."""
    memcpy(dst.sq, src.sq, sizeof(dst.sq))
    memcpy(dst.bb, src.bb, sizeof(dst.bb))
    memcpy(dst.king, src.king, sizeof(dst.king))
    memcpy(dst.castle, src.castle, sizeof(dst.castle))
    dst.stm = src.stm
    dst.ep = src.ep
    dst.halfmove = src.halfmove
    dst.fullmove = src.fullmove
    dst.zkey = src.zkey
    dst.fen_ep = src.fen_ep
    dst.checked = src.checked


cdef void _set_start(BoardCore b) noexcept nogil:
    # A copy of the prepared start position: no FEN parsing per game.
    _copy_position(b, _START_BOARD)
    b.nstack = 0


def _parse_count(text, what, fen):
    if not text or len(text) > 10 or any(c not in "0123456789" for c in text):
        raise InvalidFENError(f"bad {what} {text!r} in FEN {_quote(fen)}")
    value = int(text)
    if value > MAX_CLOCK:
        raise InvalidFENError(f"{what} {value} is too large in FEN {_quote(fen)}")
    return value


cdef enum:  # what _read_fen found wrong
    FEN_OK, FEN_RANKS, FEN_CHARACTER, FEN_RANK_LONG, FEN_PAWN_RANK, FEN_RANK_SHORT, FEN_KINGS,
    FEN_PAWNS, FEN_PIECES, FEN_SIDE, FEN_CASTLING, FEN_EP_SQUARE, FEN_HALFMOVE, FEN_FULLMOVE,
    FEN_CHECK


cdef struct FenFault:
    int rank    # the board's rank the fault is in (0: the eighth), or the colour it is about
    int value   # FEN_CHARACTER: its index in the rank; FEN_PAWN_RANK: the square; FEN_RANK_SHORT:
                # the squares counted; FEN_KINGS/PAWNS/PIECES: the count; FEN_CASTLING: the letter
    int code    # FEN_CASTLING: what _read_castling found


cdef _set_fen(BoardCore b, fen, bint chess960, bint drop=False):
    """Board ``b`` set up from the FEN text ``fen``, its fields between any whitespace: _read_fen's rules, its faults worded."""
    cdef const char* field[7]
    cdef FenFault fault
    if not isinstance(fen, str):
        raise InvalidFENError(f"FEN must be a string, not {type(fen).__name__}")
    fields = fen.split()
    if len(fields) != 6 and len(fields) != 4:
        raise InvalidFENError(f"FEN has {len(fields)} fields, expected 6 (or 4 without the "
                              f"clocks): {_quote(fen)}")
    cdef bytes data = " ".join(fields).encode("utf-8", "surrogatepass")
    cdef int nfields = _fen_fields(data, len(data), field, False)
    cdef int found = _read_fen(b, field, nfields, chess960, &fault, drop)
    if found != FEN_OK:
        _fen_fault(found, &fault, fen, fields, b.stm)


cdef int _fen_fields(const char* fen, Py_ssize_t n, const char** field, bint plain) noexcept nogil:
    """Where the fields of ``fen[0:n]`` start, single spaces between them (``field[i + 1] - 1`` ends
    field i): their count, or -1. ``plain``: printable ASCII only, no empty field, six at most (what
    _fen_native reads); else any byte but the space (_set_fen's fields, joined)."""
    cdef const char* end = fen + n
    cdef const char* p = fen
    cdef int nfields = 0
    field[0] = p
    while p < end:
        if p[0] == 32:
            if plain and (p == field[nfields] or nfields == 5):
                return -1
            nfields += 1
            field[nfields] = p + 1
        elif plain and (p[0] < 32 or p[0] >= 127):
            return -1
        p += 1
    if plain and p == field[nfields]:
        return -1
    nfields += 1
    field[nfields] = end + 1
    return nfields


cdef int _read_fen(BoardCore b, const char** field, int nfields, bint chess960, FenFault* fault,
                   bint drop=False) noexcept nogil:
    """The position of a FEN's six (or four) fields (see _fen_fields) into ``b``: FEN_OK, or the first
    thing wrong, in the order the rules are checked, with ``fault`` saying where; b is then unusable."""
    cdef const char* p = field[0]
    cdef const char* board_end = field[1] - 1
    cdef const char* rank_start
    cdef int i, rank, f, c, piece, colour, s, ep, fwd, us, slashes = 0
    cdef int kings[2]
    cdef int pawns[2]
    cdef int pieces[2]
    fault.rank = fault.value = fault.code = 0
    while p < board_end:
        slashes += p[0] == 47  # /
        p += 1
    if slashes != 7:
        return FEN_RANKS
    memset(b.sq, 0, sizeof(b.sq))
    memset(b.bb, 0, sizeof(b.bb))
    kings[0] = kings[1] = pawns[0] = pawns[1] = pieces[0] = pieces[1] = 0
    p = field[0]
    for i in range(8):
        fault.rank = i
        rank = 7 - i
        f = 0
        rank_start = p
        while p < board_end and p[0] != 47:
            c = <unsigned char>p[0]
            if 49 <= c <= 56:
                f += c - 48
                p += 1
                continue
            piece = _PIECE_OF_SYMBOL[c]
            if not piece:
                fault.value = <int>(p - rank_start)
                return FEN_CHARACTER
            if f > 7:
                return FEN_RANK_LONG
            colour = piece >> 3
            s = 16 * rank + f
            if piece & 7 == KING:
                kings[colour] += 1
                b.king[colour] = s
            elif piece & 7 == PAWN:
                pawns[colour] += 1
                if rank == 0 or rank == 7:
                    fault.rank = colour
                    fault.value = s
                    return FEN_PAWN_RANK
            pieces[colour] += 1
            b.sq[s] = piece
            b.bb[piece] |= _bit(s)
            f += 1
            p += 1
        if f != 8:
            fault.value = f
            return FEN_RANK_SHORT
        p += 1  # the /
    for colour in range(2):
        fault.rank = colour
        if kings[colour] != 1:
            fault.value = kings[colour]
            return FEN_KINGS
        if pawns[colour] > 8:
            fault.value = pawns[colour]
            return FEN_PAWNS
        if pieces[colour] > 16:
            fault.value = pieces[colour]
            return FEN_PIECES
    if field[2] - field[1] != 2 or (field[1][0] != 119 and field[1][0] != 98):  # w b
        return FEN_SIDE
    us = b.stm = WHITE if field[1][0] == 119 else BLACK
    fault.code = _read_castling(b, field[2], field[3] - 1, chess960, &fault.value, drop)
    if fault.code != CASTLING_OK:
        return FEN_CASTLING
    # en passant. Any square is read, as python-chess reads it, and kept only
    # where a pawn can take now: behind an enemy pawn that has just made a double push (its
    # square and the one it came from empty), the capture leaving the king safe. Other squares
    # are dropped without a word (the FEN standard writes one after every double push; some
    # writers, one no push explains).
    b.ep = -1
    b.fen_ep = -1
    p = field[3]
    if not (field[4] - p == 2 and p[0] == 45):  # -
        if field[4] - p != 3 or not (97 <= p[0] <= 104 and 49 <= p[1] <= 56):
            return FEN_EP_SQUARE
        ep = (p[1] - 49) * 16 + p[0] - 97
        b.fen_ep = ep
        fwd = _PAWN_FWD[us]
        if (ep >> 4 == (5 if us == WHITE else 2) and b.sq[ep - fwd] == (PAWN | (us ^ 1) << 3)
                and not b.sq[ep] and not b.sq[ep + fwd] and _has_legal_ep(b, ep)):
            b.ep = ep
    if nfields == 6:
        if _count_field(field[4], field[5] - 1, &b.halfmove) < 0:
            return FEN_HALFMOVE
        if _count_field(field[5], field[6] - 1, &b.fullmove) < 0:
            return FEN_FULLMOVE
        if b.fullmove < 1:
            b.fullmove = 1
    else:
        b.halfmove = 0
        b.fullmove = 1
    if _attacked(b, b.king[us ^ 1], us):
        return FEN_CHECK
    b.checked = _attacked(b, b.king[us], us ^ 1)
    b.nstack = 0
    _compute_key(b)
    return FEN_OK


cdef inline int _count_field(const char* p, const char* end, int* value) noexcept nogil:
    """_parse_count's digits (1 to 10 of them, at most MAX_CLOCK) into ``value``: 0, or -1 for anything else."""
    cdef long long v = 0
    if end - p < 1 or end - p > 10:
        return -1
    while p < end:
        if not (48 <= p[0] <= 57):
            return -1
        v = v * 10 + p[0] - 48
        p += 1
    if v > 1_000_000_000:  # MAX_CLOCK
        return -1
    value[0] = <int>v
    return 0


cdef _fen_fault(int found, FenFault* fault, fen, list fields, int stm):
    """Raise InvalidFENError for what _read_fen found wrong in ``fen`` (split into ``fields``)."""
    rows = fields[0].split("/")
    row = rows[fault.rank] if found in (FEN_CHARACTER, FEN_RANK_LONG, FEN_RANK_SHORT) else ""
    colour = _COLOURS[fault.rank] if found in (FEN_PAWN_RANK, FEN_KINGS, FEN_PAWNS, FEN_PIECES) else ""
    if found == FEN_RANKS:
        raise InvalidFENError(f"FEN board has {len(rows)} ranks, expected 8: {_quote(fen)}")
    if found == FEN_CHARACTER:
        # every character before it in the board is ASCII, so its byte index is its index in the row
        raise InvalidFENError(f"bad character {row[fault.value]!r} in FEN board {_quote(fields[0])}")
    if found == FEN_RANK_LONG:
        raise InvalidFENError(f"FEN rank {8 - fault.rank} has more than 8 squares: {_quote(row)}")
    if found == FEN_PAWN_RANK:
        raise InvalidFENError(f"FEN has a {colour} pawn on {_sq_name(fault.value)}: pawns cannot "
                              f"stand on the first or last rank")
    if found == FEN_RANK_SHORT:
        raise InvalidFENError(f"FEN rank {8 - fault.rank} has {fault.value} squares, expected 8: {_quote(row)}")
    if found == FEN_KINGS:
        raise InvalidFENError(f"FEN has {fault.value} {colour} kings, expected one: {_quote(fen)}")
    if found == FEN_PAWNS:
        raise InvalidFENError(f"FEN has {fault.value} {colour} pawns, at most 8")
    if found == FEN_PIECES:
        raise InvalidFENError(f"FEN has {fault.value} {colour} pieces, at most 16")
    if found == FEN_SIDE:
        raise InvalidFENError(f"bad side to move {fields[1]!r} in FEN, expected 'w' or 'b'")
    if found == FEN_CASTLING:
        _castling_fault(fault.code, fault.value, fields[2])
    text = fields[3]
    if found == FEN_EP_SQUARE:
        raise InvalidFENError(f"bad en passant square {text!r} in FEN")
    if found == FEN_HALFMOVE:
        _parse_count(fields[4], "halfmove clock", fen)
    if found == FEN_FULLMOVE:
        _parse_count(fields[5], "fullmove number", fen)
    if found == FEN_CHECK:
        raise InvalidFENError(f"FEN has the {_COLOURS[stm ^ 1]} king in check with {_COLOURS[stm]} to move")
    raise AssertionError(f"unworded FEN fault {found} in {fen!r}")  # pragma: no cover


cdef unsigned char _PIECE_OF_SYMBOL[256]  # FEN letter -> piece code (0: not a piece letter)


cdef void _build_symbol_table() noexcept:
    cdef const char* symbols = b".PNBRQK..pnbrqk."
    cdef int i
    memset(_PIECE_OF_SYMBOL, 0, sizeof(_PIECE_OF_SYMBOL))
    for i in range(16):
        if symbols[i] != 46:
            _PIECE_OF_SYMBOL[<unsigned char>symbols[i]] = i


_build_symbol_table()


cdef enum:  # what _read_castling found wrong
    CASTLING_OK, CASTLING_BAD_CHAR, CASTLING_KING_OFF_RANK, CASTLING_NO_ROOK, CASTLING_NOT_960, CASTLING_REPEAT


cdef int _read_castling(BoardCore b, const char* p, const char* end, bint chess960, int* bad,
                        bint drop=False) noexcept nogil:
    """The castling field ``p[0:end - p]`` into ``b.castle`` (kings and rooks placed): CASTLING_OK, or
    what is wrong, ``bad[0]`` the offending letter (_castling_fault words it). ``drop``: a right whose
    king is off its first rank or that has no rook is dropped, as python-chess plays a game's FEN."""
    cdef int i, colour, back, k, rook, r, f, c, up
    for i in range(4):
        b.castle[i] = -1
    if end - p == 1 and p[0] == 45:  # -
        return CASTLING_OK
    while p < end:
        c = bad[0] = <unsigned char>p[0]
        p += 1
        if c == 75 or c == 81 or 65 <= c <= 72:  # K Q A-H
            colour = WHITE
        elif c == 107 or c == 113 or 97 <= c <= 104:  # k q a-h
            colour = BLACK
        else:
            return CASTLING_BAD_CHAR
        back = 0x70 * colour
        k = b.king[colour]
        rook = ROOK | colour << 3
        if k & 0x70 != back:
            if drop:
                continue
            return CASTLING_KING_OFF_RANK
        up = c - 32 if c >= 97 else c
        r = -1
        if up == 75:
            for f in range(7, k & 7, -1):
                if b.sq[back | f] == rook:
                    r = back | f
                    break
        elif up == 81:
            for f in range(0, k & 7):
                if b.sq[back | f] == rook:
                    r = back | f
                    break
        elif b.sq[back | (up - 65)] == rook:
            r = back | (up - 65)
        if r < 0:
            if drop:
                continue
            return CASTLING_NO_ROOK
        if not chess960 and ((k & 7) != 4 or ((r & 7) != 0 and (r & 7) != 7)):
            return CASTLING_NOT_960
        i = colour * 2 + ((r & 7) < (k & 7))
        if b.castle[i] >= 0:
            return CASTLING_REPEAT
        b.castle[i] = r
    return CASTLING_OK


cdef _castling_fault(int found, int bad, field):
    """Raise InvalidFENError for what _read_castling found wrong in the castling ``field`` (``bad``: its letter)."""
    ch = chr(bad)
    colour = _COLOURS[WHITE if ch.isupper() else BLACK]
    if found == CASTLING_BAD_CHAR:
        raise InvalidFENError(f"bad castling field {field!r} in FEN")
    if found == CASTLING_KING_OFF_RANK:
        raise InvalidFENError(f"castling right {ch!r} but the {colour} king is not on its first rank")
    if found == CASTLING_NO_ROOK:
        raise InvalidFENError(f"castling right {ch!r} but no {colour} rook to castle with")
    if found == CASTLING_NOT_960:
        raise InvalidFENError(f"castling right {ch!r} needs the king on the e-file and the "
                              f"rook in the corner; pass chess960=True for Chess960")
    raise InvalidFENError(f"castling field {field!r} repeats a right")


cdef void _compute_key(BoardCore b) noexcept nogil:
    cdef uint64_t key = 0
    cdef int i, s
    for i in range(64):
        s = _SQUARES[i]
        if b.sq[s]:
            key ^= _Z[b.sq[s] * 128 + s]
    for i in range(4):
        if b.castle[i] >= 0:
            key ^= _Z[_Z_CASTLE + b.castle[i]]
    if b.ep >= 0:
        key ^= _Z[_Z_EP + (b.ep & 7)]
    if b.stm == BLACK:
        key ^= _Z_TURN
    b.zkey = key


# -- the Polyglot key and the FEN of a replay -----------------------------------------------------

cdef uint64_t _polyglot(BoardCore b, int ep) noexcept nogil:
    """The Polyglot key of ``b``, ``ep`` the en passant square the last move made (-1: none).

    Polyglot counts ``ep``'s file only where a pawn of the side to move stands
    beside the pawn that moved, whether or not taking is legal (the board's
    own ``ep`` is kept only where it is).
    """
    return _pg_pieces(b) ^ _pg_rest(b, ep)


cdef inline uint64_t _pg_bits(int pc, uint64_t bits) noexcept nogil:
    """The Polyglot terms of piece code ``pc`` on the squares of ``bits`` (a1 = bit 0), XORed."""
    cdef uint64_t key = 0
    cdef int kind = 64 * (2 * ((pc & 7) - 1) + (pc >> 3 == WHITE))
    while bits:
        key ^= _PG[kind + fastpgn_ctz64(bits)]
        bits &= bits - 1
    return key


cdef uint64_t _pg_pieces(BoardCore b) noexcept nogil:
    """The pieces' part of ``b``'s Polyglot key."""
    cdef uint64_t key = 0
    cdef int pc
    for pc in range(1, 15):
        if pc != 7 and pc != 8:
            key ^= _pg_bits(pc, b.bb[pc])
    return key


cdef uint64_t _pg_pieces_since(BoardCore b, PieceKey* last) noexcept nogil:
    """The pieces' part of ``b``'s Polyglot key from ``last`` (the part of an earlier position, with its
    bitboards): only the squares whose piece changed are XORed in and out. ``last`` then holds ``b``'s."""
    cdef int pc
    cdef uint64_t diff
    if not last.known:
        last.key = _pg_pieces(b)
        memcpy(last.bb, b.bb, sizeof(last.bb))
        last.known = True
        return last.key
    for pc in range(1, 15):
        diff = last.bb[pc] ^ b.bb[pc]
        if diff and pc != 7 and pc != 8:
            last.key ^= _pg_bits(pc, diff)
            last.bb[pc] = b.bb[pc]
    return last.key


cdef uint64_t _pg_rest(BoardCore b, int ep) noexcept nogil:
    """The castling rights', en passant file's and side to move's part of ``b``'s Polyglot key."""
    cdef uint64_t key = 0
    cdef int pc, p, pawn
    for pc in range(4):
        if b.castle[pc] >= 0:
            key ^= _PG[768 + pc]
    if ep >= 0:
        p = ep - _PAWN_FWD[b.stm]     # the pawn that moved two squares
        pawn = PAWN | b.stm << 3
        if 0 <= p < 128 and not p & 0x88 and ((not (p - 1) & 0x88 and b.sq[p - 1] == pawn)
                                              or (not (p + 1) & 0x88 and b.sq[p + 1] == pawn)):
            key ^= _PG[772 + (ep & 7)]
    if b.stm == WHITE:
        key ^= _PG[780]
    return key


cdef int _pg_ep(BoardCore b) noexcept nogil:
    """The en passant square the Polyglot key looks at: behind the last move's double push, or the FEN's."""
    cdef int mv
    if b.nstack:
        mv = b.stack[b.nstack - 1].mv
        return (mv & 127) + _PAWN_FWD[b.stm ^ 1] if mv >> 17 == FLAG_DOUBLE else -1
    return b.fen_ep


cdef inline int _write_count(char* out, unsigned int v) noexcept nogil:
    cdef char digits[12]
    cdef int n = 0, i
    while True:
        digits[n] = 48 + v % 10
        n += 1
        v //= 10
        if not v:
            break
    for i in range(n):
        out[i] = digits[n - 1 - i]
    return n


cdef Py_ssize_t _write_fen(BoardCore b, int halfmove, char* out) noexcept nogil:
    """``_get_fen(b, False)`` into ``out`` with ``halfmove`` as the clock: at most FEN_ROOM bytes."""
    cdef char* o = out
    cdef int r, f, p, empty, i, rook, step, s, n = 0
    cdef bint outermost
    for r in range(7, -1, -1):
        empty = 0
        for f in range(8):
            p = b.sq[16 * r + f]
            if p:
                if empty:
                    o[0] = 48 + empty
                    o += 1
                    empty = 0
                o[0] = _SYMBOL_CHARS[p]
                o += 1
            else:
                empty += 1
        if empty:
            o[0] = 48 + empty
            o += 1
        o[0] = 47 if r else 32  # / between ranks
        o += 1
    o[0] = 119 if b.stm == WHITE else 98
    o[1] = 32
    o += 2
    for i in range(4):
        rook = b.castle[i]
        if rook < 0:
            continue
        # X-FEN, as _castling_field: K/Q name the outermost rook, a file letter any other
        step = 1 if i & 1 == 0 else -1
        s = rook + step
        outermost = True
        while not s & 0x88:
            if b.sq[s] == ROOK | (i >> 1) << 3:
                outermost = False
            s += step
        if outermost:
            o[0] = 81 if i & 1 else 75
        else:
            o[0] = 65 + (rook & 7)
        if i >> 1:
            o[0] += 32
        o += 1
        n += 1
    if not n:
        o[0] = 45
        o += 1
    o[0] = 32
    o += 1
    if b.ep >= 0:
        o[0] = 97 + (b.ep & 7)
        o[1] = 49 + (b.ep >> 4)
        o += 2
    else:
        o[0] = 45
        o += 1
    o[0] = 32
    o += 1
    o += _write_count(o, <unsigned int>halfmove)
    o[0] = 32
    o += 1
    o += _write_count(o, <unsigned int>b.fullmove)
    return o - out


cdef tuple _NO_ARGS = ()


cdef inline BoardCore _alloc(cls):
    """A new board of class ``cls`` (BoardCore or a subclass), __cinit__ run and no __init__.

    Its tp_new called straight: ``BoardCore.__new__(cls)`` with a class known only at run
    time is a Python method call.
    """
    return <BoardCore>(<PyTypeObject*>cls).tp_new(<type>cls, <PyObject*>_NO_ARGS, NULL)


cdef BoardCore _copy(BoardCore b):
    # Of b's own class, so a copy of fastpgn.board's Board is one.
    cdef BoardCore c = _alloc(type(b))
    _copy_position(c, b)
    c.chess960 = b.chess960
    if b.nstack:
        c.stack = <Undo*>malloc(b.nstack * sizeof(Undo))
        if c.stack == NULL:
            raise MemoryError()
        memcpy(c.stack, b.stack, b.nstack * sizeof(Undo))
        c.capstack = b.nstack
    c.nstack = b.nstack
    return c


# -- FEN out --------------------------------------------------------------

def _castling_field(BoardCore b, shredder):
    cdef int i, r, colour, step, s
    out = ""
    for i in range(4):
        r = b.castle[i]
        if r < 0:
            continue
        colour = i >> 1
        letter = _FILES[r & 7].upper()
        if not shredder:
            # X-FEN: K/Q name the outermost rook; a file letter names any other.
            step = 1 if i & 1 == 0 else -1
            s = r + step
            outermost = True
            while not s & 0x88:
                if b.sq[s] == ROOK | colour << 3:
                    outermost = False
                s += step
            if outermost:
                letter = "Q" if i & 1 else "K"
        out += letter.lower() if colour else letter
    return out or "-"


def _get_fen(BoardCore b, shredder):
    cdef int r, f, p, empty
    rows = []
    for r in range(7, -1, -1):
        row = ""
        empty = 0
        for f in range(8):
            p = b.sq[16 * r + f]
            if p:
                if empty:
                    row += str(empty)
                    empty = 0
                row += _SYMBOLS[p]
            else:
                empty += 1
        if empty:
            row += str(empty)
        rows.append(row)
    return (f"{'/'.join(rows)} {'wb'[b.stm]} {_castling_field(b, shredder)} "
            f"{_sq_name(b.ep) if b.ep >= 0 else '-'} {b.halfmove} {b.fullmove}")


# -- attacks and legality --------------------------------------------------

cdef inline bint _attacked(BoardCore b, int s, int by) noexcept nogil:
    """Whether side ``by`` attacks square ``s``.

    Knights, king and sliders come from the bitboards and are confirmed on
    sq: a legality probe (_leaves_king_safe, _castle_legal) moves the other
    side's pieces on sq only, so a ``by`` piece it captured is still in bb,
    while a square of sq that holds a ``by`` piece holds the one bb names.
    """
    cdef signed char* sq = b.sq
    cdef int c = by << 3
    cdef int t, x, d, p
    cdef uint64_t cand
    if by == WHITE:
        t = s - 15
        if not t & 0x88 and sq[t] == PAWN:
            return True
        t = s - 17
        if not t & 0x88 and sq[t] == PAWN:
            return True
    else:
        t = s + 15
        if not t & 0x88 and sq[t] == PAWN | 8:
            return True
        t = s + 17
        if not t & 0x88 and sq[t] == PAWN | 8:
            return True
    if b.bb[KING | c] & _REACH[KING][s]:
        return True
    cand = b.bb[KNIGHT | c] & _REACH[KNIGHT][s]
    while cand:
        if sq[_sq88(fastpgn_ctz64(cand))] == KNIGHT | c:
            return True
        cand &= cand - 1
    cand = (((b.bb[ROOK | c] | b.bb[QUEEN | c]) & _REACH[ROOK][s])
            | ((b.bb[BISHOP | c] | b.bb[QUEEN | c]) & _REACH[BISHOP][s]))
    while cand:
        x = _sq88(fastpgn_ctz64(cand))
        cand &= cand - 1
        p = sq[x]
        if p and p >> 3 == by:
            d = _LINE[x - s + 119]
            t = s + d
            while t != x and not sq[t]:
                t += d
            if t == x:
                return True
    return False


cdef inline bint _in_check(BoardCore b) noexcept nogil:
    return b.checked


cdef bint _leaves_king_safe(BoardCore b, int mv) noexcept nogil:
    """Whether non-castling move ``mv`` leaves the mover's king unattacked."""
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int piece = sq[frm]
    cdef int captured = sq[to]
    cdef int vsq, victim, k
    cdef bint safe
    sq[to] = piece
    sq[frm] = 0
    vsq = -1
    victim = 0
    if mv >> 17 == FLAG_EP:
        vsq = to - _PAWN_FWD[us]
        victim = sq[vsq]
        sq[vsq] = 0
    k = to if piece & 7 == KING else b.king[us]
    safe = not _attacked(b, k, us ^ 1)
    sq[frm] = piece
    sq[to] = captured
    if vsq >= 0:
        sq[vsq] = victim
    return safe


cdef inline bint _pin_safe(BoardCore b, int k, int mv) noexcept nogil:
    """Whether a non-king move from a square on a line with its king (not in check) keeps that line shut.

    The compiled twin's callers ask only when an enemy slider stands on that
    line's ray (_slider_on_ray).
    """
    cdef signed char* sq = b.sq
    cdef int frm = mv & 127
    cdef int d = _LINE[frm - k + 119]
    cdef int s, p, t
    if _LINE[((mv >> 7) & 127) - k + 119] == d:
        return True
    s = k + d
    while s != frm:
        if sq[s]:
            return True
        s += d
    s = frm + d
    while not s & 0x88:
        p = sq[s]
        if p:
            if p >> 3 == b.stm:
                return True
            t = p & 7
            return t != QUEEN and t != _line_piece(d)
        s += d
    return True


cdef inline bint _is_legal(BoardCore b, int mv) noexcept nogil:
    """Whether pseudo-legal non-castling move ``mv`` keeps the mover's king safe."""
    cdef int frm = mv & 127
    cdef int k = b.king[b.stm]
    if b.checked or frm == k or mv >> 17 == FLAG_EP:
        return _leaves_king_safe(b, mv)
    if _slider_on_ray(b, b.stm ^ 1, k, _LINE_DIR[frm - k + 119]):
        return _pin_safe(b, k, mv)
    return True


cdef inline void _castle_targets(int king, int rook, int* kt, int* rt) noexcept nogil:
    """Where castling puts the king (``kt``) and the rook (``rt``): g/f toward the h side, c/d else."""
    cdef int back = king & 0x70
    if rook > king:
        kt[0] = back | 6
        rt[0] = back | 5
    else:
        kt[0] = back | 2
        rt[0] = back | 3


cdef bint _castle_legal(BoardCore b, int rook) noexcept nogil:
    """Whether the side to move may castle now with the rook on ``rook``: empty path, no attacked king square."""
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int k = b.king[us]
    cdef int kt, rt, lo, hi, s, kp, rp
    cdef bint safe
    _castle_targets(k, rook, &kt, &rt)
    lo = min(k, kt, rook, rt)
    hi = max(k, kt, rook, rt)
    for s in range(lo, hi + 1):
        if s != k and s != rook and sq[s]:
            return False
    # Without king and rook on the board, so neither shields a square the king crosses.
    kp = sq[k]
    rp = sq[rook]
    sq[k] = 0
    sq[rook] = 0
    safe = True
    for s in range(min(k, kt), max(k, kt) + 1):
        if _attacked(b, s, us ^ 1):
            safe = False
            break
    sq[k] = kp
    sq[rook] = rp
    return safe


cdef bint _has_legal_ep(BoardCore b, int ep) noexcept nogil:
    """Whether the side to move can legally capture en passant on ``ep``."""
    cdef int us = b.stm
    cdef int victim = ep - _PAWN_FWD[us]
    cdef int pawn = PAWN | us << 3
    cdef int s
    for s in range(victim - 1, victim + 2, 2):
        if not s & 0x88 and b.sq[s] == pawn and _leaves_king_safe(b, s | ep << 7 | FLAG_EP << 17):
            return True
    return False


# -- make / unmake -----------------------------------------------------------

cdef inline bint _gives_check(BoardCore b, int frm, int to, int flag) noexcept nogil:
    """Whether the move just made from ``frm`` to ``to`` checks the side now to move."""
    cdef signed char* sq = b.sq
    cdef int them = b.stm
    cdef int k = b.king[them]
    cdef int t, fwd, d, s, p
    if flag == FLAG_CASTLE or flag == FLAG_EP:
        return _attacked(b, k, them ^ 1)
    t = sq[to] & 7
    if t == PAWN:
        fwd = _PAWN_FWD[them ^ 1]
        if k == to + fwd - 1 or k == to + fwd + 1:
            return True
    elif t == KNIGHT:
        if _KNIGHT_REACH[k - to + 119]:
            return True
    elif t != KING:
        d = _LINE[k - to + 119]
        if d and (t == QUEEN or t == _line_piece(d)):
            s = to + d
            while s != k and not sq[s]:
                s += d
            if s == k:
                return True
    # A discovered check comes along the line from the king through the vacated square.
    d = _LINE[frm - k + 119]
    if d:
        s = k + d
        while not s & 0x88 and not sq[s]:
            s += d
        if not s & 0x88:
            p = sq[s]
            t = p & 7
            if p >> 3 != them and (t == QUEEN or t == _line_piece(d)):
                return True
    return False


cdef inline int _move_pieces(BoardCore b, int us, int frm, int to, int promo, int flag,
                             int* square) noexcept nogil:
    """Move the pieces of a move on the 0x88 board and the bitboards (and the king's square).

    Returns the captured piece (0 for none) and puts where it stood in
    ``square``; for castling (the move is king takes own rook) ``square`` gets
    the rook's new square and the king's is in ``b.king``. Shared by _make and
    _fast_make, which add their own bookkeeping around it.
    """
    cdef signed char* sq = b.sq
    cdef int piece = sq[frm]
    cdef int captured, placed, kt, rt, rook
    if flag == FLAG_CASTLE:
        _castle_targets(frm, to, &kt, &rt)
        rook = sq[to]
        sq[frm] = 0
        sq[to] = 0
        sq[kt] = piece
        sq[rt] = rook
        b.bb[piece] ^= _bit(frm) ^ _bit(kt)
        b.bb[rook] ^= _bit(to) ^ _bit(rt)
        b.king[us] = kt
        square[0] = rt
        return 0
    square[0] = to - _PAWN_FWD[us] if flag == FLAG_EP else to
    captured = sq[square[0]]
    if captured:
        sq[square[0]] = 0
        b.bb[captured] ^= _bit(square[0])
    placed = promo | us << 3 if promo else piece
    sq[to] = placed
    sq[frm] = 0
    b.bb[piece] ^= _bit(frm)
    b.bb[placed] ^= _bit(to)
    if piece & 7 == KING:
        b.king[us] = to
    return captured


cdef void _make(BoardCore b, int mv, Undo* undo) noexcept:
    """Play internal move ``mv`` (assumed legal); fill its undo record."""
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    cdef int flag = mv >> 17
    cdef int piece, captured, kt, rook, square, placed, i, r, ep
    cdef int* castle = b.castle
    cdef uint64_t key = b.zkey
    undo.mv = mv
    memcpy(undo.castle, b.castle, sizeof(b.castle))
    undo.ep = b.ep
    undo.halfmove = b.halfmove
    undo.key = key
    undo.checked = b.checked
    if mv == NULL_MOVE:
        _make_null(b)
        undo.captured = 0
        return
    if b.ep >= 0:
        key ^= _Z[_Z_EP + (b.ep & 7)]
        b.ep = -1
    piece = sq[frm]
    captured = _move_pieces(b, us, frm, to, promo, flag, &square)
    if flag == FLAG_CASTLE:
        kt = b.king[us]
        rook = sq[square]
        key ^= _Z[piece * 128 + frm] ^ _Z[rook * 128 + to] ^ _Z[piece * 128 + kt] ^ _Z[rook * 128 + square]
        b.halfmove += 1
    else:
        if captured:
            key ^= _Z[captured * 128 + square]
        placed = sq[to]
        key ^= _Z[piece * 128 + frm] ^ _Z[placed * 128 + to]
        if captured or piece & 7 == PAWN:
            b.halfmove = 0
        else:
            b.halfmove += 1
    if castle[0] >= 0 or castle[1] >= 0 or castle[2] >= 0 or castle[3] >= 0:
        for i in range(4):
            r = castle[i]
            if r >= 0 and (r == frm or r == to or (piece & 7 == KING and i >> 1 == us)):
                key ^= _Z[_Z_CASTLE + r]
                castle[i] = -1
    if us == BLACK:
        b.fullmove += 1
    b.stm = us ^ 1
    key ^= _Z_TURN
    if flag == FLAG_DOUBLE:
        ep = frm + _PAWN_FWD[us]
        if _has_legal_ep(b, ep):
            b.ep = ep
            key ^= _Z[_Z_EP + (ep & 7)]
    undo.captured = captured
    b.zkey = key
    b.checked = _gives_check(b, frm, to, flag)


cdef void _make_null(BoardCore b) noexcept nogil:
    """Pass: the other side to move, no en passant square, the halfmove clock on (python-chess's null move)."""
    cdef uint64_t key = b.zkey ^ _Z_TURN
    if b.ep >= 0:
        key ^= _Z[_Z_EP + (b.ep & 7)]
        b.ep = -1
    b.halfmove += 1
    if b.stm == BLACK:
        b.fullmove += 1
    b.stm ^= 1
    b.zkey = key
    # Nothing moved, and the side now to move was not in check before (no side may
    # leave its king attacked); the side that passed was not in check (_null_move).
    b.checked = False


cdef void _unmake(BoardCore b, Undo* undo) noexcept:
    cdef signed char* sq = b.sq
    cdef int mv = undo.mv
    cdef int captured = undo.captured
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    cdef int flag = mv >> 17
    cdef int us = b.stm ^ 1
    cdef int kt, rt, piece, rook, placed, vsq
    b.stm = us
    if us == BLACK:
        b.fullmove -= 1
    if flag == FLAG_NULL:
        pass
    elif flag == FLAG_CASTLE:
        _castle_targets(frm, to, &kt, &rt)
        piece = sq[kt]
        rook = sq[rt]
        sq[kt] = 0
        sq[rt] = 0
        sq[frm] = piece
        sq[to] = rook
        b.bb[piece] ^= _bit(frm) ^ _bit(kt)
        b.bb[rook] ^= _bit(to) ^ _bit(rt)
        b.king[us] = frm
    else:
        placed = sq[to]
        piece = PAWN | us << 3 if promo else placed
        sq[frm] = piece
        b.bb[piece] ^= _bit(frm)
        b.bb[placed] ^= _bit(to)
        if flag == FLAG_EP:
            sq[to] = 0
            vsq = to - _PAWN_FWD[us]
            sq[vsq] = captured
            b.bb[captured] ^= _bit(vsq)
        else:
            sq[to] = captured
            if captured:
                b.bb[captured] ^= _bit(to)
        if piece & 7 == KING:
            b.king[us] = frm
    memcpy(b.castle, undo.castle, sizeof(b.castle))
    b.ep = undo.ep
    b.halfmove = undo.halfmove
    b.zkey = undo.key
    b.checked = undo.checked


cdef int _push(BoardCore b, int mv) except -1:
    cdef Undo* grown
    if b.nstack == b.capstack:
        grown = <Undo*>realloc(b.stack, (b.capstack * 2 + 64) * sizeof(Undo))
        if grown == NULL:
            raise MemoryError()
        b.stack = grown
        b.capstack = b.capstack * 2 + 64
    _make(b, mv, &b.stack[b.nstack])
    b.nstack += 1
    return 0


cdef int _pop(BoardCore b) noexcept:
    b.nstack -= 1
    _unmake(b, &b.stack[b.nstack])
    return b.stack[b.nstack].mv


# -- move generation -----------------------------------------------------------

cdef int _gen_pseudo(BoardCore b, int* out) noexcept:
    """Pseudo-legal moves (castling already fully checked), in a fixed order."""
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int n = 0
    cdef int fwd = _PAWN_FWD[us]
    cdef int home = 1 if us == WHITE else 6
    cdef int last = 7 if us == WHITE else 0
    cdef int i, j, s, p, t, to, q, d, promo, r, nd
    cdef int* dirs
    for i in range(64):
        s = _SQUARES[i]
        p = sq[s]
        if not p or p >> 3 != us:
            continue
        t = p & 7
        if t == PAWN:
            to = s + fwd
            if not sq[to]:
                if to >> 4 == last:
                    for promo in range(QUEEN, KNIGHT - 1, -1):
                        out[n] = s | to << 7 | promo << 14
                        n += 1
                else:
                    out[n] = s | to << 7
                    n += 1
                    if s >> 4 == home and not sq[to + fwd]:
                        out[n] = s | (to + fwd) << 7 | FLAG_DOUBLE << 17
                        n += 1
            for to in range(s + fwd - 1, s + fwd + 2, 2):
                if to & 0x88:
                    continue
                q = sq[to]
                if q and q >> 3 != us:
                    if to >> 4 == last:
                        for promo in range(QUEEN, KNIGHT - 1, -1):
                            out[n] = s | to << 7 | promo << 14
                            n += 1
                    else:
                        out[n] = s | to << 7
                        n += 1
                elif to == b.ep:
                    out[n] = s | to << 7 | FLAG_EP << 17
                    n += 1
        elif t == KNIGHT or t == KING:
            if t == KNIGHT:
                dirs = _KNIGHT_D
            else:
                dirs = _KING_D
            for j in range(8):
                to = s + dirs[j]
                if not to & 0x88:
                    q = sq[to]
                    if not q or q >> 3 != us:
                        out[n] = s | to << 7
                        n += 1
        else:
            if t == ROOK:
                dirs = _ROOK_D
                nd = 4
            elif t == BISHOP:
                dirs = _BISHOP_D
                nd = 4
            else:
                dirs = _KING_D
                nd = 8
            for j in range(nd):
                d = dirs[j]
                to = s + d
                while not to & 0x88:
                    q = sq[to]
                    if q:
                        if q >> 3 != us:
                            out[n] = s | to << 7
                            n += 1
                        break
                    out[n] = s | to << 7
                    n += 1
                    to += d
    for i in range(2 * us, 2 * us + 2):
        r = b.castle[i]
        if r >= 0 and _castle_legal(b, r):
            out[n] = b.king[us] | r << 7 | FLAG_CASTLE << 17
            n += 1
    return n


cdef int _gen_legal(BoardCore b, int* out) noexcept:
    """Legal moves: pseudo-legal ones, tested only where the king could be exposed."""
    cdef int us = b.stm
    cdef int k = b.king[us]
    cdef bint check = b.checked
    cdef int n = _gen_pseudo(b, out)
    cdef int i, mv, frm, flag
    cdef int m = 0
    for i in range(n):
        mv = out[i]
        frm = mv & 127
        flag = mv >> 17
        if flag == FLAG_CASTLE:
            out[m] = mv
            m += 1
        elif check or frm == k or flag == FLAG_EP:
            if _leaves_king_safe(b, mv):
                out[m] = mv
                m += 1
        elif _slider_on_ray(b, us ^ 1, k, _LINE_DIR[frm - k + 119]):
            if _pin_safe(b, k, mv):
                out[m] = mv
                m += 1
        else:
            out[m] = mv
            m += 1
    return m


cdef bint _any_legal(BoardCore b) noexcept:
    """Whether the side to move has a legal move; king moves first, as they most often answer a check."""
    cdef int moves[MAX_MOVES]
    cdef int n = _gen_pseudo(b, moves)
    cdef int k = b.king[b.stm]
    cdef int i, mv
    for i in range(n):
        mv = moves[i]
        if mv & 127 == k and (mv >> 17 == FLAG_CASTLE or _is_legal(b, mv)):
            return True
    for i in range(n):
        mv = moves[i]
        if mv & 127 != k and _is_legal(b, mv):
            return True
    return False


cdef long long _perft(BoardCore b, int depth, bint bulk) noexcept:
    cdef int moves[MAX_MOVES]
    cdef int n, i
    cdef long long total = 0
    cdef Undo undo
    if depth == 0:
        return 1
    n = _gen_legal(b, moves)
    if depth == 1 and bulk:
        return n
    for i in range(n):
        _make(b, moves[i], &undo)
        total += _perft(b, depth - 1, bulk)
        _unmake(b, &undo)
    return total


# -- SAN in -------------------------------------------------------------------------

cdef int _find_origins(BoardCore b, int piece, int dest, int* out) noexcept nogil:
    """Squares holding ``piece`` (type | colour) that attack ``dest`` by its move pattern."""
    cdef signed char* sq = b.sq
    cdef int n = 0
    cdef int t = piece & 7
    cdef int j, s, p, d, nd
    cdef int* dirs
    if t == KNIGHT or t == KING:
        if t == KNIGHT:
            dirs = _KNIGHT_D
        else:
            dirs = _KING_D
        for j in range(8):
            s = dest + dirs[j]
            if not s & 0x88 and sq[s] == piece:
                out[n] = s
                n += 1
    else:
        if t == ROOK:
            dirs = _ROOK_D
            nd = 4
        elif t == BISHOP:
            dirs = _BISHOP_D
            nd = 4
        else:
            dirs = _KING_D
            nd = 8
        for j in range(nd):
            d = dirs[j]
            s = dest + d
            while not s & 0x88:
                p = sq[s]
                if p:
                    if p == piece:
                        out[n] = s
                        n += 1
                    break
                s += d
    return n


cdef int _resolve_castle(BoardCore b, bint kingside, int* info) noexcept nogil:
    cdef int us = b.stm
    cdef int r, k, mv, kt, rt, s
    info[0] = KING
    r = b.castle[2 * us + (0 if kingside else 1)]
    if r < 0:
        return ERR_NO_RIGHT
    k = b.king[us]
    mv = k | r << 7 | FLAG_CASTLE << 17
    if _castle_legal(b, r):
        return mv
    _castle_targets(k, r, &kt, &rt)  # r is the rook of that side: right of the king for O-O
    for s in range(min(k, kt, r, rt), max(k, kt, r, rt) + 1):
        if s != k and s != r and b.sq[s]:
            info[1] = s
            return ERR_BLOCKED
    return ERR_ATTACKED


cdef inline bint _is_annotation(unsigned char c) noexcept nogil:
    # Compiled twin only: the pure twin tests ``in "+#!?"``.
    return c == 43 or c == 35 or c == 33 or c == 63  # + # ! ?


cdef inline int _dash_len(const unsigned char* s, int i, int n) noexcept nogil:
    # '-', or another dash as other tools write castling: U+2010 to U+2015 (hyphens, figure, en and em
    # dashes, horizontal bar), U+2212 (minus sign)
    if i < n and s[i] == 45:
        return 1
    if i + 2 < n and s[i] == 0xE2 and ((s[i + 1] == 0x80 and 0x90 <= s[i + 2] <= 0x95)
                                       or (s[i + 1] == 0x88 and s[i + 2] == 0x92)):
        return 3
    return 0


cdef int _castle_dashes(const unsigned char* s, int n, int c) noexcept nogil:
    """1 for ``O-O``, 2 for ``O-O-O`` (``c`` is ``O`` or ``0``; the dashes '-' or en/em dashes), else 0."""
    cdef int i = 1, d, sides = 0
    while sides < 2:
        d = _dash_len(s, i, n)
        if d == 0 or i + d >= n or s[i + d] != c:
            return 0
        i += d + 1
        sides += 1
        if i == n:
            return sides
    return 0


cdef int _resolve_san(BoardCore b, const unsigned char* s, int n, int* info) noexcept nogil:
    """SAN bytes -> internal move (>= 0) or an ERR_ code; ``info`` gets piece type, target, two origins."""
    cdef signed char* sq = b.sq
    cdef int us, c, promo, dest, i, piece, ff, fr, target, fwd, flag, frm, s1, found, legal, mv, m, j, norig, p, r
    cdef bint capture
    cdef int origins[16]
    while n > 0 and _is_annotation(s[n - 1]):
        n -= 1
    if n < 2:
        return ERR_SYNTAX
    c = s[0]
    if ((n == 2 and ((c == 45 and s[1] == 45) or (c == 90 and s[1] == 48)))  # -- Z0
            or (n == 4 and c == 48 and s[1] == 48 and s[2] == 48 and s[3] == 48)):  # 0000
        return _null_move(b)
    if c == 79 or c == 48:  # O 0
        i = _castle_dashes(s, n, c)
        if i == 1:
            return _resolve_castle(b, True, info)
        if i == 2:
            return _resolve_castle(b, False, info)
        return ERR_SYNTAX
    promo = 0
    c = s[n - 1]
    if c == 81 or c == 113:  # Q q
        promo = QUEEN
    elif c == 82 or c == 114:  # R r
        promo = ROOK
    elif c == 66 or c == 98:  # B b
        promo = BISHOP
    elif c == 78 or c == 110:  # N n
        promo = KNIGHT
    if promo:
        n -= 1
        if n > 0 and s[n - 1] == 61:  # =
            n -= 1
    if n < 2 or not (97 <= s[n - 2] <= 104 and 49 <= s[n - 1] <= 56):
        return ERR_SYNTAX
    dest = (s[n - 1] - 49) * 16 + s[n - 2] - 97
    n -= 2
    capture = False
    if n > 0 and (s[n - 1] == 120 or s[n - 1] == 45):  # x -
        capture = s[n - 1] == 120
        n -= 1
    i = 0
    piece = PAWN
    if n > 0:
        c = s[0]
        if c == 78:
            piece = KNIGHT
        elif c == 66:
            piece = BISHOP
        elif c == 82:
            piece = ROOK
        elif c == 81:
            piece = QUEEN
        elif c == 75:
            piece = KING
        if piece != PAWN:
            i = 1
    ff = -1
    fr = -1
    if i < n and 97 <= s[i] <= 104:
        ff = s[i] - 97
        i += 1
    if i < n and 49 <= s[i] <= 56:
        fr = s[i] - 49
        i += 1
    if i != n or (piece == PAWN and capture and ff < 0):
        return ERR_SYNTAX
    us = b.stm
    if piece == PAWN and ff >= 0 and fr >= 0:
        frm = fr * 16 + ff
        p = sq[frm]
        if p and p >> 3 == us and p & 7 != PAWN:
            # Long algebraic without a piece letter (UCI written as movetext,
            # "g1f3", "e1g1"): the origin square names the piece.
            if p & 7 == KING and not promo:
                for j in range(2):
                    r = b.castle[2 * us + j]
                    if r >= 0 and (dest == r or (
                            dest >> 4 == frm >> 4 and (dest & 7) == (6 if j == 0 else 2)
                            and (dest - frm >= 2 if j == 0 else frm - dest >= 2))):
                        return _resolve_castle(b, j == 0, info)
            piece = p & 7
    info[0] = piece
    info[1] = dest
    target = sq[dest]
    if target and target >> 3 == us:
        return ERR_OWN
    if piece == PAWN:
        fwd = _PAWN_FWD[us]
        flag = 0
        frm = -1
        if ff < 0 or ff == (dest & 7):
            if target:
                return ERR_NONE
            s1 = dest - fwd
            if s1 & 0x88:
                return ERR_NONE
            if sq[s1] == PAWN | us << 3:
                frm = s1
            elif not sq[s1] and dest >> 4 == (3 if us == WHITE else 4) and sq[s1 - fwd] == PAWN | us << 3:
                frm = s1 - fwd
                flag = FLAG_DOUBLE
            else:
                return ERR_NONE
        else:
            if ff - (dest & 7) != 1 and (dest & 7) - ff != 1:
                return ERR_NONE
            frm = dest - fwd - (dest & 7) + ff
            if frm & 0x88 or sq[frm] != PAWN | us << 3:
                return ERR_NONE
            if not target:
                if dest != b.ep:
                    return ERR_NONE
                flag = FLAG_EP
        if fr >= 0 and frm >> 4 != fr:
            return ERR_NONE
        if dest >> 4 == (7 if us == WHITE else 0):
            if not promo:
                return ERR_PROMO_MISSING
        elif promo:
            return ERR_PROMO_BAD
        info[2] = frm
        mv = frm | dest << 7 | promo << 14 | flag << 17
        if not _is_legal(b, mv):
            return ERR_CHECK
        return mv
    if promo:
        return ERR_PROMO_BAD
    found = 0
    legal = 0
    mv = -1
    norig = _find_origins(b, piece | us << 3, dest, origins)
    for j in range(norig):
        frm = origins[j]
        if (ff >= 0 and (frm & 7) != ff) or (fr >= 0 and frm >> 4 != fr):
            continue
        found += 1
        if found == 1:
            info[2] = frm
        m = frm | dest << 7
        if _is_legal(b, m):
            legal += 1
            if legal == 1:
                mv = m
                info[2] = frm
            else:
                info[3] = frm
    if legal == 1:
        return mv
    if legal > 1:
        return ERR_AMBIGUOUS
    return ERR_CHECK if found else ERR_NONE


def _move_label(BoardCore b):
    return f"{b.fullmove}." if b.stm == WHITE else f"{b.fullmove}..."


cdef inline int _null_move(BoardCore b) noexcept nogil:
    """The null move, or ERR_NULL_CHECK: a side in check may not pass."""
    return ERR_NULL_CHECK if b.checked else NULL_MOVE


def _null_reason(BoardCore b):
    return f"{_COLOURS[b.stm]} is in check and cannot pass (a null move)"


def _not_legal(BoardCore b, move, int mv):
    """The error for a Move that is not legal here (``mv``: what _from_move answered)."""
    reason = _null_reason(b) if mv == ERR_NULL_CHECK else "not legal in this position"
    return IllegalMoveError(f"illegal move {_move_label(b)} {_move_text(move)}: {reason}")


def _san_error(BoardCore b, text, int code, int piece, int dest, int frm, int other):
    """The exception for a failed SAN resolution, naming the move number and the SAN."""
    colour = _COLOURS[b.stm]
    name = _NAMES[piece]
    side = "kingside" if text[:5] not in ("O-O-O", "0-0-0") else "queenside"
    if code == ERR_SYNTAX:
        reason = "not a move in SAN"
    elif code == ERR_NULL_CHECK:
        reason = _null_reason(b)
    elif code == ERR_NONE:
        reason = f"no {colour} {name} can move to {_sq_name(dest)}"
    elif code == ERR_CHECK:
        reason = (f"the {colour} {name} on {_sq_name(frm)} cannot move to {_sq_name(dest)}: "
                  f"the king would be in check")
    elif code == ERR_AMBIGUOUS:
        reason = (f"the {colour} {name}s on {_sq_name(min(frm, other))} and "
                  f"{_sq_name(max(frm, other))} can both move to {_sq_name(dest)}")
    elif code == ERR_PROMO_MISSING:
        reason = f"a pawn reaching {_sq_name(dest)} must promote"
    elif code == ERR_PROMO_BAD:
        reason = "only a pawn reaching the last rank promotes"
    elif code == ERR_OWN:
        reason = f"{_sq_name(dest)} holds a {colour} {_NAMES[b.sq[dest] & 7]}"
    elif code == ERR_NO_RIGHT:
        reason = f"{colour} has no {side} castling right"
    elif code == ERR_BLOCKED:
        reason = f"{colour} cannot castle {side}: {_sq_name(dest)} is occupied"
    else:
        reason = (f"{colour} cannot castle {side}: the king is in check or would cross "
                  f"or land on an attacked square")
    if code == ERR_AMBIGUOUS:
        return AmbiguousMoveError(f"ambiguous move {_move_label(b)} {text}: {reason}")
    return IllegalMoveError(f"illegal move {_move_label(b)} {text}: {reason}")


cdef int _san_move(BoardCore b, san) except -1:
    cdef int info[4]
    cdef int mv
    if not isinstance(san, str):
        raise IllegalMoveError(f"illegal move {_move_label(b)} {san!r}: not a move in SAN")
    data = (<str>san).encode("utf-8", "surrogatepass")
    info[0] = info[1] = info[2] = info[3] = 0
    mv = _resolve_san(b, data, len(data), info)
    if mv < 0:
        raise _san_error(b, san, mv, info[0], info[1], info[2], info[3])
    return mv


# -- SAN and UCI out -------------------------------------------------------------------

def _san_of(BoardCore b, int mv):
    cdef signed char* sq = b.sq
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    cdef int flag = mv >> 17
    cdef int t, j, s, norig
    cdef int origins[16]
    cdef Undo undo
    if mv == NULL_MOVE:
        return "--"
    if flag == FLAG_CASTLE:
        out = "O-O" if to > frm else "O-O-O"
    else:
        t = sq[frm] & 7
        if t == PAWN:
            out = _FILES[frm & 7] + "x" if (frm & 7) != (to & 7) else ""
            out += _sq_name(to)
            if promo:
                out += "=" + _PROMO_SAN[promo]
        else:
            out = " PNBRQK"[t]
            if t != KING:
                same_file = False
                same_rank = False
                other = False
                norig = _find_origins(b, sq[frm], to, origins)
                for j in range(norig):
                    s = origins[j]
                    if s != frm and _is_legal(b, s | to << 7):
                        other = True
                        if (s & 7) == (frm & 7):
                            same_file = True
                        if s >> 4 == frm >> 4:
                            same_rank = True
                if other:
                    if not same_file:
                        out += _FILES[frm & 7]
                    elif not same_rank:
                        out += str((frm >> 4) + 1)
                    else:
                        out += _sq_name(frm)
            if sq[to]:
                out += "x"
            out += _sq_name(to)
    _make(b, mv, &undo)
    if _in_check(b):
        out += "+" if _any_legal(b) else "#"
    _unmake(b, &undo)
    return out


cdef inline int _write_uci(bint chess960, int mv, char* out) noexcept nogil:
    # The compiled twin's _uci_of: UCI straight into a C buffer, length returned.
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    if mv >> 17 == FLAG_CASTLE and not chess960:
        to = (frm & 0x70) | (6 if to > frm else 2)
    memcpy(out, _SQ_NAMES[frm], 2)
    memcpy(out + 2, _SQ_NAMES[to], 2)
    if promo:
        out[4] = _PROMO_CHARS[promo]
        return 5
    return 4


def _uci_of(BoardCore b, int mv):
    cdef char buf[8]
    cdef int n = _write_uci(b.chess960, mv, buf)
    return buf[:n].decode("ascii")


def _to_move(BoardCore b, int mv):
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    if mv == NULL_MOVE:
        return Move(0, 0)
    if mv >> 17 == FLAG_CASTLE and not b.chess960:
        to = (frm & 0x70) | (6 if to > frm else 2)
    return Move((frm >> 4) * 8 + (frm & 7), (to >> 4) * 8 + (to & 7),
                _PROMO_UCI[promo] if promo else None)


def _move_text(move):
    try:
        return move.uci()
    except Exception:
        return repr(move)


def _from_move(BoardCore b, move):
    """The legal internal move equal to ``move`` (castling also as king to g/c file), or < 0.

    The null move (a1 to a1 without promotion: python-chess's ``Move.null()``
    too) is NULL_MOVE, or ERR_NULL_CHECK in check.
    """
    try:
        frm = (move.from_square >> 3) * 16 + (move.from_square & 7)
        to = (move.to_square >> 3) * 16 + (move.to_square & 7)
        promo = move.promotion
    except (AttributeError, TypeError):
        return -1
    if not isinstance(promo, (str, type(None))):
        return -1
    if frm == 0 and to == 0 and not promo:
        return _null_move(b)
    promo_code = _PROMO_UCI.find(promo) if promo else 0
    if promo_code < 0 or promo == ".":
        return -1
    if not (isinstance(frm, int) and isinstance(to, int) and 0 <= frm < 128 and 0 <= to < 128):
        return -1
    return _match_move(b, frm, to, promo_code)


cdef int _match_move(BoardCore b, int frm, int to, int promo) noexcept:
    cdef int moves[MAX_MOVES]
    cdef int n = _gen_legal(b, moves)
    cdef int i, mv
    for i in range(n):
        mv = moves[i]
        if mv & 127 == frm and (mv >> 7) & 127 == to and (mv >> 14) & 7 == promo:
            return mv
    for i in range(n):
        mv = moves[i]
        if mv >> 17 == FLAG_CASTLE and mv & 127 == frm and not promo:
            if to == (frm & 0x70) | (6 if ((mv >> 7) & 127) > frm else 2):
                return mv
    return -1


cdef int _uci_move(BoardCore b, text) except -1:
    cdef int frm, to, promo, mv
    if not isinstance(text, str):
        raise IllegalMoveError(f"illegal move {_move_label(b)} {text!r}: not a UCI move")
    if text == "0000":
        mv = _null_move(b)
        if mv < 0:
            raise IllegalMoveError(f"illegal move {_move_label(b)} {text}: {_null_reason(b)}")
        return mv
    if not (4 <= len(text) <= 5 and "a" <= text[0] <= "h" and "1" <= text[1] <= "8"
            and "a" <= text[2] <= "h" and "1" <= text[3] <= "8"
            and (len(text) == 4 or text[4] in "nbrq")):
        raise IllegalMoveError(f"illegal move {_move_label(b)} {text}: not a UCI move")
    frm = (ord(text[1]) - 49) * 16 + ord(text[0]) - 97
    to = (ord(text[3]) - 49) * 16 + ord(text[2]) - 97
    promo = _PROMO_UCI.index(text[4]) if len(text) == 5 else 0
    mv = _match_move(b, frm, to, promo)
    if mv < 0:
        raise IllegalMoveError(f"illegal move {_move_label(b)} {text}: not legal in this position")
    return mv


# -- game end ------------------------------------------------------------------------------

cdef bint _insufficient(BoardCore b, int colour) noexcept:
    cdef signed char* sq = b.sq
    cdef int own[7]
    cdef int other[7]
    cdef bint bishops_light = False
    cdef bint bishops_dark = False
    cdef int i, s, p
    for i in range(7):
        own[i] = 0
        other[i] = 0
    for i in range(64):
        s = _SQUARES[i]
        p = sq[s]
        if p:
            if p >> 3 == colour:
                own[p & 7] += 1
            else:
                other[p & 7] += 1
            if p & 7 == BISHOP:
                if ((s >> 4) + (s & 7)) & 1:
                    bishops_light = True
                else:
                    bishops_dark = True
    if own[PAWN] or own[ROOK] or own[QUEEN]:
        return False
    if own[KNIGHT]:
        # A lone knight mates only with help: an enemy pawn, minor piece or rook to block.
        return (own[KNIGHT] + own[BISHOP] == 1
                and not (other[PAWN] or other[KNIGHT] or other[BISHOP] or other[ROOK]))
    if own[BISHOP]:
        # Bishops on one square colour never mate unless pawns or knights can block.
        return (not (bishops_light and bishops_dark)
                and not (own[PAWN] or other[PAWN] or other[KNIGHT]))
    return True


cdef int _repetitions(BoardCore b) noexcept:
    """How often the current position occurred (1 = only now), since the last irreversible move."""
    cdef int count = 1
    cdef uint64_t key = b.zkey
    cdef int n = b.nstack
    cdef int i = n - 2
    cdef int stop = n - b.halfmove
    while i >= 0 and i >= stop:
        if b.stack[i].key == key:
            count += 1
        i -= 2
    return count


cdef bint _can_claim_threefold(BoardCore b) except -1:
    cdef int moves[MAX_MOVES]
    cdef int n, i, reps
    if _repetitions(b) >= 3:
        return True
    n = _gen_legal(b, moves)
    for i in range(n):
        _push(b, moves[i])
        reps = _repetitions(b)
        _pop(b)
        if reps >= 3:
            return True
    return False


cdef bint _can_claim_fifty(BoardCore b) except -1:
    cdef int moves[MAX_MOVES]
    cdef int replies[MAX_MOVES]
    cdef int n = _gen_legal(b, moves)
    cdef int i, clock
    cdef bint ok
    if not n:
        return False
    if b.halfmove >= 100:
        return True
    if b.halfmove >= 99:
        for i in range(n):
            _push(b, moves[i])
            clock = b.halfmove
            _pop(b)
            if clock >= 100:
                # The position after this move must itself allow play on.
                _push(b, moves[i])
                ok = _gen_legal(b, replies) > 0
                _pop(b)
                if ok:
                    return True
    return False


# -- replay entry points -----------------------------------------------------------------------

cdef BoardCore _new_board(fen, chess960, cls=None):
    # ``cls``: fastpgn.board's Board where the board is handed out (replay); else a private core.
    cdef BoardCore b = BoardCore.__new__(BoardCore) if cls is None else _alloc(cls)
    b.chess960 = bool(chess960)
    if fen is None:
        _set_start(b)
    else:
        _set_fen(b, fen, b.chess960, True)    # a game's FEN: castling rights without a rook dropped
    return b


cdef object _BOARD = None


cdef object _board_class():
    """fastpgn.board's Board over this kernel, found on first use (this module loads before it)."""
    global _BOARD
    if _BOARD is None:
        from fastpgn.board import _face_over

        _BOARD = _face_over(sys.modules[__name__])
    return _BOARD


def __getattr__(name):
    # ``Board``: the public Board over this kernel, for tests and benchmarks that run both.
    if name == "Board":
        return _board_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


cdef bytes _split(sans):
    # Only ASCII whitespace separates moves, as in the pure twin; the caller
    # walks the UTF-8 bytes, so no token objects are made.
    if not isinstance(sans, str):
        raise IllegalMoveError(f"moves must be a string of SAN, not {type(sans).__name__}")
    return (<str>sans).encode("utf-8", "surrogatepass")


cdef int _next_move(BoardCore b, bytes data, Py_ssize_t *i, int *info) except -2:
    """Resolve the SAN token of ``data`` at ``i[0]`` and step past it; -1 when none is left.

    Cython-only: the pure twin walks ``_split(sans)`` in each replay function.
    """
    cdef const unsigned char* p = data
    cdef Py_ssize_t n = len(data)
    cdef Py_ssize_t start
    cdef int mv
    while i[0] < n and _is_ws(p[i[0]]):
        i[0] += 1
    if i[0] >= n:
        return -1
    start = i[0]
    while i[0] < n and not _is_ws(p[i[0]]):
        i[0] += 1
    mv = _resolve_san(b, p + start, <int>(i[0] - start), info)
    if mv < 0:
        raise _san_error(b, data[start:i[0]].decode("utf-8", "surrogatepass"), mv,
                         info[0], info[1], info[2], info[3])
    return mv


def san_to_uci(sans, fen=None, chess960=False):
    """Validate a game's SAN moves and return them as UCI, space-separated.

    ``sans`` is the movetext's moves as lichess writes them (check marks and
    annotations allowed), as str or as UTF-8 bytes; the UCI comes back as the
    same type. ``fen`` is the starting position (standard start when None).
    An illegal or ambiguous move raises IllegalMoveError or
    AmbiguousMoveError naming the move number and the SAN.

    >>> san_to_uci("e4 e5 Nf3 Nc6 Bc4 Nf6?? Ng5 d5 exd5 Nxd5 Nxf7!")
    'e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 f3g5 d7d5 e4d5 f6d5 g5f7'
    >>> san_to_uci(b"e4 e5 Nf3")
    b'e2e4 e7e5 g1f3'
    >>> san_to_uci("O-O", fen="4k3/8/8/8/8/8/8/4K2R w K - 0 1", chess960=True)
    'e1h1'
    """
    global _uci_buf, _uci_cap
    cdef BoardCore b = _new_board(fen, chess960)
    cdef const unsigned char* p
    cdef Py_ssize_t n, size
    cdef char* grown
    cdef bint from_bytes = isinstance(sans, bytes)
    keep = _moves_text(sans, &p, &n)
    # At most 5 UCI bytes and a space per SAN token of 2 bytes or more, so 3 per byte.
    if _uci_cap < 3 * n + 16:
        grown = <char*>realloc(_uci_buf, 3 * n + 16)
        if grown == NULL:
            raise MemoryError()
        _uci_buf = grown
        _uci_cap = 3 * n + 16
    size = _replay_fast(b, fen is None, p, n, _uci_buf, from_bytes)
    if size:
        size -= 1  # the space after the last move
    if from_bytes:
        return PyBytes_FromStringAndSize(_uci_buf, size)
    text = PyUnicode_New(size, 127)
    memcpy(PyUnicode_DATA(text), _uci_buf, size)
    return text


def validate_san(sans, fen=None, chess960=False):
    """Validate a game's SAN moves (str or UTF-8 bytes) and return the number of plies; nothing else is built.

    The cheapest check a dump converter can make: san_to_uci's replay
    without its UCI text. Errors are san_to_uci's.

    >>> validate_san(b"e4 e5 Qh5 Nc6 Bc4 Nf6?? Qxf7#")
    7
    >>> validate_san("e4 e5 Ke3")
    Traceback (most recent call last):
    ...
    fastpgn.errors.IllegalMoveError: illegal move 2. Ke3: no white king can move to e3
    """
    cdef BoardCore b = _new_board(fen, chess960)
    cdef const unsigned char* p
    cdef Py_ssize_t n
    keep = _moves_text(sans, &p, &n)
    return _replay_fast(b, fen is None, p, n, NULL, isinstance(sans, bytes))


def replay(sans, fen=None, chess960=False):
    """Play a game's SAN moves and return the final Board (history kept, so repetitions count).

    >>> replay("f3 e5 g4 Qh4#").outcome().result()
    '0-1'
    """
    cdef BoardCore b = _new_board(fen, chess960, _board_class())
    cdef bytes data = _split(sans)
    cdef Py_ssize_t i = 0
    cdef int info[4]
    cdef int mv
    info[0] = info[1] = info[2] = info[3] = 0
    while True:
        mv = _next_move(b, data, &i, info)
        if mv < 0:
            break
        _push(b, mv)
    return b


def replay_fens(sans, fen=None, chess960=False):
    """The FEN after every ply of a game's SAN moves (the start position not included).

    >>> replay_fens("e4 c5")[-1]
    'rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
    """
    cdef BoardCore b = _new_board(fen, chess960)
    cdef bytes data = _split(sans)
    cdef Py_ssize_t i = 0
    cdef int info[4]
    cdef int mv
    cdef Undo undo
    info[0] = info[1] = info[2] = info[3] = 0
    out = []
    while True:
        mv = _next_move(b, data, &i, info)
        if mv < 0:
            break
        _make(b, mv, &undo)
        out.append(_get_fen(b, False))
    return out


def positions(sans, fen=None, chess960=False, fens=False):
    """``(keys, fens)``: the signed Polyglot key after every ply of a game's SAN moves, and with ``fens`` its FEN
    (else None); errors as san_to_uci's.

    >>> positions("e4", fens=True)
    ([-9062197578030825066], ['rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'])
    """
    cdef BoardCore b = _new_board(fen, chess960)
    cdef bytes data = _split(sans.decode("utf-8", "replace") if isinstance(sans, bytes) else sans)
    cdef Py_ssize_t i = 0
    cdef int info[4]
    cdef int mv
    cdef Undo undo
    cdef uint64_t key
    info[0] = info[1] = info[2] = info[3] = 0
    keys = []
    texts = [] if fens else None
    while True:
        mv = _next_move(b, data, &i, info)
        if mv < 0:
            break
        _make(b, mv, &undo)
        key = _polyglot(b, (mv & 127) + _PAWN_FWD[b.stm ^ 1] if mv >> 17 == FLAG_DOUBLE else -1)
        keys.append(<long long>key)
        if fens:
            texts.append(_get_fen(b, False))
    return keys, texts


def canonical_san(sans, fen=None, chess960=False):
    """Validate a game's SAN moves and return them in canonical SAN (with ``+``/``#``), space-separated.

    >>> canonical_san("e4 e5 Qh5 Nc6 Bc4 Nf6?? Qxf7 Ke7")
    Traceback (most recent call last):
    ...
    fastpgn.errors.IllegalMoveError: illegal move 4... Ke7: the black king on e8 cannot move to e7: the king would be in check
    >>> canonical_san("e4 e5 Qh5 Nc6 Bc4 Nf6?? Qf7")
    'e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7#'
    """
    cdef BoardCore b = _new_board(fen, chess960)
    cdef bytes data = _split(sans)
    cdef Py_ssize_t i = 0
    cdef int info[4]
    cdef int mv
    cdef Undo undo
    info[0] = info[1] = info[2] = info[3] = 0
    out = []
    while True:
        mv = _next_move(b, data, &i, info)
        if mv < 0:
            break
        out.append(_san_of(b, mv))
        _make(b, mv, &undo)
    return " ".join(out)


# =============================================================================================
# Compiled only: nothing from here on has a twin in board/_board_py.py. It is here for speed: the
# dump converter replays every game it validates or writes as UCI, so that replay has a path of
# its own (a second SAN resolver, a lighter make, a loop over the plies where they lie), and the
# scanner replays games without the GIL through the C-level entry. What it does not take falls
# back to the twin functions above, so results and errors are the pure twin's.
# =============================================================================================

# -- the fast resolver and make -------------------------------------------------------------
#
# san_to_uci, validate_san and the scanner's C entry run once per game of a
# dump, so they share a loop of their own (_play_spans). It takes each SAN
# token where it lies, its end known (_replay_fast cuts a text into tokens
# first); _fast_ply resolves the shapes lichess writes (pawn pushes and
# captures, promotions, piece moves with optional disambiguation and capture
# mark, castling on a standard board, trailing check marks and annotations)
# from the target square: the pieces of that type that reach it come from
# the bitboards, then the slider's path and the king's safety are checked for
# those few. It then plays the move where its piece and kind are known,
# without undo record, position key or halfmove clock (the board is private
# and thrown away), and finds check from that piece and the square it left.
# The loop writes UCI into one C buffer when asked. Any other token (long
# algebraic, odd spellings) and any token the fast path would reject goes to
# _resolve_san, the twin of the pure kernel's resolver, which also words the
# error, and is played by _fast_make. The fast path accepts only tokens that
# _resolve_san resolves to the same move, so results and errors stay the
# pure twin's.

# Promotion piece per SAN byte (NBRQ, either case), 0 otherwise.
cdef unsigned char _PROMO_OF[256]
# Piece type per leading SAN byte (NBRQK), 0 otherwise.
cdef unsigned char _PIECE_OF[256]


cdef void _build_fast_tables() noexcept:
    cdef int c
    for c in range(256):
        _PROMO_OF[c] = 0
        _PIECE_OF[c] = 0
    _PROMO_OF[78] = _PROMO_OF[110] = KNIGHT  # N n
    _PROMO_OF[66] = _PROMO_OF[98] = BISHOP  # B b
    _PROMO_OF[82] = _PROMO_OF[114] = ROOK  # R r
    _PROMO_OF[81] = _PROMO_OF[113] = QUEEN  # Q q
    _PIECE_OF[78] = KNIGHT
    _PIECE_OF[66] = BISHOP
    _PIECE_OF[82] = ROOK
    _PIECE_OF[81] = QUEEN
    _PIECE_OF[75] = KING


_build_fast_tables()


cdef struct Fast:
    # _make's castling bookkeeping, as a table: a move from or to a square
    # ends the rights whose bits the square holds (rook squares, king squares).
    unsigned char touch[128]
    int rights                # bit i set while b.castle[i] >= 0


cdef void _fast_init(BoardCore b, Fast* f) noexcept nogil:
    cdef int i, r
    memset(f.touch, 0, sizeof(f.touch))
    f.rights = 0
    # A right ends when its rook's square is left or entered, or when its
    # king moves; a king that moved has no rights left to lose, so marking
    # its start square suffices.
    for i in range(4):
        r = b.castle[i]
        if r >= 0:
            f.rights |= 1 << i
            f.touch[r] |= 1 << i
            f.touch[b.king[i >> 1]] |= 1 << i


cdef inline bint _is_ws(unsigned char c) noexcept nogil:
    # Compiled twin only: the pure twin splits on the same six bytes in _split.
    return c == 32 or 9 <= c <= 13


cdef unsigned char _WS[256]  # byte classes as bytes: small tables stay in cache beside the scanner
for _i in range(256):
    _WS[_i] = _is_ws(_i)


cdef unsigned char _CUT[256]  # what ends a token in a text: whitespace, and the NUL after the text
for _i in range(256):
    _CUT[_i] = _WS[_i] or _i == 0


cdef unsigned char _ANNOTATION[256]
for _i in range(256):
    _ANNOTATION[_i] = _is_annotation(_i)


cdef inline const unsigned char* _skip_annotations(const unsigned char* q, const unsigned char* end) noexcept nogil:
    while q < end and _ANNOTATION[q[0]]:
        q += 1
    return q


cdef int _fast_castle(BoardCore b, Fast* f, const unsigned char* q, const unsigned char* end) noexcept nogil:
    """_fast_ply for ``O-O``/``O-O-O`` on a standard board, not in check; -1 otherwise.

    With the king on the e-file and the rook in the corner, neither shields a
    square the king crosses, and when the king is not in check nothing
    attacks those squares through it: only the one or two squares the king
    crosses or lands on need testing, on the board as it stands.
    """
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int them = us ^ 1
    cdef int k, r, step, mv
    cdef bint queenside
    if not (q[1] == 45 and q[2] == 79):  # -O
        return -1
    queenside = q[3] == 45 and q[4] == 79
    q = _skip_annotations(q + (5 if queenside else 3), end)
    if q != end or b.chess960 or b.checked:
        return -1
    r = b.castle[2 * us + queenside]
    if r < 0:
        return -1
    k = b.king[us]
    step = -1 if queenside else 1
    if sq[k + step] or sq[k + 2 * step] or (queenside and sq[k - 3]):
        return -1
    if _attacked(b, k + step, them) or _attacked(b, k + 2 * step, them):
        return -1
    mv = k | r << 7 | FLAG_CASTLE << 17
    _fast_make(b, f, mv)
    return mv


cdef inline void _lose_rights(BoardCore b, Fast* f, int lost) noexcept nogil:
    cdef int i
    f.rights ^= lost
    for i in range(4):
        if lost >> i & 1:
            b.castle[i] = -1


cdef inline bint _discovers_check(BoardCore b, int frm, int k, int us) noexcept nogil:
    """Whether vacating ``frm`` opened a line from a ``us`` slider to the enemy king on ``k``."""
    cdef signed char* sq = b.sq
    cdef int j = _LINE_DIR[frm - k + 119]
    cdef int d, s, p, t
    if not _slider_on_ray(b, us, k, j):
        return False
    d = _KING_D[j]
    s = k + d
    while not s & 0x88 and not sq[s]:
        s += d
    if s & 0x88:
        return False
    p = sq[s]
    t = p & 7
    return p >> 3 == us and (t == QUEEN or t == _line_piece(d))


cdef inline bint _piece_checks(signed char* sq, int t, int to, int k) noexcept nogil:
    """Whether a knight, bishop, rook or queen (type ``t``) on ``to`` attacks the king on ``k``."""
    cdef int d = _STEP[t][k - to + 119]
    cdef int s
    if not d:
        return False
    s = to + d
    while s != k and not sq[s]:
        s += d
    return s == k


cdef inline int _fast_ply(BoardCore b, Fast* f, const unsigned char* q, const unsigned char* end) noexcept nogil:
    """Resolve the common SAN token ``q[0:end - q]`` and play it: its move, or -1 and nothing done.

    Reads byte by byte and stops at the first byte it does not expect: no
    read goes past the token's end or its start + 6, whichever is further.
    The move is played here, where its piece and kind are known
    (_fast_make's work without its dispatch); -1 leaves the token to
    _resolve_san.
    """
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int them = us ^ 1
    cdef int c = q[0]
    cdef int t, ff, fr, dest, target, promo, frm, fwd, flag, mv, m, i, d, s, k, pawn, placed, ep, lost
    cdef uint64_t cand
    if 97 <= c <= 104:  # a pawn move: e4, exd5, e8=Q, exd8Q
        if 49 <= q[1] <= 56:
            ff = -1
            dest = (q[1] - 49) * 16 + c - 97
            q += 2
        elif q[1] == 120 and 97 <= q[2] <= 104 and 49 <= q[3] <= 56:  # x
            ff = c - 97
            dest = (q[3] - 49) * 16 + q[2] - 97
            if ff - (dest & 7) != 1 and (dest & 7) - ff != 1:
                return -1
            q += 4
        else:
            return -1
        promo = _PROMO_OF[q[0]]
        if promo:
            q += 1
        elif q[0] == 61 and _PROMO_OF[q[1]]:  # =
            promo = _PROMO_OF[q[1]]
            q += 2
        q = _skip_annotations(q, end)
        if q != end:
            return -1
        fwd = _PAWN_FWD[us]
        pawn = PAWN | us << 3
        target = sq[dest]
        flag = 0
        if ff < 0:
            if target:
                return -1
            frm = dest - fwd
            if frm & 0x88:
                return -1
            if sq[frm] != pawn:
                if sq[frm] or dest >> 4 != 3 + us:
                    return -1
                frm -= fwd
                if sq[frm] != pawn:
                    return -1
                flag = FLAG_DOUBLE
        else:
            frm = dest - fwd - (dest & 7) + ff
            if frm & 0x88 or sq[frm] != pawn:
                return -1
            if not target:
                if dest != b.ep:
                    return -1
                flag = FLAG_EP
            elif target >> 3 == us:
                return -1
        if (dest >> 4 == 7 - 7 * us) != (promo != 0):
            return -1
        mv = frm | dest << 7 | promo << 14 | flag << 17
        if not _is_legal(b, mv):
            return -1
        # Play it.
        placed = promo | us << 3 if promo else pawn
        sq[frm] = 0
        sq[dest] = placed
        b.bb[pawn] ^= _BIT[frm]
        b.bb[placed] ^= _BIT[dest]
        b.bb[target] ^= _BIT[dest]  # no capture: bb[0], which nothing reads, takes it
        lost = f.rights & f.touch[dest]  # a rook taken on its square
        if lost:
            _lose_rights(b, f, lost)
        if flag == FLAG_EP:
            s = dest - fwd
            sq[s] = 0
            b.bb[PAWN | them << 3] ^= _BIT[s]
        b.fullmove += us
        b.stm = them
        b.ep = -1
        k = b.king[them]
        if flag == FLAG_DOUBLE:
            # Only a pawn beside the one that moved could take en passant.
            c = PAWN | them << 3
            if ((not (dest - 1) & 0x88 and sq[dest - 1] == c) or (not (dest + 1) & 0x88 and sq[dest + 1] == c)):
                ep = frm + fwd
                if _has_legal_ep(b, ep):
                    b.ep = ep
        if flag == FLAG_EP:
            b.checked = _attacked(b, k, us)
        elif promo:
            b.checked = _piece_checks(sq, promo, dest, k) or _discovers_check(b, frm, k, us)
        else:
            b.checked = k == dest + fwd - 1 or k == dest + fwd + 1 or _discovers_check(b, frm, k, us)
        return mv
    t = _PIECE_OF[c]
    if not t:
        if c == 79:  # O
            return _fast_castle(b, f, q, end)
        return -1
    # A piece move: N f3, N x f3, N b d2, N 1 d2, N b1 d2, each with an optional x.
    q += 1
    ff = -1
    fr = -1
    c = q[0]
    if 97 <= c <= 104:
        if 49 <= q[1] <= 56:
            if q[2] == 120 or 97 <= q[2] <= 104:  # an origin square, then the target
                ff = c - 97
                fr = q[1] - 49
                q += 2
        elif q[1] == 120 or 97 <= q[1] <= 104:
            ff = c - 97
            q += 1
        else:
            return -1
    elif 49 <= c <= 56:
        fr = c - 49
        q += 1
    if q[0] == 120:
        q += 1
    if not (97 <= q[0] <= 104 and 49 <= q[1] <= 56):
        return -1
    dest = (q[1] - 49) * 16 + q[0] - 97
    q = _skip_annotations(q + 2, end)
    if q != end:
        return -1
    target = sq[dest]
    if target and target >> 3 == us:
        return -1
    cand = b.bb[t | us << 3] & _REACH[t][dest]
    if ff >= 0:
        cand &= 0x0101010101010101ULL << ff
    if fr >= 0:
        cand &= 0xFFULL << (8 * fr)
    mv = -1
    while cand:
        i = fastpgn_ctz64(cand)
        cand &= cand - 1
        frm = _sq88(i)
        # A slider reaches dest only over empty squares (a knight's or king's step is the whole way).
        d = _STEP[t][frm - dest + 119]
        s = dest + d
        while s != frm and not sq[s]:
            s += d
        if s != frm:
            continue
        m = frm | dest << 7
        if _is_legal(b, m):
            if mv >= 0:
                return -1  # ambiguous: _resolve_san words the error
            mv = m
    if mv < 0:
        return -1
    # Play it.
    frm = mv & 127
    placed = t | us << 3
    sq[frm] = 0
    sq[dest] = placed
    b.bb[placed] ^= _BIT[frm] | _BIT[dest]
    b.bb[target] ^= _BIT[dest]  # no capture: bb[0], which nothing reads, takes it (no branch to guess)
    if t == KING:
        b.king[us] = dest
    lost = f.rights & (f.touch[frm] | f.touch[dest])
    if lost:
        _lose_rights(b, f, lost)
    b.fullmove += us
    b.stm = them
    b.ep = -1
    k = b.king[them]
    b.checked = _piece_checks(sq, t, dest, k) or _discovers_check(b, frm, k, us)  # a king's step never reaches a king
    return mv


cdef void _fast_pass(BoardCore b) noexcept nogil:
    """_make_null for san_to_uci's private board: no key or halfmove clock, which that board does not keep."""
    b.fullmove += b.stm
    b.stm ^= 1
    b.ep = -1
    b.checked = False


cdef inline void _fast_make(BoardCore b, Fast* f, int mv) noexcept nogil:
    """_make for san_to_uci's private board: the bitboards kept, no undo record, no key or halfmove clock.

    Not for the null move (_fast_pass).
    """
    cdef signed char* sq = b.sq
    cdef int us = b.stm
    cdef int frm = mv & 127
    cdef int to = (mv >> 7) & 127
    cdef int promo = (mv >> 14) & 7
    cdef int flag = mv >> 17
    cdef int square, lost, i, ep, pawn
    _move_pieces(b, us, frm, to, promo, flag, &square)
    if f.rights:
        lost = f.rights & (f.touch[frm] | f.touch[to])
        if lost:
            _lose_rights(b, f, lost)
    if us == BLACK:
        b.fullmove += 1
    b.stm = us ^ 1
    b.ep = -1
    if flag == FLAG_DOUBLE:
        # Only a pawn beside the one that moved could take en passant.
        pawn = PAWN | (us ^ 1) << 3
        if ((not (to - 1) & 0x88 and sq[to - 1] == pawn) or (not (to + 1) & 0x88 and sq[to + 1] == pawn)):
            ep = frm + _PAWN_FWD[us]
            if _has_legal_ep(b, ep):
                b.ep = ep
    b.checked = _gives_check(b, frm, to, flag)


# -- the replay loop over a game's plies ------------------------------------------------------

cdef object _moves_text(sans, const unsigned char** p, Py_ssize_t* n):
    """Point ``p``/``n`` at a game's moves as UTF-8 (a NUL follows them); returns the object that owns them.

    bytes and ASCII str are read in place; other str is encoded. Cython-only:
    the pure twin decodes bytes instead (``_text``).
    """
    if isinstance(sans, bytes):
        p[0] = <const unsigned char*>PyBytes_AS_STRING(sans)
        n[0] = PyBytes_GET_SIZE(sans)
        return sans
    if type(sans) is str and PyUnicode_IS_ASCII(sans):
        # ASCII text is its own UTF-8: read it in place, no copy.
        p[0] = <const unsigned char*>PyUnicode_DATA(sans)
        n[0] = PyUnicode_GET_LENGTH(sans)
        return sans
    data = _split(sans)
    p[0] = <const unsigned char*>PyBytes_AS_STRING(data)
    n[0] = PyBytes_GET_SIZE(data)
    return data


cdef struct Stuck:
    # Where _play_core stopped: the ply that did not resolve, its bytes, and
    # _resolve_san's answer (the error code and its details) for _san_error.
    const unsigned char* text
    Py_ssize_t n
    int code
    int info[4]


cdef int _slow_ply(BoardCore b, Fast* f, const unsigned char* p, Py_ssize_t n, int* info) noexcept nogil:
    """A ply _fast_ply left, resolved by _resolve_san and played: its move, or the error code (``info`` says more)."""
    cdef int mv
    info[0] = info[1] = info[2] = info[3] = 0
    mv = _resolve_san(b, p, <int>n, info)
    if mv == NULL_MOVE:
        _fast_pass(b)
    elif mv >= 0:
        _fast_make(b, f, mv)
    return mv


# _play_core calls _slow_ply through this pointer, so the C compiler keeps the rare path
# out of the loop (inlined, it grew the loop and cost the common plies about 1%, callgrind).
cdef int (*_slow_ply_call)(BoardCore, Fast*, const unsigned char*, Py_ssize_t, int*) noexcept nogil
_slow_ply_call = _slow_ply


cdef Py_ssize_t _play_core(BoardCore b, Fast* f, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                           Py_ssize_t nplies, char* out, Stuck* stuck, Plies* plies) noexcept nogil:
    """Play plies ``buf[spans[2 * i]:spans[2 * i + 1]]`` on private board ``b``; UCI into ``out`` unless NULL.

    ``f`` holds ``b``'s castling tables. Each ply is read in place unless it
    ends within 8 bytes of ``limit`` (the bytes of ``buf`` that may be read):
    _fast_ply may read a few bytes past a short token, so those few are read
    from a padded copy. Returns the bytes of UCI written with a space after
    each move (``out`` not NULL), else the number of plies; -1 at a move that
    does not resolve, ``b`` left on the position before it and ``stuck``
    filled in (its text points into ``buf``). ``plies`` not NULL: each ply's
    position noted there too (_note_ply).
    """
    cdef const unsigned char* p
    cdef const Py_ssize_t* sp = spans
    cdef const Py_ssize_t* sp_end = spans + 2 * nplies
    cdef const Py_ssize_t* sp_copied  # the plies after this one end within 8 bytes of limit
    cdef Py_ssize_t n, k = nplies
    cdef unsigned char tok[32]
    cdef char* o = out
    cdef int mv
    cdef int clock = b.halfmove     # the fast path keeps no halfmove clock: _note_ply counts it for the FENs
    cdef int pieces = _pieces(b) if plies != NULL and plies.fens != NULL else 0
    cdef Py_ssize_t fen_at = 0
    cdef PieceKey last              # the pieces' part of the key, carried from ply to ply (_note_ply)
    last.known = False
    while k > 0 and spans[2 * k - 1] + 8 > limit:
        k -= 1
    sp_copied = spans + 2 * k
    while sp != sp_end:
        p = <const unsigned char*>buf + sp[0]
        n = sp[1] - sp[0]
        sp += 2
        if n >= <Py_ssize_t>sizeof(tok):
            mv = -1  # no SAN move is that long: _resolve_san words the error
        else:
            if sp > sp_copied:
                memset(tok, 0, sizeof(tok))
                memcpy(tok, p, n)
                p = tok
            mv = _fast_ply(b, f, p, p + n)
        if mv < 0:
            mv = _slow_ply_call(b, f, p, n, stuck.info)
            if mv < 0:
                stuck.text, stuck.n, stuck.code = <const unsigned char*>buf + (sp - 2)[0], n, mv
                return -1
        if plies != NULL:
            _note_ply(b, mv, plies, (sp - spans) // 2 - 1, &clock, &pieces, &fen_at, &last)
        if o != NULL:
            o += _write_uci(b.chess960, mv, o)
            o[0] = 32
            o += 1
    return o - out if out != NULL else nplies


cdef inline int _pieces(BoardCore b) noexcept nogil:
    return _popcount(b.bb[1] | b.bb[2] | b.bb[3] | b.bb[4] | b.bb[5] | b.bb[6]
                     | b.bb[9] | b.bb[10] | b.bb[11] | b.bb[12] | b.bb[13] | b.bb[14])


cdef void _note_ply(BoardCore b, int mv, Plies* plies, Py_ssize_t i, int* clock, int* pieces,
                    Py_ssize_t* fen_at, PieceKey* last) noexcept nogil:
    """Ply ``i``'s position, ``mv`` just played on ``b``, into ``plies``: its Polyglot key, its FEN.

    ``clock`` and ``pieces`` are the halfmove clock and the number of pieces
    before the ply (after it on return): the fast path keeps no clock, so a
    capture is seen here as one piece fewer.
    """
    cdef int flag = mv >> 17
    cdef int to = (mv >> 7) & 127
    if plies.keys != NULL:
        plies.keys[i] = _pg_pieces_since(b, last) ^ _pg_rest(b, (mv & 127) + _PAWN_FWD[b.stm ^ 1]
                                                          if flag == FLAG_DOUBLE else -1)
    if plies.fens != NULL:
        if flag != FLAG_CASTLE and flag != FLAG_NULL and ((mv >> 14) & 7 or b.sq[to] & 7 == PAWN):
            clock[0] = 0
        elif _pieces(b) != pieces[0]:
            clock[0] = 0
        else:
            clock[0] += 1
        pieces[0] = _pieces(b)
        fen_at[0] += _write_fen(b, clock[0], plies.fens + fen_at[0])
        plies.fen_ends[i] = fen_at[0]


cdef Py_ssize_t _play_spans(BoardCore b, Fast* f, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                            Py_ssize_t nplies, char* out, bint from_bytes) except -1:
    """_play_core, a move that does not resolve raised as the pure twin's error.

    The move's text is decoded as the twin decodes the input (``from_bytes``:
    bytes, else str).
    """
    cdef Stuck stuck
    cdef Py_ssize_t done = _play_core(b, f, buf, limit, spans, nplies, out, &stuck, NULL)
    if done < 0:
        raise _stuck_error(b, &stuck, from_bytes)
    return done


cdef object _stuck_error(BoardCore b, Stuck* stuck, bint from_bytes):
    """The pure twin's error for the move _play_core stopped at on ``b``, its text decoded as the twin
    decodes the input (``from_bytes``: bytes, else str)."""
    return _san_error(b, (<const char*>stuck.text)[:stuck.n].decode("utf-8", "replace" if from_bytes else "surrogatepass"),
                      stuck.code, stuck.info[0], stuck.info[1], stuck.info[2], stuck.info[3])


cdef Py_ssize_t _play_ready(BoardCore b, Fast* f, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                            Py_ssize_t nplies, char* out, Stuck* stuck, Plies* plies=NULL) noexcept nogil:
    """_play_core on a board set up, without the space after the last UCI move: what validate_spans
    (``out`` NULL) or uci_spans returns, or -1."""
    cdef Py_ssize_t size = _play_core(b, f, buf, limit, spans, nplies, out, stuck, plies)
    if out == NULL or size <= 0:
        return size
    return size - 1


cdef Py_ssize_t _replay_fast(BoardCore b, bint standard, const unsigned char* text, Py_ssize_t n, char* out,
                             bint from_bytes) except -1:
    """Play the SAN moves ``text[0:n]`` (whitespace between them) on private board ``b``: _play_spans's answer.

    ``standard``: ``b`` holds the standard start, whose castling tables are
    ready. The text is cut into tokens a batch at a time, on the stack.
    """
    cdef Py_ssize_t spans[2 * 128]
    cdef Py_ssize_t i = 0, k, done = 0
    cdef Fast f
    if standard:
        f = _START_FAST
    else:
        _fast_init(b, &f)
    while True:
        k = 0
        while k < 128:
            while _WS[text[i]]:  # the NUL after the text stops it
                i += 1
            if i >= n:
                break
            spans[2 * k] = i
            i += 1
            while True:
                while not _CUT[text[i]]:
                    i += 1
                if text[i] or i >= n:
                    break
                i += 1  # a NUL inside the text is part of its token, as in the pure twin
            spans[2 * k + 1] = i
            k += 1
        if k == 0:
            return done
        done += _play_spans(b, &f, <const char*>text, n, spans, k, out + done if out != NULL else NULL, from_bytes)


# san_to_uci's output buffer, kept between games. Safe to share: nothing
# between filling it and copying it out runs Python code or drops the GIL.
cdef char* _uci_buf = NULL
cdef Py_ssize_t _uci_cap = 0


# -- C-level entry (declared in board/_board_cy.pxd) ------------------------------------------------

# validate_spans replays a game on _SPANS_BOARD unless a replay there is under
# way (a rejected game's error is built with Python objects, and only then
# could Python code run and come back here): no Python object for a game that
# passes.
cdef BoardCore _SPANS_BOARD = BoardCore.__new__(BoardCore)
cdef bint _spans_busy = False


cdef Py_ssize_t _replay_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                              const char* fen, Py_ssize_t fenlen, bint chess960, char* out) except -1:
    """validate_spans / uci_spans: _play_from, a FEN it leaves read by _set_fen (which words what is wrong),
    a move that does not resolve raised."""
    global _spans_busy
    cdef bint shared = not _spans_busy
    cdef BoardCore b = _SPANS_BOARD if shared else BoardCore.__new__(BoardCore)
    cdef Fast f
    cdef Stuck stuck
    cdef Py_ssize_t size
    _spans_busy = True
    try:
        size = _play_from(b, buf, limit, spans, nplies, out, fen, fenlen, chess960, &stuck)
        if size == -2:
            b = _new_board(fen[:fenlen].decode("utf-8", "replace"), chess960)
            _fast_init(b, &f)
            size = _play_ready(b, &f, buf, limit, spans, nplies, out, &stuck)
        if size < 0:
            raise _stuck_error(b, &stuck, True)
        return size
    finally:
        if shared:
            _spans_busy = False


# -- FEN without the GIL -----------------------------------------------------------------------

cdef int _fen_native(BoardCore b, const char* fen, Py_ssize_t n, bint chess960) noexcept nogil:
    """_read_fen on the FEN bytes ``fen[0:n]`` where it is plain: 0, or -1 for _set_fen to do it (or word it).

    Plain: printable ASCII fields with single spaces between them, six or
    four (see _fen_fields); other whitespace, or a FEN _read_fen finds wrong,
    is left to _set_fen, which reads fields between any whitespace and words
    what is wrong.
    """
    cdef const char* field[7]
    cdef FenFault fault
    cdef int nfields = _fen_fields(fen, n, field, True)
    if nfields != 6 and nfields != 4:
        return -1
    return 0 if _read_fen(b, field, nfields, chess960, &fault) == FEN_OK else -1


cdef Py_ssize_t play_from(void* board, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                          Py_ssize_t nplies, char* out, const char* fen, Py_ssize_t fenlen,
                          bint chess960) noexcept nogil:
    """validate_spans / uci_spans without the GIL, for the FENs _fen_native reads; see board/_board_cy.pxd."""
    cdef Stuck stuck
    return _play_from(<BoardCore>board, buf, limit, spans, nplies, out, fen, fenlen, chess960, &stuck)


cdef Py_ssize_t play_plies(void* board, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                           Py_ssize_t nplies, char* out, const char* fen, Py_ssize_t fenlen,
                           bint chess960, Plies* plies) noexcept nogil:
    """play_from, each ply's position noted in ``plies``; see board/_board_cy.pxd."""
    cdef Stuck stuck
    return _play_from(<BoardCore>board, buf, limit, spans, nplies, out, fen, fenlen, chess960, &stuck, plies)


cdef Py_ssize_t _play_from(BoardCore b, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                           Py_ssize_t nplies, char* out, const char* fen, Py_ssize_t fenlen,
                           bint chess960, Stuck* stuck, Plies* plies=NULL) noexcept nogil:
    """_play_ready on ``b`` set up from ``fen`` (NULL: the standard start); -2 for a FEN _fen_native leaves."""
    cdef Fast f
    b.chess960 = chess960
    if fen == NULL:
        _set_start(b)
        f = _START_FAST
    else:
        if _fen_native(b, fen, fenlen, chess960) < 0:
            return -2
        _fast_init(b, &f)
    return _play_ready(b, &f, buf, limit, spans, nplies, out, stuck, plies)


def _native_fen(bytes fen, bint chess960=False):
    """_fen_native from Python, for tests: the board it sets up, or None where it leaves the FEN to _set_fen."""
    cdef BoardCore b = BoardCore.__new__(BoardCore)
    b.chess960 = chess960
    if _fen_native(b, fen, len(fen), chess960) < 0:
        return None
    return b


cdef object spans_board():
    """A private board for play_from; see board/_board_cy.pxd."""
    return BoardCore.__new__(BoardCore)


cdef Py_ssize_t validate_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                               const char* fen, Py_ssize_t fenlen, bint chess960) except -1:
    """validate_san for a game's moves where they lie in a block; see board/_board_cy.pxd."""
    return _replay_spans(buf, limit, spans, nplies, fen, fenlen, chess960, NULL)


cdef Py_ssize_t uci_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                          const char* fen, Py_ssize_t fenlen, bint chess960, char* out) except -1:
    """san_to_uci for a game's moves where they lie in a block; see board/_board_cy.pxd."""
    return _replay_spans(buf, limit, spans, nplies, fen, fenlen, chess960, out)


def _validate_spans(bytes buf, spans, fen=None, chess960=False):
    """validate_spans from Python, for tests: ``spans`` is a list of (start, end) per ply."""
    cdef Py_ssize_t n = len(spans)
    cdef Py_ssize_t* c = <Py_ssize_t*>malloc((2 * n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t i
    if c == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c[2 * i] = spans[i][0]
            c[2 * i + 1] = spans[i][1]
        data = fen.encode("utf-8") if fen is not None else None
        return validate_spans(buf, len(buf), c, n, <const char*>data if data is not None else NULL,
                              len(data) if data is not None else 0, chess960)
    finally:
        free(c)


cdef BoardCore _START_BOARD = BoardCore(_START)
cdef Fast _START_FAST
_fast_init(_START_BOARD, &_START_FAST)
