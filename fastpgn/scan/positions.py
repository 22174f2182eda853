"""Pure-Python positions sink: a block of games -> one row per position, the position before each move.

The twin and reference of the compiled positions sink (scan/positions.pxi).
Both read the column sink's replay (``columns_from_block(uci=True,
fens=True)``: the UCI moves and each ply's FEN, with its rejects) and turn
each game into rows: the position before ply ``i`` is the game's start
(``start_fen``, the one rule both kernels call) for ``i == 0`` and the FEN
after ply ``i - 1`` else; with ``final`` one more row holds the position
after the last move, its move columns null. Per row:

=================  ======================================================================
``game_index``     the game's row among the block's games (int32)
``ply``            the number of plies played before the position (int16; 0: the start)
``board``          64 piece codes, a1 = 0, b1 = 1 ... h8 = 63 (uint8 each): 0 empty,
                   1-6 white P N B R Q K, 7-12 black p n b r q k
``white_to_move``  bool
``castling``       uint8 bits: 1 White's king side, 2 White's queen side, 4 and 8 Black's
``ep_square``      int8: the en passant square the FEN names (one a pawn can take on), -1 none
``halfmove``       uint16: the halfmove clock (at most 65535)
``fullmove``       uint16: the fullmove number (at most 65535)
``from_square``    uint8: the move played from the position (null on the final row)
``to_square``      uint8
``promotion``      uint8: 0 none, 2-5 knight, bishop, rook, queen
``move``           string: the move in UCI
=================  ======================================================================

Here each column is a Python list but ``board``, which is ``bytes`` (64 a row).
"""

from __future__ import annotations

from fastpgn.scan.contract import ScanResult

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: The rows' columns, in order (both kernels).
POSITION_COLUMNS = ("game_index", "ply", "board", "white_to_move", "castling", "ep_square", "halfmove",
                    "fullmove", "from_square", "to_square", "promotion", "move")
#: The columns that are null on a final row (``final=True``).
MOVE_COLUMNS = ("from_square", "to_square", "promotion", "move")
STANDARD_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

_CODES = {c: i + 1 for i, c in enumerate("PNBRQKpnbrqk")}
_PROMOTIONS = {"n": 2, "b": 3, "r": 4, "q": 5}
_MOST = 0xFFFF


def start_fen(fen: str | None, variant: str | None) -> str:
    """The position before a game's first move as the board writes it: the one rule of both kernels.

    ``fen`` and ``variant`` are the game's FEN and Variant tags (None: absent);
    the game's moves replayed from there already (so the FEN reads). The start is
    the replay's own (``fastpgn.board.replay``): a castling right without its rook
    dropped, an en passant square no pawn can take on left out.

    >>> start_fen(None, None) == STANDARD_START
    True
    >>> start_fen("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", None)    # no pawn can take on e3
    '4k3/8/8/8/4P3/8/8/4K3 b - - 0 1'
    """
    if fen is None:
        return STANDARD_START
    from fastpgn.board import declared_start, replay

    fen, chess960 = declared_start(fen, variant)
    return replay("", fen, chess960).fen()


def fen_row(fen: str) -> tuple[bytes, bool, int, int, int, int]:
    """``(board, white_to_move, castling, ep_square, halfmove, fullmove)`` of a FEN the board wrote.

    Castling written as files (Chess960's Shredder letters) counts as the king's
    side when the rook's file is past the king's.

    >>> board, white, castling, ep, half, full = fen_row(STANDARD_START)
    >>> list(board[:8]), list(board[56:]), white, castling, ep, half, full
    ([4, 2, 3, 5, 6, 3, 2, 4], [10, 8, 9, 11, 12, 9, 8, 10], True, 15, -1, 0, 1)
    """
    placement, side, rights, ep, half, full = (fen.split(" ") + ["0", "1"])[:6]
    board = bytearray(64)
    rank, file = 7, 0
    for c in placement:
        if c == "/":
            rank, file = rank - 1, 0
        elif c.isdigit():
            file += int(c)
        else:
            board[8 * rank + file] = _CODES[c]
            file += 1
    castling = 0
    for c in rights:
        if c in "KQkq":
            castling |= {"K": 1, "Q": 2, "k": 4, "q": 8}[c]
        elif c != "-":
            white = c.isupper()
            home = board[0:8] if white else board[56:64]
            king = home.find(6 if white else 12)
            castling |= (1 if ord(c.lower()) - 97 > king else 2) << (0 if white else 2)
    square = -1 if ep == "-" else (ord(ep[0]) - 97) + 8 * (int(ep[1]) - 1)
    return bytes(board), side == "w", castling, square, min(int(half), _MOST), min(int(full), _MOST)


