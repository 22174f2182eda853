"""fastpgn: fast, lossless reading and conversion of lichess PGN dumps.

>>> import fastpgn
>>> fastpgn.BACKEND in ("cython", "python")
True
"""

from fastpgn.board._kernel import BACKEND as _BOARD_BACKEND
from fastpgn.errors import (
    AmbiguousMoveError,
    BoardError,
    EngineError,
    FormatError,
    IllegalMoveError,
    InputError,
    InvalidFENError,
    OutputError,
    PGNError,
    PGNSyntaxError,
)
from fastpgn.game import Game
from fastpgn.notations._compact import BACKEND as _COMPACT_BACKEND
from fastpgn.parquet.pages import BACKEND as _PAGES_BACKEND
from fastpgn.reader import read_games, read_headers, read_lines
from fastpgn.scan import BACKEND as _SCAN_BACKEND

# The board layer and the 22-field line reader load on first use: a program
# that only reads games does not pay for importing them.
_LAZY = {name: "fastpgn.board" for name in
         ("Board", "Move", "Outcome", "Termination", "game_to_pgn", "moves_to_pgn", "san_to_uci")}
_LAZY.update({name: "fastpgn.oneliner" for name in ("Line", "format_line", "iter_lines", "parse_line")})
_LAZY.update({"Where": "fastpgn.filters", "Engine": "fastpgn.engine", "Rejected": "fastpgn.errors"})
# Arrow and Parquet output; pyarrow itself is imported only when they run.
_LAZY.update({name: "fastpgn.arrow" for name in ("read_arrow", "to_parquet")})
_LAZY["to_csv"] = "fastpgn.csv_rows"
_LAZY["position_key"] = "fastpgn.positions"
_LAZY["read_positions"] = "fastpgn.positions_reader"
_LAZY["write_pgn"] = "fastpgn.writer"


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fastpgn' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__version__ = "0.1.0"

BACKENDS = {"scan": _SCAN_BACKEND, "board": _BOARD_BACKEND, "compact": _COMPACT_BACKEND, "pages": _PAGES_BACKEND}
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
    "read_headers",
    "read_lines",
    "write_pgn",
    "read_arrow",
    "to_parquet",
    "to_csv",
    "position_key",
    "read_positions",
    "Where",
    "Engine",
    "AmbiguousMoveError",
    "BoardError",
    "EngineError",
    "FormatError",
    "IllegalMoveError",
    "InputError",
    "InvalidFENError",
    "OutputError",
    "PGNError",
    "PGNSyntaxError",
    "__version__",
]
