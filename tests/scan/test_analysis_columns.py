"""The analysis columns (win_percent, judgement, move_seconds, accuracy, ACPL, judgement counts) on each backend:
equal to Game's values (fastpgn.accuracy) over every game of the corpus, and at the edges lichess's rules have.

The compiled sink computes these in C; the pure one calls fastpgn.accuracy. Their tables are compared with
each other in test_columns_differential.py; here each backend is held to what a user reads from a Game.
"""

from __future__ import annotations

import struct

import pytest

import fastpgn
from fastpgn.schema import time_control
from helpers import decompressed, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
from fastpgn.arrow import record_batch  # noqa: E402

PER_GAME = ("white_accuracy", "black_accuracy", "white_acpl", "black_acpl", "white_inaccuracies", "white_mistakes",
            "white_blunders", "black_inaccuracies", "black_mistakes", "black_blunders")
ANALYSIS = ("win_percent", "judgement", "move_seconds") + PER_GAME


def f32(x):
    """What a float32 column holds for the double ``x``."""
    return None if x is None else struct.unpack("f", struct.pack("f", x))[0]


def rows(scan, data: bytes) -> list[dict]:
    """The analysis columns of each good game of ``data``, read by kernel ``scan``, with its offset."""
    columns, *_ = scan.columns_from_block(data, 0, len(data))
    return record_batch({name: columns[name] for name in ("byte_offset",) + ANALYSIS}).to_pylist()


def expected(game) -> dict:
    """The analysis columns as Game's properties give them (fastpgn.accuracy), as the columns store them."""
    has_evals = any(e is not None for e in game.evals)
    has_clocks = any(c is not None for c in game.clocks) and None not in time_control(game.headers.get("TimeControl"))
    row = {
        "win_percent": [f32(w) for w in game.win_percents] if has_evals else None,
        "judgement": game.judgements if has_evals else None,
        "move_seconds": [f32(s) for s in game.move_seconds] if has_clocks else None,
    }
    for name in PER_GAME:
        value = getattr(game, name)
        row[name] = f32(value) if name.endswith("accuracy") else value
    return row


def _files_with_evals():
    folder = shared("data")
    return sorted(folder.glob("lichess-db/*.pgn.zst")) + sorted(folder.glob("lichess-other/*.pgn*"))


def test_corpus_columns_equal_game_values(scan):
    """Every game of the corpus with evals (and every one with clocks) against Game's values."""
    analysed = with_evals = with_clocks = 0
    for path in _files_with_evals():
        data = decompressed(path)
        games = {g.offset: g for g in fastpgn.read_games(data, errors="skip")}
        for row in rows(scan, data):
            game = games[row.pop("byte_offset")]
            want = expected(game)
            assert row == want, (path.name, game.id)
            with_evals += row["win_percent"] is not None
            with_clocks += row["move_seconds"] is not None
            analysed += row["white_acpl"] is not None
    # (the corpus: 373 games with evals, every one evaluated throughout; 3,988 with clocks and a time control)
    assert analysed >= 370 and with_evals >= analysed and with_clocks >= 3_900


def table(scan, pgn: str) -> dict:
    """The one game of ``pgn``'s analysis columns, read by kernel ``scan``; Game's values must agree."""
    data = pgn.encode()
    (row,) = rows(scan, data)
    row.pop("byte_offset")
    assert row == expected(next(fastpgn.read_games(data)))
    return row


MOVES = "1. e4 {E1} e5 {E2} 2. Qh5 {E3} Nc6 {E4} 3. Bc4 {E5} Nf6 {E6} 4. Qxf7# {E7} 1-0"


def game(*evals, tags: str = "", moves: str = MOVES) -> str:
    text = moves
    for i, e in enumerate(evals, 1):
        text = text.replace(f"{{E{i}}}", "" if e is None else f"{{ [%eval {e}] }}")
    for i in range(len(evals) + 1, 8):
        text = text.replace(f"{{E{i}}}", "")
    return f"{tags}\n\n{text}\n"


def test_mating_last_move_without_eval_is_left_out(scan):
    row = table(scan, game("0.2", "0.3", "0.1", "0.2", "0.1", "#1"))
    assert row["judgement"] == [None, None, None, None, None, "Blunder", None]
    assert row["win_percent"][-1] is None and row["black_blunders"] == 1
    assert row["white_acpl"] == (0 + 20 + 10) // 3                    # lila #11207: the mate is not counted
    assert 0 < row["white_accuracy"] <= 100 and 0 < row["black_accuracy"] <= 100
    # Not a mate: a missing last eval leaves the per-game values out, the per-ply ones stay.
    unmated = table(scan, game("0.2", "0.3", "0.1", "0.2", "0.1", "#1").replace("Qxf7#", "Qxf7+"))
    assert all(unmated[name] is None for name in PER_GAME)
    assert unmated["judgement"][5] == "Blunder"


def test_mates_both_ways_and_clamped_centipawns(scan):
    row = table(scan, game("#5", "#-3", "20.0", "-400", "#0", "#-1", "0.0"))
    white, black = f32(fastpgn.accuracy.win_percent(1000)), f32(fastpgn.accuracy.win_percent(-1000))
    assert row["win_percent"][0:6] == [white, black, white, black, white, black]
    # Clamped to +-1000 (a mate of 0 read as White's, as lila's forceAsCp does), every move gains.
    assert (row["white_acpl"], row["black_acpl"]) == (0, 0) and row["judgement"] == [None] * 7


