"""fastpgn.engine: the UCI conversation with a real engine (Debian's stockfish) and with a scripted fake.

The stockfish tests skip with the install line when it is absent; the fault
tests drive tests/fake_engine.py and always run. Every fault must end in its
documented error with no engine process and no reader thread left.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import sys
import threading
import time

import pytest

from fastpgn.board import Board
from fastpgn.engine import Engine, EngineError, EngineNotFoundError, EngineTimeoutError, Info, Option, Score
from fastpgn.errors import IllegalMoveError, PGNError
from helpers import FAKE_ENGINE as FAKE, ROOT, stockfish


@pytest.fixture(scope="module")
def stockfish_path():
    return stockfish()


@pytest.fixture
def sf(stockfish_path):
    with Engine.run(stockfish_path, {"Threads": 1, "Hash": 16}) as engine:
        yield engine
    assert_gone(engine)


def fake(mode="ok", *extra, log=None):
    argv = [sys.executable, FAKE, "--mode", mode, *extra]
    if log is not None:
        argv += ["--log", str(log)]
    return argv


def engine_threads():
    return [t for t in threading.enumerate() if t.name.startswith("fastpgn-engine")]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def assert_gone(engine: Engine) -> None:
    """No process, no process group and no reader thread left behind by ``engine``."""
    assert engine.closed
    assert engine.returncode is not None
    for _ in range(100):
        if not group_alive(engine.pid):
            break
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{engine.pid}"), "the engine process is still there"
    assert not group_alive(engine.pid), "a process of the engine's group is still there"
    assert not engine_threads(), engine_threads()


# ---------------------------------------------------------------- values (no engine needed)

@pytest.mark.parametrize("score, turn, text", [
    (Score(cp=33), "w", "0.33"), (Score(cp=-33), "b", "0.33"), (Score(cp=30), "w", "0.3"),
    (Score(cp=0), "b", "0.0"), (Score(cp=-5), "w", "-0.05"), (Score(cp=100), "w", "1.0"),
    (Score(cp=-1234), "w", "-12.34"), (Score(mate=3), "w", "#3"), (Score(mate=3), "b", "#-3"),
    (Score(mate=-2), "b", "#2"), (Score(mate=-1), "w", "#-1"),
])
def test_lichess_notation_from_whites_view(score, turn, text):
    assert score.white(turn).lichess() == text


def test_info_parse_reads_every_field_and_skips_junk():
    line = ("info depth 12 seldepth 18 multipv 1 score cp -31 upperbound wdl 10 900 90 nodes 123456 nps 999 "
            "hashfull 7 tbhits 0 time 125 pv e7e5 g1f3 b8c6")
    info = Info.parse(line, "b", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert (info.depth, info.seldepth, info.multipv, info.nodes, info.nps, info.time, info.hashfull) == \
        (12, 18, 1, 123456, 999, 125, 7)
    assert info.score == Score(cp=-31) and info.bound == "upperbound" and info.wdl == (10, 900, 90)
    assert info.white_score == Score(cp=31)
    assert info.pv == ("e7e5", "g1f3", "b8c6") and info.pv_san == ("e5", "Nf3", "Nc6")
    assert str(info) == line
    junk = Info.parse("info depth x score mate nodes 12 pv zz99 string hello there", "w")
    assert junk.depth is None and junk.score is None and junk.nodes == 12 and junk.pv == ()
    assert Info.parse("info string NNUE evaluation enabled").string == "NNUE evaluation enabled"


def test_pv_san_stops_at_an_illegal_move():
    info = Info.parse("info depth 2 score cp 5 pv e2e4 e2e4", "w", None)
    assert info.pv_san == ("e4",)


def test_engine_error_pickles_with_its_lines():
    exc = EngineError("engine x died", lines=["a", "b"])
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is EngineError and str(back) == "engine x died" and back.lines == ("a", "b")
    assert isinstance(exc, PGNError) and isinstance(EngineTimeoutError("t"), EngineError)


def test_engine_not_found_names_the_path():
    with pytest.raises(EngineNotFoundError, match="engine not found: /no/such/stockfish"):
        Engine.run("/no/such/stockfish")
    with pytest.raises(EngineNotFoundError, match=r"no-such-engine-zz \(not on PATH nor in /usr/games"):
        Engine.run("no-such-engine-zz")
    assert not engine_threads()


def test_a_file_that_is_not_a_program(tmp_path):
    text = tmp_path / "engine.txt"
    text.write_text("not a program")
    with pytest.raises(EngineError, match="cannot start engine .*engine.txt: not an executable program"):
        Engine.run(str(text))
    text.chmod(0o755)
    with pytest.raises(EngineError, match="cannot start engine .*engine.txt: Exec format error"):
        Engine.run(str(text))
    assert not engine_threads()


# ---------------------------------------------------------------- the real engine

def test_run_reads_id_and_options(sf):
    assert sf.name.startswith("Stockfish") and sf.author
    assert sf.options["Hash"] == Option("Hash", "spin", 16, 1, 33554432)
    assert sf.options["UCI_Chess960"] == Option("UCI_Chess960", "check", False)
    assert sf.options["Clear Hash"].type == "button"
    assert sf.options["Debug Log File"] == Option("Debug Log File", "string", "")
    assert sf.options["UCI_Elo"].min <= 1500 <= sf.options["UCI_Elo"].max
    sf.setoption("UCI_Elo", 1500)                      # as in Chess.jl's tutorial
    sf.setoption("uci_limitstrength", False)           # UCI option names match in any case
    sf.setoption("Clear Hash")
    assert sf.config["UCI_Elo"] == 1500 and sf.config["UCI_LimitStrength"] is False
    with pytest.raises(EngineError, match="takes 1350..2850, not 100"):
        sf.setoption("UCI_Elo", 100)
    with pytest.raises(EngineError, match="has no option 'Contempt'"):
        sf.setoption("Contempt", 10)
    sf.isready()


def test_mate_in_one(sf):
    sf.set_board(Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"))
    result = sf.search("go depth 10")
    assert (result.best, result.best_san, result.score, result.white_score.lichess()) == \
        ("a1a8", "Ra8#", Score(mate=1), "#1")
    sf.position("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1")
    result = sf.search(depth=10)
    assert (result.best_san, result.score, result.white_score.lichess()) == ("Ra1#", Score(mate=1), "#-1")


def test_mate_in_two(sf):
    sf.position("k7/8/2K5/8/8/8/8/7R w - - 0 1")
    result = sf.search("go depth 12")
    assert result.score == Score(mate=2) and result.white_score.lichess() == "#2"
    assert result.pv_san[-1].endswith("#") and len(result.pv) == 3
    sf.position("7r/8/8/8/8/2k5/8/K7 b - - 0 1")
    assert sf.search("go depth 12").white_score.lichess() == "#-2"


def test_a_royal_fork_at_modest_depth(sf):
    sf.position("r3k3/pp6/8/3N4/8/8/PP6/4K3 w - - 0 1")
    result = sf.search("go depth 10")
    assert result.best_san == "Nc7+" and result.pv_san[:3] == ("Nc7+", "Kd7", "Nxa8")
    assert result.score.cp > 50


def test_info_callback_sees_every_info_line(sf):
    seen = []
    sf.set_board(Board())
    result = sf.search("go depth 8", info=seen.append)
    depths = [i.depth for i in seen if i.score is not None]
    assert depths == sorted(depths) and depths[-1] == 8
    assert all(isinstance(i, Info) and str(i).startswith("info") for i in seen)
    last = result.info
    assert last is [i for i in seen if i.score is not None][-1]
    assert last.nodes > 0 and last.nps is not None and last.time is not None and last.seldepth >= 1
    assert last.pv[0] == result.best and len(last.pv_san) == len(last.pv)


def test_set_board_sends_the_moves_that_led_there(sf, tmp_path):
    board = Board()
    for san in "e4 e5 Nf3 Nc6 Bb5 a6 O-O".split():
        board.push_san(san)
    sf.set_board(board)
    assert sf.board == board
    result = sf.search(nodes=5000)
    assert board.parse_uci(result.best) in board.legal_moves()
    assert result.fen == board.fen()


def test_chess960_is_switched_on_and_off(stockfish_path, tmp_path):
    log = tmp_path / "log"
    with Engine.run(stockfish_path) as engine:
        board = Board("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", chess960=True)
        engine.set_board(board)
        assert engine.config["UCI_Chess960"] is True
        result = engine.search(nodes=5000)
        assert result.chess960 and board.parse_uci(result.best) in board.legal_moves()
        board.push_uci(result.best)
        engine.set_board(Board())
        assert engine.config["UCI_Chess960"] is False
        engine.search(depth=2)
    assert_gone(engine)
    del log


def test_chess960_castling_goes_as_king_takes_rook(tmp_path):
    log = tmp_path / "log"
    board = Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1", chess960=True)
    with Engine.run(fake("ok", log=log)) as engine:
        engine.set_board(board)
        engine.position(board.fen(), ["e1g1"], chess960=True)      # the standard spelling is accepted too
        engine.position(board.fen(), ["e1h1", "e8d8"], chess960=True)
    sent = log.read_text().splitlines()
    assert "setoption name UCI_Chess960 value true" in sent
    assert "position fen 4k3/8/8/8/8/8/8/4K2R w H - 0 1 moves e1h1" in sent
    assert "position fen 4k3/8/8/8/8/8/8/4K2R w H - 0 1 moves e1h1 e8d8" in sent


def test_newgame_and_quit(sf):
    sf.newgame()
    sf.position(moves=["e2e4"])
    assert sf.search(nodes=2000).best is not None
    assert sf.quit() == 0
    assert_gone(sf)
    with pytest.raises(EngineError, match="is closed"):
        sf.search(depth=1)


def test_search_needs_a_go_command_with_a_limit(sf):
    with pytest.raises(EngineError, match="needs a limit"):
        sf.search()
    with pytest.raises(EngineError, match="not 'position startpos'"):
        sf.search("position startpos")
    with pytest.raises(EngineError, match="never ends by itself"):
        sf.search("go infinite")
    with pytest.raises(IllegalMoveError):
        sf.position(moves=["e2e5"])
    assert sf.search(depth=3).best is not None


def test_infinite_search_with_a_timeout_is_stopped(sf):
    with pytest.raises(EngineTimeoutError, match="deadline .*: stopped"):
        sf.search("go infinite", timeout=0.3)
    assert sf.search(depth=3).best is not None         # still in step


def test_the_docs_examples_run(stockfish_path):
    """docs/engine.md's Python blocks, in order, in one namespace (the tutorial: run, options, board,
    search, quit)."""
    text = (ROOT / "docs" / "engine.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/engine.md", "exec"), namespace)
    assert namespace["sf"].closed and namespace["result"].best is not None
    assert not engine_threads()


# ---------------------------------------------------------------- faults, with the fake engine

def test_fake_engine_declares_its_options(tmp_path):
    log = tmp_path / "log"
    with Engine.run(fake(log=log)) as engine:
        assert engine.name == "Fake Engine 1.0"
        assert engine.options["Style"] == Option("Style", "combo", "Normal", vars=("Solid", "Normal", "Risky"))
        assert engine.options["Book File"].default == "my book.bin"
        engine.setoption("style", "risky")
        engine.setoption("Book File", "other book.bin")
        engine.setoption("Ponder", "true")
        with pytest.raises(EngineError, match="one of Solid, Normal, Risky"):
            engine.setoption("Style", "Wild")
        with pytest.raises(EngineError, match="true or false"):
            engine.setoption("Ponder", 3)
        with pytest.raises(EngineError, match="button"):
            engine.setoption("Clear Hash", 5)
        engine.newgame()
        engine.position(moves=["e2e4"])
        assert engine.search(depth=1).best == engine.board.uci(engine.board.legal_moves()[0])
    sent = log.read_text().splitlines()
    assert sent[1:3] == ["uci", "isready"]
    assert "setoption name Style value Risky" in sent
    assert "setoption name Book File value other book.bin" in sent
    assert sent[-5:] == ["ucinewgame", "isready", "position startpos moves e2e4", "go depth 1", "quit"]
    assert_gone(engine)


def test_engine_that_dies_mid_search():
    engine = Engine.run(fake("die", "--after", "1"))
    assert engine.search(depth=1).best is not None
    with pytest.raises(EngineError) as caught:
        engine.search(depth=1)
    message = str(caught.value)
    assert "exited with code 3 while searching (go depth 1)" in message
    assert "fatal: simulated crash in search" in message
    assert caught.value.lines[-1] == "fatal: simulated crash in search"
    assert_gone(engine)


def test_garbage_lines_are_ignored():
    with Engine.run(fake("garbage")) as engine:
        assert len(engine.options) == 7
        engine.isready()
        seen = []
        result = engine.search(depth=1, info=seen.append)
        assert result.best == "a2a3" or Board().parse_uci(result.best) in Board().legal_moves()
        assert result.score == Score(cp=12) and result.info.depth == 1
        assert any(i.string == "all fine here" for i in seen)
    assert_gone(engine)


@pytest.mark.parametrize("mode", ["hang", "hang-child"])
def test_search_past_its_deadline_is_killed_when_stop_is_ignored(mode):
    engine = Engine.run(fake(mode))
    engine.grace = 0.3
    started = time.monotonic()
    with pytest.raises(EngineTimeoutError, match=r"passed the search's 0.5 s deadline .*did not obey stop .*killed"):
        engine.search(depth=30, timeout=0.5)
    assert time.monotonic() - started < 5
    assert_gone(engine)


def test_search_past_its_deadline_is_stopped_and_the_engine_goes_on():
    engine = Engine.run(fake("slow"))
    with pytest.raises(EngineTimeoutError, match=r"deadline \(go depth 30\): stopped"):
        engine.search(depth=30, timeout=0.3)
    engine.isready()
    assert engine.quit() == 0
    assert_gone(engine)


def test_quit_kills_an_engine_that_does_not_leave():
    engine = Engine.run(fake("hang"))
    engine.grace = 0.2
    with pytest.raises(EngineTimeoutError):
        engine.search(depth=1, timeout=0.2)
    assert engine.returncode is not None and engine.returncode < 0
    assert_gone(engine)


def test_illegal_bestmove_raises():
    with Engine.run(fake("illegal")) as engine:
        engine.position(moves=["e2e4"])
        with pytest.raises(EngineError, match=r"answered bestmove e2e5, which is not legal in rnbqkbnr/"):
            engine.search(depth=1)
        engine.isready()                                 # the conversation is still in step
    assert_gone(engine)


@pytest.mark.parametrize("mode, said", [("none", "bestmove (none)"), ("null", "bestmove 0000")])
def test_no_bestmove_where_moves_are_legal_raises(mode, said):
    """``bestmove (none)`` or ``0000`` is an answer only in mate or stalemate; elsewhere it is an engine error
    naming the position (it passed silently as "no move")."""
    with Engine.run(fake(mode)) as engine:
        engine.position(moves=["e2e4"])
        fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        with pytest.raises(EngineError, match=re.escape(f"answered {said} in {fen}, a position with legal moves")):
            engine.search(depth=1)
        engine.isready()                                 # the conversation is still in step
        engine.position(moves=["f2f3", "e7e5", "g2g4", "d8h4"])     # fool's mate: no move to make
        result = engine.search(depth=1)
        assert result.best is None and result.ponder is None
    assert_gone(engine)


def test_engine_that_never_says_uciok():
    started = time.monotonic()
    with pytest.raises(EngineError, match=r"did not answer uci with uciok within 0.5 s; it wrote nothing"):
        Engine.run(fake("no-uciok"), timeout=0.5)
    assert time.monotonic() - started < 5
    assert not engine_threads()


def test_engine_that_exits_at_start():
    with pytest.raises(EngineError, match=r"exited with code 1 while uci; its last lines: error: cannot open"):
        Engine.run(fake("exit"))
    assert not engine_threads()


def test_callback_that_raises_leaves_the_engine_in_step():
    with Engine.run(fake()) as engine:
        def boom(info):
            raise ValueError("boom")

        with pytest.raises(ValueError, match="boom"):
            engine.search(depth=1, info=boom)
        assert engine.search(depth=1).score == Score(cp=12)
    assert_gone(engine)


def test_a_forgotten_engine_is_killed_when_collected():
    engine = Engine.run(fake())
    pid = engine.pid
    reader = engine._reader
    del engine
    gc.collect()
    reader.join(5)
    assert not reader.is_alive()
    for _ in range(100):
        if not os.path.exists(f"/proc/{pid}"):
            break
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{pid}")
