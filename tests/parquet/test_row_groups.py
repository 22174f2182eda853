"""Parquet row groups encoded apart and joined into one file (``fastpgn.parquet.row_groups``).

The join must give the very bytes of one ``pyarrow.parquet.ParquetWriter``
writing the same row groups one after the other (pyarrow itself is the
oracle), on real games, for row groups of one game, of a few hundred and of
the converter's 16,384; what the join cannot move is refused in one line.
"""

from __future__ import annotations

import io
import struct
import threading

import pytest

from helpers import decompressed, one_writer, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')

from fastpgn import arrow  # noqa: E402
from fastpgn.parquet import row_groups, thrift  # noqa: E402
from fastpgn.parquet.row_groups import JoinedParquetFile, JoinError, encode_row_group  # noqa: E402

DUMP = "lichess_db_standard_rated_2022-06.head2499.pgn.zst"


@pytest.fixture(scope="module")
def games():
    with arrow.read_arrow(decompressed(shared("data", "lichess-db", DUMP)), errors="skip") as reader:
        return pa.Table.from_batches(list(reader), schema=reader.schema)




def joined(tmp_path, table, rows: int, threads: int = 1) -> bytes:
    """The row groups encoded on ``threads`` threads at once, then joined in order."""
    pieces = [table.slice(at, rows).combine_chunks() for at in range(0, table.num_rows, rows)]
    encoded: list = [None] * len(pieces)

    def encode(i: int) -> None:
        encoded[i] = encode_row_group(pieces[i], table.schema, arrow.parquet_writer)

    for first in range(0, len(pieces), threads):
        running = [threading.Thread(target=encode, args=(i,)) for i in range(first, min(first + threads,
                                                                                         len(pieces)))]
        for t in running:
            t.start()
        for t in running:
            t.join()
    path = tmp_path / "joined.parquet"
    out = JoinedParquetFile(path)
    for group in encoded:
        out.append(group)
    out.close()
    return path.read_bytes()


@pytest.mark.parametrize("rows", [16_384, 700, 1])
def test_joined_row_groups_are_the_bytes_of_one_writer(tmp_path, games, rows):
    table = games if rows > 1 else games.slice(0, 5)
    data = joined(tmp_path, table, rows, threads=3)
    assert data == one_writer(table, rows)
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.num_row_groups == -(-table.num_rows // rows) and meta.num_rows == table.num_rows
    # read back by two readers, game for game, whichever row group a game is in
    assert pq.read_table(io.BytesIO(data)).column("game_id").to_pylist() == games.column("game_id").to_pylist()[
        :table.num_rows]
    path = tmp_path / "joined.parquet"
    assert duckdb.sql(f"SELECT count(*), sum(plies) FROM read_parquet('{path}')").fetchall() == [(
        table.num_rows, pa.compute.sum(table.column("plies")).as_py())]


def test_the_footer_codec_writes_back_what_it_read(games):
    data = one_writer(games, 1000)
    size = struct.unpack("<I", data[-8:-4])[0]
    footer = data[-8 - size:-8]
    fields = thrift.read_struct(footer)[0]
    out = bytearray()
    thrift.write_struct(out, fields)
    assert bytes(out) == footer
    assert [f[0] for f in fields][:4] == [1, 2, 3, 4]    # version, schema, num_rows, row_groups


def test_what_the_join_cannot_move_is_refused_in_one_line(games):
    sink = io.BytesIO()
    writer = pq.ParquetWriter(sink, games.schema, write_page_index=True)   # page indexes sit after the row groups
    writer.write_table(games.slice(0, 10))
    writer.close()
    with pytest.raises(JoinError, match="page index") as err:
        row_groups.EncodedRowGroup(sink.getvalue())
    assert "\n" not in str(err.value)
    with pytest.raises(JoinError, match="not a Parquet file"):
        row_groups.EncodedRowGroup(b"PAR1 not really")


def test_an_encoder_fault_is_not_taken_for_bad_pgn(games):
    """A program that handles bad games with ``except PGNError`` does not swallow a fault of fastpgn's
    Parquet encoder: the file writer's own error (a setting the join cannot move) goes past it."""
    from fastpgn.errors import ParquetWriteError, PGNError
    from fastpgn.parquet.list_chunks import ParquetFileWriter

    def with_page_index(sink, schema):
        return pq.ParquetWriter(sink, schema, write_page_index=True)

    writer = ParquetFileWriter(io.BytesIO(), games.schema, with_page_index)
    with pytest.raises(ParquetWriteError) as err:
        try:
            writer.write_table(games.slice(0, 10))
        except PGNError:
            pytest.fail("an encoder fault was caught as bad PGN")
    assert isinstance(err.value, JoinError) and "page index" in str(err.value)
    with pytest.raises(thrift.ThriftError) as err:
        try:
            thrift.read_struct(b"\x0f\x00")      # field type 15: no Thrift type
        except PGNError:
            pytest.fail("a footer the codec cannot read was caught as bad PGN")
    assert isinstance(err.value, ParquetWriteError) and not isinstance(err.value, ValueError)
