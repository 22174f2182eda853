"""The position index: build_index's postings, and games_reaching through them equal to its scan and to python-chess.

python-chess replays every game of the real corpus from its PGN text (the
oracle: which games reach a position, at which ply first, and the move played
next); the converter's Parquet (``--positions --uci``) is indexed by the
``positions-index`` command, and each position's answer through the index
must equal the scan's and the oracle's, in the dataset's order. Run with both
backends (FASTPGN_IMPLEMENTATION=cython and python): the keys come from the
kernel's replay.
"""

from __future__ import annotations

import io
import logging
import os
import random
from collections import defaultdict
from pathlib import Path

import pytest

import fastpgn
from fastpgn.cli import main as fastpgn_main
from fastpgn.positions import (
    INDEX_METADATA,
    SOURCE_METADATA,
    START_KEY,
    build_index,
    games_reaching,
    index_path,
    position_key,
)
from helpers import SINGLE, decompressed, shared

pytest.importorskip("duckdb", reason='DuckDB is not installed: pip install -e ".[duckdb]"')
pytest.importorskip("chess", reason='python-chess (the oracle) is not installed: pip install -e ".[test]"')
import chess  # noqa: E402
import chess.pgn  # noqa: E402
import chess.polyglot  # noqa: E402

pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')

EMPTY_KINGS = "8/8/8/3k4/8/8/8/K7 w - - 0 1"     # no game of the corpus ends so early with bare kings


def signed(key: int) -> int:
    return key - (1 << 64) if key >> 63 else key


class Key:
    """A position known by its key alone (position_key takes any object with a zobrist() method)."""

    def __init__(self, key: int) -> None:
        self.key = key

    def zobrist(self) -> int:
        return self.key


@pytest.fixture(scope="module")
def games() -> list[dict]:
    """Each game of the corpus replayed by python-chess: its id, result, moves, and the key before each ply."""
    text = io.StringIO(decompressed(shared(*SINGLE)).decode())
    out = []
    while (game := chess.pgn.read_game(text)) is not None:
        board = game.board()
        keys, sans, ucis = [signed(chess.polyglot.zobrist_hash(board))], [], []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            ucis.append(move.uci())
            board.push(move)
            keys.append(signed(chess.polyglot.zobrist_hash(board)))
        out.append({"game_id": game.headers["Site"].rsplit("/", 1)[-1], "result": game.headers["Result"],
                    "keys": keys, "sans": sans, "ucis": ucis})
    assert len(out) > 2000
    return out


def oracle(games: list[dict], key: int) -> list[tuple]:
    """The games reaching ``key``, in the corpus's order: (id, first ply, next SAN, next UCI)."""
    rows = []
    for g in games:
        if key in g["keys"]:
            ply = g["keys"].index(key)
            rows.append((g["game_id"], ply, g["sans"][ply] if ply < len(g["sans"]) else None,
                         g["ucis"][ply] if ply < len(g["ucis"]) else None))
    return rows


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("games")
    assert fastpgn_main([str(shared(*SINGLE)), "100000", "-o", str(folder), "--format", "parquet", "--positions",
                         "--uci", "-q"]) == 0
    assert fastpgn_main(["positions-index", str(folder), "-q"]) == 0
    assert os.path.isfile(folder / "_positions.parquet")
    return folder


