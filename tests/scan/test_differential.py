"""The Cython and pure-Python scanners give the same lines, records and errors on every input."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend, filters, openings
from helpers import (
    CASES,
    COMPARES_BOTH_KERNELS,
    MUTATION,
    NOISE,
    corpus_files,
    decompressed,
    kernel_params,
    mutated,
    real_game,
    shared,
    typed,
    with_draw_offers,
)

OPENINGS = openings.load()
BACKENDS = dict(_backend.available("scan._scan"))
pytestmark = [pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here"),
              COMPARES_BOTH_KERNELS]


def both(data: bytes, start: int = 0, end: int | None = None, stop: bool = False, first: int = 0):
    end = len(data) if end is None else end
    results = []
    for mod in (BACKENDS["py"], BACKENDS["cy"]):
        options = {"base_offset": 7, "first_game": first, "at_stream_start": start == 0, "stop_on_error": stop}
        lines = mod.lines_from_block(data, start, end, openings=OPENINGS, **options)
        texts = mod.lines_from_block(data, start, end, openings=OPENINGS, text=True, **options)
        # the lines as str (read_lines): what decoding the bytes and splitting them gives
        assert texts == (lines[0].decode("utf-8", "replace").split("\n")[:-1],) + lines[1:]
        # headers only: the movetext skipped (the compiled kernel runs over it sixteen bytes at a time)
        headers = mod.headers_from_block(data, start, end, **options)
        games = typed(mod.games_from_block(data, start, end, **options))
        # in two steps (read_headers on worker threads): the spans numbered from 0, the records renumbered
        for headers_only, one_step in ((False, games), (True, headers)):
            spans, read, rejects, filtered = mod.spans_from_block(data, start, end, headers_only=headers_only,
                                                                  **dict(options, first_game=0))
            records = mod.records_from_spans(data, spans, first_game=first)
            rejects = [(reason, at, number + first, s, e) for reason, at, number, s, e in rejects]
            two_steps = (records, read, rejects, filtered)
            assert (typed(two_steps) if not headers_only else two_steps) == tuple(one_step)
        # what the text ends inside (the cutter asks it of an input's last game: damage or not)
        last = mod.last_game(data, start, end, at_stream_start=start == 0)
        results.append((lines, games, texts, headers, last))
    return results


@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_backends_agree_on_every_file(path):
    data = decompressed(path)
    for stop in (False, True):
        py, cy = both(data, stop=stop)
        assert py == cy


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), MUTATION, st.integers(0, 10**9), NOISE),
                min_size=1, max_size=4),
       st.integers(0, 10_000), st.integers(1, 3))
def test_backends_agree_on_mutated_real_games(mutations, first, count):
    data = mutated(b"".join(real_game(first + k) for k in range(count)), mutations)
    py, cy = both(data)
    assert py == cy
    py, cy = both(data, stop=True)
    assert py == cy


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_backends_agree_on_arbitrary_bytes(data):
    py, cy = both(data)
    assert py == cy


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"1.", b"e4", b"e5", b"Nf3", b"{", b"}", b"[%clk 0:01:00]", b"[%eval -0.5]",
                                 b"(", b")", b"$1", b";x\n", b"\n", b"\n\n", b"[Event \"x\"]", b"1-0", b"*",
                                 b"O-O-O#", b"exd8=Q+", b"Qh4e1", b"--", b"Z0", b"--!?", b"Z0+", b"N@f3", b"  ",
                                 b"12.e4", b"3...", b"12x", b"exd5", b"Pxe5", b"xd5", b"e4+", b"Nf3#", b"e9", b"0-0"]),
                max_size=40))
def test_backends_agree_on_token_soup(tokens):
    data = b" ".join(tokens)
    py, cy = both(data)
    assert py == cy


# The compiled scanner reads lichess's own comment shape in one pass and hands
# anything else to the general comment reader; these sit on both sides of that line.
COMMENTS = [
    "{ [%clk 0:03:00] }", "{ [%eval 0.17] [%clk 0:03:00] }", "{ [%eval #-3] [%clk 1:00:00.5] }",
    "{  [%clk 0:03:00] }", "{ [%clk 0:03:00]}", "{[%clk 0:03:00] }", "{ [%clk  0:03:00] }",
    "{ [%clk 0:03:0] }", "{ [%clk 0:3:00] }", "{ [%clk 123:03:00] }", "{ [%clk ] }", "{ [%clk] }",
    "{ [%Clk 0:03:00] }", "{ [%clk 0:03:00] [%clk 0:02:00] }", "{ [%eval 0.1,2] }", "{ [%eval +-] }",
    "{ [%eval 1.5 ] }", "{ [%csl Ga1] [%clk 0:03:00] }", "{ [%clk 0:03:00] extra }", "{ }", "{}",
    "{ [%clk 0:03:00] ", "{ [%clk 0:03:00]\n}", "{ [%clk 0:03:00] }}", "{ [%eval 0.17] [%clk 0:03:00 }",
    "{ [%clk 0:03:00] } { [%clk 0:01:00] }", "{ [%evalx 3] }", "{ [% clk 0:03:00] }",
    "{ [%clk 0:03:00.] }", "{ [%clk 0:03:00.x] }", "{ [%clk 0:03:00.125] }", "{ [%clk 0:03:00,5] }",
    "{ [%clk 123456789012345:00:00] }", "{ [%clk 1234567890123456:00:00] }", "{ [%clk 1:2:3:4] }",
    "{ [%clk 0:03:00:00] }", "{ [%eval 0.1:2] }", "{ [%eval ] }", "{ [%eval #-3] }", "{ [%clk 0:03",
    "{ [%eval", "{ [%", "{ [%clk 0:03:00] [%eval 0.2] }", "{ [%cal Ge2e4,Rd7d5] [%clk 0:00:07] }",
    # lichess's draw offers (since July 2026): a block of their own before the eval and clock block
    "{ White offers draw } { [%eval 0.21] [%clk 0:02:58] }", "{ Black offers draw } { [%clk 0:02:55] }",
    "{ White offers draw }", "{ White offers draw } { [%eval #-3] }",
]


def test_backends_agree_on_real_games_with_draw_offers():
    data = b"".join(with_draw_offers(real_game(i), every)[0] for i in range(80) for every in (2, 5))
    assert data.count(b"offers draw }") > 500
    py, cy = both(data)
    assert py == cy


@pytest.mark.parametrize("comment", COMMENTS)
@pytest.mark.parametrize("place", ["after White", "before the first move", "at the end"])
def test_backends_agree_on_comment_shapes(comment, place):
    movetext = {"after White": f"1. e4 {comment} 1... e5 2. Nf3 *",
                "before the first move": f"{comment} 1. e4 e5 *",
                "at the end": f"1. e4 e5 {comment}"}[place]
    data = f'[Event "x"]\n[Site "https://lichess.org/abc"]\n\n{movetext}\n\n[Event "y"]\n\n1. d4 *\n'.encode()
    for end in (len(data), data.index(b'[Event "y"]')):
        py, cy = both(data, end=end)
        assert py == cy


def test_moves_hook_gets_the_same_start_tags_from_both():
    data = (b'[Event "x"]\n[FEN "8/8/8/8/8/8/8/K6k w - - 0 1"]\n[SetUp "1"]\n[Variant "From Position"]\n'
            b'[White "a"]\n\n1. Kb1 Kg1 *\n')
    seen = {}
    for name, mod in BACKENDS.items():
        calls = []
        mod.lines_from_block(data, 0, len(data),
                             moves_hook=lambda moves, tags, calls=calls: calls.append((moves, tags)) or moves)
        seen[name] = calls
    assert seen["py"] == seen["cy"] == [(b"Kb1 Kg1", [(b"FEN", b"8/8/8/8/8/8/8/K6k w - - 0 1"),
                                                     (b"SetUp", b"1"), (b"Variant", b"From Position")])]


# The compiled scanner reads move numbers ("12.", "12...") and the commonest
# moves ("e4", "Nf3", "exd5", "Nbd7", "O-O") without the general token reader; these sit on
# both sides of those shortcuts, first in the movetext, mid-game, after the
# result and at the very end of the block.
TOKENS = ["12.", "12...", "12.e4", "1...e5", "12", "12x", "1-0", "0-1", "1/2-1/2", "0-0", "0-0-0",
          "e4", "e4+", "e4#", "e9", "i4", "Nf3", "Nf3+", "Nf9", "Pe4", "exd5", "Nxe5", "Pxe5", "xd5",
          "exd", "Kxe1#", "e4!?", "*", "**", "0.", "00.", "1.2", "e4{", "Nf3$1", "--", "Z0", "--!?", "Z0+", "---",
          "Z0-0", "0000", "O-O", "O-O+", "O-O-O", "O-O-O#", "O-O-O-O", "O-O-", "O-", "Nbd7", "R1e2", "Nbd7#",
          "Pbd7", "Nbd9", "Nb1d2", "Kbd7!?"]


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("place", ["first", "middle", "after the result", "end of block"])
def test_backends_agree_on_move_token_shapes(token, place):
    movetext = {"first": f"{token} 1. d4 d5 *", "middle": f"1. d4 {token} 2. c4 *",
                "after the result": f"1. d4 d5 1-0 {token}", "end of block": f"1. d4 d5 {token}"}[place]
    data = f'[Event "x"]\n\n{movetext}'.encode()
    py, cy = both(data)
    assert py == cy
    if place == "middle" and token in ("e4", "Nf3", "exd5", "12...", "12.e4"):
        assert py[1][1] == 1 and not py[1][2], "a well-formed token must not reject the game"


# The compiled scanner reads plain tag lines, lichess's clock comments and the
# commonest moves with shortcuts (_plain_tag_line, a one-word clock test, common
# move shapes, the space after a token) and leaves the rest to the general readers.
SHORTCUT_WINDOWS = [
    (b"", b'[Site "https://lichess.org/abc"]\n[White "a\xe2\x94\x82b"]\n[Date "2022.06.01"]\n',
     b'[Opening "Ruy Lopez"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n'),
    (b'[Event "x"]\n\n1. e4 ', b"{ [%clk 0:03:00] } 1... Nxe5+ 2. exd5# Nf3 ", b"3. d4 *\n"),
    # the same shortcuts with room after them (the compiled kernel reads runs of plies in a loop of
    # its own while 18 bytes are left), moves of other shapes and a lichess eval comment
    (b'[Event "x"]\n\n1. e4 ',
     b"{ [%clk 0:03:00] } 1... Nbd7 2. O-O { [%eval 0.17] [%clk 1:02:59] } 2... exd5 3. e8=Q+?! ",
     b"d4 4. c4 c5 5. Nc3 Nc6 *\n"),
    # the tag values the line sink reads with shortcuts of its own: the date, the time of day, the
    # opening code from the map's table (its key hashed from the ECO and Opening values)
    (b'[Event "x"]\n', b'[UTCDate "2022.06.01"]\n[UTCTime "12:34:56"]\n[ECO "C20"]\n',
     b'[Opening "King\'s Pawn Game"]\n\n1. e4 e5 1-0\n'),
]


@pytest.mark.parametrize("head, window, tail", SHORTCUT_WINDOWS,
                         ids=["tag lines", "moves and clocks", "runs of plies", "line tag values"])
def test_backends_agree_on_every_byte_of_the_shortcut_windows(head, window, tail):
    """Every byte of the window replaced by each of 256 values, and the block cut at each of
    those bytes: the shortcuts must decide exactly as the general readers do."""
    data = head + window + tail
    for at in range(len(head), len(head) + len(window)):
        variants = [data[:at] + bytes([b]) + data[at + 1:] for b in range(256)]
        py, cy = both(b"\n\n".join(variants))
        assert py == cy, at
        py, cy = both(data, end=at)
        assert py == cy, at


def test_backends_agree_past_the_compiled_caches_bounds():
    """The compiled kernel's token and tag value caches start again when full; answers stay the same."""
    files, ranks, pieces = "abcdefgh", "12345678", "QRBNK"
    sans = [f"{p}{f1}{r1}x{f2}{r2}" for p in pieces for f1 in files for r1 in ranks for f2 in files
            for r2 in ranks]  # 20,480 distinct tokens of 6 bytes: more than the token cache holds
    games = []
    for i in range(0, len(sans), 10):  # 2,048 games, each with its own Event, Opening and WhiteElo
        moves = " ".join(f"{sans[k]} {{ [%eval {k / 100:.2f}] [%clk 0:{k % 60:02d}:00] }}"
                         for k in range(i, min(i + 10, len(sans))))
        games.append(f'[Event "Event {i}"]\n[Opening "Opening {i}"]\n[WhiteElo "{i}"]\n[Result "*"]\n\n'
                     f'{moves} *\n')
    data = "\n".join(games).encode()
    for _ in range(2):  # the second pass reads through caches filled by the first
        py, cy = both(data)
        assert py == cy
    assert py[1][1] == len(games)


