"""``python -m fastpgn analyse --format parquet|csv`` and the filter flags: the analysis schema of the analysed games.

The table a run writes is the one ``read_arrow`` / ``to_csv`` give on the
``--format pgn`` output of the same run (accuracy, ACPL and judgements from
the engine's evals); the filters pick the games analysed and are counted.
Run on both backends by the suite's second pass (FASTPGN_IMPLEMENTATION).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from helpers import ENV, G2021, G2023, analyse_cli as run, fake_engine, first_games, shared

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastpgn  # noqa: E402
from fastpgn.cli import analyse as cli  # noqa: E402
from fastpgn.convert import table_out  # noqa: E402
from fastpgn.csv_rows import to_csv  # noqa: E402
from fastpgn.reader import read_games  # noqa: E402

PER_GAME = ("white_accuracy", "black_accuracy", "white_acpl", "black_acpl", "white_blunders", "black_mistakes")


def arrow_rows(pgn) -> list[dict]:
    return pa.Table.from_batches(list(fastpgn.read_arrow(pgn)), schema=fastpgn.read_arrow(b"").schema).to_pylist()


def parquet_rows(path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_parquet_and_csv_equal_the_schema_of_the_pgn_output(tmp_path, capsys):
    """Parquet and CSV hold what the converter makes of the analysed PGN: every game with its accuracy."""
    src = first_games(shared(*G2023), 6, tmp_path)
    engine, _ = fake_engine(tmp_path)
    pgn, parquet, csv = tmp_path / "out.pgn", tmp_path / "out.parquet", tmp_path / "out.csv"
    for out, fmt in ((pgn, "pgn"), (parquet, "parquet"), (csv, "csv")):
        code, err = run([src, "-o", out, "--engine", engine, "-q", "--format", fmt], capsys)
        assert code == 0, err
    got = parquet_rows(parquet)
    assert got == arrow_rows(pgn) and len(got) == 6
    for row in got:     # the fake engine's evals (-0.12, 0.12, ...): every game has its numbers
        assert all(row[name] is not None for name in PER_GAME), row["game_id"]
        assert row["eval_cp"][:2] == [-12, 12]
    # The same file to_parquet writes from the PGN output.
    fastpgn.to_parquet(pgn, tmp_path / "ref.parquet")
    assert pq.read_table(parquet).equals(pq.read_table(tmp_path / "ref.parquet"))
    ref = io.BytesIO()
    to_csv(pgn, ref)
    assert csv.read_bytes() == ref.getvalue()
    # CSV to stdout: the same bytes.
    assert cli.main([str(src), "--engine", engine, "-q", "--format", "csv"]) == 0
    assert capsys.readouterr().out.encode() == ref.getvalue()


def test_stockfish_evals_give_the_same_accuracy_in_parquet(tmp_path, capsys):
    from helpers import stockfish as find_stockfish

    stockfish = find_stockfish()
    src = first_games(shared(*G2023), 3, tmp_path)
    pgn, parquet = tmp_path / "out.pgn", tmp_path / "out.parquet"
    for out, fmt in ((pgn, "pgn"), (parquet, "parquet")):
        code, err = run([src, "-o", out, "--engine", stockfish, "--depth", "6", "--no-cache", "-q",
                         "--threads", "1", "--format", fmt], capsys)
        assert code == 0, err
    got = parquet_rows(parquet)
    assert got == arrow_rows(pgn)
    assert all(row["white_accuracy"] is not None and row["eval_cp"] for row in got)


def test_folder_output_is_chunks_whatever_their_size(tmp_path, capsys, monkeypatch):
    """-o FOLDER/: Parquet chunks; however many games a chunk holds, together they are the same table."""
    src = first_games(shared(*G2023), 7, tmp_path)
    engine, _ = fake_engine(tmp_path)
    assert run([src, "-o", tmp_path / "one.parquet", "--engine", engine, "-q", "--format", "parquet"],
               capsys)[0] == 0
    monkeypatch.setattr(table_out, "CHUNK_GAMES", 3)
    folder = tmp_path / "out"
    code, err = run([src, "-o", f"{folder}/", "--engine", engine, "-q", "--format", "parquet"], capsys)
    assert code == 0, err
    chunks = sorted(p.name for p in folder.iterdir())
    assert chunks == ["first7.part_000000.parquet", "first7.part_000001.parquet", "first7.part_000002.parquet"]
    together = [row for name in chunks for row in parquet_rows(folder / name)]
    assert together == parquet_rows(tmp_path / "one.parquet")
    # Again: refused without --overwrite, replaced with it.
    code, err = run([src, "-o", folder, "--engine", engine, "--format", "parquet"], capsys)
    assert code == 2 and "holds 3 Parquet chunks: --overwrite replaces them" in err
    monkeypatch.setattr(table_out, "CHUNK_GAMES", 16_384)
    assert run([src, "-o", folder, "--engine", engine, "-q", "--format", "parquet", "--overwrite"], capsys)[0] == 0
    assert [p.name for p in folder.iterdir()] == ["first7.part_000000.parquet"]


def test_only_missing_parquet_gives_every_game_its_accuracy(tmp_path, capsys):
    """Games with lichess's evals are kept, the others analysed: every game with moves gets its accuracy."""
    src = first_games(shared(*G2021), 46, tmp_path)      # games 41 and 46 have evals
    with_evals = sum(1 for g in read_games(src) if any(e is not None for e in g.evals))
    assert with_evals == 2
    engine, _ = fake_engine(tmp_path)
    out = tmp_path / "out.parquet"
    code, err = run([src, "-o", out, "--engine", engine, "--only-missing", "--format", "parquet"], capsys)
    assert code == 0, err
    assert f"{with_evals:,} kept with their evals" in err
    rows = parquet_rows(out)
    assert len(rows) == 46
    assert all(r["white_accuracy"] is not None for r in rows if r["plies"] >= 2)


