"""``python -m fastpgn analyse``: evals as lichess writes them, the cache, -j, resume, faults and exit codes.

Real games come from the shared lichess-db corpus (skipped when absent); the
engine is Debian's stockfish (skipped with the install line when absent),
checked against python-chess driving the same engine with the same
commands; faults are played by tests/fake_engine.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fastpgn.cli.analyse import main
from fastpgn.engine.analysis import complete_games, fen_without_counters, lichess_pgn
from fastpgn.reader import read_games
from helpers import (
    FAKE_ENGINE,
    G2013,
    G2021,
    G2023,
    ROOT,
    analyse_cli as run,
    fake_engine,
    first_games,
    game_texts,
    shared,
    stockfish as find_stockfish,
)

FAKE = FAKE_ENGINE

SHORT = """\
[Event "Fool's mate"]
[Result "0-1"]

1. f3 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. g4 { [%clk 0:02:59] } 2... Qh4# { [%clk 0:02:58] } 0-1

[Event "Scholar's mate"]
[Result "1-0"]

1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6?? 4. Qxf7# 1-0

[Event "Loyd's stalemate"]
[Result "1/2-1/2"]

1. e3 a5 2. Qh5 Ra6 3. Qxa5 h5 4. h4 Rah6 5. Qxc7 f6 6. Qxd7+ Kf7 7. Qxb7 Qd3 8. Qxb8 Qh7 9. Qxc8 Kg6 10. Qe6 1/2-1/2

"""


@pytest.fixture(scope="module")
def stockfish():
    return find_stockfish()


def engine_pids(log: Path) -> list[int]:
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("pid ")]


def assert_no_leftovers(log: Path | None = None) -> None:
    for pid in engine_pids(log) if log is not None else []:
        for _ in range(100):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.02)
        assert not os.path.exists(f"/proc/{pid}"), f"engine {pid} is still running"
    left = [t.name for t in threading.enumerate() if t.name.startswith("fastpgn-")]
    assert not left, left


# ---------------------------------------------------------------- writing as lichess does

@pytest.mark.parametrize("corpus", [G2013, G2021, G2023])
def test_lichess_layout_reproduces_every_game_of_a_dump(corpus):
    path = shared(*corpus)
    texts = game_texts(path)
    games = list(read_games(path))
    assert len(games) == len(texts)
    assert [lichess_pgn(g) for g in games] == texts


def test_complete_games_stops_at_a_game_cut_short():
    text = b'[A "1"]\n\n1. e4 { [%eval 0.3] } 1-0\n\n[A "2"]\n\n*\n\n'
    assert complete_games(text) == (2, len(text), text.index(b'[A "2"]'))
    for cut in range(len(text)):
        count, end, _ = complete_games(text[:cut])
        assert count == (2 if cut >= len(text) else 1 if cut >= text.index(b'[A "2"]') else 0)
        assert end <= cut


# ---------------------------------------------------------------- with the real engine

def test_mates_and_stalemate_in_lichess_notation(stockfish, tmp_path, capsys):
    src = tmp_path / "short.pgn"
    src.write_text(SHORT)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--depth", "10", "-q"], capsys)
    assert code == 0, err
    fools, scholars, loyd = read_games(out)
    assert fools.evals[2] == "#-1" and fools.evals[3] is None       # Black mates in one; none after mate
    assert fools.clocks == [180, 180, 179, 178]
    assert scholars.evals[-2] == "#1" and scholars.evals[-1] is None
    assert loyd.evals[-1] == "0.0" and all(e is not None for e in loyd.evals)
    assert "4. Qxf7# 1-0" in out.read_text() and "2... Qh4# { [%clk 0:02:58] } 0-1" in out.read_text()


@pytest.mark.slow
def test_evals_equal_python_chess_driving_the_same_engine(stockfish, tmp_path, capsys):
    """50 real games at 2000 nodes, one thread, no cache: the same evals as python-chess's SimpleEngine
    sending the same sequence (ucinewgame per game, each position with its game's moves)."""
    import chess
    import chess.engine

    src = shared(*G2013)
    out = tmp_path / "out.pgn"
    nodes, count = 2000, 50
    code, err = run([src, "-o", out, "--limit", count, "--nodes", nodes, "--threads", 1, "--hash", 16,
                     "--no-cache", "-q"], capsys)
    assert code == 0, err
    ours = [g.evals for g in read_games(out)]
    theirs = []
    with chess.engine.SimpleEngine.popen_uci(stockfish) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        for number, game in enumerate(read_games(src)):
            if number == count:
                break
            board, evals = chess.Board(), []
            for san in game.moves:
                board.push_san(san)
                if board.is_checkmate():
                    evals.append(None)
                elif board.is_stalemate():
                    evals.append("0.0")
                else:
                    score = engine.analyse(board, chess.engine.Limit(nodes=nodes), game=number)["score"].white()
                    evals.append(f"#{score.mate()}" if score.is_mate() else str(score.score() / 100))
            theirs.append(evals)
    assert len(ours) == count and sum(map(len, ours)) > 2000
    assert ours == theirs


def test_cache_serves_repeated_positions_with_their_first_eval(stockfish, tmp_path, capsys):
    src = shared(*G2023)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--nodes", 1000, "--threads", 1], capsys)
    assert code == 0, err
    cached = int(err.split(" searched, ")[1].split(" from the cache")[0].replace(",", ""))
    assert cached > 0
    before, after = list(read_games(src)), list(read_games(out))
    assert len(before) == len(after) == 15
    seen: dict[str, str] = {}
    for old, new in zip(before, after):
        assert (new.headers, new.moves, new.clocks, new.result) == (old.headers, old.moves, old.clocks, old.result)
        mated = old.board().is_checkmate()
        assert all(e is not None for e in new.evals[:len(new.evals) - mated])
        if mated:
            assert new.evals[-1] is None
        for fen, value in zip(new.fens(), new.evals):
            if value is not None:
                assert seen.setdefault(fen_without_counters(fen), value) == value, fen
    assert len(seen) < sum(g.plies for g in after) - cached + 1


def test_jobs_give_the_same_output_without_the_cache(stockfish, tmp_path, capsys):
    src = first_games(shared(*G2023), 6, tmp_path)
    outputs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}.pgn"
        code, err = run([src, "-o", out, "--nodes", 1000, "-j", jobs, "--threads", 1, "--no-cache", "-q"], capsys)
        assert code == 0, err
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert_no_leftovers()


