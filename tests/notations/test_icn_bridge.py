"""Standard games between PGN and ICN (fastpgn.notations.icn_pgn, ``python -m fastpgn icn``).

python-chess is the oracle for squares, moves and positions; the upstream
converter's own output (FormatConverter.js, in the shared conformance folder
001-icn) for the standard start; every game of the shared lichess-db files for
the round trip.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tracemalloc

import chess
import chess.pgn
import pytest

from fastpgn import cli
from fastpgn.board import canonical_san
from fastpgn.cli import icn as icn_cli
from fastpgn.errors import FormatError, IllegalMoveError, InputError
from fastpgn.notations import icn, icn_pgn
from fastpgn.reader import read_games
from helpers import DATA, ROOT, shared

ICN_DIR = ("conformance", "001-icn")
ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")

# White castles short, Black long, an en passant capture, a promotion with
# capture for each side (Black's an underpromotion); checked below.
FEATURES = ('[Event "features"]\n[White "W"]\n[Black "B"]\n[Result "*"]\n\n'
            "1. e4 d5 2. e5 f5 3. exf6 Nc6 4. fxg7 Nh6 5. Nf3 Qd6 6. Bc4 Bd7 7. O-O O-O-O "
            "8. gxf8=Q Rhxf8 9. a3 d4 10. a4 d3 11. a5 dxc2 12. Qe2 cxb1=N 13. Rxb1 e5 *\n")


def one_game(text: str):
    return next(iter(read_games(text.encode())))


def run_main(argv, capsys):
    code = icn_cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def chess_games(pgn: str) -> list[chess.pgn.Game]:
    stream, games = io.StringIO(pgn), []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


def icn_of(move: chess.Move, white: bool) -> str:
    """The ICN of a python-chess move: file index + 1, rank index + 1."""
    text = (f"{chess.square_file(move.from_square) + 1},{chess.square_rank(move.from_square) + 1}>"
            f"{chess.square_file(move.to_square) + 1},{chess.square_rank(move.to_square) + 1}")
    if move.promotion:
        letter = chess.piece_symbol(move.promotion)
        text += letter.upper() if white else letter
    return text


def expected_tags(game) -> dict:
    """The tags a round trip must give back: the original's, the roster completed with '?'."""
    tags = dict(game.headers)
    for name in ROSTER:
        tags.setdefault(name, game.result if name == "Result" else "?")
    return tags


# ---------------------------------------------------------------- PGN -> ICN

def test_standard_start_is_what_upstream_writes_for_the_classical_position():
    spec = shared(*ICN_DIR, "readme_classical_start_position.icn").read_text(encoding="utf-8")
    cases = json.loads(shared(*ICN_DIR, "icn_conformance_cases.generated.json").read_text(encoding="utf-8"))
    upstream = next(c["output"] for c in cases
                    if c["fn"] == "LongToShort_Format(ShortToLong_Format(x))" and c["input"] == spec)
    # Upstream writes a blank line for its empty tag section; a game without tags has none.
    assert icn_pgn.game_to_short(one_game("*\n")) == upstream.lstrip("\n")
    long = icn_pgn.game_to_long(one_game("*\n"))
    parsed = icn.short_to_long(spec)
    for key in ("turn", "moveRule", "fullMove", "gameRules", "startingPosition", "specialRights"):
        assert long[key] == parsed[key], key
    assert long["specialRights"] == icn.generate_special_rights(long["startingPosition"], True, "rooks")


def test_moves_map_files_and_ranks_castling_en_passant_and_promotions():
    oracle = chess_games(FEATURES)[0]
    board, seen = oracle.board(), set()
    expected = []
    for move in oracle.mainline_moves():
        white = board.turn == chess.WHITE
        if board.is_castling(move):
            seen.add("O-O" if chess.square_file(move.to_square) == 6 else "O-O-O")
        if board.is_en_passant(move):
            seen.add("ep")
        if move.promotion:
            seen.add("promotion " + ("white" if white else "black"))
        expected.append(icn_of(move, white))
        board.push(move)
    assert seen == {"O-O", "O-O-O", "ep", "promotion white", "promotion black"}
    long = icn_pgn.game_to_long(one_game(FEATURES))
    assert long["moves"] == expected
    assert "5,1>7,1" in expected and "5,8>3,8" in expected  # castling is the king's move
    assert long["metadata"] == {"Event": "features", "White": "W", "Black": "B", "Result": "*"}


def test_short_and_long_forms_are_the_same_game():
    game = one_game(FEATURES)
    short = icn_pgn.game_to_short(game)
    assert "\n" not in short
    assert icn.short_to_long(short) == icn_pgn.game_to_long(game)
    [line] = icn_pgn.pgn_to_icn([game], form="long")
    assert json.loads(line) == icn.short_to_long(short)


