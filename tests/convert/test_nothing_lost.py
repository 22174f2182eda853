"""No game lost or doubled silently: damaged bzip2, cut-off last games, used and shared output folders,
--limit's counts, and the one-line messages of the converter."""

from __future__ import annotations

import bz2
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard

from fastpgn.cli import main
from fastpgn.errors import InputError
from fastpgn.reader import read_games, read_lines
from helpers import ENV, ROOT, all_lines, chunk_files, decompressed, shared

LICHESS = ("data", "lichess-db")
# The first game of the named case: a move token that is no move.
BAD_GAME = (ROOT / "tests" / "cases" / "invalid-move-token.pgn").read_bytes().split(b"\n\n[")[0] + b"\n\n"
BZ2_BLOCK_MAGIC = 0x314159265359


def _pgn(name: str) -> bytes:
    data = shared(*LICHESS, name).read_bytes()
    if name.endswith(".zst"):
        return zstandard.ZstdDecompressor().stream_reader(data).read()
    return bz2.decompress(data)


def _block_bits(data: bytes) -> list[int]:
    """Bit offsets of the bzip2 block headers (their 48-bit magic) in ``data``."""
    bits = bin(int.from_bytes(data, "big"))[2:].zfill(len(data) * 8)
    magic = bin(BZ2_BLOCK_MAGIC)[2:].zfill(48)
    found, i = [], bits.find(magic)
    while i >= 0:
        found.append(i)
        i = bits.find(magic, i + 1)
    return found


def _flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 0x80 >> (bit % 8)
    return bytes(out)


@pytest.fixture(scope="module")
def games_2021() -> bytes:
    """999 real games (5.4 MB of PGN)."""
    return _pgn("lichess_db_standard_rated_2021-10.head999.pgn.zst")


