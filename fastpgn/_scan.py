"""Backend selector for the scanner kernel (fastpgn._scan_cy or fastpgn._scan_py)."""

from fastpgn._backend import load

kernel, BACKEND = load("_scan")