def random_games(count: int, seed: int) -> list[tuple[str, chess.Board]]:
    """PGN of random legal games (python-chess) from positions with partial castling
    rights, a legal en passant capture, Black to move, pawns about to promote."""
    starts = ["r3k2r/pPp3pp/8/3pP3/8/8/PPP3PP/R3K2R w Kq d6 0 12",
              "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 40",
              "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1",
              chess.STARTING_FEN]
    rng, out = random.Random(seed), []
    for i in range(count):
        board = chess.Board(starts[i % len(starts)])
        for _ in range(rng.randrange(0, 50)):
            if board.is_game_over():
                break
            board.push(rng.choice(list(board.legal_moves)))
        game = chess.pgn.Game.from_board(board)
        game.headers["Event"] = f"random {i}"
        out.append((str(game), board))
    return out


def test_fen_starts_carry_turn_en_passant_clocks_and_special_rights():
    game = one_game('[FEN "r3k2r/pPp3pp/8/3pP3/8/8/PPP3PP/R3K2R w Kq d6 5 12"]\n[SetUp "1"]\n\nexd6 *\n')
    long = icn_pgn.game_to_long(game)
    oracle = chess.Board("r3k2r/pPp3pp/8/3pP3/8/8/PPP3PP/R3K2R w Kq d6 5 12")
    assert long["turn"] == "white" and long["fullMove"] == 12 and long["moveRule"] == "5/100"
    assert long["enpassant"] == [chess.square_file(oracle.ep_square) + 1, chess.square_rank(oracle.ep_square) + 1]
    pieces = {f"{chess.square_file(s) + 1},{chess.square_rank(s) + 1}": p for s, p in oracle.piece_map().items()}
    assert {k: icn.PIECE_CODES[v] for k, v in long["startingPosition"].items()} == \
        {k: p.symbol() for k, p in pieces.items()}
    home = {k for k, p in pieces.items() if p.symbol() == "P" and k.endswith(",2")
            or p.symbol() == "p" and k.endswith(",7")}
    castling = {f"{chess.square_file(s) + 1},{chess.square_rank(s) + 1}"
                for s in chess.SquareSet(oracle.castling_rights)}
    kings = {k for k, p in pieces.items() if p.symbol() == "K"} | {k for k, p in pieces.items() if p.symbol() == "k"}
    assert set(long["specialRights"]) == home | castling | kings
    assert castling == {"8,1", "1,8"}  # Kq: h1 and a8 rooks, not a1 and h8
    assert long["metadata"]["FEN"] == "r3k2r/pPp3pp/8/3pP3/8/8/PPP3PP/R3K2R w Kq d6 5 12"


def test_random_games_from_fen_starts_round_trip():
    games = random_games(80, seed=6)
    pgn = "\n\n".join(text for text, _ in games)
    lines = list(icn_pgn.pgn_to_icn(read_games(pgn.encode())))
    back = chess_games("\n".join(icn_pgn.icn_to_pgn(lines)))
    assert len(back) == len(games)
    for (text, board), game in zip(games, back):
        assert list(game.mainline_moves()) == board.move_stack, text
        assert dict(game.headers) == dict(chess.pgn.read_game(io.StringIO(text)).headers)


def test_games_that_have_no_icn_are_rejected_with_the_game_named():
    pgn = ('[Variant "Chess960"]\n'
           '[FEN "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"]\n\n9. g3 *\n\n'
           '[Variant "Atomic"]\n\n1. e4 *\n\n'
           '[Event "a \\"quoted\\"] name"]\n\n1. e4 *\n\n'
           '[Event "illegal"]\n\n1. e4 e5 2. Ke3 *\n\n'
           '[Event "fine"]\n\n1. d4 *\n')
    errors = []
    lines = list(icn_pgn.pgn_to_icn(read_games(pgn.encode()), on_error=errors.append))
    assert [icn.short_to_long(line)["metadata"]["Event"] for line in lines] == ["fine"]
    assert [e.game for e in errors] == [1, 2, 3, 4]
    assert "Chess960" in str(errors[0]) and "two-square" in str(errors[0])
    assert "'Atomic' is not standard chess" in str(errors[1])
    assert 'a quote followed by "]"' in str(errors[2])
    assert isinstance(errors[3], IllegalMoveError) and "Ke3" in str(errors[3])
    with pytest.raises(FormatError, match=r"^no ICN: variant 'Chess960'.*\(PGN byte 0, game 1\)$"):
        list(icn_pgn.pgn_to_icn(read_games(pgn.encode())))


