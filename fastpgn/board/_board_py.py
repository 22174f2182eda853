"""Pure-Python twin of the board kernel (fastpgn.board._board_cy): same functions, same order, same errors.

The kernel owns positions and moves: FEN in and out, legal move generation,
make/unmake, SAN and UCI in both directions, check and what mate and draw
detection need (any legal move, mating material, repetitions), position keys,
perft, and the per-game replay entry points (``san_to_uci``, ``validate_san``,
``replay``, ``replay_fens``, ``canonical_san``) that the dump converter calls
once per game. The compiled twin's docstring says only what it adds.

Representation: a 0x88 mailbox (square = 16 * rank + file; a square is off
the board when ``square & 0x88``), piece codes ``type | colour << 3``, an
incremental Zobrist key, make/unmake with an undo record per ply. Internal
moves are ints ``from | to << 7 | promotion << 14 | flag << 17``. Castling is
stored as the king taking its own rook, so Chess960 needs no special case;
only what is handed out (UCI, Move objects) looks at the ``chess960`` flag.
The null move (a pass) is ``NULL_MOVE``, flag 4 and no squares; handed out it
is ``Move.null()`` (a1 to a1, false as a bool), as python-chess has it.
Public squares are 0..63 (a1 = 0, h8 = 63).

Accepted input:

* FEN: six fields, or four (Chess.jl writes no clocks; they default to 0 1).
  Castling as ``KQkq``, X-FEN (``K``/``Q`` = outermost rook, a file letter
  otherwise) or Shredder-FEN (file letters). Any en passant square (``a1`` to
  ``h8``) is accepted, as python-chess accepts it; it is stored,
  written in FEN and hashed only when an en passant capture is legal
  (python-chess's default ``fen()``), else dropped without a word.
* SAN: ``[KQRBN][file][rank][x|-]<square>[[=]<piece>]`` (pawn moves have no
  piece letter; ``e2e4``-style long forms pass), ``O-O``/``O-O-O`` or with
  zeros; any trailing mix of ``+ # ! ?`` is ignored, so check marks and
  annotations such as ``?!`` pass through. The capture mark is not checked
  for pieces; a pawn capture is the pawn's file then the target square.
  A null move is ``--`` or ``Z0`` (ChessBase, python-chess) or ``0000``.
* UCI: ``e2e4``, ``e7e8q``; castling as king to the g/c file or as king takes
  own rook (the only form written for Chess960); ``0000`` for a null move.

A null move passes: the other side moves next, the en passant square goes,
the halfmove clock counts on, the fullmove number as after any move, and
the castling rights stay (python-chess's null move). It is not among the
legal moves, and ``is_legal`` says False of it, as in python-chess; it is
played by ``push``, ``push_san`` and ``push_uci`` and in a game's SAN, and
written ``--`` in SAN and ``0000`` in UCI. Unlike python-chess, a side in
check cannot pass (ChessBase does not let it either): that would leave a
position where the king can be taken, which no later move could mend.

Errors are InvalidFENError, IllegalMoveError and AmbiguousMoveError from
fastpgn.errors; move errors name the move number and the move, e.g.
``illegal move 4. Qxf7#: no white queen can move to f7``.

What is not hot is not here: fastpgn.board's ``Board`` subclasses this
kernel's ``BoardCore`` and adds game end (outcome, draws), copies, pickling
and printing once for both kernels; ``replay`` hands out that Board (the
module attribute ``Board`` is it, over this kernel).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Self, TypeVar, overload

from fastpgn.board._polyglot import RANDOM64
from fastpgn.errors import AmbiguousMoveError, BoardError, IllegalMoveError, InvalidFENError, PGNError

if TYPE_CHECKING:
    from fastpgn.board import Board

WHITE, BLACK = 0, 1
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
FLAG_CASTLE, FLAG_EP, FLAG_DOUBLE, FLAG_NULL = 1, 2, 3, 4
NULL_MOVE = FLAG_NULL << 17  # the null move: a pass, no squares
MAX_CLOCK = 1_000_000_000

_KNIGHT_D = (33, 31, 18, 14, -14, -18, -31, -33)
_KING_D = (16, 17, 1, -15, -16, -17, -1, 15)
_ROOK_D = (16, 1, -16, -1)
_BISHOP_D = (17, -15, -17, 15)
_PAWN_FWD = (16, -16)
_SQUARES = tuple(16 * r + f for r in range(8) for f in range(8))
_FILES = "abcdefgh"
_SYMBOLS = ".PNBRQK..pnbrqk."
_NAMES = ("", "pawn", "knight", "bishop", "rook", "queen", "king")
_COLOURS = ("white", "black")
_PROMO_UCI = "..nbrq"
_PROMO_SAN = "..NBRQ"
_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
_WS = str.maketrans("\t\n\v\f\r", "     ")

# Resolution codes of _resolve_san / _resolve_castle (moves are >= 0).
ERR_SYNTAX, ERR_NONE, ERR_CHECK, ERR_AMBIGUOUS, ERR_PROMO_MISSING = -1, -2, -3, -4, -5
ERR_PROMO_BAD, ERR_OWN, ERR_NO_RIGHT, ERR_BLOCKED, ERR_ATTACKED = -6, -7, -8, -9, -10
ERR_NULL_CHECK = -11

# An undo record: the move, the piece it captured, and the castling rooks, en
# passant square, halfmove clock, position key and check flag before it.
_Undo = tuple[int, int, list[int], int, int, int, bool]
_B = TypeVar("_B", bound="BoardCore")


def _build_line() -> tuple[int, ...]:
    # _LINE[to - from + 119] is the step from `from` towards `to` when the two
    # squares share a rank, file or diagonal, else 0: a move whose origin is
    # not on a line with its own king cannot expose that king.
    line = [0] * 239
    for d in _KING_D:
        for n in range(1, 8):
            line[d * n + 119] = d
    return tuple(line)


_LINE = _build_line()


def _build_knight_reach() -> tuple[bool, ...]:
    reach = [False] * 239
    for d in _KNIGHT_D:
        reach[d + 119] = True
    return tuple(reach)


_KNIGHT_REACH = _build_knight_reach()
_MASK64 = (1 << 64) - 1


def _zobrist() -> tuple[int, ...]:
    # splitmix64, fixed seed: both backends draw the same keys in the same
    # order, so position keys are equal across backends.
    state = 0x9E3779B97F4A7C15
    keys = []
    for _ in range(16 * 128 + 128 + 8 + 1):
        state = (state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        keys.append(z ^ (z >> 31))
    return tuple(keys)


_Z = _zobrist()
_PG = RANDOM64  # the Polyglot key's numbers, from the book format's specification
_Z_CASTLE = 16 * 128
_Z_EP = 16 * 128 + 128
_Z_TURN = _Z[16 * 128 + 128 + 8]


def _sq_name(s: int) -> str:
    return _FILES[s & 7] + str((s >> 4) + 1)


def _square_arg(square: object) -> int:
    """0..63 or a name like ``"e4"`` -> 0x88 square."""
    if isinstance(square, str):
        if len(square) == 2 and "a" <= square[0] <= "h" and "1" <= square[1] <= "8":
            return (ord(square[1]) - 49) * 16 + ord(square[0]) - 97
    elif isinstance(square, int) and not isinstance(square, bool) and 0 <= square < 64:
        return (square >> 3) * 16 + (square & 7)
    raise BoardError(f"bad square {square!r}: use 0..63 or a name like 'e4'")


def _quote(text: str) -> str:
    return repr(text if len(text) <= 100 else text[:100] + "...")


class Move:
    """A move as squares 0..63 (a1 = 0) and a promotion letter (``fastpgn.Move``).

    A board hands out castling as its ``uci`` writes it: the king to the g or
    c file (``e1g1``), or the king taking its own rook on a Chess960 board
    (``e1h1``); a board takes either form back. The null move (a pass) is
    ``Move.null()``: a1 to a1, false as a bool, ``0000`` in UCI.
    """

    __slots__ = ("from_square", "to_square", "promotion")

    def __init__(self, from_square: int, to_square: int, promotion: str | None = None) -> None:
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
    def null(cls) -> Self:
        """The null move: a pass (``0000`` in UCI, ``--`` in SAN).

        >>> Move.null(), bool(Move.null()), Move.null() == Move.from_uci("0000")
        (Move.from_uci('0000'), False, True)
        """
        return cls(0, 0)

    @classmethod
    def from_uci(cls, text: str) -> Self:
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

    def uci(self) -> str:
        """The move in UCI (castling as the board that made the move writes it).

        >>> Move(12, 28).uci(), Move.from_uci("a7a8n").uci(), Move.null().uci()
        ('e2e4', 'a7a8n', '0000')
        """
        f, t = self.from_square, self.to_square
        if not (f or t or self.promotion):
            return "0000"
        return (_FILES[f & 7] + str((f >> 3) + 1) + _FILES[t & 7] + str((t >> 3) + 1)
                + (self.promotion or ""))

    def __bool__(self) -> bool:
        """False for the null move, as python-chess's ``Move.null()``."""
        return bool(self.from_square or self.to_square or self.promotion)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.from_square == other.from_square and self.to_square == other.to_square
                and self.promotion == other.promotion)

    def __hash__(self) -> int:
        return hash((self.from_square, self.to_square, self.promotion))

    def __repr__(self) -> str:
        return f"Move.from_uci({self.uci()!r})"

    def __str__(self) -> str:
        return self.uci()

    def __reduce__(self) -> tuple[type[Move], tuple[int, int, str | None]]:
        return (Move, (self.from_square, self.to_square, self.promotion))


