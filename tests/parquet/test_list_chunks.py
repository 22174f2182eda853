"""The per-ply lists' column chunks fastpgn writes itself (``fastpgn.parquet.list_chunks``).

The converter's Parquet has its per-ply lists of numbers and strings
(``moves``, ``clock``, ``judgement``, ...) written by the list-page writer
(``fastpgn.parquet.pages``) and every other column by pyarrow.
A user notices only through a reader, so the oracle is pyarrow's own encoding
of the same games (``helpers.one_writer``): pyarrow, DuckDB and polars read
the same schema and the same values from both, on the real corpus and on
lists of every shape (null, empty, null items, slices, -0.0, the ends of int8
and int16, empty and long strings, more distinct values or bytes than a
dictionary takes); the files are no bigger. That both list-page writers
write the same bytes is tests/parquet/test_pages.py's; Spark reads the files
in tests/test_spark.py.
"""

from __future__ import annotations

import io
import struct

import pytest

from helpers import G2021, G2022, converter_writer, decompressed, one_writer, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
pc = pytest.importorskip("pyarrow.compute", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')

from fastpgn import arrow  # noqa: E402
from fastpgn.parquet.pages import kernel as pages  # noqa: E402

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


# ---------------------------------------------------------------- --parquet-writer pyarrow: every column pyarrow's

def test_to_parquet_with_the_pyarrow_writer_writes_pyarrows_file(tmp_path):
    """``writer="pyarrow"``: the same table and schema read back as with fastpgn's writer, and the bytes are
    pyarrow's own ParquetWriter's (its pages of the per-ply lists too, which fastpgn's writer does not
    write as pyarrow does)."""
    dump = decompressed(shared(*G2021))
    ours, theirs = io.BytesIO(), io.BytesIO()
    arrow.to_parquet(dump, ours, batch_size=700)
    arrow.to_parquet(dump, theirs, batch_size=700, writer="pyarrow")
    a, b = pq.ParquetFile(io.BytesIO(ours.getvalue())), pq.ParquetFile(io.BytesIO(theirs.getvalue()))
    assert a.schema_arrow.equals(b.schema_arrow, check_metadata=True) and a.schema.equals(b.schema)
    assert a.read().equals(b.read()) and a.metadata.num_rows > 700
    table = games(*G2021)
    assert theirs.getvalue() == one_writer(table, 700)
    assert ours.getvalue() != theirs.getvalue()
    with pytest.raises(ValueError, match="fastpgn or pyarrow, not 'arrow'"):
        arrow.to_parquet(dump, io.BytesIO(), writer="arrow")


def test_the_converter_with_the_pyarrow_writer_writes_pyarrows_chunks(tmp_path):
    """``--parquet-writer pyarrow``: the chunks read back as the default ones, in pyarrow's bytes; asked of a
    format that is not Parquet, a usage error."""
    from fastpgn.cli import main

    dump = str(shared(*G2022))
    for writer in ("fastpgn", "pyarrow"):
        assert main([dump, "1000", "--format", "parquet", "-o", str(tmp_path / writer), "-q", "-j", "2",
                     "--parquet-writer", writer]) == 0
    ours, theirs = (sorted((tmp_path / w).glob("*.parquet")) for w in ("fastpgn", "pyarrow"))
    assert [p.name for p in ours] == [p.name for p in theirs] and len(ours) == 3
    table = games(*G2022)
    for at, (mine, pyarrows) in enumerate(zip(ours, theirs)):
        a, b = pq.ParquetFile(mine), pq.ParquetFile(pyarrows)
        assert a.schema_arrow.equals(b.schema_arrow, check_metadata=True) and a.schema.equals(b.schema)
        assert a.read().equals(b.read())
        assert pyarrows.read_bytes() == one_writer(table.slice(1000 * at, 1000), 16_384)
        assert mine.read_bytes() != pyarrows.read_bytes()       # (the default's lists are fastpgn's pages)
    with pytest.raises(SystemExit) as exit_:
        main([dump, "1000", "-o", str(tmp_path / "lines"), "--parquet-writer", "pyarrow"])
    assert exit_.value.code == 2