def test_quotes_and_brackets_in_tag_values_survive():
    pgn = '[Event "A [nested] \\"name\\""]\n[White "x]"]\n\n1. e4 1-0\n'
    game = one_game(pgn)
    assert game.headers["Event"] == 'A [nested] "name"'
    back = one_game(icn_pgn.short_to_pgn(icn_pgn.game_to_short(game)))
    assert back.headers == expected_tags(game)


def test_a_result_only_in_the_movetext_is_kept():
    game = one_game('[Event "x"]\n\n1. e4 e5 0-1\n')
    back = one_game(icn_pgn.short_to_pgn(icn_pgn.game_to_short(game)))
    assert back.headers["Result"] == "0-1" and back.moves == ["e4", "e5"]


# ---------------------------------------------------------------- round trip on the corpus

def _lichess_files() -> list:
    folder = DATA / "lichess-db"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else ["absent"]


@pytest.mark.parametrize("name", _lichess_files())
def test_round_trip_keeps_moves_and_tags_of_every_lichess_game(name):
    """Every file, every game, both forms. The file named 'truncated' is an intact
    bzip2 stream whose last game was cut off inside its tags: the reader rejects
    that game and reports the damage; every game before it takes part."""
    path = shared("data", "lichess-db", name)
    reader = read_games(path, errors="skip")
    games = []
    try:
        games.extend(reader)
    except InputError as exc:
        assert "truncated" in name and "ends inside the tags of its last game" in str(exc)
        assert [r.number for r in reader.rejected] == [len(games) + 1]
    else:
        assert not reader.rejected
    assert games
    moves = [canonical_san(" ".join(g.moves)).split() for g in games]
    for form in ("short", "long"):
        lines = list(icn_pgn.pgn_to_icn(games, form=form))
        assert len(lines) == len(games) and all("\n" not in line for line in lines)
        pgn = "\n".join(icn_pgn.icn_to_pgn(lines, form=form))
        back = list(read_games(pgn.encode()))
        assert len(back) == len(games)
        for game, again, sans in zip(games, back, moves):
            assert again.headers == expected_tags(game), (form, game.number)
            assert again.moves == sans, (form, game.number)
    if len(games) <= 400:  # an oracle that is not fastpgn, on the smaller files
        for game, oracle in zip(games, chess_games(pgn)):
            board = chess.Board()
            original = [board.push_san(m.rstrip("?!")).uci() for m in game.moves]
            assert [m.uci() for m in oracle.mainline_moves()] == original
            assert dict(oracle.headers) == expected_tags(game)


# ---------------------------------------------------------------- ICN -> PGN

def test_spec_start_and_first_move_to_pgn():
    start = shared(*ICN_DIR, "readme_classical_start_position.icn").read_text(encoding="utf-8")
    assert icn_pgn.short_to_pgn(start).endswith("\n\n*\n")
    assert "FEN" not in icn_pgn.short_to_pgn(start)
    after = shared(*ICN_DIR, "readme_classical_after_first_move_4_2-4_4.icn").read_text(encoding="utf-8")
    oracle = chess.Board()
    oracle.push_san("d4")
    assert f'[FEN "{oracle.fen()}"]' in icn_pgn.short_to_pgn(after)


def test_spec_game_has_no_pgn_and_the_error_names_the_first_move_off_the_board():
    text = shared(*ICN_DIR, "readme_game_compact_version.icn").read_text(encoding="utf-8")
    moves = text.split("\n")[1].split("|")
    index, bad = next((i, m) for i, m in enumerate(moves, 1)
                      if any(not 1 <= int(v) <= 8 for v in m.replace(">", ",").split(",")))
    with pytest.raises(FormatError) as err:
        icn_pgn.short_to_pgn(text)
    assert str(err.value) == f"no PGN: move {index} ({bad}) leaves the 8x8 board"


