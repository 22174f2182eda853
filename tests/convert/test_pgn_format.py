"""``--format pgn``: an extract, each kept game exactly as the input holds it.

The games of a filtered run, re-read by fastpgn and by python-chess (a
test-only oracle), are the input's games the filter keeps, byte for byte per
game, whatever the chunks, the workers, several inputs at once or a kill
and ``--resume``; ``--validate`` keeps only the games that replay; rejected
games go to the rejected-games file, and the counts reconcile.
"""

from __future__ import annotations

import gzip
import io
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fastpgn import read_games
from fastpgn.cli import main
from helpers import ENV, big_input, chunk_files, game_texts, shared, signal_after_chunks

chess_pgn = pytest.importorskip("chess.pgn")

DUMP = "lichess_db_standard_rated_2022-06.head2499.pgn.zst"
OLD = "lichess_db_standard_rated_2013-01.head348.pgn.zst"


def _blitz_2000(text: str) -> bool:
    """The filter --min-elo 2000 --speed blitz, decided on python-chess's reading of a game's headers."""
    headers = chess_pgn.read_headers(io.StringIO(text))
    elos = [headers.get("WhiteElo", ""), headers.get("BlackElo", "")]
    base, _, inc = headers.get("TimeControl", "").partition("+")
    return (all(e.isdigit() and int(e) >= 2000 for e in elos) and base.isdigit() and inc.isdigit()
            and 180 <= int(base) + 40 * int(inc) < 480)


def _python_chess(text: str) -> list[str]:
    stream = io.StringIO(text)
    games = []
    while (game := chess_pgn.read_game(stream)) is not None:
        games.append(str(game))
    return games


def _chunks_text(out: Path) -> str:
    files = [f for f in chunk_files(out) if f.name.endswith(".pgn.gz")]
    assert files
    return "".join(gzip.decompress(f.read_bytes()).decode() for f in files)


def _assert_the_same_games(written: str, wanted: list[str]) -> None:
    # byte for byte per game: lichess writes one blank line after each game, as the extract does
    assert written == "".join(wanted)
    assert [g.to_pgn() + "\n" for g in read_games(written.encode())] == wanted
    assert _python_chess(written) == _python_chess("".join(wanted))


