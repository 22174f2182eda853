"""fastpgn on a real Spark (local[2], one session for the file): schema, read_lines, convert, the CLI, the example.

Each check holds Spark's answer to fastpgn's own on the real corpus: the
typed lines to ``parse_line``, the dataset to the converter's
``--format parquet`` files, the example's Spark SQL to its DuckDB twin. The
tests skip, naming the install, where Java or pyspark is missing (and fail
on CI, which installs both).
"""

from __future__ import annotations

import collections
import importlib.util
import io
import json
import os
import signal
import struct
import subprocess
import sys
import time
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import fastpgn
from fastpgn import schema as fastpgn_schema
from fastpgn.cli import main as cli_main
from fastpgn.oneliner import parse_line
from helpers import MULTIFRAME, ROOT, SINGLE, shared, spark_session

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

DB = ("data", "lichess-db")
FILES = ("lichess_db_standard_rated_2021-10.head999.pgn.zst", "lichess_db_standard_rated_2013-01.head348.pgn.bz2",
         "lichess_db_standard_rated_2023-02.head15.pgn.zst")
# ... and for the dataset, games at every hour of the day (the example's rows)
HOURS = "lichess_db_standard_rated_2013-01.slice5000.pgn.zst"


@pytest.fixture(scope="module")
def spark():
    yield from spark_session("fastpgn tests")


def corpus(name: str) -> Path:
    return shared(*DB, name)


def converter(args: list[str]) -> int:
    with redirect_stderr(io.StringIO()):
        return cli_main(args + ["-q"])


def converter_parquet(path: Path, folder: Path):
    """``python -m fastpgn PATH 1000000 --format parquet``'s chunks as one table."""
    code = converter([str(path), "1000000", "--format", "parquet", "-o", str(folder), "-j", "1"])
    assert code in (0, 1)
    return pa.concat_tables(pq.read_table(p) for p in sorted(folder.glob("*.parquet")))


def published(dataset: Path, name: str):
    """An input's rows in the dataset, in the input's order (by ``byte_offset``), read as plain Parquet files."""
    files = sorted((dataset / f"input={name}").rglob("*.parquet"))
    # ParquetFile, not read_table: some pyarrow versions add the path's year=/month= as columns
    return pa.concat_tables(pq.ParquetFile(p).read() for p in files).sort_by("byte_offset")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The corpus files, a zstd file cut in half (damaged) and a file of binary data (not PGN)."""
    folder = tmp_path_factory.mktemp("inputs")
    good = [corpus(name) for name in (*FILES, HOURS)]
    data = good[0].read_bytes()
    damaged = folder / "cut.pgn.zst"
    damaged.write_bytes(data[:len(data) // 2])
    junk = folder / "junk.pgn"
    junk.write_bytes(b"\x00\x01\x02 not a game\n")
    return good, damaged, junk


@pytest.fixture(scope="module")
def dataset(spark, inputs, tmp_path_factory):
    from fastpgn import spark as fs

    good, damaged, junk = inputs
    out = tmp_path_factory.mktemp("dataset")
    reports = fs.convert(spark, [*good, damaged, junk], out, rows_per_file=400)
    return out, {r.input: r for r in reports}


# ---------------------------------------------------------------- schema

def test_schema_is_fastpgn_schema(spark, dataset):
    from pyspark.sql import types as T

    from fastpgn import spark as fs

    kinds = {"string": T.StringType(), "date32": T.DateType(), "bool": T.BooleanType(), "int8": T.ByteType(),
             "int16": T.ShortType(), "int32": T.IntegerType(), "int64": T.LongType(),
             "float32": T.FloatType(), "timestamp[s, tz=UTC]": T.TimestampType(),
             "list<string>": T.ArrayType(T.StringType()), "list<int16>": T.ArrayType(T.ShortType()),
             "list<int8>": T.ArrayType(T.ByteType()), "list<float32>": T.ArrayType(T.FloatType()),
             "list<struct<key: string, value: string>>": T.ArrayType(T.StructType(
                 [T.StructField("key", T.StringType()), T.StructField("value", T.StringType())])),
             "list<list<int16>>": T.ArrayType(T.ArrayType(T.ShortType()))}
    for uci in (False, True):
        got = fs.schema(uci)
        assert [(f.name, f.dataType) for f in got] == [(c.name, kinds[c.type]) for c in fastpgn_schema.columns(uci)]
    # ... and it is what Spark reads from the dataset, partition columns aside
    read = spark.read.parquet(str(dataset[0])).drop("input", "year", "month").schema
    assert read == fs.schema()
    typed = fs.read_dataset(spark, dataset[0]).schema
    assert [(f.name, f.dataType.simpleString()) for f in typed.fields[-3:]] == [
        ("input", "string"), ("year", "int"), ("month", "int")]


def test_spark_reads_the_values_pyarrow_reads(spark, inputs, dataset):
    """Every page encoding of fastpgn's Parquet (dictionary and plain, pyarrow's and the kernel's) read by Spark."""
    from fastpgn import spark as fs

    name = inputs[0][0].name
    table = published(dataset[0], name)
    assert any(any(v is not None for v in c) for c in table.column("clock").to_pylist() if c)
    SOME = ("byte_offset", "game_id", "site", "moves", "clock", "eval_cp", "nags")
    rows = (fs.read_dataset(spark, dataset[0]).where(f"input = '{name}'")
            .select(*SOME).orderBy("byte_offset").collect())
    assert [tuple(r) for r in rows] == list(zip(*(table.column(c).to_pylist() for c in SOME)))