class BoardCore:
    """A position and the moves that led to it: the kernel's part of ``fastpgn.Board``.

    fastpgn.board's Board subclasses it and adds, once for both kernels,
    what is not hot: game end, copies, pickling, printing, the docs.
    """

    __slots__ = ("sq", "king", "castle", "stm", "ep", "halfmove", "fullmove", "zkey", "fen_ep", "checked",
                 "chess960", "stack")

    def __init__(self, fen: str | None = None, chess960: bool = False) -> None:
        self.sq = [0] * 128
        self.king = [0, 0]
        self.castle = [-1, -1, -1, -1]
        self.stm = WHITE
        self.ep = -1
        self.halfmove = 0
        self.fullmove = 1
        self.zkey = 0
        self.fen_ep = -1    # the FEN's en passant square as written (-1: none), for the Polyglot key
        self.checked = False
        self.chess960 = bool(chess960)
        self.stack: list[_Undo] = []
        if fen is None:
            _set_start(self)
        else:
            _set_fen(self, fen, self.chess960)

    # -- position --------------------------------------------------------
    def fen(self, shredder: bool = False) -> str:
        """Six-field FEN; castling as X-FEN (``KQkq``) or Shredder-FEN (``HAha``)."""
        return _get_fen(self, shredder)

    def piece_at(self, square: int | str) -> str | None:
        """The piece on a square (0..63 or ``"e4"``) as a FEN letter, or None."""
        p = self.sq[_square_arg(square)]
        return _SYMBOLS[p] if p else None

    @property
    def turn(self) -> str:
        """The side to move: ``"w"`` or ``"b"``."""
        return "wb"[self.stm]

    @property
    def castling_rights(self) -> str:
        """The FEN castling field (X-FEN), ``"-"`` when none."""
        return _castling_field(self, False)

    def has_castling_right(self, colour: str, side: str) -> bool:
        """Whether ``colour`` (``"w"``/``"b"``) keeps the right to castle on ``side`` (``"k"``/``"q"``)."""
        if colour not in ("w", "b") or side not in ("k", "q"):
            raise BoardError(f"bad castling query {colour!r}, {side!r}: use 'w'/'b' and 'k'/'q'")
        return self.castle[(colour == "b") * 2 + (side == "q")] >= 0

    @property
    def ep_square(self) -> str | None:
        """The en passant target square's name when an en passant capture is legal, else None."""
        return _sq_name(self.ep) if self.ep >= 0 else None

    @property
    def halfmove_clock(self) -> int:
        return self.halfmove

    @property
    def fullmove_number(self) -> int:
        return self.fullmove

    @property
    def ply(self) -> int:
        """Moves pushed since this board was set up."""
        return len(self.stack)

    def key(self) -> int:
        """The position key (64-bit Zobrist): equal keys, same position for repetition."""
        return self.zkey

    def zobrist(self) -> int:
        """The Polyglot key of the position, as a signed 64-bit integer (the same bits as opening books' key)."""
        return _signed(_polyglot(self, _pg_ep(self)))

    # -- moves -----------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every legal move, in generation order."""
        return [_to_move(self, mv) for mv in _gen_legal(self)]

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is one of ``legal_moves()``: never the null move, which ``push`` plays all the same."""
        mv = _from_move(self, move)
        return mv >= 0 and mv != NULL_MOVE

    def push(self, move: Move) -> None:
        """Play a legal Move, or the null move (not in check); IllegalMoveError otherwise."""
        mv = _from_move(self, move)
        if mv < 0:
            raise _not_legal(self, move, mv)
        _push(self, mv)

    def pop(self) -> Move:
        """Take back the last move and return it."""
        if not self.stack:
            raise IllegalMoveError("no move to take back")
        return _to_move(self, _pop(self))

    def parse_san(self, san: str) -> Move:
        """The legal move a SAN string names (annotations and check marks allowed)."""
        return _to_move(self, _san_move(self, san))

    def push_san(self, san: str) -> Move:
        """Parse SAN, play it, return the move (castling as ``uci`` writes it on this board)."""
        mv = _san_move(self, san)
        _push(self, mv)
        return _to_move(self, mv)

    def parse_uci(self, uci: str) -> Move:
        """The legal move a UCI string names (castling as e1g1 or e1h1)."""
        return _to_move(self, _uci_move(self, uci))

    def push_uci(self, uci: str) -> Move:
        """Parse UCI, play it, return the move."""
        mv = _uci_move(self, uci)
        _push(self, mv)
        return _to_move(self, mv)

    def san(self, move: Move) -> str:
        """Canonical SAN of a legal move, with ``+``/``#``; ``--`` for the null move."""
        mv = _from_move(self, move)
        if mv < 0:
            raise _not_legal(self, move, mv)
        return _san_of(self, mv)

    def uci(self, move: Move) -> str:
        """UCI of a move here: castling as e1g1 (king takes rook for Chess960), the null move as ``0000``."""
        mv = _from_move(self, move)
        return _uci_of(self, mv) if mv >= 0 else _move_text(move)

    @property
    def move_stack(self) -> list[Move]:
        """The moves pushed since set-up, oldest first."""
        return [_to_move(self, u[0]) for u in self.stack]

    def is_check(self) -> bool:
        return _in_check(self)

    # -- what fastpgn.board writes Board's rules, copies and perft over ----
    def _has_legal_move(self) -> bool:
        return _any_legal(self)

    def _lacks_mating_material(self, colour: int) -> bool:
        return _insufficient(self, colour)

    def _repetition_count(self) -> int:
        return _repetitions(self)

    def _fifty_claimable(self) -> bool:
        return _can_claim_fifty(self)

    def _threefold_claimable(self) -> bool:
        return _can_claim_threefold(self)

    def _count_leaves(self, depth: int, bulk: bool) -> int:
        return _perft(self, depth, bulk)

    def _copy(self) -> Self:
        """An independent copy, history included, of this board's class."""
        return _copy(self)

    def _unwind(self) -> None:
        """Take back every pushed move."""
        while self.stack:
            _pop(self)