def test_filters_pick_the_games_analysed_and_are_counted(tmp_path, capsys):
    src = first_games(shared(*G2021), 30, tmp_path)
    games = list(read_games(src))
    keep = [g for g in games if int(g.headers["WhiteElo"]) >= 1800 and int(g.headers["BlackElo"]) >= 1800]
    assert 0 < len(keep) < len(games)
    engine, log = fake_engine(tmp_path)
    pgn, parquet = tmp_path / "out.pgn", tmp_path / "out.parquet"
    code, err = run([src, "-o", pgn, "--engine", engine, "--min-elo", "1800"], capsys)
    assert code == 0, err
    assert (f"analyse: {len(games)} games read, {len(keep)} written ({len(keep)} analysed, 0 kept with their "
            f"evals, 0 not analysable), 0 rejected, {len(games) - len(keep)} filtered out;") in err
    assert [g.headers for g in read_games(pgn)] == [g.headers for g in keep]
    # Only the games kept reach the engine: as many searches as positions of theirs (no cache).
    code, err = run([src, "-o", parquet, "--engine", engine, "--min-elo", "1800", "--format", "parquet",
                     "--no-cache"], capsys)
    assert code == 0, err
    assert f"; {sum(len(g.moves) for g in keep):,} positions" in err
    assert parquet_rows(parquet) == arrow_rows(pgn)
    # --limit with a filter: games read = written + rejected + filtered out, up to the last game written.
    code, err = run([src, "-o", tmp_path / "two.pgn", "--engine", engine, "--min-elo", "1800", "--limit", "2"],
                    capsys)
    assert code == 0, err
    second = keep[1].number
    assert f"{second} games read, 2 written" in err and f"{second - 2} filtered out" in err