def test_spark_reads_the_lists_the_converter_writes_itself(spark, inputs, tmp_path):
    """moves, clock, judgement, eval_cp, ...: the kernel's own pages (the converter's Parquet;
    fastpgn.parquet.list_chunks), read by Spark as pyarrow reads them, and the schema Spark's."""
    from fastpgn import spark as fs

    lists = ("moves", "clock", "move_seconds", "win_percent", "judgement", "eval_cp", "eval_mate")
    expected = converter_parquet(inputs[0][0], tmp_path / "parquet").sort_by("byte_offset")
    assert all(expected.column(c).null_count < expected.num_rows for c in lists)
    frame = spark.read.parquet(str(tmp_path / "parquet"))
    assert frame.schema == fs.schema()
    rows = frame.select("byte_offset", *lists).orderBy("byte_offset").collect()
    assert [tuple(r) for r in rows] == list(zip(*(expected.column(c).to_pylist() for c in ("byte_offset", *lists))))


# ---------------------------------------------------------------- read_lines

def _float32(text: str) -> float:
    return struct.unpack("f", struct.pack("f", float(text)))[0]


def expected_line(line: str) -> tuple:
    """A line typed by fastpgn's own rules (``parse_line``, ``fastpgn.schema``), as read_lines types it."""
    import datetime

    f = parse_line(line)
    text = lambda v: v or None   # noqa: E731
    day = None
    if len(f.date) == 8 and f.date.isdigit():
        try:
            day = datetime.date(int(f.date[:4]), int(f.date[4:6]), int(f.date[6:]))
        except ValueError:
            day = None
    second = int(f.time) if f.time.isdigit() else None
    plies = int(f.plies) if f.plies.isdigit() else None
    utc = None if day is None or second is None else (day - datetime.date(1970, 1, 1)).days * 86400 + second
    return (text(f.id), day, second, text(f.result), text(f.termination), f.mate == "Y", f.has_eval == "Y",
            f.has_clock == "Y", plies, text(f.opening), text(f.time_control), text(f.white),
            fastpgn_schema.int16(f.white_elo), fastpgn_schema.int16(f.white_elo_diff), text(f.white_title),
            text(f.black), fastpgn_schema.int16(f.black_elo), fastpgn_schema.int16(f.black_elo_diff),
            text(f.black_title), f.moves.split(" ") if f.moves else [],
            f.evals.split(" ") if f.evals else None,
            [_float32(c) for c in f.clocks.split(" ")] if f.clocks else None, utc)


def test_read_lines_rows_equal_fastpgn_lines(spark, tmp_path):
    """Chunks in gz, zst and plain (several gzip members and zstd frames each) read back field by field."""
    from pyspark.sql import functions as F

    from fastpgn import spark as fs
    from fastpgn.convert.converter import Converter, Options

    # Spark 4's Hadoop client reads zstd text by itself; Spark 3.5's needs a native libhadoop built with
    # zstd (docs/spark.md), which pip's pyspark has not: there the gz and plain chunks are checked.
    compressions = ("gz", "zst", "none") if int(spark.version.split(".")[0]) >= 4 else ("gz", "none")
    expected = []
    for name in FILES:
        src = corpus(name)
        lines = list(fastpgn.read_lines(src))
        assert lines
        expected += [expected_line(line) for line in lines] * len(compressions)
        for compression in compressions:
            # 64 KiB blocks: one gzip member or zstd frame each, so a chunk holds many (as a dump's do).
            Converter(Options(input=str(src), chunk_size=700, output_dir=str(tmp_path / compression),
                              compression=compression, jobs=1, block_size=64 << 10)).run()
    assert any(p.stat().st_size > 200_000 for p in (tmp_path / compressions[0]).iterdir())   # many members
    frame = fs.read_lines(spark, [tmp_path / c for c in compressions])
    assert frame.columns == [name for name, _ in fs.LINE_TYPES] + ["utc"]
    rows = frame.withColumn("utc", F.unix_seconds("utc")).collect()
    got = sorted((tuple(r) for r in rows), key=repr)
    assert len(got) == len(expected)
    assert got == sorted(expected, key=repr)


