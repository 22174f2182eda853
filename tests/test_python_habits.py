"""What a python-chess user tries first, and gets: any input (text files, StringIO, lines, as well as
paths, bytes and binary files), readers that are iterators and context managers, ``san_to_uci`` on
``game.moves``, a read game written back as PGN or handed to python-chess, castling moves that
say what ``board.uci`` says, and FEN en passant squares read as python-chess reads them.

python-chess is the oracle here (test-only: fastpgn imports it only inside
``Game.to_python_chess``).
"""

from __future__ import annotations

import codecs
import io
import itertools
import os
import random
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

import fastpgn
from fastpgn import read_games, read_lines, scan as _scan
from fastpgn.errors import IllegalMoveError, InputError, PGNError
from helpers import CASES, DATA, backend_params, decompressed, shared

TEXT_CASE = CASES / "habits-text-crlf.pgn"   # two lichess games, CRLF, non-ASCII names, evals and clocks


def summary(source, **kwargs):
    """Everything a reader gives for ``source``: each game, each rejected game, and the error it ended with."""
    reader = read_games(source, errors="skip", **kwargs)
    games, error = [], None
    try:
        for g in reader:
            games.append((g.offset, g.number, list(g.headers.items()), g.moves, g.evals, g.clocks,
                          g.result, g.first_ply))
    except PGNError as exc:
        # a reader of a named file puts the name first (a test of its own holds that); every kind
        # of input must say the same after it
        message = str(exc)
        if reader.name and message.startswith(f"{reader.name}: "):
            message = message[len(reader.name) + 2:]
        error = (type(exc).__name__, message)
    rejected = [(r.offset, r.number, r.reason, r.error_offset, r.text) for r in reader.rejected]
    return games, rejected, error


def without_offsets(result):
    games, rejected, error = result
    return [g[1:] for g in games], [r[1:3] for r in rejected], error


# -- every input kind, the whole corpus --------------------------------------------------------

def corpus_files() -> list[Path]:
    if not DATA.exists():
        return []
    return sorted([*(DATA / "lichess-db").iterdir(), *(DATA / "lichess-other").iterdir(),
                   *(DATA / "edge-cases-nonlichess").glob("*.pgn")])