@pytest.mark.parametrize("text, reason", [
    ("w K5,1|k5,8|HA1,7", "piece HA on 1,7 (hawksW) is not a chess piece"),
    ("w K5,1|k5,8|ob4,4", "piece ob on 4,4 (obstaclesN) is not a chess piece"),
    ("w K5,1|k5,8|q2,-2", "piece q on 2,-2 is off the 8x8 board"),
    ("w K5,1|k5,8|P1,7 1,7>1,8AM", "move 1 (1,7>1,8AM) promotes to AM, not a chess piece"),
    ("w K5,1|k5,8|P1,7 1,7>1,8q", "move 1 (1,7>1,8q) promotes to a black piece on White's move"),
    ("w K5,1+|N8,1+|k5,8 5,1>7,1", "move 1 (5,1>7,1) is not a legal chess move"),
    ("w K5,1|k5,8|P3,3+ 3,3>3,5", "move 1 (3,3>3,5) is not a legal chess move"),
    ("w K5,1|k5,8|P3,7 5,1>5,2|5,8>5,7|3,7>3,8", "move 3 (3,7>3,8) is not a legal chess move"),
    ("w K5,1|k5,8|K4,4", "the piece list is not a legal chess position: FEN has 2 white kings"),
    ("w K5,1|k5,8|Q5,4", "the piece list is not a legal chess position"),
    ("threecheck K5,1|k5,8", "white wins by threecheck, not by checkmate alone"),
    ("(checkmate|allpiecescaptured) K5,1|k5,8", "black wins by allpiecescaptured"),
    ("w 0/100 (8|1)", "no piece list"),
    ('[Date/Time "x"] K5,1|k5,8', "metadata 'Date/Time' cannot be a PGN tag name"),
    ('[Result "White"] K5,1|k5,8', "Result 'White' is not a PGN result"),
])
def test_games_that_are_not_chess_have_no_pgn(text, reason):
    with pytest.raises(FormatError, match="^no PGN: " + re.escape(reason)):
        icn_pgn.short_to_pgn(text)


def test_extra_rules_and_the_move_rule_limit_are_dropped():
    pgn = icn_pgn.short_to_pgn('{"slideLimit": 3} b 7/50 12 K5,1|k5,8 5,8>5,7')
    assert '[FEN "4k3/8/8/8/8/8/8/4K3 b - - 7 12"]' in pgn and pgn.endswith("12... Ke7 *\n")


def test_a_fen_in_the_metadata_is_kept_when_it_is_the_position_and_replaced_otherwise():
    same = '[FEN "4k3/8/8/8/8/8/8/4K3 w - -"] [SetUp "1"] K5,1|k5,8 5,1>5,2'
    assert '[FEN "4k3/8/8/8/8/8/8/4K3 w - -"]' in icn_pgn.short_to_pgn(same)
    other = '[FEN "4k3/8/8/8/8/8/8/3K4 w - - 0 1"] [SetUp "1"] K5,1|k5,8 5,1>5,2'
    pgn = icn_pgn.short_to_pgn(other)
    assert '[FEN "4k3/8/8/8/8/8/8/4K3 w - - 0 1"]' in pgn and pgn.count("[FEN") == 1
    assert pgn.count("[SetUp") == 1


def test_move_objects_of_the_legacy_long_form():
    obj = {"metadata": {"White": "Tom"}, "turn": "white",
           "startingPosition": {"5,1": "kingsW", "5,8": "kingsB", "1,7": "pawnsW"},
           "moves": [{"type": "pawnsW", "startCoords": [1, 7], "endCoords": [1, 8], "promotion": "rooksW"},
                     {"type": "kingsB", "startCoords": "5,8", "endCoords": "5,7"}]}
    assert icn_pgn.long_to_pgn(obj).endswith("\n\n1. a8=R+ Ke7 *\n")


def test_malformed_icn_names_game_line_and_column():
    lines = ["w K5,1|k5,8 5,1>5,2", "", "w K5,1|k5,8 5,1>5,2 %", "w K5,1|k5,8 5,1>5,2"]
    errors = []
    out = list(icn_pgn.icn_to_pgn(lines, on_error=errors.append))
    assert len(out) == 2
    [error] = errors
    assert (error.game, error.line, error.column) == (2, 3, lines[2].index("%") + 1)
    assert str(error) == f"unexpected character '%' in the moves (game 2, line 3, column {lines[2].index('%') + 1})"
    bad_json = '{"turn": white}'
    with pytest.raises(FormatError, match=rf"\(game 1, line 1, column {bad_json.index('white') + 1}\)"):
        list(icn_pgn.icn_to_pgn([bad_json], form="long"))


# ---------------------------------------------------------------- streaming

def test_conversions_pull_one_game_per_game_written_from_endless_input():
    game = one_game(FEATURES)
    pulled = 0

    def endless_games():
        nonlocal pulled
        while True:
            pulled += 1
            yield game

    out = icn_pgn.pgn_to_icn(endless_games())
    assert len(list(itertools.islice(out, 500))) == 500 and pulled == 500
    line = icn_pgn.game_to_short(game)
    pulled_lines = 0

    def endless_lines():
        nonlocal pulled_lines
        while True:
            pulled_lines += 1
            yield line

    back = icn_pgn.icn_to_pgn(endless_lines())
    assert len(list(itertools.islice(back, 300))) == 300 and pulled_lines == 300