def test_read_lines_of_a_folder_prints_no_java_exception(tmp_path):
    """Spark's stderr of a good read_lines call on a folder holds no Java exception (it held ~90 lines of one)."""
    from helpers import ENV

    out = tmp_path / "out"
    assert cli_main([str(corpus(FILES[0])), "700", "-o", str(out), "-q"]) == 0
    script = ("import fastpgn.spark as fs\n"
              "s = fs.session('local[1]')\n"
              f"print(fs.read_lines(s, {str(out)!r}).count())\n"
              "s.stop()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip().splitlines()[-1]) == len(list(fastpgn.read_lines(corpus(FILES[0]))))
    assert "Exception" not in done.stderr, done.stderr


def test_read_lines_of_a_folder_without_chunks_says_so(spark, tmp_path):
    from fastpgn import spark as fs

    (tmp_path / "_x.rejected.pgn").write_text("")
    with pytest.raises(ValueError, match="no chunk files in this folder"):
        fs.read_lines(spark, tmp_path)


def test_read_lines_refuses_a_line_without_22_fields(spark, tmp_path):
    from fastpgn import spark as fs

    bad = tmp_path / "bad.cri"
    bad.write_text("abc\u2502def\n", encoding="utf-8")
    with pytest.raises(Exception, match="not a 22-field line"):
        fs.read_lines(spark, bad).collect()


# ---------------------------------------------------------------- convert

def test_convert_equals_the_parquet_converter(inputs, dataset, tmp_path):
    good, damaged, junk = inputs
    out, reports = dataset
    for path in good:
        expected = converter_parquet(path, tmp_path / path.name)
        got = published(out, path.name)
        assert got.schema.remove_metadata() == expected.schema.remove_metadata()
        assert got.equals(expected), path.name
        report = reports[path.name]
        assert (report.status, report.games_written, report.backend) == ("converted", expected.num_rows,
                                                                          fastpgn.BACKEND)
        record = json.loads((out / f"input={path.name}" / "_fastpgn.json").read_text())
        assert record["games_written"] == expected.num_rows and record["status"] == "converted"
    # one month a folder, and never more than rows_per_file rows a file
    for part in out.glob("input=*/year=*/month=*/*.parquet"):
        table = pq.ParquetFile(part).read()
        year, month = (int(p.split("=")[1]) for p in part.parts[-3:-1])
        assert table.num_rows <= 400
        assert {(d.year, d.month) for d in table.column("date").to_pylist()} == {(year, month)}
    assert not (out / "_staging").exists()


def test_a_damaged_input_is_named_and_the_others_complete(inputs, dataset, tmp_path):
    good, damaged, junk = inputs
    out, reports = dataset
    cut = reports[damaged.name]
    with pytest.raises(fastpgn.errors.InputError) as raised:
        for _ in fastpgn.read_games(damaged, errors="skip"):
            pass
    assert cut.status == "damaged"
    assert cut.damage_offset == raised.value.offset > 0
    assert str(damaged) in cut.message and f"PGN byte {raised.value.offset}" in cut.message
    # the games before the damage are kept, as the converter keeps them
    assert published(out, damaged.name).equals(converter_parquet(damaged, tmp_path / "cut"))
    failed = reports[junk.name]
    assert failed.status == "failed" and str(junk) in failed.message and "not PGN" in failed.message
    assert not (out / f"input={junk.name}").exists()
    assert all(reports[p.name].status == "converted" for p in good)


def test_rerun_skips_complete_inputs_and_redoes_damaged_ones(spark, inputs, dataset):
    from fastpgn import spark as fs

    good, damaged, junk = inputs
    out, _ = dataset
    again = {r.input: r.status for r in fs.convert(spark, [*good, damaged], out, rows_per_file=400)}
    assert again == {**{p.name: "skipped" for p in good}, damaged.name: "damaged"}
    with pytest.raises(ValueError, match="other options"):
        fs.convert(spark, good[:1], out, uci=True)


def test_rerun_after_a_killed_job_completes_without_duplicates(spark, tmp_path):
    """A real job killed (SIGKILL to the driver, its JVM and workers) once its first input is published."""
    from pyspark.sql import functions as F

    from fastpgn import spark as fs

    source = corpus(FILES[0])
    copies = []
    for i in range(6):
        copy = tmp_path / f"copy{i}.pgn.zst"
        copy.symlink_to(source)
        copies.append(copy)
    out = tmp_path / "out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    job = subprocess.Popen([sys.executable, "-m", "fastpgn", "spark", *map(str, copies), "-o", str(out),
                            "--master", "local[1]", "-q"], cwd=ROOT, env=env, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    try:
        while not list(out.glob("input=*")):
            assert job.poll() is None, job.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no input was published in 180 s"
            time.sleep(0.02)
        assert job.poll() is None, "the job finished before it could be killed"
        os.killpg(job.pid, signal.SIGKILL)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    done_before = {p.name for p in out.glob("input=*")}
    assert 1 <= len(done_before) < len(copies)
    for folder in out.glob("input=*"):             # published folders are whole: a record each
        assert (folder / "_fastpgn.json").exists()
    reports = {r.input: r.status for r in fs.convert(spark, copies, out)}
    assert {k for k, v in reports.items() if v == "skipped"} == {n[len("input="):] for n in done_before}
    assert set(reports.values()) <= {"skipped", "converted"}
    assert not (out / "_staging").exists()
    games = fs.read_dataset(spark, out)
    counts = games.agg(F.count("*").alias("n"), F.countDistinct("input", "byte_offset").alias("distinct")).first()
    assert counts["n"] == counts["distinct"] == 6 * 999


def test_the_command_says_no_python_warnings(spark, tmp_path):
    """`python -m fastpgn spark` in a process of its own, as a user runs it: its summary, and no Python
    warning (pandas 3, which PySpark 4 warns about at each session's start, is kept out by the extras)."""
    out = tmp_path / "out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-m", "fastpgn", "spark", str(corpus(FILES[0])), "-o", str(out),
                           "--master", "local[1]"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "999 games written" in done.stderr
    warned = [line for line in done.stderr.splitlines() if "Warning:" in line]
    assert warned == [], warned


# ---------------------------------------------------------------- read_pgn, the CLI, the example

def test_read_pgn_gives_the_dataset_rows(spark, inputs, dataset):
    from pyspark.sql import functions as F

    from fastpgn import spark as fs

    path = inputs[0][0]
    frame = fs.read_pgn(spark, [path])
    assert frame.schema == fs.schema()
    got = frame.select("byte_offset", F.unix_seconds("utc").alias("utc"), "eval_cp", "clock", "tags").collect()
    table = published(dataset[0], path.name)
    utc = [None if v is None else int(v.timestamp()) for v in table.column("utc").to_pylist()]
    expected = list(zip(table.column("byte_offset").to_pylist(), utc, table.column("eval_cp").to_pylist(),
                        table.column("clock").to_pylist(),
                        [[(p["key"], p["value"]) for p in m] for m in table.column("tags").to_pylist()]))
    assert sorted((r["byte_offset"], r["utc"], r["eval_cp"], r["clock"], [tuple(p) for p in r["tags"]])
                  for r in got) == expected



def test_read_pgn_gives_site_and_nags_as_read_arrow(spark):
    """The annotated exports' NAGs (lists per ply, null without any) and Site tags, through Spark's rows."""
    from fastpgn import spark as fs

    paths = [shared("data", "lichess-other", name) for name in
             ("annotated-export_2017-09_variations-nags.pgn", "annotated-export_2022-08_gm-bullet.pgn")]
    got = sorted(tuple(r) for r in fs.read_pgn(spark, paths).select("byte_offset", "site", "nags").collect())
    expected = []
    for path in paths:
        table = pa.Table.from_batches(list(fastpgn.read_arrow(path, columns=["byte_offset", "site", "nags"])))
        expected += zip(*(table.column(c).to_pylist() for c in ("byte_offset", "site", "nags")))
    assert got == sorted(expected)
    assert any(n for _, _, n in got) and all(s for _, s, _ in got)


