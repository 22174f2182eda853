"""The positions sinks (scan/positions.pxi and its twin scan/positions.py) give the same rows, game columns,
counts and rejects on every file of the corpus, the golden cases and mutated real games."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend
from fastpgn.scan import columns as _columns_py
from fastpgn.scan.positions import POSITION_COLUMNS
from helpers import CASES, COMPARES_BOTH_KERNELS, MUTATION, NOISE, corpus_files, decompressed, mutated, real_game

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
from fastpgn.parquet.batches import record_batch  # noqa: E402
from fastpgn.positions_reader import _row_array, _row_type  # noqa: E402

BACKENDS = dict(_backend.available("scan._scan"))
pytestmark = [pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here"),
              COMPARES_BOTH_KERNELS]
OPENINGS = _columns_py.default_openings()


def both(data: bytes, **options) -> list:
    """Each kernel's ``(rows as Python, games table, games_read, rejects, filtered)`` for ``data``."""
    answers = []
    for name in ("py", "cy"):
        kernel = BACKENDS[name]
        (games, rows), read, rejects, filtered = kernel.positions_from_block(
            data, 0, len(data), base_offset=7, openings=kernel.opening_table(OPENINGS), **options)
        assert "uci" not in games and "fens" not in games
        made = {column: _row_array(pa, column, rows[column], _row_type(pa, column)).to_pylist()
                for column in POSITION_COLUMNS}
        answers.append((made, pa.Table.from_batches([record_batch(games)]), read, rejects, filtered))
    return answers


def assert_same(data: bytes, **options) -> None:
    (py, py_games, *py_counts), (cy, cy_games, *cy_counts) = both(data, **options)
    assert py_counts == cy_counts
    for column in POSITION_COLUMNS:   # column by column, so a failure names the column
        assert py[column] == cy[column], column
    assert py_games.equals(cy_games)


@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_sinks_agree_on_every_file(path):
    data = decompressed(path)
    assert_same(data, final=True)
    assert_same(data, stop_on_error=True)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), MUTATION, st.integers(0, 10**9), NOISE), min_size=1, max_size=4),
       st.integers(0, 10_000), st.integers(1, 3), st.booleans())
def test_sinks_agree_on_mutated_real_games(mutations, first, count, final):
    data = mutated(b"".join(real_game(first + k) for k in range(count)), mutations)
    assert_same(data, final=final)


def test_sinks_agree_on_games_from_a_fen():
    data = (b'[FEN "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1"]\n\n1. e4 dxe3 *\n\n'
            b'[Variant "Chess960"]\n[FEN "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"]\n\n1. e4 *\n\n'
            b'[FEN "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 12 30"]\n\n30. O-O O-O-O *\n')
    assert_same(data, final=True)
    (rows, games, read, rejects, _), _ = both(data, final=True)
    assert read == 3 and not rejects
    assert rows["ep_square"][:2] == [-1, 20]       # e3 after 1. e4, a pawn on d4 to take it
    assert rows["castling"][-3:] == [1 | 8, 8, 0]
