"""Null moves (a pass): ``--`` and ``Z0`` in SAN, ``0000`` in UCI, on both backends and against python-chess.

python-chess (a test-only oracle) plays a null move as a pass: the other side
moves next, the en passant square goes, the halfmove clock counts on. So does
fastpgn's board, and every layer above it: the readers keep the SAN as
written, UCI output writes ``0000``, a replayed game (``--validate``,
``--uci``, the ``uci`` column) goes on after the pass, PGN output writes
``--``. One difference, on purpose: a side in check cannot pass (python-chess
lets it, and its board is then not a valid position).
"""

from __future__ import annotations

import io
import pickle
import random

import chess
import chess.pgn
import pytest

from fastpgn import _backend, openings
from fastpgn.board import game_to_pgn, moves_hook, moves_to_pgn, san_to_uci
from fastpgn.errors import FormatError, IllegalMoveError
from fastpgn.reader import read_games
from helpers import CASES, FAKE_ENGINE, kernel_params

CASE = CASES / "null-moves.pgn"
SCANS = dict(_backend.available("scan._scan"))
IN_CHECK = "is in check and cannot pass (a null move)"


@pytest.fixture(params=kernel_params("board._board"))
def board(request):
    """Each board kernel in turn (ids ``py``/``cy``)."""
    return request.param


@pytest.fixture(params=kernel_params("scan._scan"))
def scan(request):
    return request.param


# -- the board ------------------------------------------------------------------------------

def _push_any_way(ours, move: chess.Move, san: str, rng: random.Random):
    """Play ``move`` on our board by SAN, UCI, our Move or python-chess's Move (duck-typed)."""
    way = rng.randrange(4)
    if way == 0:
        return ours.push_san(san)
    if way == 1:
        return ours.push_uci(move.uci())
    if way == 2:
        ours.push(ours.parse_uci(move.uci()))
    else:
        ours.push(move if not move.promotion else ours.parse_uci(move.uci()))
    return ours.move_stack[-1]


def test_random_games_with_passes_play_as_python_chess_plays_them(board):
    rng = random.Random(20261125)
    passes = 0
    for _ in range(40):
        ours, theirs = board.Board(), chess.Board()
        sans = []
        for _ in range(rng.randrange(20, 140)):
            if theirs.is_game_over():
                break
            if not theirs.is_check() and rng.random() < 0.2:
                move = chess.Move.null()
                passes += 1
            else:
                move = rng.choice(list(theirs.legal_moves))
            san = theirs.san(move)
            assert ours.san(ours.parse_uci(move.uci())) == san
            pushed = _push_any_way(ours, move, san, rng)
            theirs.push(move)
            sans.append(san)
            assert pushed.uci() == move.uci() and bool(pushed) == bool(move)
            assert ours.fen() == theirs.fen()
            assert ours.is_check() == theirs.is_check()
            assert sorted(m.uci() for m in ours.legal_moves()) == sorted(m.uci() for m in theirs.legal_moves)
        ucis = [m.uci() for m in theirs.move_stack]
        assert [m.uci() for m in ours.move_stack] == ucis
        text = " ".join(sans)
        assert board.san_to_uci(text) == " ".join(ucis)
        assert board.validate_san(text.encode()) == len(sans)
        assert board.canonical_san(text) == text
        assert board.replay(text).fen() == theirs.fen()
        fens = board.replay_fens(text)
        while theirs.move_stack:
            assert ours.pop().uci() == theirs.pop().uci()
            if theirs.move_stack:
                assert ours.fen() == theirs.fen() == fens[len(theirs.move_stack) - 1]
        assert ours.fen() == chess.STARTING_FEN and ours.key() == board.Board().key()
    assert passes > 100


def test_the_null_move_as_a_move(board):
    null = board.Move.null()
    assert null == board.Move.from_uci("0000") == board.Move(0, 0)
    assert not null and board.Move.from_uci("e2e4")
    assert null.uci() == str(null) == "0000" and repr(null) == "Move.from_uci('0000')"
    assert hash(null) == hash(board.Move(0, 0)) and pickle.loads(pickle.dumps(null)) == null
    b = board.Board()
    assert null not in b.legal_moves() and not b.is_legal(null)    # as python-chess's is_legal
    assert b.uci(null) == "0000" and b.san(null) == "--"
    assert b.parse_san("--") == b.parse_san("Z0") == b.parse_san("0000") == b.parse_uci("0000") == null
    for spelling in ("--", "Z0", "0000", "--!?", "Z0?!", "Z0+"):
        assert b.push_san(spelling) == null
        assert b.pop() == null and b.fen() == chess.STARTING_FEN
    b.push_san("e4")
    b.push(null)
    b.push_uci("d2d4")
    b.push_uci("0000")
    assert [m.uci() for m in b.move_stack] == ["e2e4", "0000", "d2d4", "0000"]
    assert b.fen() == "rnbqkbnr/pppppppp/8/8/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 1 3"
    again = pickle.loads(pickle.dumps(b))       # a board crosses the pool as its root and UCI moves
    assert again == b and [m.uci() for m in again.move_stack] == [m.uci() for m in b.move_stack]
    assert b.copy().move_stack == b.move_stack and b.root().fen() == chess.STARTING_FEN
    assert game_to_pgn(b).splitlines()[-1] == "1. e4 -- 2. d4 -- *"


