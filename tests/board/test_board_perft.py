"""Perft node counts of the published test positions: depth 5 with Cython, depth 3 with the pure twin.

Standard positions: the chessprogramming wiki's "Perft Results" page (start,
Kiwipete, positions 3 to 6). Chess960 positions: the wiki's "Chess960 Perft
Results" table (Shredder-FEN castling letters).
"""

from __future__ import annotations

import pytest

from helpers import backend_params

POSITIONS = [
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", False,
     [20, 400, 8902, 197281, 4865609]),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", False,
     [48, 2039, 97862, 4085603, 193690690]),
    ("position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", False,
     [14, 191, 2812, 43238, 674624]),
    ("position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", False,
     [6, 264, 9467, 422333, 15833292]),
    ("position4-mirrored", "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", False,
     [6, 264, 9467, 422333, 15833292]),
    ("position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", False,
     [44, 1486, 62379, 2103487, 89941194]),
    ("position6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", False,
     [46, 2079, 89890, 3894594, 164075551]),
    ("960-1", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", True,
     [21, 528, 12189, 326672, 8146062]),
    ("960-2", "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", True,
     [21, 807, 18002, 667366, 16253601]),
    ("960-3", "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", True,
     [20, 479, 10471, 273318, 6417013]),
    ("960-4", "qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9", True,
     [22, 593, 13440, 382958, 9183776]),
    ("960-5", "1nbbnrkr/p1p1ppp1/3p4/1p3P1p/3Pq2P/8/PPP1P1P1/QNBBNRKR w HFhf - 0 9", True,
     [28, 1120, 31058, 1171749, 34030312]),
]

DEPTH = {"py": 3, "cy": 5}


@pytest.fixture(params=backend_params("board._board"))
def board(request):
    """Each board kernel in turn (ids ``py``/``cy``)."""
    return request.param


def _depth(kernel):
    return DEPTH["cy" if kernel.__name__.endswith("_cy") else "py"]


@pytest.mark.parametrize("name, fen, chess960, counts", POSITIONS, ids=[p[0] for p in POSITIONS])
def test_perft(board, name, fen, chess960, counts):
    b = board.Board(fen, chess960=chess960)
    depth = _depth(board)
    assert [b.perft(d) for d in range(1, depth + 1)] == counts[:depth]
    assert b.fen() == board.Board(fen, chess960=chess960).fen()


def test_perft_depth_zero_and_bad_depth(board):
    b = board.Board()
    assert b.perft(0) == 1
    with pytest.raises(ValueError, match="bad perft depth -1"):
        b.perft(-1)