def test_the_command_streams_an_endless_pipe(tmp_path):
    """An endless PGN stream through the command and `head`: only streaming can end."""
    producer = ("import sys\ngame = " + repr(FEATURES.encode()) + " + b'\\n'\n"
                "try:\n    while True:\n        sys.stdout.buffer.write(game)\n"
                "except (BrokenPipeError, OSError):\n    pass\n")
    (tmp_path / "producer.py").write_text(producer)
    command = (f'"{sys.executable}" "{tmp_path / "producer.py"}" | '
               f'"{sys.executable}" -m fastpgn icn - -q | head -n 3')
    proc = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    assert all(icn.short_to_long(line)["metadata"]["Event"] == "features" for line in lines)


def _peak(argv) -> int:
    tracemalloc.start()
    try:
        assert icn_cli.main(argv) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_from_1000_to_4000_games(tmp_path, monkeypatch):
    # 10 kB a game: 4000 games are 40 MB in and 40 MB out, forty read blocks;
    # holding the games or the output would add that to the peak. The reader's
    # two workers (two cores, as CI's) hold a few blocks at once: ten blocks
    # fill them, so the smaller run is at its bound too.
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    game = '[Event "big"]\n[Annotator "' + "x" * 10_000 + '"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n'
    peaks = {}
    for n in (1000, 4000):
        pgn, out, back = tmp_path / f"{n}.pgn", tmp_path / f"{n}.icn", tmp_path / f"{n}.back.pgn"
        pgn.write_text(game * n)
        peaks[n] = (_peak([str(pgn), "-o", str(out), "-q"]),
                    _peak(["--to-pgn", str(out), "-o", str(back), "-q"]))
        assert back.read_text().count("[Event ") == n
    for small, large in zip(peaks[1000], peaks[4000]):
        assert large < small * 1.25 + (1 << 20), peaks


# ---------------------------------------------------------------- command line

def test_cli_to_icn_and_back_with_files(tmp_path, capsys):
    pgn = tmp_path / "games.pgn"
    pgn.write_text(FEATURES + "\n" + '[Event "second"]\n\n1. d4 d5 1/2-1/2\n')
    code, out, err = run_main([str(pgn), "-o", str(tmp_path / "games.icn")], capsys)
    assert (code, out, err) == (0, "", "icn: 2 games read, 2 written, 0 rejected\n")
    lines = (tmp_path / "games.icn").read_text().splitlines()
    assert [icn.short_to_long(line) for line in lines] == [icn_pgn.game_to_long(g) for g in read_games(pgn)]
    code, out, err = run_main(["--to-pgn", str(tmp_path / "games.icn"), "-q"], capsys)
    assert (code, err) == (0, "")
    assert [list(g.mainline_moves()) for g in chess_games(out)] == \
        [list(g.mainline_moves()) for g in chess_games(pgn.read_text())]


def test_cli_json_lines_both_ways(tmp_path, capsys):
    pgn = tmp_path / "games.pgn"
    pgn.write_text(FEATURES)
    code, out, err = run_main([str(pgn), "--json", "-q"], capsys)
    assert (code, err) == (0, "")
    [line] = out.splitlines()
    assert json.loads(line) == icn.short_to_long(icn_pgn.game_to_short(one_game(FEATURES)))
    (tmp_path / "games.jsonl").write_text(out)
    code, out, err = run_main(["--to-pgn", "--json", str(tmp_path / "games.jsonl"), "-q"], capsys)
    assert code == 0 and out == icn_pgn.short_to_pgn(icn_pgn.game_to_short(one_game(FEATURES))) + "\n"


def test_cli_reads_compressed_icn(tmp_path, capsys):
    line = icn_pgn.game_to_short(one_game(FEATURES))
    (tmp_path / "games.icn.gz").write_bytes(gzip.compress(((line + "\r\n") * 3).encode()))
    code, out, err = run_main(["--to-pgn", str(tmp_path / "games.icn.gz")], capsys)
    assert code == 0 and out.count('[Event "features"]') == 3
    assert err == "icn --to-pgn: 3 games read, 3 written, 0 rejected\n"


def test_cli_reports_bad_games_and_goes_on(tmp_path, capsys):
    (tmp_path / "x.pgn").write_text('[Variant "Atomic"]\n\n1. e4 *\n\n[Event "ok"]\n\n1. e4 *\n\n'
                                    '[Event "broken"]\n\n1. e4 {open\n\n[Event "ok2"]\n\n1. d4 *\n')
    code, out, err = run_main([str(tmp_path / "x.pgn")], capsys)
    assert code == 0  # skipped games are reported and counted, and do not fail the run
    assert [icn.short_to_long(line)["metadata"]["Event"] for line in out.splitlines()] == ["ok", "ok2"]
    messages = err.splitlines()
    assert len(messages) == 3
    assert "game 1" in messages[0] and "Atomic" in messages[0]
    assert "game 3" in messages[1]
    assert messages[-1] == "icn: 4 games read, 2 written, 2 rejected"
    for stop in (["--errors", "raise"], ["--strict"]):
        code, out, err = run_main([str(tmp_path / "x.pgn"), *stop], capsys)
        assert (code, out) == (1, "")
        assert err.splitlines()[1:] == ["icn: 1 game read, 0 written, 1 rejected; "
                                        "stopped at the first bad game (--errors raise)"]


