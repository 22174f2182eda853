"""Fixtures for the kernel micro-benchmarks (``python -m pytest benchmarks --benchmark-only``).

pytest's ``testpaths`` is ``tests/``, so a plain ``python -m pytest`` never
collects this folder; the benchmarks run only when it is named.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastpgn import _backend

ROOT = Path(__file__).resolve().parent.parent
LICHESS_DB = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared")) / "data" / "lichess-db"
BLOCK = 2 << 20   # bytes of real games per benchmarked block (cut at a game boundary)

# name -> file of the shared corpus's data/lichess-db: an old dump (no clocks) and a recent one (clocks, evals)
DATASETS = {
    "2013-01": "lichess_db_standard_rated_2013-01.slice5000.pgn.zst",
    "2022-06": "lichess_db_standard_rated_2022-06.head2499.pgn.zst",
}


@pytest.fixture(params=[pytest.param(mod, id=ident) for ident, mod in _backend.available("scan._scan")])
def scan(request):
    """Each scanner backend in turn (ids ``py``/``cy``)."""
    return request.param


@pytest.fixture(scope="session", params=sorted(DATASETS))
def block(request) -> bytes:
    """About 2 MiB of whole real games from one lichess dump excerpt, read in place."""
    path = LICHESS_DB / DATASETS[request.param]
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpus is read in place)")
    import zstandard

    from fastpgn.io.sources import find_cut

    with open(path, "rb") as f:
        data = zstandard.ZstdDecompressor().stream_reader(f).read()
    cut = find_cut(data, BLOCK)
    return data if cut < 0 else data[:cut]


@pytest.fixture(params=[pytest.param(mod, id=ident) for ident, mod in _backend.available("notations._compact")])
def compact(request):
    """Each compact block kernel in turn (ids ``py``/``cy``)."""
    return request.param


@pytest.fixture(scope="session")
def compact_block(block) -> bytes:
    """The compact strings (lichess-text's input) of the games of ``block``, cut to 1 MiB of whole lines."""
    from fastpgn.errors import FormatError
    from fastpgn.notations.lichess_text import game_to_compact
    from fastpgn.reader import read_games

    texts = []
    for game in read_games(block):
        try:
            texts.append(game_to_compact(game, me=game.headers.get("White", "")))
        except FormatError:
            continue
    data = "\n\n".join(texts).encode()
    return data[:data.rfind(b"\n", 0, 1 << 20)] if len(data) > 1 << 20 else data
