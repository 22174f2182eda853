"""Board kernel on both backends (ids py/cy): FEN, moves, SAN/UCI, game end, errors; and board.py's PGN writing."""

from __future__ import annotations

import csv

import pytest

from fastpgn import _backend
from fastpgn.errors import AmbiguousMoveError, BoardError, IllegalMoveError, InvalidFENError, PGNError
from helpers import backend_params, shared

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


@pytest.fixture(params=backend_params("board._board"))
def board(request):
    """Each board kernel in turn (ids ``py``/``cy``)."""
    return request.param


def play(kernel, sans, fen=None, chess960=False):
    b = kernel.Board(fen, chess960)
    for san in sans.split():
        b.push_san(san)
    return b


# -- backend selection --------------------------------------------------------

def test_selected_backend_is_the_requested_one():
    from fastpgn.board import _kernel as _board

    wanted = _backend.requested()
    if wanted == "auto":
        wanted = "cython" if len(_backend.available("board._board")) == 2 else "python"
    assert _board.BACKEND == wanted


def test_public_face_reexports_the_live_kernel():
    from fastpgn import board as face
    from fastpgn.board import _kernel as _board

    assert face.Board is _board.kernel.Board
    assert face.Move is _board.kernel.Move
    assert face.validate_san is _board.kernel.validate_san
    # san_to_uci is the kernel's for a string of moves; the face adds lists (test_python_habits.py).
    assert face.san_to_uci("e4 e5 O-O-O".split()[:2]) == ["e2e4", "e7e5"]
    assert face.san_to_uci("e4 e5") == _board.kernel.san_to_uci("e4 e5")


def test_moves_hook_replays_on_the_kernel_it_is_given(board):
    """moves_hook(board_kernel=...) replays on that kernel (benchmarks compare the two), FEN and 960 included."""
    from fastpgn.board import moves_hook

    calls = []

    class Recording:
        def validate_san(self, moves, fen, chess960):
            calls.append((moves, fen, chess960))
            return board.validate_san(moves, fen, chess960)

        def san_to_uci(self, moves, fen, chess960):
            calls.append((moves, fen, chess960))
            return board.san_to_uci(moves, fen, chess960)

    tags = [(b"FEN", b"4k3/8/8/8/8/8/8/4K2R w K - 0 1"), (b"Variant", b"Chess960")]
    assert moves_hook(board_kernel=Recording())(b"O-O Kd7", tags) == b"O-O Kd7"
    assert moves_hook(True, board_kernel=Recording())(b"O-O Kd7", tags) == b"e1h1 e8d7"
    assert calls == [(b"O-O Kd7", "4k3/8/8/8/8/8/8/4K2R w K - 0 1", True)] * 2
    with pytest.raises(IllegalMoveError):
        moves_hook(board_kernel=Recording())(b"e4 e5 Ke3", [])


# -- positions and FEN --------------------------------------------------------

def test_start_position(board):
    b = board.Board()
    assert b.fen() == START
    assert b.turn == "w"
    assert b.castling_rights == "KQkq"
    assert all(b.has_castling_right(c, s) for c in "wb" for s in "kq")
    assert b.ep_square is None
    assert (b.halfmove_clock, b.fullmove_number, b.ply) == (0, 1, 0)
    assert not b.chess960


def test_piece_at_like_chess_jl_pieceon(board):
    # Chess.pieceon(startboard, SQ_E1 / FILE_B, RANK_8 / SQ_B5 / "d8") in seed 003.
    b = board.Board()
    assert b.piece_at("e1") == "K"
    assert b.piece_at(57) == "n"
    assert b.piece_at("b5") is None
    assert b.piece_at("d8") == "q"
    with pytest.raises(BoardError, match="bad square 'z9'"):
        b.piece_at("z9")
    with pytest.raises(BoardError, match="bad square 64"):
        b.piece_at(64)


@pytest.mark.parametrize("fen", [
    START,
    KIWIPETE,
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1",
    "rnbqkbnr/2pppQp1/1p5p/p7/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 1",
    "8/8/8/8/8/8/8/K6k b - - 99 250",
])
def test_fen_round_trip(board, fen):
    assert board.Board(fen).fen() == fen


