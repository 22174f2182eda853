"""Backend selector for the board kernel (fastpgn._board_cy or fastpgn._board_py)."""

from fastpgn._backend import load

kernel, BACKEND = load("_board")
