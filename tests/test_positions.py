"""A key for every position: the zobrist and fens columns, Board.zobrist, position_key and games_reaching.

python-chess is the oracle (a test dependency only): each ply's key must be
its ``chess.polyglot.zobrist_hash`` (the opening books' key) with the same
bits as a signed int64, and each FEN its ``board.fen()``, on every ply of
the corpus's standard games, its Chess960 games and its games from a FEN.
The compiled sink and the pure twin give equal tables.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastpgn
from fastpgn import _backend
from fastpgn.board import Board
from fastpgn.positions import START_KEY, games_reaching, position_key
from helpers import MUTATION, NOISE, corpus_files, decompressed, mutated, real_game, shared

pytest.importorskip("chess", reason='python-chess (the oracle) is not installed: pip install -e ".[test]"')
import chess  # noqa: E402
import chess.polyglot  # noqa: E402

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet")

SCAN = dict(_backend.available("scan._scan"))

STANDARD = "lichess-db/lichess_db_standard_rated_2021-10.head999.pgn.zst"
# The corpus's Chess960 games and games from a FEN (with the standard games of the same files).
SET_UP = ("edge-cases-nonlichess/chess960_rapid-wch-2009_fen-setup.pgn",
          "edge-cases-nonlichess/chesscom_export_2025_29games_incl-chess960.pgn",
          "edge-cases-nonlichess/python-chess_cutechess-fischerrandom.pgn",
          "edge-cases-nonlichess/world_matches_annotated-variations.pgn",
          "edge-cases-nonlichess/chess-library_skip.pgn")


def signed(key: int) -> int:
    return key - (1 << 64) if key >> 63 else key


def oracle(row: dict) -> tuple[list[int], list[str]]:
    """Each ply's key and FEN as python-chess has them, the game replayed from its FEN tag and Variant."""
    variant = (row["variant"] or "").lower()
    chess960 = "960" in variant or "fischer" in variant.replace(" ", "")
    board = chess.Board(row["fen"] or chess.STARTING_FEN, chess960=chess960)
    keys, fens = [], []
    for san in row["moves"]:
        board.push_san(san.rstrip("?!"))    # (lichess's annotations, which python-chess does not read)
        keys.append(signed(chess.polyglot.zobrist_hash(board)))
        fens.append(board.fen())
    return keys, fens


def table_of(path, **options):
    with fastpgn.read_arrow(path, errors="skip", positions=True, fens=True,
                            columns=["game_id", "fen", "variant", "moves", "zobrist", "fens"], **options) as reader:
        return pa.Table.from_batches(list(reader), schema=reader.schema)


def assert_oracle(table) -> int:
    plies = 0
    for row in table.to_pylist():
        keys, fens = oracle(row)
        assert row["zobrist"] == keys, (row["game_id"], row["moves"])
        assert row["fens"] == fens, (row["game_id"], row["moves"])
        plies += len(keys)
    return plies


def test_keys_and_fens_are_python_chess_on_every_ply_of_standard_games():
    table = table_of(shared("data", STANDARD))
    assert table.num_rows > 980
    assert assert_oracle(table) > 50_000


@pytest.mark.parametrize("name", SET_UP)
def test_keys_and_fens_are_python_chess_on_chess960_and_fen_games(name):
    table = table_of(shared("data", name))
    assert table.num_rows > 0
    assert assert_oracle(table) > 0


def test_the_set_up_files_hold_chess960_and_fen_games():
    # (so the test above covers what it says)
    rows = [row for name in SET_UP for row in table_of(shared("data", name)).to_pylist()]
    assert sum(1 for r in rows if r["fen"]) >= 20
    assert sum(1 for r in rows if "960" in (r["variant"] or "") or "fischer" in (r["variant"] or "").lower()) >= 10


