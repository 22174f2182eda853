"""Backend selector for the board kernel (fastpgn._board_cy or fastpgn._board_py)."""

from fastpgn._backend import load

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)

if TYPE_CHECKING:
    # Both kernels present one interface; a type checker reads it off the pure twin
    # (_board_cy.pyi says the same of the compiled one).
    from fastpgn import _board_py as kernel

    BACKEND: str
else:
    kernel, BACKEND = load("_board")