def test_an_extract_by_filter_is_the_inputs_games_byte_for_byte(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    out = tmp_path / "out"
    assert main([str(src), "50", "-o", str(out), "-q", "-j", "2", "--format", "pgn", "--min-elo", "2000",
                 "--speed", "blitz"]) == 0
    wanted = [t for t in game_texts(src) if _blitz_2000(t)]
    assert 50 < len(wanted) < 2499 / 5
    assert all(len(list(read_games(f))) == 50 for f in chunk_files(out)[:-1])
    _assert_the_same_games(_chunks_text(out), wanted)


def test_the_same_extract_for_any_jobs_and_to_stdout(tmp_path):
    src = shared("data", "lichess-db", DUMP)
    args = [str(src), "--format", "pgn", "--min-elo", "2000", "--speed", "blitz"]
    one = tmp_path / "one"
    assert main([args[0], "40", *args[1:], "-o", str(one), "-q", "-j", "1"]) == 0
    many = tmp_path / "many"
    assert main([args[0], "40", *args[1:], "-o", str(many), "-q", "-j", "3"]) == 0
    assert [f.read_bytes() for f in chunk_files(one)] == [f.read_bytes() for f in chunk_files(many)]
    proc = subprocess.run([sys.executable, "-m", "fastpgn", *args, "-o", "-", "-j", "2"], env=ENV,
                          capture_output=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == _chunks_text(one)


def test_a_crlf_input_stays_crlf_and_a_game_of_tags_alone_gets_its_result(tmp_path):
    # The blank line after each game in the game's own line end; a game of tags alone written with its
    # result as movetext, so python-chess reads it as a game apart, not as the tags of the next one.
    texts = game_texts(shared("data", "lichess-db", DUMP))[:6]
    alone = texts[2][:texts[2].index("\n\n") + 1]
    src = tmp_path / "crlf.pgn"
    src.write_bytes("".join(texts[:3] + [alone + "\n"] + texts[3:]).replace("\n", "\r\n").encode())
    proc = subprocess.run([sys.executable, "-m", "fastpgn", str(src), "--format", "pgn", "-o", "-"], env=ENV,
                          capture_output=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = chess_pgn.read_headers(io.StringIO(alone))["Result"]
    wanted = texts[:3] + [alone + "\n" + result + "\n\n"] + texts[3:]
    assert proc.stdout == "".join(wanted).replace("\n", "\r\n").encode()
    back = _python_chess(proc.stdout.decode())
    assert len(back) == 7 and back[3] == str(chess_pgn.read_game(io.StringIO(alone)))


def test_limit_and_many_inputs(tmp_path):
    old, new = shared("data", "lichess-db", OLD), shared("data", "lichess-db", DUMP)
    out = tmp_path / "out"
    assert main([str(old), str(new), "100", "-o", str(out), "-q", "--format", "pgn", "--limit", "120"]) == 0
    for src in (old, new):
        files = sorted(out.glob(f"{src.name}.part_*.pgn.gz"))
        text = "".join(gzip.decompress(f.read_bytes()).decode() for f in files)
        _assert_the_same_games(text, game_texts(src)[:120])


def test_validate_keeps_the_games_that_replay_and_rejects_the_rest(tmp_path):
    pgn = tmp_path / "games.pgn"
    games = [b'[White "a"]\n\n1. e4 {ok} e5 (1... c5) $1 *\n', b'[White "b"]\n\n1. e4 Ke7 *\n',
             b'[White "c"]\n\n1. d4 { unterminated *\n', b'[White "d"]\n\n1. O\xe2\x80\x93O *\n',
             b'[White "e"]\r\n\r\n1. Nf3 d5\r\n']
    pgn.write_bytes(b"\n".join(games))
    out = tmp_path / "out"
    assert main([str(pgn), "10", "-o", str(out), "-q", "--format", "pgn", "--validate"]) == 0
    assert _chunks_text(out).encode() == games[0] + b"\n" + games[4] + b"\r\n"     # (each game's own line end)
    rejected = (out / "_games.pgn.rejected.pgn").read_bytes()
    assert b'[White "b"]' in rejected and b'[White "c"]' in rejected and b'[White "d"]' in rejected
    # without --validate only the game the grammar cannot read is rejected
    plain = tmp_path / "plain"
    assert main([str(pgn), "10", "-o", str(plain), "-q", "--format", "pgn"]) == 0
    assert [g.headers["White"] for g in read_games(_chunks_text(plain).encode())] == ["a", "b", "d", "e"]
    with pytest.raises(SystemExit) as usage:
        main([str(pgn), "10", "-o", str(tmp_path / "uci"), "-q", "--format", "pgn", "--uci"])
    assert usage.value.code == 2


def test_killed_then_resume_is_identical(tmp_path):
    src = big_input(tmp_path, shared("data", "lichess-db", DUMP), copies=4)
    ref = tmp_path / "reference"
    args = ["400", "-j", "2", "-q", "--format", "pgn", "--min-elo", "1500"]
    assert main([str(src), *args, "-o", str(ref)]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fastpgn", str(src), *args, "-o", str(out)]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE)
    signal_after_chunks(proc, out / ".big.pgn.fastpgn-state.json", 2, signal.SIGKILL)
    for f in chunk_files(out):
        assert f.read_bytes() == (ref / f.name).read_bytes()
    done = subprocess.run(cmd + ["--resume"], env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert [f.read_bytes() for f in chunk_files(out)] == [f.read_bytes() for f in chunk_files(ref)]
    wanted = [t for t in game_texts(shared("data", "lichess-db", DUMP))
              if all(e.isdigit() and int(e) >= 1500 for e in
                     (chess_pgn.read_headers(io.StringIO(t)).get(k, "") for k in ("WhiteElo", "BlackElo")))] * 4
    assert _chunks_text(out) == "".join(wanted)
