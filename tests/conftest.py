"""Shared fixtures: both kernel backends, and the shared corpus read in place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastpgn import _backend

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
CONFORMANCE = SHARED / "conformance"
CASES = Path(__file__).resolve().parent / "cases"


def pytest_report_header(config):
    import fastpgn

    return [f"fastpgn backend: {fastpgn.BACKEND} ({fastpgn.BACKENDS}); "
            f"FASTPGN_IMPLEMENTATION={os.environ.get('FASTPGN_IMPLEMENTATION', 'auto')}"]


def shared(*parts: str) -> Path:
    """A path under ../shared, or skip the test when the folder is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpus is read in place)")
    return path


def missing_system_package(install: str):
    """Skip a test whose system package is absent, naming the install line; on CI, fail instead.

    The test command installs the system packages the tests need, so on CI
    (``CI`` set, as ``.ci/run`` runs) an absent one is a broken setup, not a
    reason to skip.
    """
    if os.environ.get("CI"):
        pytest.fail(f"{install} (the test command installs it; CI must not skip these tests)")
    pytest.skip(install)


def kernel_params(name: str):
    """Every backend of kernel ``name`` as pytest params (ids ``py``/``cy``): for tests that compare them."""
    return [pytest.param(mod, id=ident) for ident, mod in _backend.available(name)]


def backend_params(name: str):
    """The backends a kernel test runs on, one at a time: the one ``FASTPGN_IMPLEMENTATION`` names.

    The test command runs the suite twice, under ``cython`` then ``python``,
    so each such test runs once on each backend; a plain ``pytest`` (``auto``)
    runs it on both. Tests that compare the backends take ``kernel_params``.
    """
    wanted = {"cython": "cy", "python": "py"}.get(_backend.requested())
    return [p for p in kernel_params(name) if wanted in (None, p.id)]


def typed(games):
    """games_from_block's answer with each per-ply value's type beside it (60 == 60.0, but a clock changed type)."""
    records, read, rejects = games
    return ([r[:3] + tuple([(type(v).__name__, v) for v in r[k]] for k in (3, 4, 5)) + r[6:] for r in records],
            read, rejects)


@pytest.fixture(params=backend_params("scan._scan"))
def scan(request):
    """Each scanner backend of this run in turn (ids ``py``/``cy``; see ``backend_params``)."""
    return request.param
