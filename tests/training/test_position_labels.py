"""read_positions' training columns on the real corpus, on the live backend, against python-chess's replay (the
test-only oracle): move_id in every vocabulary, mirror=True as board.mirror(), the labels from the mover's view
and the Polyglot key, on lichess games and on the corpus's Chess960 games."""

from __future__ import annotations

import pytest

from fastpgn import read_positions
from fastpgn.training.vocab import NOT_IN_VOCABULARY, VOCABULARIES, ids, move_to_id
from helpers import first_games, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
np = pytest.importorskip("numpy", reason='numpy is not installed: pip install -e ".[test]"')
pytest.importorskip("chess.pgn", reason='python-chess (the oracle) is not installed: pip install -e ".[test]"')
import chess  # noqa: E402
import chess.pgn  # noqa: E402
import chess.polyglot  # noqa: E402

GAMES = 300
LICHESS = ("lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
CHESS960 = ("chess960_rapid-wch-2009_fen-setup.pgn", "chesscom_export_2025_29games_incl-chess960.pgn",
            "python-chess_cutechess-fischerrandom.pgn")
CODES = {(color, kind): kind + (0 if color else 6) for color in (True, False) for kind in range(1, 7)}
SCORES = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}
ROW = ["game_index", "ply", "board", "white_to_move", "castling", "ep_square", "from_square", "to_square", "move"]
LABELS = ["move_id", "polyglot", "result_mover", "mover_elo", "opponent_elo", "eval_cp_mover", "eval_mate_mover"]


@pytest.fixture(scope="module")
def lichess(tmp_path_factory):
    return first_games(shared("data", *LICHESS), GAMES, tmp_path_factory.mktemp("labels"))


def games_of(path) -> list:
    with open(path, encoding="utf-8-sig") as handle:
        games = []
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


def elo(headers, tag: str):
    value = headers.get(tag, "")
    return int(value) if value.isdigit() else None


def seen(board: chess.Board) -> tuple:
    """``(board codes, castling bits, en passant square)`` as the rows write them."""
    codes = [0] * 64
    for square, piece in board.piece_map().items():
        codes[square] = CODES[piece.color, piece.piece_type]
    rights = ((1, board.has_kingside_castling_rights, True), (2, board.has_queenside_castling_rights, True),
              (4, board.has_kingside_castling_rights, False), (8, board.has_queenside_castling_rights, False))
    castling = sum(bit for bit, has, color in rights if has(color))
    ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else -1
    return codes, castling, ep


def vocabulary_id(vocabulary: str, board: chess.Board, move: chess.Move) -> int:
    """The vocabulary's id of python-chess's move (its UCI: king takes rook on a Chess960 board)."""
    try:
        return move_to_id(vocabulary, move.uci(), board.turn, castling=board.is_castling(move),
                          chess960=board.chess960)
    except ValueError:      # (a Chess960 king that castles without moving: no queen-like move names it)
        assert board.chess960 and board.is_castling(move) and vocabulary != "lc0"
        return NOT_IN_VOCABULARY


def oracle(game, vocabulary: str, mirror: bool) -> list[dict]:
    """What each row of a game (final row included) should hold, from python-chess."""
    board = game.board()
    nodes = list(game.mainline())
    result = SCORES.get(game.headers.get("Result", "*"))
    white_elo, black_elo = elo(game.headers, "WhiteElo"), elo(game.headers, "BlackElo")
    rows = []
    for ply in range(len(nodes) + 1):
        node = nodes[ply] if ply < len(nodes) else None
        move = node.move if node else None
        turn = board.turn
        view = board if turn or not mirror else board.mirror()
        flip = (lambda s: s) if turn or not mirror else chess.square_mirror
        codes, castling, ep = seen(view)
        score = node.eval() if node else None
        rows.append({
            "ply": ply, "board": codes, "white_to_move": turn, "castling": castling, "ep_square": ep,
            "from_square": move and flip(move.from_square), "to_square": move and flip(move.to_square),
            "move": move and chess.Move(flip(move.from_square), flip(move.to_square), move.promotion).uci(),
            "move_id": move and vocabulary_id(vocabulary, board, move),
            "polyglot": chess.polyglot.zobrist_hash(board),
            "result_mover": None if result is None else (result if turn else -result),
            "mover_elo": white_elo if turn else black_elo, "opponent_elo": black_elo if turn else white_elo,
            "eval_cp_mover": score and score.pov(turn).score(), "eval_mate_mover": score and score.pov(turn).mate()})
        if move is not None:
            board.push(move)
    return rows


def assert_rows(path, vocabulary: str, mirror: bool, labels=LABELS) -> int:
    games = games_of(path)
    reader = read_positions(path, final=True, columns=ROW + labels, vocabulary=vocabulary, mirror=mirror)
    got = [row for batch in reader for row in batch.to_pylist()]
    assert not reader.rejected and reader.games_yielded == len(games)
    want = [(index, row) for index, game in enumerate(games) for row in oracle(game, vocabulary, mirror)]
    assert len(got) == len(want)
    for row, (index, expected) in zip(got, want):
        assert row["game_index"] == index
        assert {k: row[k] for k in expected if k in row} == {k: v for k, v in expected.items() if k in row}, (
            index, expected["ply"], path.name)
    return len(got)


@pytest.mark.parametrize("mirror", [False, True], ids=["board", "mirrored"])
@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_every_lichess_row_equals_python_chess(lichess, vocabulary, mirror):
    assert assert_rows(lichess, vocabulary, mirror) > 20 * GAMES


