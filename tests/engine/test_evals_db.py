"""``analyse --evals-db``: evals from lichess's evaluation database, the engine only for the rest.

The database is built here in the two published layouts (Hugging Face's Parquet, one row per pv; lichess's
JSON lines) from real games of the shared corpus and a real stockfish run driven by python-chess (a
test-only oracle): a deep eval with two pvs and a shallow one per position, so the deepest eval's first pv
must be the one taken. An engine that must not start is a fake one that logs its start.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fastpgn.reader import read_games
from helpers import G2023, analyse_cli as run, fake_engine, first_games, shared, stockfish as find_stockfish

chess = pytest.importorskip("chess")
pytest.importorskip("chess.engine")
pytest.importorskip("chess.pgn")


@pytest.fixture(scope="module")
def stockfish():
    return find_stockfish()


def lichess_text(cp, mate) -> str:
    """lichess's [%eval] notation, written here apart from fastpgn: pawns with one or two decimals, #N."""
    if mate is not None:
        return f"#{mate}"
    text = f"{cp / 100:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def positions(pgn: Path) -> list[str]:
    """Every position after a move of the games that has a legal move (the game ends are not searched)."""
    import chess.pgn

    out = []
    with pgn.open() as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                if not board.is_game_over():
                    out.append(board.epd())
    return list(dict.fromkeys(out))


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> Path:
    return first_games(shared(*G2023), 3, tmp_path_factory.mktemp("games"))


