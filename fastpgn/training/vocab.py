"""Move vocabularies: a move as the ``uint16`` id a chess model's policy gives it.

Four vocabularies, each numbered as its own project numbers it (docs/training.md,
"Move vocabularies", says which source each follows and how it was checked):

- ``"searchless"``: searchless chess (ChessBench), 1,968 moves, on the board as it
  stands (no mirroring); castling is the king's move (``e1g1``).
- ``"lc0"``: Leela Chess Zero, 1,858 moves, seen from the side to move (ranks
  flipped when Black moves); castling is king-takes-rook (``e1h1``); a knight
  promotion shares the id of the plain move (``a7a8``).
- ``"alphazero"``: AlphaZero's 8×8×73 policy, 4,672 ids, ``plane * 64 + from_square``
  with the squares seen from the side to move; castling is the king's move.
- ``"maia2"``: Maia-2, 1,880 moves, seen from the side to move (Maia-2 mirrors the
  board for Black); castling is the king's move.

Squares are numbered a1 = 0, b1 = 1, ... h8 = 63. A promotion is given as the
piece code of the board arrays: 0 none, 2 knight, 3 bishop, 4 rook, 5 queen.
A move a vocabulary has no id for gets :data:`NOT_IN_VOCABULARY` from
:func:`ids` and a ``ValueError`` from :func:`move_to_id`.

numpy is imported only by :func:`ids` (``pip install "fastpgn[training]"``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["NOT_IN_VOCABULARY", "SIZES", "VOCABULARIES", "checked", "id_to_move", "ids", "move_to_id"]

#: The names :func:`move_to_id`, :func:`id_to_move` and :func:`ids` take.
VOCABULARIES = ("searchless", "lc0", "alphazero", "maia2")
#: How many ids each vocabulary has.
SIZES = {"searchless": 1968, "lc0": 1858, "alphazero": 4672, "maia2": 1880}
#: The id :func:`ids` gives a move the vocabulary has no id for.
NOT_IN_VOCABULARY = 65535

_FILES = "abcdefgh"
_PROMOTION_CODES = {"": 0, "n": 2, "b": 3, "r": 4, "q": 5}
_PROMOTION_LETTERS = {code: letter for letter, code in _PROMOTION_CODES.items()}
_KEYS = 6 * 4096  # promotion code * 4096 + from * 64 + to
# Which vocabularies see the board from the side to move (ranks flipped for Black).
_MIRRORED = {"searchless": False, "lc0": True, "alphazero": True, "maia2": True}

# AlphaZero's planes: 8 compass directions (N, NE, E, SE, S, SW, W, NW) of 7
# distances each, then 8 knight jumps clockwise from (file +1, rank +2), then
# underpromotions: capture towards the a-file, straight, towards the h-file,
# each to knight, bishop, rook. (file step, rank step)
_DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
_KNIGHT_JUMPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_UNDERPROMOTIONS = "nbr"


def _name(square: int) -> str:
    return _FILES[square % 8] + str(square // 8 + 1)


def _line(frm: int, to: int) -> bool:
    df, dr = to % 8 - frm % 8, to // 8 - frm // 8
    return frm != to and (df == 0 or dr == 0 or abs(df) == abs(dr))


def _knight(frm: int, to: int) -> bool:
    return {abs(to % 8 - frm % 8), abs(to // 8 - frm // 8)} == {1, 2}


def _promotions(ranks: tuple[tuple[int, int], ...], steps: tuple[int, ...], pieces: str) -> list[tuple[int, int, int]]:
    out = []
    for from_rank, to_rank in ranks:
        for file in range(8):
            for step in steps:
                if 0 <= file + step < 8:
                    out += [(from_rank * 8 + file, to_rank * 8 + file + step, _PROMOTION_CODES[p]) for p in pieces]
    return out


@cache
def _moves(name: str) -> tuple[tuple[int, int, int], ...]:
    """The vocabulary's moves as (from, to, promotion code), in id order, in its own frame."""
    if name == "searchless":
        # Per from-square: the queen's targets, then the knight's, each ascending;
        # then the promotions from rank 2 to 1 and from 7 to 8.
        moves = [(f, t, 0) for f in range(64)
                 for t in [t for t in range(64) if _line(f, t)] + [t for t in range(64) if _knight(f, t)]]
        return tuple(moves + _promotions(((1, 0), (6, 7)), (0, -1, 1), "qrbn"))
    if name == "lc0":
        # Per from-square: queen and knight targets in one ascending sweep; then
        # 7 to 8 promotions to queen, rook, bishop, to-file ascending.
        moves = [(f, t, 0) for f in range(64) for t in range(64) if _line(f, t) or _knight(f, t)]
        return tuple(moves + _promotions(((6, 7),), (-1, 0, 1), "qrb"))
    if name == "maia2":
        # Per from-square: the queen's targets, then the knight's, each descending
        # (python-chess's legal-move order of a lone piece); then 7 to 8 promotions.
        down = range(63, -1, -1)
        moves = [(f, t, 0) for f in range(64)
                 for t in [t for t in down if _line(f, t)] + [t for t in down if _knight(f, t)]]
        return tuple(moves + _promotions(((6, 7),), (0, -1, 1), "qrbn"))
    if name == "alphazero":
        return tuple(_alphazero_move(i) for i in range(4672))
    checked(name)
    raise AssertionError(name)  # (checked raised)