# -- set-up -------------------------------------------------------------

def _set_start(b: BoardCore) -> None:
    # A copy of the prepared start position: no FEN parsing per game.
    s = _START_BOARD
    b.sq = s.sq[:]
    b.king = s.king[:]
    b.castle = s.castle[:]
    b.stm = s.stm
    b.ep = s.ep
    b.halfmove = s.halfmove
    b.fullmove = s.fullmove
    b.zkey = s.zkey
    b.fen_ep = s.fen_ep
    b.checked = s.checked
    b.stack = []


def _parse_count(text: str, what: str, fen: str) -> int:
    if not text or len(text) > 10 or any(c not in "0123456789" for c in text):
        raise InvalidFENError(f"bad {what} {text!r} in FEN {_quote(fen)}")
    value = int(text)
    if value > MAX_CLOCK:
        raise InvalidFENError(f"{what} {value} is too large in FEN {_quote(fen)}")
    return value


def _set_fen(b: BoardCore, fen: object, chess960: bool, drop: bool = False) -> None:
    if not isinstance(fen, str):
        raise InvalidFENError(f"FEN must be a string, not {type(fen).__name__}")
    fields = fen.split()
    if len(fields) != 6 and len(fields) != 4:
        raise InvalidFENError(f"FEN has {len(fields)} fields, expected 6 (or 4 without the "
                              f"clocks): {_quote(fen)}")
    sq = b.sq
    for i in range(128):
        sq[i] = 0
    rows = fields[0].split("/")
    if len(rows) != 8:
        raise InvalidFENError(f"FEN board has {len(rows)} ranks, expected 8: {_quote(fen)}")
    kings = [0, 0]
    pawns = [0, 0]
    pieces = [0, 0]
    for i in range(8):
        rank = 7 - i
        f = 0
        for ch in rows[i]:
            if "1" <= ch <= "8":
                f += ord(ch) - 48
            elif ch in "PNBRQKpnbrqk":
                if f > 7:
                    raise InvalidFENError(f"FEN rank {rank + 1} has more than 8 squares: "
                                          f"{_quote(rows[i])}")
                p = _SYMBOLS.index(ch)
                colour = p >> 3
                s = 16 * rank + f
                if p & 7 == KING:
                    kings[colour] += 1
                    b.king[colour] = s
                elif p & 7 == PAWN:
                    pawns[colour] += 1
                    if rank == 0 or rank == 7:
                        raise InvalidFENError(
                            f"FEN has a {_COLOURS[colour]} pawn on {_sq_name(s)}: pawns cannot "
                            f"stand on the first or last rank")
                pieces[colour] += 1
                sq[s] = p
                f += 1
            else:
                raise InvalidFENError(f"bad character {ch!r} in FEN board {_quote(fields[0])}")
        if f != 8:
            raise InvalidFENError(f"FEN rank {rank + 1} has {f} squares, expected 8: "
                                  f"{_quote(rows[i])}")
    for colour in (WHITE, BLACK):
        if kings[colour] != 1:
            raise InvalidFENError(f"FEN has {kings[colour]} {_COLOURS[colour]} kings, "
                                  f"expected one: {_quote(fen)}")
        if pawns[colour] > 8:
            raise InvalidFENError(f"FEN has {pawns[colour]} {_COLOURS[colour]} pawns, at most 8")
        if pieces[colour] > 16:
            raise InvalidFENError(f"FEN has {pieces[colour]} {_COLOURS[colour]} pieces, at most 16")
    if fields[1] == "w":
        b.stm = WHITE
    elif fields[1] == "b":
        b.stm = BLACK
    else:
        raise InvalidFENError(f"bad side to move {fields[1]!r} in FEN, expected 'w' or 'b'")
    _set_castling(b, fields[2], chess960, drop)
    b.ep = -1
    b.fen_ep = -1
    if fields[3] != "-":
        _set_ep_field(b, fields[3])
    if len(fields) == 6:
        b.halfmove = _parse_count(fields[4], "halfmove clock", fen)
        b.fullmove = max(_parse_count(fields[5], "fullmove number", fen), 1)
    else:
        b.halfmove = 0
        b.fullmove = 1
    them = b.stm ^ 1
    if _attacked(b, b.king[them], b.stm):
        raise InvalidFENError(f"FEN has the {_COLOURS[them]} king in check with "
                              f"{_COLOURS[b.stm]} to move")
    b.checked = _attacked(b, b.king[b.stm], them)
    b.stack = []
    _compute_key(b)


