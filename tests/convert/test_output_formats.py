"""The converter's analysis-schema output: ``--format parquet|csv`` and one stream to stdout (``-o -``).

What a user loads must be the schema's table, game for game, whatever the
workers, chunking or interruptions: Parquet chunks read back by pyarrow,
DuckDB and polars, and CSV read by Python's csv, DuckDB (the command line
too, fed by a pipe) and polars, equal what ``read_arrow`` gives for the same
input; chunks are byte-identical for any ``-j`` and after a kill and
``--resume``; the lines stay the default, byte for byte.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fastpgn import arrow, csv_rows
from fastpgn.cli import main
from fastpgn.convert import tables
from fastpgn.convert.converter import Converter, Options
from fastpgn.errors import InputError
from fastpgn.parquet import settings
from helpers import ENV, big_input, chunk_files, converter_writer, one_writer, shared, signal_after_chunks

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
pl = pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')

DUMP = "lichess_db_standard_rated_2022-06.head2499.pgn.zst"
FILES = ["lichess_db_standard_rated_2013-01.head348.pgn.bz2", "lichess_db_standard_rated_2021-10.head999.pgn.zst",
         DUMP, "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2"]


def convert(src, out: Path, fmt: str, chunk: int = 1000, jobs: int = 1, block_size: int = 1 << 20, **kw):
    opts = Options(input=str(src), chunk_size=chunk, output_dir=str(out), jobs=jobs, block_size=block_size,
                   format=fmt, **kw)
    return Converter(opts).run()


def reference(src, **options):
    """read_arrow's table of ``src``: what every output of the schema must hold."""
    batches = []
    with arrow.read_arrow(src, errors="skip", **options) as reader:
        try:
            batches.extend(reader)
        except InputError:
            pass            # a damaged input: the games before the damage, as the converter writes them
        return pa.Table.from_batches(batches, schema=reader.schema)


def parquet_table(out: Path):
    files = chunk_files(out)
    assert files and all(f.suffix == ".parquet" for f in files)
    return pa.concat_tables([pq.read_table(f) for f in files])


def _same_rows(table, expected) -> None:
    # Parquet keeps timestamps in ms: utc compares as the instant it is.
    assert table.num_rows == expected.num_rows
    for name in expected.column_names:
        assert table.column(name).to_pylist() == expected.column(name).to_pylist(), name


