"""fastpgn.polars.scan_pgn: a LazyFrame over the stream whose queries equal polars' over the converted Parquet."""

from __future__ import annotations

import datetime

import pytest

pl = pytest.importorskip("polars")
pytest.importorskip("pyarrow")

import fastpgn  # noqa: E402
from fastpgn.errors import InputDamageError  # noqa: E402
from fastpgn.polars import pushed_where, scan_pgn  # noqa: E402
from helpers import shared  # noqa: E402

DUMP = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.multiframe.pgn.zst")

QUERIES = {
    "rated blitz 2200+": lambda lf: lf.filter((pl.col("white_elo") >= 2200) & (pl.col("black_elo") >= 2200)
                                              & (pl.col("speed") == "blitz")).select("game_id", "white", "result"),
    "either side, or": lambda lf: lf.filter((pl.col("white_elo") > 2500) | (pl.col("black_elo") > 2500))
                                    .select("game_id", "white_elo", "black_elo"),
    "speeds, results": lambda lf: lf.filter(pl.col("speed").is_in(["bullet", "rapid"])
                                            & pl.col("result").is_in(["1-0", "0-1"])
                                            & (pl.col("plies") < 40)).select("game_id", "speed", "plies"),
    "eco and dates": lambda lf: lf.filter((pl.col("eco") == "B01") & (pl.col("date") >= datetime.date(2022, 6, 1))
                                          & (pl.col("termination") == "Time forfeit")).select("game_id", "utc"),
    "a player": lambda lf: lf.filter(pl.col("white") == "RainbowSixSiege01").select("game_id", "black"),
    "group by": lambda lf: lf.filter(pl.col("white_elo").is_between(1800, 2000)).group_by("speed")
                             .agg(pl.len().alias("games"), pl.col("plies").mean().alias("plies"))
                             .sort("speed"),
    "moves": lambda lf: lf.filter(pl.col("mate")).select("game_id", "moves", "clock").head(25),
    "head": lambda lf: lf.select("game_id", "white_elo").head(7),
}


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    path = tmp_path_factory.mktemp("polars") / "games.parquet"
    fastpgn.to_parquet(str(shared(*DUMP)), path, jobs=2)
    return path


@pytest.mark.parametrize("name", QUERIES)
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_a_query_on_the_stream_equals_the_query_on_the_converted_parquet(parquet, name, engine):
    query = QUERIES[name]
    got = query(scan_pgn(str(shared(*DUMP)), jobs=2)).collect(engine=engine)
    expected = query(pl.scan_parquet(parquet)).collect()
    assert got.height > 0, name
    assert got.equals(expected), name


def test_the_parts_of_a_predicate_the_kernel_can_test_run_there():
    where = pushed_where((pl.col("white_elo") >= 2200) & (pl.col("black_elo") >= 2100)
                         & pl.col("speed").is_in(["blitz", "rapid"]) & (pl.col("plies") > 20)
                         & (pl.col("date") < datetime.date(2022, 6, 2)) & (pl.col("eco") == "C44"))
    assert where.as_dict() == {"min_elo": 2100, "speed": ["blitz", "rapid"],
                               "until": "2022.06.01", "eco": "C44", "min_plies": 21}
    # An "or", or a column Where cannot test: nothing of it is pushed (polars applies it).
    assert pushed_where((pl.col("white_elo") >= 2200) | (pl.col("plies") > 20)) is None
    assert pushed_where(pl.col("result") == "1-0") is None
    # What is pushed keeps every game the predicate keeps: the kernel's count is at least polars'.
    dump = str(shared(*DUMP))
    query = (pl.col("white_elo") > 2300) & (pl.col("speed") == "blitz")
    pushed = sum(b.num_rows for b in fastpgn.read_arrow(dump, columns=["game_id"], where=pushed_where(query)))
    kept = scan_pgn(dump).filter(query).select(pl.len()).collect().item()
    total = scan_pgn(dump).select(pl.len()).collect().item()
    assert kept == pushed < total == 2499


def test_a_row_limit_stops_the_read_and_a_bad_input_is_one_clear_error(tmp_path):
    assert scan_pgn(str(shared(*DUMP))).head(3).collect().height == 3
    bad = tmp_path / "cut.pgn"
    bad.write_bytes(b'[Event "a"]\n\n1. e4 e5 { cut')
    with pytest.raises(InputDamageError, match="cut.pgn.*ends inside a comment"):
        scan_pgn(str(bad)).collect()
