"""``python -m fastpgn explorer-lookup TREE FEN``: a position's moves in an opening tree (``fastpgn.cli.explorer``)."""

from fastpgn.cli.explorer import lookup_main as main

__all__ = ["main"]
