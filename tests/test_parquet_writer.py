"""fastpgn.parquet.settings.parquet_writer: the settings every Parquet file of fastpgn gets.

Dictionary pages where values repeat, plain pages where they never do
(game ids, offsets), statistics on the scalar columns that are not text; DuckDB, polars
and pyarrow read the files back with the schema's types.
"""

from __future__ import annotations

import pytest

from helpers import decompressed, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
pl = pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')

from fastpgn import arrow, schema  # noqa: E402
from fastpgn.errors import InputError  # noqa: E402
from fastpgn.parquet import settings  # noqa: E402


def table_of(source, **options):
    """The games of ``source`` as one table (those before the damage of a truncated file)."""
    batches = []
    with arrow.read_arrow(source, **options) as reader:
        try:
            batches.extend(reader)
        except InputError:
            pass
        return pa.Table.from_batches(batches, schema=reader.schema)


def test_pages_dictionary_encoded_where_values_repeat_plain_where_unique(tmp_path):
    path = tmp_path / "games.parquet"
    dump = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    arrow.to_parquet(dump, path)
    meta = pq.ParquetFile(path).metadata
    columns = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
               for i in range(meta.num_columns)}
    assert set(columns) == {p for f in schema.arrow_schema() for p in settings._leaf_paths(f)}
    for name in ("moves.list.element", "clock.list.element", "white", "event", "tags.list.element.key"):
        assert "RLE_DICTIONARY" in columns[name].encodings, name
    for name in ("game_id", "byte_offset"):
        assert "RLE_DICTIONARY" not in columns[name].encodings, name
    # no encoding that Spark 3.5's reader refuses
    assert not any("BYTE_STREAM_SPLIT" in c.encodings or "DELTA" in " ".join(c.encodings) for c in columns.values())
    assert columns["white_elo"].statistics.has_min_max and columns["moves.list.element"].statistics is None
    assert columns["utc"].statistics.has_min_max and columns["date"].statistics.has_min_max
    # no min/max of text: no reader prunes a row group of thousands of games by its first and last name
    assert all(columns[name].statistics is None for name in ("white", "event", "opening", "game_id"))
    # read back typed by every reader, game for game
    games = table_of(dump)
    back = pq.read_table(path)
    assert back.schema.field("byte_offset").type == pa.int64() and back.equals(games.cast(back.schema))
    rows = duckdb.sql(f"SELECT game_id, byte_offset, moves, clock FROM read_parquet('{path}')").fetchall()
    assert rows == list(zip(*(games.column(c).to_pylist() for c in ("game_id", "byte_offset", "moves", "clock"))))
    assert any(clock for *_, clock in rows)
    frame = pl.read_parquet(path)
    assert frame["game_id"].to_list() == games.column("game_id").to_pylist()
    assert frame["clock"].to_list() == games.column("clock").to_pylist()
    assert frame["byte_offset"].dtype == pl.Int64
