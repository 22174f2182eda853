"""read_positions's row filters, seeded samples and splits on the real corpus, on the live backend.

Each filter is held to an independent oracle: python-chess's replay of the
game (clocks, evals) or the unfiltered read filtered in plain Python, the
hash recomputed here in plain Python ints from its documented formula. The
samples and splits are the same for any ``jobs`` and ``batch_size`` and for
the corpus read whole or as two files; no game is in two splits.
"""

from __future__ import annotations

import re

import pytest

from fastpgn import read_arrow, read_positions
from helpers import SINGLE, game_texts, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pytest.importorskip("numpy", reason='numpy is not installed: pip install -e ".[training]"')
pytest.importorskip("chess.pgn", reason='python-chess (the oracle) is not installed: pip install -e ".[test]"')
import chess.pgn  # noqa: E402

ORACLE_GAMES = 300
ROWS = ["game_id", "game_index", "ply", "move"]
MASK = (1 << 64) - 1


@pytest.fixture(scope="module")
def dump():
    return shared(*SINGLE)


@pytest.fixture(scope="module")
def texts(dump):
    return game_texts(dump)


@pytest.fixture(scope="module")
def head(texts, tmp_path_factory):
    out = tmp_path_factory.mktemp("filters") / "head.pgn"
    out.write_text("".join(texts[:ORACLE_GAMES]))
    return out


@pytest.fixture(scope="module")
def two_files(texts, tmp_path_factory):
    """The corpus's games as two files, cut at a game boundary."""
    folder = tmp_path_factory.mktemp("halves")
    cut = len(texts) // 2 + 7
    (folder / "a.pgn").write_text("".join(texts[:cut]))
    (folder / "b.pgn").write_text("".join(texts[cut:]))
    return folder / "a.pgn", folder / "b.pgn"


def read_both(files, **options):
    """The rows of each file read on its own, one after the other."""
    return pa.concat_tables([read_positions(f, **options).read_all() for f in files])


@pytest.fixture(scope="module")
def unfiltered(dump):
    reader = read_positions(dump, columns=ROWS)
    table = reader.read_all()
    return table.to_pylist(), reader


def rows(reader, names=("game_id", "ply")) -> list[tuple]:
    return [tuple(row[n] for n in names) for batch in reader for row in batch.to_pylist()]


def reconciles(reader) -> bool:
    return reader.games_read == reader.games_yielded + len(reader.rejected) + reader.games_filtered


# -- the hash, in plain Python ints, as docs/training.md writes it ------------------------------------