ANALYTICS = ("win_percent", "judgement", "move_seconds", "white_accuracy", "black_accuracy", "white_acpl",
             "black_acpl", "white_inaccuracies", "white_mistakes", "white_blunders", "black_inaccuracies",
             "black_mistakes", "black_blunders")


def test_analytics_columns_on_spark_are_the_converters(spark, inputs, dataset, tmp_path):
    """Accuracy, ACPL, judgements and move times: read_pgn's and convert's rows hold the Parquet converter's values."""
    from fastpgn import spark as fs

    path = inputs[0][0]
    expected = converter_parquet(path, tmp_path / "parquet").sort_by("byte_offset")
    want = list(zip(*(expected.column(c).to_pylist() for c in ("byte_offset", *ANALYTICS))))
    # the file has analysed games and games with clocks: the columns are not all null
    assert sum(row[ANALYTICS.index("white_accuracy") + 1] is not None for row in want) >= 10
    assert any(any(v is not None for v in row[ANALYTICS.index("move_seconds") + 1] or []) for row in want)
    assert any("Blunder" in (row[ANALYTICS.index("judgement") + 1] or []) for row in want)

    read = fs.read_pgn(spark, [path]).select("byte_offset", *ANALYTICS).collect()
    assert sorted(tuple(r) for r in read) == want
    converted = (fs.read_dataset(spark, dataset[0]).where(f"input = '{path.name}'")
                 .select("byte_offset", *ANALYTICS).orderBy("byte_offset").collect())
    assert [tuple(r) for r in converted] == want


def test_cli_one_line_per_file_a_total_and_the_exit_rule(spark, inputs, tmp_path):
    good, damaged, junk = inputs
    out = tmp_path / "cli"
    err = io.StringIO()
    with redirect_stderr(err):
        code = cli_main(["spark", str(good[2]), str(damaged), "-o", str(out), "--master", "local[2]"])
    lines = err.getvalue().splitlines()
    assert code == 1, lines                    # a damaged input: exit 1, the other complete
    assert any(good[2].name in line and "15 games written" in line for line in lines)
    assert any(damaged.name in line and "damaged" in line and "PGN byte" in line for line in lines)
    assert "2 files: 1 converted, 1 damaged, 0 skipped, 0 failed" in lines[-1]
    with redirect_stderr(io.StringIO()):
        assert cli_main(["spark", str(good[2]), "-o", str(out), "-q"]) == 0          # complete: skipped
        assert cli_main(["spark", str(junk), "-o", str(out), "-q"]) == 2             # not PGN
        assert cli_main(["spark", str(tmp_path / "absent.pgn"), "-o", str(out)]) == 2
    assert spark.sparkContext._jsc is not None       # the CLI left the session it did not start running


def test_cli_filters_as_the_converter_does(spark, inputs, tmp_path):
    from fastpgn.filters import Where

    good = inputs[0][0]
    out = tmp_path / "filtered"
    err = io.StringIO()
    with redirect_stderr(err):
        code = cli_main(["spark", str(good), "-o", str(out), "--master", "local[2]",
                         "--min-elo", "1800", "--speed", "blitz", "--with-clocks"])
    assert code == 0, err.getvalue()
    files = sorted(out.rglob("*.parquet"))
    got = pa.concat_tables([pq.read_table(f, columns=["game_id", "white_elo", "speed"]) for f in files])
    wanted = [g.headers["Site"].rsplit("/", 1)[-1]
              for g in fastpgn.read_games(good, where=Where(min_elo=1800, speed="blitz", with_clocks=True))]
    assert 0 < len(wanted) < 999 and sorted(got.column("game_id").to_pylist()) == sorted(wanted)
    assert min(got.column("white_elo").to_pylist()) >= 1800 and set(got.column("speed").to_pylist()) == {"blitz"}
    line = next(x for x in err.getvalue().splitlines() if good.name in x)
    assert f"{len(wanted)} games written, 0 rejected, {999 - len(wanted):,} filtered out (of 999 read)" in line
    err = io.StringIO()
    with redirect_stderr(err):       # a bad value: one line naming the flag, before Spark starts
        assert cli_main(["spark", str(good), "-o", str(out), "--min-elo", "strong"]) == 2
    assert err.getvalue().startswith("fastpgn spark: --min-elo") and len(err.getvalue().splitlines()) == 1


