"""The opening explorer against an independent recount by lila-openingexplorer's rules, and its commands.

The recount replays the games with python-chess (a test-only oracle) and
applies lichess's rules as its importer (import-lichess.rs) and indexer
(indexer/lichess.rs, model/lichess.rs) state them: games with an unknown
result, a missing rating, a BOT player or no clock are left out; the first 50
plies count; a position a game reached again counts once, with the last move
played from it; a move's rating is the sum of its MOVERS' ratings; a game's
rating group is its players' mean rounded down. The dataset is real: lichess
games of the shared corpus converted by the converter with --positions
--uci, aggregated by real DuckDB.
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import pytest

from fastpgn.cli import main as fastpgn_main
from fastpgn.explorer import build_tree, lookup
from helpers import G2022, ROOT, SHARED, decompressed, shared

chess = pytest.importorskip("chess")
pgn_module = pytest.importorskip("chess.pgn")

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PLIES = 50
GROUPS = (0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500, 2800)
# lila-openingexplorer's Speed::highscore, and the bound its Group3200 (2800 and over) ranks top games by
HIGHSCORE = {"ultraBullet": 2644, "bullet": 3352, "blitz": 2974, "rapid": 2949, "classical": 2533,
             "correspondence": 4000}


def lichess_speed(tc: str | None) -> str | None:
    """import-lichess.rs's Speed::from_bytes: seconds + 40 x increment against its bounds."""
    if tc == "-":
        return "correspondence"
    try:
        seconds, increment = (int(x) for x in tc.split("+"))
    except (AttributeError, ValueError):
        return None
    total = seconds + 40 * increment
    for name, bound in (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500),
                        ("classical", 21600)):
        if total < bound:
            return name
    return "correspondence"


def group_of(white: int, black: int) -> int:
    mean = (white + black) // 2
    return max(g for g in GROUPS if mean >= g)


def recount(data: bytes, plies: int = PLIES, every_game: bool = False, keep=lambda game: True) -> dict:
    """{epd: {uci: row}} with row = {san, white, draws, black, rating_sum, rated, games: [game, ...]}, and the
    positions' plies under "plies", those a game reached twice under "repeated" ("changed" if it left them by
    two moves)."""
    tree: dict = defaultdict(dict)
    tree["plies"], tree["repeated"], tree["changed"] = {}, defaultdict(int), set()
    stream = io.StringIO(data.decode("utf-8"))
    index = 0
    while True:
        game = pgn_module.read_game(stream)
        if game is None:
            return tree
        index += 1
        h = game.headers
        elo = {c: int(h[k]) if h.get(k, "?").isdigit() else None for c, k in ((True, "WhiteElo"), (False, "BlackElo"))}
        result, speed = h.get("Result", "*"), lichess_speed(h.get("TimeControl"))
        bot = "BOT" in (h.get("WhiteTitle"), h.get("BlackTitle"))
        if game.errors or not keep(h):
            continue
        if not every_game and (result not in ("1-0", "0-1", "1/2-1/2") or None in elo.values() or bot
                               or speed is None):
            continue
        date = h.get("UTCDate", h.get("Date", "????.??.??"))
        month = f"{date[:4]}-{date[5:7]}" if date[:4].isdigit() and date[5:7].isdigit() else None
        info = {"id": h["Site"].rsplit("/", 1)[-1],
                "winner": {"1-0": "white", "0-1": "black"}.get(result), "speed": speed, "mode": "rated",
                "black": {"name": h["Black"], "rating": elo[False]}, "white": {"name": h["White"], "rating": elo[True]},
                "year": int(month[:4]) if month else None, "month": month}
        group = group_of(elo[True], elo[False]) if None not in elo.values() else None
        board = game.board()
        last: dict = {}
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= plies:
                break
            epd = board.epd()
            if epd in last:
                tree["repeated"][epd] += 1
                if last[epd][0] != move.uci():
                    tree["changed"].add(epd)        # a game left it by another move than the first time
            tree["plies"].setdefault(epd, ply)
            last[epd] = (move.uci(), board.san(move).rstrip("?!"), elo[board.turn])    # the last move wins
            board.push(move)
        for epd, (uci, san, mover) in last.items():
            row = tree[epd].setdefault(uci, {"san": san, "white": 0, "draws": 0, "black": 0, "rating_sum": 0,
                                             "rated": 0, "games": []})
            if result in ("1-0", "1/2-1/2", "0-1"):
                row[{"1-0": "white", "1/2-1/2": "draws", "0-1": "black"}[result]] += 1
            if mover is not None:
                row["rating_sum"] += mover
                row["rated"] += 1
            row["games"].append({"uci": uci, **info, "_group": group, "_recency": (month or "", index)})