def test_a_key_and_a_fen_per_ply_and_rejects_as_uci():
    pgn = (b'[Event "a"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n'
           b'[Event "b"]\n\n1. e4 e5 2. Ke3 *\n\n'
           b'[Event "c"]\n[Variant "Atomic"]\n\n1. e4 *\n\n'
           b'[Event "d"]\n\n*\n\n')
    with fastpgn.read_arrow(pgn, errors="skip", positions=True, fens=True) as reader:
        rows = [r for b in reader for r in b.to_pylist()]
        assert [r["event"] for r in rows] == ["a", "d"]
        assert [len(r["zobrist"]) for r in rows] == [4, 0] and [len(r["fens"]) for r in rows] == [4, 0]
        assert reader.games_read == 4 and len(reader.rejected) == 2
    assert rows[0]["fens"][-1] == "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    assert list(reader.schema.names[-2:]) == ["zobrist", "fens"]
    assert str(reader.schema.field("zobrist").type) == "list<item: int64>"


def test_only_the_columns_asked_for():
    pgn = b'1. e4 *\n'
    assert "zobrist" not in next(fastpgn.read_arrow(pgn)).schema.names
    assert next(fastpgn.read_arrow(pgn, positions=True)).schema.names[-1] == "zobrist"
    assert next(fastpgn.read_arrow(pgn, fens=True)).schema.names[-1] == "fens"
    with pytest.raises(ValueError, match="zobrist column needs positions=True"):
        fastpgn.read_arrow(pgn, columns=["zobrist"])
    with pytest.raises(ValueError, match="fens column needs fens=True"):
        fastpgn.read_arrow(pgn, columns=["fens"])


# -- both backends ------------------------------------------------------------------------------------

@pytest.mark.skipif("cy" not in SCAN, reason="the compiled scanner is not built here")
@pytest.mark.parametrize("path", [p for p in corpus_files() if p.suffix != ".bz2"], ids=lambda p: p.name)
def test_both_sinks_give_equal_positions(path):
    from fastpgn.arrow import record_batch

    data = decompressed(path)
    answers = []
    for name in ("py", "cy"):
        kernel = SCAN[name]
        columns, read, rejects, filtered = kernel.columns_from_block(data, 0, len(data), positions=True, fens=True)
        table = pa.Table.from_batches([record_batch(columns, False, True, True)])
        answers.append((table.select(["byte_offset", "zobrist", "fens"]), read, rejects, filtered))
    assert answers[0][1:] == answers[1][1:]
    assert answers[0][0].equals(answers[1][0])


def sinks_agree(data: bytes, stop: bool = False) -> None:
    from fastpgn.arrow import record_batch

    answers = []
    for name in ("py", "cy"):
        columns, *counts = SCAN[name].columns_from_block(data, 0, len(data), positions=True, fens=True,
                                                         stop_on_error=stop)
        table = pa.Table.from_batches([record_batch(columns, False, True, True)])
        answers.append((table.select(["byte_offset", "zobrist", "fens"]), counts))
    assert answers[0][1] == answers[1][1]
    assert answers[0][0].equals(answers[1][0])


@pytest.mark.skipif("cy" not in SCAN, reason="the compiled scanner is not built here")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), MUTATION, st.integers(0, 10**9), NOISE), min_size=1, max_size=4),
       st.integers(0, 10_000), st.integers(1, 3), st.booleans())
def test_both_sinks_agree_on_mutated_real_games(mutations, first, count, stop):
    sinks_agree(mutated(b"".join(real_game(first + k) for k in range(count)), mutations), stop)


@pytest.mark.skipif("cy" not in SCAN, reason="the compiled scanner is not built here")
@pytest.mark.parametrize("fen", [
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",                                     # a pinned pawn beside the double push
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",        # (en passant at once)
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 99 1000000000",                        # the longest clocks the board reads
    "  rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR   w KQkq - 0 1 ",        # (read with the GIL: odd spaces)
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\\\\",          # (an escape: the hook's path)
])
def test_both_sinks_agree_on_set_up_games(fen):
    moves = "1. Kb6 Rh6+ *" if fen.startswith("8/") else "1. exf6 e5 2. Qh5+ g6 *" if "f6" in fen else (
        "1. O-O O-O-O 2. Rfe1 Kb8 *" if fen.startswith("r3") else "1. e4 e5 2. Nf3 *")
    data = f'[Event "a"]\n[FEN "{fen}"]\n[SetUp "1"]\n\n{moves}\n\n'.encode()
    sinks_agree(data)
    table = table_of(data)
    if not fen.endswith("\\\\"):
        assert table.num_rows == 1
        assert_oracle(table.set_column(1, "fen", pa.array([fen.strip()])))