def test_cli_to_pgn_reports_the_game_line_and_column(tmp_path, capsys):
    good = "w K5,1|k5,8 5,1>5,2"
    (tmp_path / "x.icn").write_text(f"{good}\n\nw K5,1|k5,8 5,1>5,2 %\nw K5,1|k5,8|HA1,1\n{good}\n")
    code, out, err = run_main(["--to-pgn", str(tmp_path / "x.icn")], capsys)
    assert code == 0 and out.count("1. Ke2 *") == 2
    assert err.splitlines() == [
        f"{tmp_path / 'x.icn'}: unexpected character '%' in the moves (game 2, line 3, column 21)",
        f"{tmp_path / 'x.icn'}: no PGN: piece HA on 1,1 (hawksW) is not a chess piece (game 3, line 4)",
        "icn --to-pgn: 4 games read, 2 written, 2 rejected"]
    code, out, err = run_main(["--to-pgn", str(tmp_path / "x.icn"), "--errors", "raise"], capsys)
    assert code == 1 and out.count("1. Ke2 *") == 1 and "game 2" in err
    code, out, err = run_main(["--to-pgn", "--lenient", str(tmp_path / "x.icn"), "-q"], capsys)
    assert code == 0 and out.count("1. Ke2 *") == 3  # upstream's habit: drop the '%'
    assert err == f"{tmp_path / 'x.icn'}: no PGN: piece HA on 1,1 (hawksW) is not a chess piece (game 3, line 4)\n"


def test_cli_usage_and_input_errors(tmp_path, capsys):
    """Each failure is exit 2 and one line on stderr that names the file; OUT is left alone."""
    g = tmp_path / "g.pgn"
    g.write_text("1. e4 *\n")
    (tmp_path / "empty.pgn").write_bytes(b"")
    (tmp_path / "blank.icn").write_text("\n  \n")
    (tmp_path / "image.pgn").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "bad.icn").write_bytes(b"\nw K5,1|\xffk5,8\nw K5,1|k5,8\n")
    (tmp_path / "out.icn").write_text("kept\n")
    # ICN given without --to-pgn (its tags look like PGN's): refused, not one rejected game a line and exit 0.
    (tmp_path / "games.icn").write_text('[Event "x"] w K5,1|k5,8 5,1>5,2\n[Event "y"] w K5,1|k5,8 5,1>4,1\n')
    (tmp_path / "games.json").write_text(
        "".join(line + "\n" for line in icn_pgn.pgn_to_icn(read_games(b'[Event "x"]\n\n1. e4 *\n'), form="long")))
    assert icn_cli.main([]) == 2
    assert icn_cli.main(["--frobnicate", str(g)]) == 2
    assert icn_cli.main([str(g), "--lenient"]) == 2
    assert icn_cli.main([str(g), "--errors", "sometimes"]) == 2
    capsys.readouterr()
    for argv, message in [
        ([str(tmp_path / "missing.pgn")], f"{tmp_path / 'missing.pgn'}: no such file"),
        (["--to-pgn", str(tmp_path / "missing.icn")], f"{tmp_path / 'missing.icn'}: no such file"),
        ([str(tmp_path)], f"{tmp_path} is a folder, not a PGN file"),
        ([str(tmp_path / "empty.pgn")], f"{tmp_path / 'empty.pgn'}: no games found (empty or not PGN)"),
        (["--to-pgn", str(tmp_path / "blank.icn")], f"{tmp_path / 'blank.icn'}: no games found (the input is empty)"),
        ([str(tmp_path / "image.pgn")], f"{tmp_path / 'image.pgn'} is not PGN: binary data"),
        (["--to-pgn", str(tmp_path / "bad.icn")], f"{tmp_path / 'bad.icn'}: not UTF-8 text (line 2, column 8)"),
        ([str(g), "-o", str(g / "x.icn")], f"cannot write {g / 'x.icn'}: {g} is a file, not a folder"),
        ([str(g), "-o", str(g / "x" / "y.icn")], f"cannot write {g / 'x' / 'y.icn'}: Not a directory"),
        ([str(g), "-o", str(tmp_path)], f"cannot write {tmp_path}: Is a directory"),
        ([str(g), "-o", str(g)], f"refusing to overwrite the input {g}"),
        ([str(tmp_path / "games.icn")], f"{tmp_path / 'games.icn'}: its first line is an ICN game, not PGN: add "
                                        "--to-pgn to turn ICN back into PGN"),
        ([str(tmp_path / "games.json")], f"{tmp_path / 'games.json'}: its first line is an ICN game, not PGN: add "
                                         "--to-pgn --json to turn ICN back into PGN"),
    ]:
        for out in ([], ["-o", str(tmp_path / "out.icn")]):
            if "-o" in argv and out:
                continue
            code, stdout, err = run_main([*argv, *out], capsys)
            assert (code, stdout) == (2, ""), argv
            assert err.startswith(message) and err.count("\n") == 1, (argv, err)
            assert (tmp_path / "out.icn").read_text() == "kept\n"
    assert g.read_text() == "1. e4 *\n"
    assert icn_cli.main(["--help"]) == 0
    help_text = capsys.readouterr().out
    assert "python -m fastpgn icn" in help_text and "one JSON object per line" in help_text
    assert "exit status:" in help_text and "--errors raise stopped the run" in help_text
    assert "deprecated: the same as --errors raise" in help_text


