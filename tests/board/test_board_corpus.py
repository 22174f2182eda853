"""Real games replay on both backends (ids py/cy) and agree with python-chess, a test-only oracle.

Every game of ../shared/data/lichess-db/*.pgn.zst: UCI moves, final FEN and
outcome equal python-chess's, and the canonical SAN written back equals the
file's SAN without annotations. The ECO opening lines, the Chess.jl-written
games of seed 003, and the standard and Chess960 games of the other corpus
folders replay the same way. Files under ../shared are read in place.
"""

from __future__ import annotations

import csv
import io
import re

import chess
import chess.pgn
import pytest

from helpers import backend_params, decompressed, shared

_COMMENT = re.compile(r"\{[^}]*\}")
_NOT_A_MOVE = re.compile(r"\d+\.+|1-0|0-1|1/2-1/2|\*|\$\d+")
# 2013 lichess exports name the whole origin square (Rd1d2) where one
# coordinate is enough (R1d2); anything else must match exactly.
_OVERSPECIFIED = re.compile(r"[NBRQK][a-h][1-8]x?[a-h][1-8][+#]?")


@pytest.fixture(params=backend_params("board._board"))
def board(request):
    """Each board kernel in turn (ids ``py``/``cy``)."""
    return request.param


def _text(path):
    return decompressed(path).decode("utf-8-sig")


def _outcome(outcome):
    """python-chess's Outcome as (termination name, "w"/"b"/None), fastpgn's shape."""
    if outcome is None:
        return None
    return outcome.termination.name, None if outcome.winner is None else "wb"[not outcome.winner]


def _ours(outcome):
    return None if outcome is None else (outcome.termination.name, outcome.winner)


class _Oracle(chess.pgn.BaseVisitor):
    """Mainline moves, start and final position of one game, read by python-chess."""

    def begin_game(self):
        self.headers, self.sans, self.ucis, self.errors = {}, [], [], []
        self.start, self.final, self.null = None, None, False

    def visit_header(self, name, value):
        self.headers[name] = value

    def begin_variation(self):
        return chess.pgn.SKIP

    def parse_san(self, board, san):
        self.sans.append(san)
        move = board.parse_san(san)
        self.null = self.null or not move
        return move

    def visit_move(self, board, move):
        self.ucis.append(move.uci())

    def visit_board(self, board):
        if self.start is None:
            self.start = board.copy(stack=False)
        self.final = board

    def handle_error(self, error):
        self.errors.append(error)

    def end_game(self):
        final = self.final
        self.fen = final.fen()
        self.outcome = _outcome(final.outcome())
        # A draw can be claimed only after 7 reversible plies (threefold, by the
        # next move) or 99 (fifty moves): below that python-chess's costly
        # claim search cannot differ from the plain outcome.
        self.claimed = (_outcome(final.outcome(claim_draw=True)) if final.halfmove_clock >= 7
                        else self.outcome)

    def result(self):
        return self


def _games(text):
    handle = io.StringIO(text)
    while (game := chess.pgn.read_game(handle, Visitor=_Oracle)) is not None:
        yield game


# -- lichess-db ------------------------------------------------------------------

@pytest.fixture(scope="module")
def lichess():
    """Every game of lichess-db as (label, raw SAN tokens, python-chess's reading)."""
    folder = shared("data", "lichess-db")
    games = []
    for path in sorted(folder.glob("*.pgn.zst")):
        for i, chunk in enumerate(re.split(r"\n\n(?=\[Event )", _text(path).strip("\n"))):
            game = next(_games(chunk))
            movetext = chunk.partition("\n\n")[2]
            tokens = [t for t in _COMMENT.sub(" ", movetext).split() if not _NOT_A_MOVE.fullmatch(t)]
            assert len(tokens) == len(game.ucis) and not game.errors, (path.name, i)
            games.append((f"{path.name} game {i + 1}", tokens, game))
    assert len(games) > 8000
    return games


def test_lichess_games_replay_like_python_chess(board, lichess):
    wrong = []
    for label, tokens, game in lichess:
        sans = " ".join(tokens)
        if board.san_to_uci(sans) != " ".join(game.ucis):
            wrong.append(f"{label}: UCI")
            continue
        final = board.replay(sans)
        if final.fen() != game.fen:
            wrong.append(f"{label}: FEN {final.fen()} != {game.fen}")
        if _ours(final.outcome()) != game.outcome:
            wrong.append(f"{label}: outcome {final.outcome()} != {game.outcome}")
        if _ours(final.outcome(claim_draw=True)) != game.claimed:
            wrong.append(f"{label}: claimed outcome {final.outcome(claim_draw=True)} != {game.claimed}")
    assert wrong == []