def test_native_validation_gives_what_the_validation_hook_gives():
    """board.moves_hook() lets the compiled scanner replay standard games itself; nothing may change."""
    from fastpgn.board import moves_hook

    validating, writing = moves_hook(), moves_hook(uci=True)
    assert (validating.validates_san, validating.writes_uci) == (True, False)
    assert (writing.validates_san, writing.writes_uci) == (False, True)

    bad = (b'[Event "illegal"]\n\n1. e4 e5 2. Ke3 *\n\n'
           b'[Event "ambiguous"]\n\n1. Nf3 Nf6 2. Nc3 Nc6 3. Nd4 Nd5 4. Nb5 *\n\n'
           b'[Event "from a FEN"]\n[FEN "8/8/8/8/8/8/8/K6k w - - 0 1"]\n[SetUp "1"]\n\n1. Kb1 Kg1 *\n\n'
           b'[Event "960"]\n[Variant "Chess960"]\n'
           b'[FEN "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"]\n\n'
           b'9. g3 Nc7 10. O-O *\n\n')
    data = bad + decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    # games set up from a FEN, Chess960 among them: replayed without the GIL where the board reads the FEN
    with_fens = [shared("data", "edge-cases-nonlichess", name).read_bytes() for name in (
        "chess960_rapid-wch-2009_fen-setup.pgn", "python-chess_cutechess-fischerrandom.pgn",
        "chesscom_export_2025_29games_incl-chess960.pgn", "chess-library_skip.pgn")]
    with_fens.append(shared("conformance", "003-chessjl", "games-with-setup-fen.pgn").read_bytes())
    data += b"\n\n" + b"\n\n".join(with_fens)
    assert data.count(b'[FEN "') > 30
    for marked in (validating, writing):
        def plain(moves, tags, marked=marked):  # the same hook, without the mark: always called
            return marked(moves, tags)

        asked = []

        def counted(moves, tags, marked=marked, asked=asked):  # the marked hook, its calls counted
            asked.append(moves)
            return marked(moves, tags)

        for mark in ("validates_san", "writes_uci", "reads_start_tags"):
            setattr(counted, mark, getattr(marked, mark))
        results = []
        for mod, hook in ((BACKENDS["cy"], counted), (BACKENDS["cy"], plain), (BACKENDS["py"], marked)):
            results.append(mod.lines_from_block(data, 0, len(data), openings=OPENINGS, moves_hook=hook))
        assert results[0] == results[1] == results[2]
        # the compiled scanner called the hook for none of the FEN games but the rejected ones
        assert 0 < len(asked) <= len(results[0][2])
        out, read, rejects, _ = results[0]
        assert [r[2] for r in rejects][:2] == [1, 2] and out.count(b"\n") == read - len(rejects)
        assert read > 2000
        assert ("\u2502e2e4 ".encode() in out) == (marked is writing)
        # stopping at the first rejected game, in the middle of a block: the same from all three
        cut = data.index(b"[Event ", len(bad) + len(data) // 2)
        middle = data[len(bad):cut] + bad + data[cut:]
        stopped = [mod.lines_from_block(middle, 0, len(middle), openings=OPENINGS, stop_on_error=True,
                                        moves_hook=hook)
                   for mod, hook in ((BACKENDS["cy"], marked), (BACKENDS["cy"], plain), (BACKENDS["py"], marked))]
        assert stopped[0] == stopped[1] == stopped[2]
        assert len(stopped[0][2]) == 1 and stopped[0][1] > 1000 and stopped[0][0].count(b"\n") == stopped[0][1] - 1


def test_opening_codes_from_the_compiled_table_are_the_maps():
    """opening_table copies a plain map into a C table for the compiled scanner; other maps are asked per game."""

    class Asked(dict):  # its own __getitem__: the scanner must call it, not read a copy
        def __getitem__(self, key):
            return dict.get(self, key, b"?")

    data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    data += (b'[Event "escaped"]\n[ECO "C20"]\n[Opening "King\'s Pawn \\"Game\\""]\n\n1. e4 *\n\n'
             b'[Event "unknown"]\n[ECO "C20"]\n[Opening "No Such Opening Anywhere"]\n\n1. e4 *\n')
    shipped = openings.load()
    asked = Asked(shipped)
    asked[b"C20\xe2\x94\x82King's Pawn \"Game\""] = b"C20999"
    table_map = dict(asked)
    runs = [BACKENDS["cy"].lines_from_block(data, 0, len(data), openings=BACKENDS["cy"].opening_table(m))
            for m in (table_map, asked, shipped)]
    runs.append(BACKENDS["py"].lines_from_block(data, 0, len(data), openings=table_map))
    assert runs[0] == runs[1] == runs[3]
    lines = runs[0][0].decode().splitlines()
    assert lines[-2].split("\u2502")[9] == "C20999" and lines[-1].split("\u2502")[9] == "?"
    codes = {line.split("\u2502")[9] for line in lines}
    assert len(codes) > 50
    # the shipped (fuzzy) map answers the unknown name through __missing__, the same in both
    assert runs[2] == BACKENDS["py"].lines_from_block(data, 0, len(data), openings=openings.load())


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"e4 ", b"\xc3\xa9", b"\xe2\x94\x82", b"\xf0\x9f\x98\x80", b"\xe9", b"\xc3",
                                 b"\xe2\x94", b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
                                 b"\xff", b"\x80", b"12345678"]), max_size=40),
       st.integers(0, 3))
