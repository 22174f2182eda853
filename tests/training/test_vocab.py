"""The move vocabularies: each numbered as its project numbers it, every legal corpus move with an id.

python-chess is the test-only oracle: the searchless chess and Maia-2 lists below are
built by those projects' own rules (ported, with their licences named), lc0's and
AlphaZero's by the properties their sources state.
"""

from __future__ import annotations

import io
import sys

import chess
import chess.pgn
import numpy as np
import pytest

from fastpgn.training.vocab import NOT_IN_VOCABULARY, SIZES, VOCABULARIES, id_to_move, ids, move_to_id
from helpers import decompressed, shared

MIRRORED = ("lc0", "alphazero", "maia2")


def _valid_ids(name):
    out = []
    for i in range(SIZES[name]):
        try:
            out.append((i, id_to_move(name, i)))
        except ValueError:
            assert name == "alphazero"
    return out


# -- the oracles ported from the projects' sources ---------------------------------------------------

def _searchless_actions():
    """searchless chess, src/utils.py ``_compute_all_possible_actions`` (Copyright 2025 DeepMind
    Technologies Limited, Apache License 2.0), ported: its list of moves in id order."""
    all_moves = []
    board = chess.BaseBoard.empty()
    for square in range(64):
        next_squares = []
        board.set_piece_at(square, chess.Piece.from_symbol("Q"))
        next_squares += board.attacks(square)
        board.set_piece_at(square, chess.Piece.from_symbol("N"))
        next_squares += board.attacks(square)
        board.remove_piece_at(square)
        all_moves += [chess.square_name(square) + chess.square_name(s) for s in next_squares]
    files = "abcdefgh"
    for rank, next_rank in [("2", "1"), ("7", "8")]:
        for index_file, file in enumerate(files):
            targets = [file] + ([files[index_file - 1]] if file > "a" else []) + (
                [files[index_file + 1]] if file < "h" else [])
            for target in targets:
                all_moves += [f"{file}{rank}{target}{next_rank}{p}" for p in "qrbn"]
    return all_moves


def _maia2_moves():
    """Maia-2, maia2/utils.py ``get_all_possible_moves`` and ``generate_pawn_promotions``
    (Copyright 2024 CSSLab, MIT License), ported: its list of moves in id order."""
    all_moves = []
    for rank in range(8):
        for file in range(8):
            square = chess.square(file, rank)
            for piece in (chess.QUEEN, chess.KNIGHT):
                board = chess.Board(None)
                board.set_piece_at(square, chess.Piece(piece, chess.WHITE))
                all_moves += [m.uci() for m in board.legal_moves]
    for file in "abcdefgh":
        all_moves += [f"{file}7{file}8{p}" for p in "qrbn"]
        if file > "a":
            all_moves += [f"{file}7{chr(ord(file) - 1)}8{p}" for p in "qrbn"]
        if file < "h":
            all_moves += [f"{file}7{chr(ord(file) + 1)}8{p}" for p in "qrbn"]
    return all_moves


def test_sizes():
    assert SIZES == {"searchless": 1968, "lc0": 1858, "alphazero": 4672, "maia2": 1880}
    for name in VOCABULARIES:
        with pytest.raises(ValueError, match="names no move"):
            id_to_move(name, SIZES[name])
    # 4,672 planes-by-squares, of which 1,858 stay on the board (1,456 queen, 336 knight, 66 underpromotions)
    assert len(_valid_ids("alphazero")) == 1858


def test_searchless_ids_equal_its_source():
    assert [id_to_move("searchless", i) for i in range(1968)] == _searchless_actions()


def test_maia2_ids_equal_its_source():
    assert [id_to_move("maia2", i) for i in range(1880)] == _maia2_moves()


