"""The ``site`` and ``nags`` columns: real annotated games against python-chess, and the edge cases, on both kernels.

python-chess is the independent reading (a test-only oracle): the NAGs of
each main-line node (``node.nags``, a set: it keeps neither order nor a NAG
written twice), the Site header as written.
"""

from __future__ import annotations

import io

import pytest

from fastpgn import _backend
from helpers import decompressed, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
chess_pgn = pytest.importorskip("chess.pgn", reason='python-chess is not installed: pip install -e ".[test]"')
from fastpgn.arrow import record_batch  # noqa: E402

BACKENDS = dict(_backend.available("scan._scan"))
KERNELS = sorted(BACKENDS)

# Files with NAGs and variations (lichess's study and analysis exports), and games with none.
ANNOTATED = [
    ("lichess-other", "annotated-export_2017-09_variations-nags.pgn"),
    ("lichess-other", "annotated-export_2022-08_gm-bullet.pgn"),
    ("lichess-other", "crazyhouse_2017-04_annotated-clk.pgn"),
    ("edge-cases-nonlichess", "world_matches_annotated-variations.pgn"),
    ("edge-cases-nonlichess", "python-chess_kasparov-deep-blue-1997.pgn"),
    ("lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"),
]


def columns(kernel: str, data: bytes, names=("site", "nags", "moves")) -> dict:
    """The columns ``names`` of every game of ``data`` by one kernel, as Python values."""
    out = BACKENDS[kernel].columns_from_block(data, 0, len(data))[0]
    batch = record_batch({name: out[name] for name in names})
    return {name: batch.column(name).to_pylist() for name in names}


def oracle(data: bytes) -> list:
    """python-chess's ``(Site, per ply: the set of NAGs of the main line's node)`` for each game."""
    games = []
    stream = io.StringIO(data.decode("utf-8", "replace"))
    while (game := chess_pgn.read_game(stream)) is not None:
        games.append((game.headers.get("Site"), [set(node.nags) for node in game.mainline()]))
    return games


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("parts", ANNOTATED, ids=lambda p: p[1])
def test_nags_and_site_of_real_games_are_python_chess_s(parts, kernel):
    data = decompressed(shared("data", *parts))
    cols = columns(kernel, data)
    expected = oracle(data)
    assert len(expected) == len(cols["site"])
    noted = 0
    for i, (site, plies) in enumerate(expected):
        assert cols["site"][i] == site, i
        nags = cols["nags"][i]
        if not any(plies):
            assert nags is None, i          # no NAG at all: null, not a list of empty lists
            continue
        assert len(nags) == len(cols["moves"][i]) == len(plies), i
        assert [set(n) for n in nags] == plies, i
        noted += sum(map(len, nags))
    if "annotated-export" in parts[1]:
        assert noted > 0                    # (the file does hold NAGs)


def test_the_annotated_export_keeps_nags_of_variations_out():
    """The 2017 export writes NAGs inside variations too: those are not the main line's."""
    data = decompressed(shared("data", "lichess-other", "annotated-export_2017-09_variations-nags.pgn"))
    assert b"(" in data and b"$" in data
    for kernel in KERNELS:
        cols = columns(kernel, data)
        main = sum(len(n) for game in cols["nags"] if game for n in game)
        assert main == sum(len(n) for _, plies in oracle(data) for n in plies)


# What the PGN standard (8.2.4, 10) says each case holds: hard-coded from the standard, not from fastpgn.
EDGES = [
    ("no NAG: null", b"1. e4 e5 2. Nf3 *", None),
    ("the six glyphs in the move's token", b"1. e4! e5? 2. Nf3!! Nc6?? 3. Bb5!? a6?! *",
     [[1], [2], [3], [4], [5], [6]]),
    ("glyphs apart from the move", b"1. e4 ! e5 ?! 2. Nf3 *", [[1], [6], []]),
    ("several NAGs on one move, in the order written", b"1. e4 $1 $14 $18 e5 *", [[1, 14, 18], []]),
    ("a glyph and a $N", b"1. e4!? $14 e5 *", [[5, 14], []]),
    ("a NAG written twice stays twice", b"1. e4 $1 $1 *", [[1, 1]]),
    ("$0 and $255", b"1. e4 $0 e5 $255 *", [[0], [255]]),
    ("beyond 255, int16 still holds it", b"1. e4 $256 *", [[256]]),
    ("beyond int16: a null NAG", b"1. e4 $32768 $1 *", [[None, 1]]),
    ("a NAG before the first move is no move's", b"$7 1. e4 e5 $2 *", [[], [2]]),
    ("a variation's NAGs are the variation's", b"1. e4 e5 (1... c5! $14 2. Nf3 $1) 2. Nf3 *", None),
    ("after the variation, the main line's move again", b"1. e4 (1. d4 $1) $2 e5 *", [[2], []]),
    ("after a comment", b"1. e4 { good } $1 *", [[1]]),
    ("a glyph on a check", b"1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7#!! 1-0", [[], [], [], [], [], [], [3]]),
    ("a ? in a comment is no NAG", b"1. e4! { really? !! } e5 *", [[1], []]),
    ("a glyph apart after a move with its own", b"1. e4! !? e5 *", [[1, 5], []]),
    ("a NAG after the result is no move's", b"1. e4 $1 * $2", [[1]]),
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name, movetext, nags", EDGES, ids=[e[0] for e in EDGES])
def test_nag_edge_cases(kernel, name, movetext, nags):
    site = b'[Site "https://lichess.org/AbCd1234"]\n'
    for tags in (site, site + b'[Event "Why?!"]\n'):     # (a ? or ! in a tag: the pure sink reads the text again)
        cols = columns(kernel, tags + b"\n" + movetext + b"\n")
        assert cols["nags"] == [nags]
        assert cols["site"] == ["https://lichess.org/AbCd1234"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_nags_csv_text(kernel):
    """CSV: the plies apart by one space, a ply's NAGs by ';', a null NAG empty; no NAG at all: an empty field."""
    data = (b'[Site "https://lichess.org/x"]\n\n1. e4!? $14 e5 2. Nf3 $32768 $1 *\n\n'
            b'[Site "Wijk aan Zee, NED"]\n\n1. d4 *\n')
    text = BACKENDS[kernel].csv_from_block(data, 0, len(data), columns=["game_id", "site", "nags"])[0]
    assert text == b'x,https://lichess.org/x,5;14  ;1\r\n"Wijk aan Zee, NED","Wijk aan Zee, NED",\r\n'


def test_site_keeps_the_tag_game_id_its_tail():
    data = (b'[Site "https://lichess.org/xBJXQouK"]\n\n1. e4 *\n\n[Site "Wijk aan Zee NED"]\n\n1. e4 *\n\n'
            b'[Site "https://www.chess.com/game/live/123456"]\n\n1. e4 *\n\n[Event "no site"]\n\n1. e4 *\n')
    for kernel in KERNELS:
        cols = columns(kernel, data, ("game_id", "site"))
        assert cols["site"] == ["https://lichess.org/xBJXQouK", "Wijk aan Zee NED",
                                "https://www.chess.com/game/live/123456", None]
        assert cols["game_id"] == ["xBJXQouK", "Wijk aan Zee NED", "123456", None]