# ---------------------------------------------------------------- the command, with the fake engine

def test_only_missing_keeps_games_with_evals_as_they_are(tmp_path, capsys):
    texts = game_texts(shared(*G2021))
    with_evals = [t for t in texts if "[%eval" in t][:4]
    src = tmp_path / "mixed.pgn"
    src.write_text("".join(t for t in texts if t in with_evals or texts.index(t) < 8))
    engine, log = fake_engine(tmp_path)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine, "--only-missing"], capsys)
    assert code == 0, err
    games_in, games_out = list(read_games(src)), list(read_games(out))
    with_evals = [i for i, g in enumerate(games_in) if any(g.evals)]
    assert len(with_evals) == 4 and len(games_in) == 12
    for i, (old, new) in enumerate(zip(games_in, games_out)):
        if i in with_evals:
            assert new.evals == old.evals and lichess_pgn(new) == lichess_pgn(old)
        else:
            # The fake engine says "score cp 12" everywhere: +0.12 for the side to move, in White's view.
            assert new.evals[:-1] == ["-0.12", "0.12"] * ((old.plies - 1) // 2) + ["-0.12"] * ((old.plies - 1) % 2)
        assert (new.moves, new.clocks, new.headers) == (old.moves, old.clocks, old.headers)
    assert f"{len(with_evals)} kept with their evals" in err
    assert_no_leftovers(log)


def test_engine_that_dies_mid_run_then_resume(tmp_path, capsys):
    src = first_games(shared(*G2023), 6, tmp_path)
    engine, log = fake_engine(tmp_path, "die", "--after", "200")
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    assert code == 2
    assert "engine failed at game 3 (PGN byte" in err and "fatal: simulated crash in search" in err
    assert "2 games written" in err and "--resume continues" in err
    assert len(list(read_games(out))) == 2
    assert_no_leftovers(log)
    good, good_log = fake_engine(tmp_path, "ok")
    code, err = run([src, "-o", out, "--engine", good, "--resume"], capsys)
    assert code == 0, err
    fresh = tmp_path / "fresh.pgn"
    assert run([src, "-o", fresh, "--engine", good, "-q"], capsys)[0] == 0
    assert out.read_bytes() == fresh.read_bytes()
    assert "2 kept from the interrupted run" in err
    assert_no_leftovers(good_log)


def test_resume_rewrites_a_game_cut_short(tmp_path, capsys):
    src = first_games(shared(*G2023), 4, tmp_path)
    engine, _ = fake_engine(tmp_path)
    full = tmp_path / "full.pgn"
    assert run([src, "-o", full, "--engine", engine, "-q"], capsys)[0] == 0
    data = full.read_bytes()
    out = tmp_path / "out.pgn"
    for cut in (0, 10, data.index(b"\n\n[Event", 100) + 1, data.index(b"\n\n[Event", 100) + 2, len(data) - 1):
        out.write_bytes(data[:cut])
        code, err = run([src, "-o", out, "--engine", engine, "--resume", "-q"], capsys)
        assert code == 0, err
        assert out.read_bytes() == data, cut


def test_format_lines_gives_the_converters_lines_of_the_analysed_games(tmp_path, capsys):
    """Straight into 22-field lines: the converter's line of each game the PGN output holds, evals in field 21."""
    from fastpgn.reader import read_lines

    src = first_games(shared(*G2023), 5, tmp_path)
    engine, log = fake_engine(tmp_path)
    pgn, lines = tmp_path / "out.pgn", tmp_path / "out.lines"
    assert run([src, "-o", pgn, "--engine", engine, "-q"], capsys)[0] == 0
    assert run([src, "-o", lines, "--engine", engine, "-q", "--format", "lines"], capsys)[0] == 0
    got = lines.read_text("utf-8").splitlines()
    assert got == list(read_lines(pgn)) and len(got) == 5
    for line, game in zip(got, read_games(pgn)):
        fields = line.split("\u2502")
        assert fields[6] == "Y" and fields[20].split(" ")[:2] == game.evals[:2] == ["-0.12", "0.12"]
    # --resume after a cut inside the third line: the whole lines stay, the rest is written again.
    data = lines.read_bytes()
    cut = data.index(b"\n", data.index(b"\n") + 1) + 30
    lines.write_bytes(data[:cut])
    code, err = run([src, "-o", lines, "--engine", engine, "--resume", "--format", "lines"], capsys)
    assert code == 0, err
    assert lines.read_bytes() == data and "2 kept from the interrupted run" in err
    assert_no_leftovers(log)


def test_resume_refuses_an_output_of_another_input(tmp_path, capsys):
    engine, _ = fake_engine(tmp_path)
    src = first_games(shared(*G2023), 3, tmp_path)
    other = tmp_path / "other.pgn"
    other.write_text(SHORT)
    out = tmp_path / "out.pgn"
    assert run([other, "-o", out, "--engine", engine, "-q", "--limit", 2], capsys)[0] == 0
    code, err = run([src, "-o", out, "--engine", engine, "--resume"], capsys)
    assert code == 2 and "does not continue" in err
    before = out.read_bytes()
    code, err = run([first_games(shared(*G2023), 1, tmp_path), "-o", out, "--engine", engine, "--resume"], capsys)
    assert code == 2 and out.read_bytes() == before


def test_unreplayable_and_rejected_games(tmp_path, capsys):
    src = tmp_path / "bad.pgn"
    src.write_text(SHORT.split("\n\n[Event \"Loyd")[0] + "\n\n"
                   '[Event "illegal"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 *\n\n'
                   '[Event "atomic"]\n[Variant "Atomic"]\n[Result "*"]\n\n1. e4 d5 2. exd5 *\n\n'
                   '[Event "broken"]\n[Result "*"]\n\n1. e4 hello *\n\n'
                   '[Event "last"]\n[Result "*"]\n\n1. d4 *\n\n')
    engine, log = fake_engine(tmp_path)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert any("game 3 (PGN byte" in line and "not analysed: illegal move 2. Ke3" in line for line in lines)
    assert any("game 4" in line and "not analysed: unsupported variant: Atomic" in line for line in lines)
    assert any("invalid move token 'hello'" in line and "game 5" in line for line in lines)
    assert "6 games read, 5 written (3 analysed, 0 kept with their evals, 2 not analysable), 1 rejected" in err
    games = list(read_games(out))
    assert [g.headers["Event"] for g in games] == ["Fool's mate", "Scholar's mate", "illegal", "atomic", "last"]
    assert games[2].evals == [None, None, None] and games[4].evals == ["-0.12"]
    code, err = run([src, "-o", out, "--engine", engine, "--errors", "raise", "--overwrite"], capsys)
    assert code == 1 and "illegal move 2. Ke3" in err
    assert len(list(read_games(out))) == 2
    assert_no_leftovers(log)


def test_errors_raise_stops_at_a_syntax_error(tmp_path, capsys):
    src = tmp_path / "bad.pgn"
    src.write_text(SHORT + '[Event "broken"]\n[Result "*"]\n\n1. e4 hello *\n\n[Event "after"]\n\n1. d4 *\n\n')
    engine, _ = fake_engine(tmp_path)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine, "--errors", "raise"], capsys)
    assert code == 1 and f"stopped at a bad game: {src}: invalid move token 'hello'" in err   # (the file named)
    assert len(list(read_games(out))) == 3


