"""pytest's hooks and fixtures for every test folder; the helpers tests import live in helpers.py."""

from __future__ import annotations

import os

import pytest

from helpers import backend_params


def pytest_report_header(config):
    import fastpgn

    return [f"fastpgn backend: {fastpgn.BACKEND} ({fastpgn.BACKENDS}); "
            f"FASTPGN_IMPLEMENTATION={os.environ.get('FASTPGN_IMPLEMENTATION', 'auto')}"]


@pytest.fixture(params=backend_params("scan._scan"))
def scan(request):
    """Each scanner backend of this run in turn (ids ``py``/``cy``; see ``backend_params``)."""
    return request.param
