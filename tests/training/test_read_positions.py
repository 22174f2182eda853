"""read_positions on the real corpus, on the live backend: every row equals python-chess's replay (the
test-only oracle), rows add up to the games' plies, any ``jobs`` gives the same batches, a game that does not
replay is rejected with its reason and the counts reconcile."""

from __future__ import annotations

import io

import pytest

from fastpgn import read_arrow, read_positions
from helpers import first_games, game_texts, official_schema, release_rows, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pytest.importorskip("chess.pgn", reason='python-chess (the oracle) is not installed: pip install -e ".[test]"')
import chess  # noqa: E402
import chess.pgn  # noqa: E402

GAMES = 300
CODES = {(color, kind): kind + (0 if color else 6) for color in (True, False) for kind in range(1, 7)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    dump = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    return first_games(dump, GAMES, tmp_path_factory.mktemp("positions"))


@pytest.fixture(scope="module")
def texts():
    return game_texts(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))[:GAMES]


def oracle_rows(text: str, final: bool) -> list[tuple]:
    """What each row of a game should hold, from python-chess."""
    game = chess.pgn.read_game(io.StringIO(text))
    board = game.board()
    moves = list(game.mainline_moves())
    rows = []
    for ply in range(len(moves) + (1 if final else 0)):
        codes = [0] * 64
        for square, piece in board.piece_map().items():
            codes[square] = CODES[piece.color, piece.piece_type]
        castling = sum(bit for bit, square in ((1, chess.H1), (2, chess.A1), (4, chess.H8), (8, chess.A8))
                       if board.castling_rights & chess.BB_SQUARES[square])
        ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else -1
        move = moves[ply] if ply < len(moves) else None
        rows.append((game.headers["Site"].rsplit("/", 1)[-1], ply, codes, board.turn, castling, ep,
                     board.halfmove_clock, board.fullmove_number,
                     move and move.from_square, move and move.to_square, move and (move.promotion or 0),
                     move and move.uci()))
        if move is not None:
            board.push(move)
    return rows


COLUMNS = ["game_id", "ply", "board", "white_to_move", "castling", "ep_square", "halfmove", "fullmove",
           "from_square", "to_square", "promotion", "move"]


def rows_of(reader) -> list[tuple]:
    return [tuple(row[c] for c in COLUMNS) for batch in reader for row in batch.to_pylist()]


@pytest.mark.parametrize("final", [False, True])
def test_every_row_equals_python_chess(corpus, texts, final):
    reader = read_positions(corpus, final=final, columns=COLUMNS, batch_size=5000)
    got = rows_of(reader)
    want = [row for text in texts for row in oracle_rows(text, final)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w, (g[0], g[1])
    assert reader.games_yielded == GAMES and not reader.rejected
    assert reader.positions_yielded == len(got)


def test_rows_add_up_to_the_plies_and_carry_the_game_columns(corpus):
    games = pa.Table.from_batches(list(read_arrow(corpus, columns=["game_id", "plies", "white_elo", "clock",
                                                                   "eval_cp", "speed"])))
    table = pa.Table.from_batches(list(read_positions(corpus, columns=["game_id", "game_index", "ply", "white_elo",
                                                                       "speed", "clock", "eval_cp"])))
    assert table.num_rows == sum(games.column("plies").to_pylist()) > GAMES
    by_game = {row["game_id"]: row for row in games.to_pylist()}
    for row in table.to_pylist():
        game = by_game[row["game_id"]]
        assert row["white_elo"] == game["white_elo"] and row["speed"] == game["speed"]
        assert row["clock"] == (game["clock"][row["ply"]] if game["clock"] else None)
        assert row["eval_cp"] == (game["eval_cp"][row["ply"]] if game["eval_cp"] else None)
    assert table.column("game_index").to_pylist() == [
        i for i, n in enumerate(games.column("plies").to_pylist()) for _ in range(n)]


def test_any_jobs_gives_the_same_batches(corpus):
    one = pa.Table.from_batches(list(read_positions(corpus, jobs=1, block_size=1 << 16, final=True)))
    two = pa.Table.from_batches(list(read_positions(corpus, jobs=2, block_size=1 << 16, final=True)))
    assert one.num_rows > GAMES
    assert one.equals(two)


def test_a_game_that_does_not_replay_is_rejected_with_its_reason(texts):
    texts = texts[:3]
    bad = texts[1].replace(" 1. ", " 1. Ke2 ", 1) if " 1. " in texts[1] else texts[1].replace("1. ", "1. Ke2 ", 1)
    data = "".join([texts[0], bad, texts[2]]).encode()
    reader = read_positions(data, errors="skip", columns=["game_id", "ply"])
    table = pa.Table.from_batches(list(reader))
    arrow = read_arrow(data, errors="skip", uci=True, columns=["game_id"])
    kept = [row["game_id"] for batch in arrow for row in batch.to_pylist()]
    assert sorted(set(table.column("game_id").to_pylist())) == sorted(kept) and len(kept) == 2
    assert [(r.number, r.reason) for r in reader.rejected] == [(r.number, r.reason) for r in arrow.rejected]
    assert len(reader.rejected) == 1 and "Ke2" in reader.rejected[0].reason
    assert reader.games_read == reader.games_yielded + len(reader.rejected) + reader.games_filtered == 3
    with pytest.raises(ValueError, match="Ke2"):
        list(read_positions(data))


def test_a_filter_counts_its_games(corpus):
    reader = read_positions(corpus, where={"min_elo": 1800}, columns=["game_id", "white_elo", "black_elo"])
    rows = [row for batch in reader for row in batch.to_pylist()]
    assert rows and all(min(r["white_elo"], r["black_elo"]) >= 1800 for r in rows)
    assert 0 < reader.games_filtered < GAMES
    assert reader.games_read == reader.games_yielded + len(reader.rejected) + reader.games_filtered == GAMES


def test_a_game_from_a_fen_starts_there():
    pgn = b'[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 5 40"]\n[SetUp "1"]\n\n40. e4 Kd7 *\n'
    rows = next(read_positions(pgn, final=True)).to_pylist()
    assert [r["ply"] for r in rows] == [0, 1, 2]
    assert [(r["halfmove"], r["fullmove"], r["ep_square"], r["castling"]) for r in rows] == [
        (5, 40, -1, 0), (0, 40, -1, 0), (1, 41, -1, 0)]
    assert rows[0]["board"][chess.E2] == 1 and rows[1]["board"][chess.E4] == 1
    assert rows[2]["move"] is None and rows[2]["from_square"] is None


def test_unknown_columns_are_named():
    with pytest.raises(ValueError, match="no column 'bored'"):
        read_positions(b"1. e4 *\n", columns=["bored"])


def test_lichess_parquet_release_gives_the_positions_of_its_pgn(corpus, tmp_path):
    import pyarrow.parquet as pq

    pgn = corpus.read_bytes()
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(release_rows(pgn), schema=official_schema()), path)
    columns = ["game_id", "ply", "board", "move"]    # none the games' own columns make from the moves
    from_release = pa.Table.from_batches(list(read_positions(path, columns=columns)))
    from_pgn = pa.Table.from_batches(list(read_positions(pgn, columns=columns)))
    assert from_release.num_rows == from_pgn.num_rows > GAMES
    assert from_release.equals(from_pgn)
