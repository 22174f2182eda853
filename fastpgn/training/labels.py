"""The training columns ``read_positions`` adds to the positions sink's rows, made over whole arrays.

Each function takes a block's rows (the sink's columns as numpy arrays, rows
of a game in ply order, every game of the block whole) and the game columns
they need, and gives a ``pyarrow`` array, with no loop over the rows in
Python:

- ``move_ids``: the move played, as a vocabulary's id (:mod:`fastpgn.training.vocab`);
- ``polyglot_keys``: the position's Polyglot key, as opening books and
  ``chess.polyglot.zobrist_hash`` make it;
- ``mover_labels``: the result, ratings and eval seen from the side to move;
- ``mirrored``: the board and squares seen from the side to move (python-chess's
  ``board.mirror()`` on Black's rows).

docs/training.md ("Training columns") says what each holds.
"""

from __future__ import annotations

from functools import cache

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: The columns made here, with their Arrow types.
LABEL_TYPES = {"move_id": "uint16", "result_mover": "int8", "mover_elo": "int16", "opponent_elo": "int16",
               "eval_cp_mover": "int16", "eval_mate_mover": "int8", "polyglot": "uint64"}
#: The game columns each needs.
NEEDS = {"result_mover": ("result",), "mover_elo": ("white_elo", "black_elo"),
         "opponent_elo": ("white_elo", "black_elo"), "eval_cp_mover": ("eval_cp",),
         "eval_mate_mover": ("eval_mate",), "polyglot": ("fen",)}
#: The row columns ``mirror=True`` turns to the side to move's view.
MIRRORED = ("board", "castling", "ep_square", "from_square", "to_square", "move")


def _np() -> Any:
    from fastpgn.training.vocab import _numpy

    return _numpy()