def test_damaged_input_keeps_the_games_before_the_damage(tmp_path, capsys):
    src = tmp_path / "cut.pgn"
    src.write_text(SHORT + '[Event "cut"]\n[Result "*"]\n')
    engine, _ = fake_engine(tmp_path)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    assert code == 1 and f"the input is damaged: {src}: the input ends inside the tags of its last game" in err
    assert len(list(read_games(out))) == 3


FOOLS_MATE_PLY_2 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"


@pytest.mark.parametrize("mode, said", [
    # It ended "5 analysed" with no eval written.
    ("no-score", f"reported no score (go nodes 100000) for the position after ply 2, {FOOLS_MATE_PLY_2}"),
    # score mate 0 (checkmated now) where the game goes on was written #0: lichess drops such an eval and
    # never writes #0, and a hole would pass for analysed.
    ("mate-zero", f"reported mate 0 (checkmated) for the position after ply 2, {FOOLS_MATE_PLY_2}, which is not mate"),
])
def test_an_engine_that_reports_no_usable_score_is_an_engine_failure(tmp_path, capsys, mode, said):
    """Exit 2, naming the game, the ply and the position, with the games analysed before it written."""
    src = tmp_path / "g.pgn"
    src.write_text(SHORT)
    engine, log = fake_engine(tmp_path, mode, "--after", "4")    # fool's mate: 3 searches, then ply 1 of game 2
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    second = SHORT.index('[Event "Scholar')
    assert code == 2 and err == (f"fastpgn analyse: engine failed at game 2 (PGN byte {second}): engine Fake "
                                 f"Engine 1.0 {said}; 1 game written to {out}, --resume continues\n"), err
    games = list(read_games(out))
    assert len(games) == 1 and games[0].evals == ["-0.12", "0.12", "-0.12", None]
    assert "#0" not in out.read_text()
    assert_no_leftovers(log)


