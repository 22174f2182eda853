"""Backend selector for the board kernel (``_board_cy`` or ``_board_py`` beside this file)."""

from fastpgn._backend import load

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)

if TYPE_CHECKING:
    # Both kernels present one interface; a type checker reads it off the pure twin
    # (board/_board_cy.pyi says the same of the compiled one).
    from fastpgn.board import _board_py as kernel

    BACKEND: str
else:
    kernel, BACKEND = load("board._board")