def test_hugging_face_datasets_loads_a_parquet_chunk_with_its_tags(tmp_path, monkeypatch):
    """``datasets.load_dataset("parquet", ...)`` offline, as a user loads a converted month: every row, every
    column, the tags as name and value pairs (an Arrow map has no datasets type: it refused the file)."""
    datasets = pytest.importorskip("datasets", reason='datasets is not installed: pip install -e ".[test]"')
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    src = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    convert(src, tmp_path / "out", "parquet", chunk=700)
    chunk = chunk_files(tmp_path / "out")[0]
    expected = pq.read_table(chunk)
    loaded = datasets.load_dataset("parquet", data_files=str(chunk), split="train",
                                   cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.num_rows == expected.num_rows == 700
    assert loaded.column_names == expected.column_names
    tags = loaded["tags"]
    assert tags[0] and all(set(p) == {"key", "value"} for game in tags for p in game)
    assert tags == expected.column("tags").to_pylist()
    assert loaded["game_id"] == expected.column("game_id").to_pylist()


@pytest.mark.parametrize("name", FILES)
def test_parquet_chunks_hold_the_schema_game_for_game(tmp_path, name):
    src = shared("data", "lichess-db", name)
    summary = convert(src, tmp_path / "out", "parquet", chunk=700, jobs=2)
    expected = reference(src)
    table = parquet_table(tmp_path / "out")
    _same_rows(table, expected)
    assert summary.games_written == expected.num_rows
    assert summary.games_read == summary.games_written + summary.games_rejected + summary.games_filtered
    # Every chunk holds CHUNK_SIZE games but the last; the schema's names and types (utc in ms, Parquet's unit).
    sizes = [pq.ParquetFile(f).metadata.num_rows for f in chunk_files(tmp_path / "out")]
    assert sizes[:-1] == [700] * (len(sizes) - 1) and 0 < sizes[-1] <= 700
    assert table.schema.names == expected.schema.names
    # DuckDB and polars read the folder as users do.
    glob = str(tmp_path / "out" / "*.parquet")
    got = duckdb.sql(f"SELECT game_id, white_elo, plies, len(moves) AS n FROM read_parquet('{glob}') "
                     "ORDER BY byte_offset").fetchall()
    assert got == list(zip(expected.column("game_id").to_pylist(), expected.column("white_elo").to_pylist(),
                           expected.column("plies").to_pylist(),
                           [len(m) for m in expected.column("moves").to_pylist()]))
    frame = pl.read_parquet(glob).sort("byte_offset")
    assert frame["eval_cp"].to_list() == expected.column("eval_cp").to_pylist()
    assert frame["clock"].to_list() == expected.column("clock").to_pylist()


def test_csv_chunks_read_by_csv_duckdb_and_polars(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    convert(src, tmp_path / "out", "csv", chunk=1000, jobs=2)
    files = chunk_files(tmp_path / "out")
    assert [f.name.endswith(".csv.gz") for f in files] == [True] * 3
    expected = reference(src)
    rows = []
    header = None
    for f in files:
        text = gzip.decompress(f.read_bytes())
        reader = csv.reader(io.StringIO(text.decode(), newline=""))
        assert next(reader) == expected.column_names      # each chunk starts with the header row
        header = text[:text.index(b"\r\n") + 2]
        rows.append(text[len(header):])
    # The rows are to_csv's, byte for byte (one header atop the whole there).
    whole = io.BytesIO()
    csv_rows.to_csv(src, whole, errors="skip")
    assert header + b"".join(rows) == whole.getvalue()
    parsed = list(csv.reader(io.StringIO(b"".join(rows).decode(), newline="")))
    assert [r[0] for r in parsed] == expected.column("game_id").to_pylist()
    glob = str(tmp_path / "out" / "*.csv.gz")
    got = duckdb.sql(f"SELECT count(*), sum(plies), count(white_title) FROM read_csv('{glob}')").fetchall()
    assert got == [(expected.num_rows, sum(expected.column("plies").to_pylist()),
                    expected.num_rows - expected.column("white_title").null_count)]
    frame = pl.concat([pl.read_csv(gzip.decompress(f.read_bytes())) for f in files])
    assert frame["game_id"].to_list() == expected.column("game_id").to_pylist()
    assert frame["white_elo"].to_list() == expected.column("white_elo").to_pylist()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_any_jobs_and_block_size_give_identical_chunks(tmp_path, fmt):
    src = shared("data", "lichess-db", DUMP)
    outs = []
    for jobs, block in ((1, 1 << 20), (2, 1 << 20), (2, 200_000)):
        out = tmp_path / f"j{jobs}-{block}"
        convert(src, out, fmt, chunk=600, jobs=jobs, block_size=block)
        outs.append([f.read_bytes() for f in chunk_files(out)])
    assert len(outs[0]) == 5
    assert outs[0] == outs[1]
    if fmt == "parquet":  # other blocks, other batches: the same rows and row groups, so the same bytes
        assert outs[0] == outs[2]




def test_parquet_row_groups_encoded_at_once_give_the_bytes_of_one_writer(tmp_path, monkeypatch):
    """The bytes of the converter's encoder on one thread, whatever the threads; pyarrow reads them as its own."""
    # Row groups of 64 games, chunks of 600: ten row groups a chunk, several in the encoders' hands at once.
    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 64)
    src = shared("data", "lichess-db", DUMP)
    outs = []
    for jobs, block in ((1, 1 << 20), (2, 100_000), (3, 1 << 20)):
        out = tmp_path / f"j{jobs}"
        convert(src, out, "parquet", chunk=600, jobs=jobs, block_size=block)
        outs.append([f.read_bytes() for f in chunk_files(out)])
    assert outs[1] == outs[0] and outs[2] == outs[0]
    expected = reference(src)
    assert len(outs[0]) == 5
    for i, data in enumerate(outs[0]):
        games = expected.slice(600 * i, 600)
        assert data == converter_writer(games, 64), i
        assert pq.read_table(io.BytesIO(data)).equals(pq.read_table(io.BytesIO(one_writer(games, 64)))), i
        assert pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups == -(-games.num_rows // 64)


def test_row_groups_in_flight_are_bounded(tmp_path, monkeypatch):
    # Slow encoders: the writer thread hands out row groups faster than they are encoded, and must wait.
    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 20)
    real = tables.encode_row_group
    most = []
    encoding = []

    def slow(table, *args):
        encoding.append(1)
        most.append(len(encoding))
        time.sleep(0.005)
        try:
            return real(table, *args)
        finally:
            encoding.pop()

    submit = tables.RowGroupEncoders.submit
    held = []

    def counted(self, file, table, first):
        submit(self, file, table, first)
        held.append(len(self._flight))

    monkeypatch.setattr(tables, "encode_row_group", slow)
    monkeypatch.setattr(tables.RowGroupEncoders, "submit", counted)
    src = shared("data", "lichess-db", DUMP)
    convert(src, tmp_path / "out", "parquet", chunk=600, jobs=3)
    assert max(held) <= tables.encoder_limit(3) == 4     # handed out and not yet written: -j + 1
    assert max(most) >= 2                                 # and encoded several at once
    assert pq.read_table(tmp_path / "out").num_rows == reference(src).num_rows


def test_an_encoder_error_is_one_line_and_leaves_no_half_chunk(tmp_path, monkeypatch, capsys):
    src = big_input(tmp_path, shared("data", "lichess-db", DUMP), copies=1)
    ref = tmp_path / "reference"
    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 100)
    assert main([str(src), "400", "-o", str(ref), "-j", "2", "-q", "--format", "parquet"]) == 0
    real = tables.encode_row_group
    third_of_second = reference(src).column("byte_offset")[600].as_py()    # the third row group of the second chunk

    def failing(table, *args):
        if table.column("byte_offset")[0].as_py() == third_of_second:
            raise pa.ArrowInvalid("no room\nfor this row group")
        return real(table, *args)

    monkeypatch.setattr(tables, "encode_row_group", failing)
    out = tmp_path / "out"
    capsys.readouterr()
    assert main([str(src), "400", "-o", str(out), "-j", "2", "-q", "--format", "parquet"]) == 2
    err = capsys.readouterr().err
    assert err == ("fastpgn: cannot write big.pgn.part_000001.parquet: encoding its games 201 to 300 failed "
                   "(ArrowInvalid: no room for this row group)\n")
    # The chunk before is whole and recorded; the failed one is neither named as done nor left as a .tmp.
    assert [f.name for f in chunk_files(out)] == ["big.pgn.part_000000.parquet"]
    assert chunk_files(out)[0].read_bytes() == chunk_files(ref)[0].read_bytes()
    assert not list(out.glob(".*.tmp"))
    state = json.loads((out / ".big.pgn.fastpgn-state.json").read_text())["progress"]
    assert state["chunk"] == 1 and state["games_written"] == 400
    monkeypatch.setattr(tables, "encode_row_group", real)
    assert main([str(src), "400", "-o", str(out), "-j", "2", "-q", "--format", "parquet", "--resume"]) == 0
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref)]
    done = json.loads((out / ".big.pgn.fastpgn-done.json").read_text())["progress"]
    assert done["games_read"] == done["games_written"] + done["games_rejected"] + done["games_filtered"]
    assert done["games_written"] == pq.read_table(out).num_rows == reference(src).num_rows


