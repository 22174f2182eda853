"""fastpgn.arrow.ParquetWriter: the settings every Parquet file of fastpgn gets, and its fast path.

The writer hands pyarrow the SAN (and UCI) moves dictionary-encoded by the
kernels' ``dictionary_encode``; the file must be the one pyarrow writes from
the plain strings, read back with the schema's types by every reader.
"""

from __future__ import annotations

import io
import random

import pytest

from conftest import CASES, kernel_params
from test_differential import corpus_files
from test_scan import decompressed

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
pc = pytest.importorskip("pyarrow.compute", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
pl = pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')

from fastpgn import arrow, schema  # noqa: E402
from fastpgn.errors import InputError  # noqa: E402

KERNELS = kernel_params("_scan")
WORDS = ["", "\0", "a", "a\0", "e4", "O-O-O+", "exd8=Q#", "abcdefgh", "abcdefghi", "Qh4xe1+!?", "é", "ñandú",
         "x" * 100, "\U0001f600", "Nf3"]


def decoded(result) -> tuple[list[int], list[str]]:
    """A kernel's ``dictionary_encode`` answer as (indices, distinct strings)."""
    indices, count, offsets, data = result
    ids = pa.Array.from_buffers(pa.int32(), len(memoryview(indices)) // 4, [None, pa.py_buffer(indices)])
    values = pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return ids.to_pylist(), values.to_pylist()


def table_of(source, **options):
    """The games of ``source`` as one table (those before the damage of a truncated file)."""
    batches = []
    with arrow.read_arrow(source, **options) as reader:
        try:
            batches.extend(reader)
        except InputError:
            pass
        return pa.Table.from_batches(batches, schema=reader.schema)


def moves_of(path) -> pa.Array:
    table = table_of(decompressed(path), columns=["moves"], errors="skip")
    return table.column("moves").combine_chunks().values


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("path", corpus_files()[:3], ids=lambda p: p.name)
def test_dictionary_encode_numbers_moves_by_first_occurrence(kernel, path):
    moves = moves_of(path)
    indices, values = decoded(kernel.dictionary_encode(moves))
    expected = pc.dictionary_encode(moves)      # pyarrow's hash kernel: the oracle
    assert values == expected.dictionary.to_pylist()
    assert indices == expected.indices.to_pylist()
    assert [values[i] for i in indices] == moves.to_pylist()


@pytest.mark.parametrize("kernel", KERNELS)
def test_dictionary_encode_on_odd_strings_and_slices(kernel):
    rng = random.Random(7)
    strings = [rng.choice(WORDS) + (str(rng.randrange(5000)) if rng.random() < 0.5 else "") for _ in range(20000)]
    array = pa.array(strings, pa.string())
    for part in (array, array.slice(1234, 5000), array.slice(19999), array.slice(0, 0), pa.array([], pa.string())):
        indices, values = decoded(kernel.dictionary_encode(part))
        assert [values[i] for i in indices] == part.to_pylist()
        assert len(values) == len(set(part.to_pylist()))
        assert values == list(dict.fromkeys(part.to_pylist()))     # first occurrence order


@pytest.mark.parametrize("kernel", KERNELS)
def test_dictionary_encode_refuses_nulls_and_other_types_alike(kernel):
    with pytest.raises(ValueError, match="without nulls"):
        kernel.dictionary_encode(pa.array(["e4", None]))
    with pytest.raises(TypeError, match="string array, not int64"):
        kernel.dictionary_encode(pa.array([1, 2]))


def write(table, *, fast: bool, row_group_size: int | None = None) -> bytes:
    out = io.BytesIO()
    if fast:
        with arrow.ParquetWriter(out, table.schema) as writer:
            writer.write_table(table, row_group_size=row_group_size)
    else:   # pyarrow from the plain strings, with the same settings
        writer = pq.ParquetWriter(out, table.schema, compression="zstd",
                                  use_dictionary=[p for f in table.schema if f.name not in ("game_id", "offset")
                                                  for p in arrow._leaf_paths(f)],
                                  write_statistics=[f.name for f in table.schema
                                                    if not (pa.types.is_list(f.type) or pa.types.is_map(f.type))])
        for start in range(0, table.num_rows, row_group_size or table.num_rows):
            writer.write_table(table.slice(start, row_group_size or table.num_rows).combine_chunks())
        writer.close()
    return out.getvalue()


@pytest.mark.parametrize("path", corpus_files() + [CASES / "null-moves.pgn"], ids=lambda p: p.name)
def test_the_file_is_pyarrows_own_and_reads_back_typed(path):
    table = table_of(decompressed(path), errors="skip", uci=True, batch_size=1000)
    fast = write(table, fast=True, row_group_size=700)
    assert fast == write(table, fast=False, row_group_size=700)
    back = pq.read_table(io.BytesIO(fast))
    assert back.schema.field("moves").type == pa.list_(pa.string())
    assert back.schema.field("uci").type == pa.list_(pa.string())
    assert back.column("moves").to_pylist() == table.column("moves").to_pylist()
    assert back.column("uci").to_pylist() == table.column("uci").to_pylist()
    frame = pl.read_parquet(io.BytesIO(fast))
    assert frame["moves"].to_list() == table.column("moves").to_pylist()
    assert frame.schema["moves"] == pl.List(pl.String)


def test_pages_dictionary_encoded_where_values_repeat_plain_where_unique(tmp_path):
    path = tmp_path / "games.parquet"
    arrow.to_parquet(decompressed(corpus_files()[0]), path)
    meta = pq.ParquetFile(path).metadata
    columns = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
               for i in range(meta.num_columns)}
    assert set(columns) == {p for f in schema.arrow_schema() for p in arrow._leaf_paths(f)}
    for name in ("moves.list.element", "clock.list.element", "white", "event", "tags.key_value.key"):
        assert "RLE_DICTIONARY" in columns[name].encodings, name
    for name in ("game_id", "offset"):
        assert "RLE_DICTIONARY" not in columns[name].encodings, name
    assert columns["white_elo"].statistics.has_min_max and columns["moves.list.element"].statistics is None
    rows = duckdb.sql(f"SELECT game_id, moves[1] FROM read_parquet('{path}') LIMIT 3").fetchall()
    first = table_of(decompressed(corpus_files()[0]), columns=["game_id", "moves"]).slice(0, 3)
    assert rows == [(g, m[0] if m else None) for g, m in zip(first.column("game_id").to_pylist(),
                                                             first.column("moves").to_pylist())]


def test_a_table_of_another_schema_is_refused():
    table = table_of(b"1. e4 *\n")
    with arrow.ParquetWriter(io.BytesIO(), table.schema) as writer:
        with pytest.raises(ValueError, match="another schema"):
            writer.write_table(table.drop_columns(["moves"]))