@pytest.mark.parametrize("mode, said", [("none", "bestmove (none)"), ("null", "bestmove 0000")])
def test_no_bestmove_in_an_ordinary_position_is_an_engine_failure(tmp_path, capsys, mode, said):
    src = tmp_path / "g.pgn"
    src.write_text(SHORT)
    engine, log = fake_engine(tmp_path, mode)
    out = tmp_path / "out.pgn"
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    fen = "rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1"
    assert code == 2 and err == (f"fastpgn analyse: engine failed at game 1 (PGN byte 0): engine Fake Engine 1.0 "
                                 f"answered {said} in {fen}, a position with legal moves; 0 games written to {out}, "
                                 "--resume continues\n"), err
    assert_no_leftovers(log)


def test_search_timeout_is_an_engine_failure(tmp_path, capsys):
    src = first_games(shared(*G2023), 2, tmp_path)
    engine, log = fake_engine(tmp_path, "hang", "--after", "5")
    out = tmp_path / "out.pgn"
    started = time.monotonic()
    code, err = run([src, "-o", out, "--engine", engine, "--timeout", "0.5", "-j", "2"], capsys)
    assert code == 2 and "passed the search's 0.5 s deadline" in err and "killed" in err
    assert time.monotonic() - started < 20
    assert_no_leftovers(log)