def openings_oracle() -> dict:
    """The chess-openings list replayed by python-chess: {epd: {eco, name}}."""
    named = {}
    for path in sorted((SHARED / "data" / "openings").glob("*.tsv")):
        for line in path.read_text("utf-8").splitlines()[1:]:
            eco, name, pgn = line.split("\t")[:3]
            board = chess.Board()
            for token in pgn.split():
                if not token.endswith("."):
                    board.push_san(token)
            named.setdefault(board.epd(), {"eco": eco, "name": name})
    return named


def _public(game: dict) -> dict:
    return {k: v for k, v in game.items() if not k.startswith("_")}


def expected_answer(rows: dict, epd: str, named: dict, ratings=None, moves: int = 12) -> dict:
    """lichess's answer (LichessEntry::prepare, finalize_lichess_moves) from the recount's rows."""
    board = chess.Board(epd + " 0 1")
    listed = []
    for uci, r in rows.items():
        total = r["white"] + r["draws"] + r["black"]
        after = board.copy()
        after.push_uci(uci)
        single = max(r["games"], key=lambda g: g["_recency"]) if total == 1 else None
        listed.append({"uci": uci, "san": r["san"],
                       "averageRating": (2 * r["rating_sum"] + r["rated"]) // (2 * r["rated"]) if r["rated"] else None,
                       "white": r["white"], "draws": r["draws"], "black": r["black"],
                       "game": {k: v for k, v in _public(single).items() if k != "uci"} if single else None,
                       "opening": named.get(after.epd())})
    listed.sort(key=lambda m: (-(m["white"] + m["draws"] + m["black"]), m["uci"]))
    games = [g for r in rows.values() for g in r["games"]]
    top_group = None
    for group in (2500, 2200, 2000):
        if ratings is not None and group not in ratings:
            break
        top_group = group
    top = []
    if top_group is not None:
        bound = {**{g: g for g in GROUPS}, 2800: 3200}
        # the latest first, then (a stable sort) by how far the speed's high score is above the group's bound
        top = sorted((g for g in games if g["_group"] is not None and g["_group"] >= top_group),
                     key=lambda g: g["_recency"], reverse=True)
        top = sorted(top, key=lambda g: HIGHSCORE[g["speed"]] - bound[g["_group"]])
        top = top[:4]
    recent = sorted((g for g in games if g not in top), key=lambda g: g["_recency"], reverse=True)[:8 - len(top)]
    return {"white": sum(m["white"] for m in listed), "draws": sum(m["draws"] for m in listed),
            "black": sum(m["black"] for m in listed), "moves": listed[:moves],
            "recentGames": [_public(g) for g in recent], "topGames": [_public(g) for g in top],
            "opening": named.get(epd)}


@pytest.fixture(scope="module")
def corpus() -> tuple[Path, bytes]:
    path = shared(*G2022)
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
    build_tree(str(dataset), str(out))          # lichess's depth and rules: the defaults
    return out


@pytest.fixture(scope="module")
def expected(corpus):
    return recount(corpus[1])


@pytest.fixture(scope="module")
def named():
    shared("data", "openings")
    return openings_oracle()


