"""--partition month: Parquet chunks in lichess's own layout, year=YYYY/month=MM/ folders by month of play.

The input joins real dumps of three months (2013-01, 2021-10, 2022-06) and
a game without UTCDate, so chunks span months; what a user sees is checked
as they would: DuckDB, polars, pyarrow and pandas read the tree with hive
partitioning, and it holds the same games as the unpartitioned chunks, in
the same order. The month rule itself (``fastpgn.schema.by_month``, shared
with ``fastpgn.spark``) is checked on games with a date and no time, and
none at all.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fastpgn.cli import main
from fastpgn.convert.converter import Converter, Options
from fastpgn.io.sources import open_source
from helpers import ENV, official_schema, release_rows, shared, signal_after_chunks

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
pl = pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')

MONTHS = ["lichess_db_standard_rated_2013-01.head348.pgn.bz2", "lichess_db_standard_rated_2021-10.head999.pgn.zst",
          "lichess_db_standard_rated_2022-06.head2499.pgn.zst"]
NO_DATE = b'[Event "Casual game"]\n[White "Ann"]\n[Black "Bob"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 1-0\n\n'


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """One PGN of three months of real games, a dateless game in the middle of them."""
    parts = []
    for name in MONTHS:
        source = open_source(str(shared("data", "lichess-db", name)))
        try:
            parts.append(b"".join(source.chunks()))
        finally:
            source.close()
    path = tmp_path_factory.mktemp("mixed") / "mixed.pgn"
    path.write_bytes(parts[0] + NO_DATE + parts[1] + parts[2])
    return path


def folder(month: tuple[int, int] | None) -> str:
    """The folder of a month of play (None: no date)."""
    return "year=0/month=00" if month is None else f"year={month[0]:04d}/month={month[1]:02d}"


def convert(src: Path, out: Path, chunk: int = 700, jobs: int = 2, **kw):
    opts = Options(input=str(src), chunk_size=chunk, output_dir=str(out), jobs=jobs, block_size=300_000,
                   format="parquet", **kw)
    return Converter(opts).run()


def tree(out: Path) -> dict[str, bytes]:
    """Every Parquet file under ``out``, by its path relative to it."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


def test_month_folders_hold_the_unpartitioned_games(tmp_path, mixed):
    flat = tmp_path / "flat"
    convert(mixed, flat)
    out = tmp_path / "months"
    summary = convert(mixed, out, partition="month")
    expected = pa.concat_tables([pq.read_table(f) for f in sorted(flat.glob("*.parquet"))])
    assert summary.games_written == expected.num_rows == 348 + 1 + 999 + 2499

    files = tree(out)
    # A folder for each month of play (2013-01's dump holds games begun on 2012-12-31), the dateless
    # game in year=0/month=00; each file's games all of its folder's month.
    months = {None if t is None else (t.year, t.month) for t in expected.column("utc").to_pylist()}
    assert {(2012, 12), (2013, 1), (2021, 10), (2022, 6), None} <= months
    folders = {path.rsplit("/", 1)[0] for path in files}
    assert folders == {folder(m) for m in months}
    for path in files:
        utc = pq.read_table(out / path).column("utc").to_pylist()
        assert {folder(None if t is None else (t.year, t.month)) for t in utc} == {path.rsplit("/", 1)[0]}, path
    # A chunk is CHUNK_SIZE games, in however many month folders they fall.
    rows: dict[str, int] = {}
    for path in files:
        rows[path[-14:]] = rows.get(path[-14:], 0) + pq.ParquetFile(out / path).metadata.num_rows
    assert [rows[k] for k in sorted(rows)] == [700] * 5 + [expected.num_rows - 3500]

    # DuckDB as users query lichess's release: the hive columns beside the schema's, the same games.
    got = duckdb.sql(f"SELECT year, month, game_id, utc, white_elo, moves, clock FROM read_parquet("
                     f"'{out}/*/*/*.parquet', hive_partitioning = true) ORDER BY byte_offset").fetchall()
    assert [g[2:] for g in got] == list(zip(*(expected.column(c).to_pylist() for c in
                                               ("game_id", "utc", "white_elo", "moves", "clock"))))
    # (DuckDB reads month=06 as the text '06', as it does lichess's release: zero-padded like theirs)
    assert [(g[0], g[1]) for g in got] == [(0, "00") if g[3] is None else (g[3].year, f"{g[3].month:02d}")
                                           for g in got]
    assert sum(g[0] == 0 for g in got) == 1
    # polars reads the tree the same way.
    frame = pl.scan_parquet(f"{out}/**/*.parquet", hive_partitioning=True).sort("byte_offset").collect()
    assert frame["game_id"].to_list() == expected.column("game_id").to_pylist()
    assert frame["eval_cp"].to_list() == expected.column("eval_cp").to_pylist()
    assert frame.filter(pl.col("year") == 2013)["utc"].dt.month().unique().to_list() == [1]