class Memo:
    """The live scanner kernel, its answer for a block remembered: a block met again is not scanned again.

    Every input kind of a file is cut into the same blocks when it delivers the
    same bytes (cuts depend on the data alone), so the kernel's answer is
    reused and each kind costs its own reading only; a kind that delivers
    other bytes misses and is scanned.
    """

    def __init__(self, kernel) -> None:
        self._kernel = kernel
        self._answers: dict = {}

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def games_from_block(self, data, start, end, **options):
        key = (bytes(data[start:end]), *sorted(options.items()))
        if key not in self._answers:
            self._answers[key] = self._kernel.games_from_block(data, start, end, **options)
        return self._answers[key]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(path, decompressed bytes, path of a decompressed copy, what reading the path gives) for every file."""
    files = corpus_files()
    if not files:
        shared("data")
    memo = Memo(_scan.kernel)
    folder = tmp_path_factory.mktemp("plain")
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_scan, "kernel", memo)
        for path in files:
            data = decompressed(path)
            plain = folder / (path.name + ".pgn")
            plain.write_bytes(data)
            out.append((path, data, plain, summary(str(path))))
    assert sum(len(games) for *_, (games, _r, _e) in out) > 13_000
    return memo, out


def _text_file(path, data, plain, opened):
    f = open(plain, encoding="utf-8", newline="")   # no newline translation: the bytes read are the file's
    opened.append(f)
    return f


def _binary_file(path, data, plain, opened):
    f = open(path, "rb")
    opened.append(f)
    return f


def _lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks, cut at ``\\n`` only (``str.splitlines`` also cuts at U+2028...)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


KINDS = {
    "path": lambda path, data, plain, opened: str(path),
    "pathlike": lambda path, data, plain, opened: path,
    "bytes": lambda path, data, plain, opened: path.read_bytes(),
    "binary-file": _binary_file,
    "text-file": _text_file,
    "stringio": lambda path, data, plain, opened: io.StringIO(data.decode("utf-8")),
    "str-lines": lambda path, data, plain, opened: _lines(data.decode("utf-8")),
    "bytes-line-generator": lambda path, data, plain, opened: (line for line in io.BytesIO(data)),
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_input_kind_reads_the_corpus_as_its_path_does(corpus, kind, monkeypatch):
    memo, files = corpus
    monkeypatch.setattr(_scan, "kernel", memo)
    opened = []
    for path, data, plain, expected in files:
        source = KINDS[kind](path, data, plain, opened)
        assert summary(source) == expected, path.name
    for f in opened:
        assert not f.closed     # a file object given is the caller's to close
        f.close()


def test_a_text_file_read_with_newline_translation_gives_the_same_games():
    """``open(path)`` as most people write it turns CRLF into LF: offsets count the text as read."""
    with open(TEXT_CASE, encoding="utf-8") as f:
        got = summary(f)
    assert without_offsets(got) == without_offsets(summary(TEXT_CASE))
    text = TEXT_CASE.read_text("utf-8").replace("\r\n", "\n")
    assert got[0][1][0] == len(text[:text.index("[Event", 1)].encode())


def test_text_offsets_count_utf8_bytes():
    text = TEXT_CASE.read_bytes().decode()
    games = list(read_games(io.StringIO(text, newline="")))
    second = text.index('[Event "Rated Bullet')
    assert games[1].offset == len(text[:second].encode()) > second   # names like "Łukasz → ♞" are several bytes
    assert games[0].headers["Black"] == "Łukasz → ♞" and games[1].headers["White"] == "Ånna"


def test_lines_need_no_line_breaks():
    text = TEXT_CASE.read_text("utf-8")
    expected = without_offsets(summary(TEXT_CASE))
    for lines in (text.splitlines(), [line.encode() for line in text.splitlines()],
                  (line for line in text.splitlines()), tuple(text.splitlines(keepends=True))):
        assert without_offsets(summary(lines)) == expected


def test_readers_that_return_str_are_text_files(tmp_path):
    class Reader:   # a file-like object of one's own, a read() and nothing else
        def __init__(self, text):
            self._text = text

        def read(self, n=-1):
            n = len(self._text) if n < 0 else n
            out, self._text = self._text[:n], self._text[n:]
            return out

    data = TEXT_CASE.read_bytes()
    expected = summary(data)
    assert summary(Reader(data.decode())) == expected
    with codecs.open(TEXT_CASE, encoding="utf-8") as f:   # not an io.TextIOBase
        assert without_offsets(summary(f)) == without_offsets(expected)
    import tempfile

    with tempfile.SpooledTemporaryFile(mode="w+", encoding="utf-8", newline="") as f:   # an IOBase, not TextIOBase
        f.write(data.decode())
        f.seek(0)
        assert summary(f) == expected


def test_stdin_as_bytes_or_as_text(monkeypatch):
    data = TEXT_CASE.read_bytes()
    expected = summary(data)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    assert summary("-") == expected
    monkeypatch.setattr(sys, "stdin", io.StringIO(data.decode(), newline=""))   # a program's stand-in: no .buffer
    assert summary("-") == expected
    assert not sys.stdin.closed


def test_text_is_read_a_piece_at_a_time():
    """An endless text stream gives its first games at once: nothing waits for the end of the input."""
    game = TEXT_CASE.read_text("utf-8")
    sizes = []

    class Endless(io.TextIOBase):
        at = 0

        def read(self, n=-1):
            sizes.append(n)
            assert n is not None and 0 < n <= 1 << 22
            out = (game * (n // len(game) + 2))[self.at:self.at + n]
            self.at = (self.at + n) % len(game)
            return out

    with read_games(Endless()) as games:
        first = list(itertools.islice(games, 5))
    assert [g.id for g in first] == ["habits01", "habits02"] * 2 + ["habits01"]
    assert 0 < len(sizes) < 10
    lines = itertools.cycle(game.splitlines())
    assert next(read_lines(lines)).startswith("habits01\u2502")


def test_what_cannot_be_pgn_is_named():
    with pytest.raises(TypeError, match="cannot read PGN from int"):
        list(read_games(42))
    with pytest.raises(TypeError, match="an iterable holding int"):
        list(read_games(["[Event \"x\"]", 7]))
    text = TEXT_CASE.read_text("utf-8")
    with pytest.raises(InputError, match=r"no such file \(a str is a path: give PGN text as io.StringIO"):
        list(read_games(text))            # PGN text as a str: a path to python, so say so
    with pytest.raises(InputError, match="no such file"):
        list(read_games(text * 200))      # too long for a file name, too


# -- readers: iterators, context managers, what they close --------------------------------------

def test_readers_are_iterators():
    data = TEXT_CASE.read_bytes()
    for reader in (read_games(data), read_lines(data)):
        assert iter(reader) is reader
        first = next(reader)
        rest = list(reader)
        assert len(rest) == 1 and first != rest[0]
        assert list(reader) == [] and next(reader, None) is None   # one pass, like a file
    games = read_games(data)
    assert next(games).id == "habits01" and next(games).id == "habits02"
    with pytest.raises(StopIteration):
        next(games)


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc/self/fd")
def test_readers_close_the_files_they_opened():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    before = _open_files()
    with read_games(path) as games:
        assert next(games).number == 1
        assert _open_files() == before + 1
    assert _open_files() == before                      # left early, closed on the way out
    with pytest.raises(StopIteration):
        next(games)
    with read_lines(str(path)) as lines:
        assert len(list(itertools.islice(lines, 10))) == 10
    assert _open_files() == before
    reader = read_games(path)
    for game in reader:
        if game.number == 3:
            break
    assert _open_files() == before + 1                  # a loop left early: the reader may go on...
    reader.close()
    assert _open_files() == before and next(reader, None) is None
    reader = read_games(path)
    assert _open_files() == before                      # nothing is opened before the first game is asked for
    assert sum(1 for _ in reader) == 999 and _open_files() == before
    bad = CASES / "invalid-move-token.pgn"
    with pytest.raises(PGNError):
        list(read_games(bad))
    assert _open_files() == before                      # an error closes it too


def test_readers_leave_open_the_files_they_were_given():
    for mode in ("rb", "r"):
        with open(TEXT_CASE, mode) as f:
            with read_games(f) as games:
                next(games)
            assert not f.closed
            f.seek(0)
            assert len(list(read_lines(f))) == 2 and not f.closed


# -- san_to_uci on game.moves ---------------------------------------------------------------------

def test_san_to_uci_takes_a_games_moves():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    games = list(itertools.islice(read_games(path), 150))
    for game in games:
        board = chess.Board()
        expected = []
        for san in game.moves:
            move = board.parse_san(san.rstrip("!?"))
            expected.append(move.uci())
            board.push(move)
        assert fastpgn.san_to_uci(game.moves) == expected == game.uci()
        assert fastpgn.san_to_uci(tuple(game.moves)) == expected
        assert fastpgn.san_to_uci(" ".join(game.moves)) == " ".join(expected)


def test_san_to_uci_list_forms():
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    assert fastpgn.san_to_uci([]) == [] and fastpgn.san_to_uci(()) == []
    assert fastpgn.san_to_uci(["O-O", "O-O-O"], fen) == ["e1g1", "e8c8"]
    assert fastpgn.san_to_uci(["O-O", "O-O-O"], fen, chess960=True) == ["e1h1", "e8a8"]
    assert fastpgn.san_to_uci([b"e4", b"e5?!", b" Nf3+ "]) == [b"e2e4", b"e7e5", b"g1f3"]
    with pytest.raises(IllegalMoveError) as err:
        fastpgn.san_to_uci(["e4", "e5", "Ke3"])
    assert str(err.value) == "illegal move 2. Ke3: no white king can move to e3"   # as for the string
    for moves, message in [
        (["e4", "e5 Nf3"], "illegal move 1... 'e5 Nf3': a list item must be one move"),
        (["e4", "e5", ""], "illegal move 2. '': a list item must be one move"),
        (["e4", "Ke7", "d4 d5"], "illegal move 1... Ke7: e7 holds a black pawn"),  # the first fault first
        (["e4", b"e5"], "not a list holding bytes and str"),
        (["e4", None], "not a list holding NoneType and str"),
    ]:
        with pytest.raises(IllegalMoveError) as err:
            fastpgn.san_to_uci(moves)
        assert message in str(err.value)


# -- a read game back to PGN, and to python-chess --------------------------------------------------

def _python_chess_games(text: str, count: int) -> list:
    stream = io.StringIO(text)
    return [chess.pgn.read_game(stream) for _ in range(count)]


# (folder, file, games to compare): lichess dumps, broadcasts with evals and clocks, API exports,
# Chess960 from a FEN tag, and variants fastpgn's board does not play (python-chess's board plays them).
PYTHON_CHESS_FILES = [
    ("lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst", 120),
    ("lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst", 15),
    ("lichess-other", "broadcast-study_2025-02_eval-and-clk.pgn.zst", 45),
    ("lichess-other", "api-export_2024-25_arena-games_50.pgn.zst", 50),
    ("lichess-other", "crazyhouse_2017-04_annotated-clk.pgn", 1),
    ("lichess-other", "antichess_programfox_minimal-headers.pgn", 2),
    ("edge-cases-nonlichess", "chesscom_export_2025_29games_incl-chess960.pgn", 29),
    ("edge-cases-nonlichess", "chess960_rapid-wch-2009_fen-setup.pgn", 20),
    ("edge-cases-nonlichess", "fics_atomic_10games.pgn", 10),
]


def _mainline(game) -> list:
    return [(node.move, node.nags, node.eval(), node.clock()) for node in game.mainline()]


@pytest.mark.parametrize("folder, name, count", PYTHON_CHESS_FILES, ids=[f[1] for f in PYTHON_CHESS_FILES])
def test_to_python_chess_is_what_python_chess_reads(folder, name, count):
    data = decompressed(shared("data", folder, name))
    ours = list(itertools.islice(read_games(data), count))
    theirs = _python_chess_games(data.decode("utf-8"), count)
    assert len(ours) == count
    evals = clocks = 0
    for game, expected in zip(ours, theirs):
        got = game.to_python_chess()
        assert isinstance(got, chess.pgn.Game)
        assert dict(got.headers) == dict(expected.headers)
        assert _mainline(got) == _mainline(expected), game
        assert got.end().board().fen() == expected.end().board().fen()
        evals += sum(node.eval() is not None for node in got.mainline())
        clocks += sum(node.clock() is not None for node in got.mainline())
    if name.startswith(("lichess_db_standard_rated_2023", "broadcast-study")):
        assert evals > 80 and clocks > 100


def test_to_python_chess_keeps_tenths_annotations_and_the_movetext_result():
    game = next(read_games(b'[White "A"]\n\n1. e4 { [%clk 0:00:09.9] } e5?! { [%eval #-3] [%clk 1:02:03] } '
                           b'2. Qh5!? *\n\n'))
    got = game.to_python_chess()
    assert [(n.clock(), n.nags) for n in got.mainline()] == [(9.9, set()), (3723.0, {6}), (None, {5})]
    assert list(got.mainline())[1].eval().white() == chess.engine.Mate(-3)
    assert got.headers["Result"] == "*" and got.headers["Black"] == "?"
    tagless = next(read_games(b"1. e4 e5 0-1\n")).to_python_chess()
    assert tagless.headers["Result"] == "0-1"      # from the movetext, as python-chess's reader takes it


def test_to_python_chess_names_the_package_when_it_is_missing(monkeypatch):
    game = next(read_games(b"1. e4 *"))
    monkeypatch.setitem(sys.modules, "chess", None)
    monkeypatch.setitem(sys.modules, "chess.pgn", None)
    with pytest.raises(ImportError, match="pip install chess"):
        game.to_python_chess()


PGN_BACK_FILES = [f for f in PYTHON_CHESS_FILES if not f[1].startswith(("crazyhouse", "antichess", "fics"))]


@pytest.mark.parametrize("folder, name, count", PGN_BACK_FILES, ids=[f[1] for f in PGN_BACK_FILES])
def test_a_read_game_writes_back_as_pgn(folder, name, count):
    data = decompressed(shared("data", folder, name))
    ours = list(itertools.islice(read_games(data), count))
    theirs = _python_chess_games(data.decode("utf-8"), count)
    for game, expected in list(zip(ours, theirs))[:25]:
        text = fastpgn.game_to_pgn(game)
        # to_pgn: the game as read, which python-chess reads as it reads the input
        as_read = chess.pgn.read_game(io.StringIO(game.to_pgn()))
        assert [n.move for n in as_read.mainline()] == [n.move for n in expected.mainline()]
        assert str(as_read) == str(expected)
        back = chess.pgn.read_game(io.StringIO(text))
        assert [n.move for n in back.mainline()] == [n.move for n in expected.mainline()]
        assert {k: v for k, v in back.headers.items() if k in game.headers} == dict(game.headers)
        again = next(read_games(text.encode()))
        assert again.moves == [n.san() for n in expected.mainline()]   # canonical SAN
        assert again.uci() == game.uci() and again.result == game.result


def test_game_to_pgn_takes_boards_and_games_only():
    with pytest.raises(TypeError, match="a Board or a Game from read_games, not str"):
        fastpgn.game_to_pgn("1. e4 *")
    game = next(read_games(b'[White "A"]\n\n1. e4 e5 *'))
    assert fastpgn.game_to_pgn(game, {"White": "B"}, result="1-0").splitlines()[4:7] == [
        '[White "B"]', '[Black "?"]', '[Result "1-0"]']


# -- castling moves and en passant squares, on both board kernels ----------------------------------

@pytest.fixture(params=backend_params("board._board"))
def board(request):
    """Each board kernel in turn (ids ``py``/``cy``)."""
    return request.param


START_960 = ["bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
             "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1",
             "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"]
START = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
         "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
         "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"]


def test_moves_say_what_python_chess_says(board):
    """Moves a board hands out (legal_moves, parse_san, push_san, pop, move_stack) are python-chess's."""
    rng = random.Random(7)
    castles = 0
    for fen, chess960 in [(f, False) for f in START] + [(f, True) for f in START_960]:
        for _ in range(6):
            ours, theirs = board.Board(fen, chess960), chess.Board(fen, chess960=chess960)
            for _ply in range(40):
                moves = ours.legal_moves()
                assert sorted(m.uci() for m in moves) == sorted(m.uci() for m in theirs.legal_moves)
                if not moves:
                    break
                castling = [m for m in moves if theirs.is_castling(chess.Move.from_uci(m.uci()))]
                assert [ours.uci(m) for m in castling] == [m.uci() for m in castling]
                # Random games castle rarely: castle when it can, often.
                move = rng.choice(castling if castling and rng.random() < 0.5 else moves)
                san = ours.san(move)
                castles += san.startswith("O-O")
                assert ours.parse_san(san) == move and ours.push_san(san).uci() == theirs.push_san(san).uci()
            assert [m.uci() for m in ours.move_stack] == [m.uci() for m in theirs.move_stack]
            assert ours.pop().uci() == theirs.pop().uci()
    assert castles > 20


