"""Many inputs in one converter run: each input's output byte for byte its own run's, at any -j and in
every format; a damaged or non-PGN input named while the others convert; counts that reconcile per input
and in the total; globs, folders and the positional arguments; a killed run resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard

from fastpgn.cli import main
from fastpgn.convert.converter import Options, OutputError
from fastpgn.convert.many import ManyInputs, expand_inputs
from fastpgn.errors import InputError
from fastpgn.filters import Where
from helpers import ENV, ROOT, chunk_files, shared, stderr_on_a_terminal

LICHESS = ("data", "lichess-db")
GOOD = ["lichess_db_standard_rated_2022-06.head2499.pgn.zst",
        "lichess_db_standard_rated_2021-10.head999.pgn.zst",
        "lichess_db_standard_rated_2013-01.head348.pgn.bz2",
        "lichess_db_standard_rated_2023-02.head15.pgn.zst"]


def corpus(*names: str) -> list[Path]:
    return [shared(*LICHESS, name) for name in names]


def outputs(folder: Path) -> dict[str, bytes]:
    """Every file the converter left in ``folder`` that a user reads: chunks and rejected games."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if ".part_" in p.name or p.name.endswith(".rejected.pgn")}


def alone(inputs: list[Path], tmp_path: Path, *options: str) -> dict[str, bytes]:
    """The outputs of one run per input, each into a folder of its own, gathered."""
    got: dict[str, bytes] = {}
    for i, src in enumerate(inputs):
        out = tmp_path / f"alone-{i}"
        main([str(src), "500", "-o", str(out), "-q", *options])
        got.update(outputs(out))
    return got


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> dict[str, Path]:
    """A real dump cut short (a truncated zstd stream), and a file that is no PGN at all."""
    folder = tmp_path_factory.mktemp("damaged")
    cut = folder / "cut.pgn.zst"
    cut.write_bytes(shared(*LICHESS, GOOD[0]).read_bytes()[:400_000])
    junk = folder / "junk.pgn"
    junk.write_bytes(bytes(range(256)) * 40)
    return {"cut": cut, "junk": junk}