def test_cli_makes_the_folder_of_its_output(tmp_path, capsys):
    (tmp_path / "g.pgn").write_text("1. e4 *\n")
    out = tmp_path / "new" / "deeper" / "g.icn"
    assert icn_cli.main([str(tmp_path / "g.pgn"), "-o", str(out)]) == 0
    assert out.read_text().endswith("  5,2>5,4\n")
    assert capsys.readouterr().err == "icn: 1 game read, 1 written, 0 rejected\n"
    assert icn_cli.main(["--to-pgn", str(out), "-o", str(tmp_path / "back" / "g.pgn"), "-q"]) == 0
    assert (tmp_path / "back" / "g.pgn").read_text().endswith("1. e4 *\n\n")


def test_cli_damaged_input_converts_the_games_before_the_damage(tmp_path, capsys):
    games = [f'[Event "{random.random()}"]\n\n1. e4 e5 *\n\n' for _ in range(2000)]
    data = gzip.compress("".join(games).encode())
    (tmp_path / "cut.pgn.gz").write_bytes(data[:len(data) // 2])
    code, out, err = run_main([str(tmp_path / "cut.pgn.gz")], capsys)
    assert code == 1 and 0 < out.count("\n") < 2000
    messages = err.splitlines()
    assert "truncated gz data" in messages[-2] and messages[-2].endswith("the games after the damage are lost")
    assert messages[-1].startswith("icn: ")
    lines = [icn_pgn.game_to_short(one_game(game)) + "\n" for game in games]
    data = gzip.compress("".join(lines).encode())
    (tmp_path / "cut.icn.gz").write_bytes(data[:len(data) // 2])
    code, out, err = run_main(["--to-pgn", str(tmp_path / "cut.icn.gz"), "-q"], capsys)
    assert code == 1 and 0 < out.count("[Event ") < 2000
    assert err.count("\n") == 1 and "truncated gz data" in err
    (tmp_path / "tiny.pgn.gz").write_bytes(gzip.compress(games[0].encode())[:20])
    code, out, err = run_main([str(tmp_path / "tiny.pgn.gz")], capsys)
    assert (code, out) == (1, "") and "truncated gz data" in err  # damaged before its first game


def test_cli_json_lines_that_crashed_are_one_line_each_and_the_next_converts(tmp_path, capsys):
    """Numbers JSON cannot hold, deep nesting, wrong shapes: each bad line is one line on
    stderr, and the line after it still converts (through the ``python -m fastpgn`` entry)."""
    good = json.dumps(icn.short_to_long("w 0/100 1 K5,1|k5,8 5,1>5,2"))
    bad = [
        (good.replace('"fullMove": 1', '"fullMove": 1e999'), "number too large (game 1, line 1, column "),
        (good.replace('"fullMove": 1', '"fullMove": Infinity'), "Infinity is not JSON"),
        (good.replace('"fullMove": 1', '"fullMove": NaN'), "NaN is not JSON"),
        (good.replace('"moves": ["5,1>5,2"]', '"moves": [{"startCoords": [5, 1], "endCoords": [5, 1e999]}]'),
         "number too large"),
        ("[" * 100_000, "JSON nested deeper than 64 levels"),
        ('{"gameRules": ' + '{"a": ' * 100_000, "JSON nested deeper than 64 levels"),
        (good.replace('"fullMove": 1', '"fullMove": "1"'),
         "not an ICN long form: fullMove must be a whole number, not '1'"),
        ("[1, 2]", "not an ICN long form: a long form must be an object, not a list"),
    ]
    lines = [line for text, _ in bad for line in (text, good)]
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code = cli.main(["icn", "--to-pgn", "--json", str(path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.count("1. Ke2 *") == len(bad)
    messages = err.splitlines()
    assert len(messages) == len(bad) + 1
    for k, ((_, reason), message) in enumerate(zip(bad, messages)):
        assert message.startswith(f"{path}: ") and reason in message, message
        assert f"(game {2 * k + 1}, line {2 * k + 1}" in message
        assert len(message) < 200
    assert messages[-1] == f"icn --to-pgn: {2 * len(bad)} games read, {len(bad)} written, {len(bad)} rejected"
    assert cli.main(["icn", "--to-pgn", "--json", str(path), "--errors", "raise", "-q"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "number too large" in err


def test_cli_short_form_with_deeply_nested_rules_goes_on(tmp_path, capsys):
    good = "w K5,1|k5,8 5,1>5,2"
    (tmp_path / "x.icn").write_text("w " + "{" * 100_000 + " K5,1|k5,8\n" + good + "\n")
    code, out, err = run_main(["--to-pgn", str(tmp_path / "x.icn")], capsys)
    assert code == 0 and out.count("1. Ke2 *") == 1
    assert err.splitlines() == [
        f"{tmp_path / 'x.icn'}: JSON nested deeper than 63 levels (game 1, line 1, column 66)",
        "icn --to-pgn: 2 games read, 1 written, 1 rejected"]


def test_cli_dispatches_the_icn_subcommand(tmp_path, capsys):
    assert cli.SUBCOMMANDS["icn"] == "fastpgn.cli.icn"
    (tmp_path / "g.pgn").write_text("1. e4 *\n")
    assert cli.main(["icn", str(tmp_path / "g.pgn"), "-q"]) == 0
    assert capsys.readouterr().out.endswith("  5,2>5,4\n")
    assert cli.main(["icn", str(tmp_path / "missing.pgn")]) == 2


def test_cli_stdin_to_stdout_and_back():
    pgn = (FEATURES + "\n").encode()
    to_icn = subprocess.run([sys.executable, "-m", "fastpgn", "icn", "-", "-q"], input=pgn,
                            capture_output=True, cwd=ROOT)
    assert (to_icn.returncode, to_icn.stderr) == (0, b"")
    assert to_icn.stdout.decode() == icn_pgn.game_to_short(one_game(FEATURES)) + "\n"
    to_pgn = subprocess.run([sys.executable, "-m", "fastpgn", "icn", "--to-pgn", "-", "-q"],
                            input=to_icn.stdout, capture_output=True, cwd=ROOT)
    assert (to_pgn.returncode, to_pgn.stderr) == (0, b"")
    [game] = chess_games(to_pgn.stdout.decode())
    assert list(game.mainline_moves()) == list(chess_games(FEATURES)[0].mainline_moves())


def test_cli_reads_a_named_pipe(tmp_path):
    """INPUT may be a pipe (``<(zstdcat dump.pgn.zst)``): its size reads as 0, yet it has games."""
    (tmp_path / "g.pgn").write_text(FEATURES)
    command = f'"{sys.executable}" -m fastpgn icn <(cat "{tmp_path / "g.pgn"}") -q'
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == icn_pgn.game_to_short(one_game(FEATURES)) + "\n"


def test_to_pgn_whole_reads_one_game_in_upstreams_layout(tmp_path, capsys):
    pgn = b'[Event "x"]\n[White "a"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n'
    line = next(icn_pgn.pgn_to_icn(read_games(pgn)))
    # What infinitechess.org shows: metadata, position and moves on lines of their own.
    upstream = icn.long_to_short(icn.short_to_long(line), compact_moves=0, make_new_lines=True)
    assert upstream.count("\n") > 3
    path = tmp_path / "pasted.icn"
    path.write_text(upstream)
    code, out, err = run_main(["--to-pgn", "--whole", str(path), "-q"], capsys)
    assert code == 0, err
    back = next(iter(read_games(out.encode())))
    assert back.moves == ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]
    assert back.headers["Event"] == "x" and back.headers["White"] == "a" and back.result == "1-0"
    # Line by line, the same file is several broken games; --whole needs --to-pgn.
    code, out, err = run_main(["--to-pgn", str(path), "-q"], capsys)
    assert code == 0 and "Qxf7#" not in out and f"{path}: " in err  # bad lines are skipped, each reported
    code, out, err = run_main(["--whole", str(path)], capsys)
    assert code == 2 and "--whole reads ICN, so it needs --to-pgn" in err