def test_lichess_outcomes_cover_every_kind_that_occurs(lichess):
    kinds = {game.claimed[0] for _, _, game in lichess if game.claimed}
    assert {"CHECKMATE", "STALEMATE", "INSUFFICIENT_MATERIAL", "THREEFOLD_REPETITION"} <= kinds


def test_lichess_canonical_san_is_the_files_san(board, lichess):
    wrong = []
    overspecified = 0
    for label, tokens, game in lichess:
        written = board.canonical_san(" ".join(tokens)).split()
        for ply, (ours, theirs) in enumerate(zip(written, tokens)):
            theirs = theirs.rstrip("!?")
            if ours == theirs:
                continue
            if _OVERSPECIFIED.fullmatch(theirs):
                b = chess.Board()
                for uci in game.ucis[:ply]:
                    b.push_uci(uci)
                if ours == b.san(chess.Move.from_uci(game.ucis[ply])):
                    overspecified += 1
                    continue
            wrong.append(f"{label} ply {ply + 1}: {ours} != {theirs}")
    assert wrong == []
    assert overspecified < 1000


@pytest.fixture(scope="module")
def lichess_fens(lichess):
    """python-chess's FEN after every ply, for the 2021-10 and 2023-02 files (a FEN per ply is costly)."""
    out = []
    for label, tokens, game in lichess:
        if "2023-02" in label or "2021-10" in label:
            b = chess.Board()
            expected = []
            for uci in game.ucis:
                b.push_uci(uci)
                expected.append(b.fen())
            out.append((label, " ".join(tokens), expected))
    assert len(out) == 999 + 15
    return out


def test_lichess_fens_after_every_ply(board, lichess_fens):
    wrong = [label for label, sans, expected in lichess_fens if board.replay_fens(sans) != expected]
    assert wrong == []


# -- other real games: standard and Chess960 ------------------------------------------

@pytest.fixture(scope="module")
def other_games():
    """The standard and Chess960 games of edge-cases-nonlichess and lichess-other, read by python-chess."""
    found = []
    for folder in ("edge-cases-nonlichess", "lichess-other"):
        for path in sorted(shared("data", folder).glob("*.pgn*")):
            for i, game in enumerate(_games(_text(path))):
                if game.start.uci_variant == "chess":
                    found.append((f"{path.name} game {i + 1}", game))
    return found


def test_standard_and_chess960_games_of_other_sources(board, other_games):
    games = other_games
    assert sum(g.start.chess960 for _, g in games) >= 30
    # A null move ("Z0" in a ChessBase export) passes, as python-chess plays it: UCI 0000.
    assert sum(g.null for _, g in games) >= 1
    wrong = []
    for label, game in games:
        fen = game.start.fen() if game.start.chess960 or game.start.fen() != chess.STARTING_FEN else None
        sans = " ".join(game.sans)
        assert not game.errors, label
        if board.san_to_uci(sans, fen=fen, chess960=game.start.chess960) != " ".join(game.ucis):
            wrong.append(f"{label}: UCI")
            continue
        final = board.replay(sans, fen=fen, chess960=game.start.chess960)
        if final.fen() != game.fen or _ours(final.outcome()) != game.outcome:
            wrong.append(f"{label}: {final.fen()} {final.outcome()} != {game.fen} {game.outcome}")
    assert wrong == []


# -- ECO opening lines ----------------------------------------------------------------------

def test_opening_lines_replay_like_python_chess(board):
    rows = []
    for path in sorted(shared("data", "openings").glob("*.tsv")):
        with open(path, newline="", encoding="utf-8") as fh:
            rows.extend(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) >= 3400
    wrong = []
    for row in rows:
        sans = [t for t in row["pgn"].split() if not _NOT_A_MOVE.fullmatch(t)]
        expected = chess.Board()
        for san in sans:
            expected.push_san(san)
        final = board.replay(" ".join(sans))
        if final.fen() != expected.fen() or board.canonical_san(" ".join(sans)) != " ".join(sans):
            wrong.append(f"{row['eco']} {row['name']}")
    assert wrong == []


# -- Chess.jl-written games (seed 003) ---------------------------------------------------------

@pytest.mark.parametrize("name", ["games-1-20.concatenated.pgn", "games-with-setup-fen.pgn"])
def test_chess_jl_games_replay(board, name):
    games = list(_games(_text(shared("conformance", "003-chessjl", name))))
    assert games and all(not g.errors for g in games)
    for game in games:
        fen = game.headers.get("FEN")
        final = board.replay(" ".join(game.sans), fen=fen)
        assert final.fen() == game.fen
        assert board.san_to_uci(" ".join(game.sans), fen=fen) == " ".join(game.ucis)