@pytest.mark.parametrize("spelling", ["---", "-", "Z", "z0", "Z00", "00000", "-- ", "@@@@"])
def test_other_spellings_are_not_null_moves(board, spelling):
    with pytest.raises(IllegalMoveError, match=r"not a move in SAN"):
        board.Board().push_san(spelling)


def test_a_pass_clears_en_passant_and_counts_the_clocks_as_python_chess(board):
    fen = "4k3/8/8/8/3p4/8/4P3/4K3 w - - 7 40"
    ours, theirs = board.Board(fen), chess.Board(fen)
    for san in ("e4", "--", "e5", "Kd7", "--", "Kc6", "Kd2", "--"):
        ours.push_san(san)
        theirs.push_san(san)
        assert ours.fen() == theirs.fen(), san
        assert ours.ep_square == (None if theirs.ep_square is None else chess.square_name(theirs.ep_square))
    assert ours.fen() == "8/8/2k5/4P3/3p4/8/3K4/8 w - - 5 44"


def test_repetitions_count_across_passes_as_python_chess_counts_them(board):
    ours, theirs = board.Board(), chess.Board()
    for san in "Nf3 -- Ng1 -- Nf3 -- Ng1 --".split():
        ours.push_san(san)
        theirs.push_san(san)
        assert ours.is_repetition(2) == theirs.is_repetition(2), san
        assert ours.is_repetition(3) == theirs.is_repetition(3), san
        assert ours.can_claim_threefold_repetition() == theirs.can_claim_threefold_repetition(), san
    assert ours.is_repetition(3) and ours.key() == board.Board().key()


def test_a_side_in_check_cannot_pass(board):
    b = board.Board()
    for san in ("e4", "f6", "Qh5+"):
        b.push_san(san)
    fen = b.fen()
    for play in (lambda: b.push_san("--"), lambda: b.push_san("Z0"), lambda: b.push_uci("0000"),
                 lambda: b.push(board.Move.null()), lambda: b.san(board.Move.null()), lambda: b.parse_san("--")):
        with pytest.raises(IllegalMoveError) as err:
            play()
        assert str(err.value).startswith("illegal move 2... ") and str(err.value).endswith("black " + IN_CHECK)
        assert b.fen() == fen
    with pytest.raises(IllegalMoveError, match=r"^illegal move 2\.\.\. --: black " + IN_CHECK.replace("(", r"\(")
                       .replace(")", r"\)") + "$"):
        board.san_to_uci("e4 f6 Qh5+ --")
    # python-chess plays it, and its board is then no valid position
    theirs = chess.Board(fen)
    theirs.push(chess.Move.null())
    assert not theirs.is_valid()


# -- games, lines, columns -----------------------------------------------------------------

def _python_chess_games():
    stream = io.StringIO(CASE.read_text("utf-8"))
    while (game := chess.pgn.read_game(stream)) is not None:
        yield game


def test_read_games_keeps_the_san_and_replays_the_passes_as_python_chess():
    games = list(read_games(CASE, errors="skip"))
    assert games[0].moves == ["e4", "d5", "e5", "f5", "--", "Nc6", "Nf3", "Z0", "Bb5", "--!?", "O-O"]
    assert games[0].clocks[4] == 177       # the clock after the pass stays on its ply
    assert games[1].evals == ["-0.5", "-0.4", "-9.9", "0.1"]
    for ours, theirs in zip(games, _python_chess_games()):
        if ours.headers["Site"].endswith("NULL0004"):      # the pass in check
            with pytest.raises(IllegalMoveError, match=IN_CHECK.replace("(", r"\(").replace(")", r"\)")):
                ours.uci()
            continue
        assert not theirs.errors
        boards = [node.board() for node in theirs.mainline()]
        assert ours.uci() == [m.uci() for m in theirs.mainline_moves()]
        assert ours.fens() == [b.fen() for b in boards]
        assert ours.board().fen() == theirs.end().board().fen()
        assert [m.uci() for m in ours.to_python_chess().mainline_moves()] == ours.uci()
        assert san_to_uci(ours.moves, ours.headers.get("FEN")) == ours.uci()
        assert " -- " in game_to_pgn(ours).splitlines()[-1] + " "
    nags = [n.nags for n in games[0].to_python_chess().mainline()]
    assert nags[9] == {5}                 # "--!?": the annotation is the pass's NAG, as python-chess reads it
    assert moves_to_pgn(games[4].moves).splitlines()[-1] == "1. d4 -- 2. c4 -- 3. Nc3 e5 4. dxe5 *"