def test_lc0_order_as_its_source_states():
    moves = [id_to_move("lc0", i) for i in range(1858)]
    # kMoveStrs of lc0's src/neural/encoder.cc: its first row, first promotions and last entry
    assert moves[:8] == ["a1b1", "a1c1", "a1d1", "a1e1", "a1f1", "a1g1", "a1h1", "a1a2"]
    assert moves[23] == "b1a1" and moves[1791] == "h8g8"
    assert moves[1792:1798] == ["a7a8q", "a7a8r", "a7a8b", "a7b8q", "a7b8r", "a7b8b"]
    assert moves[-1] == "h7h8b"
    # The rule: every queen-line or knight move, ordered by from-square then to-square
    # (one sweep), then the 66 promotions to queen, rook, bishop; no knight letter.
    plain = [chess.Move.from_uci(m) for m in moves[:1792]]
    assert [(m.from_square, m.to_square) for m in plain] == sorted((m.from_square, m.to_square) for m in plain)
    geometry = set()
    board = chess.BaseBoard.empty()
    for square in range(64):
        for piece in "QN":
            board.set_piece_at(square, chess.Piece.from_symbol(piece))
            geometry |= {(square, t) for t in board.attacks(square)}
        board.remove_piece_at(square)
    assert {(m.from_square, m.to_square) for m in plain} == geometry
    promotions = moves[1792:]
    assert len(promotions) == 66 and all(m[1] == "7" and m[3] == "8" and m[4] in "qrb" for m in promotions)
    assert [m[:4] for m in promotions[::3]] == sorted({m[:4] for m in promotions})
    # lc0 writes a knight promotion as the plain move
    assert move_to_id("lc0", "a7a8n") == move_to_id("lc0", "a7a8") == moves.index("a7a8")


def test_alphazero_id_formula():
    """id = plane * 64 + from-square; planes: N NE E SE S SW W NW by distance 1-7, knights, underpromotions."""
    directions = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]
    knights = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
    for i, uci in _valid_ids("alphazero"):
        plane, frm = divmod(i, 64)
        move = chess.Move.from_uci(uci)
        assert move.from_square == frm
        df = chess.square_file(move.to_square) - chess.square_file(frm)
        dr = chess.square_rank(move.to_square) - chess.square_rank(frm)
        if plane < 56:
            dist = max(abs(df), abs(dr))
            assert (df // dist, dr // dist) == directions[plane // 7] and dist == plane % 7 + 1
            assert move.promotion is None
        elif plane < 64:
            assert (df, dr) == knights[plane - 56]
        else:
            assert (df, dr) == ((plane - 64) // 3 - 1, 1) and chess.square_rank(frm) == 6
            assert chess.piece_symbol(move.promotion) == "nbr"[(plane - 64) % 3]
    assert move_to_id("alphazero", "e2e4") == 1 * 64 + chess.E2
    assert move_to_id("alphazero", "a7a8n") == 67 * 64 + chess.A7
    assert move_to_id("alphazero", "b7a8r") == 66 * 64 + chess.B7
    # a queen promotion is the queen-move plane
    assert move_to_id("alphazero", "b7c8q") == move_to_id("alphazero", "b7c8") == 7 * 64 + chess.B7
    with pytest.raises(ValueError, match="names no move"):
        id_to_move("alphazero", 4 * 7 * 64 + chess.A1)  # south from a1


@pytest.mark.parametrize("name", VOCABULARIES)
def test_round_trips(name):
    for i, uci in _valid_ids(name):
        assert move_to_id(name, uci) == i
        black = id_to_move(name, i, white_to_move=False)
        assert move_to_id(name, black, white_to_move=False) == i
        # the vocabularies of the side to move flip the ranks for Black, searchless chess does not
        flipped = uci[0] + str(9 - int(uci[1])) + uci[2] + str(9 - int(uci[3])) + uci[4:]
        assert black == (flipped if name in MIRRORED else uci)


def test_castling_as_each_project_writes_it():
    assert move_to_id("searchless", "e1g1", castling=True) == move_to_id("searchless", "e1g1")
    assert move_to_id("searchless", "e8c8", white_to_move=False, castling=True) == _searchless_actions().index("e8c8")
    assert move_to_id("searchless", "e1h1", castling=True) == move_to_id("searchless", "e1g1")
    assert move_to_id("lc0", "e1g1", castling=True) == move_to_id("lc0", "e1h1") == 103
    assert move_to_id("lc0", "e8c8", white_to_move=False, castling=True) == move_to_id("lc0", "e1a1")
    assert move_to_id("maia2", "e8g8", white_to_move=False, castling=True) == _maia2_moves().index("e1g1")
    assert move_to_id("alphazero", "e1c1", castling=True) == 6 * 7 * 64 + 1 * 64 + chess.E1  # W, distance 2


def test_moves_not_in_a_vocabulary():
    for bad in ("e2e4q", "a7a8k", "e7e8"[:3], "i1a1", "a1a1"):
        with pytest.raises(ValueError):
            move_to_id("searchless", bad)
    with pytest.raises(ValueError, match="not in the maia2 vocabulary"):
        move_to_id("maia2", "a2a1q")  # Maia-2 knows only White's promotions: Black's are mirrored
    assert move_to_id("searchless", "a2a1q") == _searchless_actions().index("a2a1q")
    with pytest.raises(ValueError, match="unknown move vocabulary 'leela'"):
        move_to_id("leela", "e2e4")
    got = ids("searchless", np.array([12, 12, 70, 0]), np.array([28, 28, 0, 0]), np.array([0, 5, 0, 0]),
              np.ones(4, bool))
    assert got.dtype == np.uint16 and got.tolist() == [317, NOT_IN_VOCABULARY, NOT_IN_VOCABULARY, NOT_IN_VOCABULARY]
    with pytest.raises(ValueError, match="needs castling"):
        ids("lc0", np.array([12]), np.array([28]), np.array([0]), np.array([True]))


# -- every legal move of the real corpus -------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus_moves():
    """Every legal move of every position of 300 real games: (board, move, castling) columns."""
    text = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")).decode()
    handle = io.StringIO(text)
    rows = []
    played = []
    for _ in range(300):
        game = chess.pgn.read_game(handle)
        assert game is not None
        board = game.board()
        for move in game.mainline_moves():
            legal = list(board.legal_moves)
            rows += [(m.from_square, m.to_square, m.promotion or 0, board.turn, board.is_castling(m), m.uci(),
                      len(played)) for m in legal]
            played.append((board.copy(stack=False), move))
            board.push(move)
    return rows, played


@pytest.mark.parametrize("name", VOCABULARIES)
def test_every_legal_corpus_move_has_an_id(name, corpus_moves):
    rows, played = corpus_moves
    assert len(played) > 15000 and any(r[2] == chess.KNIGHT for r in rows) and any(r[4] for r in rows)
    frm, to, promo, white, castles = (np.array([r[k] for r in rows]) for k in range(5))
    got = ids(name, frm.astype(np.uint8), to.astype(np.uint8), promo.astype(np.uint8), white.astype(bool),
              castling=castles.astype(bool))
    assert (got < SIZES[name]).all()
    # distinct legal moves of one position have distinct ids
    position = np.array([r[6] for r in rows])
    assert len(set(zip(position.tolist(), got.tolist()))) == len(rows)
    # the scalar form agrees, and the id names the move back
    for row, i in zip(rows[::37], got[::37].tolist()):
        uci, is_white, is_castling = row[5], row[3], row[4]
        assert move_to_id(name, uci, white_to_move=is_white, castling=is_castling) == i
        back = id_to_move(name, i, white_to_move=is_white)
        if name == "lc0" and is_castling:
            assert back[:2] == uci[:2] and back[2] == ("h" if uci[2] == "g" else "a")
        elif name == "lc0" and uci.endswith("n"):
            assert back == uci[:4]
        else:
            assert back == uci


@pytest.mark.parametrize("name", MIRRORED)
def test_black_moves_are_mirrored(name, corpus_moves):
    _, played = corpus_moves
    black = [(b, m) for b, m in played if b.turn == chess.BLACK][::5]
    assert len(black) > 1000
    for board, move in black:
        mirrored = board.mirror()
        flipped = chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square), move.promotion)
        assert mirrored.is_legal(flipped)
        castles = board.is_castling(move)
        assert (move_to_id(name, move.uci(), white_to_move=False, castling=castles)
                == move_to_id(name, flipped.uci(), white_to_move=True, castling=castles))