def _set_castling(b: BoardCore, field: str, chess960: bool, drop: bool = False) -> None:
    """The castling field into ``b.castle``; ``drop``: a right whose king is off its first rank or that has
    no rook is dropped, as python-chess plays a game's FEN."""
    castle = b.castle
    for i in range(4):
        castle[i] = -1
    if field == "-":
        return
    for ch in field:
        if ch in "KQ" or "A" <= ch <= "H":
            colour = WHITE
        elif ch in "kq" or "a" <= ch <= "h":
            colour = BLACK
        else:
            raise InvalidFENError(f"bad castling field {field!r} in FEN")
        back = 0x70 * colour
        k = b.king[colour]
        rook = ROOK | colour << 3
        if k & 0x70 != back:
            if drop:
                continue
            raise InvalidFENError(f"castling right {ch!r} but the {_COLOURS[colour]} king is "
                                  f"not on its first rank")
        up = ch.upper()
        r = -1
        if up == "K":
            for f in range(7, (k & 7), -1):
                if b.sq[back | f] == rook:
                    r = back | f
                    break
        elif up == "Q":
            for f in range(0, k & 7):
                if b.sq[back | f] == rook:
                    r = back | f
                    break
        elif b.sq[back | (ord(up) - 65)] == rook:
            r = back | (ord(up) - 65)
        if r < 0:
            if drop:
                continue
            raise InvalidFENError(f"castling right {ch!r} but no {_COLOURS[colour]} rook to "
                                  f"castle with")
        if not chess960 and ((k & 7) != 4 or (r & 7) not in (0, 7)):
            raise InvalidFENError(f"castling right {ch!r} needs the king on the e-file and the "
                                  f"rook in the corner; pass chess960=True for Chess960")
        i = colour * 2 + ((r & 7) < (k & 7))
        if castle[i] >= 0:
            raise InvalidFENError(f"castling field {field!r} repeats a right")
        castle[i] = r


def _set_ep_field(b: BoardCore, text: str) -> None:
    us = b.stm
    if len(text) != 2 or not ("a" <= text[0] <= "h" and "1" <= text[1] <= "8"):
        raise InvalidFENError(f"bad en passant square {text!r} in FEN")
    ep = (ord(text[1]) - 49) * 16 + ord(text[0]) - 97
    b.fen_ep = ep
    fwd = _PAWN_FWD[us]
    # Any square is read, as python-chess reads it, and kept only
    # where a pawn can take now: behind an enemy pawn that has just made a
    # double push (its square and the one it came from empty), the capture
    # leaving the king safe. Other squares are dropped without a word (the FEN
    # standard writes one after every double push; some writers, one no push explains).
    if (ep >> 4 == (5 if us == WHITE else 2) and b.sq[ep - fwd] == (PAWN | (us ^ 1) << 3)
            and not b.sq[ep] and not b.sq[ep + fwd] and _has_legal_ep(b, ep)):
        b.ep = ep


def _compute_key(b: BoardCore) -> None:
    key = 0
    for s in _SQUARES:
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


# -- the Polyglot key -------------------------------------------------------

def _polyglot(b: BoardCore, ep: int) -> int:
    """The Polyglot key of ``b``, ``ep`` the en passant square the last move made (-1: none).

    Polyglot counts ``ep``'s file only where a pawn of the side to move stands
    beside the pawn that moved, whether or not taking is legal (the board's
    own ``ep`` is kept only where it is).
    """
    key = 0
    sq = b.sq
    for s in _SQUARES:
        p = sq[s]
        if p:
            key ^= _PG[64 * (2 * ((p & 7) - 1) + (p >> 3 == WHITE)) + 8 * (s >> 4) + (s & 7)]
    for i in range(4):
        if b.castle[i] >= 0:
            key ^= _PG[768 + i]
    if ep >= 0:
        p = ep - _PAWN_FWD[b.stm]     # the pawn that moved two squares
        pawn = PAWN | b.stm << 3
        if 0 <= p < 128 and not p & 0x88 and ((not (p - 1) & 0x88 and sq[p - 1] == pawn)
                                              or (not (p + 1) & 0x88 and sq[p + 1] == pawn)):
            key ^= _PG[772 + (ep & 7)]
    if b.stm == WHITE:
        key ^= _PG[780]
    return key


def _pg_ep(b: BoardCore) -> int:
    """The en passant square the Polyglot key looks at: behind the last move's double push, or the FEN's."""
    if b.stack:
        mv = b.stack[-1][0]
        return (mv & 127) + _PAWN_FWD[b.stm ^ 1] if mv >> 17 == FLAG_DOUBLE else -1
    return b.fen_ep


def _signed(key: int) -> int:
    """A 64-bit key as the signed integer with the same bits (what Arrow's int64, Spark and Java hold)."""
    return key - (1 << 64) if key >> 63 else key


def _copy(b: _B) -> _B:
    # Of b's own class, so a copy of fastpgn.board's Board is one.
    c = type(b).__new__(type(b))
    c.sq = b.sq[:]
    c.king = b.king[:]
    c.castle = b.castle[:]
    c.stm = b.stm
    c.ep = b.ep
    c.halfmove = b.halfmove
    c.fullmove = b.fullmove
    c.zkey = b.zkey
    c.fen_ep = b.fen_ep
    c.checked = b.checked
    c.chess960 = b.chess960
    c.stack = b.stack[:]
    return c


# -- FEN out --------------------------------------------------------------

def _castling_field(b: BoardCore, shredder: bool) -> str:
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