def _positions(expected) -> list[str]:
    """The start, 1.e4, 1.d4 and a few replies, the most played positions at plies 5 and 10, one met once
    deep down, and the positions some game reached twice."""
    lines = [[], ["e4"], ["d4"], ["e4", "e5"], ["e4", "c5"], ["d4", "d5"], ["e4", "e5", "Nf3"]]
    chosen = []
    for line in lines:
        board = chess.Board()
        for san in line:
            board.push_san(san)
        chosen.append(board.epd())
    plies = expected["plies"]
    for depth in (5, 10):
        at = sorted((e for e, p in plies.items() if p == depth),
                    key=lambda e: (-sum(r["white"] + r["draws"] + r["black"] for r in expected[e].values()), e))
        chosen += at[:2]
    chosen.append(sorted(e for e, p in plies.items() if p == 30 and expected.get(e))[0])
    chosen += sorted(e for e in expected["repeated"] if expected.get(e))[:3]
    return chosen


def test_lookup_equals_the_recount_by_lichess_rules(tree, expected, named):
    chosen = _positions(expected)
    assert len(chosen) >= 12 and len(set(chosen)) == len(chosen)
    for epd in chosen:
        want = expected_answer(expected[epd], epd, named)
        assert lookup(str(tree), epd) == want, epd
    start = lookup(str(tree), START)
    assert list(start) == ["white", "draws", "black", "moves", "recentGames", "topGames", "opening"]
    assert list(start["moves"][0]) == ["uci", "san", "averageRating", "white", "draws", "black", "game", "opening"]
    assert list(start["recentGames"][0]) == ["uci", "id", "winner", "speed", "mode", "black", "white", "year",
                                             "month"]
    assert start["moves"][0]["opening"] == {"eco": "B00", "name": "King's Pawn Game"}
    assert len(start["topGames"]) == 4 and len(start["recentGames"]) == 4


def test_a_position_reached_twice_in_a_game_counts_once_with_the_last_move(tree, expected):
    repeated = sorted(e for e in expected["repeated"] if expected.get(e))
    changed = sorted(e for e in expected["changed"] if expected.get(e))
    assert repeated and changed, "the corpus has games that reach a position twice in their first 50 plies"
    for epd in repeated[:5] + changed[:8]:
        got = lookup(str(tree), epd, moves=None)
        want = {u: (r["white"], r["draws"], r["black"]) for u, r in expected[epd].items()}
        assert {m["uci"]: (m["white"], m["draws"], m["black"]) for m in got["moves"]} == want


def test_the_average_rating_is_the_movers(tree, expected):
    # After 1.e4 Black moves: the reply's rating is Black's, not the mean of both players'.
    board = chess.Board()
    board.push_san("e4")
    rows = expected[board.epd()]
    got = {m["uci"]: m["averageRating"] for m in lookup(str(tree), board.epd(), moves=None)["moves"]}
    for uci, r in rows.items():
        blacks = [g["black"]["rating"] for g in r["games"]]
        assert got[uci] == (2 * sum(blacks) + len(blacks)) // (2 * len(blacks))
    means = {u: round(sum((g["white"]["rating"] + g["black"]["rating"]) / 2 for g in r["games"]) / len(r["games"]))
             for u, r in rows.items()}
    assert got != means


def test_speeds_and_rating_groups_keep_their_games(tree, corpus, named):
    want = recount(corpus[1], keep=lambda h: lichess_speed(h.get("TimeControl")) == "blitz"
                   and h.get("WhiteElo", "?").isdigit() and h.get("BlackElo", "?").isdigit()
                   and group_of(int(h["WhiteElo"]), int(h["BlackElo"])) in (1600, 1800))
    epd = chess.Board().epd()
    got = lookup(str(tree), START, speeds=["blitz"], ratings=[1600, 1800])
    assert got == expected_answer(want[epd], epd, named, ratings=[1600, 1800])
    assert got["topGames"] == [] and len(got["recentGames"]) == 8
    high = recount(corpus[1], keep=lambda h: h.get("WhiteElo", "?").isdigit() and h.get("BlackElo", "?").isdigit()
                   and group_of(int(h["WhiteElo"]), int(h["BlackElo"])) >= 2200)
    got = lookup(str(tree), START, ratings=[2200, 2500])
    assert got == expected_answer(high[epd], epd, named, ratings=[2200, 2500])
    with pytest.raises(ValueError, match="speeds"):
        lookup(str(tree), START, speeds=["blits"])
    with pytest.raises(ValueError, match="ratings"):
        lookup(str(tree), START, ratings=[2800])