@pytest.mark.parametrize("argv, message", [
    (["--format", "xml"], "fastpgn analyse: --format: invalid choice: 'xml'"),
    (["--format", "parquet"], "fastpgn analyse: --format parquet needs -o OUTPUT"),
    (["--format", "csv", "-o", "x.csv", "--resume"], "fastpgn analyse: --resume continues pgn and lines output, "
                                                    "not --format csv"),
    (["--format", "parquet", "-o", "x.parquet", "--resume"], "fastpgn analyse: --resume continues pgn and lines"),
    (["--min-elo", "abc"], "fastpgn analyse: --min-elo must be a whole number"),
])
def test_format_and_filter_usage_errors_are_one_line(tmp_path, capsys, argv, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    engine, log = fake_engine(tmp_path)
    src = first_games(shared(*G2023), 1, tmp_path)
    code, err = run([src, "--engine", engine, *argv], capsys)
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err
    assert not log.exists()       # refused before any engine started


def test_a_count_of_one_is_singular_in_the_summary(tmp_path, capsys):
    """"1 games read", "1 positions": every count of the summary goes through one plural rule."""
    src = tmp_path / "one.pgn"
    src.write_text('[Event "x"]\n\n1. e4 *\n\n')
    engine, _ = fake_engine(tmp_path)
    code, err = run([src, "-o", tmp_path / "out.pgn", "--engine", engine], capsys)
    assert code == 0, err
    assert err.startswith("analyse: 1 game read, 1 written (1 analysed, 0 kept with their evals, 0 not analysable), "
                          "0 rejected; 1 position, 1 searched, "), err
    code, err = run([first_games(shared(*G2021), 2, tmp_path), "-o", tmp_path / "out2.pgn", "--engine", engine,
                     "--max-plies", "0"], capsys)
    assert code == 0, err
    assert err.startswith("analyse: 2 games read, 0 written (0 analysed, 0 kept with their evals, 0 not analysable), "
                          "0 rejected, 2 filtered out; 0 positions, "), err


def test_progress_bar_gives_the_games_of_the_total_and_an_eta(tmp_path):
    """analyse's bar had no total and no ETA: the converter's bar, the games of the input's total (counted
    beside the analysis, the filters and --limit applied), its percentage and the time left."""
    import re

    from helpers import stderr_on_a_terminal

    src = first_games(shared(*G2021), 30, tmp_path)
    engine, _ = fake_engine(tmp_path)
    keep = sum(1 for g in read_games(src) if int(g.headers["WhiteElo"]) >= 1800 and int(g.headers["BlackElo"]) >= 1800)
    for extra, total in (([], 30), (["--limit", "12"], 12), (["--min-elo", "1800"], keep)):
        seen = stderr_on_a_terminal([sys.executable, "-m", "fastpgn", "analyse", str(src), "-o",
                                     str(tmp_path / f"out{total}.pgn"), "--engine", engine, *extra])
        assert "fastpgn analyse: 100%|" in seen, seen
        assert re.search(rf"\| {total} games of {total}, [\d,]+ positions, [\d.,]+ positions/s \[\d\d:\d\d<00:00\]",
                         seen), seen
        assert f"analyse: {30 if extra != ['--limit', '12'] else 12} games read" in seen, seen


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux), a device that is always full")
@pytest.mark.parametrize("fmt", ["pgn", "lines"])
def test_a_full_disk_is_one_line_exit_2(tmp_path, capsys, fmt):
    """analyse --format pgn|lines onto a full disk ended in a 34-line traceback (and exit 0): one line, 2."""
    src = first_games(shared(*G2021), 5, tmp_path)
    engine, _ = fake_engine(tmp_path)
    code, err = run([src, "-o", "/dev/full", "--engine", engine, "--format", fmt], capsys)
    assert (code, err) == (2, "fastpgn analyse: cannot write /dev/full: No space left on device; 0 games written "
                              "before it, --resume continues\n")
    # stdout onto a full disk: the same line, naming stdout.
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "fastpgn", "analyse", str(src), "--engine", engine,
                               "--format", fmt], stdout=full, stderr=subprocess.PIPE, text=True, env=ENV)
    assert (proc.returncode, proc.stderr) == (2, "fastpgn analyse: cannot write stdout: No space left on device; "
                                                 "0 games written before it\n")
def test_the_pyarrow_writer_writes_the_same_table_in_pyarrows_bytes(tmp_path, capsys):
    """``--parquet-writer pyarrow``: the table of the default writer's file, written by pyarrow alone (its
    own ParquetWriter's bytes, ``to_parquet(..., writer="pyarrow")``'s of the same PGN); a usage error
    with another format."""
    src = first_games(shared(*G2023), 6, tmp_path)
    engine, _ = fake_engine(tmp_path)
    pgn, ours, theirs = tmp_path / "out.pgn", tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    for out, extra in ((pgn, ["--format", "pgn"]), (ours, ["--format", "parquet"]),
                       (theirs, ["--format", "parquet", "--parquet-writer", "pyarrow"])):
        code, err = run([src, "-o", out, "--engine", engine, "-q", *extra], capsys)
        assert code == 0, err
    assert pq.read_table(theirs).equals(pq.read_table(ours)) and pq.read_table(ours).num_rows == 6
    fastpgn.to_parquet(pgn, tmp_path / "ref.parquet", writer="pyarrow")
    assert theirs.read_bytes() == (tmp_path / "ref.parquet").read_bytes() != ours.read_bytes()
    code, err = run([src, "-o", tmp_path / "x.pgn", "--engine", engine, "--parquet-writer", "pyarrow"], capsys)
    assert code == 2 and err.strip().endswith("--parquet-writer pyarrow writes Parquet files: add --format parquet")