def test_the_lichess_games_carry_what_the_labels_are_made_of(lichess):
    # (so the test above covers what it says: evals of both signs and mates, every result, en passant)
    table = pa.Table.from_batches(list(read_positions(lichess, columns=["ep_square", *LABELS], final=True)))
    cp = [v for v in table.column("eval_cp_mover").to_pylist() if v is not None]
    mates = [v for v in table.column("eval_mate_mover").to_pylist() if v is not None]
    assert len(cp) > 1000 and min(cp) < 0 < max(cp) and min(mates) < 0 < max(mates)
    assert set(table.column("result_mover").to_pylist()) == {1, 0, -1}
    assert sum(1 for v in table.column("ep_square").to_pylist() if v >= 0) > 10


@pytest.mark.parametrize("mirror", [False, True], ids=["board", "mirrored"])
@pytest.mark.parametrize("vocabulary", VOCABULARIES)
@pytest.mark.parametrize("name", CHESS960)
def test_every_chess960_row_equals_python_chess(name, vocabulary, mirror):
    path = shared("data", "edge-cases-nonlichess", name)
    assert assert_rows(path, vocabulary, mirror, ["move_id", "polyglot", "mover_elo"]) > 100


def castles() -> list[tuple]:
    """``(board, king's square, rook's square, king's square after)`` of every castle of the Chess960 files."""
    out = []
    for name in CHESS960:
        for game in games_of(shared("data", "edge-cases-nonlichess", name)):
            board = game.board()
            for move in game.mainline_moves():
                if board.is_castling(move) and board.chess960:
                    before = board.copy()
                    board.push(move)
                    out.append((before, move.from_square, move.to_square, board.king(before.turn)))
                else:
                    board.push(move)
    return out


def test_chess960_castles_go_to_the_kings_destination_or_the_rook():
    found = castles()
    # the corpus holds the castles a two-square rule gets wrong: the king's destination is not two files away
    assert len(found) > 20 and sum(1 for _, king, _, after in found if abs(after - king) != 2) > 5
    for board, king, rook, after in found:
        for vocabulary in VOCABULARIES:
            uci = chess.Move(king, rook).uci()
            got = ids(vocabulary, np.array([king]), np.array([rook]), np.array([0]), np.array([board.turn]),
                      castling=np.array([True]), chess960=np.array([True]))[0]
            target = rook if vocabulary == "lc0" else after   # lc0: king takes rook; the others: where it lands
            if target == king:      # (a king that castles without moving: no queen-like move to name it)
                assert got == NOT_IN_VOCABULARY
                with pytest.raises(ValueError, match="not in the"):
                    move_to_id(vocabulary, uci, board.turn, castling=True, chess960=True)
                continue
            plain = move_to_id(vocabulary, chess.Move(king, target).uci(), board.turn)
            assert got == plain == move_to_id(vocabulary, uci, board.turn, castling=True, chess960=True), (
                vocabulary, board.fen(), uci)


def test_a_standard_castle_keeps_its_ids():
    for vocabulary in VOCABULARIES:
        e1g1 = move_to_id(vocabulary, "e1g1", castling=True)
        assert e1g1 == move_to_id(vocabulary, "e1h1", castling=True)
        assert e1g1 == move_to_id(vocabulary, "e1h1", castling=True, chess960=True)
        assert e1g1 == move_to_id(vocabulary, "e1h1" if vocabulary == "lc0" else "e1g1")


def test_a_bad_vocabulary_is_one_error_naming_them():
    with pytest.raises(ValueError, match="unknown move vocabulary 'leela': one of searchless, lc0, alphazero, maia2"):
        read_positions(b"1. e4 *\n", vocabulary="leela")


def test_default_columns_are_unchanged_and_mirror_keeps_white_rows(lichess):
    plain = pa.Table.from_batches(list(read_positions(lichess, final=True)))
    assert plain.schema.names[-1] == "move" and "move_id" not in plain.schema.names
    mirrored = pa.Table.from_batches(list(read_positions(lichess, final=True, mirror=True)))
    white = pa.compute.equal(plain.column("white_to_move"), True)
    assert plain.filter(white).equals(mirrored.filter(white))
    assert not plain.filter(pa.compute.invert(white)).equals(mirrored.filter(pa.compute.invert(white)))


def test_a_game_without_moves_or_result():
    pgn = b'[Result "*"]\n[WhiteElo "1500"]\n\n*\n\n[Result "*"]\n\n1. e4 *\n'
    rows = [r for b in read_positions(pgn, final=True, columns=["ply", *LABELS], mirror=True) for r in b.to_pylist()]
    assert [(r["ply"], r["move_id"], r["result_mover"], r["mover_elo"]) for r in rows] == [
        (0, None, None, 1500), (0, 317, None, None), (1, None, None, None)]
    assert rows[0]["polyglot"] == rows[1]["polyglot"] == chess.polyglot.zobrist_hash(chess.Board())


def test_a_fens_en_passant_square_counts_in_the_first_key():
    fen = "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1"
    rows = next(read_positions(f'[FEN "{fen}"]\n[SetUp "1"]\n\n1... Kd7 *\n'.encode(), columns=["polyglot"]))
    assert rows["polyglot"].to_pylist() == [chess.polyglot.zobrist_hash(chess.Board(fen))]


def test_any_jobs_gives_the_same_labels(lichess):
    columns = ["game_id", "ply", *LABELS, "board", "move"]
    one, two = (pa.Table.from_batches(list(read_positions(lichess, jobs=jobs, block_size=1 << 16, final=True,
                                                          columns=columns, vocabulary="lc0", mirror=True)))
                for jobs in (1, 2))
    assert one.num_rows > GAMES and one.equals(two)
