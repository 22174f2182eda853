"""lichess's rules are defined once (``fastpgn.lichess``): every kernel's copy of them is held to that table.

The compiled kernel keeps its own C copies (the speed limits in
``scan/filters.pxi``'s ``_speed_bit``, the speed names of the ``speed``
column, the codes of fields 4 and 5 in ``scan/lines.pxi``); each test runs on
both backends (the ``scan`` fixture, or the live backend of the run), so a
table changed in one place and not the other fails here.
"""

from __future__ import annotations

import pytest

from fastpgn import lichess, oneliner, openings
from fastpgn.arrow import read_arrow
from helpers import decompressed, real_game, shared, with_draw_offers

# Every limit, a second under it, with and without an increment that carries the estimate across it.
TIME_CONTROLS = sorted({f"{base}+{inc}" for _, limit in lichess.SPEED_LIMITS
                        for seconds in (limit - 1, limit, limit + 1)
                        for inc in (0, 1, 2, 5)
                        for base in (seconds - lichess.INCREMENT_MOVES * inc,) if base >= 0}
                       | {"0+0", "999999999+999999999", "-", "?", "", "+", "1+", "+1", "1+2+3", "a+1", "1 +2",
                          "60+1.5", "0060+0", "1234567890+0", "١٢٠+٠"})


def test_the_kernels_speed_tables_are_lichess_s(scan):
    assert scan.SPEEDS == lichess.SPEEDS
    assert scan.SPEED_LIMITS == tuple(limit for _, limit in lichess.SPEED_LIMITS)
    assert scan.SEP == lichess.SEP.encode()


@pytest.mark.parametrize("time_control", TIME_CONTROLS)
def test_the_kernels_speed_rule_is_lichess_s(scan, time_control):
    """speed_bit (what a speed filter tests) names lichess's speed, on str and bytes alike."""
    expected = lichess.speed_of(time_control)
    want = 1 << lichess.SPEEDS.index(expected) if expected else 0
    assert scan.speed_bit(time_control) == want
    assert scan.speed_bit(time_control.encode()) == want


def _column(source, name: str) -> list:
    return [value for batch in read_arrow(source, columns=["time_control", "speed"])
            for value in batch.column(name).to_pylist()]


def test_the_speed_column_is_lichess_s_speed():
    """The live kernel's column sink writes the speed lichess's table names, for every edge and the corpus."""
    games = "".join(f'[TimeControl "{tc}"]\n\n1. e4 *\n\n' for tc in TIME_CONTROLS).encode()
    assert _column(games, "speed") == [lichess.speed_of(tc) for tc in TIME_CONTROLS]

    data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    speeds = _column(data, "speed")
    assert len(set(speeds)) >= 4        # the month plays most speeds
    assert speeds == [None if tc is None else lichess.speed_of(tc) for tc in _column(data, "time_control")]


@pytest.mark.parametrize("result", [*lichess.RESULT_CODES, "*", "?", ""])
@pytest.mark.parametrize("termination", [*lichess.TERMINATION_CODES, "Time  forfeit", None])
def test_fields_4_and_5_are_lichess_s_codes(scan, result, termination):
    """Both line sinks write lichess's codes, and parse_line reads them back."""
    tags = f'[Result "{result}"]\n' + (f'[Termination "{termination}"]\n' if termination is not None else "")
    data = f"{tags}\n1. e4 e5 *\n".encode()
    lines, read, rejects, _ = scan.lines_from_block(data, 0, len(data))
    assert read == 1 and not rejects
    line = oneliner.parse_line(lines.decode())
    assert line.result == lichess.RESULT_CODES.get(result, "*")
    assert line.termination == lichess.TERMINATION_CODES.get(termination or "", "*")


def test_the_line_and_the_openings_map_share_the_separator():
    assert oneliner.format_line(oneliner.Line(*"abcdefghijklmnopqrstuv")).count(lichess.SEP) == 21
    assert openings.SEP == lichess.SEP


# -- what lichess's exporter adds: draw offers, and the games and months to flag -------------------------

def test_draw_offer_comments_change_no_column_and_no_line(scan):
    """The movetext lichess writes with draw offers reads as the same moves, evals, clocks and NAGs and the same
    22-field line as without them, on real games of the corpus."""
    games = [g for g in (real_game(i) for i in range(60)) if b"[%clk" in g]
    assert len(games) > 30
    with_offers = [with_draw_offers(g) for g in games]
    assert sum(n for _, n in with_offers) > 300
    plain, offered = b"".join(games), b"".join(text for text, _ in with_offers)
    assert offered.count(b"White offers draw }") and offered.count(b"Black offers draw }")
    assert scan.lines_from_block(offered, 0, len(offered))[:3] == scan.lines_from_block(plain, 0, len(plain))[:3]
    names = ["moves", "plies", "eval_cp", "eval_mate", "clock", "nags", "move_seconds", "judgement"]
    assert _rows(offered, names) == _rows(plain, names)


