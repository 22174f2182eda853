"""DuckDB and Hugging Face datasets on the stream: the same answers as over the converted Parquet."""

from __future__ import annotations

import pytest

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

import fastpgn  # noqa: E402
import fastpgn.duckdb as fduckdb  # noqa: E402
from helpers import shared  # noqa: E402

DUMP = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.multiframe.pgn.zst")
SQL = ("SELECT speed, count(*) AS games, round(avg(white_elo), 3) AS elo, sum(plies) AS plies "
       "FROM {} WHERE white_elo >= 1800 GROUP BY speed ORDER BY speed")


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    path = tmp_path_factory.mktemp("faces") / "games.parquet"
    fastpgn.to_parquet(str(shared(*DUMP)), path, jobs=2)
    return path


def test_sql_over_the_stream_equals_sql_over_the_converted_parquet(parquet):
    expected = duckdb.sql(SQL.format(f"read_parquet('{parquet}')")).fetchall()
    assert len(expected) > 3
    con = fduckdb.register(duckdb.connect(), "games", str(shared(*DUMP)), columns=["speed", "white_elo", "plies"],
                           jobs=2)
    assert con.sql(SQL.format("games")).fetchall() == expected
    con = duckdb.connect()
    relation = fduckdb.read_pgn(str(shared(*DUMP)), columns=["speed", "white_elo", "plies"],
                                where={"min_elo": 1800, "elo_of": "white"}, connection=con)
    assert relation.columns == ["speed", "white_elo", "plies"]
    assert con.sql(SQL.format("relation")).fetchall() == expected
    # A reader is an Arrow stream: DuckDB reads it as a Python variable too.
    reader = fastpgn.read_arrow(str(shared(*DUMP)), columns=["speed", "white_elo", "plies"])  # noqa: F841
    assert duckdb.sql(SQL.format("reader")).fetchall() == expected


def test_hugging_face_datasets_build_from_the_stream_as_from_the_parquet(parquet):
    datasets = pytest.importorskip("datasets")
    columns = ["game_id", "white_elo", "result", "moves", "clock"]
    streamed = datasets.Dataset(fastpgn.read_arrow(str(shared(*DUMP)), columns=columns, jobs=2).read_all())
    loaded = datasets.Dataset.from_parquet(str(parquet), columns=columns,
                                           cache_dir=str(parquet.parent / "hf-cache"))
    assert streamed.num_rows == loaded.num_rows == 2499
    assert streamed.features == loaded.features
    assert streamed[:50] == loaded[:50] and streamed[-3:] == loaded[-3:]
