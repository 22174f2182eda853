"""Game.to_pgn() and write_pgn: each game given back as it was read, byte for byte.

python-chess (a test-only oracle) reads what fastpgn writes as it reads the
input: the same headers, moves, comments, NAGs and variations.
"""

from __future__ import annotations

import io

import pytest

from fastpgn import Game, Where, read_games, write_pgn
from helpers import decompressed, game_texts, shared

chess_pgn = pytest.importorskip("chess.pgn")

LICHESS = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
ANNOTATED = ["world_matches_annotated-variations.pgn", "twic_232games.pgn", "python-chess_kasparov-deep-blue-1997.pgn",
             "python-chess_molinari-bordais-1979.pgn", "chessops_pathological-headers.pgn"]


def _python_chess(text: str) -> list[str]:
    """Every game as python-chess exports it (headers, comments, NAGs, variations): what it read."""
    stream = io.StringIO(text)
    games = []
    while (game := chess_pgn.read_game(stream)) is not None:
        games.append(str(game))
    return games


def test_lichess_games_come_back_as_lichess_wrote_them():
    path = shared(*LICHESS)
    texts = game_texts(path)                                  # lichess: one blank line after each game
    games = list(read_games(path))
    assert len(games) == len(texts) == 2499
    assert [g.to_pgn() + "\n" for g in games] == texts
    out = io.BytesIO()
    assert write_pgn(games, out) == 2499
    assert out.getvalue() + b"\n" == decompressed(path)


@pytest.mark.parametrize("name", ANNOTATED)
def test_annotated_games_read_back_as_python_chess_reads_the_input(name, tmp_path):
    path = shared("data", "edge-cases-nonlichess", name)
    games = list(read_games(path))
    out = tmp_path / "out.pgn"
    assert write_pgn(games, out) == len(games)
    assert _python_chess(out.read_text(encoding="utf-8")) == _python_chess(path.read_text(encoding="utf-8"))
    again = list(read_games(out))
    assert [(g.headers, g.moves, g.evals, g.clocks, g.result) for g in again] == \
        [(g.headers, g.moves, g.evals, g.clocks, g.result) for g in games]
    assert [g.to_pgn() for g in again] == [g.to_pgn() for g in games]


def test_an_extract_by_filter_is_the_same_games_byte_for_byte(tmp_path):
    path = shared(*LICHESS)
    texts = game_texts(path)
    keep = Where(min_elo=2000, speed="blitz")
    out = tmp_path / "extract.pgn"
    written = write_pgn(read_games(path, where=keep), out)
    # The oracle: python-chess's headers of every input game, the filter's rule applied by hand.
    wanted = []
    for text in texts:
        headers = chess_pgn.read_headers(io.StringIO(text))
        elos = [headers.get("WhiteElo", ""), headers.get("BlackElo", "")]
        base, _, inc = headers.get("TimeControl", "").partition("+")
        if (all(e.isdigit() and int(e) >= 2000 for e in elos) and base.isdigit() and inc.isdigit()
                and 180 <= int(base) + 40 * int(inc) < 480):
            wanted.append(text)
    assert 0 < written == len(wanted) < len(texts)
    assert out.read_text(encoding="utf-8") + "\n" == "".join(wanted)
    assert _python_chess(out.read_text(encoding="utf-8")) == _python_chess("".join(wanted))


def test_to_pgn_keeps_comments_nags_variations_and_the_line_ends():
    data = (b'[Event "a"]\r\n[White "A"]\r\n\r\n1. e4 {good; [%eval 0.3] [%clk 0:01:00]} e5?! $2\r\n'
            b'(1... c5 $1 {Sicilian} (1... e6)) 2. Nf3 ; rest of line\r\n*\r\n\r\n\r\n[Event "b"]\r\n\r\n1. d4 *')
    first, second = read_games(data)
    assert first.to_pgn_bytes() == data[:data.index(b"\r\n\r\n\r\n") + 2]
    assert second.to_pgn_bytes() == b'[Event "b"]\r\n\r\n1. d4 *\r\n'   # a line end (its own) where the input had none
    assert first.moves == ["e4", "e5?!", "Nf3"] and first.evals == ["0.3", None, None]


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_a_game_of_tags_alone_is_written_with_its_result_so_readers_keep_it_apart(end):
    # python-chess reads tags with no movetext and the next game as one game (the later tags win): the
    # result written as movetext keeps them two, and every line (the blank ones between games too) ends alike.
    texts = game_texts(shared(*LICHESS))[:3]
    alone = texts[1][:texts[1].index("\n\n") + 1]          # the tags of a real game, no movetext
    data = (texts[0] + alone + "\n" + texts[2]).replace("\n", end).encode()
    games = list(read_games(data))
    assert [g.moves == [] for g in games] == [False, True, False]
    result = games[1].headers["Result"]
    assert games[1].to_pgn() == (alone + "\n" + result + "\n").replace("\n", end)
    out = io.BytesIO()
    assert write_pgn(games, out) == 3
    written = out.getvalue().decode()
    assert "\n" not in written.replace(end, "")
    stream, back = io.StringIO(written), []
    while (game := chess_pgn.read_game(stream)) is not None:
        back.append((dict(game.headers), str(game.mainline_moves())))
    assert [headers for headers, _ in back] == [dict(chess_pgn.read_headers(io.StringIO(t)))
                                                for t in (texts[0], alone, texts[2])]
    assert [bool(moves) for _, moves in back] == [True, False, True]
    assert [g.to_pgn() for g in read_games(written.encode())] == [g.to_pgn() for g in games]
    hand = Game(0, 1, {"White": "A", "Result": "1-0"}, [], [], [], "")
    assert hand.to_pgn().rstrip().endswith("1-0")     # (a game made by hand: game_to_pgn writes the result)


def test_bytes_that_are_not_utf8_come_back_unchanged():
    data = b'[White "Jos\xe9"]\n\n1. e4 *\n'
    with pytest.warns(UnicodeWarning, match="not UTF-8"):
        (game,) = read_games(data)
    assert game.to_pgn_bytes() == data
    assert game.to_pgn().encode("utf-8", "surrogateescape") == data


def test_a_game_made_by_hand_is_written_as_game_to_pgn_writes_it():
    from fastpgn import game_to_pgn

    game = Game(0, 1, {"White": "A", "Black": "B"}, ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"],
                [None] * 7, [None] * 7, "1-0")
    assert game.to_pgn() == game_to_pgn(game)
    assert "7. " not in game.to_pgn() and game.to_pgn().rstrip().endswith("4. Qxf7# 1-0")
    out = io.BytesIO()
    write_pgn([game, next(read_games(b'[White "C"]\n\n1. d4 *\n'))], out)
    assert out.getvalue() == game.to_pgn().encode() + b'\n[White "C"]\n\n1. d4 *\n'
    with pytest.raises(TypeError, match="fastpgn.Game"):
        write_pgn(["1. e4 *"], io.BytesIO())


def test_a_game_read_headers_only_says_it_has_no_text_to_write():
    data = b'[White "A"]\n\n1. e4 {x} e5 (1... c5) *\n\n[White "B"]\n\n1. d4 *\n'
    games = list(read_games(data, headers_only=True))
    assert [g.headers["White"] for g in games] == ["A", "B"]
    with pytest.raises(ValueError, match="headers only"):
        games[0].to_pgn()
    with pytest.raises(ValueError, match="headers only"):
        write_pgn(games, io.BytesIO())
