"""fastpgn: fast, lossless reading and conversion of lichess PGN dumps.

>>> import fastpgn
>>> fastpgn.BACKEND in ("cython", "python")
True
"""

from fastpgn._board import BACKEND as _BOARD_BACKEND
from fastpgn._scan import BACKEND as _SCAN_BACKEND
from fastpgn.board import Board, Move, Outcome, Termination, game_to_pgn, moves_to_pgn, san_to_uci
from fastpgn.errors import (
    AmbiguousMoveError,
    BoardError,
    FormatError,
    IllegalMoveError,
    InputError,
    InvalidFENError,
    PGNError,
    PGNSyntaxError,
)
from fastpgn.formats._compact import BACKEND as _COMPACT_BACKEND
from fastpgn.oneliner import Line, format_line, iter_lines, parse_line
from fastpgn.reader import Game, Rejected, read_games, read_lines

__version__ = "0.1.0"

BACKENDS = {"scan": _SCAN_BACKEND, "board": _BOARD_BACKEND, "compact": _COMPACT_BACKEND}
BACKEND = "cython" if all(b == "cython" for b in BACKENDS.values()) else "python"

__all__ = [
    "BACKEND",
    "BACKENDS",
    "Board",
    "Move",
    "Outcome",
    "Termination",
    "game_to_pgn",
    "moves_to_pgn",
    "san_to_uci",
    "Game",
    "Line",
    "Rejected",
    "format_line",
    "iter_lines",
    "parse_line",
    "read_games",
    "read_lines",
    "AmbiguousMoveError",
    "BoardError",
    "FormatError",
    "IllegalMoveError",
    "InputError",
    "InvalidFENError",
    "PGNError",
    "PGNSyntaxError",
    "__version__",
]