def test_worst_hours_the_same_on_spark_and_duckdb(spark, dataset):
    pytest.importorskip("duckdb")
    spec = importlib.util.spec_from_file_location("worst_hours", ROOT / "examples" / "worst_hours.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    on_spark = example.with_spark(spark, dataset[0])
    on_duckdb = example.with_duckdb(dataset[0])
    assert len(on_spark) >= 10 and sum(m for _, m, _ in on_spark) > 1000
    assert [(h, m) for h, m, _ in on_spark] == [(h, m) for h, m, _ in on_duckdb]
    for (_, _, a), (_, _, b) in zip(on_spark, on_duckdb):
        assert a == pytest.approx(b, rel=1e-12)
    assert collections.Counter(h for h, _, _ in on_spark).most_common(1)[0][1] == 1


def test_without_pyspark_the_error_names_the_extra(monkeypatch):
    from fastpgn import spark as fs

    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(ImportError, match=r'pip install "fastpgn\[spark\]"'):
        fs.schema()
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli_main(["spark", "whatever.pgn", "-o", "out"]) == 2
    assert "fastpgn[spark]" in err.getvalue()


def test_month_folders_are_the_converters(spark, tmp_path):
    """One month rule (fastpgn.schema.by_month) for Spark and the converter: utc's month, else date's (a date
    and no time), and year=0/month=00 without a date, which read_dataset, pandas and DuckDB read as numbers."""
    from fastpgn import spark as fs

    pgn = tmp_path / "dates.pgn"
    pgn.write_bytes(b'[Site "https://lichess.org/nodate"]\n\n1. e4 e5 1-0\n\n'
                    b'[Site "https://lichess.org/dated"]\n[UTCDate "2024.01.05"]\n[UTCTime "10:00:00"]\n\n1. d4 *\n\n'
                    b'[Site "https://lichess.org/notime"]\n[Date "2023.12.31"]\n\n1. c4 *\n\n')
    assert [r.status for r in fs.convert(spark, [pgn], tmp_path / "out")] == ["converted"]
    dataset = tmp_path / "out" / "input=dates.pgn"
    assert converter([str(pgn), "10", "-o", str(tmp_path / "conv"), "--format", "parquet",
                      "--partition", "month"]) == 0
    folders = sorted(str(p.parent.relative_to(dataset)) for p in dataset.rglob("*.parquet"))
    assert folders == ["year=0/month=00", "year=2023/month=12", "year=2024/month=01"]
    conv = tmp_path / "conv"
    assert folders == sorted(str(p.parent.relative_to(conv)) for p in conv.rglob("*.parquet"))
    expected = [("dated", "dates.pgn", 2024, 1), ("nodate", "dates.pgn", 0, 0), ("notime", "dates.pgn", 2023, 12)]
    rows = fs.read_dataset(spark, tmp_path / "out").select("game_id", "input", "year", "month").collect()
    assert sorted(map(tuple, rows)) == expected
    inferred = spark.read.parquet(str(tmp_path / "out")).select("game_id", "input", "year", "month").collect()
    assert sorted(map(tuple, inferred)) == expected
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(tmp_path / "out")
    assert sorted(zip(frame["game_id"], frame["input"], frame["year"].astype(int), frame["month"].astype(int))) == \
        expected


def test_an_input_in_cp1252_is_read_as_its_characters(spark, tmp_path):
    """A real dump written in cp1252: ``encoding="cp1252"`` (``--encoding`` on the command) gives the rows
    the converter gives for the UTF-8 original (offsets count the UTF-8 text, so they are equal too); without
    it, its accented names are read as U+FFFD; a rerun with another encoding converts it again."""
    from fastpgn import spark as fs

    original = corpus(FILES[0])
    text = fastpgn.io.sources.open_source(str(original))
    try:
        utf8 = b"".join(text.chunks())
    finally:
        text.close()
    accented = {ch for ch in utf8.decode("utf-8") if ord(ch) > 127}
    assert accented, "nothing beyond ASCII: the test would hold nothing"
    latin = tmp_path / "in" / "cp1252.pgn"
    latin.parent.mkdir()
    latin.write_bytes(utf8.decode("utf-8").encode("cp1252"))
    expected = converter_parquet(original, tmp_path / "expected")

    out = tmp_path / "dataset"
    err = io.StringIO()
    with redirect_stderr(err):
        code = cli_main(["spark", str(latin), "-o", str(out), "--master", "local[2]", "--encoding", "cp1252"])
    assert code == 0, err.getvalue()
    assert published(out, latin.name).equals(expected)
    openings = set(expected.column("opening").to_pylist())     # (lichess's opening names hold the accents)
    assert any(ch in name for name in openings for ch in accented)
    rows = fs.read_pgn(spark, [str(latin)], encoding="Windows-1252").select("opening").collect()
    assert {r.opening for r in rows} == openings

    plain = fs.convert(spark, [latin], tmp_path / "plain")[0]   # UTF-8 assumed: the accents become U+FFFD
    names = set(published(tmp_path / "plain", latin.name).column("opening").to_pylist())
    assert plain.status == "converted" and any("\ufffd" in n for n in names)
    assert not any(ch in n for n in names for ch in accented)
    with pytest.raises(ValueError, match="other options"):      # another encoding: not the complete run's
        fs.convert(spark, [latin], tmp_path / "plain", encoding="cp1252")
    assert fs.convert(spark, [latin], tmp_path / "plain", encoding="cp1252", overwrite=True)[0].status == "converted"
    assert published(tmp_path / "plain", latin.name).equals(expected)
    assert fs.convert(spark, [latin], tmp_path / "plain", encoding="Windows-1252")[0].status == "skipped"
    with pytest.raises(ValueError, match="unknown encoding"):
        fs.read_pgn(spark, [str(latin)], encoding="no-such-codec")


# ---------------------------------------------------------------- links in the dataset folder

@pytest.mark.parametrize("name", [".spark-dataset.fastpgn-lock", "_staging", "input={input}"])
@pytest.mark.parametrize("when", ["before", "during"])
def test_convert_never_writes_through_a_link_in_the_dataset_folder(spark, tmp_path, monkeypatch, name, when):
    """A link planted at a name convert writes, to a victim file or folder: refused in one line (or, planted
    inside a task's run, the input fails naming it), the victim untouched."""
    from fastpgn import spark as fs
    from fastpgn.errors import OutputError

    src = corpus(FILES[0])
    name = name.format(input=src.name)
    victim = tmp_path / "victim"
    if name.endswith("-lock"):
        victim.write_bytes(b"the victim's own bytes\n")
    else:
        victim.mkdir()
    out = tmp_path / "dataset"
    out.mkdir()
    if when == "before":
        os.symlink(victim, out / name)
    else:
        check = fs._check_dataset_folder

        def check_then_plant(folder):
            check(folder)
            os.symlink(victim, folder / name)

        monkeypatch.setattr(fs, "_check_dataset_folder", check_then_plant)
    try:
        reports = fs.convert(spark, [src], out)
    except OutputError as exc:
        assert "symbolic link" in str(exc) and str(out / name) in str(exc) and "\n" not in str(exc)
    else:
        assert when == "during" and not name.endswith("-lock")
        [report] = reports
        if name == "_staging":
            assert report.status == "failed" and "symbolic link" in report.message
        else:       # the input's folder: the rename of the finished one replaced the link
            assert report.status == "converted" and not (out / name).is_symlink()
    assert (out / name).is_symlink() or when == "during"
    if name.endswith("-lock"):
        assert victim.read_bytes() == b"the victim's own bytes\n"
    else:
        assert list(victim.iterdir()) == []


def test_the_pyarrow_writer_writes_the_same_dataset_in_pyarrows_bytes(spark, tmp_path):
    """``writer="pyarrow"``: each file holds the table of the default writer's, in the bytes pyarrow's own
    ParquetWriter writes; the dataset records it, so a rerun with the default writer is refused."""
    from fastpgn import spark as fs
    from helpers import one_writer

    pgn = corpus("lichess_db_standard_rated_2021-10.head999.pgn.zst")
    for writer in ("fastpgn", "pyarrow"):
        assert [r.status for r in fs.convert(spark, [pgn], tmp_path / writer, writer=writer)] == ["converted"]
    ours, theirs = (sorted((tmp_path / w).rglob("*.parquet")) for w in ("fastpgn", "pyarrow"))
    assert [p.relative_to(tmp_path / "fastpgn") for p in ours] == [p.relative_to(tmp_path / "pyarrow") for p in theirs]
    assert len(ours) == 1       # (the games of one month)
    back = pq.read_table(ours[0])
    assert pq.read_table(theirs[0]).equals(back) and back.num_rows == 999
    with fastpgn.read_arrow(pgn, errors="skip") as reader:
        games = pa.Table.from_batches(list(reader), schema=reader.schema)
    assert theirs[0].read_bytes() == one_writer(games, fs.BATCH_ROWS) != ours[0].read_bytes()
    with pytest.raises(ValueError, match="other options"):
        fs.convert(spark, [pgn], tmp_path / "pyarrow")


# ---------------------------------------------------------------- spark.read.format("fastpgn")

def _read_arrow_rows(path, where=None) -> list[dict]:
    from fastpgn import spark as fs

    target = fs._task_arrow_schema(False)
    reader = fastpgn.read_arrow(str(path), where=where)
    table = pa.Table.from_batches(list(reader), schema=reader.schema).cast(target)
    return table.sort_by("byte_offset").to_pylist()


def _spark_rows(frame) -> list[dict]:
    return frame.toArrow().sort_by("byte_offset").to_pylist()


def test_the_data_source_splits_a_multi_frame_file_into_tasks_whose_rows_are_read_arrows(spark):
    from fastpgn import spark as fs

    path = shared(*MULTIFRAME)
    frame = spark.read.format("fastpgn").option("partitionSize", str(1 << 20)).load(str(path))
    assert frame.schema == fs.schema()
    assert frame.rdd.getNumPartitions() == 6     # (11 frames of 512 KiB, two a range)
    assert frame.count() == 2499
    expected = _read_arrow_rows(shared(*SINGLE))
    assert _spark_rows(frame) == expected        # every column, byte_offset with them, row for row
    # A file that cannot be split (one zstd frame) is one partition, with the same rows.
    whole = spark.read.format("fastpgn").option("partitionSize", "1").load(str(shared(*SINGLE)))
    assert whole.rdd.getNumPartitions() == 1
    assert _spark_rows(whole.select("byte_offset", "game_id")) == [
        {"byte_offset": r["byte_offset"], "game_id": r["game_id"]} for r in expected]


def test_the_data_source_runs_the_filters_it_can_in_the_kernel_and_gives_the_rows_read_arrow_gives(spark):
    from fastpgn.filters import Where

    path = shared(*MULTIFRAME)
    frame = spark.read.format("fastpgn").option("partitionSize", str(2 << 20)).load([str(path)])
    assert frame.rdd.getNumPartitions() >= 2
    pushed = frame.where("white_elo >= 2200")
    expected = _read_arrow_rows(path, where=Where(min_elo=2200, elo_of="white"))
    assert 0 < len(expected) < 2499
    assert _spark_rows(pushed) == expected
    assert expected == [r for r in _read_arrow_rows(path) if r["white_elo"] is not None and r["white_elo"] >= 2200]
    # Pushed and not: the kernel's speed and Spark's result test together.
    both = frame.where("speed = 'blitz' and result = '1-0' and plies > 40").select("byte_offset")
    rows = _read_arrow_rows(path)
    assert sorted(r["byte_offset"] for r in both.collect()) == [
        r["byte_offset"] for r in rows if r["speed"] == "blitz" and r["result"] == "1-0" and r["plies"] > 40]


def test_the_data_source_says_which_filters_run_in_the_kernel():
    pytest.importorskip("pyspark")
    from pyspark.sql.datasource import EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan, StringStartsWith

    from fastpgn import spark as fs
    from fastpgn.spark.source import FastpgnReader

    reader = FastpgnReader({"path": "x.pgn.zst"}, fs.schema())
    kernel = [GreaterThanOrEqual(("white_elo",), 2200), LessThan(("white_elo",), 2400),
              In(("speed",), ("blitz", "rapid")), EqualTo(("eco",), "B20"), GreaterThan(("plies",), 40),
              EqualTo(("white",), "DrNykterstein")]
    spark_side = [EqualTo(("result",), "1-0"), StringStartsWith(("eco",), "B"), In(("speed",), ("Blitz",)),
                  GreaterThanOrEqual(("black_elo",), 2000), GreaterThan(("utc",), 0)]
    back = list(reader.pushFilters(kernel + spark_side))
    assert sorted(map(repr, back)) == sorted(map(repr, spark_side))
    assert all(any(b is f for f in spark_side) for b in back)     # (Spark asks for its own objects back)
    assert sorted(map(repr, reader.pushed)) == sorted(map(repr, kernel))
    assert reader.where == {"speed": ["blitz", "rapid"], "tags": [("ECO", "B20"), ("White", "DrNykterstein")],
                            "min_plies": 41, "max_plies": None, "min_elo": 2200, "max_elo": 2399,
                            "elo_of": "white"}
    same = FastpgnReader({"path": "x"}, fs.schema())
    assert list(same.pushFilters([GreaterThan(("white_elo",), 2000), GreaterThan(("black_elo",), 2000)])) == []
    assert same.where == {"min_elo": 2001, "max_elo": None, "elo_of": "both"}


def test_register_makes_the_format_known_to_a_users_own_session(spark):
    from fastpgn import spark as fs

    fs.register(spark)
    path = shared("data", "lichess-db", FILES[1])        # bzip2: one partition
    frame = spark.read.format("fastpgn").load(str(path)).select("byte_offset", "white")
    assert frame.rdd.getNumPartitions() == 1
    assert _spark_rows(frame) == [{"byte_offset": r["byte_offset"], "white": r["white"]}
                                  for r in _read_arrow_rows(path)]


# ---------------------------------------------------------------- convert in frame-range tasks

BAD_GAME = b'[Event "bad"]\n[Site "https://lichess.org/badgame1"]\n\n1. e4 e5 2. Qxz9 *\n\n'


def _tasks_of_last_job(spark, group: str) -> int:
    """The tasks Spark ran for the jobs of ``group`` (Spark's own count: its status tracker)."""
    tracker = spark.sparkContext.statusTracker()
    stages = [s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds]
    return sum(tracker.getStageInfo(s).numTasks for s in stages)


def _convert_counting_tasks(spark, paths, out, **kwargs):
    import uuid

    from fastpgn import spark as fs

    group = f"fastpgn-{uuid.uuid4().hex}"
    spark.sparkContext.setJobGroup(group, group)
    try:
        reports = fs.convert(spark, paths, out, rows_per_file=300, **kwargs)
    finally:
        spark.sparkContext.setJobGroup("", "")
    return {r.input: r for r in reports}, _tasks_of_last_job(spark, group)


def _published_input(out: Path, name: str):
    """An input's rows, its record's counts and its rejected games, as a user reads them."""
    record = json.loads((out / f"input={name}" / "_fastpgn.json").read_text())
    rejected = out / f"input={name}" / "_rejected.pgn"
    counts = {k: record[k] for k in ("status", "games_read", "games_written", "games_rejected", "games_filtered",
                                     "pgn_bytes", "damage_offset")}
    return published(out, name), counts, rejected.read_bytes() if rejected.exists() else None


def test_convert_splits_a_multi_frame_input_into_tasks_giving_the_one_task_rows_rejects_and_damage(spark,
                                                                                                   tmp_path):
    """The corpus in lichess's framing with bad games in several frames, converted in 6 tasks (1 MiB ranges
    of its 512 KiB frames), gives the rows, counts and rejected games of its single-frame twin in one task;
    with a frame damaged, those of the damaged file in one task: the games before the damage, named at its
    PGN byte."""
    import zstandard

    from helpers import decompressed, pzstd_layout

    text = decompressed(shared(*SINGLE))
    pieces, at = [], 0
    for i in (1, 4, 7, 9):          # a bad game in frames 1, 4, 7 and 9 (of 11)
        cut = text.index(b"\n\n[Event ", (i << 19) + 1000) + 2
        pieces += [text[at:cut], BAD_GAME]
        at = cut
    text = b"".join(pieces) + text[at:]
    single, multi = tmp_path / "games.pgn.zst", tmp_path / "games.multiframe.pgn.zst"
    single.write_bytes(zstandard.ZstdCompressor(level=3).compress(text))
    multi.write_bytes(pzstd_layout(text, 512 << 10))
    # The same file with its frame 7 corrupt (bytes inside its compressed data changed: a bad block)
    from fastpgn.io import frames

    data = bytearray(multi.read_bytes())
    start, end = frames.frame_table(multi).frames[7]
    data[(start + end) // 2:(start + end) // 2 + 64] = bytes(64)
    damaged = tmp_path / "damaged.multiframe.pgn.zst"
    damaged.write_bytes(bytes(data))

    split, tasks = _convert_counting_tasks(spark, [multi], tmp_path / "split", range_size=1 << 20)
    assert tasks == split[multi.name].tasks == 6
    whole, tasks = _convert_counting_tasks(spark, [single], tmp_path / "whole")
    assert tasks == whole[single.name].tasks == 1
    rows, counts, rejected = _published_input(tmp_path / "split", multi.name)
    rows1, counts1, rejected1 = _published_input(tmp_path / "whole", single.name)
    assert rows.num_rows == 2499 and rows.equals(rows1)           # every column, byte_offset among them
    assert counts == counts1 == {"status": "converted", "games_read": 2503, "games_written": 2499,
                                 "games_rejected": 4, "games_filtered": 0, "pgn_bytes": len(text),
                                 "damage_offset": None}
    assert rejected == rejected1 and rejected.count(b"% fastpgn rejected game ") == 4     # numbered as one read
    files = sorted(p.name for p in (tmp_path / "split").rglob("*.parquet"))
    assert files[0] == "part-00000-00000.parquet" and files[-1].startswith("part-00005-")
    assert not (tmp_path / "split" / f"input={multi.name}" / "_r00000").exists()

    # Frame 7 corrupt: the games whose text ends before the damage (inside frame 7, where its decoder stops),
    # none of the later frames' (which decode, but a serial read never reaches), the bad games before it.
    bad, tasks = _convert_counting_tasks(spark, [damaged], tmp_path / "bad", range_size=1 << 20)
    report = bad[damaged.name]
    assert tasks == report.tasks == 6
    rows, counts, rejected = _published_input(tmp_path / "bad", damaged.name)
    at = counts["damage_offset"]
    assert counts["status"] == "damaged" and 7 << 19 <= at < 8 << 19
    offsets = rows1.column("byte_offset").to_pylist()
    kept = sum(1 for nxt in offsets[1:] if nxt <= at)      # the games that end before the damage
    assert 1000 < kept == rows.num_rows and rows.equals(rows1.slice(0, kept))
    mark = b"% fastpgn rejected game "
    assert rejected.startswith(mark.join(rejected1.split(mark)[:4]))   # the bad games of frames 1, 4 and 7
    assert rejected.count(mark) == counts["games_rejected"] == 4           # ... and the game the damage cuts
    assert counts["games_read"] == counts["games_written"] + counts["games_rejected"] == kept + 4
    assert report.message == f"{damaged}: corrupt zst data in {damaged}: Data corruption detected (PGN byte {at})"
    # ... and one task gives the same: its single-thread decoder keeps every block before the damage too.
    one_bad, tasks = _convert_counting_tasks(spark, [damaged], tmp_path / "bad-one", range_size=0)
    assert tasks == one_bad[damaged.name].tasks == 1 and one_bad[damaged.name].message == report.message
    got_one = _published_input(tmp_path / "bad-one", damaged.name)
    assert got_one[0].equals(rows) and got_one[1:] == (counts, rejected)
    # Cut short inside frame 9: the ranges give what one task gives, to the byte.
    cut = tmp_path / "cut.multiframe.pgn.zst"
    cut.write_bytes(multi.read_bytes()[:(frames.frame_table(multi).frames[9][0] + 20000)])
    ranged, tasks = _convert_counting_tasks(spark, [cut], tmp_path / "cut-split", range_size=1 << 20)
    assert tasks == ranged[cut.name].tasks == 5
    one, tasks = _convert_counting_tasks(spark, [cut], tmp_path / "cut-one", range_size=0)
    assert tasks == one[cut.name].tasks == 1
    got, want = (_published_input(tmp_path / f, cut.name) for f in ("cut-split", "cut-one"))
    assert got[1]["status"] == "damaged" and got[0].equals(want[0]) and got[1:] == want[1:]
    assert ranged[cut.name].message == one[cut.name].message and "truncated" in one[cut.name].message
    # A rerun skips the complete input and converts the damaged one again, in its tasks.
    again, tasks = _convert_counting_tasks(spark, [multi, damaged], tmp_path / "split", range_size=1 << 20)
    assert {k: r.status for k, r in again.items()} == {multi.name: "skipped", damaged.name: "damaged"}
    assert tasks == 6


def test_convert_converts_in_one_task_a_file_whose_frames_pzstd_could_not_have_cut(spark, tmp_path):
    """A file behind pzstd's headers whose frames another writer cut unevenly (one frame longer than the
    others) reads whole only: its ranges find the uneven frame, and convert converts it again in one task,
    giving the rows, counts and rejected games of its single-frame twin."""
    import zstandard

    from helpers import decompressed, pzstd_layout

    text = decompressed(shared(*SINGLE))
    pieces, at = [], 0
    for size in [256 << 10, 256 << 10, 300 << 10] + [256 << 10] * 3:
        pieces.append(pzstd_layout(text[at:at + size], size))
        at += size
    pieces.append(pzstd_layout(text[at:], len(text)))
    odd = tmp_path / "odd.multiframe.pgn.zst"
    odd.write_bytes(b"".join(pieces))
    from fastpgn.io import frame_ranges, frames

    ranges = len(frame_ranges.frame_ranges(odd, 1 << 20))
    assert frames.frame_table(odd).pzstd and ranges > 1
    single = tmp_path / "odd.pgn.zst"
    single.write_bytes(zstandard.ZstdCompressor(level=3).compress(text))
    got, tasks = _convert_counting_tasks(spark, [odd], tmp_path / "split", range_size=1 << 20)
    report = got[odd.name]
    # (its range tasks, then the one task that converted it)
    assert (report.status, report.tasks, tasks, report.message) == ("converted", 1, ranges + 1, None)
    _convert_counting_tasks(spark, [single], tmp_path / "whole")
    rows, counts, rejected = _published_input(tmp_path / "split", odd.name)
    rows1, counts1, rejected1 = _published_input(tmp_path / "whole", single.name)
    assert rows.num_rows == 2499 and rows.equals(rows1) and (counts, rejected) == (counts1, rejected1)
    assert not (tmp_path / "split" / "_staging").exists()


def test_cli_converts_a_multi_frame_input_in_frame_range_tasks(spark, tmp_path):
    """`python -m fastpgn spark --range-size`: the corpus in lichess's framing in 6 tasks, said on its line, its
    rows those of its single-frame twin; --range-size 0 makes it one task."""
    path, twin = shared(*MULTIFRAME), shared(*SINGLE)
    lines = {}
    for size in ("1048576", "0"):
        err = io.StringIO()
        with redirect_stderr(err):
            code = cli_main(["spark", str(path), "-o", str(tmp_path / size), "--master", "local[2]",
                             "--range-size", size])
        assert code == 0, err.getvalue()
        lines[size] = err.getvalue().splitlines()
    assert any(path.name in line and "2,499 games written" in line and "6 tasks" in line for line in lines["1048576"])
    assert not any("tasks" in line for line in lines["0"])
    want = converter_parquet(twin, tmp_path / "twin")
    assert published(tmp_path / "1048576", path.name).equals(published(tmp_path / "0", path.name))
    assert published(tmp_path / "0", path.name).equals(want.sort_by("byte_offset"))
    with redirect_stderr(io.StringIO()):
        assert cli_main(["spark", str(path), "-o", str(tmp_path / "x"), "--range-size", "-1"]) == 2