@pytest.fixture(scope="module")
def chosen(games) -> dict[str, int]:
    """The positions the brief names: the start, 1.e4, deep ones reached by one game, a transposition (two move
    orders), a position a game came back to, and one no game reaches."""
    reached = defaultdict(list)        # key -> [(game, ply)]
    for i, g in enumerate(games):
        for ply, k in enumerate(g["keys"]):
            reached[k].append((i, ply))
    deep = [k for k, hits in reached.items() if len(hits) == 1 and hits[0][1] >= 40]
    transposed = [k for k, hits in reached.items()
                  if len({tuple(games[i]["sans"][:ply]) for i, ply in hits}) >= 2 and min(p for _, p in hits) >= 4]
    repeated = [k for g in games for k in set(g["keys"]) if g["keys"].count(k) >= 2]
    assert deep and transposed and repeated
    absent = position_key(EMPTY_KINGS)
    assert absent not in reached
    e4 = fastpgn.Board()
    e4.push_san("e4")
    picked = {"start": START_KEY, "1.e4": position_key(e4), "absent": absent,
              "deep": deep[0], "deep (last)": deep[-1], "transposition": transposed[0],
              "transposition (last)": transposed[-1], "repetition": repeated[0]}
    rng = random.Random(7)
    for n, k in enumerate(rng.sample(sorted(reached), 60)):
        picked[f"random {n}"] = k
    return picked


def as_rows(table) -> list[tuple]:
    return [(r["game_id"], r["ply"], r["next_move"].rstrip("?!") if r["next_move"] else None, r["next_uci"])
            for r in table.to_pylist()]


def test_the_index_and_the_scan_give_python_chess_answers_for_many_positions(dataset, games, chosen):
    checked = 0
    for name, key in chosen.items():
        through_index = games_reaching(dataset, Key(key))
        scanned = games_reaching(dataset, Key(key), index=False)
        assert through_index.schema.metadata[SOURCE_METADATA] == b"index"
        assert scanned.schema.metadata[SOURCE_METADATA] == b"scan"
        assert through_index.equals(scanned), name
        assert as_rows(through_index) == oracle(games, key), name
        checked += through_index.num_rows
    assert games_reaching(dataset, Key(chosen["start"])).num_rows == len(games)
    assert games_reaching(dataset, Key(chosen["absent"])).num_rows == 0
    assert len({r[0] for r in oracle(games, chosen["transposition"])}) >= 2
    assert checked > len(games)


def test_a_dataset_of_many_files_keeps_its_order_through_the_index(tmp_path, games, chosen):
    folder = tmp_path / "chunks"
    assert fastpgn_main([str(shared(*SINGLE)), "400", "-o", str(folder), "--format", "parquet", "--positions",
                         "--uci", "-q"]) == 0
    assert len(list(folder.glob("*.parquet"))) >= 5
    built = build_index(folder)
    assert built.games == len(games)
    for name in ("start", "1.e4", "transposition", "repetition", "random 0", "random 1"):
        through_index = games_reaching(folder, Key(chosen[name]), columns=["white"])
        assert through_index.schema.metadata[SOURCE_METADATA] == b"index"
        assert through_index.equals(games_reaching(folder, Key(chosen[name]), columns=["white"], index=False))
        assert as_rows(through_index) == oracle(games, chosen[name]), name


def test_a_game_back_at_the_start_is_found_at_ply_0(tmp_path):
    # (the corpus has no such game: knights out and back, castling rights intact, is the start again at ply 4)
    pgn = b'[Site "x/back"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. e4 *\n\n[Site "x/plain"]\n\n1. d4 *\n'
    path = tmp_path / "back.parquet"
    fastpgn.to_parquet(pgn, path, positions=True, uci=True)
    build_index(path)
    for index in (None, False):
        rows = games_reaching(path, Key(START_KEY), index=index).to_pylist()
        assert [(r["game_id"], r["ply"], r["next_move"]) for r in rows] == [("back", 0, "Nf3"), ("plain", 0, "d4")]


def test_columns_and_limit_are_the_same_through_the_index(dataset, chosen):
    for key in (chosen["1.e4"], chosen["deep"], chosen["absent"]):
        for columns in (["result", "byte_offset"], ["white", "black", "white_elo", "result"]):
            a = games_reaching(dataset, Key(key), columns=columns, limit=50)
            b = games_reaching(dataset, Key(key), columns=columns, limit=50, index=False)
            assert a.schema.metadata[SOURCE_METADATA] == b"index"
            assert a.equals(b), (key, columns)
    import duckdb

    with duckdb.connect() as con:       # many lookups in one connection, its temporary tables left behind none
        for key in list(chosen.values())[:12]:
            a = games_reaching(dataset, Key(key), columns=["white"], con=con)
            assert a.equals(games_reaching(dataset, Key(key), columns=["white"], index=False, con=con))
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0] == 0
    frame = games_reaching(dataset, Key(chosen["1.e4"]), pandas=True)
    assert frame.attrs["fastpgn_source"] == "index" and len(frame) > 100