@pytest.fixture(scope="module")
def database(games, stockfish) -> dict:
    """{epd: [(depth, knodes, [(cp, mate, line), ...]), ...]}: a shallow eval, then a deep one with 2 pvs."""
    import chess.engine

    out = {}
    with chess.engine.SimpleEngine.popen_uci(stockfish) as sf:
        for epd in positions(games):
            board = chess.Board(epd)
            evals = []
            for depth, multipv in ((4, 1), (9, 2)):
                infos = sf.analyse(board, chess.engine.Limit(depth=depth), multipv=multipv)
                pvs = []
                for info in infos:
                    score = info["score"].white()
                    pvs.append((score.score(), score.mate(), " ".join(m.uci() for m in info["pv"])))
                evals.append((depth, int(infos[0].get("nodes", 1000)) // 1000, pvs))
            out[epd] = evals
    return out


def expected(db: dict) -> dict:
    """The eval each position must get: the deepest eval's first pv."""
    return {epd: lichess_text(*max(evals, key=lambda e: (e[0], e[1]))[2][0][:2]) for epd, evals in db.items()}


def write_hf(db: dict, path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: dict = {"fen": [], "line": [], "depth": [], "knodes": [], "cp": [], "mate": []}
    for epd, evals in db.items():
        for depth, knodes, pvs in evals:
            for cp, mate, line in pvs:
                for k, v in zip(rows, (epd, line, depth, knodes, cp, mate)):
                    rows[k].append(v)
    types = {"fen": pa.string(), "line": pa.string(), "depth": pa.int64(), "knodes": pa.int64(),
             "cp": pa.int64(), "mate": pa.int64()}
    pq.write_table(pa.table({k: pa.array(v, types[k]) for k, v in rows.items()}), path)
    return path


def write_jsonl(db: dict, path: Path) -> Path:
    with path.open("w") as fh:
        for epd, evals in db.items():
            fh.write(json.dumps({"fen": epd, "evals": [
                {"pvs": [{"cp": cp, "line": line} if mate is None else {"mate": mate, "line": line}
                         for cp, mate, line in pvs], "knodes": knodes, "depth": depth}
                for depth, knodes, pvs in reversed(evals)]}) + "\n")
    return path


def written_evals(path: Path) -> dict:
    """{epd after the move: the [%eval] written} over every move of the output."""
    import chess.pgn

    out = {}
    with path.open() as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            board = game.board()
            for node in game.mainline():
                board.push(node.move)
                m = re.search(r"\[%eval ([^\]]+)\]", node.comment)
                out.setdefault(board.epd(), m.group(1) if m else None)
    return out


SUMMARY = re.compile(r"([\d,]+) positions, ([\d,]+) from the evals database, ([\d,]+) searched, "
                     r"([\d,]+) from the cache")


def counts(err: str) -> tuple[int, ...]:
    m = SUMMARY.search(err)
    assert m, err
    return tuple(int(x.replace(",", "")) for x in m.groups())


@pytest.mark.parametrize("layout", ["hf", "jsonl", "jsonl.zst"])
def test_a_database_of_every_position_needs_no_engine(layout, games, database, tmp_path, capsys):
    db = (write_hf if layout == "hf" else write_jsonl)(database, tmp_path / f"evals.{layout}")
    if layout == "jsonl.zst":       # as database.lichess.org publishes it
        import zstandard

        db.write_bytes(zstandard.ZstdCompressor().compress(db.read_bytes()))
    engine, log = fake_engine(tmp_path, "exit")
    out = tmp_path / "out.pgn"
    code, err = run([games, "-o", out, "--evals-db", db, "--engine", engine], capsys)
    assert code == 0, err
    assert not log.exists(), "the engine was started"
    want = expected(database)
    got = written_evals(out)
    assert {epd: got[epd] for epd in want} == want
    total, from_db, searched, cached = counts(err)
    game_ends = sum(1 for g in read_games(str(games)) if g.moves and g.moves[-1].endswith("#"))
    assert (searched, cached) == (0, 0) and from_db + game_ends == total > len(want)
    assert "(not started)" in err
    # The index is kept beside the database and used again: the second run says nothing of indexing.
    assert Path(str(db) + ".fastpgn-index.parquet").exists() and "indexing" in err
    code, err = run([games, "-o", out, "--overwrite", "--evals-db", db, "--engine", engine], capsys)
    assert code == 0 and "indexing" not in err and not log.exists()
    # The index alone serves as the database.
    index = Path(str(db) + ".fastpgn-index.parquet")
    code, err = run([games, "-o", out, "--overwrite", "--evals-db", index, "--engine", engine], capsys)
    assert code == 0 and "indexing" not in err and not log.exists()
    got = written_evals(out)
    assert {epd: got[epd] for epd in want} == want


def test_a_partial_database_mixes_with_the_engine_and_the_summary_reconciles(games, database, stockfish, tmp_path,
                                                                              capsys):
    half = dict(list(database.items())[::2])
    db = write_hf(half, tmp_path / "half.parquet")
    out = tmp_path / "out.pgn"
    code, err = run([games, "-o", out, "--evals-db", db, "--engine", stockfish, "--nodes", "5000"], capsys)
    assert code == 0, err
    total, from_db, searched, cached = counts(err)
    game_ends = sum(1 for g in read_games(str(games)) if g.moves and g.moves[-1].endswith("#"))
    plies = sum(len(g.moves) for g in read_games(str(games)))
    assert total == plies == from_db + searched + cached + game_ends
    got = written_evals(out)
    want = expected(half)
    assert {epd: got[epd] for epd in want} == want
    assert from_db >= len(want) and searched > 0
    assert all(got[epd] is not None for epd in database)      # the others were searched


def test_a_bad_database_is_one_line_and_exit_2(games, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    engine, log = fake_engine(tmp_path, "exit")
    code, err = run([games, "-o", tmp_path / "o.pgn", "--evals-db", bad, "--engine", engine], capsys)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 2 and "indexing" in lines[0] and lines[1].startswith(
        "fastpgn analyse: --evals-db: ") and not log.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "fake-exit"]      # no index left
    code, err = run([games, "-o", tmp_path / "o.pgn", "--evals-db", tmp_path / "missing.parquet"], capsys)
    assert code == 2 and "no such file" in err


def test_lichess_eval_and_game_keys(games):
    from fastpgn import position_key
    from fastpgn.engine import evals_db

    game = next(iter(read_games(str(games))))
    board = chess.Board()
    keys = []
    for san in game.moves:
        board.push_san(san)
        keys.append(position_key(board.fen()))
    assert evals_db.game_keys(game) == keys


def test_a_number_outside_int32_names_the_file_and_the_line(games, database, tmp_path, capsys):
    """A cp beyond 32 bits refused the whole database in a line naming neither the file nor the line."""
    engine, log = fake_engine(tmp_path, "exit")
    epds = list(database)
    bad = {epd: [(d, k, [(2**31 if i == 2 else cp, None if i == 2 else mate, line) for cp, mate, line in pvs])
                 for d, k, pvs in evals] for i, (epd, evals) in enumerate(database.items())}
    jsonl = write_jsonl(bad, tmp_path / "big.jsonl")
    code, err = run([games, "-o", tmp_path / "o.pgn", "--evals-db", jsonl, "--engine", engine], capsys)
    assert code == 2 and err.splitlines()[1:] == [
        f"fastpgn analyse: --evals-db: {jsonl}:3: cp 2147483648 is outside the 32-bit integers the index keeps "
        f"(FEN {epds[2]})"], err
    hf = write_hf(bad, tmp_path / "big.parquet")
    code, err = run([games, "-o", tmp_path / "o.pgn", "--evals-db", hf, "--engine", engine], capsys)
    first_row = 1 + sum(sum(len(pvs) for _, _, pvs in database[epd]) for epd in epds[:2])
    assert code == 2 and err.splitlines()[1:] == [
        f"fastpgn analyse: --evals-db: {hf}, row {first_row}: cp 2147483648 is outside the 32-bit integers the "
        f"index keeps (FEN {epds[2]})"], err
    assert not log.exists()


def test_refused_fens_are_shown_and_mate_0_is_searched(games, database, stockfish, tmp_path, capsys):
    """The FENs the board refused were counted and never shown: the first few, and how many. A mate 0
    (checkmated now) for a position the game goes on from was written #0: lichess never writes #0, so the
    database gives no eval there and the engine searches it."""
    epds = list(database)
    db = dict(database)
    zero = epds[1]
    db[zero] = [(d, k, [(None, 0, line) for _, _, line in pvs]) for d, k, pvs in database[zero]]
    bogus = [f"{n}{8 - n}/8/8/8/8/8/8/8 w - -" for n in range(1, 8)]      # no king: the first five by FEN shown
    for fen in bogus:
        db[fen] = database[epds[0]]
    src = write_jsonl(db, tmp_path / "db.jsonl")
    out = tmp_path / "out.pgn"
    code, err = run([games, "-o", out, "--evals-db", src, "--engine", stockfish, "--nodes", "5000"], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[1] == (f"fastpgn analyse: --evals-db: 7 FENs of {src} the board refused, not indexed: "
                        + "; ".join(f"FEN has 0 white kings, expected one: '{fen}'" for fen in bogus[:5])
                        + "; and 2 more"), lines
    total, from_db, searched, cached = counts(err)
    assert searched == 1 and from_db == total - 1 - sum(1 for g in read_games(str(games)) if g.moves[-1].endswith("#"))
    got = written_evals(out)
    assert got[zero] is not None and got[zero] != "#0"
    assert "#0" not in out.read_text()
    assert {epd: got[epd] for epd in epds if epd != zero} == {e: v for e, v in expected(database).items() if e != zero}