def checked(name: object) -> str:
    """``name`` if it names a vocabulary, else the one ``ValueError`` that lists the names.

    >>> checked("lc0")
    'lc0'
    """
    if name not in SIZES:
        raise ValueError(f"unknown move vocabulary {name!r}: one of {', '.join(VOCABULARIES)}")
    return str(name)


def _alphazero_move(index: int) -> tuple[int, int, int]:
    """Plane ``index // 64`` from square ``index % 64``; to = -1 when it leaves the board."""
    plane, frm = divmod(index, 64)
    promotion = 0
    if plane < 56:
        (df, dr), distance = _DIRECTIONS[plane // 7], plane % 7 + 1
        df, dr = df * distance, dr * distance
    elif plane < 64:
        df, dr = _KNIGHT_JUMPS[plane - 56]
    else:
        df, dr = (plane - 64) // 3 - 1, 1
        promotion = _PROMOTION_CODES[_UNDERPROMOTIONS[(plane - 64) % 3]]
        if frm // 8 != 6:
            return (frm, -1, promotion)
    file, rank = frm % 8 + df, frm // 8 + dr
    if not (0 <= file < 8 and 0 <= rank < 8):
        return (frm, -1, promotion)
    return (frm, rank * 8 + file, promotion)


@cache
def _table(name: str) -> tuple[int, ...]:
    """Id of every (promotion, from, to) key in the vocabulary's frame; NOT_IN_VOCABULARY for the rest."""
    table = [NOT_IN_VOCABULARY] * _KEYS
    for i, (frm, to, promotion) in enumerate(_moves(name)):
        if to >= 0:
            table[promotion * 4096 + frm * 64 + to] = i
    for frm in range(48, 56):
        for to in range(56, 64):
            if abs(to % 8 - frm % 8) > 1:
                continue
            plain = table[frm * 64 + to]
            if name == "lc0":  # lc0 numbers a knight promotion as the plain move
                table[2 * 4096 + frm * 64 + to] = plain
            elif name == "alphazero":  # a queen promotion is the queen-move plane
                table[5 * 4096 + frm * 64 + to] = plain
    return tuple(table)


def _castle_square(name: str, frm: int, to: int, chess960: bool) -> int:
    """A castling king's target as the vocabulary writes it: the king's destination (g- or c-file), lc0 the
    rook's square. ``to`` is the rook's square with ``chess960``, else standard chess's ``e1g1`` or ``e1h1``."""
    file, king = to % 8, frm % 8
    if chess960:    # king takes rook: the rook's side says which castle it is
        file = file if name == "lc0" else (6 if file > king else 2)
    elif name == "lc0":
        file = {6: 7, 2: 0}.get(file, file)
    else:
        file = {7: 6, 0: 2}.get(file, file) if abs(file - king) != 2 else file
    return to - to % 8 + file


def _parse(uci: str) -> tuple[int, int, int]:
    if (len(uci) in (4, 5) and uci[0] in _FILES and uci[2] in _FILES and uci[1] in "12345678"
            and uci[3] in "12345678" and uci[4:] in _PROMOTION_CODES):
        frm = _FILES.index(uci[0]) + 8 * (int(uci[1]) - 1)
        to = _FILES.index(uci[2]) + 8 * (int(uci[3]) - 1)
        return frm, to, _PROMOTION_CODES[uci[4:]]
    raise ValueError(f"not a UCI move: {uci!r}")


def move_to_id(name: str, uci: str, white_to_move: bool = True, castling: bool = False,
               chess960: bool = False) -> int:
    """The id of a UCI move in vocabulary ``name``.

    ``white_to_move`` tells the vocabularies that see the board from the side to
    move (lc0, AlphaZero, Maia-2) to flip the ranks; ``castling`` marks the move of
    a castling king, written as python-chess writes it (``e1g1``) or king-takes-rook
    (``e1h1``); with ``chess960`` it is written king-takes-rook whatever the squares
    (Chess960's UCI: ``d1f1`` for a king on d1 castling with its rook on f1), and
    searchless chess, AlphaZero and Maia-2 take the king's destination (``d1g1``),
    lc0 the rook's square. ``ValueError`` when the vocabulary has no id for the move
    (a Chess960 castle whose king stays on its square, in any vocabulary but lc0).

    >>> move_to_id("searchless", "e2e4"), move_to_id("lc0", "e7e5", white_to_move=False)
    (317, 322)
    >>> move_to_id("lc0", "e1g1", castling=True) == move_to_id("lc0", "e1h1")
    True
    >>> move_to_id("searchless", "d1f1", castling=True, chess960=True) == move_to_id("searchless", "d1g1")
    True
    """
    frm, to, promotion = _parse(uci)
    table = _table(name)
    if castling:
        to = _castle_square(name, frm, to, chess960)
    if _MIRRORED[name] and not white_to_move:
        frm, to = frm ^ 56, to ^ 56
    index = table[promotion * 4096 + frm * 64 + to]
    if index == NOT_IN_VOCABULARY:
        raise ValueError(f"move {uci} is not in the {name} vocabulary")
    return index


def id_to_move(name: str, index: int, white_to_move: bool = True) -> str:
    """The UCI move of id ``index`` in vocabulary ``name``, on the board (ranks flipped back for Black).

    Castling comes back as the vocabulary writes it (lc0: ``e1h1``). ``ValueError``
    for an id out of range or an AlphaZero plane that leaves the board from its square.

    >>> id_to_move("searchless", 317), id_to_move("maia2", 1879), id_to_move("alphazero", 76)
    ('e2e4', 'h7g8n', 'e2e4')
    >>> id_to_move("lc0", 322, white_to_move=False)
    'e7e5'
    """
    moves = _moves(name)
    if not 0 <= index < len(moves) or moves[index][1] < 0:
        raise ValueError(f"id {index} names no move of the {name} vocabulary")
    frm, to, promotion = moves[index]
    if _MIRRORED[name] and not white_to_move:
        frm, to = frm ^ 56, to ^ 56
    return _name(frm) + _name(to) + _PROMOTION_LETTERS[promotion]


def ids(name: str, from_sq: np.ndarray, to_sq: np.ndarray, promotion: np.ndarray,
        white_to_move: np.ndarray, castling: np.ndarray | None = None, chess960: Any = False) -> np.ndarray:
    """The ids of many moves at once, as ``uint16``; :data:`NOT_IN_VOCABULARY` where a move has none.

    ``from_sq``, ``to_sq`` (0–63) and ``promotion`` (0 none, 2 N, 3 B, 4 R, 5 Q) are
    integer arrays of one length, ``white_to_move`` a bool array. ``castling``
    (bool) marks castling kings, written as the king's move (``e1g1``); lc0 needs it
    (its castling is king-takes-rook) and raises ``ValueError`` without it. ``chess960``
    (a bool, or a bool array) marks the castles written king-takes-rook instead, as
    Chess960's UCI writes them (``d1f1``: king d1, rook f1), which :func:`move_to_id`
    says how each vocabulary takes.

    >>> import numpy as np
    >>> ids("lc0", np.array([12, 60]), np.array([28, 62]), np.array([0, 0]), np.array([True, False]),
    ...     castling=np.array([False, True])).tolist()  # e2e4 by White, O-O by Black (e8h8 as e1h1)
    [322, 103]
    """
    np = _numpy()
    checked(name)
    frm = np.asarray(from_sq).astype(np.int64)
    to = np.asarray(to_sq).astype(np.int64)
    promo = np.asarray(promotion).astype(np.int64)
    white = np.asarray(white_to_move, dtype=bool)
    if castling is not None:
        castles = np.asarray(castling, dtype=bool)
        file, king = to % 8, frm % 8
        if name == "lc0":
            standard = np.where(file == 6, 7, np.where(file == 2, 0, file))
            rook = np.where(np.asarray(chess960, dtype=bool), file, standard)
        else:
            standard = np.where(np.abs(file - king) == 2, file, np.where(file == 7, 6, np.where(file == 0, 2, file)))
            rook = np.where(np.asarray(chess960, dtype=bool), np.where(file > king, 6, 2), standard)
        to = np.where(castles, to - file + rook, to)
    elif name == "lc0":
        raise ValueError("the lc0 vocabulary needs castling= (its castling is king-takes-rook)")
    if _MIRRORED[name]:
        flip = np.where(white, 0, 56)
        frm, to = frm ^ flip, to ^ flip
    valid = (frm >= 0) & (frm < 64) & (to >= 0) & (to < 64) & (promo >= 0) & (promo < 6)
    keys = np.where(valid, promo * 4096 + frm * 64 + to, 0)
    out = _numpy_table(name)[keys]
    out[~valid] = NOT_IN_VOCABULARY
    return out


def _numpy() -> Any:
    try:
        import numpy
    except ModuleNotFoundError as exc:
        raise ImportError('fastpgn.training.vocab.ids needs numpy, which is not installed: '
                          'pip install "fastpgn[training]"') from exc
    return numpy


@cache
def _numpy_table(name: str) -> np.ndarray:
    np = _numpy()
    return np.array(_table(name), dtype=np.uint16)