def _damaged_bzip2(tmp_path: Path, games: bytes) -> dict[str, Path]:
    """A real dump as one bzip2 stream of several blocks, and as several streams, with one block header flipped."""
    one = bz2.compress(games, 1)                       # 100 kB blocks: several in 5 MB
    blocks = _block_bits(one)
    assert len(blocks) > 8
    pieces = [bz2.compress(games[i:i + 1_000_000]) for i in range(0, len(games), 1_000_000)]
    stream = sum(len(p) for p in pieces[:2]) * 8 + 32    # the first block of the third stream
    cases = {
        "first-block.pgn.bz2": _flip(one, blocks[0] + 5),
        "middle-block.pgn.bz2": _flip(one, blocks[len(blocks) // 2] + 7),
        "third-stream.pgn.bz2": _flip(b"".join(pieces), stream + 13),
    }
    paths = {}
    for name, data in cases.items():
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
    return paths


def _outcome(folder: Path, name: str) -> tuple[list[bytes], bytes | None]:
    rejects = folder / f"_{name}.rejected.pgn"
    return [f.read_bytes() for f in chunk_files(folder)], rejects.read_bytes() if rejects.exists() else None


def test_a_damaged_bzip2_block_header_gives_the_same_output_at_any_jobs(tmp_path, games_2021, capsys):
    """The parallel decoder passed over a damaged first block without a word; now -j 1 and -j 2 agree."""
    reference = list(read_lines(games_2021))
    for name, path in _damaged_bzip2(tmp_path, games_2021).items():
        results = []
        for jobs in ("1", "2"):
            out = tmp_path / f"{name}-j{jobs}"
            code = main([str(path), "100", "-o", str(out), "-j", jobs])
            err = capsys.readouterr().err
            assert f"corrupt bz2 data in {path}" in err and "Traceback" not in err, (name, err)
            results.append((code, _outcome(out, name)))
        assert results[0] == results[1], name
        code, (chunks, rejects) = results[0]
        lines = all_lines(tmp_path / f"{name}-j1")
        if name == "first-block.pgn.bz2":
            # Nothing before the damage: damage still (exit 1, the one rule for damage), nothing written.
            assert code == 1 and "(PGN byte 0)" in err and not chunks and rejects is None
        else:
            # Every whole game before the damage is written; the one it cut is kept; exit 1.
            assert code == 1 and "every whole game before the damage was written" in err
            assert 100 < len(lines) < 999 and lines == reference[:len(lines)], name
            assert rejects.count(b"% fastpgn rejected game") == 1, name
    # read_lines, the same decoder as -j 1, stops at the same damage.
    with pytest.raises(InputError, match="corrupt bz2 data"):
        list(read_lines(tmp_path / "middle-block.pgn.bz2", errors="skip"))


def test_a_dump_cut_after_a_games_tags_is_damage(tmp_path, games_2021, capsys):
    """Cut at a stream boundary, a dump still decodes: its last game, tags and no moves, is damage, not a row."""
    starts = [i + 1 for i in range(len(games_2021) - 1) if games_2021[i:i + 8] == b"\n[Event "]
    game_500 = starts[498]
    cut_in_tags = games_2021.index(b"\n[Round ", game_500) + 1     # after Event, Site, Date
    cut_in_a_tag = cut_in_tags + 5                                  # inside '[Round "-"]'
    for label, end in (("after-tags", cut_in_tags), ("inside-a-tag", cut_in_a_tag)):
        path = tmp_path / f"{label}.pgn.bz2"
        path.write_bytes(bz2.compress(games_2021[:end]))            # a whole, valid bzip2 stream
        results = []
        for jobs in ("1", "2"):
            out = tmp_path / f"{label}-j{jobs}"
            code = main([str(path), "1000", "-o", str(out), "-j", jobs])
            err = capsys.readouterr().err
            results.append((code, _outcome(out, path.name)))
            assert code == 1, err
            assert "499 games written, 1 rejected (of 500 read)" in err, err
            assert f"inside the tags of its last game, before any moves (PGN byte {end})" in err, err
        assert results[0] == results[1]
        rejects = results[0][1][1].decode()
        assert f"rejected game 500 at PGN byte {end}: input ends inside this game" in rejects
        assert games_2021[game_500:end].decode().rstrip("\n") in rejects
        assert all_lines(tmp_path / f"{label}-j1") == list(read_lines(games_2021[:game_500]))
        # The readers agree: every whole game, then the damage, the cut game kept.
        reader = read_games(path, errors="skip")
        with pytest.raises(InputError, match="inside the tags of its last game"):
            list(reader)
        assert reader.games_yielded == 499 and reader.rejected[0].offset == game_500


def test_inputs_of_tags_alone_are_not_damage(tmp_path):
    """A lichess broadcast exported before its games began: every game is tags, none is damage."""
    path = shared("data", "lichess-other", "broadcast_2025-06_uzchesscup_headers-only-no-event.pgn")
    games = list(read_games(path))
    assert games and all(g.plies == 0 for g in games)
    assert main([str(path), "1000", "-o", str(tmp_path / "o"), "-q"]) == 0
    assert len(all_lines(tmp_path / "o")) == len(games)


def test_a_used_output_folder_is_refused_unless_resume_or_overwrite(tmp_path, capsys):
    src = shared(*LICHESS, "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    out = tmp_path / "full"
    assert main([str(src), "300", "-o", str(out), "-q"]) == 0
    first = {f.name: f.read_bytes() for f in chunk_files(out)}
    assert len(first) == 9
    # The state JSON gives way to a hidden record: nothing but chunks is left to see.
    assert not (out / f".{src.name}.fastpgn-state.json").exists()
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(first)
    for again in (["1000"], ["300", "--compression", "zst"]):
        assert main([str(src), *again, "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out} already holds output for {src.name} ({src.name}.part_000000.cri.gz" in err, err
        assert "--resume" in err and "--overwrite" in err and err.count("\n") == 1
        assert {f.name: f.read_bytes() for f in chunk_files(out)} == first
    # --resume on the finished run has nothing to do, and says so.
    assert main([str(src), "300", "-o", str(out), "--resume"]) == 0
    assert "nothing to resume" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in chunk_files(out)} == first
    # --resume with other options names each one that differs, its value then and now.
    assert main([str(src), "300", "-o", str(out), "--resume", "--compression", "zst", "--min-elo", "1500",
                 "--speed", "blitz,rapid"]) == 2
    assert capsys.readouterr().err == (
        f"fastpgn: the run in {out} was made with other options or from another input (--compression gz then, "
        "zst now; --min-elo none then, 1500 now; --speed none then, blitz,rapid now); give the same options to "
        "resume it, or --overwrite to start over\n")
    assert {f.name: f.read_bytes() for f in chunk_files(out)} == first
    # --overwrite removes the earlier run's parts first: 3 chunks of 1000, none of the 300s left.
    assert main([str(src), "1000", "-o", str(out), "-q", "--overwrite"]) == 0
    assert [f.name for f in chunk_files(out)] == [f"{src.name}.part_{i:06d}.cri.gz" for i in range(3)]
    assert len(all_lines(out)) == 2499
    assert main([str(src), "1000", "-o", str(out), "-q", "--overwrite", "--compression", "zst"]) == 0
    assert [f.name for f in chunk_files(out)] == [f"{src.name}.part_{i:06d}.cri.zst" for i in range(3)]
    # Another input's output in the same folder is not this run's business.
    other = shared(*LICHESS, "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    assert main([str(other), "10", "-o", str(out), "-q"]) == 0
    assert len(chunk_files(out)) == 5


def test_resume_with_no_record_of_a_run_is_refused(tmp_path, capsys):
    src = shared(*LICHESS, "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    out = tmp_path / "o"
    out.mkdir()
    (out / f"{src.name}.part_000000.cri.gz").write_bytes(b"")
    assert main([str(src), "10", "-o", str(out), "--resume"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert main([str(src), "10", "-o", str(out), "--resume", "--overwrite"]) == 2
    assert "give one of them" in capsys.readouterr().err


def test_two_runs_on_one_output_folder_at_once(tmp_path, games_2021, capsys):
    """The second run is refused with the first one's pid; the first finishes whole, its rejects not doubled."""
    pgn = games_2021 + BAD_GAME
    out = tmp_path / "shared-out"
    # The first run reads stdin and holds the folder while the test has not written its input yet.
    first = subprocess.Popen([sys.executable, "-m", "fastpgn", "-", "200", "-o", str(out), "-q"], env=ENV,
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    lock = out / ".stdin.fastpgn-lock"
    deadline = time.time() + 30
    while time.time() < deadline and not (lock.exists() and lock.read_text().strip()):
        time.sleep(0.01)
    assert main(["-", "200", "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err == f"fastpgn: {out} is in use by another fastpgn run (pid {first.pid}) writing stdin\n"
    _, stderr = first.communicate(pgn, timeout=60)
    assert first.returncode == 0, stderr
    assert all_lines(out) == list(read_lines(games_2021))
    assert (out / "_stdin.rejected.pgn").read_text().count("% fastpgn rejected game") == 1
    assert not lock.exists()
    # A run killed with its lock held leaves the file, not the lock: the next run goes ahead.
    killed = subprocess.Popen([sys.executable, "-m", "fastpgn", "-", "200", "-o", str(out), "-q", "--overwrite"],
                              env=ENV, stdin=subprocess.PIPE)
    while time.time() < deadline and not (lock.exists() and lock.read_text().strip() == str(killed.pid)):
        time.sleep(0.01)
    killed.kill()
    killed.wait(10)
    assert lock.exists()
    proc = subprocess.run([sys.executable, "-m", "fastpgn", "-", "200", "-o", str(out), "-q", "--overwrite"],
                          env=ENV, input=pgn, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert all_lines(out) == list(read_lines(games_2021))


def test_limit_counts_only_the_games_it_considered(tmp_path, games_2021, capsys):
    bad = BAD_GAME
    starts = [i + 1 for i in range(len(games_2021) - 1) if games_2021[i:i + 8] == b"\n[Event "]
    # A bad game as the 6th, another as the 30th: --limit 10 meets the first and never the second.
    src = tmp_path / "mixed.pgn"
    src.write_bytes(games_2021[:starts[4]] + bad + games_2021[starts[4]:starts[27]] + bad
                    + games_2021[starts[27]:])
    assert main([str(src), "1000", "-o", str(tmp_path / "o"), "--limit", "10"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("fastpgn: 10 games written, 1 rejected (of 11 read), 1 chunk, "), err
    assert (tmp_path / "o" / "_mixed.pgn.rejected.pgn").read_text().count("% fastpgn rejected game") == 1
    assert all_lines(tmp_path / "o") == list(read_lines(games_2021))[:10]
    # The limit on the last line of a block whose later games were rejected: those are not counted either.
    assert main([str(src), "1000", "-o", str(tmp_path / "p"), "--limit", "5"]) == 0
    assert "5 games written, 0 rejected (of 5 read)" in capsys.readouterr().err


# ---------------------------------------------------------------- messages: one line a user can act on

def test_a_missing_or_wrong_openings_map_is_named(tmp_path, capsys):
    src = shared(*LICHESS, "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    out = tmp_path / "o"
    assert main([str(src), "10", "-o", str(out), "--openings-map", str(tmp_path / "nosuch.tsv")]) == 2
    err = capsys.readouterr().err
    assert err == f"fastpgn: cannot read the openings map {tmp_path / 'nosuch.tsv'}: No such file or directory\n"
    assert not out.exists()                                  # an input problem: no output folder made
    pgn = tmp_path / "games.pgn"
    pgn.write_bytes(_pgn("lichess_db_standard_rated_2023-02.head15.pgn.zst"))
    assert main([str(src), "10", "-o", str(out), "--openings-map", str(pgn)]) == 2
    err = capsys.readouterr().err
    assert f"{pgn} is not an openings map: line 1 is not CCCNNN\u2502CCC\u2502Name" in err
    assert err.count("\n") == 1


def test_usage_and_mistyped_commands(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    for command in ("lichess-text", "crypt", "icn", "analyse", "spark", "report", "openings", "INPUT CHUNK_SIZE"):
        assert command in err
    assert main(["icnn", "foo.pgn"]) == 2
    assert capsys.readouterr().err == ("fastpgn: 'icnn' is neither a command "
                                       "(lichess-text, crypt, icn, analyse, spark, report, explorer, "
                                       "explorer-lookup, positions-index, openings) "
                                       "nor an existing file (did you mean icn?)\n")
    # Every command is still a command, --help included.
    for command in ("lichess-text", "crypt", "icn", "analyse", "spark", "report", "explorer", "explorer-lookup",
                    "positions-index", "openings"):
        try:
            code = main([command, "--help"])
        except SystemExit as exit_:     # argparse's own exit, where a command lets it through
            code = exit_.code
        assert code in (0, None), command
        assert f"python -m fastpgn {command}" in capsys.readouterr().out
    # A missing input named like a word is still a missing input.
    assert main(["games", "100"]) == 2
    assert capsys.readouterr().err == "fastpgn: games: no such file\n"


def test_an_empty_input_is_one_line(tmp_path, capsys):
    path = tmp_path / "empty.pgn"
    path.write_bytes(b"")
    assert main([str(path), "10", "-o", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"fastpgn: {path}: no PGN games found (empty or not PGN)\n"


def test_resume_leaves_no_empty_rejects_file(tmp_path, games_2021, monkeypatch):
    from fastpgn.convert import converter as pipeline

    src = tmp_path / "big.pgn"
    src.write_bytes(games_2021 * 2)
    out = tmp_path / "o"
    original = pipeline.ChunkFiles.close
    calls = {"n": 0}

    def close_then_die(self):
        original(self)
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ChunkFiles, "close", close_then_die)
    assert main([str(src), "300", "-o", str(out), "-q", "-j", "1"]) == 130
    monkeypatch.setattr(pipeline.ChunkFiles, "close", original)
    assert (out / ".big.pgn.fastpgn-state.json").exists()
    assert main([str(src), "300", "-o", str(out), "-q", "-j", "1", "--resume"]) == 0
    assert not (out / "_big.pgn.rejected.pgn").exists()
    assert not (out / ".big.pgn.fastpgn-state.json").exists()
    assert len(all_lines(out)) == 2 * 999


def test_help_states_the_exit_rule(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit status (the same for every command)" in out and "--overwrite" in out
    assert "decompressed PGN" in out


@pytest.mark.parametrize("name", ["lichess_db_standard_rated_2013-01.head348.pgn.bz2",
                                  "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2"])
def test_whole_bzip2_files_stay_on_the_parallel_decoder(name, tmp_path):
    """The block-chain check never sends a whole file to the slow stream decoder (one stream and several)."""
    pytest.importorskip("indexed_bzip2", reason="pip install -e '.[fast]' (the parallel bzip2 decoder)")
    from fastpgn.io.sources import open_source

    path = shared(*LICHESS, name)
    several = tmp_path / "several.pgn.bz2"
    pgn = bz2.decompress(path.read_bytes())
    several.write_bytes(b"".join(bz2.compress(pgn[i:i + 100_000], 1) for i in range(0, len(pgn), 100_000)))
    for each in (path, several):
        source = open_source(each, threads=2)
        assert b"".join(source.chunks()) == pgn
        assert source.fallback is None, source.fallback


def test_chunk_size_first_with_options_before_it(tmp_path):
    """The original's order (CHUNK_SIZE first) with options in front: their values are not the input."""
    src = shared(*LICHESS, "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    assert main(["-j", "2", "10", str(src), "-o", str(tmp_path / "a"), "-q"]) == 0
    assert main(["--min-elo", "1000", "--limit", "3", "10", str(src), "-o", str(tmp_path / "b"), "-q"]) == 0
    assert main([str(src), "10", "-o", str(tmp_path / "c"), "-q"]) == 0
    assert all_lines(tmp_path / "a") == all_lines(tmp_path / "c") == list(read_lines(src))
    assert len(all_lines(tmp_path / "b")) == 3


def test_readers_refuse_binary_input_as_the_converter_does(tmp_path):
    """Binary data is not PGN: one InputError naming it, not a 'game' in the rejects."""
    import os as _os

    path = tmp_path / "photo.pgn"
    path.write_bytes(_os.urandom(5000).replace(b"[", b"x") + b"\0")
    for read in (read_games, read_lines):
        reader = read(path, errors="skip")
        with pytest.raises(InputError, match=f"^{path} is not PGN: binary data"):
            list(reader)
        assert reader.games_read == 0 and not reader.rejected


@pytest.mark.parametrize("text", [b"hello world\nthis is not a game\n", b"white,black,result\nann,bob,1-0\n",
                                  b"Event: Rated Blitz game\nWhite: ann\n", b'\xef\xbb\xbf  "quoted" text\n'])
def test_text_that_cannot_start_pgn_is_refused_whole_not_rejected_as_one_game(tmp_path, capsys, text):
    """A note, a CSV or a list of tags without brackets: exit 2 and one line, not 'exit 0, 1 rejected'."""
    path = tmp_path / "notes.pgn"
    path.write_bytes(text)
    assert main([str(path), "10", "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fastpgn: {path} is not PGN: it starts with ") and err.count("\n") == 1
    assert not (tmp_path / "out" / "_notes.pgn.rejected.pgn").exists()
    with pytest.raises(InputError, match="is not PGN"):
        list(read_games(path))


@pytest.mark.parametrize("start", [b"e4 e5 *", b"exd5 *", b"ed5 *", b"Nf3 d5 *", b"N:e5 *", b"N@f3 *", b"O-O *",
                                   b"-- e5 *", b"Z0 e5 *", b"1. e4 *", b"{ a note } 1. e4 *", b"% escape\n1. d4 *",
                                   b"$1 e4 *", b"!? e4 *"])
def test_a_tagless_game_may_start_with_any_move(start):
    assert len(list(read_games(start, errors="skip"))) == 1


def test_a_title_line_above_the_games_is_one_rejected_game_and_the_games_are_read(tmp_path, capsys):
    games = shared("data", "lichess-db", "lichess_db_standard_rated_2013-01.head348.pgn.zst")
    path = tmp_path / "titled.pgn"
    path.write_bytes(b"Downloaded from lichess.org on 2013-02-01\n\n" + decompressed(games))
    assert main([str(path), "1000", "-o", str(tmp_path / "out"), "-q"]) == 0
    rejected = (tmp_path / "out" / "_titled.pgn.rejected.pgn").read_text()
    assert rejected.count("% fastpgn rejected game") == 1 and "Downloaded from" in rejected
    assert len(list(read_lines(path, errors="skip"))) == 348


def _with_escape_lines(data: bytes) -> bytes:
    """``data`` with a ``%`` escape line above every game's first tag, as some exporters write."""
    return data.replace(b'[Event ', b'% exported by a tool\n[Event ')


@pytest.mark.parametrize("damage", ["bad move", "truncated"])
def test_escape_lines_between_games_keep_the_blocks_and_the_resync(tmp_path, damage):
    """A game boundary is a blank line, then any escape lines, then a tag: the converter's blocks, the
    skip past a bad game and the truncation check find the same games with the escape lines as without."""
    from fastpgn.convert.converter import Converter, Options

    data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    if damage == "bad move":
        at = data.index(b"\n1. ") + 4
        data = data[:at] + b"Zz9" + data[at + 2:]
    else:
        data = data[:len(data) * 2 // 3]
    outputs = []
    for name, text in (("plain.pgn", data), ("escaped.pgn", _with_escape_lines(data))):
        src = tmp_path / name
        src.write_bytes(text)
        summary = Converter(Options(input=str(src), chunk_size=100_000, output_dir=str(tmp_path / name[:-4]),
                                    jobs=2, block_size=100_000)).run()
        outputs.append(((summary.games_read, summary.games_written, summary.games_rejected),
                        all_lines(tmp_path / name[:-4])))
    assert outputs[0] == outputs[1]
    assert outputs[0][0][1] > 1000 and outputs[0][0][2] == 1


def test_escape_lines_among_the_tags_of_a_headers_only_file_are_no_damage():
    text = b'% a broadcast before its games began\n[Event "a"]\n% the round\n[White "b"]\n[Black "c"]\n'
    games = list(read_games(text))
    assert [g.headers for g in games] == [{"Event": "a", "White": "b", "Black": "c"}]