def mix(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def u(seed: int, key: int, x: int) -> float:
    return (mix(mix(mix(seed & MASK) ^ key) ^ x) >> 11) / 2 ** 53


def game_split(seed: int, game_id: str, splits: dict) -> str:
    value, total = u(seed, fnv1a(game_id), (1 << 64) - 2), 0.0
    for name, fraction in splits.items():
        total += fraction
        if value < total:
            return name
    return name


DEFAULT_SPLITS = {"train": 0.9, "validation": 0.05, "test": 0.05}


# -- row filters ---------------------------------------------------------------------------------------

def test_skip_plies_and_max_ply_keep_the_plies_between(dump, unfiltered):
    everything, whole = unfiltered
    reader = read_positions(dump, columns=ROWS, skip_plies=10, max_ply=40)
    got = rows(reader, ROWS)
    want = [tuple(r[n] for n in ROWS) for r in everything if 10 <= r["ply"] < 40]
    assert got == want and 0 < len(got) < len(everything)
    # games keep their numbers and their count; the rows dropped are counted
    assert reader.games_yielded == whole.games_yielded and reader.games_filtered == 0 and reconciles(reader)
    assert reader.positions_yielded == len(got)
    assert reader.positions_filtered == len(everything) - len(got)


def test_min_clock_keeps_moves_made_with_more_than_that_left(head):
    """python-chess's clocks: the mover's clock before a move is its clock after its previous move, or the
    TimeControl's base time for its first."""
    want = []
    with head.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            control = game.headers["TimeControl"]
            base = float(control.split("+")[0]) if "+" in control else None
            last = {chess.WHITE: base, chess.BLACK: base}
            gid = game.headers["Site"].rsplit("/", 1)[-1]
            for ply, node in enumerate(game.mainline()):
                mover = not node.turn()      # (the side that played the node's move)
                before, after = last[mover], node.clock()
                if before is not None and after is not None and before > 30:
                    want.append((gid, ply))
                last[mover] = after
    reader = read_positions(head, columns=["game_id", "ply"], min_clock=30, final=True)
    got = rows(reader)
    assert got == want and 0 < len(got)
    assert reader.games_yielded == ORACLE_GAMES and reconciles(reader)
    assert reader.positions_filtered > 0


def test_with_eval_keeps_moves_that_have_an_eval(head):
    want = []
    with head.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            gid = game.headers["Site"].rsplit("/", 1)[-1]
            want += [(gid, ply) for ply, node in enumerate(game.mainline()) if node.eval() is not None]
    reader = read_positions(head, columns=["game_id", "ply"], with_eval=True, final=True)
    got = rows(reader)
    assert got == want and 0 < len(got)
    assert reader.games_yielded == ORACLE_GAMES and reconciles(reader)


def test_a_game_whose_rows_are_all_dropped_still_counts_as_yielded(head):
    reader = read_positions(head, columns=["game_id", "game_index", "ply"], skip_plies=2, max_ply=2)
    assert rows(reader) == []
    assert reader.games_yielded == ORACLE_GAMES and reader.games_filtered == 0 and reconciles(reader)
    assert reader.positions_yielded == 0 and reader.positions_filtered > ORACLE_GAMES


def test_row_filters_combine_with_where(dump, unfiltered):
    everything, _ = unfiltered
    games = read_positions(dump, columns=["game_id", "white_elo", "black_elo"], where={"min_elo": 1800},
                           max_ply=1)
    strong = {row["game_id"] for batch in games for row in batch.to_pylist()}
    reader = read_positions(dump, columns=["game_id", "ply"], where={"min_elo": 1800}, skip_plies=10)
    want = [(r["game_id"], r["ply"]) for r in everything if r["game_id"] in strong and r["ply"] >= 10]
    assert rows(reader) == want and want
    assert 0 < reader.games_filtered < reader.games_read and reconciles(reader)


# -- the seeded sample ---------------------------------------------------------------------------------

def test_sample_keeps_the_rows_the_documented_hash_picks(dump, unfiltered):
    everything, _ = unfiltered
    reader = read_positions(dump, columns=ROWS, sample=0.1, seed=7)
    got = rows(reader, ROWS)
    want = [tuple(r[n] for n in ROWS) for r in everything if u(7, fnv1a(r["game_id"]), r["ply"]) < 0.1]
    assert got == want
    assert abs(len(got) / len(everything) - 0.1) < 0.005
    assert reader.positions_filtered == len(everything) - len(got) and reconciles(reader)
    other = rows(read_positions(dump, columns=ROWS, sample=0.1, seed=8), ROWS)
    assert other != got and abs(len(other) - len(got)) < 0.05 * len(got)


def test_sample_is_the_same_for_any_jobs_batch_size_and_files(dump, two_files):
    options = {"columns": ["game_id", "ply", "move"], "sample": 0.2, "seed": 11}
    one = read_positions(dump, jobs=1, **options).read_all()
    two = read_positions(dump, jobs=2, block_size=1 << 16, batch_size=777, **options).read_all()
    halves = read_both(two_files, jobs=2, block_size=1 << 16, **options)
    assert one.num_rows > 0
    assert one.equals(two) and one.equals(halves)


def test_sample_games_keeps_whole_games_numbered_among_themselves(dump, unfiltered):
    everything, whole = unfiltered
    reader = read_positions(dump, columns=ROWS, sample_games=0.25, seed=5, jobs=2, block_size=1 << 16)
    got = rows(reader, ROWS)
    games = read_arrow(dump, columns=["game_id"]).read_all().column("game_id").to_pylist()
    picked = [gid for gid in games if u(5, fnv1a(gid), (1 << 64) - 1) < 0.25]
    number = {gid: i for i, gid in enumerate(picked)}
    want = [(r["game_id"], number[r["game_id"]], r["ply"], r["move"]) for r in everything
            if r["game_id"] in number]
    assert got == want
    assert reader.games_yielded == len(picked) and abs(len(picked) / whole.games_yielded - 0.25) < 0.04
    assert reader.games_filtered == whole.games_yielded - len(picked) and reconciles(reader)
    assert reader.positions_filtered == 0


def test_a_game_without_an_id_is_keyed_by_its_byte_offset(texts):
    # half of them with no Site, half with PGN's unknown one
    bare = [re.sub(r'\[Site "[^"]*"\]', '[Site "?"]' if i % 2 else '[Source "x"]', t, count=1)
            for i, t in enumerate(texts[:40])]
    data = "".join(bare).encode()
    table = read_positions(data, columns=["game_index", "ply", "byte_offset", "game_id"]).read_all().to_pylist()
    assert {r["game_id"] for r in table} == {None, "?"}
    got = rows(read_positions(data, columns=["game_index", "ply"], sample=0.3, seed=2), ("game_index", "ply"))
    want = [(r["game_index"], r["ply"]) for r in table if u(2, r["byte_offset"], r["ply"]) < 0.3]
    assert got == want and got


# -- splits --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def split_rows(dump):
    # (final=True: a game without moves has a row too)
    reader = read_positions(dump, columns=["game_id", "ply", "split"], max_ply=1, final=True)
    return {row["game_id"]: row["split"] for batch in reader for row in batch.to_pylist()}, reader


def test_the_split_column_is_the_documented_hash_and_fractions_hold(split_rows):
    splits, reader = split_rows
    assert len(splits) == reader.games_yielded == 2499
    assert splits == {gid: game_split(0, gid, DEFAULT_SPLITS) for gid in splits}
    for name, fraction in DEFAULT_SPLITS.items():
        share = sum(1 for s in splits.values() if s == name) / len(splits)
        assert abs(share - fraction) < 0.02, (name, share)


def test_split_keeps_one_split_and_no_game_is_in_two(dump, split_rows):
    splits, whole = split_rows
    seen: dict = {}
    total = 0
    for name in DEFAULT_SPLITS:
        reader = read_positions(dump, columns=["game_id", "game_index", "split"], split=name, max_ply=3,
                                final=True)
        table = reader.read_all()
        ids = set(table.column("game_id").to_pylist())
        assert set(table.column("split").to_pylist()) == {name}
        assert ids == {gid for gid, s in splits.items() if s == name}
        assert not ids & set(seen), name
        seen.update(dict.fromkeys(ids, name))
        assert reader.games_yielded == len(ids) and reconciles(reader)
        assert sorted(set(table.column("game_index").to_pylist())) == list(range(len(ids)))
        total += reader.games_yielded
    assert total == whole.games_yielded


def test_split_is_the_same_for_any_jobs_and_files(dump, two_files):
    options = {"columns": ["game_id", "ply", "split", "move"], "split": "test", "seed": 3,
               "splits": {"train": 0.8, "test": 0.2}}
    one = read_positions(dump, jobs=1, **options).read_all()
    two = read_positions(dump, jobs=2, block_size=1 << 16, batch_size=1000, **options).read_all()
    halves = read_both(two_files, jobs=2, block_size=1 << 16, **options)
    assert one.num_rows > 0 and one.equals(two) and one.equals(halves)
    games = set(one.column("game_id").to_pylist())
    assert games == {g for g in games if game_split(3, g, {"train": 0.8, "test": 0.2}) == "test"}


def test_split_and_sample_and_row_filters_together(dump, unfiltered, split_rows):
    everything, _ = unfiltered
    splits, _ = split_rows
    reader = read_positions(dump, columns=["game_id", "ply"], split="train", sample=0.5, skip_plies=10)
    want = [(r["game_id"], r["ply"]) for r in everything
            if splits[r["game_id"]] == "train" and r["ply"] >= 10 and u(0, fnv1a(r["game_id"]), r["ply"]) < 0.5]
    assert rows(reader) == want and want
    assert reconciles(reader)


# -- Maia-2's balancing: a cap of games per pair of rating bins ----------------------------------------

def maia2_bin(elo: int) -> int:
    """Maia-2's rating category: below 1100, each 100 up to 1999, 2000 and above."""
    return 0 if elo < 1100 else 10 if elo >= 2000 else (elo - 1100) // 100 + 1


@pytest.mark.parametrize("split", [None, "train"])
def test_games_per_rating_pair_keeps_the_first_games_of_each_pair(dump, split, split_rows):
    splits, _ = split_rows
    games = read_arrow(dump, columns=["game_id", "white_elo", "black_elo", "plies"]).read_all().to_pylist()
    plies = {game["game_id"]: game["plies"] for game in games}
    seen: dict = {}
    want = []
    for game in games:
        if game["white_elo"] is None or game["black_elo"] is None or (split and splits[game["game_id"]] != split):
            continue
        pair = maia2_bin(game["white_elo"]), maia2_bin(game["black_elo"])
        seen[pair] = seen.get(pair, 0) + 1
        if seen[pair] <= 4:
            want.append(game["game_id"])
    options = {"columns": ["game_id", "game_index", "ply"], "games_per_rating_pair": 4, "split": split,
               "skip_plies": 2}
    one = read_positions(dump, **options)
    table = one.read_all()
    got = list(dict.fromkeys(table.column("game_id").to_pylist()))
    number = {gid: i for i, gid in enumerate(want)}
    # (a game of 2 plies or fewer has no row past skip_plies=2, yet is yielded and counted)
    assert got == [g for g in want if plies[g] > 2] and got
    assert table.column("game_index").to_pylist() == [number[g] for g in table.column("game_id").to_pylist()]
    assert one.games_yielded == len(want) and reconciles(one) and one.positions_filtered > 0
    two = read_positions(dump, jobs=2, block_size=1 << 16, batch_size=999, **options).read_all()
    assert table.equals(two)


@pytest.mark.parametrize(("options", "message"), [
    ({"sample": 0}, "sample must be a fraction"),
    ({"sample_games": 1.5}, "sample_games must be a fraction"),
    ({"skip_plies": -1}, "skip_plies must be 0 or more"),
    ({"split": "dev"}, "split 'dev' is not one of the splits: train, validation, test"),
    ({"splits": {"train": 0.5, "test": 0.2}}, "must add up to 1"),
    ({"games_per_rating_pair": 0}, "games_per_rating_pair must be 1 or more"),
    ({"rating_bins": [1500, 1200]}, "rating_bins must be rising"),
])
def test_bad_selections_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        read_positions(b"1. e4 *\n", **options)