def _rows(data: bytes, names: list[str]) -> list[dict]:
    """The live kernel's column sink's rows (each pass of the test command runs one backend)."""
    return [row for batch in read_arrow(data, columns=names) for row in batch.to_pylist()]


def test_a_draw_offer_written_by_lichess_leaves_its_move_s_eval_and_clock():
    """A game written by hand as lichess's exporter writes it (an offer by each side, one with an eval, one
    without: a correspondence game has no clock, a game without analysis no eval)."""
    game = (b'[Event "Rated Blitz game"]\n[Site "https://lichess.org/abcdefgh"]\n[Result "1/2-1/2"]\n'
            b'[UTCDate "2026.07.05"]\n[TimeControl "180+0"]\n[Termination "Normal"]\n\n'
            b"1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5 { [%eval 0.21] [%clk 0:02:59] } "
            b"2. Qh5 { White offers draw } { [%eval -0.1] [%clk 0:02:58] } 2... Nc6 { Black offers draw } "
            b"{ [%clk 0:02:55] } 1/2-1/2\n\n")
    assert _rows(game, ["moves", "eval_cp", "clock"]) == [
        {"moves": ["e4", "e5", "Qh5", "Nc6"], "eval_cp": [20, 21, -10, None], "clock": [180.0, 179.0, 178.0, 175.0]}]


def test_the_known_issues_table_is_well_formed():
    months = [f"{y}-{m:02d}" for y in range(2013, 2027) for m in range(1, 13)]
    for first, last, what, source in lichess.KNOWN_ISSUES:
        assert first in months and last in months and first <= last, (first, last)
        assert what and source.startswith("https://"), source
    # what the database page lists, month by month
    assert [row[3].rsplit("/", 1)[-1] for row in lichess.known_issues("2023.11.04")] == ["54"]
    assert len(lichess.known_issues("2013.01.01")) == 4
    assert len(lichess.known_issues("2020-12")) == 2                     # the missing tags, and NNUE
    def sources(date):
        return [row[3].rsplit("/", 1)[-1] for row in lichess.known_issues(date)]

    assert "10" in sources("2016.12.09") and "10" not in sources("2017.01.09")
    assert not lichess.known_issues("2022.06.01") and not lichess.known_issues("2026.07.01")


@pytest.mark.parametrize(("tags", "plies", "flags"), [
    # a correspondence game still running at the export (PgnDump: status Created or Started)
    ('[Result "*"]\n[TimeControl "-"]\n[Termination "Unterminated"]\n', 24, ("unterminated",)),
    # a game nobody started (PgnDump: status Aborted or NoStart), as the 2021-10 dump holds them
    ('[Result "1-0"]\n[UTCDate "2021.10.01"]\n[TimeControl "300+0"]\n[Termination "Abandoned"]\n', 1,
     ("abandoned",)),
    # cut off mid-game: the result * with moves, the game not running (lila issue 15721)
    ('[Result "*"]\n[UTCDate "2024.05.31"]\n[Termination "Normal"]\n', 40, ("truncated",)),
    ('[Result "*"]\n[UTCDate "2021.03.12"]\n[Termination "Normal"]\n', 12, ("truncated", "known_issue")),
    ('[Result "*"]\n[Termination "Abandoned"]\n', 0, ("abandoned",)),
    ('[Result "1-0"]\n[UTCDate "2024.05.31"]\n[Termination "Normal"]\n', 40, ()),
])
def test_the_flags_of_games_written_as_lichess_writes_them(tags, plies, flags):
    headers = dict(line[1:-1].split(' "', 1) for line in tags.splitlines())
    headers = {k: v[:-1] for k, v in headers.items()}
    assert lichess.game_flags(headers, plies) == flags
    # the flags column of the game written out, with as many moves (knights out and back)
    sans = [("Nf3", "Nf6", "Ng1", "Ng8")[i % 4] for i in range(plies)]
    movetext = " ".join(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san for i, san in enumerate(sans))
    game = f'[Event "x"]\n{tags}\n{movetext} {headers["Result"]}\n\n'.encode()
    assert _rows(game, ["plies", "flags"]) == [{"plies": plies, "flags": list(flags) or None}]