def test_every_game_counts_the_games_lichess_leaves_out(corpus, tmp_path, named):
    """A derived excerpt: real games, one made unfinished, one unrated; the corpus's BOT games stay in it."""
    texts = decompressed(corpus[0]).decode("utf-8").split("\n\n[Event ")
    games = [texts[0]] + ["[Event " + t for t in texts[1:]]
    bots = [g for g in games if 'Title "BOT"' in g]
    assert bots
    picked = games[:40] + bots
    result = picked[1].split('[Result "')[1].split('"')[0]
    # unfinished: the tag and the movetext's end (python-chess would take the movetext's result for a tag of *)
    picked[1] = picked[1].replace(f'[Result "{result}"]', '[Result "*"]').rstrip().removesuffix(result) + "*"
    picked[2] = picked[2].replace(picked[2].split("[WhiteElo ")[1].split("]")[0], '"?"', 1)
    pgn = tmp_path / "excerpt.pgn"
    pgn.write_text("\n\n".join(g.strip("\n") for g in picked) + "\n\n")
    lichess_tree, every_tree = tmp_path / "l.parquet", tmp_path / "e.parquet"
    assert fastpgn_main(["explorer", str(pgn), "-o", str(lichess_tree), "-q"]) == 0
    assert fastpgn_main(["explorer", str(pgn), "-o", str(every_tree), "--every-game", "-q"]) == 0
    data = pgn.read_bytes()
    epd = chess.Board().epd()
    every, by_rules = recount(data, every_game=True), recount(data)
    assert lookup(str(every_tree), START, moves=None) == expected_answer(every[epd], epd, named, moves=99)
    assert lookup(str(lichess_tree), START, moves=None) == expected_answer(by_rules[epd], epd, named, moves=99)
    import duckdb

    games_column = duckdb.sql(f"SELECT sum(games) FROM '{every_tree}' WHERE zobrist = {_start_key()}").fetchall()[0][0]
    # every game with a move, the unfinished one too (in games: it has no white, draws or black to count in)
    assert games_column == sum(len(r["games"]) for r in every[epd].values()) > 40
    counted = duckdb.sql(f"SELECT sum(games) FROM '{lichess_tree}' WHERE zobrist = {_start_key()}").fetchall()[0][0]
    assert counted == games_column - len(bots) - 2


def _start_key() -> int:
    from fastpgn.explorer import start_key

    return start_key()


def test_a_small_memory_limit_at_lichess_depth(dataset, tmp_path, expected, named):
    """DuckDB at 64 MB builds the tree of the 2,499 games at 50 plies (the top and recent games are a
    window's few per row, never a list of every game), and it answers as the roomy one does."""
    out = tmp_path / "small.parquet"
    build_tree(str(dataset), str(out), memory_limit="64MB", threads=1)
    epd = chess.Board().epd()
    assert lookup(str(out), START) == expected_answer(expected[epd], epd, named)