@pytest.mark.parametrize("argv, message", [
    (["--depth", "3", "--nodes", "5"], "not allowed with argument"),
    (["-j", "0"], "at least 1"),
    (["-j", "-3"], "at least 1"),
    (["--option", "Hash"], "NAME=VALUE"),
])
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    src = tmp_path / "g.pgn"
    src.write_text(SHORT)
    code, err = run([src, *argv], capsys)
    assert code == 2 and message in err


def test_input_output_and_engine_errors_exit_2(tmp_path, capsys):
    engine, _ = fake_engine(tmp_path)
    src = tmp_path / "g.pgn"
    src.write_text(SHORT)
    out = tmp_path / "out.pgn"
    code, err = run([tmp_path / "missing.pgn", "-o", out, "--engine", engine], capsys)
    assert code == 2 and "missing.pgn: no such file" in err and not out.exists()
    empty = tmp_path / "empty.pgn"
    empty.write_text("")
    code, err = run([empty, "-o", out, "--engine", engine], capsys)
    assert code == 2 and "no PGN games found" in err
    binary = tmp_path / "binary.pgn"
    binary.write_bytes(b"\x00\x01\x02 not pgn")
    code, err = run([binary, "-o", out, "--engine", engine, "--overwrite"], capsys)
    assert code == 2 and "is not PGN" in err
    code, err = run([src, "-o", out, "--engine", tmp_path / "no-such-engine"], capsys)
    assert code == 2 and f"engine not found: {tmp_path / 'no-such-engine'}" in err
    code, err = run([src, "-o", out, "--engine", "stockfish-not-here"], capsys)
    assert code == 2 and "engine not found: stockfish-not-here (not on PATH" in err
    assert "Debian and Ubuntu: apt-get install stockfish" in err
    broken, _ = fake_engine(tmp_path, "exit")
    code, err = run([src, "-o", out, "--engine", broken], capsys)
    assert code == 2 and "exited with code 1" in err
    code, err = run([src, "-o", out, "--engine", engine, "--hash", "5000"], capsys)
    assert code == 2 and "takes 1..1024, not 5000" in err
    out.write_text("something\n")
    code, err = run([src, "-o", out, "--engine", engine], capsys)
    assert code == 2 and "exists: --resume continues it, --overwrite replaces it" in err
    assert out.read_text() == "something\n"
    code, err = run([src, "--engine", engine, "--resume"], capsys)
    assert code == 2 and "--resume needs -o OUTPUT" in err
    assert_no_leftovers()


def test_stdout_and_engine_options(tmp_path, capsys):
    engine, log = fake_engine(tmp_path)
    src = tmp_path / "g.pgn"
    src.write_text(SHORT)
    code = main([str(src), "--engine", engine, "--threads", "2", "--hash", "32", "--option", "Style=Risky",
                 "--depth", "7", "-q"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert [g.headers["Event"] for g in read_games(out.encode())] == ["Fool's mate", "Scholar's mate",
                                                                      "Loyd's stalemate"]
    sent = log.read_text().splitlines()
    assert {"setoption name Threads value 2", "setoption name Hash value 32",
            "setoption name Style value Risky"} <= set(sent)
    assert "go depth 7" in sent and sent.count("ucinewgame") == 3


def test_ctrl_c_writes_the_finished_games_and_exits_130(tmp_path):
    src = first_games(shared(*G2023), 6, tmp_path)
    engine, log = fake_engine(tmp_path, "slow", "--after", "150")
    out = tmp_path / "out.pgn"
    proc = subprocess.Popen([sys.executable, "-m", "fastpgn.cli.analyse", str(src), "-o", str(out), "--engine", engine],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\ngo ") > 150:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    written = int(err.split("interrupted; ")[1].split(" game")[0])
    text = out.read_bytes()
    assert complete_games(text)[:2] == (written, len(text))
    assert 1 <= len(list(read_games(text))) == written < 6
    assert_no_leftovers(log)