def test_four_field_fen_as_chess_jl_writes_it(board):
    b = board.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -")
    assert b.fen() == START
    b = board.Board("rnb1kbnr/pppp1ppp/5q2/8/3QP3/2P5/PP3PPP/RNB1KBNR w KQkq -")
    assert (b.halfmove_clock, b.fullmove_number) == (0, 1)


def test_en_passant_written_only_when_a_capture_is_legal(board):
    b = board.Board()
    b.push_san("e4")
    assert b.ep_square is None
    assert b.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    # The "always" convention on input is accepted and normalised.
    b = board.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    assert b.ep_square is None
    assert b.fen().split()[3] == "-"
    # A legal capture keeps it (seed 003: epsquare == SQ_E6).
    b = board.Board("4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1")
    assert b.ep_square == "e6"
    assert "d5e6" in [m.uci() for m in b.legal_moves()]
    # After a double push next to an enemy pawn.
    b = board.Board("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1")
    b.push_san("e4")
    assert b.ep_square == "e3"
    assert b.fen() == "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1"
    # A capture that would expose the king along the rank is not legal.
    b = board.Board("8/8/8/KPp4r/8/8/8/4k3 w - c6 0 1")
    assert b.ep_square is None
    assert "b5c6" not in [m.uci() for m in b.legal_moves()]


@pytest.mark.parametrize("fen", [
    "4k3/8/8/8/8/8/8/4K3 w - e6 0 1",                  # no pawn made a double push
    "4k3/8/8/8/8/8/8/4K3 w - e3 0 1",                  # the wrong rank for White to move
    "4k3/8/8/8/8/8/8/4K3 b - e4 0 1",                  # a rank no double push passes
    "4k3/8/8/8/8/8/8/4K3 w - a1 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - e6 0 1",               # the pawn on e5 is White's own
    "4k3/3n4/8/3pP3/8/8/8/4K3 w - d6 0 1",             # d7 is taken: d5 cannot have come from it
    "4k3/8/3n4/3pP3/8/8/8/4K3 w - d6 0 1",             # d6 itself is taken
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",   # no black pawn to take
])
def test_en_passant_squares_no_capture_explains_are_read_and_dropped(board, fen):
    # As python-chess reads them and its default fen() writes them: no error, no square.
    fields = fen.split()
    plain = " ".join(fields[:3] + ["-"] + fields[4:])
    b = board.Board(fen)
    assert b.ep_square is None and b.fen() == plain
    assert b.key() == board.Board(plain).key()
    assert [m.uci() for m in b.legal_moves()] == [m.uci() for m in board.Board(plain).legal_moves()]
    # The converter's replay reads a FEN tag the same way: the game's moves are checked from it.
    move = b.legal_moves()[0]
    assert board.san_to_uci(b.san(move), fen=fen) == b.uci(move)


def test_en_passant_changes_the_position_key(board):
    a = board.Board("4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1")
    b = board.Board("4k3/8/3p4/3Pp3/8/8/8/4K3 w - - 0 1")
    assert a.key() != b.key()
    c = board.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    d = board.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert c.key() == d.key()


def test_chess960_castling_letters(board):
    # King d1, rooks b1, g1, h1: the g-rook is not the outermost, so X-FEN names its file.
    fen = "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1"
    b = board.Board(fen, chess960=True)
    assert b.fen() == "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GQgq - 0 1"
    assert b.fen(shredder=True) == fen
    assert board.Board("1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w KQkq - 0 1", chess960=True).fen(shredder=True) \
        == "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w HBhb - 0 1"
    std = board.Board("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1")
    assert std.fen() == "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    assert std.fen(shredder=True) == "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1"


def test_chess960_castling_moves(board):
    fen = "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1"
    b = board.Board(fen, chess960=True)
    assert b.uci(b.parse_san("O-O")) == "d1g1"
    assert b.uci(b.parse_san("O-O-O")) == "d1b1"
    b.push_san("O-O")
    assert b.fen() == "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R3RKR b gq - 1 1"
    # King already on its castling square: king takes rook is the only way to say it.
    b = board.Board("4k3/8/8/8/8/8/8/6KR w H - 0 1", chess960=True)
    assert board.san_to_uci("O-O", fen=b.fen(), chess960=True) == "g1h1"
    assert b.san(b.parse_uci("g1h1")) == "O-O"
    assert board.replay("O-O", fen=b.fen(), chess960=True).fen() == "4k3/8/8/8/8/8/8/5RK1 b - - 1 1"


