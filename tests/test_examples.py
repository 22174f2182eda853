"""The example scripts run on real games and say what the library says."""

from __future__ import annotations

import importlib.util

import pytest

from helpers import ROOT, shared

pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_accuracy_by_rating_counts_every_side_with_an_accuracy(tmp_path, capsys):
    import duckdb

    import fastpgn
    from fastpgn.cli import main as fastpgn_main

    dump = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    assert fastpgn_main([str(dump), "100000", "--format", "parquet", "-o", str(tmp_path / "games"), "-q"]) == 0
    example = _example("accuracy_by_rating")
    assert example.main([str(tmp_path / "games")]) == 0
    assert "By the player's rating" in capsys.readouterr().out
    con = duckdb.connect()
    con.register("games", con.read_parquet(str(tmp_path / "games" / "*.parquet")))
    rows = con.sql(example.BY_RATING).fetchall()
    sides = sum(1 for g in fastpgn.read_games(dump) for colour in ("White", "Black")
                if getattr(g, f"{colour.lower()}_accuracy") is not None
                and g.headers.get(f"{colour}Elo", "?").isdigit())
    assert sides > 300 and sum(r[1] for r in rows) == sides
    empty = tmp_path / "empty"
    empty.mkdir()
    assert example.main([str(empty)]) == 2