def _render(lines: bytes, rejects) -> str:
    text = lines.decode("utf-8")
    for reason, error_offset, number, _start, _end in rejects:
        text += f"#reject\t{number}\t{error_offset}\t{reason}\n"
    return text


def test_replayed_lines_write_0000_and_go_on_after_the_pass(scan):
    """The converter's --uci and --validate on the case file: its expected outputs, on each scanner backend."""
    data = CASE.read_bytes()
    table = openings.load()
    plain = CASE.with_suffix(".expected").read_text("utf-8")
    uci = CASE.with_suffix(".uci.expected").read_text("utf-8")
    assert "0000" in uci and uci.count("#reject") == 1
    for hook, expected in ((moves_hook(uci=True), uci), (moves_hook(), None)):
        def unmarked(moves, tags, hook=hook):      # the same hook, which the compiled scanner cannot replay itself
            return hook(moves, tags)

        answers = {_render(*scan.lines_from_block(data, 0, len(data), openings=table, moves_hook=h)[::2])
                   for h in (hook, unmarked)}
        assert len(answers) == 1
        answer = answers.pop()
        if expected is None:       # validation: the plain lines of the games that replay, the same reject
            kept = [line for line in plain.splitlines(keepends=True) if "NULL0004" not in line]
            expected = "".join(kept) + uci[uci.index("#reject"):]
        assert answer == expected


def test_the_uci_column_writes_0000():
    """The pure column sink here; tests/test_columns_differential.py holds the compiled one to it on this file."""
    data = CASE.read_bytes()
    columns, read, rejects, _ = SCANS["py"].columns_from_block(data, 0, len(data), uci=True)
    assert read == 5 and [r[2] for r in rejects] == [4] and IN_CHECK in rejects[0][0]
    assert columns["uci"] == [
        ["e2e4", "d7d5", "e4e5", "f7f5", "0000", "b8c6", "g1f3", "0000", "f1b5", "0000", "e1g1"],
        ["f2f3", "e7e5", "g2g4", "0000"], ["e2e4", "0000", "e4e5", "e8d7"],
        ["d2d4", "0000", "c2c4", "0000", "b1c3", "e7e5", "d4e5"]]


def test_read_arrow_uci_column():
    pytest.importorskip("pyarrow")
    from fastpgn.arrow import read_arrow

    reader = read_arrow(CASE, uci=True, errors="skip", columns=["moves", "uci"])
    batches = list(reader)
    moves = [m for b in batches for m in b.column("moves").to_pylist()]
    uci = [m for b in batches for m in b.column("uci").to_pylist()]
    assert moves[0][4] == "--" and uci[0][4] == "0000" and uci[2] == ["e2e4", "0000", "e4e5", "e8d7"]
    assert [r.number for r in reader.rejected] == [4]


def test_the_converter_validates_and_writes_uci(tmp_path):
    from fastpgn.cli import main

    src = tmp_path / CASE.name
    src.write_bytes(CASE.read_bytes())
    for flags, expected_moves in ((["--validate"], "e4 d5 e5 f5 -- Nc6"), (["--uci"], "e2e4 d7d5 e4e5 f7f5 0000")):
        out = tmp_path / flags[0].strip("-")
        assert main([str(src), "100", "-o", str(out), "-q", "--compression", "none", *flags]) == 0
        lines = [line for path in sorted(out.glob("*.part_*")) for line in path.read_text("utf-8").splitlines()]
        assert len(lines) == 4 and lines[0].split("\u2502")[19].startswith(expected_moves)
        rejected = (out / f"_{CASE.name}.rejected.pgn").read_text("utf-8")
        assert "NULL0004" in rejected and IN_CHECK in rejected


# -- engines and ICN ----------------------------------------------------------------------

def test_an_engine_gets_the_position_after_a_pass_as_a_fen(tmp_path):
    import sys

    from fastpgn.engine import Engine

    log = tmp_path / "log"
    fake = [sys.executable, FAKE_ENGINE, "--mode", "ok", "--log", str(log)]
    with Engine.run(fake) as engine:
        engine.position(None, ["e2e4", "e7e5"])
        engine.position(None, ["e2e4", "e7e5", "0000", "g8f6"])
        assert engine.search("go depth 1").best is not None
        assert engine.board.fen() == "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 2 3"
    sent = log.read_text().splitlines()
    assert "position startpos moves e2e4 e7e5" in sent
    assert "position fen rnbqkb1r/pppp1ppp/5n2/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 2 3" in sent


def test_a_principal_variation_ends_at_0000():
    from fastpgn.engine.info import _san_line

    assert _san_line(None, False, ["e2e4", "0000", "e7e5"]) == ["e4"]


def test_icn_has_no_null_move():
    from fastpgn.notations import icn_pgn

    game = list(read_games(CASE, errors="skip"))[4]
    with pytest.raises(FormatError, match=r"^no ICN: ply 2 \(--\) is a null move, which ICN cannot write "
                                          r"\(PGN byte \d+, game 5\)$"):
        icn_pgn.game_to_long(game)
