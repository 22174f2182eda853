"""pytest-benchmark micro-benchmarks of the kernels, both backends, on real lichess games.

The scanner on blocks of PGN; lichess-text's compact block reader on the
compact strings of the same games.

Not part of the test run (pytest's testpaths is ``tests/``). Run them with::

    python -m pytest benchmarks --benchmark-only
    python -m pytest benchmarks --benchmark-only -k cy --benchmark-columns=median,ops,rounds

Each benchmark records the block size in ``extra_info`` and its median MB/s
(MB = 10**6 bytes), so ``--benchmark-json`` output carries throughput too.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")

from fastpgn import openings  # noqa: E402


@pytest.fixture(scope="module")
def table():
    return openings.load()


def _throughput(benchmark, nbytes: int) -> None:
    benchmark.extra_info["MB"] = round(nbytes / 1e6, 3)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        benchmark.extra_info["MB/s (median)"] = round(nbytes / 1e6 / stats.stats.median, 1)


def test_lines_from_block(benchmark, scan, block, table):
    table = scan.opening_table(table)  # as read_lines and the converter pass the map
    out, games, rejects, _ = benchmark(scan.lines_from_block, block, 0, len(block), openings=table)
    assert games == out.count(b"\n") > 0 and not rejects
    _throughput(benchmark, len(block))


def test_games_from_block(benchmark, scan, block):
    records, games, rejects, _ = benchmark(scan.games_from_block, block, 0, len(block))
    assert games == len(records) > 0 and not rejects
    _throughput(benchmark, len(block))


def test_lines_from_block_validated(benchmark, scan, block, table):
    """The 22-field line with every SAN move replayed on the same backend's board (the moves_hook path)."""
    from benchmarks.contenders import validation_hook
    from fastpgn import _backend

    try:
        boards = dict(_backend.available("board._board"))
    except ImportError:
        boards = {}
    ident = "cy" if scan.__name__.endswith("_cy") else "py"
    hook = validation_hook(boards[ident]) if ident in boards else None
    if hook is None:
        pytest.skip(f"no {ident} board kernel with san_to_uci (fastpgn.board._board_{ident})")
    table = scan.opening_table(table)
    out, games, rejects, _ = benchmark(scan.lines_from_block, block, 0, len(block), openings=table, moves_hook=hook)
    assert games == out.count(b"\n") > 0 and not rejects
    _throughput(benchmark, len(block))


def test_block_movetext(benchmark, compact, compact_block):
    """lichess-text's kernel: the PGN movetext of every moves line of a block of compact strings."""
    movetexts = benchmark(compact.block_movetext, compact_block)
    moves_lines = sum(line[:1] == b"1" and line[2:3] != b"." for line in compact_block.split(b"\n"))
    assert sum(m is not None for m in movetexts) > 0.99 * moves_lines
    _throughput(benchmark, len(compact_block))
