"""The backend each pass of the test command asks for is the one that runs: CI fails if the compiled
kernels did not load."""

from __future__ import annotations

import os

import fastpgn


def test_compiled_backend_is_live_when_required():
    """CI runs with FASTPGN_IMPLEMENTATION=cython: the compiled kernels must be the ones running."""
    if os.environ.get("FASTPGN_IMPLEMENTATION") == "cython":
        assert fastpgn.BACKEND == "cython", fastpgn.BACKENDS
        assert fastpgn.BACKENDS == {"scan": "cython", "board": "cython", "compact": "cython", "pages": "cython"}
    elif os.environ.get("FASTPGN_IMPLEMENTATION") == "python":
        assert all(b == "python" for b in fastpgn.BACKENDS.values())
    else:
        assert fastpgn.BACKEND in ("cython", "python")