def castles(board: Any, frm: Any, to: Any) -> tuple[Any, Any]:
    """``(castling, king_takes_rook)`` masks of the moves ``frm``-``to`` on ``board`` (rows of 64 codes).

    A castle is a king's move two files along its rank (standard chess's ``e1g1``)
    or onto its own rook (Chess960's ``d1f1``, which the replay writes for every
    castle of a Chess960 game).

    >>> import numpy as np
    >>> board = np.zeros((2, 64), np.uint8); board[:, 4] = 6; board[:, 7] = 4    # king e1, rook h1
    >>> [mask.tolist() for mask in castles(board, np.array([4, 4]), np.array([6, 7]))]
    [[True, True], [False, True]]
    """
    np = _np()
    rows = np.arange(len(frm))
    piece = board[rows, frm].astype(np.int16)
    target = board[rows, to].astype(np.int16)
    king = (piece == 6) | (piece == 12)
    onto_rook = king & (target == piece - 2)
    two = king & (np.abs(to % 8 - frm % 8) == 2) & (to // 8 == frm // 8)
    return onto_rook | two, onto_rook


def move_ids(pa: Any, vocabulary: str, board: Any, frm: Any, to: Any, promotion: Any, white: Any,
             moved: Any) -> Any:
    """The id of each row's move in ``vocabulary`` (uint16; null where ``moved`` is False, a final row)."""
    from fastpgn.training.vocab import ids

    castling, king_takes_rook = castles(board, frm, to)
    out = ids(vocabulary, frm, to, promotion, white, castling=castling, chess960=king_takes_rook)
    return pa.array(out, type=pa.uint16(), mask=~moved)


@cache
def _polyglot_tables() -> tuple[Any, Any]:
    """The Polyglot numbers as ``(pieces[square, code], the other 13)``, codes as the board arrays have them."""
    from fastpgn.board._polyglot import RANDOM64

    np = _np()
    numbers = np.array(RANDOM64, dtype=np.uint64)
    pieces = np.zeros((64, 13), dtype=np.uint64)
    for code in range(1, 13):
        kind = (code - 1) % 6 * 2 + (1 if code <= 6 else 0)    # Polyglot: black pawn, white pawn, black knight ...
        pieces[:, code] = numbers[64 * kind:64 * kind + 64]
    return pieces, numbers[768:]


def fen_ep(pa: Any, fens: Any) -> Any:
    """The en passant square each FEN writes, as int64 (-1: none, unreadable or no FEN)."""
    import pyarrow.compute as pc

    np = _np()
    fields = pc.utf8_split_whitespace(pc.binary_join_element_wise(pc.fill_null(fens, ""), "- - - -", " "))
    ep = pc.list_element(fields, 3)
    file = pc.index_in(pc.utf8_slice_codeunits(ep, 0, 1), value_set=pa.array(list("abcdefgh")))
    rank = pc.index_in(pc.utf8_slice_codeunits(ep, 1, 2), value_set=pa.array(list("12345678")))
    square = pc.add(pc.multiply(rank.cast(pa.int64()), 8), file.cast(pa.int64()))
    return np.asarray(pc.fill_null(square, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def polyglot_keys(pa: Any, board: Any, white: Any, castling: Any, ply: Any, frm: Any, to: Any,
                  start_ep: Any) -> Any:
    """Each row's Polyglot key (uint64).

    ``start_ep`` is the en passant square each row's game starts with (its FEN's,
    -1 none). A later row's is behind the previous row's move when that was a pawn's
    double step. As Polyglot (and python-chess) count it, the en passant file goes
    in only where a pawn of the side to move stands beside the pawn that moved,
    whether or not it may legally take.
    """
    np = _np()
    pieces, others = _polyglot_tables()
    n = len(white)
    keys = np.zeros(n, dtype=np.uint64)
    for square in range(64):    # (a square at a time over all rows: half the time of one (rows, 64) gather)
        keys ^= pieces[square].take(board[:, square])
    for bit, number in ((1, 0), (2, 1), (4, 2), (8, 3)):
        keys ^= np.where(castling & bit, others[number], np.uint64(0))
    keys ^= np.where(white, others[12], np.uint64(0))
    # the en passant square: behind the previous row's double step (same game: ply > 0), or the game's start
    ep = np.asarray(start_ep, dtype=np.int64).copy()
    later = np.flatnonzero(ply > 0)
    before = later - 1
    prev_from, prev_to = frm[before].astype(np.int64), to[before].astype(np.int64)
    pawn = np.isin(board[before, prev_from], (1, 7)) & (np.abs(prev_to - prev_from) == 16)
    ep[later] = np.where(pawn, (prev_from + prev_to) // 2, -1)
    has = ep >= 0
    target = np.where(has, ep, 0)
    beside = target + np.where(white, -8, 8)      # the rank the moved pawn stands on
    own = np.where(white, 1, 7)
    rows = np.arange(n)
    file = target % 8
    left = (file > 0) & (board[rows, np.clip(beside - 1, 0, 63)] == own)
    right = (file < 7) & (board[rows, np.clip(beside + 1, 0, 63)] == own)
    counts = has & (left | right) & (beside >= 0) & (beside < 64)
    keys ^= np.where(counts, others[4 + file], np.uint64(0))
    return pa.array(keys, type=pa.uint64())


def mover_labels(pa: Any, names: Any, white: Any, games: dict[str, Any]) -> dict[str, Any]:
    """The mover's columns among ``names``, from the game columns in ``games`` (taken to the rows already;
    ``eval_cp`` and ``eval_mate`` the entry of the row's move)."""
    import pyarrow.compute as pc

    sign = pa.array(white).cast(pa.bool_())
    out = {}
    if "result_mover" in names:
        result = games["result"]
        if pa.types.is_dictionary(result.type):
            result = result.cast(pa.string())
        score = pc.if_else(pc.equal(result, "1-0"), 1, pc.if_else(pc.equal(result, "0-1"), -1,
                                                                   pc.if_else(pc.equal(result, "1/2-1/2"), 0, None)))
        score = score.cast(pa.int8())
        out["result_mover"] = pc.if_else(sign, score, pc.negate(score)).cast(pa.int8())
    if "mover_elo" in names:
        out["mover_elo"] = pc.if_else(sign, games["white_elo"], games["black_elo"]).cast(pa.int16())
    if "opponent_elo" in names:
        out["opponent_elo"] = pc.if_else(sign, games["black_elo"], games["white_elo"]).cast(pa.int16())
    for name, column, kind in (("eval_cp_mover", "eval_cp", pa.int16()), ("eval_mate_mover", "eval_mate", pa.int8())):
        if name in names:
            value = games[column]
            out[name] = pc.if_else(sign, value, pc.negate(value)).cast(kind)
    return out


def mirrored(pa: Any, board: Any, white: Any, castling: Any, ep: Any, frm: Any, to: Any, promotion: Any,
             move: Any, moved: Any) -> dict[str, Any]:
    """The row columns seen from the side to move: Black's rows as ``board.mirror()`` (ranks flipped, colours
    swapped, castling rights and en passant square with them), their move's squares flipped; White's kept."""
    import pyarrow.compute as pc

    np = _np()
    black = ~np.asarray(white, dtype=bool)
    swap = np.array([0, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6], dtype=np.uint8)
    grid = board.reshape(-1, 8, 8)
    boards = np.where(black[:, None, None], swap[grid[:, ::-1, :]], grid).reshape(-1)
    rights = castling.astype(np.uint8)
    rights = np.where(black, ((rights & 3) << 2) | ((rights >> 2) & 3), rights).astype(np.uint8)
    ep = ep.astype(np.int8)
    ep = np.where(black & (ep >= 0), ep ^ 56, ep).astype(np.int8)
    flip = np.where(black, 56, 0)
    frm = (frm.astype(np.int64) ^ flip).astype(np.uint8)
    to = (to.astype(np.int64) ^ flip).astype(np.uint8)
    names = pa.array([f"{'abcdefgh'[s % 8]}{s // 8 + 1}" for s in range(64)])
    letters = pa.array(["", "", "n", "b", "r", "q"])
    uci = pc.binary_join_element_wise(names.take(pa.array(frm)), names.take(pa.array(to)),
                                      letters.take(pa.array(promotion.astype(np.int64))), "")
    keep = pc.or_(pa.array(~black), pc.fill_null(pc.equal(move, "0000"), True))
    flat = pa.Array.from_buffers(pa.uint8(), len(boards), [None, pa.py_buffer(boards.astype(np.uint8))])
    return {"board": pa.FixedSizeListArray.from_arrays(flat, 64), "castling": pa.array(rights, pa.uint8()),
            "ep_square": pa.array(ep, pa.int8()), "from_square": pa.array(frm, pa.uint8(), mask=~moved),
            "to_square": pa.array(to, pa.uint8(), mask=~moved),
            "move": pc.if_else(keep, move, uci)}