def test_a_board_and_its_fen_find_the_same_row(tree):
    from fastpgn import Board

    board = Board()
    board.push_san("e4")
    assert lookup(str(tree), board) == lookup(str(tree), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -")


def test_filters_on_parquet_equal_the_same_filters_on_pgn(dataset, corpus, tmp_path, capsys, named):
    from_parquet, from_pgn = tmp_path / "a.parquet", tmp_path / "b.parquet"
    flags = ["--min-elo", "1500", "--speed", "blitz,rapid", "--max-plies", "6", "-q"]
    assert fastpgn_main(["explorer", str(dataset), "-o", str(from_parquet), *flags]) == 0
    assert fastpgn_main(["explorer", str(corpus[0]), "-o", str(from_pgn), *flags]) == 0
    want = recount(corpus[1], 6, keep=lambda h: lichess_speed(h.get("TimeControl")) in ("blitz", "rapid")
                   and all(h.get(k, "?").isdigit() and int(h[k]) >= 1500 for k in ("WhiteElo", "BlackElo")))
    epd = chess.Board().epd()
    for path in (from_parquet, from_pgn):
        assert lookup(str(path), START) == expected_answer(want[epd], epd, named)
    import duckdb

    a = duckdb.sql(f"SELECT * FROM '{from_parquet}' ORDER BY ALL").fetchall()
    assert a == duckdb.sql(f"SELECT * FROM '{from_pgn}' ORDER BY ALL").fetchall()


def test_the_summary_reconciles_and_the_tree_has_the_documented_columns(dataset, tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert fastpgn_main(["explorer", str(dataset), "-o", str(out), "--max-plies", "4", "--min-elo", "2000"]) == 0
    err = capsys.readouterr().err
    import re

    m = re.search(r"explorer: ([\d,]+) games read, ([\d,]+) filtered out, ([\d,]+) in the tree, ([\d,]+) left out "
                  r"as lichess's explorer leaves them out \(unfinished, unrated, BOT or no clock\), ([\d,]+) without",
                  err)
    assert m, err
    read, filtered, used, left_out, without = (int(x.replace(",", "")) for x in m.groups())
    assert read == 2499 and read == filtered + used + left_out + without and used > 0
    import pyarrow.parquet as pq

    assert pq.read_schema(out).names == ["zobrist", "speed", "rating", "uci", "san", "games", "white", "draws",
                                          "black", "rating_sum", "rated", "games_kept"]
    assert fastpgn_main(["explorer", str(dataset), "-o", str(out)]) == 2          # exists: --overwrite
    assert "--overwrite" in capsys.readouterr().err


def test_lookup_of_an_unknown_position_says_so_in_one_line(tree, capsys):
    fen = "8/8/8/4k3/8/8/8/4K3 w - - 0 1"
    assert fastpgn_main(["explorer-lookup", str(tree), fen]) == 1
    out, err = capsys.readouterr()
    assert out == f"position not in the tree: {fen}\n" and err == ""
    assert lookup(str(tree), fen) == {"white": 0, "draws": 0, "black": 0, "moves": [], "recentGames": [],
                                      "topGames": [], "opening": None}


def test_lookup_prints_a_table_sorted_by_games(tree, capsys):
    assert fastpgn_main(["explorer-lookup", str(tree), "startpos"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["move", "uci", "games", "white", "draws", "black", "rating"]
    games = [int(line.split()[2].replace(",", "")) for line in lines[1:-1]]
    assert games == sorted(games, reverse=True) and lines[-1].startswith("total") and len(games) == 12
    answer = lookup(str(tree), START, moves=None)
    # the total counts every move, the table the 12 most played (as lichess)
    assert int(lines[-1].split()[1].replace(",", "")) == answer["white"] + answer["draws"] + answer["black"]
    assert sum(games) < answer["white"] + answer["draws"] + answer["black"]
    assert fastpgn_main(["explorer-lookup", str(tree), "startpos", "--moves", "0"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(answer["moves"]) + 2
    assert fastpgn_main(["explorer-lookup", str(tree), "not a fen"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_the_shipped_sample_gives_a_tree(tmp_path, capsys, named):
    """data/sample.pgn.zst, converted on the way: the start position holds every game lichess counts."""
    sample = ROOT / "data" / "sample.pgn.zst"
    out = tmp_path / "sample-tree.parquet"
    assert fastpgn_main(["explorer", str(sample), "-o", str(out), "--max-plies", "2", "-q"]) == 0
    want = recount(decompressed(sample), 2)
    epd = chess.Board().epd()
    assert lookup(str(out), START) == expected_answer(want[epd], epd, named)
    assert sum(len(r["games"]) for r in want[epd].values()) > 100


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
    assert 0 < total < 2499


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