def test_a_standard_board_takes_castling_either_way(board):
    b = board.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    move = b.push_san("O-O")
    assert move.uci() == b.root().uci(move) == "e1g1" and move == board.Move.from_uci("e1g1")
    b.pop()
    b.push(board.Move.from_uci("e1h1"))       # king takes rook, as fastpgn used to hand it out
    assert b.move_stack == [move] and b.fen().startswith("r3k2r/8/8/8/8/8/8/R4RK1 b")


EP_POSITIONS = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3",
    "8/8/8/KPp4r/8/8/8/4k3 w - - 0 1",
    "4k3/8/8/8/3pP3/8/8/4K3 b - - 0 1",
    "rnbqkbnr/pp1ppppp/8/8/2pPP3/8/PPP2PPP/RNBQKBNR b KQkq - 0 3",
    "4k3/8/8/2pPp3/8/8/8/4K3 w - - 0 1",
]


def test_en_passant_squares_read_as_python_chess_reads_them(board):
    """Any square is read; FEN keeps it where python-chess's default fen() keeps it (in every position
    python-chess calls valid; for the others see README: fastpgn also wants the double push possible)."""
    compared = kept = 0
    for fen in EP_POSITIONS:
        fields = fen.split()
        for square in ["-", *chess.SQUARE_NAMES]:
            text = " ".join(fields[:3] + [square] + fields[4:])
            ours, theirs = board.Board(text), chess.Board(text)
            if theirs.is_valid():
                assert ours.fen() == theirs.fen(), text
                assert ours.ep_square == (chess.square_name(theirs.ep_square)
                                          if theirs.has_legal_en_passant() else None)
                compared += 1
            assert ours.fen().split()[3] in ("-", square)   # kept or dropped, never another
            assert ours.fen() == board.Board(ours.fen()).fen()
            kept += ours.ep_square is not None
            assert sorted(m.uci() for m in ours.legal_moves()) == sorted(
                m.uci() for m in chess.Board(ours.fen()).legal_moves)
    assert compared >= 2 * len(EP_POSITIONS) and kept >= 4