def test_the_flags_of_the_corpus():
    """Every Abandoned game of the real months is flagged and no other; none is truncated or unterminated."""
    for month in ("2021-10.head999", "2022-06.head2499"):
        path = shared("data", "lichess-db", f"lichess_db_standard_rated_{month}.pgn.zst")
        data = decompressed(path)
        rows = [row for batch in read_arrow(data, columns=["result", "termination", "date", "plies"])
                for row in batch.to_pylist()]
        flags = [lichess.game_flags({"Result": r["result"], "Termination": r["termination"],
                                     "UTCDate": r["date"].strftime("%Y.%m.%d")}, r["plies"]) for r in rows]
        assert len(rows) == data.count(b"\n[Event ") + data.startswith(b"[Event ")
        assert sum(f == ("abandoned",) for f in flags) == data.count(b'[Termination "Abandoned"]') > 0
        assert all(f in ((), ("abandoned",)) for f in flags)


def test_the_flags_column_is_game_flags_on_every_game_of_the_corpus():
    """The flags column of every game of the real months and of the games written with every flag is what
    ``game_flags`` says of its tags and plies (the kernels' own copies of the rules held to it)."""
    import fastpgn

    for month in ("2021-10.head999", "2022-06.head2499"):
        path = shared("data", "lichess-db", f"lichess_db_standard_rated_{month}.pgn.zst")
        data = decompressed(path)
        # the same games with their months moved into those of KNOWN_ISSUES, and some cut off with *
        variants = [data, data.replace(b'[UTCDate "2021.', b'[UTCDate "2016.').replace(b'[UTCDate "2022.',
                                                                                  b'[UTCDate "2020.'),
                    data.replace(b'[Result "1-0"]', b'[Result "*"]').replace(b'[UTCDate "20', b'[UTCDate "')]
        for text in variants:
            expected = [list(lichess.game_flags(g.headers, len(g.moves))) or None
                        for g in fastpgn.read_games(text)]
            got = [row["flags"] for row in _rows(text, ["flags"])]
            assert got == expected
            assert len(got) > 900
    seen = {flag for text in variants for f in (r["flags"] for r in _rows(text, ["flags"])) if f for flag in f}
    assert seen >= {"abandoned", "truncated", "known_issue"}


def _offers_by_python_chess(game: bytes) -> tuple[list[int] | None, list[int] | None]:
    """The plies after which python-chess finds a comment that is a draw offer (its comments of a move run
    together, the [%...] commands taken out), by the side the comment names."""
    import io
    import re

    chess_pgn = pytest.importorskip("chess.pgn")
    parsed = chess_pgn.read_game(io.StringIO(game.decode()))
    sides: tuple[list[int], list[int]] = ([], [])
    for ply, node in enumerate(parsed.mainline(), 1):
        text = re.sub(r"\[%[^\]]*\]", "", node.comment).strip()
        if text in ("White offers draw", "Black offers draw"):
            sides[text.startswith("Black")].append(ply)
    return sides[0] or None, sides[1] or None


def test_draw_offers_are_columns_by_side_at_the_plies_python_chess_finds_them():
    """Real games of the corpus with lichess's draw-offer comments written in: each side's offers, at the
    plies python-chess reads the comments at, and the other columns as without them."""
    games = [g for g in (real_game(i) for i in range(60)) if b"[%clk" in g]
    found = []
    for every in (2, 3, 7):
        offered = [with_draw_offers(g, every) for g in games]
        rows = _rows(b"".join(text for text, _ in offered), ["white_draw_offers", "black_draw_offers"])
        expected = [_offers_by_python_chess(text) for text, _ in offered]
        assert [(r["white_draw_offers"], r["black_draw_offers"]) for r in rows] == expected
        assert sum(len(w or ()) + len(b or ()) for w, b in expected) == sum(n for _, n in offered) > 100
        found += expected
    assert any(w for w, _ in found) and any(b for _, b in found)     # (offers of both sides)
    assert {(r["white_draw_offers"], r["black_draw_offers"]) for r in _rows(b"".join(games),
            ["white_draw_offers", "black_draw_offers"])} == {(None, None)}


def test_a_draw_offer_is_a_comment_of_its_own_text_only():
    """Spaces around the text are trimmed; any other text, one before the first move, or a side the comment
    does not name is no offer."""
    game = (b'[Event "x"]\n\n{ White offers draw } 1. e4 {  White offers draw\t} 1... e5 { Black offers draw. } '
            b"2. Nf3 { black offers draw } 2... Nc6 { White offers draw } { Black offers draw } 3. Bc4 "
            b"{ [%clk 0:01:00] White offers draw } *\n\n")
    assert _rows(game, ["white_draw_offers", "black_draw_offers"]) == [
        {"white_draw_offers": [1, 4], "black_draw_offers": [4]}]
