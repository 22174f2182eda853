"""Backend selector for the compact block kernel (fastpgn.notations._compact_cy or _compact_py)."""

from fastpgn._backend import load

kernel, BACKEND = load("notations._compact")