# The converter with row groups of 50 games: a chunk of 400 is eight, several in flight at -j 3.
SMALL_ROW_GROUPS = ("import sys; from fastpgn.convert import tables; tables.ROW_GROUP_ROWS = 50; "
                    "from fastpgn.cli import main; sys.exit(main(sys.argv[1:]))")


def test_killed_then_resume_with_row_groups_in_flight_is_identical(tmp_path, monkeypatch):
    src = big_input(tmp_path, shared("data", "lichess-db", DUMP), copies=4)
    ref = tmp_path / "reference"
    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 50)
    assert main([str(src), "400", "-o", str(ref), "-j", "1", "-q", "--format", "parquet"]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-c", SMALL_ROW_GROUPS, str(src), "400", "-o", str(out), "-j", "3", "-q",
           "--format", "parquet"]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    signal_after_chunks(proc, out / ".big.pgn.fastpgn-state.json", 4, signal.SIGKILL)
    assert 4 <= len(chunk_files(out)) < len(chunk_files(ref))
    for f in chunk_files(out):
        assert f.read_bytes() == (ref / f.name).read_bytes()     # a chunk under its final name is whole
    done = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert [f.name for f in chunk_files(out)] == [f.name for f in chunk_files(ref)]
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref)]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_killed_then_resume_is_identical(tmp_path, fmt):
    src = big_input(tmp_path, shared("data", "lichess-db", DUMP), copies=4)
    ref = tmp_path / "reference"
    assert main([str(src), "400", "-o", str(ref), "-j", "2", "-q", "--format", fmt]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fastpgn", str(src), "400", "-o", str(out), "-j", "2", "-q", "--format", fmt]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    signal_after_chunks(proc, out / ".big.pgn.fastpgn-state.json", 3, signal.SIGKILL)
    for f in chunk_files(out):
        assert f.read_bytes() == (ref / f.name).read_bytes()     # a chunk under its final name is whole
    if fmt == "parquet":    # the folder, read as pandas and Spark read it: the whole chunks alone (not the
        # unfinished one the kill left, nor the state)
        assert pq.read_table(out).num_rows == 400 * len(chunk_files(out))
    done = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert [f.name for f in chunk_files(out)] == [f.name for f in chunk_files(ref)]
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref)]


