"""The board: FEN, legal moves, SAN and UCI, outcomes and draws, replay, PGN writing.

``Board`` and the functions here are written once (``face.py``) over the
live kernel's ``BoardCore`` (``_board_cy`` or its pure twin ``_board_py``,
chosen by ``_kernel.py``). The names load on first use: the scanner kernel
imports this package for the compiled core alone.

>>> from fastpgn.board import Board
>>> Board().push_san("e4").uci()
'e2e4'
"""

from __future__ import annotations

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

    from fastpgn.board.face import *  # noqa: F403
    from fastpgn.board.face import BACKEND, STARTING_FEN, Board, Move, Outcome, Termination  # noqa: F401


def __getattr__(name: str) -> Any:
    if name.startswith("__") or name == "face":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    face = import_module("fastpgn.board.face")
    value = getattr(face, name)
    globals()[name] = value
    return value