def _get_fen(b: BoardCore, shredder: bool) -> str:
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

def _attacked(b: BoardCore, s: int, by: int) -> bool:
    """Whether side ``by`` attacks square ``s``."""
    sq = b.sq
    c = by << 3
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
    p = KNIGHT | c
    for d in _KNIGHT_D:
        t = s + d
        if not t & 0x88 and sq[t] == p:
            return True
    p = KING | c
    for d in _KING_D:
        t = s + d
        if not t & 0x88 and sq[t] == p:
            return True
    r = ROOK | c
    q = QUEEN | c
    for d in _ROOK_D:
        t = s + d
        while not t & 0x88:
            p = sq[t]
            if p:
                if p == r or p == q:
                    return True
                break
            t += d
    r = BISHOP | c
    for d in _BISHOP_D:
        t = s + d
        while not t & 0x88:
            p = sq[t]
            if p:
                if p == r or p == q:
                    return True
                break
            t += d
    return False


def _in_check(b: BoardCore) -> bool:
    return b.checked


def _leaves_king_safe(b: BoardCore, mv: int) -> bool:
    """Whether non-castling move ``mv`` leaves the mover's king unattacked."""
    sq = b.sq
    us = b.stm
    frm = mv & 127
    to = (mv >> 7) & 127
    piece = sq[frm]
    captured = sq[to]
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


def _pin_safe(b: BoardCore, k: int, mv: int) -> bool:
    """Whether a non-king move from a square on a line with its king (not in check) keeps that line shut."""
    sq = b.sq
    frm = mv & 127
    d = _LINE[frm - k + 119]
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
            if t == QUEEN:
                return False
            if d == 1 or d == -1 or d == 16 or d == -16:
                return t != ROOK
            return t != BISHOP
        s += d
    return True


def _is_legal(b: BoardCore, mv: int) -> bool:
    """Whether pseudo-legal non-castling move ``mv`` keeps the mover's king safe."""
    frm = mv & 127
    k = b.king[b.stm]
    if b.checked or frm == k or mv >> 17 == FLAG_EP:
        return _leaves_king_safe(b, mv)
    if _LINE[frm - k + 119]:
        return _pin_safe(b, k, mv)
    return True


def _castle_targets(king: int, rook: int) -> tuple[int, int]:
    """Where castling puts the king and the rook: g/f toward the h side, c/d else."""
    back = king & 0x70
    return (back | 6, back | 5) if rook > king else (back | 2, back | 3)


def _castle_legal(b: BoardCore, rook: int) -> bool:
    """Whether the side to move may castle now with the rook on ``rook``: empty path, no attacked king square."""
    sq = b.sq
    us = b.stm
    k = b.king[us]
    kt, rt = _castle_targets(k, rook)
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


def _has_legal_ep(b: BoardCore, ep: int) -> bool:
    """Whether the side to move can legally capture en passant on ``ep``."""
    us = b.stm
    victim = ep - _PAWN_FWD[us]
    pawn = PAWN | us << 3
    for s in range(victim - 1, victim + 2, 2):
        if not s & 0x88 and b.sq[s] == pawn and _leaves_king_safe(b, s | ep << 7 | FLAG_EP << 17):
            return True
    return False


# -- make / unmake -----------------------------------------------------------

def _gives_check(b: BoardCore, frm: int, to: int, flag: int) -> bool:
    """Whether the move just made from ``frm`` to ``to`` checks the side now to move."""
    sq = b.sq
    them = b.stm
    k = b.king[them]
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
        if d and (t == QUEEN or t == (ROOK if d == 1 or d == -1 or d == 16 or d == -16 else BISHOP)):
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
            if p >> 3 != them and (t == QUEEN or t == (ROOK if d == 1 or d == -1 or d == 16 or d == -16 else BISHOP)):
                return True
    return False


def _make(b: BoardCore, mv: int) -> _Undo:
    """Play internal move ``mv`` (assumed legal); return its undo record."""
    if mv == NULL_MOVE:
        return _make_null(b)
    sq = b.sq
    us = b.stm
    frm = mv & 127
    to = (mv >> 7) & 127
    promo = (mv >> 14) & 7
    flag = mv >> 17
    old_castle = b.castle
    old_ep = b.ep
    old_halfmove = b.halfmove
    key = b.zkey
    if b.ep >= 0:
        key ^= _Z[_Z_EP + (b.ep & 7)]
        b.ep = -1
    piece = sq[frm]
    captured = 0
    if flag == FLAG_CASTLE:
        kt, rt = _castle_targets(frm, to)
        rook = sq[to]
        sq[frm] = 0
        sq[to] = 0
        sq[kt] = piece
        sq[rt] = rook
        key ^= _Z[piece * 128 + frm] ^ _Z[rook * 128 + to] ^ _Z[piece * 128 + kt] ^ _Z[rook * 128 + rt]
        b.king[us] = kt
        b.halfmove += 1
    else:
        if flag == FLAG_EP:
            vsq = to - _PAWN_FWD[us]
            captured = sq[vsq]
            sq[vsq] = 0
            key ^= _Z[captured * 128 + vsq]
        else:
            captured = sq[to]
            if captured:
                key ^= _Z[captured * 128 + to]
        placed = promo | us << 3 if promo else piece
        sq[to] = placed
        sq[frm] = 0
        key ^= _Z[piece * 128 + frm] ^ _Z[placed * 128 + to]
        if piece & 7 == KING:
            b.king[us] = to
        if captured or piece & 7 == PAWN:
            b.halfmove = 0
        else:
            b.halfmove += 1
    castle = b.castle
    if castle[0] >= 0 or castle[1] >= 0 or castle[2] >= 0 or castle[3] >= 0:
        for i in range(4):
            r = castle[i]
            if r >= 0 and (r == frm or r == to or (piece & 7 == KING and i >> 1 == us)):
                if castle is old_castle:
                    # Copy on write: undo records (and copies) keep the old list.
                    castle = castle[:]
                    b.castle = castle
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
    undo = (mv, captured, old_castle, old_ep, old_halfmove, b.zkey, b.checked)
    b.zkey = key
    b.checked = _gives_check(b, frm, to, flag)
    return undo


def _make_null(b: BoardCore) -> _Undo:
    """Pass: the other side to move, no en passant square, the halfmove clock on (python-chess's null move)."""
    undo = (NULL_MOVE, 0, b.castle, b.ep, b.halfmove, b.zkey, b.checked)
    key = b.zkey ^ _Z_TURN
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
    return undo