def test_chess960_castling_with_the_rook_shielding_the_king(board):
    # Rook b1 castles queenside with the king c1 -> king c1, rook d1; the a1 rook then attacks c1.
    b = board.Board("4k3/8/8/8/8/8/8/rRK5 w B - 0 1", chess960=True)
    assert "O-O-O" not in [b.san(m) for m in b.legal_moves()]
    with pytest.raises(IllegalMoveError, match="cannot castle queenside: the king is in check or would"):
        b.push_san("O-O-O")


# -- SAN ------------------------------------------------------------------------

@pytest.mark.parametrize("fen, san, uci", [
    (START, "e4", "e2e4"),
    (START, "e4!", "e2e4"),
    (START, "e4?", "e2e4"),
    (START, "e4!!", "e2e4"),
    (START, "e4??", "e2e4"),
    (START, "e4!?", "e2e4"),
    (START, "e4?!", "e2e4"),
    (START, "e4+", "e2e4"),
    (START, "e2e4", "e2e4"),
    (START, "Nf3", "g1f3"),
    (START, "Ng1f3", "g1f3"),
    (START, "Ng1-f3", "g1f3"),
    (START, "Ngf3", "g1f3"),
    (START, "N1f3", "g1f3"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O", "e1c1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0-0+!", "e1c1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "O-O-O", "e8c8"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a8=Q+", "a7a8q"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a8Q", "a7a8q"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a8=N", "a7a8n"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a8r", "a7a8r"),
    ("1r5k/P7/8/8/8/8/8/K7 w - - 0 1", "axb8=B", "a7b8b"),
    ("4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1", "dxe6", "d5e6"),
    ("4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1", "de6", "d5e6"),
    ("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "Nbd2", "b1d2"),
    ("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "Nfd2", "f1d2"),
    ("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "R1a3", "a1a3"),
    ("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "R5a3", "a5a3"),
    ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - - 0 1", "Qa1b2", "a1b2"),
    # The other knight is pinned, so no disambiguation is needed (and none written).
    ("4k3/8/8/8/8/8/8/1N2KN1r w - - 0 1", "Nd2", "b1d2"),
])
def test_san_forms_real_pgn_contains(board, fen, san, uci):
    b = board.Board(fen)
    assert b.uci(b.parse_san(san)) == uci


@pytest.mark.parametrize("fen, uci, san", [
    (START, "g1f3", "Nf3"),
    (START, "e2e4", "e4"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a7a8q", "a8=Q+"),
    ("7k/P7/8/8/8/8/8/K7 w - - 0 1", "a7a8n", "a8=N"),
    ("4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1", "d5e6", "dxe6"),
    ("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "b1d2", "Nbd2"),
    ("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "a1a3", "R1a3"),
    ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - - 0 1", "a1b2", "Qa1b2"),
    ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - - 0 1", "c1b2", "Qcb2"),
    ("4k3/8/8/8/8/8/8/1N2KN1r w - - 0 1", "b1d2", "Nd2"),
    ("rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", "d1h5", "Qh5#"),
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8", "Ra8#"),
    ("r3k3/8/8/8/8/8/8/4K3 b q - 0 1", "e8c8", "O-O-O"),
])
def test_canonical_san(board, fen, uci, san):
    b = board.Board(fen)
    assert b.san(b.parse_uci(uci)) == san


def test_san_list_entry_points(board):
    sans = "e4 e5 Nf3 Nc6 Bc4 Nf6?? Ng5 d5 exd5 Nxd5 Nxf7! Kxf7 Qf3+ Ke6 Nc3 Nb4"
    assert board.san_to_uci(sans) == ("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 f3g5 d7d5 e4d5 f6d5 "
                                      "g5f7 e8f7 d1f3 f7e6 b1c3 c6b4")
    assert board.canonical_san(sans) == sans.replace("??", "").replace("!", "")
    fens = board.replay_fens(sans)
    final = board.replay(sans)
    assert len(fens) == 16 == final.ply
    assert fens[-1] == final.fen() == "r1bq1b1r/ppp3pp/4k3/3np3/1nB5/2N2Q2/PPPP1PPP/R1B1K2R w KQ - 4 9"
    assert final.move_stack[0].uci() == "e2e4"
    assert board.san_to_uci("") == "" and board.replay_fens(" \t\n") == []
    assert board.san_to_uci("  e4\te5\r\nNf3  ") == "e2e4 e7e5 g1f3"


def test_san_list_as_bytes_and_validation_only(board):
    sans = "e4 e5 Nf3 Nc6 Bc4 Nf6?? Ng5 d5 exd5 Nxd5 Nxf7! Kxf7 Qf3+ Ke6 Nc3 Nb4 O-O"
    uci = board.san_to_uci(sans)
    assert board.san_to_uci(sans.encode()) == uci.encode()
    assert board.san_to_uci(b"") == b"" and board.san_to_uci(b" \t\n") == b""
    assert board.validate_san(sans) == board.validate_san(sans.encode()) == 17
    assert board.validate_san("") == board.validate_san(b"  ") == 0
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12"
    assert board.validate_san(b"Nf6 Nc3 Bb4", fen=fen) == 3
    assert board.validate_san("O-O O-O-O", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", True) == 2
    for entry in (board.san_to_uci, board.validate_san):
        with pytest.raises(IllegalMoveError) as err:
            entry(b"Nf6 Nc3 Bb5 Bc4", fen=fen)
        assert str(err.value) == "illegal move 13... Bb5: no black bishop can move to b5"
        # Bytes that are not UTF-8 are named as U+FFFD, as bytes.decode(errors="replace") shows them.
        with pytest.raises(IllegalMoveError) as err:
            entry(b"e4 e5 N\xfff3")
        assert str(err.value) == "illegal move 2. N\ufffdf3: not a move in SAN"
        with pytest.raises(IllegalMoveError, match="moves must be a string of SAN, not bytearray"):
            entry(bytearray(b"e4"))


def test_san_list_from_a_fen_with_black_to_move(board):
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12"
    assert board.san_to_uci("Nf6 Nc3 Bb4", fen=fen) == "g8f6 b1c3 f8b4"
    with pytest.raises(IllegalMoveError) as err:
        board.san_to_uci("Nf6 Nc3 Bb5 Bc4", fen=fen)
    assert str(err.value) == "illegal move 13... Bb5: no black bishop can move to b5"


# -- UCI ------------------------------------------------------------------------

def test_uci(board):
    b = board.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert b.parse_uci("e1g1") == b.parse_uci("e1h1") == b.parse_san("O-O")
    assert b.uci(b.parse_san("O-O")) == "e1g1"
    assert b.parse_san("O-O").uci() == "e1g1"      # the Move says what the board says (python-chess too)
    c = board.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    assert c.uci(c.parse_san("O-O")) == "e1h1" == c.parse_san("O-O").uci()
    assert board.san_to_uci("O-O O-O-O", fen=c.fen(), chess960=True) == "e1h1 e8a8"
    assert board.san_to_uci("O-O O-O-O", fen=c.fen()) == "e1g1 e8c8"
    p = board.Board("7k/P7/8/8/8/8/8/K7 w - - 0 1")
    assert p.push_uci("a7a8n") == board.Move.from_uci("a7a8n")
    assert p.fen() == "N6k/8/8/8/8/8/8/K7 b - - 0 1"
    m = board.Move.from_uci("e2e4")
    assert (m.from_square, m.to_square, m.promotion) == (12, 28, None)
    assert str(m) == "e2e4" and m == board.Move(12, 28) and hash(m) == hash(board.Move(12, 28))


# -- make / unmake ----------------------------------------------------------------

def test_push_pop_restores_everything(board):
    b = board.Board(KIWIPETE)
    before = (b.fen(), b.key())
    played = []
    for _ in range(6):
        moves = b.legal_moves()
        move = moves[len(moves) // 3]
        b.push(move)
        played.append(move)
    assert b.move_stack == played
    copy = b.copy()
    for move in reversed(played):
        assert b.pop() == move
    assert (b.fen(), b.key()) == before
    assert copy.ply == 6 and copy.root().fen() == KIWIPETE
    with pytest.raises(IllegalMoveError, match="no move to take back"):
        b.pop()


def test_copies_and_pickles_are_independent_and_whole(board):
    import copy
    import pickle

    b = play(board, "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O", fen=None)
    for other in (copy.copy(b), copy.deepcopy(b), b.copy(), pickle.loads(pickle.dumps(b))):
        assert other == b and other.move_stack == b.move_stack and other.key() == b.key()
        other.pop()
        assert other != b and b.ply == 7
    c960 = board.Board("1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1", chess960=True)
    c960.push_san("O-O")
    again = pickle.loads(pickle.dumps(c960))
    assert again.chess960 and again.fen() == c960.fen() and again.root().fen() == c960.root().fen()
    move = board.Move.from_uci("e7e8q")
    assert pickle.loads(pickle.dumps(move)) == move


def test_key_is_incremental_and_transposition_safe(board):
    a = play(board, "Nf3 Nf6 Nc3 Nc6")
    b = play(board, "Nc3 Nc6 Nf3 Nf6")
    assert a.key() == b.key() == board.Board(a.fen()).key()
    assert a.key() != board.Board(a.fen().replace(" w ", " b ")).key()


# -- game end ----------------------------------------------------------------------

def test_checkmate_and_terminal_like_chess_jl(board):
    from fastpgn.board import Termination

    b1 = board.Board("4q1k1/8/8/8/8/8/5PPP/4r2K w - - 0 1")
    assert b1.is_check() and b1.is_checkmate() and b1.is_game_over()
    assert b1.outcome().termination is Termination.CHECKMATE and b1.result() == "0-1"
    b2 = board.Board("rnbqkbnr/2pppQp1/1p5p/p7/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 1")
    assert b2.is_checkmate() and b2.outcome().winner == "w"
    assert not board.Board().is_game_over() and board.Board().outcome() is None


def test_stalemate(board):
    b = board.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert b.is_stalemate() and not b.is_checkmate() and b.legal_moves() == []
    assert b.outcome().termination.name == "STALEMATE" and b.result() == "1/2-1/2"


@pytest.mark.parametrize("fen, insufficient", [
    ("6k1/8/8/8/8/8/8/7K w - - 0 1", True),
    ("6k1/8/8/8/8/8/8/6NK w - - 0 1", True),
    ("6k1/8/8/8/8/8/8/6BK w - - 0 1", True),
    ("6kb/8/8/8/8/8/8/5BK1 w - - 0 1", False),
    ("5bk1/8/8/8/8/8/8/6BK w - - 0 1", True),
    ("6k1/8/8/8/8/8/8/5NNK w - - 0 1", False),
    ("6kn/8/8/8/8/8/8/6NK w - - 0 1", False),
    ("6k1/8/8/8/8/8/6P1/7K w - - 0 1", False),
    ("6k1/8/8/8/8/8/8/R6K w - - 0 1", False),
])
def test_insufficient_material(board, fen, insufficient):
    b = board.Board(fen)
    assert b.is_insufficient_material() is insufficient
    if insufficient:
        assert b.outcome().termination.name == "INSUFFICIENT_MATERIAL"


def test_fifty_and_seventy_five_move_rules(board):
    b = board.Board("6k1/8/8/8/8/8/8/5RK1 w - - 99 80")
    assert not b.is_fifty_moves() and b.can_claim_fifty_moves()
    assert b.outcome() is None
    assert b.outcome(claim_draw=True).termination.name == "FIFTY_MOVES"
    b.push_san("Ra1")
    assert b.is_fifty_moves() and b.halfmove_clock == 100
    c = board.Board("6k1/8/8/8/8/8/8/5RK1 w - - 150 120")
    assert c.is_seventyfive_moves() and c.outcome().termination.name == "SEVENTYFIVE_MOVES"
    d = board.Board("6k1/8/8/8/8/8/5P2/5RK1 w - - 99 80")
    d.push_san("f4")
    assert d.halfmove_clock == 0


def test_threefold_and_fivefold_repetition(board):
    shuffle = "Nf3 Nf6 Ng1 Ng8 "
    b = play(board, shuffle * 2)
    assert b.is_repetition(3) and b.can_claim_threefold_repetition()
    assert b.outcome() is None
    assert b.outcome(claim_draw=True).termination.name == "THREEFOLD_REPETITION"
    c = play(board, shuffle + "Nf3 Nf6 Ng1")
    assert not c.is_repetition(3) and c.can_claim_threefold_repetition()
    d = play(board, shuffle * 4)
    assert d.is_fivefold_repetition() and d.outcome().termination.name == "FIVEFOLD_REPETITION"
    e = play(board, shuffle + "e4")
    assert not e.is_repetition(2)


def test_chess_jl_setup_game_repeats_three_times(board):
    fen = "rnb1kbnr/pppp1ppp/5q2/8/3QP3/2P5/PP3PPP/RNB1KBNR w KQkq -"
    b = board.replay("Qd5 Qe6 Qd4 Qf6 Qd5 Qe6 Qd4 Qf6", fen=fen)
    assert b.is_repetition(3) and b.result(claim_draw=True) == "1/2-1/2"


# -- errors ---------------------------------------------------------------------------

BAD_FENS = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
     "FEN has 5 fields, expected 6 (or 4 without the clocks): "
     "'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w", "FEN has 2 fields, expected 6"),
    ("", "FEN has 0 fields"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra", "FEN has 7 fields"),
    ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "FEN has 2 white kings, expected one"),
    ("8/8/8/8/8/8/8/3K4 w - - 0 1", "FEN has 0 black kings, expected one"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
     "FEN has a white pawn on a1: pawns cannot stand on the first or last rank"),
    ("4k2p/8/8/8/8/8/8/4K3 w - - 0 1", "FEN has a black pawn on h8"),
    ("4k3/8/8/8/8/8/8/4K3/8 w - - 0 1", "FEN board has 9 ranks, expected 8"),
    ("4k3/8/8/8/8/8/8/4K4 w - - 0 1", "FEN rank 1 has 9 squares, expected 8"),
    ("4k3/8/8/8/8/8/8/4K2 w - - 0 1", "FEN rank 1 has 7 squares, expected 8"),
    ("4k3/8/8/8/8/8/8/8K w - - 0 1", "FEN rank 1 has more than 8 squares"),
    ("4k3/8/8/8/8/8/8/4X3 w - - 0 1", "bad character 'X' in FEN board"),
    ("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "bad side to move 'x' in FEN"),
    ("4k3/8/8/8/8/8/8/4K2R w KX - 0 1", "bad castling field 'KX' in FEN"),
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling right 'K' but no white rook to castle with"),
    ("4k3/8/8/8/8/8/8/4K2R w KK - 0 1", "castling field 'KK' repeats a right"),
    ("4k3/8/8/8/8/8/8/5K1R w K - 0 1",
     "castling right 'K' needs the king on the e-file and the rook in the corner; "
     "pass chess960=True for Chess960"),
    ("4k3/8/8/8/8/8/4K3/7R w K - 0 1", "the white king is not on its first rank"),
    ("4k3/8/8/8/8/8/8/4K3 w - e9 0 1", "bad en passant square 'e9' in FEN"),
    ("4k3/8/8/8/8/8/8/4K3 w - E6 0 1", "bad en passant square 'E6' in FEN"),
    ("4k3/8/8/8/8/8/8/4K3 w - e 0 1", "bad en passant square 'e' in FEN"),
    ("4k3/8/8/8/8/8/8/4K3 w - - x 1", "bad halfmove clock 'x'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 -1", "bad fullmove number '-1'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 99999999999", "bad fullmove number '99999999999'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 2000000000 1", "halfmove clock 2000000000 is too large"),
    ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "FEN has the black king in check with white to move"),
    ("4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", "FEN has 9 black pawns, at most 8"),
]


@pytest.mark.parametrize("fen, message", BAD_FENS)
def test_bad_fen_names_what_is_wrong(board, fen, message):
    with pytest.raises(InvalidFENError) as err:
        board.Board(fen)
    assert message in str(err.value)
    assert isinstance(err.value, PGNError) and isinstance(err.value, ValueError)


def test_fen_must_be_a_string(board):
    with pytest.raises(InvalidFENError, match="FEN must be a string, not int"):
        board.Board(42)


BAD_SANS = [
    # (start FEN or None, moves, error class, message)
    (None, "e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7# Ke7", IllegalMoveError,
     "illegal move 4... Ke7: the black king on e8 cannot move to e7: the king would be in check"),
    (None, "e4 e5 Nf3 Nc6 Bc4 Nf6 Qxf7#", IllegalMoveError,
     "illegal move 4. Qxf7#: no white queen can move to f7"),
    (None, "e4 e5 Zz9", IllegalMoveError, "illegal move 2. Zz9: not a move in SAN"),
    (None, "e4 e5 e5", IllegalMoveError, "illegal move 2. e5: no white pawn can move to e5"),
    (None, "Nd2", IllegalMoveError, "illegal move 1. Nd2: d2 holds a white pawn"),
    (None, "e4 d5 e5 f5 Nf3 g5 exf6", IllegalMoveError,
     "illegal move 4. exf6: no white pawn can move to f6"),
    (None, "O-O", IllegalMoveError, "illegal move 1. O-O: white cannot castle kingside: f1 is occupied"),
    (None, "e4 e5 Ke2 Ke7 Ke1 Ke8 O-O?!", IllegalMoveError,
     "illegal move 4. O-O?!: white has no kingside castling right"),
    ("4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1", "O-O", IllegalMoveError,
     "illegal move 1. O-O: white cannot castle kingside: the king is in check or would cross "
     "or land on an attacked square"),
    (None, "e4 d5 exd5 e6 dxe6 Ke7 exf7 Nc6 f8", IllegalMoveError,
     "illegal move 5. f8: no white pawn can move to f8"),
    (None, "e4 d5 exd5 e6 dxe6 Ke7 exf7 Nc6 fxg8", IllegalMoveError,
     "illegal move 5. fxg8: a pawn reaching g8 must promote"),
    (None, "e4=Q", IllegalMoveError, "illegal move 1. e4=Q: only a pawn reaching the last rank promotes"),
    (None, "Nf3=Q", IllegalMoveError, "illegal move 1. Nf3=Q: only a pawn reaching the last rank promotes"),
    (None, "e4 e5 Nc3 Bb4 d3 Nf6 Nd5", IllegalMoveError,
     "illegal move 4. Nd5: the white knight on c3 cannot move to d5: the king would be in check"),
    (None, "e4 e5 Nf3 Nc6 d4 d6 Nbd2 Nf6 Nb3 Ng4 Nd2", AmbiguousMoveError,
     "ambiguous move 6. Nd2: the white knights on b3 and f3 can both move to d2"),
    ("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "Ra3+", AmbiguousMoveError,
     "ambiguous move 1. Ra3+: the white rooks on a1 and a5 can both move to a3"),
    (None, "e4 \u00e95", IllegalMoveError, "illegal move 1... \u00e95: not a move in SAN"),
    (None, "1. e4", IllegalMoveError, "illegal move 1. 1.: not a move in SAN"),
    (None, "e4 ---", IllegalMoveError, "illegal move 1... ---: not a move in SAN"),
    # a null move passes, but not in check
    (None, "e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7# --", IllegalMoveError,
     "illegal move 4... --: black is in check and cannot pass (a null move)"),
    (None, "e4 f6 Qh5+ Z0", IllegalMoveError,
     "illegal move 2... Z0: black is in check and cannot pass (a null move)"),
]


@pytest.mark.parametrize("fen, sans, cls, message", BAD_SANS)
def test_bad_san_names_the_move_number_and_the_san(board, fen, sans, cls, message):
    for entry in (board.san_to_uci, board.validate_san, board.replay, board.replay_fens, board.canonical_san):
        with pytest.raises(cls) as err:
            entry(sans, fen=fen)
        assert str(err.value) == message
        assert type(err.value) is cls


def test_ambiguous_is_an_illegal_move_error(board):
    with pytest.raises(IllegalMoveError):
        board.Board("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1").push_san("Nd2")


def test_bad_uci_and_bad_moves(board):
    b = board.Board()
    with pytest.raises(IllegalMoveError, match=r"^illegal move 1\. e2e5: not legal in this position$"):
        b.push_uci("e2e5")
    with pytest.raises(IllegalMoveError, match=r"^illegal move 1\. e2e4x: not a UCI move$"):
        b.parse_uci("e2e4x")
    with pytest.raises(IllegalMoveError, match=r"^illegal move 1\. a2a1: not legal in this position$"):
        b.push(board.Move.from_uci("a2a1"))
    with pytest.raises(IllegalMoveError, match="not a UCI move"):
        board.Move.from_uci("e9e4")
    with pytest.raises(IllegalMoveError, match="illegal move 1. e2e5"):
        b.san(board.Move.from_uci("e2e5"))
    with pytest.raises(IllegalMoveError, match="not a move in SAN"):
        b.push_san(None)
    with pytest.raises(IllegalMoveError, match="moves must be a string of SAN, not list"):
        board.san_to_uci(["e4"])
    assert b.fen() == START


# -- Chess.jl conformance (seed 003) ------------------------------------------------

def test_chess_jl_fen_examples(board):
    path = shared("conformance", "003-chessjl", "notebook_fen_examples.tsv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    seen = set()
    for row in rows:
        b = board.Board(row["fen"])
        cell = row["notebook_cell"]
        if "In[5]" in cell:
            assert b.fen() == START
            assert " ".join(b.fen().split()[:4]) == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
        elif "In[11]" in cell:
            assert b.outcome() is None and len(b.legal_moves()) > 0
        elif "In[34]" in cell:
            assert b.is_checkmate() and b.outcome().result() == "0-1"
            assert not b.is_insufficient_material() and b.ep_square is None
        elif "In[36]" in cell:
            assert b.is_game_over() and b.is_checkmate() and b.turn == "b"
        elif "In[38]" in cell:
            assert b.is_insufficient_material() and b.outcome().result() == "1/2-1/2"
        elif "In[58]" in cell:
            assert b.ep_square == "e6"
        else:
            raise AssertionError(f"unhandled example {cell!r}")
        seen.add(cell)
    assert len(seen) == 6


# -- PGN writing (board.py) ---------------------------------------------------------

def test_game_to_pgn_is_what_chess_jl_writes():
    from fastpgn.board import Board, game_to_pgn

    expected = shared("conformance", "003-chessjl", "notebook_gametopgn_expected.pgn").read_text()
    b = Board()
    b.push_uci("e2e4")
    b.push_uci("e7e5")
    assert game_to_pgn(b) == expected
    assert game_to_pgn(b) == shared("conformance", "003-chessjl", "example.pgn").read_text()


def _unescape(value):
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value):
            i += 1
        out.append(value[i])
        i += 1
    return "".join(out)


def _chess_jl_games(name):
    import io

    import chess.pgn

    text = shared("conformance", "003-chessjl", name).read_text(encoding="utf-8")
    games = []
    handle = io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        b, sans = game.board(), []
        for move in game.mainline_moves():
            sans.append(b.san(move))
            b.push(move)
        # python-chess keeps the escapes in tag values; undo them as a PGN reader must.
        games.append(([(k, _unescape(v)) for k, v in game.headers.items()], sans))
    return text, games


@pytest.mark.parametrize("name", ["games-1-20.concatenated.pgn", "games-with-setup-fen.pgn"])
def test_chess_jl_games_replay_and_write_back_byte_for_byte(name):
    from fastpgn.board import moves_to_pgn

    text, games = _chess_jl_games(name)
    assert len(games) == (46 if name.startswith("games-1-20") else 2)
    written = "\n".join(moves_to_pgn(sans, headers) for headers, sans in games)
    assert written == text.rstrip("\n") + "\n"


def test_pgn_writing_escapes_and_orders_tags():
    from fastpgn.board import Board, escape_tag_value, game_to_pgn, moves_to_pgn

    assert escape_tag_value('a\\b"c') == 'a\\\\b\\"c'
    text = moves_to_pgn("e4 e5", [("Annotator", "me"), ("White", 'X "Y"'), ("Result", "1-0")])
    assert text.splitlines() == [
        '[Event "?"]', '[Site "?"]', '[Date "?"]', '[Round "?"]', '[White "X \\"Y\\""]',
        '[Black "?"]', '[Result "1-0"]', '[Annotator "me"]', "", "1. e4 e5 1-0"]
    b = Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 7")
    b.push_san("Kd7")
    lines = game_to_pgn(b, result="*").splitlines()
    assert lines[7:9] == ['[SetUp "1"]', '[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 7"]']
    assert lines[-1] == "7... Kd7 *"
    c = Board("1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1", chess960=True)
    assert '[Variant "Chess960"]' in game_to_pgn(c)
    assert moves_to_pgn("O-O", {"Variant": "Chess960", "FEN": c.fen()}).endswith("1. O-O *\n")