@pytest.mark.parametrize("fmt", ["lines", "csv", "parquet"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_input_is_byte_identical_to_its_own_run(tmp_path, monkeypatch, fmt, jobs):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
        from fastpgn.convert import tables

        # row groups of 64 games: several of every input in the shared encoders' hands at once
        monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 64)
    inputs = corpus(*GOOD)
    out = tmp_path / "many"
    assert main([*map(str, inputs), "500", "-o", str(out), "-j", jobs, "-q", "--format", fmt]) == 0
    expected = alone(inputs, tmp_path, "-j", jobs, "--format", fmt)
    got = outputs(out)
    assert sorted(got) == sorted(expected)
    assert len(got) == 5 + 2 + 1 + 1      # 2499, 999, 348 and 15 games in chunks of 500
    for name, data in expected.items():
        assert got[name] == data, name
    # Each input's finished-run record is its own: --resume then has nothing to do, input by input.
    assert sorted(p.name for p in out.glob(".*.fastpgn-done.json")) == sorted(
        f".{p.name}.fastpgn-done.json" for p in inputs)


def test_any_jobs_and_any_inputs_at_once_give_identical_chunks(tmp_path, damaged):
    inputs = [*corpus(*GOOD), damaged["cut"]]
    seen = []
    for jobs, at_once in ((1, 1), (2, 1), (2, 2), (2, 5), (3, 2)):
        out = tmp_path / f"j{jobs}-{at_once}"
        opts = Options("", 300, output_dir=str(out), jobs=jobs, block_size=150_000)
        list(ManyInputs(list(map(str, inputs)), opts, at_once=at_once).run())
        seen.append(outputs(out))
    assert all(s == seen[0] for s in seen[1:])
    assert "_cut.pgn.zst.rejected.pgn" in seen[0]


def test_counts_reconcile_per_input_and_in_the_total(tmp_path, capsys):
    cases = ROOT / "tests" / "cases"
    mixed = tmp_path / "mixed.pgn"
    mixed.write_bytes((cases / "invalid-move-token.pgn").read_bytes() + (cases / "malformed-clock.pgn").read_bytes())
    inputs = [*map(str, corpus(*GOOD)), str(mixed)]
    opts = Options("", 400, output_dir=str(tmp_path / "lib"), jobs=2, where=Where(speed="blitz"))
    outcomes = {o.input: o for o in ManyInputs(inputs, opts).run()}
    assert sorted(outcomes) == sorted(inputs)
    for name, o in outcomes.items():
        s = o.summary
        assert o.error is None and s is not None, name
        assert s.games_read == s.games_written + s.games_rejected + s.games_filtered, name
        assert s.games_filtered > 0 or name == str(mixed), name
    assert outcomes[str(mixed)].summary.games_rejected == 2
    # The command line: a summary line per input, and a total that is their sum.
    code = main([*inputs, "400", "-o", str(tmp_path / "cli"), "-j", "2", "--speed", "blitz"])
    err = capsys.readouterr().err
    assert code == 0, err
    line = re.compile(r"([\d,]+) games? written, ([\d,]+) rejected, ([\d,]+) filtered out \(of ([\d,]+) read\), "
                      r"([\d,]+) chunks?, ([\d.,]+) MB of PGN")

    def numbers(text: str) -> list[int]:
        match = line.search(text)
        assert match, text
        return [int(g.replace(",", "")) for g in match.groups()[:5]]

    per_input = [numbers(row) for row in err.splitlines() if "written" in row and " inputs: " not in row]
    assert len(per_input) == len(inputs)
    for name, o in outcomes.items():
        s = o.summary
        row = next(r for r in err.splitlines() if r.startswith(f"fastpgn: {name}: ") and "written" in r)
        assert numbers(row) == [s.games_written, s.games_rejected, s.games_filtered, s.games_read, s.chunks]
    total = next(r for r in err.splitlines() if r.startswith(f"fastpgn: {len(inputs)} inputs: "))
    written, rejected, filtered, read, chunks = numbers(total)
    assert [written, rejected, filtered, read, chunks] == [sum(col) for col in zip(*per_input)]
    assert read == written + rejected + filtered
    assert "_mixed.pgn.rejected.pgn" in err


def test_a_damaged_input_is_named_and_the_others_convert(tmp_path, damaged, capsys):
    good = corpus(*GOOD[:2])
    expected = alone(good, tmp_path, "-j", "2")
    out = tmp_path / "out"
    code = main([str(good[0]), str(damaged["cut"]), str(good[1]), "500", "-o", str(out), "-j", "2"])
    err = capsys.readouterr().err
    assert code == 1, err                      # damaged: the games after the damage are lost
    damage = [row for row in err.splitlines() if "truncated" in row]
    assert len(damage) == 1 and str(damaged["cut"]) in damage[0] and "(PGN byte 2621440)" in damage[0], err
    assert "Traceback" not in err
    got = outputs(out)
    for name, data in expected.items():
        assert got[name] == data, name
    assert any(name.startswith("cut.pgn.zst.part_") for name in got)     # its whole games are kept
    assert re.search(r"fastpgn: 3 inputs: .*; 1 failed: .*cut\.pgn\.zst\n", err), err
    # A file that is no PGN at all, and one that is missing: status 2, the highest of the inputs'.
    code = main([str(good[0]), str(damaged["junk"]), str(damaged["cut"]), "500", "-o", str(tmp_path / "o2"),
                 "-j", "2", "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"fastpgn: {damaged['junk']} is not PGN: binary data (PGN byte 0)\n" in err
    assert str(damaged["cut"]) in err and "games written" not in err      # -q: the failures alone
    first = f"{good[0].name}.part_000000.cri.gz"
    assert outputs(tmp_path / "o2")[first] == expected[first]
    assert main([str(good[0]), str(tmp_path / "missing.pgn.zst"), "500", "-o", str(tmp_path / "o3"), "-q"]) == 2
    assert capsys.readouterr().err == f"fastpgn: {tmp_path / 'missing.pgn.zst'}: no such file\n"
    assert not (tmp_path / "o3").exists()      # a missing input stops the run before it starts


def test_stdout_is_one_stream_in_input_order(tmp_path, damaged):
    inputs = [*map(str, corpus(*GOOD[:3]))]

    def stream(*args: str) -> bytes:
        proc = subprocess.run([sys.executable, "-m", "fastpgn", *args, "-o", "-", "-q"], env=ENV, cwd=tmp_path,
                              capture_output=True)
        assert proc.returncode in (0, 1), proc.stderr
        return proc.stdout

    for fmt in ("lines", "csv"):
        whole = stream(*inputs, "-j", "2", "--format", fmt)
        pieces = [stream(src, "--format", fmt) for src in inputs]
        if fmt == "csv":
            header = pieces[0].split(b"\r\n", 1)[0] + b"\r\n"
            assert whole.count(header) == 1      # one header row, atop the stream
            pieces = [pieces[0]] + [p[len(header):] for p in pieces[1:]]
        assert whole == b"".join(pieces), fmt
    # A damaged input in the middle: its whole games, then the next input's.
    proc = subprocess.run([sys.executable, "-m", "fastpgn", inputs[0], str(damaged["cut"]), inputs[1], "-o", "-"],
                          env=ENV, cwd=tmp_path, capture_output=True)
    assert proc.returncode == 1 and proc.stdout.count(b"\n") == 2499 + 1137 + 999, proc.stderr
    assert (tmp_path / "_cut.pgn.zst.rejected.pgn").exists()     # in the current folder, as for one input


def _big(tmp_path: Path, copies: int) -> Path:
    """A plain PGN input of ``copies`` times the 2,499 games, each copy a file of its own name."""
    pgn = zstandard.ZstdDecompressor().stream_reader(shared(*LICHESS, GOOD[0]).read_bytes()).read()
    path = tmp_path / f"big{copies}.pgn"
    path.write_bytes(pgn * copies)
    return path


def _chunks_so_far(folder: Path) -> int:
    total = 0
    for state in folder.glob(".*.fastpgn-state.json"):
        try:
            total += json.loads(state.read_text())["progress"].get("chunk", 0)
        except (ValueError, OSError):
            pass
    return total


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_many_input_run_then_resume_is_identical(tmp_path, sig):
    inputs = [_big(tmp_path, copies) for copies in (3, 4, 5)]
    reference = tmp_path / "reference"
    assert main([*map(str, inputs), "500", "-o", str(reference), "-j", "2", "-q"]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fastpgn", *map(str, inputs), "500", "-o", str(out), "-j", "2", "-q"]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and _chunks_so_far(out) < 4:
        time.sleep(0.005)
    proc.send_signal(sig)
    code = proc.wait(30)
    err = proc.stderr.read().decode()
    if sig == signal.SIGINT and code != 0:
        assert code == 130, err
        assert "interrupted; complete chunks were kept" in err and "Traceback" not in err, err
    assert 0 < len(chunk_files(out)) < len(chunk_files(reference))      # killed mid-way
    for f in chunk_files(out):
        assert f.read_bytes() == (reference / f.name).read_bytes(), f.name     # whole chunks only
    done = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert outputs(out) == outputs(reference)
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.fastpgn-state.json"))
    # Once more: every input is converted already, and each says so.
    again = subprocess.run(cmd[:-1] + ["--resume"], env=ENV, capture_output=True, text=True)
    assert again.returncode == 0 and again.stderr.count("nothing to resume") == 3, again.stderr


def test_folders_and_patterns(tmp_path, capsys):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for src in corpus(*GOOD[:3]):
        (dumps / src.name).write_bytes(src.read_bytes())
    (dumps / "notes.txt").write_text("not an input")
    (dumps / "sub").mkdir()
    (dumps / "sub" / "x.pgn").write_text("[Event \"x\"]\n\n1. e4 *\n")
    names = sorted(p.name for p in corpus(*GOOD[:3]))
    assert [Path(p).name for p in expand_inputs([str(dumps)])] == names
    # Beside its inputs, a run leaves chunks and rejected games: a rerun on the folder takes none of them.
    assert main([str(dumps), "1000", "-q"]) == 0
    (dumps / f"_{names[0]}.rejected.pgn").write_text("% fastpgn rejected game 1 ...\n")
    assert [Path(p).name for p in expand_inputs([str(dumps)])] == names
    assert main([str(dumps), "1000", "-q", "--resume"]) == 0
    # A quoted pattern, expanded here; ** crosses folders; a file named twice is converted once.
    pattern = str(dumps / "*2013*.pgn.*")
    assert [Path(p).name for p in expand_inputs([pattern, str(dumps / names[0])])] == [names[0]]
    assert [Path(p).name for p in expand_inputs([str(dumps / "**" / "*.pgn")])] == ["x.pgn"]
    assert main([str(dumps / "*.pgn.xz"), "1000", "-q"]) == 2
    assert capsys.readouterr().err == f"fastpgn: {dumps / '*.pgn.xz'}: no file matches this pattern\n"


def test_a_parquet_release_folder_stays_one_input(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
    import pyarrow as pa

    release = tmp_path / "release" / "year=2024" / "month=01"
    release.mkdir(parents=True)
    table = pa.table({"Site": ["https://lichess.org/abcdefgh"], "White": ["A"], "Black": ["B"],
                      "Result": ["1-0"], "movetext": ["1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0"]})
    pq.write_table(table, release / "train-00000-of-00001.parquet")
    root = str(tmp_path / "release")
    assert expand_inputs([root]) == [root]
    assert main([root, "10", "-o", str(tmp_path / "out"), "-q"]) == 0
    assert [p.name for p in chunk_files(tmp_path / "out")] == ["release.part_000000.cri.gz"]
    # Beside PGN files, which of the two is meant is not for fastpgn to guess.
    (tmp_path / "release" / "a.pgn").write_text("[Event \"x\"]\n\n1. e4 *\n")
    with pytest.raises(InputError, match="holds both PGN files"):
        expand_inputs([root])
    assert main([root, "10", "-q"]) == 2 and "holds both PGN files" in capsys.readouterr().err


def test_positional_arguments(tmp_path, capsys):
    a, b = map(str, corpus(*GOOD[2:4]))
    reference = tmp_path / "ref"
    assert main([a, b, "100", "-o", str(reference), "-q"]) == 0
    expected = outputs(reference)
    # The original's order, options anywhere, "--" before the inputs: the same run.
    for i, argv in enumerate([["100", a, b], [a, "-o", "{out}", b, "100"], ["-j", "2", "--", a, b, "100"],
                              ["100_000", a, b]]):
        out = tmp_path / f"run{i}"
        argv = [x.replace("{out}", str(out)) for x in argv]
        if "-o" not in argv:
            argv = ["-o", str(out), "-q", *argv]     # before the "--", after which all is an input
        assert main([*argv, "-q"] if "--" not in argv else argv) == 0, argv
        if "100_000" in argv:
            assert len(chunk_files(out)) == 2     # one chunk each
        else:
            assert outputs(out) == expected, argv
    # A file named like a number is a CHUNK_SIZE unless written as a path.
    number = tmp_path / "2024"
    number.write_bytes(Path(b).read_bytes())
    os.chdir(tmp_path)
    try:
        assert main([a, "./2024", "100", "-o", str(tmp_path / "num"), "-q"]) == 0
        assert main([a, "2024", "-o", str(tmp_path / "num2"), "-q"]) == 0      # 2024 games a chunk
    finally:
        os.chdir(ROOT)
    assert len(chunk_files(tmp_path / "num")) == 4 + 1 and len(chunk_files(tmp_path / "num2")) == 1
    with pytest.raises(SystemExit) as stop:
        main([a, b, "-q"])
    assert stop.value.code == 2 and "required: CHUNK_SIZE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([a, b, "0", "-q"])
    assert "CHUNK_SIZE must be at least 1" in capsys.readouterr().err
    # A mistyped CHUNK_SIZE is named as one, not taken for a second input (nor "-5" for an option)
    for typo, says in (("100,000", "'100,000', is neither a file nor a whole number"),
                       ("1e5", "'1e5', is neither a file nor a whole number"), ("-5", "at least 1")):
        with pytest.raises(SystemExit) as stop:
            main([a, typo, "-o", str(tmp_path / "typo"), "-q"])
        assert stop.value.code == 2 and says in capsys.readouterr().err, typo
    assert main([a, "-", "100", "-q"]) == 2
    assert "stdin" in capsys.readouterr().err
    help_text = subprocess.run([sys.executable, "-m", "fastpgn", "--help"], env=ENV, capture_output=True,
                               text=True).stdout
    assert "INPUT [INPUT ...] [CHUNK_SIZE]" in help_text and "the last is CHUNK_SIZE" in help_text


def test_two_inputs_of_one_name_into_one_folder_are_refused(tmp_path, capsys):
    src = shared(*LICHESS, GOOD[3])
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        (tmp_path / d / src.name).write_bytes(src.read_bytes())
    both = [str(tmp_path / "x" / src.name), str(tmp_path / "y" / src.name)]
    assert main([*both, "10", "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "would write the same files" in err and not (tmp_path / "out").exists()
    with pytest.raises(OutputError):
        ManyInputs(both, Options("", 10, output_dir=str(tmp_path / "out")))
    # Beside their inputs (no -o), their folders differ: both convert.
    assert main([*both, "10", "-q"]) == 0
    assert len(chunk_files(tmp_path / "x")) == len(chunk_files(tmp_path / "y")) == 2


def test_limit_is_per_input(tmp_path, capsys):
    inputs = [*map(str, corpus(*GOOD[:3]))]
    assert main([*inputs, "40", "--limit", "100", "-o", str(tmp_path), "-j", "2"]) == 0
    err = capsys.readouterr().err
    assert err.count("100 games written") == 3 and "3 inputs: 300 games written" in err, err
    assert len(chunk_files(tmp_path)) == 3 * 3      # 40 + 40 + 20 games, for each input
    for src in inputs:
        assert (tmp_path / f"{Path(src).name}.part_000002.cri.gz").exists()


def test_progress_bar_and_summaries_on_a_terminal(tmp_path):

    inputs = [*map(str, corpus(*GOOD[:2]))]
    seen = stderr_on_a_terminal([sys.executable, "-m", "fastpgn", *inputs, "1000", "-o", str(tmp_path)])
    # One bar for the inputs together (the summary lines are written above it), then the total.
    assert "fastpgn: 100%" in seen and "8 MB of PGN" in seen, seen
    for src in inputs:
        assert f"fastpgn: {src}: " in seen
    assert seen.rstrip().endswith("2 inputs at a time"), seen


def test_a_bad_option_stops_the_run_before_it_starts(tmp_path, capsys):
    a, b = map(str, corpus(*GOOD[2:4]))
    out = tmp_path / "out"
    assert main([a, b, "10", "-o", str(out), "--openings-map", str(tmp_path / "no-map.txt"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "no-map.txt" in err and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert main([a, b, "-o", "-", "--format", "parquet", "-q"]) == 2
    assert "Parquet cannot be written to stdout" in capsys.readouterr().err
    assert not out.exists() or not any(".part_" in p.name for p in out.iterdir())