def test_utf8_error_is_where_python_stops_decoding(pieces, start):
    """Both kernels find the first byte that is not UTF-8 where Python's decoder does (readers count such games)."""
    data = b"".join(pieces)
    start = min(start, len(data))
    try:
        str(data[start:], "utf-8")
        expected = -1
    except UnicodeDecodeError as exc:
        expected = start + exc.start
    for ident, kernel in kernel_params_of_scan():
        assert kernel.utf8_error(data, start) == expected, ident


def kernel_params_of_scan():
    return [(p.id, p.values[0]) for p in kernel_params("scan._scan")]


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_two_steps_agree_under_filters(path):
    """spans_from_block then records_from_spans under a filter on the tags and one on the movetext (read
    even when the movetext is otherwise skipped): each backend's games equal its one-step read's, and the
    two backends' equal each other."""
    data = decompressed(path)
    wheres = (filters.Where(min_elo=1800, speed="blitz"), filters.Where(with_evals=True, min_plies=20))
    for where in wheres:
        for headers_only in (False, True):
            answers = []
            for mod in (BACKENDS["py"], BACKENDS["cy"]):
                plan = mod.where_plan(where.spec())
                one_step = mod.headers_from_block if headers_only else mod.games_from_block
                one = one_step(data, 0, len(data), base_offset=3, first_game=5, where=plan)
                spans, read, rejects, filtered = mod.spans_from_block(data, 0, len(data), base_offset=3,
                                                                      first_game=5, where=plan,
                                                                      headers_only=headers_only)
                two = (mod.records_from_spans(data, spans), read, rejects, filtered)
                assert two == tuple(one)
                answers.append(two if headers_only else typed(two))
            assert answers[0] == answers[1], (where, headers_only)
