"""``read_arrow`` asked for header columns only: read_headers' games, the full read's values, both backends."""

from __future__ import annotations

import pytest

import fastpgn
from fastpgn.reader import read_headers
from helpers import corpus_files, real_game

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')

HEADS = ["game_id", "white_elo", "black_elo", "result", "speed", "byte_offset", "tags"]


@pytest.mark.parametrize("path", [p for p in corpus_files() if p.name.endswith((".zst", ".bz2"))][:3],
                         ids=lambda p: p.name)
def test_header_columns_of_a_dump_are_the_full_reads_and_read_headers_games(path):
    heads = fastpgn.read_arrow(path, columns=HEADS, jobs=2).read_all()
    full = fastpgn.read_arrow(path, jobs=2).read_all()
    assert heads.num_rows == full.num_rows > 0
    assert heads.equals(full.select(HEADS))
    assert heads.column("byte_offset").to_pylist() == [g.offset for g in read_headers(path)]


def test_header_columns_read_a_game_whose_moves_are_damaged_as_read_headers_does():
    damaged = real_game(4).replace(b"1. e4 ", b"1. e4 Zz9 ", 1)
    data = real_game(3) + damaged
    reader = fastpgn.read_arrow(data, columns=["white", "black"], errors="skip")
    assert reader.read_all().num_rows == 2 and reader.rejected == []
    full = fastpgn.read_arrow(data, columns=["white", "plies"], errors="skip")
    assert full.read_all().num_rows == 1 and len(full.rejected) == 1


def test_a_movetext_filter_or_a_replay_reads_the_moves_even_for_header_columns():
    data = real_game(3) + real_game(4).replace(b"1. e4 ", b"1. e4 Zz9 ", 1)
    for options in ({"where": {"min_plies": 1}}, {"uci": True}):
        reader = fastpgn.read_arrow(data, columns=["white"], errors="skip", **options)
        assert reader.read_all().num_rows == 1 and len(reader.rejected) == 1, options