def move_squares(uci: str) -> tuple[int, int, int]:
    """``(from_square, to_square, promotion)`` of a UCI move (``0000``, the null move: ``(0, 0, 0)``).

    >>> move_squares("e7e8q"), move_squares("g1f3")
    ((52, 60, 5), (6, 21, 0))
    """
    if uci == "0000":
        return 0, 0, 0
    return ((ord(uci[0]) - 97) + 8 * (ord(uci[1]) - 49), (ord(uci[2]) - 97) + 8 * (ord(uci[3]) - 49),
            _PROMOTIONS.get(uci[4:5], 0))


def _int16(n: int) -> int:
    """``n`` as C stores it in an int16 (the compiled sink's cast)."""
    return ((n + 0x8000) & 0xFFFF) - 0x8000


def game_rows(out: dict[str, Any], index: int, start: str, fens: list[str], ucis: list[str], final: bool) -> None:
    """Append game ``index``'s rows to ``out`` (the column lists; ``board`` a bytearray)."""
    before = [start, *fens] if final else [start, *fens][:len(ucis)]
    for ply, fen in enumerate(before):
        board, white, castling, ep, half, full = fen_row(fen)
        out["game_index"].append(index)
        out["ply"].append(_int16(ply))
        out["board"] += board
        out["white_to_move"].append(white)
        out["castling"].append(castling)
        out["ep_square"].append(ep)
        out["halfmove"].append(half)
        out["fullmove"].append(full)
        if ply < len(ucis):
            squares = move_squares(ucis[ply])
            out["from_square"].append(squares[0])
            out["to_square"].append(squares[1])
            out["promotion"].append(squares[2])
            out["move"].append(ucis[ply])
        else:
            for name in MOVE_COLUMNS:
                out[name].append(None)


def positions_from_block(data: Any, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                         at_stream_start: bool = True, stop_on_error: bool = False, where: Any = None,
                         openings: Any = None, final: bool = False, scan: Any = None) -> ScanResult[Any]:
    """The positions of the whole games in ``data[start:end]``: a ScanResult ``((games, positions), games_read,
    rejects, filtered)``.

    ``games`` is ``columns_from_block``'s column dict of the games kept (the
    analysis schema's columns, without ``uci`` and ``fens``), ``positions``
    the rows of their positions (this module's docstring); the rejects are
    ``columns_from_block(uci=True)``'s: a game whose moves do not replay is
    one. ``scan`` is the ``games_from_block`` to read records with (default:
    the live kernel's).

    >>> pgn = b'[Site "https://lichess.org/abc"]\\n\\n1. e4 e5 *\\n'
    >>> (games, rows), read, rejects, filtered = positions_from_block(pgn, 0, len(pgn), final=True)
    >>> games["game_id"], rows["ply"], rows["move"], rows["ep_square"], rows["white_to_move"]
    (['abc'], [0, 1, 2], ['e2e4', 'e7e5', None], [-1, -1, -1], [True, False, True])
    """
    from fastpgn.scan import columns as _columns_py  # (here: the compiled kernel imports this module's rules)

    games, read, rejects, filtered = _columns_py.columns_from_block(
        data, start, end, base_offset=base_offset, first_game=first_game, at_stream_start=at_stream_start,
        stop_on_error=stop_on_error, where=where, openings=openings, uci=True, fens=True, scan=scan)
    out: dict[str, Any] = {name: [] for name in POSITION_COLUMNS}
    out["board"] = bytearray()
    for index, (fen, variant, fens, ucis) in enumerate(zip(games["fen"], games["variant"], games.pop("fens"),
                                                           games.pop("uci"))):
        game_rows(out, index, start_fen(fen, variant), fens, ucis, final)
    out["board"] = bytes(out["board"])
    return ScanResult((games, out), read, rejects, filtered)


__all__ = ["MOVE_COLUMNS", "POSITION_COLUMNS", "STANDARD_START", "fen_row", "game_rows", "move_squares",
           "positions_from_block", "start_fen"]