def _unmake(b: BoardCore, undo: _Undo) -> None:
    mv, captured, castle, ep, halfmove, key, checked = undo
    if mv == NULL_MOVE:
        b.stm ^= 1
        if b.stm == BLACK:
            b.fullmove -= 1
        b.ep = ep
        b.halfmove = halfmove
        b.zkey = key
        b.checked = checked
        return
    sq = b.sq
    frm = mv & 127
    to = (mv >> 7) & 127
    promo = (mv >> 14) & 7
    flag = mv >> 17
    us = b.stm ^ 1
    b.stm = us
    if us == BLACK:
        b.fullmove -= 1
    if flag == FLAG_CASTLE:
        kt, rt = _castle_targets(frm, to)
        piece = sq[kt]
        rook = sq[rt]
        sq[kt] = 0
        sq[rt] = 0
        sq[frm] = piece
        sq[to] = rook
        b.king[us] = frm
    else:
        piece = PAWN | us << 3 if promo else sq[to]
        sq[frm] = piece
        if flag == FLAG_EP:
            sq[to] = 0
            sq[to - _PAWN_FWD[us]] = captured
        else:
            sq[to] = captured
        if piece & 7 == KING:
            b.king[us] = frm
    b.castle = castle
    b.ep = ep
    b.halfmove = halfmove
    b.zkey = key
    b.checked = checked


def _push(b: BoardCore, mv: int) -> None:
    b.stack.append(_make(b, mv))


def _pop(b: BoardCore) -> int:
    undo = b.stack.pop()
    _unmake(b, undo)
    return undo[0]


# -- move generation -----------------------------------------------------------

def _gen_pseudo(b: BoardCore) -> list[int]:
    """Pseudo-legal moves (castling already fully checked), in a fixed order."""
    sq = b.sq
    us = b.stm
    out = []
    fwd = _PAWN_FWD[us]
    home = 1 if us == WHITE else 6
    last = 7 if us == WHITE else 0
    for s in _SQUARES:
        p = sq[s]
        if not p or p >> 3 != us:
            continue
        t = p & 7
        if t == PAWN:
            to = s + fwd
            if not sq[to]:
                if to >> 4 == last:
                    for promo in range(QUEEN, KNIGHT - 1, -1):
                        out.append(s | to << 7 | promo << 14)
                else:
                    out.append(s | to << 7)
                    if s >> 4 == home and not sq[to + fwd]:
                        out.append(s | (to + fwd) << 7 | FLAG_DOUBLE << 17)
            for to in range(s + fwd - 1, s + fwd + 2, 2):
                if to & 0x88:
                    continue
                q = sq[to]
                if q and q >> 3 != us:
                    if to >> 4 == last:
                        for promo in range(QUEEN, KNIGHT - 1, -1):
                            out.append(s | to << 7 | promo << 14)
                    else:
                        out.append(s | to << 7)
                elif to == b.ep:
                    out.append(s | to << 7 | FLAG_EP << 17)
        elif t == KNIGHT or t == KING:
            for d in (_KNIGHT_D if t == KNIGHT else _KING_D):
                to = s + d
                if not to & 0x88:
                    q = sq[to]
                    if not q or q >> 3 != us:
                        out.append(s | to << 7)
        else:
            for d in (_ROOK_D if t == ROOK else _BISHOP_D if t == BISHOP else _KING_D):
                to = s + d
                while not to & 0x88:
                    q = sq[to]
                    if q:
                        if q >> 3 != us:
                            out.append(s | to << 7)
                        break
                    out.append(s | to << 7)
                    to += d
    for i in range(2 * us, 2 * us + 2):
        r = b.castle[i]
        if r >= 0 and _castle_legal(b, r):
            out.append(b.king[us] | r << 7 | FLAG_CASTLE << 17)
    return out


def _gen_legal(b: BoardCore) -> list[int]:
    """Legal moves: pseudo-legal ones, tested only where the king could be exposed."""
    us = b.stm
    k = b.king[us]
    check = b.checked
    out = []
    for mv in _gen_pseudo(b):
        frm = mv & 127
        flag = mv >> 17
        if flag == FLAG_CASTLE:
            out.append(mv)
        elif check or frm == k or flag == FLAG_EP:
            if _leaves_king_safe(b, mv):
                out.append(mv)
        elif _LINE[frm - k + 119]:
            if _pin_safe(b, k, mv):
                out.append(mv)
        else:
            out.append(mv)
    return out


def _any_legal(b: BoardCore) -> bool:
    """Whether the side to move has a legal move; king moves first, as they most often answer a check."""
    moves = _gen_pseudo(b)
    k = b.king[b.stm]
    for mv in moves:
        if mv & 127 == k and (mv >> 17 == FLAG_CASTLE or _is_legal(b, mv)):
            return True
    for mv in moves:
        if mv & 127 != k and _is_legal(b, mv):
            return True
    return False


def _perft(b: BoardCore, depth: int, bulk: bool) -> int:
    if depth == 0:
        return 1
    moves = _gen_legal(b)
    if depth == 1 and bulk:
        return len(moves)
    n = 0
    for mv in moves:
        undo = _make(b, mv)
        n += _perft(b, depth - 1, bulk)
        _unmake(b, undo)
    return n


# -- SAN in -------------------------------------------------------------------------

def _find_origins(b: BoardCore, piece: int, dest: int) -> list[int]:
    """Squares holding ``piece`` (type | colour) that attack ``dest`` by its move pattern."""
    sq = b.sq
    out = []
    t = piece & 7
    if t == KNIGHT or t == KING:
        for d in (_KNIGHT_D if t == KNIGHT else _KING_D):
            s = dest + d
            if not s & 0x88 and sq[s] == piece:
                out.append(s)
    else:
        for d in (_ROOK_D if t == ROOK else _BISHOP_D if t == BISHOP else _KING_D):
            s = dest + d
            while not s & 0x88:
                p = sq[s]
                if p:
                    if p == piece:
                        out.append(s)
                    break
                s += d
    return out


def _resolve_castle(b: BoardCore, kingside: bool, info: list[int]) -> int:
    us = b.stm
    info[0] = KING
    r = b.castle[2 * us + (0 if kingside else 1)]
    if r < 0:
        return ERR_NO_RIGHT
    k = b.king[us]
    mv = k | r << 7 | FLAG_CASTLE << 17
    if _castle_legal(b, r):
        return mv
    kt, rt = _castle_targets(k, r)  # r is the rook of that side: right of the king for O-O
    for s in range(min(k, kt, r, rt), max(k, kt, r, rt) + 1):
        if s != k and s != r and b.sq[s]:
            info[1] = s
            return ERR_BLOCKED
    return ERR_ATTACKED


