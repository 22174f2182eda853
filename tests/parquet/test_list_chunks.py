"""The per-ply lists' column chunks fastpgn writes itself (``fastpgn.parquet.list_chunks``).

The converter's Parquet has its per-ply lists of numbers and strings
(``moves``, ``clock``, ``judgement``, ...) written by the kernel
(``scan/pages.py`` and its compiled twin) and every other column by pyarrow.
A user notices only through a reader, so the oracle is pyarrow's own encoding
of the same games (``helpers.one_writer``): pyarrow, DuckDB and polars read
the same schema and the same values from both, on the real corpus and on
lists of every shape (null, empty, null items, slices, -0.0, the ends of int8
and int16, empty and long strings, more distinct values or bytes than a
dictionary takes); the files are no bigger; and both kernels write the same
bytes. Spark reads them in tests/test_spark.py.
"""

from __future__ import annotations

import io
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import G2021, G2022, converter_writer, decompressed, one_writer, shared
from fastpgn import _backend

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
pc = pytest.importorskip("pyarrow.compute", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')

from fastpgn import arrow  # noqa: E402
from fastpgn.scan import pages  # noqa: E402

BACKENDS = dict(_backend.available("scan._scan"))
LISTS = ("moves", "clock", "move_seconds", "win_percent", "judgement", "eval_cp", "eval_mate")


def fastpgn_file(tmp_path, table, rows: int) -> bytes:
    """``table`` in row groups of ``rows`` games as the converter writes them (its encoder and join)."""
    return converter_writer(table, rows)


def games(*where: str):
    with arrow.read_arrow(decompressed(shared(*where)), errors="skip") as reader:
        return pa.Table.from_batches(list(reader), schema=reader.schema)


def assert_read_alike(tmp_path, ours: bytes, theirs: bytes, columns) -> None:
    """pyarrow, DuckDB and polars read the same schema and values from both files."""
    a, b = pq.ParquetFile(io.BytesIO(ours)), pq.ParquetFile(io.BytesIO(theirs))
    assert a.schema_arrow.equals(b.schema_arrow, check_metadata=True)
    assert a.schema.equals(b.schema)                      # the Parquet schema: types, repetitions, names
    assert a.read().equals(b.read())
    paths = []
    for name, data in (("ours", ours), ("theirs", theirs)):
        paths.append(tmp_path / f"{name}.parquet")
        paths[-1].write_bytes(data)
    cols = ", ".join(columns)
    got = [duckdb.sql(f"SELECT {cols} FROM read_parquet('{p}')").fetchall() for p in paths]
    assert got[0] == got[1]
    polars = pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')
    frames = [polars.read_parquet(p, columns=list(columns)) for p in paths]
    assert frames[0].equals(frames[1])


@pytest.mark.parametrize("dump, rows", [(G2022, 700), (G2021, 16_384)], ids=["2022-evals", "2021-clocks"])
def test_readers_read_the_converters_lists_as_pyarrows(tmp_path, dump, rows):
    table = games(*dump)
    # the corpus holds what the lists can hold: clocks, evals, mates, nulls among the items
    assert pc.sum(pc.list_value_length(table.column("clock"))).as_py() > 10_000
    assert table.column("eval_cp").null_count < table.num_rows
    ours = fastpgn_file(tmp_path, table, rows)
    theirs = one_writer(table, rows)
    assert_read_alike(tmp_path, ours, theirs, ("game_id", *LISTS))
    assert pq.ParquetFile(io.BytesIO(ours)).metadata.num_row_groups == -(-table.num_rows // rows)
    # no bigger than pyarrow's (a user keeps a month of these)
    assert len(ours) <= 1.01 * len(theirs)


SHAPES = {
    "float": [[1.0, -0.0, 0.0, None], None, [], [3.5, 3.5, float("inf")], [None], [-2.25e9, 1e-30]],
    "int16": [[-32768, 32767, 0, None], None, [], [5, 5, 5, -1], [None, None]],
    "int8": [[-128, 127, None], [], None, [0, 0, -1]],
    "string": [["e4", "", None, "e4"], None, [], ["Nxe5+", "O-O-O#", "a" * 40, "é♞", "a" * 8, "a" * 9],
               [None], ["", ""]],
}
TYPES = {"float": pa.float32(), "int16": pa.int16(), "int8": pa.int8(), "string": pa.string()}


@pytest.mark.parametrize("kind", list(SHAPES))
def test_every_shape_of_list_reads_back(tmp_path, kind):
    typ = TYPES[kind]
    lists = SHAPES[kind] * 50
    table = pa.table({"n": pa.array(range(len(lists)), pa.int32()), "l": pa.array(lists, pa.list_(typ)),
                      "none": pa.array([None] * len(lists), pa.list_(typ)),        # a column of null lists only
                      "empty": pa.array([[]] * len(lists), pa.list_(typ))})
    ours = fastpgn_file(tmp_path, table, 7)            # row groups that start within the lists (slices)
    assert_read_alike(tmp_path, ours, one_writer(table, 7), ("n", "l", "none", "empty"))
    # -0.0 stays -0.0 (its bits, not only its value)
    if kind == "float":
        back = pq.read_table(io.BytesIO(ours)).column("l").to_pylist()
        assert [struct.pack("<f", v) for v in back[0] if v is not None][1] == struct.pack("<f", -0.0)


@pytest.mark.parametrize("kind", ["float", "string"])
def test_more_distinct_values_than_a_dictionary_takes_are_written_plain(tmp_path, kind):
    # floats: more values than DICTIONARY_LIMIT; strings: fewer values, but more bytes than DICTIONARY_BYTES
    n = pages.DICTIONARY_LIMIT + 5000 if kind == "float" else pages.DICTIONARY_BYTES // 100 + 500
    values = [i / 8 for i in range(n)] if kind == "float" else [f"{i:0100d}" for i in range(n)]
    lists = [values[i:i + 100] for i in range(0, n, 100)]
    table = pa.table({"n": pa.array(range(len(lists)), pa.int32()), "l": pa.array(lists, pa.list_(TYPES[kind]))})
    ours = fastpgn_file(tmp_path, table, table.num_rows)
    column = pq.ParquetFile(io.BytesIO(ours)).metadata.row_group(0).column(1)
    assert not column.has_dictionary_page and "RLE_DICTIONARY" not in column.encodings
    assert_read_alike(tmp_path, ours, one_writer(table, table.num_rows), ("n", "l"))
    # and well within the limits, a dictionary
    small = table.slice(0, len(lists) // 2)
    assert pq.ParquetFile(io.BytesIO(fastpgn_file(tmp_path, small, small.num_rows))).metadata.row_group(
        0).column(1).has_dictionary_page


# ---------------------------------------------------------------- the two kernels

needs_both = pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here")


def answers(array):
    out = []
    for name in ("py", "cy"):
        try:
            out.append(BACKENDS[name].list_page(array))
        except Exception as exc:  # noqa: BLE001 - the errors are compared too
            out.append((type(exc).__name__, str(exc)))
    return out


@needs_both
@pytest.mark.parametrize("dump", [G2022, G2021], ids=["2022-evals", "2021-clocks"])
def test_both_kernels_write_the_same_pages_of_the_corpus(dump):
    table = games(*dump)
    for name in LISTS:
        column = table.column(name).combine_chunks()
        for at in (0, 333):
            py, cy = answers(column.slice(at, 700))
            assert py == cy, name


ITEMS = {"float": st.floats(width=32, allow_nan=False), "int16": st.integers(-32768, 32767),
         "int8": st.integers(-128, 127), "string": st.text(max_size=12) | st.sampled_from(["e4", "Nf3", "O-O"])}


@needs_both
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(list(ITEMS)), data=st.data())
def test_both_kernels_write_the_same_pages(kind, data):
    items = data.draw(st.one_of(ITEMS[kind], st.none()) if kind != "float" else
                      st.one_of(st.sampled_from([0.0, -0.0, 1.0, 2.5, 60.0]), ITEMS[kind], st.none()))
    lists = data.draw(st.lists(st.one_of(st.none(), st.lists(st.just(items) | st.one_of(ITEMS[kind], st.none()),
                                                             max_size=40)), max_size=60))
    array = pa.array(lists, pa.list_(TYPES[kind]))
    start = data.draw(st.integers(0, len(lists)))
    array = array.slice(start, data.draw(st.integers(0, len(lists) - start)))
    py, cy = answers(array)
    assert py == cy
    body, dictionary, entries, distinct = py
    assert entries == sum(max(1, len(v)) if v is not None else 1 for v in array.to_pylist())
    present = {struct.pack("<f", x) if kind == "float" else x          # -0.0 and 0.0: two values
               for v in array.to_pylist() if v for x in v if x is not None}
    assert distinct == len(present) and (dictionary is None) == (not present)


@needs_both
def test_both_kernels_refuse_what_they_cannot_write_alike():
    py, cy = answers(pa.array([[b"e4"]], pa.list_(pa.binary())))
    assert py == cy and py[0] == "TypeError" and "binary" in py[1]
    # offsets that run past the values: pyarrow builds no such array, so a stand-in holds real buffers
    items = pa.array([1.0, 2.0], pa.float32())

    class Broken:
        type, offset, values_ = pa.list_(pa.float32()), 0, items

        def __len__(self):
            return 1

        def buffers(self):
            return [None, pa.py_buffer(struct.pack("<2i", 0, 5))]

        @property
        def values(self):
            return self.values_

    py, cy = answers(Broken())
    assert py == cy and py[0] == "ValueError" and "offsets" in py[1]


# ---------------------------------------------------------------- every Parquet file fastpgn writes

def test_to_parquet_writes_the_converters_encoding(tmp_path):
    """to_parquet's file is the converter's encoding of its batches (one row group each), and a file object
    given to it is left open."""
    dump = decompressed(shared(*G2022))
    with arrow.read_arrow(dump, batch_size=700) as reader:
        table = pa.Table.from_batches(list(reader), schema=reader.schema)
    out = io.BytesIO()
    arrow.to_parquet(dump, out, batch_size=700)
    assert not out.closed
    assert out.getvalue() == converter_writer(table, 700)
    assert_read_alike(tmp_path, out.getvalue(), one_writer(table, 700), ("game_id", *LISTS))


def test_a_file_of_no_games_is_pyarrows_empty_file(tmp_path):
    path = tmp_path / "none.parquet"
    reader = arrow.to_parquet(b"", path)
    assert reader.games_yielded == 0
    theirs = io.BytesIO()
    arrow.parquet_writer(theirs, reader.schema).close()
    assert path.read_bytes() == theirs.getvalue()
    assert pq.ParquetFile(path).metadata.num_rows == 0
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall() == [(0,)]
