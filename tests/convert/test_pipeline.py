"""The dump converter end to end: chunks, every core, damage, interruption and --resume."""

from __future__ import annotations

import bz2
import gzip
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
from fastpgn.convert.converter import Converter, Options
from fastpgn.errors import PGNSyntaxError
from fastpgn.oneliner import iter_lines
from fastpgn.reader import read_lines
from helpers import ENV, ROOT, all_lines, big_input, chunk_files, shared, signal_after_chunks, stderr_on_a_terminal


def test_an_empty_folder_says_it_holds_no_pgn_files(tmp_path, capsys):
    """A folder with no PGN file in it was "a folder, not a PGN file": it names what was looked for."""
    (tmp_path / "notes.txt").write_text("x")
    assert main([str(tmp_path), "10", "-o", str(tmp_path / "o"), "-q"]) == 2
    assert capsys.readouterr().err == (f"fastpgn: {tmp_path}: a folder holding no PGN files (none named *.pgn, "
                                       "*.pgn.zst, *.pgn.bz2, *.pgn.gz) and no Parquet files\n")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("options,message", [
    (["--format", "parquet", "--compression", "zst"],
     "--compression zst compresses lines, csv and pgn chunks; Parquet is compressed inside (zstd): "
     "leave --compression out"),
    (["--format", "parquet", "--compression", "none"],
     "--compression none compresses lines, csv and pgn chunks; Parquet is compressed inside (zstd): "
     "leave --compression out"),
    (["--inputs-at-once", "4"],
     "--inputs-at-once 4 says how many of several inputs are converted at a time, and {dump} is the only input"),
])
def test_an_option_that_would_do_nothing_is_refused(tmp_path, dump, capsys, options, message):
    """Options that change nothing in this run were taken silently: one line, exit 2, nothing written."""
    out = tmp_path / "o"
    assert _exit([str(dump), "100", "-o", str(out), *options]) == 2
    assert capsys.readouterr() == ("", f"fastpgn: {message.format(dump=dump)}\n")
    assert not out.exists()


LICHESS = ["lichess_db_standard_rated_2013-01.head348.pgn.zst",
           "lichess_db_standard_rated_2013-01.head348.pgn.bz2",
           "lichess_db_standard_rated_2013-01.slice5000.pgn.zst",
           "lichess_db_standard_rated_2021-10.head999.pgn.zst",
           "lichess_db_standard_rated_2022-06.head2499.pgn.zst",
           "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2",
           "lichess_db_standard_rated_2023-02.head15.pgn.zst"]


def run(tmp_path: Path, src, chunk: int, jobs: int = 1, block_size: int = 1 << 22, **kw):
    out = tmp_path / f"out-j{jobs}-{chunk}-{block_size}"
    opts = Options(input=str(src), chunk_size=chunk, output_dir=str(out), jobs=jobs,
                   block_size=block_size, **kw)
    return Converter(opts).run(), out


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    return path


def test_any_jobs_gives_identical_chunks(tmp_path, dump):
    s1, out1 = run(tmp_path, dump, 300, jobs=1, block_size=200_000)
    s2, out2 = run(tmp_path, dump, 300, jobs=2, block_size=200_000)
    files1, files2 = chunk_files(out1), chunk_files(out2)
    assert [f.name for f in files1] == [f.name for f in files2]
    assert len(files1) == 9                      # 2499 games / 300, no empty trailing chunk
    for a, b in zip(files1, files2):
        assert a.read_bytes() == b.read_bytes()
    assert s1.games_written == s2.games_written == 2499
    # Chunks hold exactly CHUNK_SIZE games and read back in order, whole.
    assert [sum(1 for _ in iter_lines(f)) for f in files1] == [300] * 8 + [99]
    assert all_lines(out1) == list(read_lines(dump))


def test_chunks_read_whole_with_gzip_command_and_module(tmp_path, dump):
    _, out = run(tmp_path, dump, 1000, block_size=150_000)
    expected = list(read_lines(dump))
    got = []
    for f in chunk_files(out):
        assert f.name.endswith(".cri.gz")
        text = subprocess.run(["gzip", "-dc", str(f)], capture_output=True, check=True).stdout.decode()
        assert text == gzip.decompress(f.read_bytes()).decode()
        got += text.splitlines()
    assert got == expected