def test_any_jobs_and_a_killed_run_resumed_give_the_same_tree(tmp_path, mixed):
    reference = tmp_path / "j1"
    convert(mixed, reference, jobs=1, partition="month")
    one = tree(reference)
    two = tmp_path / "j2"
    convert(mixed, two, jobs=2, partition="month")
    assert tree(two) == one

    # Killed mid-way (after two chunks), then --resume: the tree of a run that was never stopped.
    args = [str(mixed), "700", "-j", "2", "-q", "--format", "parquet", "--partition", "month"]
    fresh = tmp_path / "fresh"
    assert main(args + ["-o", str(fresh)]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fastpgn", *args, "-o", str(out)]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    signal_after_chunks(proc, out / ".mixed.pgn.fastpgn-state.json", 2, signal.SIGKILL)
    done = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert tree(out) == tree(fresh)
    assert not list(out.rglob("*.tmp"))


def test_a_rerun_sees_the_month_folders(tmp_path, mixed, capsys):
    out = tmp_path / "out"
    args = [str(mixed), "700", "-o", str(out), "-q", "--format", "parquet", "--partition", "month"]
    assert main(args) == 0
    before = tree(out)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{out} already holds output for mixed.pgn (year=" in err and "--overwrite" in err
    # --overwrite replaces the tree; unpartitioned output then leaves no month folder behind.
    assert main(args + ["--overwrite"]) == 0 and tree(out) == before
    assert main(args[:-2] + ["--overwrite"]) == 0
    assert sorted(tree(out)) == [f"mixed.pgn.part_{i:06d}.parquet" for i in range(6)]


def test_partition_needs_parquet(tmp_path, mixed, capsys):
    with pytest.raises(SystemExit) as exit:
        main([str(mixed), "700", "-o", str(tmp_path), "--partition", "month"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "--partition month writes Parquet folders: add --format parquet" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_lichess_release_in_month_folders_out(tmp_path):
    """Lichess's own Parquet layout in, the same layout out, with the per-ply columns beside."""

    root = tmp_path / "release" / "data"
    rows = []
    for name in MONTHS[1:]:
        source = open_source(str(shared("data", "lichess-db", name)))
        try:
            month = release_rows(b"".join(source.chunks()))
        finally:
            source.close()
        folder = root / f"year={month[0]['UTCDate'].year:04}" / f"month={month[0]['UTCDate'].month:02}"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(month, schema=official_schema()), folder / "train-00000-of-00001.parquet")
        rows += month
    out = tmp_path / "out"
    assert main([str(root), "1000", "-o", str(out), "-q", "--format", "parquet", "--partition", "month"]) == 0
    query = "SELECT year, month, count(*) FROM read_parquet('{}', hive_partitioning = true) GROUP BY ALL ORDER BY ALL"
    ours = duckdb.sql(query.format(f"{out}/*/*/*.parquet")).fetchall()
    theirs = duckdb.sql(query.format(f"{root}/*/*/*.parquet")).fetchall()
    assert ours == theirs == [(2021, "10", 999), (2022, "06", 2499)]
    got = duckdb.sql(f"SELECT game_id, len(moves) FROM read_parquet('{out}/*/*/*.parquet') ORDER BY year, month, "
                     "byte_offset").fetchall()
    assert [g[0] for g in got] == [r["Site"].rsplit("/", 1)[-1] for r in rows]
    # ... their moves as the dumps hold them
    import fastpgn

    dumps = [shared("data", "lichess-db", name) for name in MONTHS[1:]]
    plies = [n for path in dumps for b in fastpgn.read_arrow(str(path), columns=["plies"])
             for n in b.column(0).to_pylist()]
    assert [n for _, n in got] == plies and sum(plies) > 100_000


# A game with a date and a time, one with a date and no time (UTCDate; Date), none, and a partial date.
DATES = (b'[Site "https://lichess.org/both"]\n[UTCDate "2024.01.31"]\n[UTCTime "23:59:59"]\n\n1. e4 *\n\n'
         b'[Site "https://lichess.org/dateonly"]\n[Date "2023.12.05"]\n\n1. d4 *\n\n'
         b'[Site "https://lichess.org/none"]\n[White "x"]\n\n1. c4 *\n\n'
         b'[Site "https://lichess.org/utcdateonly"]\n[UTCDate "2024.01.02"]\n\n1. f4 *\n\n'
         b'[Site "https://lichess.org/partial"]\n[Date "2024.??.??"]\n\n1. g4 *\n\n')
EXPECTED = {"both": (2024, 1), "dateonly": (2023, 12), "none": (0, 0), "utcdateonly": (2024, 1), "partial": (0, 0)}


def test_month_of_utc_else_of_date_and_every_reader_reads_the_tree(tmp_path, capsys):
    """A game with a date and no time is in its date's month; one without a date in year=0/month=00, which
    pandas (the README's line), pyarrow's datasets, polars, DuckDB and Spark read as numbers."""
    pd = pytest.importorskip("pandas")
    import pyarrow.dataset as ds

    src = tmp_path / "dates.pgn"
    src.write_bytes(DATES)
    out = tmp_path / "out"
    assert main([str(src), "2", "-o", str(out), "-q", "--format", "parquet", "--partition", "month"]) == 0
    assert sorted(tree(out)) == sorted([
        "year=0/month=00/dates.pgn.part_000001.parquet", "year=0/month=00/dates.pgn.part_000002.parquet",
        "year=2023/month=12/dates.pgn.part_000000.parquet", "year=2024/month=01/dates.pgn.part_000000.parquet",
        "year=2024/month=01/dates.pgn.part_000001.parquet"])

    frame = pd.read_parquet(out)     # "Cannot yet unify dictionaries with nulls" with a null folder
    got = {g: (int(y), int(m)) for g, y, m in zip(frame["game_id"], frame["year"], frame["month"])}
    assert got == EXPECTED
    table = ds.dataset(out, partitioning="hive").to_table()
    assert dict(zip(table.column("game_id").to_pylist(), zip(table.column("year").to_pylist(),
                                                            table.column("month").to_pylist()))) == EXPECTED
    polars = pl.read_parquet(f"{out}/**/*.parquet", hive_partitioning=True)
    assert polars["year"].dtype.is_integer() and polars["month"].dtype.is_integer()
    assert dict(zip(polars["game_id"], zip(polars["year"], polars["month"]))) == EXPECTED
    rows = duckdb.sql(f"SELECT game_id, year, month FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = "
                      f"true)").fetchall()
    assert {g: (y, int(m)) for g, y, m in rows} == EXPECTED and all(isinstance(y, int) for _, y, _ in rows)


def test_by_month_splits_a_batch_in_input_order():
    import fastpgn
    from fastpgn import schema

    batch = next(iter(fastpgn.read_arrow(DATES, columns=["game_id", "date"])))
    assert [(f, rows.column(0).to_pylist()) for f, rows in schema.by_month(batch)] == [
        ("year=2024/month=01", ["both", "utcdateonly"]), ("year=2023/month=12", ["dateonly"]),
        ("year=0/month=00", ["none", "partial"])]
    # One month (a monthly dump's batches) is the batch itself; no rows, no folders.
    one = batch.slice(0, 1)
    assert schema.by_month(one) == [("year=2024/month=01", one)]
    assert schema.by_month(batch.slice(0, 0)) == []
    assert schema.by_month(batch.slice(2, 1))[0][0] == schema.UNDATED_FOLDER