def test_positions_survive_parquet(tmp_path):
    out = tmp_path / "g.parquet"
    fastpgn.to_parquet(shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst"), out,
                       positions=True, fens=True)
    table = pq.read_table(out)
    assert table.schema.field("zobrist").type == pa.list_(pa.int64())
    assert assert_oracle(table) > 500


# -- a query's key ------------------------------------------------------------------------------------

def test_position_key_of_a_fen_is_the_columns_entry():
    row = table_of(shared("data", STANDARD), batch_size=50).slice(0, 40).to_pylist()
    for r in row:
        for key, fen in zip(r["zobrist"], r["fens"]):
            assert position_key(fen) == key
            assert position_key(chess.Board(fen)) == key       # (any board with fen())


def test_board_zobrist_is_position_key_and_python_chess():
    board = Board()
    pc = chess.Board()
    assert board.zobrist() == position_key(board) == START_KEY == signed(chess.polyglot.zobrist_hash(pc))
    for san in "e4 Nf6 e5 d5 exd6 Nc6 d4 Bf5 d5 e5 dxe6 Qd7 -- O-O-O Bb5 Kb8".split():
        board.push_san(san)
        pc.push_san(san)
        assert board.zobrist() == signed(chess.polyglot.zobrist_hash(pc)), san
    for _ in range(4):
        board.pop()
        pc.pop()
        assert board.zobrist() == signed(chess.polyglot.zobrist_hash(pc))


@pytest.mark.parametrize("fen", [
    # a double push beside a pawn of the side to move: the file counts, though taking is illegal (pinned)
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    # no pawn beside: the file does not count
    "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 2",
    # Chess960 castling by files, and rights of one side only
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "r3k2r/8/8/8/8/8/8/R3K2R b Qk - 0 1",
])
def test_position_key_follows_polyglot_rules(fen):
    board = chess.Board(fen, chess960=True)
    assert position_key(fen) == signed(chess.polyglot.zobrist_hash(board))
    assert Board(fen, chess960=True).zobrist() == position_key(fen)


def test_position_key_names_what_it_takes():
    with pytest.raises(TypeError, match="takes a FEN or a board"):
        position_key(42)
    with pytest.raises(ValueError):
        position_key("not a fen")


# -- games_reaching -----------------------------------------------------------------------------------

def count_with_python_chess(data: bytes, fen: str) -> dict:
    """game id -> (ply, next SAN or None) of the first visit to ``fen``'s position, replaying every game."""
    import chess.pgn

    want = chess.Board(fen)
    target = chess.polyglot.zobrist_hash(want)
    found = {}
    text = io.StringIO(data.decode())
    while (game := chess.pgn.read_game(text)) is not None:
        board = game.board()
        moves = list(game.mainline_moves())
        for ply in range(len(moves) + 1):
            if ply and chess.polyglot.zobrist_hash(board) == target:
                nxt = board.san(moves[ply]) if ply < len(moves) else None
                found[game.headers["Site"].rsplit("/", 1)[-1]] = (ply, nxt)
                break
            if ply < len(moves):
                board.push(moves[ply])
    return found


def test_games_reaching_finds_what_replaying_finds(tmp_path):
    pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    path = shared("data", STANDARD)
    folder = tmp_path / "games"
    folder.mkdir()
    fastpgn.to_parquet(path, folder / "a.parquet", positions=True, uci=True)
    data = decompressed(path)
    # the Sicilian after 2. Nf3 (reached in several move orders), and a position met only late in a game
    for fen in ("rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
                "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"):
        want = count_with_python_chess(data, fen)
        assert len(want) > 5
        got = games_reaching(folder, fen).to_pylist()
        # (the SAN as written: lichess's annotations, which python-chess does not write, taken off)
        assert {r["game_id"]: (r["ply"], r["next_move"] and r["next_move"].rstrip("?!")) for r in got} == want
        assert all(r["next_uci"] is None or len(r["next_uci"]) >= 4 for r in got)
    assert games_reaching(folder, fen, limit=3).num_rows == 3
    extra = games_reaching(folder, fen, columns=["white", "result"], pandas=True)
    assert list(extra.columns) == ["game_id", "ply", "next_move", "next_uci", "white", "result"]