@pytest.mark.parametrize("chunk", [1, 15, 16, 10_000])
def test_chunk_size_edges(tmp_path, chunk):
    src = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    summary, out = run(tmp_path, src, chunk, compression="zst")
    files = chunk_files(out)
    assert len(files) == -(-15 // chunk)
    assert summary.chunks == len(files) and summary.games_written == 15
    assert all_lines(out) == list(read_lines(src))
    assert files[0].name == "lichess_db_standard_rated_2023-02.head15.pgn.zst.part_000000.cri.zst"


@pytest.mark.parametrize("name", LICHESS)
def test_counts_reconcile_on_the_real_corpus(tmp_path, name):
    summary, out = run(tmp_path, shared("data", "lichess-db", name), 1000, jobs=2)
    assert summary.games_read == summary.games_written + summary.games_rejected
    if "truncated" in name:
        # It ends in the four tags of a game cut off before its moves: damage, and that game kept.
        assert summary.damage and "inside the tags of its last game" in summary.damage
        assert (summary.games_written, summary.games_rejected) == (2499, 1)
    else:
        assert summary.damage is None and summary.games_rejected == 0
    assert sum(1 for _ in all_lines(out)) == summary.games_written


def test_rejected_games_are_kept_beside_the_chunks(tmp_path, capsys):
    cases = ROOT / "tests" / "cases"
    src = tmp_path / "mixed.pgn"
    src.write_bytes((cases / "invalid-move-token.pgn").read_bytes() + (cases / "malformed-clock.pgn").read_bytes())
    code = main([str(src), "10", "-o", str(tmp_path / "o")])
    # Kept and counted, the rejects do not fail the run (a month's dump with one odd game still exits 0).
    assert code == 0
    err = capsys.readouterr().err
    assert "2 games written, 2 rejected (of 4 read)" in err and "_mixed.pgn.rejected.pgn" in err
    rejected = (tmp_path / "o" / "_mixed.pgn.rejected.pgn").read_text()
    assert rejected.count("% fastpgn rejected game") == 2
    assert "game 1 at PGN byte" in rejected and "invalid move token 'hello'" in rejected
    assert "game 3 at PGN byte" in rejected and "malformed clock" in rejected
    assert "1. e4 hello 1-0" in rejected
    assert sum(1 for _ in all_lines(tmp_path / "o")) == 2
    # --errors raise stops at the first bad game.
    assert main([str(src), "10", "-o", str(tmp_path / "r"), "-q", "--errors", "raise"]) == 1


def _damaged(tmp_path, dump) -> dict[str, Path]:
    pgn = zstandard.ZstdDecompressor().decompressobj().decompress(dump.read_bytes())
    blobs = {
        "cut.pgn.zst": zstandard.ZstdCompressor().compress(pgn),
        "cut.pgn.bz2": bz2.compress(pgn),
        "cut.pgn.gz": gzip.compress(pgn),
    }
    paths = {}
    for name, blob in blobs.items():
        path = tmp_path / name
        path.write_bytes(blob[: int(len(blob) * 0.6)])
        paths[name] = path
    corrupt = bytearray(blobs["cut.pgn.gz"])
    corrupt[len(corrupt) // 2] ^= 0x55
    (tmp_path / "corrupt.pgn.gz").write_bytes(bytes(corrupt))
    paths["corrupt.pgn.gz"] = tmp_path / "corrupt.pgn.gz"
    return paths


def test_damaged_inputs_keep_every_whole_game_before_the_damage(tmp_path, dump, capsys):
    reference = list(read_lines(dump))
    for name, path in _damaged(tmp_path, dump).items():
        out = tmp_path / ("o-" + name)
        code = main([str(path), "500", "-o", str(out), "-j", "2"])
        err = capsys.readouterr().err
        assert code == 1, name
        assert "byte" in err and ("truncated" in err or "corrupt" in err), err
        lines = all_lines(out)
        assert 0 < len(lines) < 2499, name
        assert lines == reference[: len(lines)], name
        assert not list(out.glob("*.tmp"))


def test_zstd_cut_inside_its_first_block_is_reported_with_nothing_written(tmp_path, dump, capsys):
    """Too short to decode a single block: no games to keep, one line naming the damage at byte 0."""
    path = tmp_path / "short.pgn.zst"
    path.write_bytes(dump.read_bytes()[:2000])
    code = main([str(path), "10", "-o", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    # damage, as damage after good games is (exit 1: the one rule), not an input that is not PGN (2)
    assert code == 1 and "truncated zst" in err and "(PGN byte 0)" in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not [p for p in (tmp_path / "o").iterdir() if ".part_" in p.name]


@pytest.mark.parametrize("content,message", [
    (b"", "no PGN games"),
    (os.urandom(5000).replace(b"[", b"x") + b"\x00", "not PGN"),
])
def test_empty_or_binary_input_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "in.pgn"
    path.write_bytes(content)
    code = main([str(path), "10", "-o", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_missing_file_folder_and_unwritable_output_exit_2(tmp_path, dump, capsys):
    assert main([str(tmp_path / "missing.pgn.zst"), "10", "-q"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([str(tmp_path), "10", "-q"]) == 2
    assert "folder" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main([str(dump), "10", "-o", str(blocker / "sub"), "-q"]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main([str(dump), "10", "-o", str(blocker), "-q"]) == 2     # -o names a file
    assert capsys.readouterr().err == (f"fastpgn: cannot write to {blocker}: it is a file, "
                                       "and -o names the folder of the output\n")


def test_a_full_disk_keeps_whole_chunks_and_resume_finishes(tmp_path):
    """A write that fails mid-chunk, as on a full disk: a clear error, no partial chunk, --resume ends whole.

    The disk is made full with the file-size limit (RLIMIT_FSIZE): Python
    ignores SIGXFSZ, so a write past the limit fails with an OSError as a
    write to a full disk does. Short 2013 games first make chunk 0 fit under
    the limit and chunk 1 not.
    """
    import resource

    lichess = shared("data", "lichess-db")
    src = tmp_path / "mix.pgn"
    src.write_bytes(b"".join(zstandard.ZstdDecompressor().stream_reader(p.read_bytes()).read() for p in (
        lichess / "lichess_db_standard_rated_2013-01.head348.pgn.zst",
        lichess / "lichess_db_standard_rated_2022-06.head2499.pgn.zst")))
    reference = tmp_path / "reference"
    assert main([str(src), "348", "-o", str(reference), "-q"]) == 0
    sizes = [f.stat().st_size for f in chunk_files(reference)]
    room = (sizes[0] + sizes[1]) // 2
    assert sizes[0] < room < sizes[1]

    def full_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fastpgn", str(src), "348", "-o", str(out), "-j", "2"]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, preexec_fn=full_disk)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "fastpgn: cannot write output: File too large" in err and "Traceback" not in err
    assert [f.name for f in chunk_files(out)] == [chunk_files(reference)[0].name]
    assert chunk_files(out)[0].read_bytes() == chunk_files(reference)[0].read_bytes()
    assert not list(out.glob("*.tmp"))
    # Space freed: the run goes on from chunk 1 and ends as an uninterrupted run.
    proc = subprocess.run(cmd + ["--resume", "-q"], env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(reference)]

    # Blocks smaller than the file buffer: the failing write is a flush, and closing fails again.
    small = tmp_path / "small"
    script = ("import sys\nfrom fastpgn.convert.converter import Converter, Options\n"
              f"opts = Options({str(src)!r}, 348, output_dir={str(small)!r}, jobs=2, block_size=3000)\n"
              "try:\n    Converter(opts).run()\nexcept OSError as exc:\n    sys.exit(f'OSError {exc.strerror}')\n")
    proc = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, preexec_fn=full_disk)
    assert proc.returncode == 1 and proc.stderr.decode() == "OSError File too large\n", proc.stderr
    assert [f.name for f in chunk_files(small)] == [chunk_files(reference)[0].name]
    assert (gzip.decompress(chunk_files(small)[0].read_bytes())
            == gzip.decompress(chunk_files(reference)[0].read_bytes()))
    assert not list(small.glob("*.tmp"))


def test_without_the_fast_extra_the_same_lines(tmp_path, dump):
    """Installed without [fast] (no ISA-L, no indexed_bzip2): zlib and bz2 do the work, the lines are the same."""
    script = ("import sys\n"
              "for name in ('isal', 'isal.igzip', 'isal.isal_zlib', 'indexed_bzip2'):\n"
              "    sys.modules[name] = None\n"
              "from fastpgn.convert import converter as pipeline\nfrom fastpgn.io import source\n"
              "assert pipeline.GZIP_LIBRARY == 'zlib' and source._ibz2 is None\n"
              "from fastpgn.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    pgn = zstandard.ZstdDecompressor().stream_reader(dump.read_bytes()).read()
    inputs = {"zst": dump, "gz": tmp_path / "in.pgn.gz", "bz2": tmp_path / "in.pgn.bz2"}
    inputs["gz"].write_bytes(gzip.compress(pgn))
    inputs["bz2"].write_bytes(bz2.compress(pgn))
    expected = list(read_lines(dump))
    for kind, src in inputs.items():
        out = tmp_path / kind
        proc = subprocess.run([sys.executable, "-c", script, str(src), "1000", "-o", str(out), "-j", "2", "-q"],
                              env=ENV, capture_output=True)
        assert proc.returncode == 0, proc.stderr
        assert all_lines(out) == expected, kind
        assert len(chunk_files(out)) == 3


def test_summary_on_stderr_unless_quiet(tmp_path, dump, capsys):
    import fastpgn

    assert main([str(dump), "1000", "-o", str(tmp_path / "a"), "-j", "2"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("fastpgn: 2,499 games written, 0 rejected (of 2,499 read), 3 chunks, 5.7 MB of PGN, ")
    assert f"MB/s, backend {fastpgn.BACKEND}, 2 workers\n" in err
    assert main([str(dump), "3000", "-o", str(tmp_path / "c"), "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert ", 1 chunk, " in err and ", 1 worker\n" in err                  # not "1 chunks", "1 workers"
    assert main([str(dump), "1000", "-o", str(tmp_path / "b"), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_progress_bar_on_a_terminal(tmp_path, dump):
    cmd = [sys.executable, "-m", "fastpgn", str(dump), "1000", "-o", str(tmp_path / "a")]
    seen = stderr_on_a_terminal(cmd)
    # tqdm's bar: the input file read (for the ETA), then the PGN read and its rate in the summary's unit.
    assert "fastpgn:   0%" in seen and "fastpgn: 100%" in seen, seen
    assert re.search(r"\| 6 MB of PGN, [\d.,]+ MB/s, 2,499 games, 0 rejected \[", seen), seen
    assert "MiB" not in seen and "MB/s]" not in seen, seen          # no binary units, no second rate
    assert "2,499 games written" in seen and " MB of PGN, " in seen
    assert stderr_on_a_terminal(cmd[:-2] + ["-o", str(tmp_path / "b"), "-q"]) == ""


def test_a_count_of_one_is_singular(tmp_path, capsys):
    """"1 games", "1 inputs at a time": the summaries, the progress bar and the explorer say "1 game"."""
    from fastpgn.cli import _Progress

    src = tmp_path / "one.pgn"
    src.write_text('[Event "x"]\n\n1. e4 *\n\n')
    assert main([str(src), "10", "-o", str(tmp_path / "o"), "-j", "1"]) == 0
    assert capsys.readouterr().err.startswith("fastpgn: 1 game written, 0 rejected (of 1 read), 1 chunk, ")
    other = tmp_path / "two.pgn"
    other.write_text('[Event "y"]\n\n1. d4 *\n\n')
    assert main([str(src), str(other), "10", "-o", str(tmp_path / "m"), "-j", "1", "--inputs-at-once", "1"]) == 0
    err = capsys.readouterr().err
    assert "fastpgn: 2 inputs: 2 games written, 0 rejected (of 2 read), 2 chunks, " in err
    assert ", 1 worker, 1 input at a time" in err
    assert main(["explorer", str(src), "-o", str(tmp_path / "t.parquet"), "--max-plies", "1", "--every-game"]) == 0
    assert capsys.readouterr().err.startswith(
        "explorer: 1 game read from PGN (1 converted, 0 rejected, 0 filtered out), 1 in the tree, 0 without "
        "positions (a variant or an illegal move); 1 row of the first 1 ply to ")
    bar = _Progress(None)
    bar(10, 100, 1, 0)
    assert bar.bar.desc.endswith(", 1 game, 0 rejected"), bar.bar.desc
    bar.close()


def test_stdin_and_chunk_size_first_like_the_original(tmp_path, dump):
    out = tmp_path / "s"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "fastpgn", "-", "1_000", "-q"], cwd=out, env=ENV,
                          stdin=open(dump, "rb"), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert [f.name for f in chunk_files(out)] == [f"stdin.part_{i:06d}.cri.gz" for i in range(3)]
    assert all_lines(out) == list(read_lines(dump))
    assert main(["1_000", str(dump), "-o", str(tmp_path / "swapped"), "-q"]) == 0
    assert [f.read_bytes() for f in chunk_files(tmp_path / "swapped")] == \
           [f.read_bytes() for f in chunk_files(out)]


def test_limit(tmp_path, dump):
    summary, out = run(tmp_path, dump, 100, limit=250, block_size=100_000)
    assert summary.games_written == 250
    assert all_lines(out) == list(read_lines(dump))[:250]


@pytest.mark.parametrize("where", [None, {"min_elo": 2000}])
def test_limit_counts_the_bytes_up_to_the_last_game_read(tmp_path, dump, where):
    """With --limit the summary gave the MB of the whole file (the reader reads ahead): the bytes up to the
    end of the last game read, the start of the next one."""
    from fastpgn.reader import read_games

    games = list(read_games(dump))
    for jobs, block_size in ((1, 1 << 22), (1, 100_000), (2, 100_000)):
        summary, _ = run(tmp_path, dump, 100, jobs, limit=30, block_size=block_size, where=where)
        assert summary.games_written == 30
        assert summary.bytes_in == games[summary.games_read].offset, (jobs, block_size)
        assert summary.bytes_in < dump.stat().st_size


@pytest.mark.parametrize("chunks_done", [1, 5])
def test_interrupt_then_resume_is_identical(tmp_path, dump, monkeypatch, chunks_done):
    src = big_input(tmp_path, dump)
    full, out_full = run(tmp_path, src, 700, block_size=300_000)
    out = tmp_path / "resumed"
    calls = {"n": 0}
    from fastpgn.convert import converter as pipeline

    original = pipeline.ChunkFiles.close

    def close_then_die(self):
        original(self)
        calls["n"] += 1
        if calls["n"] == chunks_done:
            raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ChunkFiles, "close", close_then_die)
    opts = Options(input=str(src), chunk_size=700, output_dir=str(out), jobs=1, block_size=300_000)
    with pytest.raises(KeyboardInterrupt):
        Converter(opts).run()
    monkeypatch.setattr(pipeline.ChunkFiles, "close", original)
    assert len(chunk_files(out)) == chunks_done and not list(out.glob("*.tmp"))
    opts.resume = True
    summary = Converter(opts).run()
    # Killed between the rename and the state update: the last chunk is redone, byte for byte (the
    # first chunk too: the run's record exists before any chunk does).
    assert summary.resumed_from_chunk == chunks_done - 1
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(out_full)]
    assert summary.games_written == full.games_written == 4 * 2499


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_process_then_resume_is_identical(tmp_path, dump, sig):
    src = big_input(tmp_path, dump, copies=6)
    reference = tmp_path / "reference"
    assert main([str(src), "500", "-o", str(reference), "-j", "2", "-q"]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fastpgn", str(src), "500", "-o", str(out), "-j", "2", "-q"]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    code = signal_after_chunks(proc, out / ".big.pgn.fastpgn-state.json", 3, sig)
    if sig == signal.SIGINT and code != 0:
        assert code == 130
        err = proc.stderr.read().decode()
        assert "interrupted; complete chunks were kept" in err and "Traceback" not in err, err
    for f in chunk_files(out):
        # Whatever the moment of death (or none, if the run was done first), a
        # file under a final name is a whole chunk: the uninterrupted run's.
        assert f.read_bytes() == (reference / f.name).read_bytes()
    proc = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert [f.name for f in chunk_files(out)] == [f.name for f in chunk_files(reference)]
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(reference)]
    assert not list(out.glob("*.tmp"))


def test_resume_state_round_trip(tmp_path):
    from fastpgn.convert.resume import ResumeState, Tally
    from fastpgn.errors import InputError

    options = {"version": 1, "input": "x.pgn", "chunk_size": 700}
    path = tmp_path / ".x.pgn.fastpgn-state.json"
    before, after = Tally(3470, 2, 700, 9), Tally(3562, 3, 1100, 9)
    # A chunk boundary inside a block: resume at the block, its first 40 games skipped ...
    inside = ResumeState.checkpoint(chunk=5, games_written=3500, start=1000, end=2000, lines_done=40, count=90,
                                    before=before, after=after)
    inside.save(path, options)
    assert json.loads(path.read_text())["progress"] == {
        "games_read": 3470, "games_rejected": 2, "rejects_size": 700, "games_filtered": 9, "chunk": 5,
        "block_offset": 1000, "skip_lines": 40, "games_written": 3500}
    assert ResumeState.load(options, tmp_path / "absent.json", path) == inside
    # ... at a block's end: resume at the next block, with the counts after it.
    end = ResumeState.checkpoint(chunk=5, games_written=3550, start=1000, end=2000, lines_done=90, count=90,
                                 before=before, after=after)
    assert (end.block_offset, end.skip_lines, end.games_read, end.rejects_size) == (2000, 0, 3562, 1100)
    # A finished run's record holds the totals only.
    done = ResumeState(chunk=6, games_read=4000, games_written=3988, games_rejected=3, games_filtered=9,
                       complete=True)
    done.save(path, options)
    assert json.loads(path.read_text())["progress"] == {
        "complete": True, "chunk": 6, "games_read": 4000, "games_written": 3988, "games_rejected": 3,
        "games_filtered": 9}
    assert ResumeState.load(options, path) == done
    assert ResumeState.load(options, tmp_path / "absent.json") is None
    with pytest.raises(InputError, match=r"other options or from another input \(CHUNK_SIZE 700 then, 100 now\)"):
        ResumeState.load(dict(options, chunk_size=100), path)
    assert not list(tmp_path.glob("*.tmp"))


# The state file of the run below as the converter wrote it before its resume state became a class,
# interrupted after chunk 7 (the rejected game among the chunks already written): it must still resume.
EARLIER_STATE = """{
 "options": {
  "version": 1,
  "input": "big.pgn",
  "input_size": INPUT_SIZE,
  "chunk_size": 700,
  "compression": "gz",
  "limit": null,
  "openings_map": null,
  "validate": false,
  "uci": false,
  "block_size": 300000,
  "gzip": "GZIP"
 },
 "progress": {
  "games_read": 5524,
  "games_rejected": 1,
  "rejects_size": 394,
  "games_filtered": 0,
  "chunk": 8,
  "block_offset": 12600966,
  "skip_lines": 77,
  "games_written": 5600
 }
}"""


@pytest.mark.parametrize("version", ["with filters", "before filters"])
def test_a_state_file_of_an_earlier_version_resumes(tmp_path, dump, version):
    from fastpgn.convert import converter as pipeline

    pgn = zstandard.ZstdDecompressor().decompressobj().decompress(dump.read_bytes())
    src = tmp_path / "big.pgn"
    src.write_bytes(pgn * 2 + (ROOT / "tests" / "cases" / "invalid-move-token.pgn").read_bytes() + pgn * 2)
    reference, ref_out = run(tmp_path, src, 700, block_size=300_000)
    out = tmp_path / "resumed"
    out.mkdir()
    for f in chunk_files(ref_out)[:8]:      # the chunks the interrupted run completed
        (out / f.name).write_bytes(f.read_bytes())
    rejects = (ref_out / "_big.pgn.rejected.pgn").read_bytes()
    assert len(rejects) == 394
    # The interrupted run had rejected a game after its last checkpoint too: resuming drops it. (An
    # earlier version's names: no "_" and "." in front.)
    (out / "big.pgn.rejected.pgn").write_bytes(rejects + b"% fastpgn rejected game 9000 at PGN byte 1: x\n*\n\n")
    state = (EARLIER_STATE.replace("INPUT_SIZE", str(src.stat().st_size))
             .replace("GZIP", f"{pipeline.GZIP_LIBRARY}-{pipeline.GZIP_LEVEL}"))
    if version == "before filters":
        state = state.replace('  "games_filtered": 0,\n', "")
    (out / "big.pgn.fastpgn-state.json").write_text(state)
    summary = Converter(Options(input=str(src), chunk_size=700, output_dir=str(out), jobs=1, block_size=300_000,
                                resume=True)).run()
    assert summary.resumed_from_chunk == 8
    assert (summary.games_read, summary.games_written, summary.games_rejected) == (
        reference.games_read, reference.games_written, reference.games_rejected) == (4 * 2499 + 2, 4 * 2499 + 1, 1)
    assert [f.name for f in chunk_files(out)] == [f.name for f in chunk_files(ref_out)]
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref_out)]
    assert (out / "_big.pgn.rejected.pgn").read_bytes() == rejects
    assert not (out / ".big.pgn.fastpgn-state.json").exists()
    assert not (out / "big.pgn.rejected.pgn").exists() and not (out / "big.pgn.fastpgn-state.json").exists()


def test_a_resume_whose_rejected_games_file_was_removed_stops_with_a_reason(tmp_path, dump, monkeypatch):
    from fastpgn.convert import converter as pipeline

    src = tmp_path / "big.pgn"
    pgn = zstandard.ZstdDecompressor().decompressobj().decompress(dump.read_bytes())
    src.write_bytes((ROOT / "tests" / "cases" / "invalid-move-token.pgn").read_bytes() + pgn * 2)
    out = tmp_path / "out"
    opts = Options(input=str(src), chunk_size=700, output_dir=str(out), jobs=1, block_size=300_000)
    original = pipeline.ChunkFiles.close
    closed = []

    def close_then_die(self):
        original(self)
        closed.append(self)
        if len(closed) == 3:        # (a checkpoint after the first block counts the rejected game)
            raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ChunkFiles, "close", close_then_die)
    with pytest.raises(KeyboardInterrupt):
        Converter(opts).run()
    monkeypatch.setattr(pipeline.ChunkFiles, "close", original)
    (out / "_big.pgn.rejected.pgn").unlink()
    opts.resume = True
    with pytest.raises(pipeline.OutputError, match="^cannot resume: .*_big.pgn.rejected.pgn holds 0 bytes where "
                                                   "the interrupted run had written [0-9]+; .* --overwrite"):
        Converter(opts).run()
    assert not (out / "_big.pgn.rejected.pgn").exists()       # not made up of zeros


def test_validate_rejects_illegal_games_and_uci_writes_uci(tmp_path):
    from fastpgn import board

    good = (ROOT / "tests" / "cases" / "mate-with-evals.pgn").read_bytes()
    bad = good.replace(b"4. Qxf7#", b"4. Qxf8#").replace(b"CASE0001", b"BAD00001")
    src = tmp_path / "v.pgn"
    src.write_bytes(good + bad)
    assert main([str(src), "10", "-o", str(tmp_path / "v"), "-q", "--validate"]) == 0
    lines = all_lines(tmp_path / "v")
    assert len(lines) == 1 and lines[0].split("\u2502")[19] == "e4 e5 Qh5 Nc6 Bc4 Nf6?? Qxf7#"
    rejected = (tmp_path / "v" / "_v.pgn.rejected.pgn").read_text()
    assert "game 2" in rejected and "Qxf8#" in rejected
    assert main([str(src), "10", "-o", str(tmp_path / "u"), "-q", "--uci", "-j", "2"]) == 0
    fields = all_lines(tmp_path / "u")[0].split("\u2502")
    assert fields[19] == board.san_to_uci("e4 e5 Qh5 Nc6 Bc4 Nf6?? Qxf7#") == "e2e4 e7e5 d1h5 b8c6 f1c4 g8f6 h5f7"
    assert fields[5] == "Y" and fields[8] == "7"   # mate and plies still come from the SAN


@pytest.mark.parametrize("flag", ["validate", "uci"])
def test_validated_runs_are_identical_for_any_jobs(tmp_path, dump, flag):
    """--validate and --uci on real games with illegal and FEN games among them: -j 1 and -j 2 agree."""
    from concurrent.futures import ThreadPoolExecutor

    from fastpgn import scan as _scan

    data = zstandard.ZstdDecompressor().stream_reader(dump.read_bytes()).read()
    extra = (b'[Event "illegal"]\n\n1. e4 e5 2. Ke3 *\n\n'
             b'[Event "from a FEN"]\n[FEN "8/8/8/8/8/8/8/K6k w - - 0 1"]\n[SetUp "1"]\n\n1. Kb1 Kg1 *\n\n')
    cut = data.index(b"[Event ", len(data) // 2)
    src = tmp_path / "mixed.pgn"
    src.write_bytes(data[:cut] + extra + data[cut:] + b"\n" + extra)
    runs = [run(tmp_path, src, 700, jobs=jobs, block_size=150_000, **{flag: True}) for jobs in (1, 2)]
    (s1, out1), (s2, out2) = runs
    assert s1.games_read == s2.games_read == 2499 + 4
    assert s1.games_rejected == s2.games_rejected == 2
    assert [f.read_bytes() for f in chunk_files(out1)] == [f.read_bytes() for f in chunk_files(out2)]
    assert (out1 / "_mixed.pgn.rejected.pgn").read_bytes() == (out2 / "_mixed.pgn.rejected.pgn").read_bytes()
    lines = all_lines(out1)
    unvalidated = [line for line in read_lines(src) if line.split("\u2502")[19] != "e4 e5 Ke3"]
    assert len(lines) == len(unvalidated) == 2499 + 2
    if flag == "validate":
        assert lines == unvalidated
    else:
        from fastpgn import board

        sans, ucis = [line.split("\u2502")[19] for line in unvalidated], [line.split("\u2502")[19] for line in lines]
        assert ucis[:50] == [board.san_to_uci(moves) for moves in sans[:50]]
        assert ucis[-1] == "a1b1 h1g1"   # the FEN game: UCI from its own start
    # the compiled kernel replays without the GIL, so its workers are threads (no block copied to a process)
    converter = Converter(Options(input=str(src), chunk_size=700, output_dir=str(tmp_path / "p"), jobs=2,
                                  **{flag: True}))
    pool = converter._pool(None)
    try:
        assert isinstance(pool, ThreadPoolExecutor) == (_scan.BACKEND == "cython")
    finally:
        pool.shutdown()


def _fifo_fed_with(tmp_path: Path, data: bytes) -> Path:
    """A named pipe that a background thread fills with ``data`` (what ``<(zstdcat dump)`` gives)."""
    import threading

    fifo = tmp_path / "feed"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return fifo


def test_a_named_pipe_converts_like_the_file(tmp_path, dump):
    expected = list(read_lines(dump))
    fifo = _fifo_fed_with(tmp_path, dump.read_bytes())
    work = tmp_path / "cwd"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "fastpgn", str(fifo), "1000", "-j", "1"], cwd=work,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    # No folder of its own beside a pipe: the chunks go to the current folder, named like stdin's.
    assert [f.name for f in chunk_files(work)] == [f"stdin.part_{i:06d}.cri.gz" for i in range(3)]
    assert all_lines(work) == expected


def test_worker_processes_do_not_outlive_a_killed_converter(tmp_path, dump):
    """SIGKILL (or the OOM killer) leaves the pool no time to shut down; its workers must still go."""
    src = big_input(tmp_path, dump, copies=10)
    out = tmp_path / "out"
    # The pure backend holds the GIL, so its workers are processes (the compiled one uses threads);
    # --validate slows the run enough for the workers to be seen
    cmd = [sys.executable, "-m", "fastpgn", str(src), "500", "-o", str(out), "-j", "2", "-q", "--validate"]
    proc = subprocess.Popen(cmd, env={**ENV, "FASTPGN_IMPLEMENTATION": "python"}, stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and len(workers) < 2:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == proc.pid:
                    workers.add(int(entry.name))
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before its workers could be seen"
    proc.kill()
    proc.wait(30)
    assert len(workers) == 2
    deadline = time.time() + 10
    while time.time() < deadline and any(Path(f"/proc/{pid}").exists() for pid in workers):
        time.sleep(0.1)
    alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()
             and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]]
    assert alive == [], "worker processes outlived the killed converter"


def _converter_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith("fastpgn")]


def test_converter_threads_end_with_the_run_and_with_a_failed_one(tmp_path, dump):
    """A program that converts many files must not gather reader, writer or worker threads."""
    assert _converter_threads() == []
    run(tmp_path, dump, 700, jobs=2, block_size=300_000)
    assert _converter_threads() == []
    cases = ROOT / "tests" / "cases"
    bad = tmp_path / "bad.pgn"
    bad.write_bytes(zstandard.ZstdDecompressor().stream_reader(dump.read_bytes()).read()
                    + (cases / "invalid-move-token.pgn").read_bytes())
    with pytest.raises(PGNSyntaxError):
        run(tmp_path, bad, 700, jobs=2, block_size=300_000, errors="raise")
    assert _converter_threads() == []
    summary, _ = run(tmp_path, bad, 700, jobs=2, block_size=300_000, limit=10, overwrite=True)
    assert summary.games_written == 10 and _converter_threads() == []


def test_read_ahead_thread_hands_over_the_blocks_then_the_error():
    from fastpgn.io.ahead import ReadAhead

    def blocks():
        yield "block 0"
        yield "block 1"
        raise OSError(5, "Input/output error")

    reader = ReadAhead(blocks())
    assert next(reader) == "block 0" and next(reader) == "block 1"
    with pytest.raises(OSError, match="Input/output error"):
        next(reader)
    assert next(reader, None) is None
    reader.stop()


def test_read_ahead_thread_stops_while_it_waits_on_the_main_thread():
    import itertools

    from fastpgn.io.ahead import ReadAhead

    reader = ReadAhead(itertools.count(), depth=2)
    assert [next(reader) for _ in range(3)] == [0, 1, 2]
    reader.stop()
    assert not reader._thread.is_alive()


def test_chunk_writer_delivers_in_order_and_hands_the_first_error_to_the_main_thread():
    from fastpgn.convert.chunks import ChunkWriter

    delivered = []

    def deliver(n):
        if n == 5:
            raise OSError(28, "No space left on device")
        delivered.append(n)

    writer = ChunkWriter(deliver, depth=2)
    with pytest.raises(OSError, match="No space left on device"):
        for n in range(100):
            writer.put(n)
        writer.finish()
    writer.stop()
    assert delivered == [0, 1, 2, 3, 4]

    writer = ChunkWriter(delivered.append, depth=2)
    for n in range(10, 20):
        writer.put(n)
    writer.finish()
    assert delivered == [0, 1, 2, 3, 4] + list(range(10, 20))


def test_errors_raise_keeps_every_chunk_completed_before_the_bad_game(tmp_path, dump, monkeypatch):
    from fastpgn.convert import converter as pipeline

    deliver = pipeline.Converter._deliver

    def slow_deliver(self, *args):      # deliveries still queued when the bad game is met
        time.sleep(0.03)
        deliver(self, *args)

    monkeypatch.setattr(pipeline.Converter, "_deliver", slow_deliver)
    good = zstandard.ZstdDecompressor().stream_reader(dump.read_bytes()).read()
    bad = tmp_path / "bad.pgn"
    bad.write_bytes(good + (ROOT / "tests" / "cases" / "invalid-move-token.pgn").read_bytes())
    reference, ref_out = run(tmp_path, dump, 700, jobs=2, block_size=300_000)
    out = tmp_path / "raised"
    opts = Options(input=str(bad), chunk_size=700, output_dir=str(out), jobs=2, block_size=300_000,
                   errors="raise")
    with pytest.raises(PGNSyntaxError) as caught:
        Converter(opts).run()
    assert caught.value.game == reference.games_read + 1
    # The three chunks that the games before the bad one fill are complete and final; the rest is dropped.
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref_out)][:3]
    assert not list(out.glob("*.tmp"))


def _stalled_fifo(tmp_path: Path, data: bytes):
    """A named pipe fed ``data`` and then held open with nothing more: a producer that hangs."""
    import threading

    fifo = tmp_path / "stalled"
    os.mkfifo(fifo)
    release = threading.Event()

    def feed():
        try:
            with open(fifo, "wb") as f:
                f.write(data)
                f.flush()
                release.wait(120)
        except OSError:     # the reader is gone: nothing to feed
            pass

    threading.Thread(target=feed, daemon=True).start()
    return fifo, release


@pytest.mark.parametrize("how", ["limit", "sigint"])
def test_a_stalled_input_does_not_hang_the_end_of_a_run(tmp_path, dump, how):
    """The reader thread may sit in a read that never returns: --limit and Ctrl-C must still end the run."""
    # Three and a half zstd frames (0.84 MB each, 5.7 MB of PGN): the reader's 1 MiB reads give three whole
    # 4 MiB blocks, which -j 1 keeps in flight, then it sits in a read that never returns.
    data = dump.read_bytes()
    fifo, release = _stalled_fifo(tmp_path, data * 3 + data[:len(data) // 2])
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fastpgn", str(fifo), "100", "-o", str(out), "-j", "1", "-q"]
    try:
        if how == "limit":
            proc = subprocess.run(cmd + ["--limit", "250"], env=ENV, capture_output=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            assert len(all_lines(out)) == 250
        else:
            proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
            deadline = time.time() + 60
            seen = -1
            while time.time() < deadline and (seen < 3 or seen != len(chunk_files(out))):
                seen = len(chunk_files(out))
                time.sleep(0.5)     # until the chunks stop coming: the reader waits on the pipe
            proc.send_signal(signal.SIGINT)
            assert proc.wait(30) == 130
            assert "interrupted; complete chunks were kept" in proc.stderr.read().decode()
            assert len(chunk_files(out)) >= 3 and not list(out.glob("*.tmp"))
            assert all_lines(out) == (list(read_lines(dump)) * 3)[:len(all_lines(out))]
    finally:
        release.set()


@pytest.mark.parametrize("failing", ["chunk rename", "state write"])
def test_a_failed_rename_or_state_write_leaves_no_temporary_file(tmp_path, dump, monkeypatch, failing):
    from fastpgn.convert import converter as pipeline

    if failing == "chunk rename":
        replace = os.replace

        def failing_replace(src, dst):
            if str(dst).endswith(".cri.gz"):
                raise PermissionError(13, "Permission denied")
            replace(src, dst)

        monkeypatch.setattr(pipeline.os, "replace", failing_replace)
    else:
        from fastpgn.io import output

        create = output.create
        states = []

        class FullDisk:
            """The state's .tmp on a disk that fills up after its first 10 bytes."""

            def __init__(self, file) -> None:
                self.file = file

            def write(self, data):
                self.file.write(data[:10])
                raise OSError(28, "No space left on device")

            def __enter__(self):
                return self

            def __exit__(self, *exc) -> None:
                self.file.close()

        def full_disk_create(path):
            file = create(path)
            if str(path).endswith("-state.json.tmp"):
                states.append(path)
                if len(states) == 2:        # the first chunk's checkpoint
                    return FullDisk(file)
            return file

        monkeypatch.setattr(output, "create", full_disk_create)
    with pytest.raises(OSError):
        run(tmp_path, dump, 700, jobs=2, block_size=300_000)
    out = tmp_path / "out-j2-700-300000"
    assert list(out.glob("*.tmp")) == []
    # A chunk that could not be renamed is dropped; one renamed before the state write failed is whole.
    assert [f.name for f in chunk_files(out)] == ([] if failing == "chunk rename" else
                                                  [dump.name + ".part_000000.cri.gz"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own niceness is Linux's")
@pytest.mark.parametrize("jobs", [1, 2])
def test_workers_run_below_the_reader_and_writer_priority(jobs):
    """The workers are interchangeable, the reader and writer threads are not: with more busy threads than
    cores the workers give way (Parquet at -j 2 on two cores was slower than at -j 1 without it)."""
    from fastpgn.convert import schedule as _schedule
    from fastpgn.convert.tables import chunk_format

    pool = _schedule.start_workers(jobs, chunk_format("lines", "gz", False), None, False, False, None)
    if pool is None:
        pytest.skip("one job on the pure backend runs inline, in the main thread")
    try:
        # Every worker: tasks that wait for each other (threads), or that outlast a task's hand-out
        # (processes); (PRIO_PROCESS, 0) is the calling thread's niceness, on Linux.
        futures = [pool.submit(_niceness_of_a_worker, jobs) for _ in range(4 * jobs)]
        workers = dict(f.result() for f in futures)
    finally:
        pool.shutdown()
    assert len(workers) == jobs
    seen = set(workers.values())
    main_thread = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen == {min(19, main_thread + _schedule.WORKER_NICENESS)} and (main_thread == 19 or min(seen) > main_thread)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own niceness is Linux's")
def test_parquet_encoder_threads_run_at_the_workers_priority():
    from fastpgn.convert import schedule as _schedule

    pool = _schedule.start_encoders(3)
    try:
        threads = dict(f.result() for f in [pool.submit(_niceness_of_a_worker, 3) for _ in range(12)])
    finally:
        pool.shutdown()
    assert len(threads) == 3
    main_thread = os.getpriority(os.PRIO_PROCESS, 0)
    assert set(threads.values()) == {min(19, main_thread + _schedule.WORKER_NICENESS)}


_ALL_WORKERS: dict = {}


def _niceness_of_a_worker(jobs: int) -> tuple[int, int]:
    """(this worker's thread id, its niceness), once ``jobs`` workers of a thread pool are all busy."""
    import threading

    if threading.current_thread() is not threading.main_thread():     # a thread pool: meet the others
        barrier = _ALL_WORKERS.setdefault(jobs, threading.Barrier(jobs))
        try:
            barrier.wait(timeout=1)
        except threading.BrokenBarrierError:
            pass
    else:
        time.sleep(0.2)     # a process pool: the other processes take the other tasks meanwhile
    return threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0)


def _exit(argv: list[str]) -> int:
    """``main(argv)``'s exit status, argparse's own exit (a usage error) included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_a_usage_error(tmp_path, dump, capsys, jobs):
    """-j 0 and -j -3 were taken as every core: a usage error in one line, for one input, several and -o -;
    leaving -j out is every core."""
    out = tmp_path / "o"
    message = f"fastpgn: -j must be at least 1, not {jobs} (without -j: every core)\n"
    for argv in ([str(dump), "100", "-o", str(out)], [str(dump), str(dump), "100", "-o", str(out)],
                 [str(dump), "-o", "-"], ["-j", jobs, str(dump), "100", "-o", str(out)]):
        assert _exit(argv + ["-j", jobs]) == 2, argv
        assert capsys.readouterr() == ("", message), argv
        assert not out.exists()
    assert main([str(dump), "1000", "-o", str(out)]) == 0
    assert f"{os.cpu_count() or 1} worker" in capsys.readouterr().err
    # The library: jobs=0 (the default) is every core, below 0 a ValueError.
    assert Converter(Options(input=str(dump), chunk_size=10, output_dir=str(out), jobs=0)).jobs == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="jobs must be a whole number of workers, 0 for every core, not -3"):
        Converter(Options(input=str(dump), chunk_size=10, output_dir=str(out), jobs=-3))


def test_damage_advice_fits_the_output(tmp_path, dump, capsys, monkeypatch):
    """A damaged input: chunks can be continued with --resume; a stream to stdout (-o -) refuses --resume,
    so the advice there is to rerun."""
    cut = _damaged(tmp_path, dump)["cut.pgn.zst"]
    assert main([str(cut), "500", "-o", str(tmp_path / "o"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(rerun with --resume once the input is whole)" in err, err
    monkeypatch.chdir(tmp_path)
    assert main([str(cut), "-o", "-", "-q"]) == 1
    out, err = capsys.readouterr()
    assert out.count("\n") > 0 and err.count("\n") == 1, err
    assert "truncated" in err and "(rerun once the input is whole)" in err and "--resume" not in err, err
    # ... several inputs into one stream too: the damaged one is named, with the same advice.
    assert main([str(dump), str(cut), "-o", "-", "-q"]) == 1
    err = capsys.readouterr().err
    assert "cut.pgn.zst" in err and "(rerun once the input is whole)" in err and "--resume" not in err, err
    # Ctrl-C: chunks are kept for --resume; a stream cut short is only written whole by a new run.
    from fastpgn.convert import converter as pipeline

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.Converter, "run", interrupted)
    assert main([str(dump), "-o", "-", "-q"]) == 130
    assert capsys.readouterr().err == ("fastpgn: interrupted; the stream to stdout was cut short, rerun to write "
                                       "it whole\n")
    assert main([str(dump), "500", "-o", str(tmp_path / "o2"), "-q"]) == 130
    assert "rerun with --resume to continue" in capsys.readouterr().err