def test_a_run_resumes_only_in_the_format_it_began_in(tmp_path, capsys):
    src = shared("data", "lichess-db", DUMP)
    out = tmp_path / "out"
    assert main([str(src), "1000", "-o", str(out), "-q", "--format", "parquet", "--limit", "1500"]) == 0
    code = main([str(src), "1000", "-o", str(out), "-q", "--format", "csv", "--resume"])
    assert code == 2 and "fastpgn:" in capsys.readouterr().err


def test_limit_validate_and_uci_in_parquet(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    summary = convert(src, tmp_path / "out", "parquet", chunk=1000, limit=1234, uci=True, validate=True)
    table = parquet_table(tmp_path / "out")
    assert table.num_rows == summary.games_written == 1234
    expected = reference(src, uci=True)
    assert table.column("uci").to_pylist() == expected.column("uci").to_pylist()[:1234]
    summary = convert(src, tmp_path / "validated", "parquet", chunk=5000, validate=True)
    assert "uci" not in parquet_table(tmp_path / "validated").column_names
    assert summary.games_written == reference(src).num_rows


def test_a_game_with_an_illegal_move_is_rejected_in_parquet_as_in_lines(tmp_path):
    pgn = tmp_path / "games.pgn"
    pgn.write_bytes(b'[White "a"]\n\n1. e4 e5 *\n\n[White "b"]\n\n1. e4 Ke7 *\n\n[White "c"]\n\n1. d4 *\n')
    summary = convert(pgn, tmp_path / "out", "parquet", validate=True)
    assert parquet_table(tmp_path / "out").column("white").to_pylist() == ["a", "c"]
    assert (summary.games_read, summary.games_written, summary.games_rejected) == (3, 2, 1)
    assert b"illegal move" in (tmp_path / "out" / "_games.pgn.rejected.pgn").read_bytes()
    # the rejected games beside the chunks do not stop a reader of the folder (pd.read_parquet("out/"))
    assert pq.read_table(tmp_path / "out").column("white").to_pylist() == ["a", "c"]


def _stdout_of(args: list[str], cwd: Path | None = None) -> tuple[int, bytes, str]:
    proc = subprocess.run([sys.executable, "-m", "fastpgn", *args], env=ENV, capture_output=True, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr.decode()


def test_lines_and_csv_to_stdout_equal_the_chunks(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    for fmt, suffix in (("lines", ".cri"), ("csv", ".csv")):
        out = tmp_path / fmt
        assert main([str(src), "700", "-o", str(out), "-q", "--format", fmt, "--compression", "none"]) == 0
        code, text, err = _stdout_of([str(src), "-o", "-", "--format", fmt, "-j", "2"], cwd=tmp_path)
        assert code == 0, err
        chunks = [f.read_bytes() for f in chunk_files(out)]
        assert all(f.name.endswith(suffix) for f in chunk_files(out))
        if fmt == "csv":    # the header once, at the top
            header = chunks[0][:chunks[0].index(b"\r\n") + 2]
            chunks = [header] + [c[len(header):] for c in chunks]
        assert text == b"".join(chunks)
        assert "to stdout" in err and "2,499 games written" in err
        assert not list(tmp_path.glob(f"{fmt}/*state*"))


@pytest.mark.parametrize("name", FILES[:2])
def test_csv_utc_loads_zoned_in_duckdb_and_polars_as_the_parquet_does(tmp_path, name):
    # Without the zone in the text DuckDB and polars load a naive timestamp from the CSV, a zoned one from Parquet.
    src = shared("data", "lichess-db", name)
    code, text, err = _stdout_of([str(src), "-o", "-", "--format", "csv", "-q"], cwd=tmp_path)
    assert code == 0, err
    path = tmp_path / "games.csv"
    path.write_bytes(text)
    convert(src, tmp_path / "parquet", "parquet", chunk=100_000)
    expected = pa.concat_tables(pq.read_table(f) for f in chunk_files(tmp_path / "parquet")).column("utc")
    assert expected.type.tz == "UTC" and expected.null_count < len(expected)
    got = duckdb.sql(f"SELECT utc FROM read_csv('{path}')")
    assert [str(t) for t in got.types] == ["TIMESTAMP WITH TIME ZONE"]
    assert [r[0] for r in got.fetchall()] == expected.to_pylist()
    frame = pl.read_csv(path, try_parse_dates=True)
    assert frame.schema["utc"] == pl.Datetime("us", "UTC")
    assert frame["utc"].to_list() == expected.to_pylist()


def _fens_bytes(table) -> int:
    import pyarrow.compute as pc

    return pc.sum(pc.binary_length(pc.list_flatten(table.column("fens")))).as_py() or 0


def test_fens_past_the_list_offsets_split_the_row_groups_and_lose_no_game(tmp_path, monkeypatch):
    # A row group's FENs past 2 GiB (int32 offsets) stopped the run, nothing written: the limit made small here.
    src = shared("data", "lichess-db", FILES[1])
    convert(src, tmp_path / "whole", "parquet", chunk=100_000, fens=True)
    whole, = chunk_files(tmp_path / "whole")
    monkeypatch.setattr(settings, "LIST_STRING_BYTES", 64 << 10)
    convert(src, tmp_path / "split", "parquet", chunk=100_000, fens=True)
    split, = chunk_files(tmp_path / "split")
    assert pq.ParquetFile(whole).num_row_groups == 1
    groups = [pq.ParquetFile(split).read_row_group(i) for i in range(pq.ParquetFile(split).num_row_groups)]
    assert len(groups) > 20 and all(_fens_bytes(g) <= 64 << 10 or g.num_rows == 1 for g in groups)
    # each cut where the next game would pass the limit, not sooner
    assert all(_fens_bytes(a) + _fens_bytes(b.slice(0, 1)) > 64 << 10 for a, b in zip(groups, groups[1:]))
    # every game once, in order, each row as the unsplit file's
    expected = pq.read_table(whole)
    assert pq.read_table(split).equals(expected)
    assert expected.column("game_id").to_pylist() == reference(src, fens=True).column("game_id").to_pylist()
    # to_parquet's row groups are cut the same way
    out = tmp_path / "to_parquet.parquet"
    arrow.to_parquet(src, out, fens=True, errors="skip")
    assert pq.ParquetFile(out).num_row_groups > 20 and pq.read_table(out).equals(expected)
    # and read_arrow's batches, which pyarrow could not combine past the limit either
    with arrow.read_arrow(src, fens=True, errors="skip", batch_size=1000) as reader:
        batches = list(reader)
    assert len(batches) > 20 and all(_fens_bytes(b) <= 64 << 10 or b.num_rows == 1 for b in batches)
    assert pa.Table.from_batches(batches).equals(pq.read_table(out).cast(batches[0].schema))


def test_stdout_keeps_rejected_games_in_the_current_folder_and_writes_nothing_beside_the_input(tmp_path):
    folder = tmp_path / "inputs"
    folder.mkdir()
    pgn = folder / "games.pgn"
    pgn.write_bytes(b'[White "a"]\n\n1. e4 e5 *\n\n[White "b"]\n\n1. e4 {unclosed *\n\n[White "c"]\n\n1. d4 *\n')
    work = tmp_path / "work"
    work.mkdir()
    code, out, err = _stdout_of([str(pgn), "-o", "-"], cwd=work)
    assert code == 0 and out.count(b"\n") == 2, err
    assert "1 rejected" in err
    assert b"unterminated comment" in (work / "_games.pgn.rejected.pgn").read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["games.pgn"]       # no lock, state or probe left there


def test_csv_through_a_pipe_into_the_duckdb_command(tmp_path):
    cli = shutil.which("duckdb", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if cli is None:
        pytest.fail("the DuckDB command line is missing: pip install -e '.[test]' installs duckdb-cli") \
            if os.environ.get("CI") else pytest.skip("the DuckDB command line is missing: pip install duckdb-cli")
    src = shared("data", "lichess-db", DUMP)
    query = "SELECT speed, count(*) FROM read_csv('/dev/stdin') GROUP BY 1 ORDER BY 2 DESC, 1"
    producer = subprocess.Popen([sys.executable, "-m", "fastpgn", str(src), "-o", "-", "--format", "csv", "-q"],
                                env=ENV, stdout=subprocess.PIPE)
    consumer = subprocess.run([cli, "-csv", "-c", query], stdin=producer.stdout, capture_output=True)
    producer.stdout.close()
    assert producer.wait() == 0 and consumer.returncode == 0, consumer.stderr
    speeds = reference(src).column("speed").to_pylist()
    counts = sorted(((s, speeds.count(s)) for s in set(speeds)), key=lambda p: (-p[1], p[0]))
    got = [tuple(r) for r in csv.reader(io.StringIO(consumer.stdout.decode()))][1:]
    assert got == [(s, str(n)) for s, n in counts]


def test_stdout_refusals_are_one_line_each(tmp_path):
    src = str(shared("data", "lichess-db", DUMP))
    for args, words in (([src, "-o", "-", "--format", "parquet"], "Parquet cannot be written to stdout"),
                        ([src, "-o", "-", "--resume"], "cannot be resumed"),
                        ([src], "CHUNK_SIZE")):
        code, out, err = _stdout_of(args, cwd=tmp_path)
        assert code == 2 and words in err and "Traceback" not in err and out == b"", err


def test_stdout_closed_early_ends_quietly(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    proc = subprocess.Popen([sys.executable, "-m", "fastpgn", str(src), "-o", "-"], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(60) == 0
    assert first.count("\u2502".encode()) == 21 and b"Traceback" not in proc.stderr.read()


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch, capsys):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    src = str(shared("data", "lichess-db", DUMP))
    assert main([src, "1000", "-o", str(tmp_path / "out"), "--format", "parquet", "-q"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "fastpgn[arrow]"' in err and "Traceback" not in err
    assert not list((tmp_path / "out").glob("*.parquet*")) if (tmp_path / "out").exists() else True


def test_threads_missing_the_openings_map_at_once_get_one_answer():
    """Worker threads share the map: misses (its fuzzy index built, answers remembered) must not race."""
    import threading

    from fastpgn import openings

    table = openings.load()
    keys = [f"B20\u2502Sicilian Defence variation {i}".encode() for i in range(2000)]
    errors: list[BaseException] = []

    def ask(part):
        try:
            for key in part:
                assert table[key] == table[key]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(keys[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert all(table[k] == openings.load()[k] for k in keys[:50])
