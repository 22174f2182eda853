"""The opening explorer: the tree's counts against the games replayed by python-chess (a test-only oracle),
filters, speeds and rating bands, lookups as lichess's API answers, the commands and their exit codes.

The dataset is real: lichess games of the shared corpus converted by the converter with --positions --uci,
aggregated by real DuckDB.
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import pytest

from fastpgn.cli import main as fastpgn_main
from fastpgn.explorer import RATING_BANDS, build_tree, lookup
from helpers import G2021, ROOT, decompressed, shared

chess = pytest.importorskip("chess")
pgn_module = pytest.importorskip("chess.pgn")
polyglot = pytest.importorskip("chess.polyglot")

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PLIES = 8


def _oracle_games(data: bytes):
    """(board before each move, move, result, white elo, black elo, speed) of every game, by python-chess."""
    from fastpgn.filters import speed_of

    stream = io.StringIO(data.decode("utf-8"))
    while True:
        game = pgn_module.read_game(stream)
        if game is None:
            return
        h = game.headers
        elos = [int(h[k]) if h.get(k, "?").isdigit() else None for k in ("WhiteElo", "BlackElo")]
        yield game, h.get("Result"), elos[0], elos[1], speed_of(h.get("TimeControl", "-"))


def oracle(data: bytes, plies: int, keep=lambda white, black, speed: True):
    """{fen without counters: Counter((uci, san) -> [games, white, draws, black, rating sum])} over the first plies."""
    tree: dict = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0, 0]))
    tree["plies"] = {}
    for game, result, white, black, speed in _oracle_games(data):
        if not keep(white, black, speed) or game.errors:
            continue
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= plies:
                break
            tree["plies"].setdefault(board.epd(), ply)
            row = tree[board.epd()][(move.uci(), board.san(move))]
            row[0] += 1
            if result in ("1-0", "1/2-1/2", "0-1"):
                row[1 + ("1-0", "1/2-1/2", "0-1").index(result)] += 1
            row[4] += ((white or 0) + (black or 0)) / 2
            board.push(move)
    return tree


def expected_answer(rows) -> dict:
    moves = [{"uci": u, "san": s, "white": r[1], "draws": r[2], "black": r[3], "averageRating": round(r[4] / r[0])}
             for (u, s), r in rows.items()]
    moves.sort(key=lambda m: (-(m["white"] + m["draws"] + m["black"]), m["uci"]))
    return {"white": sum(m["white"] for m in moves), "draws": sum(m["draws"] for m in moves),
            "black": sum(m["black"] for m in moves), "moves": moves}


def comparable(answer: dict) -> dict:
    """An answer with averageRating allowed to differ by rounding (the tree keeps rounded averages)."""
    return {**answer, "moves": [{k: v for k, v in m.items() if k != "averageRating"} for m in answer["moves"]]}


@pytest.fixture(scope="module")
def corpus() -> tuple[Path, bytes]:
    path = shared(*G2021)
    return path, decompressed(path)


@pytest.fixture(scope="module")
def dataset(corpus, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("games")
    code = fastpgn_main([str(corpus[0]), "100000", "-o", str(folder), "--format", "parquet", "--positions", "--uci",
                         "-q"])
    assert code == 0
    return folder


@pytest.fixture(scope="module")
def tree(dataset, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tree") / "tree.parquet"
    build_tree(str(dataset), str(out), max_plies=PLIES, by_speed=True, by_rating=True)
    return out


@pytest.fixture(scope="module")
def expected(corpus):
    return oracle(corpus[1], PLIES)


def test_the_start_position_counts_every_game_with_a_move(tree, expected):
    answer = lookup(str(tree), START)
    want = expected_answer(expected[chess.Board().epd()])
    assert comparable(answer) == comparable(want)
    for got, exp in zip(answer["moves"], want["moves"]):
        assert abs(got["averageRating"] - exp["averageRating"]) <= 1
    assert answer["moves"][0]["san"] == "e4"


def test_deep_positions_equal_the_replayed_games(tree, expected):
    # The most played positions at the last plies, and one met once: each must hold the same moves and results.
    plies = expected["plies"]
    deep = sorted((kv for kv in expected.items() if kv[0] != "plies" and plies[kv[0]] >= 5),
                  key=lambda kv: (-sum(r[0] for r in kv[1].values()), kv[0]))
    chosen = [fen for fen, _ in deep[:5]] + [deep[-1][0]]
    assert sum(r[0] for r in expected[chosen[0]].values()) >= 5
    for fen in chosen:
        assert comparable(lookup(str(tree), fen)) == comparable(expected_answer(expected[fen])), fen


def test_a_board_and_its_fen_find_the_same_row(tree):
    from fastpgn import Board

    board = Board()
    board.push_san("e4")
    assert lookup(str(tree), board) == lookup(str(tree), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -")


def test_speed_and_rating_bands_split_the_same_counts(tree, corpus):
    def band(white, black):
        avg = (white + black) // 2
        return max(b for b in RATING_BANDS if avg >= b)

    want = oracle(corpus[1], PLIES, lambda w, b, s: s == "blitz" and w and b and band(w, b) in (1600, 1800))
    fen = chess.Board().epd()
    got = lookup(str(tree), START, speeds=["blitz"], ratings=[1600, 1800])
    assert comparable(got) == comparable(expected_answer(want[fen]))
    with pytest.raises(ValueError, match="speeds"):
        lookup(str(tree), START, speeds=["blits"])


def test_filters_on_parquet_equal_the_same_filters_on_pgn(dataset, corpus, tmp_path, capsys):
    from_parquet, from_pgn = tmp_path / "a.parquet", tmp_path / "b.parquet"
    flags = ["--min-elo", "1500", "--speed", "blitz,rapid", "--max-plies", "6", "-q"]
    assert fastpgn_main(["explorer", str(dataset), "-o", str(from_parquet), *flags]) == 0
    assert fastpgn_main(["explorer", str(corpus[0]), "-o", str(from_pgn), *flags]) == 0
    want = oracle(corpus[1], 6, lambda w, b, s: s in ("blitz", "rapid") and (w or 0) >= 1500 and (b or 0) >= 1500)
    for path in (from_parquet, from_pgn):
        assert comparable(lookup(str(path), START)) == comparable(expected_answer(want[chess.Board().epd()]))
    import duckdb

    a = duckdb.sql(f"SELECT * FROM '{from_parquet}' ORDER BY ALL").fetchall()
    assert a == duckdb.sql(f"SELECT * FROM '{from_pgn}' ORDER BY ALL").fetchall()


def test_the_summary_reconciles_and_the_tree_has_the_documented_columns(dataset, tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert fastpgn_main(["explorer", str(dataset), "-o", str(out), "--max-plies", "4", "--min-elo", "2000"]) == 0
    err = capsys.readouterr().err
    import re

    m = re.search(r"explorer: ([\d,]+) games read, ([\d,]+) filtered out, ([\d,]+) in the tree, ([\d,]+) without", err)
    assert m, err
    read, filtered, used, without = (int(x.replace(",", "")) for x in m.groups())
    assert read == 999 and read == filtered + used + without and used > 0
    import pyarrow.parquet as pq

    assert pq.read_schema(out).names == ["zobrist", "uci", "san", "games", "white", "draws", "black",
                                          "white_rating", "black_rating"]
    assert fastpgn_main(["explorer", str(dataset), "-o", str(out)]) == 2          # exists: --overwrite
    assert "--overwrite" in capsys.readouterr().err


def test_lookup_of_an_unknown_position_says_so_in_one_line(tree, capsys):
    fen = "8/8/8/4k3/8/8/8/4K3 w - - 0 1"
    assert fastpgn_main(["explorer-lookup", str(tree), fen]) == 1
    out, err = capsys.readouterr()
    assert out == f"position not in the tree: {fen}\n" and err == ""
    assert lookup(str(tree), fen) == {"white": 0, "draws": 0, "black": 0, "moves": []}


def test_lookup_prints_a_table_sorted_by_games(tree, capsys):
    assert fastpgn_main(["explorer-lookup", str(tree), "startpos"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["move", "uci", "games", "white", "draws", "black", "rating"]
    games = [int(line.split()[2].replace(",", "")) for line in lines[1:-1]]
    assert games == sorted(games, reverse=True) and lines[-1].startswith("total")
    assert int(lines[-1].split()[1].replace(",", "")) == sum(games)
    assert fastpgn_main(["explorer-lookup", str(tree), "not a fen"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_the_shipped_sample_gives_a_tree(tmp_path, capsys):
    """data/sample.pgn.zst, converted on the way: the start position holds every game with a move."""
    sample = ROOT / "data" / "sample.pgn.zst"
    out = tmp_path / "sample-tree.parquet"
    assert fastpgn_main(["explorer", str(sample), "-o", str(out), "--max-plies", "2", "-q"]) == 0
    want = oracle(decompressed(sample), 2)
    assert comparable(lookup(str(out), START)) == comparable(expected_answer(want[chess.Board().epd()]))
    assert sum(r[0] for r in want[chess.Board().epd()].values()) > 100


def test_a_dataset_without_positions_is_refused_in_one_line(corpus, tmp_path, capsys):
    folder = tmp_path / "plain"
    assert fastpgn_main([str(corpus[0]), "100000", "-o", str(folder), "--format", "parquet", "-q"]) == 0
    capsys.readouterr()
    assert fastpgn_main(["explorer", str(folder), "-o", str(tmp_path / "t.parquet")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--positions --uci" in err[0]


def test_progress_on_a_terminal_and_quiet(dataset, tmp_path):
    import sys

    from helpers import stderr_on_a_terminal

    cmd = [sys.executable, "-m", "fastpgn", "explorer", str(dataset), "-o", str(tmp_path / "a.parquet")]
    seen = stderr_on_a_terminal(cmd)
    assert "explorer:" in seen and "100%" in seen and "in the tree" in seen
    assert stderr_on_a_terminal(cmd[:-1] + [str(tmp_path / "b.parquet"), "-q"]) == ""


def test_a_damaged_pgn_keeps_the_games_before_the_damage(corpus, tmp_path, capsys):
    data = corpus[0].read_bytes()
    cut = tmp_path / "cut.pgn.zst"
    cut.write_bytes(data[:len(data) // 2])
    out = tmp_path / "t.parquet"
    assert fastpgn_main(["explorer", str(cut), "-o", str(out), "--max-plies", "2"]) == 1
    err = capsys.readouterr().err
    assert "damaged" in err
    games = lookup(str(out), START)
    total = games["white"] + games["draws"] + games["black"]
    assert 0 < total < 999


def test_a_small_memory_limit_and_no_temporary_files_left(dataset, tmp_path, capsys):
    out = tmp_path / "tree" / "t.parquet"
    assert fastpgn_main(["explorer", str(dataset), "-o", str(out), "--memory-limit", "64MB", "-j", "1", "-q"]) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["t.parquet"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert fastpgn_main(["explorer", str(empty), "-o", str(tmp_path / "e.parquet")]) == 2
    assert "without Parquet files" in capsys.readouterr().err


def test_a_pgn_input_keeps_its_rejected_games_beside_the_tree(tmp_path, capsys):
    import re

    from helpers import G2023, first_games

    pgn = first_games(shared(*G2023), 3, tmp_path)
    pgn.write_text(pgn.read_text() + '[Event "illegal"]\n[Result "*"]\n\n1. e4 e4 *\n\n')
    out = tmp_path / "t.parquet"
    assert fastpgn_main(["explorer", str(pgn), "-o", str(out), "--max-plies", "3"]) == 0
    err = capsys.readouterr().err
    m = re.search(r"([\d,]+) games read from PGN \(([\d,]+) converted, ([\d,]+) rejected, ([\d,]+) filtered out\), "
                  r"([\d,]+) in the tree", err)
    assert m, err
    assert tuple(int(x) for x in m.groups()) == (4, 3, 1, 0, 3)
    kept = tmp_path / "t.parquet.rejected.pgn"
    assert '[Event "illegal"]' in kept.read_text() and str(kept) in err
    start = lookup(str(out), START)
    assert start["white"] + start["draws"] + start["black"] == 3