_DASHES = {c: "-" for c in (*range(0x2010, 0x2016), 0x2212)}


def _resolve_san(b: BoardCore, s: str, info: list[int]) -> int:
    """SAN text -> internal move (>= 0) or an ERR_ code; ``info`` gets piece type, target, two origins."""
    n = len(s)
    while n > 0 and s[n - 1] in "+#!?":
        n -= 1
    if n < 2:
        return ERR_SYNTAX
    c = s[0]
    if (n == 2 and (s[:2] == "--" or s[:2] == "Z0")) or (n == 4 and s[:4] == "0000"):
        return _null_move(b)
    if c == "O" or c == "0":
        # the dashes may be others, as other tools write castling: U+2010 to U+2015, U+2212
        t = s[:n].translate(_DASHES)
        if t == c + "-" + c:
            return _resolve_castle(b, True, info)
        if t == c + "-" + c + "-" + c:
            return _resolve_castle(b, False, info)
        return ERR_SYNTAX
    promo = 0
    c = s[n - 1]
    if c in "QRBNqrbn":
        promo = "..NBRQ".index(c.upper())
        n -= 1
        if n > 0 and s[n - 1] == "=":
            n -= 1
    if n < 2 or not ("a" <= s[n - 2] <= "h" and "1" <= s[n - 1] <= "8"):
        return ERR_SYNTAX
    dest = (ord(s[n - 1]) - 49) * 16 + ord(s[n - 2]) - 97
    n -= 2
    capture = False
    if n > 0 and (s[n - 1] == "x" or s[n - 1] == "-"):
        capture = s[n - 1] == "x"
        n -= 1
    i = 0
    piece = PAWN
    if n > 0 and s[0] in "NBRQK":
        piece = " PNBRQK".index(s[0])
        i = 1
    ff = -1
    fr = -1
    if i < n and "a" <= s[i] <= "h":
        ff = ord(s[i]) - 97
        i += 1
    if i < n and "1" <= s[i] <= "8":
        fr = ord(s[i]) - 49
        i += 1
    if i != n or (piece == PAWN and capture and ff < 0):
        return ERR_SYNTAX
    sq = b.sq
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
    for frm in _find_origins(b, piece | us << 3, dest):
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


def _move_label(b: BoardCore) -> str:
    return f"{b.fullmove}." if b.stm == WHITE else f"{b.fullmove}..."


def _null_move(b: BoardCore) -> int:
    """The null move, or ERR_NULL_CHECK: a side in check may not pass."""
    return ERR_NULL_CHECK if b.checked else NULL_MOVE


def _null_reason(b: BoardCore) -> str:
    return f"{_COLOURS[b.stm]} is in check and cannot pass (a null move)"


def _not_legal(b: BoardCore, move: Any, mv: int) -> IllegalMoveError:
    """The error for a Move that is not legal here (``mv``: what _from_move answered)."""
    reason = _null_reason(b) if mv == ERR_NULL_CHECK else "not legal in this position"
    return IllegalMoveError(f"illegal move {_move_label(b)} {_move_text(move)}: {reason}")


def _san_error(b: BoardCore, text: str, code: int, piece: int, dest: int, frm: int, other: int) -> PGNError:
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


def _san_move(b: BoardCore, san: object) -> int:
    if not isinstance(san, str):
        raise IllegalMoveError(f"illegal move {_move_label(b)} {san!r}: not a move in SAN")
    info = [0, 0, 0, 0]
    mv = _resolve_san(b, san, info)
    if mv < 0:
        raise _san_error(b, san, mv, info[0], info[1], info[2], info[3])
    return mv


# -- SAN and UCI out -------------------------------------------------------------------

def _san_of(b: BoardCore, mv: int) -> str:
    if mv == NULL_MOVE:
        return "--"
    sq = b.sq
    frm = mv & 127
    to = (mv >> 7) & 127
    promo = (mv >> 14) & 7
    flag = mv >> 17
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
                for s in _find_origins(b, sq[frm], to):
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
    undo = _make(b, mv)
    if _in_check(b):
        out += "+" if _any_legal(b) else "#"
    _unmake(b, undo)
    return out


def _uci_of(b: BoardCore, mv: int) -> str:
    if mv == NULL_MOVE:
        return "0000"
    frm = mv & 127
    to = (mv >> 7) & 127
    promo = (mv >> 14) & 7
    if mv >> 17 == FLAG_CASTLE and not b.chess960:
        to = (frm & 0x70) | (6 if to > frm else 2)
    return _sq_name(frm) + _sq_name(to) + (_PROMO_UCI[promo] if promo else "")


def _to_move(b: BoardCore, mv: int) -> Move:
    if mv == NULL_MOVE:
        return Move(0, 0)
    frm = mv & 127
    to = (mv >> 7) & 127
    promo = (mv >> 14) & 7
    if mv >> 17 == FLAG_CASTLE and not b.chess960:
        to = (frm & 0x70) | (6 if to > frm else 2)
    return Move((frm >> 4) * 8 + (frm & 7), (to >> 4) * 8 + (to & 7),
                _PROMO_UCI[promo] if promo else None)


def _move_text(move: Any) -> str:
    try:
        return move.uci()
    except Exception:
        return repr(move)


def _from_move(b: BoardCore, move: Any) -> int:
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


def _match_move(b: BoardCore, frm: int, to: int, promo: int) -> int:
    moves = _gen_legal(b)
    for mv in moves:
        if mv & 127 == frm and (mv >> 7) & 127 == to and (mv >> 14) & 7 == promo:
            return mv
    for mv in moves:
        if mv >> 17 == FLAG_CASTLE and mv & 127 == frm and not promo:
            if to == (frm & 0x70) | (6 if ((mv >> 7) & 127) > frm else 2):
                return mv
    return -1


def _uci_move(b: BoardCore, text: object) -> int:
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

def _insufficient(b: BoardCore, colour: int) -> bool:
    sq = b.sq
    own = [0] * 7
    other = [0] * 7
    bishops_light = False
    bishops_dark = False
    for s in _SQUARES:
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