def test_mate_created_and_lost(scan):
    assert table(scan, game("0.3", "0.2", "#-4"))["judgement"][:3] == [None, None, "Blunder"]
    assert table(scan, game("0.3", "-7.5", "#-4"))["judgement"][2] == "Mistake"
    assert table(scan, game("0.3", "-10.5", "#-4"))["judgement"][2] == "Inaccuracy"
    assert table(scan, game("0.3", "#3", "8.0"))["judgement"][2] == "Mistake"
    assert table(scan, game("0.3", "#3", "#-2"))["judgement"][2] == "Blunder"
    assert table(scan, game("0.3", "#3", "#2"))["judgement"][2] is None


def test_black_to_move_from_a_fen(scan):
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    row = table(scan, f'[FEN "{fen}"]\n[SetUp "1"]\n[TimeControl "60+0"]\n\n'
                      '1... e5 { [%eval 9.0] [%clk 0:01:00] } 2. Nf3 { [%eval 9.0] [%clk 0:01:00] } '
                      'Nc6 { [%eval 9.5] [%clk 0:00:55] } *\n')
    assert row["judgement"] == ["Blunder", None, None] and row["black_blunders"] == 1 and row["white_blunders"] == 0
    assert row["black_accuracy"] < 20 < 99 < row["white_accuracy"]
    assert row["move_seconds"] == [0, 0, 5]
    # Only the second field says who moves: one with odd whitespace between the fields still reads.
    spaced = table(scan, f'[FEN "{fen.replace(" ", chr(9) + " ", 1)}"]\n\n'
                         '1... e5 { [%eval 9.0] } 2. Nf3 { [%eval 9.0] } *\n')
    assert spaced["judgement"] == ["Blunder", None]


def test_no_evals_single_ply_and_unreadable_evals(scan):
    plain = table(scan, "\n1. e4 e5 *\n")
    assert all(plain[name] is None for name in ANALYSIS)
    single = table(scan, "\n1. e4 { [%eval 0.2] } *\n")
    assert (single["white_accuracy"], single["black_accuracy"]) == (None, None)   # lichess: none unless both moved
    assert (single["white_acpl"], single["black_acpl"]) == (0, None)
    assert (single["white_blunders"], single["black_blunders"]) == (0, 0)
    # An eval that does not read counts as none: the per-game values are left out.
    bad = table(scan, game("0.2", "1.2.3", "0.1", "0.2", "0.1", "0.3", "#1"))
    assert bad["win_percent"][1] is None and bad["white_accuracy"] is None
    empty = table(scan, '[White "A"]\n\n*\n')
    assert empty["win_percent"] is None and empty["white_accuracy"] is None


def test_clocks_missing_correspondence_and_berserk(scan):
    timed = table(scan, '[TimeControl "60+1"]\n\n1. e4 { [%clk 0:01:00] } e5 { [%clk 0:01:00] } '
                        '2. Nf3 { [%clk 0:00:58.5] } Nc6 3. Bc4 { [%clk 0:00:50] } Nf6 { [%clk 0:00:59] } *\n')
    assert timed["move_seconds"] == [0, 0, 2.5, None, 9.5, None]
    corr = table(scan, '[TimeControl "-"]\n\n1. e4 { [%clk 0:01:00] } e5 { [%clk 0:01:00] } *\n')
    assert corr["move_seconds"] is None
    untimed = table(scan, '\n1. e4 { [%clk 0:01:00] } e5 *\n')
    assert untimed["move_seconds"] is None
    berserk = table(scan, '[TimeControl "180+2"]\n\n1. e4 { [%clk 0:01:30] } e5 { [%clk 0:03:00] } '
                          '2. Nf3 { [%clk 0:01:25] } Nc6 { [%clk 0:02:58] } *\n')
    assert berserk["move_seconds"] == [0, 0, 5, 4]
    zero = table(scan, '[TimeControl "0+1"]\n\n1. e4 { [%clk 0:00:03] } e5 { [%clk 0:00:03] } '
                       '2. Nf3 { [%clk 0:00:04] } *\n')
    assert zero["move_seconds"] == [0, 0, 0]
    tenths = table(scan, '[TimeControl "180+0"]\n\n1. e4 { [%clk 0:02:59.9] } e5 { [%clk 0:02:59.7] } '
                         '2. Nf3 { [%clk 0:02:57.7] } Nc6 { [%clk 0:02:59] } *\n')
    # Whole-second clocks past 2**53 are subtracted exactly (as ints), as Game.move_seconds does.
    huge = table(scan, '[TimeControl "180+2"]\n\n1. e4 { [%clk 999999999999999:59:59] } e5 '
                       '2. Nf3 { [%clk 999999999999999:59:59] } *\n')
    assert huge["move_seconds"][1:] == [None, 2.0]
    assert tenths["move_seconds"] == [f32(180 - 179.9), f32(180 - 179.7), f32(179.9 - 177.7), f32(179.7 - 179)]


def test_lila_vectors_through_the_columns(scan):
    """lila's AccuracyPercentTest vectors as games (test_accuracy holds the functions to all of them)."""
    flat = [15] * 20
    vectors = [([15, 15], (100, 1), (100, 1)), ([-900, -900], (10, 5), (100, 1)), ([-900, 0], (10, 5), (10, 5)),
               (flat + [-900], (50, 5), (100, 1)), ([-50, 15] * 50, (76, 8), (76, 8)),
               ([-435, 15] * 50, (20, 8), (20, 8))]
    for cps, white, black in vectors:
        moves = " ".join(f"{['Nf3', 'Nf6', 'Ng1', 'Ng8'][i % 4]} {{ [%eval {cp / 100}] }}" for i, cp in enumerate(cps))
        row = table(scan, f"\n{moves} *\n")
        assert abs(row["white_accuracy"] - white[0]) <= white[1] and abs(row["black_accuracy"] - black[0]) <= black[1]