def test_searchless_is_not_mirrored(corpus_moves):
    _, played = corpus_moves
    actions = {m: i for i, m in enumerate(_searchless_actions())}
    for board, move in played[1::7]:
        assert move_to_id("searchless", move.uci(), white_to_move=board.turn,
                          castling=board.is_castling(move)) == actions[move.uci()]


def test_promotions_and_underpromotions():
    for name in VOCABULARIES:
        seen = {}
        for uci in ("e7e8q", "e7e8r", "e7e8b", "e7e8n", "e7d8q", "e7f8n", "a7b8b", "h7g8r"):
            seen[uci] = move_to_id(name, uci)
        knight_plain = name == "lc0"
        assert len(set(seen.values())) == len(seen), name
        if knight_plain:
            assert id_to_move(name, seen["e7e8n"]) == "e7e8"
        else:
            assert id_to_move(name, seen["e7e8n"]) == "e7e8n"
        black = move_to_id(name, "e2e1n", white_to_move=False)
        if name in MIRRORED:
            assert black == seen["e7e8n"]
        else:
            assert id_to_move(name, black) == "e2e1n"


def test_ids_without_numpy_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError, match=r'needs numpy, which is not installed: pip install "fastpgn\[training\]"'):
        ids("searchless", [12], [28], [0], [True])
    assert move_to_id("searchless", "e2e4") == 317  # the scalar form needs no numpy