def test_the_results_in_the_index_count_wins_draws_and_losses(dataset, games, chosen):
    import duckdb

    key = chosen["1.e4"]
    counted = dict(duckdb.sql(f"SELECT result, count(*) FROM read_parquet('{index_path(dataset)}') WHERE key = {key} "
                              "GROUP BY result").fetchall())
    expected: dict[str, int] = defaultdict(int)
    for g in games:
        if key in g["keys"]:
            expected[g["result"]] += 1
    assert counted == expected


def test_row_groups_are_sorted_by_key_so_a_lookup_reads_one_or_two(dataset, chosen, tmp_path):
    index = build_index(dataset, tmp_path / "small.parquet", row_group_size=4096)
    meta = pq.read_metadata(index.path)
    assert meta.num_row_groups > 20 and index.postings == meta.num_rows
    column = meta.schema.names.index("key")
    ranges = [(meta.row_group(i).column(column).statistics.min, meta.row_group(i).column(column).statistics.max)
              for i in range(meta.num_row_groups)]
    assert all(meta.row_group(i).num_rows <= 4096 for i in range(meta.num_row_groups))
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))      # sorted by key
    for name, key in chosen.items():
        if name != "start":
            assert sum(lo <= key <= hi for lo, hi in ranges) <= 2, name
    assert games_reaching(dataset, Key(chosen["deep"]), index=index.path).equals(
        games_reaching(dataset, Key(chosen["deep"]), index=False))


def test_an_index_of_other_files_is_not_read_and_the_log_says_why(tmp_path, games, caplog):
    pgn = decompressed(shared(*SINGLE))
    cut = pgn.index(b"\n\n[Event ", 200_000) + 2
    path = tmp_path / "games.parquet"
    fastpgn.to_parquet(pgn[:cut], path, positions=True, uci=True)
    built = build_index(path)
    assert built.path == index_path(path) == str(tmp_path / "_games.positions.parquet")
    e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    with caplog.at_level(logging.INFO, logger="fastpgn.positions"):
        assert games_reaching(path, e4).schema.metadata[SOURCE_METADATA] == b"index"
        fastpgn.to_parquet(pgn, path, positions=True, uci=True)        # the dataset grows; the index does not
        table = games_reaching(path, e4)
    assert table.schema.metadata[SOURCE_METADATA] == b"scan"
    assert "built from other files" in caplog.text
    assert as_rows(table) == oracle(games, position_key(e4))


def test_the_index_replaces_a_link_and_a_failed_build_leaves_nothing(dataset, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "index.parquet"
    link.symlink_to(victim)
    build_index(dataset, link)
    assert victim.read_text() == "keep me"
    assert not link.is_symlink() and INDEX_METADATA.encode() in pq.read_metadata(link).metadata
    plain = tmp_path / "plain"
    assert fastpgn_main([str(shared(*SINGLE)), "100000", "-o", str(plain), "--format", "parquet", "-q"]) == 0
    with pytest.raises(ValueError, match="positions=True"):
        build_index(plain, tmp_path / "none.parquet")
    assert not (tmp_path / "none.parquet").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_command_refuses_in_one_line(dataset, games, tmp_path, capsys):
    assert fastpgn_main(["positions-index", str(dataset)]) == 2          # exists: --overwrite
    assert "--overwrite" in capsys.readouterr().err
    assert fastpgn_main(["positions-index", str(dataset), "--overwrite"]) == 0
    assert f"{len(games):,} games" in capsys.readouterr().err
    assert fastpgn_main(["positions-index", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