def _repetitions(b: BoardCore) -> int:
    """How often the current position occurred (1 = only now), since the last irreversible move."""
    count = 1
    key = b.zkey
    n = len(b.stack)
    i = n - 2
    stop = n - b.halfmove
    while i >= 0 and i >= stop:
        if b.stack[i][5] == key:
            count += 1
        i -= 2
    return count


def _can_claim_threefold(b: BoardCore) -> bool:
    if _repetitions(b) >= 3:
        return True
    for mv in _gen_legal(b):
        _push(b, mv)
        n = _repetitions(b)
        _pop(b)
        if n >= 3:
            return True
    return False


def _can_claim_fifty(b: BoardCore) -> bool:
    moves = _gen_legal(b)
    if not moves:
        return False
    if b.halfmove >= 100:
        return True
    if b.halfmove >= 99:
        for mv in moves:
            _push(b, mv)
            n = b.halfmove
            _pop(b)
            if n >= 100:
                # The position after this move must itself allow play on.
                _push(b, mv)
                ok = bool(_gen_legal(b))
                _pop(b)
                if ok:
                    return True
    return False


# -- replay entry points -----------------------------------------------------------------------

@overload
def _new_board(fen: str | None, chess960: bool) -> BoardCore: ...
@overload
def _new_board(fen: str | None, chess960: bool, cls: type[_B]) -> _B: ...
def _new_board(fen: str | None, chess960: bool, cls: type[BoardCore] = BoardCore) -> BoardCore:
    # ``cls``: fastpgn.board's Board where the board is handed out (replay); else a private core.
    b = cls(None, chess960)
    if fen is not None:
        _set_fen(b, fen, b.chess960, True)    # a game's FEN: castling rights without a rook dropped
    return b


_BOARD: type[Board] | None = None


def _board_class() -> type[Board]:
    """fastpgn.board's Board over this kernel, found on first use (this module loads before it)."""
    global _BOARD
    if _BOARD is None:
        from fastpgn.board import _face_over

        _BOARD = _face_over(sys.modules[__name__])
    return _BOARD


def __getattr__(name: str) -> type[Board]:
    # ``Board``: the public Board over this kernel, for tests and benchmarks that run both.
    if name == "Board":
        return _board_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _split(sans: object) -> list[str]:
    if not isinstance(sans, str):
        raise IllegalMoveError(f"moves must be a string of SAN, not {type(sans).__name__}")
    # Only ASCII whitespace separates moves, as in the compiled twin.
    return [t for t in sans.translate(_WS).split(" ") if t]


def _text(sans: str | bytes) -> str:
    # bytes are UTF-8; what is not decodes to U+FFFD, as the compiled twin words a bad token.
    return sans.decode("utf-8", "replace") if isinstance(sans, bytes) else sans


@overload
def san_to_uci(sans: str, fen: str | None = None, chess960: bool = False) -> str: ...
@overload
def san_to_uci(sans: bytes, fen: str | None = None, chess960: bool = False) -> bytes: ...
def san_to_uci(sans: str | bytes, fen: str | None = None, chess960: bool = False) -> str | bytes:
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
    b = _new_board(fen, chess960)
    info = [0, 0, 0, 0]
    out = []
    for tok in _split(_text(sans)):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        out.append(_uci_of(b, mv))
        _make(b, mv)
    text = " ".join(out)
    return text.encode() if isinstance(sans, bytes) else text


def validate_san(sans: str | bytes, fen: str | None = None, chess960: bool = False) -> int:
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
    b = _new_board(fen, chess960)
    info = [0, 0, 0, 0]
    plies = 0
    for tok in _split(_text(sans)):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        _make(b, mv)
        plies += 1
    return plies


def replay(sans: str, fen: str | None = None, chess960: bool = False) -> Board:
    """Play a game's SAN moves and return the final Board (history kept, so repetitions count).

    >>> replay("f3 e5 g4 Qh4#").outcome().result()
    '0-1'
    """
    b = _new_board(fen, chess960, _board_class())
    info = [0, 0, 0, 0]
    for tok in _split(sans):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        _push(b, mv)
    return b


def replay_fens(sans: str, fen: str | None = None, chess960: bool = False) -> list[str]:
    """The FEN after every ply of a game's SAN moves (the start position not included).

    >>> replay_fens("e4 c5")[-1]
    'rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
    """
    b = _new_board(fen, chess960)
    info = [0, 0, 0, 0]
    out = []
    for tok in _split(sans):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        _make(b, mv)
        out.append(_get_fen(b, False))
    return out


def positions(sans: str | bytes, fen: str | None = None, chess960: bool = False,
              fens: bool = False) -> tuple[list[int], list[str] | None]:
    """``(keys, fens)``: the signed Polyglot key after every ply of a game's SAN moves, and with ``fens`` its FEN
    (else None); errors as san_to_uci's.

    >>> positions("e4", fens=True)
    ([-9062197578030825066], ['rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'])
    """
    b = _new_board(fen, chess960)
    info = [0, 0, 0, 0]
    keys = []
    texts: list[str] | None = [] if fens else None
    for tok in _split(_text(sans)):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        _make(b, mv)
        keys.append(_signed(_polyglot(b, (mv & 127) + _PAWN_FWD[b.stm ^ 1] if mv >> 17 == FLAG_DOUBLE else -1)))
        if texts is not None:
            texts.append(_get_fen(b, False))
    return keys, texts


def canonical_san(sans: str, fen: str | None = None, chess960: bool = False) -> str:
    """Validate a game's SAN moves and return them in canonical SAN (with ``+``/``#``), space-separated.

    >>> canonical_san("e4 e5 Qh5 Nc6 Bc4 Nf6?? Qxf7 Ke7")
    Traceback (most recent call last):
    ...
    fastpgn.errors.IllegalMoveError: illegal move 4... Ke7: the black king on e8 cannot move to e7: the king would be in check
    >>> canonical_san("e4 e5 Qh5 Nc6 Bc4 Nf6?? Qf7")
    'e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7#'
    """  # noqa: E501 (doctest output)
    b = _new_board(fen, chess960)
    info = [0, 0, 0, 0]
    out = []
    for tok in _split(sans):
        mv = _resolve_san(b, tok, info)
        if mv < 0:
            raise _san_error(b, tok, mv, info[0], info[1], info[2], info[3])
        out.append(_san_of(b, mv))
        _make(b, mv)
    return " ".join(out)


_START_BOARD = BoardCore(_START)