def test_games_reaching_the_start_and_its_errors(tmp_path):
    pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    pgn = b'[Site "x/a"]\n\n1. e4 *\n\n[Site "x/b"]\n[FEN "4k3/8/8/8/8/8/8/4K3 w - - 0 1"]\n\n1. Kd2 *\n\n'
    fastpgn.to_parquet(pgn, tmp_path / "p.parquet", positions=True)
    got = games_reaching(tmp_path / "p.parquet", chess.STARTING_FEN).to_pylist()
    assert got == [{"game_id": "a", "ply": 0, "next_move": "e4"}]
    fastpgn.to_parquet(pgn, tmp_path / "plain.parquet")
    with pytest.raises(ValueError, match="no zobrist column: write it with positions=True"):
        games_reaching(tmp_path / "plain.parquet", chess.STARTING_FEN)
    with pytest.raises(FileNotFoundError):
        games_reaching(tmp_path / "none.parquet", chess.STARTING_FEN)


def test_games_reaching_without_duckdb_says_how_to_install(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(ImportError, match=r'pip install "fastpgn\[duckdb\]"'):
        games_reaching(tmp_path, chess.STARTING_FEN)



# -- the converter, CSV and Spark ---------------------------------------------------------------------

def convert(args: list[str]) -> tuple[int, str]:
    import contextlib

    from fastpgn.cli import main as cli_main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli_main(args + ["-q", "-j", "1"])
    return code, err.getvalue()


def test_the_converter_writes_the_columns_read_arrow_gives(tmp_path):
    path = shared("data", "edge-cases-nonlichess", "chesscom_export_2025_29games_incl-chess960.pgn")
    code, _ = convert([str(path), "1000000", "--format", "parquet", "--positions", "--fens", "-o", str(tmp_path)])
    assert code == 0
    table = pa.concat_tables(pq.read_table(p) for p in sorted(tmp_path.glob("*.parquet")))
    want = table_of(path)
    assert table.num_rows == want.num_rows == 29
    assert table.select(["zobrist", "fens"]).equals(want.select(["zobrist", "fens"]))
    assert table.schema.names[-2:] == ["zobrist", "fens"]


def test_the_converter_rejects_what_does_not_replay(tmp_path):
    (tmp_path / "in.pgn").write_bytes(b'[Event "a"]\n\n1. e4 e5 *\n\n[Event "b"]\n\n1. e4 Ke7 *\n\n')
    code, err = convert([str(tmp_path / "in.pgn"), "10", "--format", "parquet", "--positions",
                         "-o", str(tmp_path / "out")])
    assert code == 0        # (kept rejects are no failure: the converter's exit rule)
    table = pq.read_table(next((tmp_path / "out").glob("*.parquet")))
    assert table.column("event").to_pylist() == ["a"]
    assert "Ke7" in next((tmp_path / "out").glob("*.rejected.pgn")).read_text()


def test_the_converter_asks_for_a_format_with_columns(tmp_path, capsys):
    from fastpgn.cli import main as cli_main

    path = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    with pytest.raises(SystemExit) as exit_:
        cli_main([str(path), "10", "--positions", "-o", str(tmp_path)])
    assert exit_.value.code == 2
    assert "--positions writes a column of the analysis schema: add --format parquet or --format csv" in (
        capsys.readouterr().err)


def test_csv_has_the_keys_and_the_fens(tmp_path):
    import csv

    from fastpgn.csv_rows import to_csv

    path = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    code, _ = convert([str(path), "1000000", "--format", "csv", "--compression", "none", "--positions", "--fens",
                       "-o", str(tmp_path)])
    assert code == 0
    written = next(tmp_path.glob("*.csv")).read_bytes()
    out = io.BytesIO()
    to_csv(path, out, positions=True, fens=True)
    assert written == out.getvalue()            # (the kernel's CSV sink, and csv_text's rule)
    rows = list(csv.DictReader(io.StringIO(written.decode())))
    table = table_of(path).to_pylist()
    assert [list(map(int, r["zobrist"].split())) for r in rows] == [t["zobrist"] for t in table]
    assert [r["fens"].split(";") for r in rows] == [t["fens"] for t in table]


@pytest.mark.skipif("cy" not in SCAN, reason="the compiled scanner is not built here")
def test_both_csv_sinks_give_equal_bytes():
    data = decompressed(shared("data", "edge-cases-nonlichess", "chess960_rapid-wch-2009_fen-setup.pgn"))
    data += decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst"))
    py, cy = (SCAN[name].csv_from_block(data, 0, len(data), positions=True, fens=True) for name in ("py", "cy"))
    assert py == cy
    assert py[0].count(b"\r\n") == 35


def one_liner_rows(folder, key):
    """The docs' DuckDB and polars one-liners (docs/positions.md): game id -> (ply, next move), each."""
    import duckdb
    import polars as pl

    glob = str(folder / "*.parquet")
    by_duckdb = duckdb.sql(f"SELECT game_id, list_position(zobrist, {key}) AS ply, moves[ply + 1] AS next_move "
                           f"FROM read_parquet('{glob}') WHERE list_contains(zobrist, {key})").fetchall()
    by_polars = (pl.scan_parquet(glob)
                 .filter(pl.col("zobrist").list.contains(key))
                 .with_columns(ply=pl.col("zobrist").list.eval(pl.element().eq(key).arg_max()).list.first() + 1)
                 .select("game_id", "ply", next_move=pl.col("moves").list.get(pl.col("ply"), null_on_oob=True))
                 .collect().rows())
    return {g: (p, m) for g, p, m in by_duckdb}, {g: (p, m) for g, p, m in by_polars}


def test_the_docs_one_liners_find_what_games_reaching_finds(tmp_path):
    pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    pytest.importorskip("polars", reason='polars is not installed: pip install -e ".[test]"')
    fastpgn.to_parquet(shared("data", STANDARD), tmp_path / "a.parquet", positions=True)
    key = position_key("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    assert key == -3233443880761108323          # (the key docs/positions.md shows)
    want = {r["game_id"]: (r["ply"], r["next_move"]) for r in games_reaching(tmp_path, key_fen()).to_pylist()}
    assert len(want) > 20
    by_duckdb, by_polars = one_liner_rows(tmp_path, key)
    assert by_duckdb == by_polars == want


def key_fen() -> str:
    return "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"


@pytest.fixture(scope="module")
def spark():
    from helpers import spark_session

    yield from spark_session("fastpgn positions tests")


def test_spark_reads_the_keys_and_runs_the_docs_query(spark, tmp_path):
    pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    from pyspark.sql import functions as F

    from fastpgn import spark as fs

    path = shared("data", STANDARD)
    games = fs.read_pgn(spark, [str(path)], positions=True)
    assert games.schema["zobrist"].dataType.simpleString() == "array<bigint>"
    key = position_key(key_fen())
    hits = (games.where(F.array_contains("zobrist", F.lit(key)))
            .withColumn("ply", F.array_position("zobrist", F.lit(key)).cast("int"))
            .select("game_id", "ply", F.expr("try_element_at(moves, ply + 1)").alias("next_move")))
    got = {r["game_id"]: (r["ply"], r["next_move"]) for r in hits.collect()}
    fastpgn.to_parquet(path, tmp_path / "a.parquet", positions=True)
    assert got == {r["game_id"]: (r["ply"], r["next_move"]) for r in games_reaching(tmp_path, key_fen()).to_pylist()}
    assert len(got) > 20


def test_games_reaching_reads_a_partitioned_folder(tmp_path):
    pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    code, _ = convert([str(path), "1000000", "--format", "parquet", "--partition", "month", "--positions",
                       "-o", str(tmp_path)])
    assert code == 0 and list(tmp_path.glob("year=*/month=*/*.parquet"))
    got = games_reaching(tmp_path, chess.STARTING_FEN, columns=["moves"]).to_pylist()
    assert len(got) == 15 and all(r["ply"] == 0 and r["next_move"] == r["moves"][0] for r in got)
