"""The compiled column sink against its pure twin: equal Arrow tables, rejects and counts on every input.

The pure twin (fastpgn.scan.columns, over the pure kernel's records) applies
fastpgn.schema's value rules one Python value at a time; the compiled sink
(scan/columns.pxi) fills Arrow buffers in C. Equal tables here mean equal
values, nulls and types in every column, so a user reading Parquet gets the
same answer from either backend.
"""

from __future__ import annotations

import datetime
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend, filters, schema
from fastpgn.scan import columns as _columns_py
from helpers import (
    CASES,
    COMPARES_BOTH_KERNELS,
    MUTATION,
    NOISE,
    corpus_files,
    decompressed,
    mutated,
    real_game,
    shared,
    with_draw_offers,
)

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
from fastpgn.arrow import record_batch  # noqa: E402

BACKENDS = dict(_backend.available("scan._scan"))
pytestmark = [pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here"),
              COMPARES_BOTH_KERNELS]
OPENINGS = _columns_py.default_openings()
UTC = datetime.UTC


def both(data: bytes, stop: bool = False, where=None, uci: bool = False, first: int = 0, headers: bool = False):
    """Each kernel's ``(table, games_read, rejects, filtered)`` for ``data``."""
    answers = []
    spec = None if where is None else filters.as_where(where).spec()
    for name in ("py", "cy"):
        kernel = BACKENDS[name]
        columns, read, rejects, filtered = kernel.columns_from_block(
            data, 0, len(data), base_offset=7, first_game=first, stop_on_error=stop, where=kernel.where_plan(spec),
            openings=kernel.opening_table(OPENINGS), uci=uci, headers=headers)
        table = pa.Table.from_batches([record_batch(columns, uci)])
        answers.append((table, read, rejects, filtered))
    return answers


def csv_same(data: bytes) -> None:
    """Both CSV sinks (scan/csv.pxi, fastpgn.scan.csv, over these column sinks) give the same bytes."""
    py, cy = (BACKENDS[name].csv_from_block(data, 0, len(data), base_offset=7,
                                            openings=BACKENDS[name].opening_table(OPENINGS))
              for name in ("py", "cy"))
    assert py == cy


def assert_same(data: bytes, **options) -> None:
    (py, *py_counts), (cy, *cy_counts) = both(data, **options)
    assert py_counts == cy_counts
    assert py.schema == cy.schema
    for name in py.column_names:  # column by column, so a failure names the column
        assert py.column(name).to_pylist() == cy.column(name).to_pylist(), name
    assert py.equals(cy)


@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_sinks_agree_on_every_file(path):
    data = decompressed(path)
    for stop in (False, True):
        assert_same(data, stop=stop)
    assert_same(data, uci=True)


@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_headers_only_sinks_agree_and_give_read_headers_games_with_the_full_reads_values(path):
    data = decompressed(path)
    for stop in (False, True):
        assert_same(data, stop=stop, headers=True)
    (heads, *counts), _ = both(data, headers=True)
    (full, *_), _ = both(data)
    # the games and rejects of read_headers' reading (the movetext skipped, not checked)
    kernel = BACKENDS["cy"]
    games, read, rejects, filtered = kernel.headers_from_block(data, 0, len(data), base_offset=7)
    assert counts == [read, rejects, filtered]
    assert heads.column("byte_offset").to_pylist() == [g[0] for g in games]
    assert not schema.FROM_MOVES & set(heads.column_names)
    assert heads.column_names == [n for n in full.column_names if n not in schema.FROM_MOVES]
    # every game the full read keeps has the same values in every column the headers-only read gives
    kept = {offset: i for i, offset in enumerate(full.column("byte_offset").to_pylist())}
    rows = [i for i, offset in enumerate(heads.column("byte_offset").to_pylist()) if offset in kept]
    assert len(rows) == full.num_rows
    assert heads.take(rows).equals(full.select(heads.column_names))


def test_headers_only_reads_a_game_whose_moves_the_full_read_rejects():
    data = real_game(3) + real_game(4).replace(b"1. e4 ", b"1. e4 Zz9 ", 1)   # (not a move: the full read rejects it)
    (full, _read, full_rejects, _), _ = both(data)
    (heads, read, rejects, _), _ = both(data, headers=True)
    assert (full.num_rows, len(full_rejects)) == (1, 1) and read == 2
    assert heads.num_rows == 2 and rejects == []


@pytest.mark.parametrize("flag", ["uci", "positions", "fens"])
def test_headers_only_with_a_replay_is_one_error_on_both(flag):
    messages = set()
    for kernel in BACKENDS.values():
        with pytest.raises(ValueError, match="skips the movetext") as raised:
            kernel.columns_from_block(real_game(0), 0, 10, headers=True, **{flag: True})
        messages.add(str(raised.value))
    assert len(messages) == 1


def test_sinks_agree_on_real_games_with_draw_offers():
    """lichess's draw-offer comments (a block of their own before the eval and clock block) on real games."""
    data = b"".join(with_draw_offers(real_game(i), every)[0] for i in range(80) for every in (2, 5))
    assert data.count(b"offers draw }") > 500
    assert_same(data)
    assert_same(data, uci=True)
    csv_same(data)


@pytest.mark.parametrize("path", [p for p in corpus_files() if "2022-06.head2499" in p.name], ids=lambda p: p.name)
def test_sinks_agree_under_a_filter(path):
    data = decompressed(path)
    assert_same(data, where={"min_elo": 1800, "speed": ["blitz"], "with_evals": True})
    assert 0 < both(data, where={"min_elo": 1800})[0][3] < 2499  # (the filter did drop games)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), MUTATION, st.integers(0, 10**9), NOISE),
                min_size=1, max_size=4),
       st.integers(0, 10_000), st.integers(1, 3), st.booleans())
def test_sinks_agree_on_mutated_real_games(mutations, first, count, uci):
    data = mutated(b"".join(real_game(first + k) for k in range(count)), mutations)
    assert_same(data, uci=uci)
    assert_same(data, stop=True)
    assert_same(data, headers=True, stop=uci)


# Tag values at the edges of each rule (docs/schema.md): both sinks, and what a user sees.
EDGES = [
    # (tag or eval text, column, expected value)
    ('[WhiteElo "+1500"]', "white_elo", 1500),
    ('[WhiteElo "?"]', "white_elo", None),
    ('[WhiteElo "40000"]', "white_elo", None),
    ('[WhiteElo "-32768"]', "white_elo", -32768),
    ('[WhiteElo "1500 "]', "white_elo", None),
    ('[BlackRatingDiff "-12"]', "black_rating_diff", -12),
    ('[UTCDate "2021.02.30"]\n[UTCTime "10:00:00"]', "utc", None),
    ('[UTCDate "2024.02.29"]\n[UTCTime "1:2:3"]', "date", datetime.date(2024, 2, 29)),
    ('[UTCDate "2024.02.29"]\n[UTCTime "1:2:3"]', "utc", datetime.datetime(2024, 2, 29, 1, 2, 3, tzinfo=UTC)),
    ('[Date "2024.02.28"]\n[Time "23:59:59"]', "utc", datetime.datetime(2024, 2, 28, 23, 59, 59, tzinfo=UTC)),
    ('[UTCDate "0000.01.01"]', "date", None),
    ('[Date "2024.??.??"]', "date", None),
    ('[UTCDate "2024.01.01"]\n[UTCTime "25:00:00"]', "utc", None),
    ('[TimeControl "600+40000"]', "increment_seconds", None),
    ('[TimeControl "600+40000"]', "base_seconds", 600),
    ('[TimeControl "-"]', "speed", "correspondence"),
    ('[TimeControl "15+0"]', "speed", "ultraBullet"),
    ('[TimeControl "abc"]', "base_seconds", None),
    ('[Result "1-0"]', "result", "1-0"),
    ('[Result "?"]', "result", "*"),
    ('[White "A \\"B\\" C"]', "white", 'A "B" C'),
    ('[Round "3"]\n[Round "4"]\n[Date "2024.01.01"]', "tags",
     [{"key": "Round", "value": "4"}, {"key": "Date", "value": "2024.01.01"}]),
    ('[Site "https://lichess.org/AbCd1234"]', "game_id", "AbCd1234"),
    ('[Site "Berlin GER"]', "game_id", "Berlin GER"),
]
EVALS = [("0.33", 33, None), ("-1.5", -150, None), ("0.335", 34, None), ("-0.335", -34, None),
         ("+0.3", 30, None), ("-400", -32767, None), ("#3", None, 3), ("#-200", None, -127), ("#+2", None, 2),
         ("5.", None, None), (".5", None, None),
         # the search depth after a comma, as python-chess writes it: the value is what comes before
         ("1,5", 100, None), ("0.17,20", 17, None), ("#3,20", None, 3), ("#-2,1", None, -2)]


@pytest.mark.parametrize("tags, column, expected", EDGES)
def test_tag_rules_agree_and_read_as_documented(tags, column, expected):
    data = f"{tags}\n\n1. e4 e5 *\n".encode()
    assert_same(data)
    table = both(data)[1][0]
    assert table.column(column).to_pylist()[0] == expected


@pytest.mark.parametrize("text, cp, mate", EVALS)
def test_eval_rules_agree_and_read_as_documented(text, cp, mate):
    data = f"1. e4 {{ [%eval {text}] [%clk 0:00:17.7] }} e5 {{ [%clk 0:03:00] }} *\n".encode()
    assert_same(data)
    table = both(data)[1][0]
    assert table.column("eval_cp").to_pylist()[0] == [cp, None]
    assert table.column("eval_mate").to_pylist()[0] == [mate, None]
    assert table.column("clock").to_pylist()[0] == [pytest.approx(17.7), 180.0]


def test_a_clock_past_float32s_whole_numbers_reads_on_both():
    """The pure sink gave pyarrow the int 3599999999999999999, which it refused for float32 (ArrowInvalid)."""
    data = b"1. e4 { [%clk 999999999999999:59:59] } e5 { [%clk 4661:00:01] } *\n"
    assert_same(data)
    assert both(data)[0][0].column("clock").to_pylist()[0] == [pytest.approx(3.6e18), 16779600.0]


# Bytes that are not UTF-8 read as the records read them: each ill-formed part one U+FFFD.
BAD_UTF8 = [b"\xff", b"\xc0\xaf", b"\xe2\x94", b"\xe2\x94\x82", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80",
            b"a\xe9b", b"\xf0\x9f\x98\x80", b"\x80\x80\x80", b"\xe0\x80\xaf", b"\xc3"]


@pytest.mark.parametrize("raw", BAD_UTF8, ids=lambda b: b.hex())
def test_text_that_is_not_utf8_reads_as_python_decodes_it(raw):
    data = b'[White "x' + raw + b'y"]\n[' + b'Note' + b' "' + raw + b'"]\n\n1. e4 e5 *\n'
    assert_same(data)
    table = both(data)[1][0]
    assert table.column("white").to_pylist() == [("x" + raw.decode("utf-8", "replace") + "y")]
    assert table.column("tags").to_pylist() == [[{"key": "Note", "value": raw.decode("utf-8", "replace")}]]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12))
def test_any_bytes_in_a_tag_value_read_as_python_decodes_them(raw):
    raw = raw.replace(b'"', b"").replace(b"\\", b"").replace(b"\n", b"").replace(b"\r", b"").replace(b"]", b"")
    data = b'[White "' + raw + b'"]\n\n1. e4 *\n'
    assert_same(data)


# ------------------------------------------------------------ a game of many tags

def _many_tags(n: int) -> bytes:
    """One game of ``n`` distinct tags, one of them repeated last (its value, at its first place)."""
    tags = b"".join(b'[T%d "v%d"]\n' % (i, i) for i in range(n))
    return tags + b'[White "A"]\n[T1 "again"]\n\n1. e4 e5 *\n'


def test_many_tags_with_repeats_and_own_columns_agree():
    """Past the few tags compared pair by pair, the compiled sink finds repeats through a hash table."""
    for n in (30, 31, 32, 33, 40, 500):
        data = _many_tags(n) + b'[T0 "a"]\n[Event "e"]\n[T0 "b"]\n[Date "2024.01.01"]\n[T0 "c"]\n' * 3 + b"\n1. d4 *\n"
        assert_same(data)


@pytest.mark.parametrize("name", ["py", "cy"])
def test_a_game_of_100000_tags_makes_its_tag_map_in_linear_time(name):
    """A game of 40,000 tags took the compiled sink 2.8 s (every tag compared with every other), 300,000 took
    156 s; each sink now takes time in proportion to the tags."""
    import time

    kernel = BACKENDS[name]

    def seconds(n: int) -> tuple[float, list]:
        data = _many_tags(n)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            columns, *_ = kernel.columns_from_block(data, 0, len(data))
            best = min(best, time.perf_counter() - start)
        tags = pa.Table.from_batches([record_batch(columns)]).column("tags").to_pylist()[0]
        return best, tags

    small, _ = seconds(10_000)
    large, tags = seconds(100_000)
    assert len(tags) == 100_000 and tags[1] == {"key": "T1", "value": "again"}
    assert tags[-1] == {"key": "T99999", "value": "v99999"}
    assert large < 1.0, large                       # (the quadratic sink: about 18 s)
    # Ten times the tags: about ten times the time (fifteen, with the memory a big map takes); a sink that
    # compares every pair takes a hundred.
    assert large < 40 * max(small, 0.01), (small, large)


# ------------------------------------------------------------ the analysis columns (fastpgn.accuracy's values)

EVAL_TEXTS = st.one_of(
    st.none(),
    st.integers(-1500, 1500).map(lambda cp: f"{cp / 100:.2f}"),            # near the window's interesting range
    st.integers(-4_000_000, 4_000_000).map(lambda cp: f"{cp / 100:.2f}"),   # past the ±1000 and int16 clamps
    st.integers(-130, 130).map(lambda mate: f"#{mate}"),
    st.sampled_from(["#0", "#-0", "#+2", "0.335", "-0.005", "1.2.3", "0.17,20"]),
)
CLOCK_TEXTS = st.one_of(
    st.none(),
    st.integers(0, 20_000).map(lambda s: f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}"),
    st.tuples(st.integers(0, 400), st.integers(0, 9)).map(lambda t: f"0:{t[0] // 60:02}:{t[0] % 60:02}.{t[1]}"),
    st.sampled_from(["999999999999999:59:59", "0:01:30", "0:03:00", "0:00:03"]),
)
TIME_CONTROLS = st.sampled_from([None, "180+2", "60+0", "0+1", "0+5", "-", "300+3", "15+0", "abc", "600+40000",
                                 "999999999+0", "1/259200"])
SANS = ["Nf3", "Nf6", "Ng1", "Ng8"]


def analysed_game(plies: list, time_control, black_first: bool, mating_last: bool) -> bytes:
    """A game of ``(eval, clock)`` plies: moves that need no board, each ply's comment holding what is given."""
    tags = ""
    if time_control is not None:
        tags += f'[TimeControl "{time_control}"]\n'
    if black_first:
        tags += '[FEN "4k3/8/8/8/8/8/8/4K3 b - - 0 1"]\n'
    parts = []
    for i, (value, clock) in enumerate(plies):
        white = (i % 2 == 0) != black_first
        number = (i + black_first) // 2 + 1
        if white:
            parts.append(f"{number}.")
        elif i == 0:
            parts.append(f"{number}...")
        parts.append("Qh7#" if mating_last and i == len(plies) - 1 else SANS[i % 4])
        comment = (f"[%eval {value}] " if value is not None else "") + (f"[%clk {clock}]" if clock is not None else "")
        if comment:
            parts.append("{ " + comment + " }")
    return (tags + "\n" + " ".join(parts) + " *\n\n").encode()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(EVAL_TEXTS, CLOCK_TEXTS), max_size=40), TIME_CONTROLS, st.booleans(), st.booleans(),
       st.lists(st.tuples(EVAL_TEXTS, CLOCK_TEXTS), min_size=1, max_size=90))
def test_analysis_columns_agree_on_any_evals_and_clocks(plies, time_control, black_first, mating_last, long):
    """Evals anywhere in and past the clamps, mates both ways, missing evals and clocks, tenths, a mating last
    move, Black to move first, time controls of every kind: both sinks give the same bits."""
    data = analysed_game(plies, time_control, black_first, mating_last)
    # A long game evaluated throughout (the window grows to 8): its per-game values are computed.
    long = [(e if e not in (None, "1.2.3") else "0.1", c) for e, c in long]
    data += analysed_game(long, time_control, black_first, mating_last)
    assert_same(data)
    csv_same(data)              # the CSV sinks too: the doubles' shortest text, equal bytes
    py = both(data)[0][0]
    assert py.column("white_acpl")[1].as_py() is not None or py.column("black_acpl")[1].as_py() is not None


_EVAL_GAMES: list[bytes] = []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_analysis_columns_agree_on_real_games_with_other_evals(seed):
    """The corpus's lichess games with evals, each eval replaced at random: real move counts, clocks and time
    controls, with evals that cross every threshold."""
    if not _EVAL_GAMES:
        data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
        _EVAL_GAMES.append(b"".join(g for g in (b"[" + g + b"\n\n" for g in data.split(b"\n\n[")) if b"%eval" in g))
    rng = random.Random(seed)
    choices = [b"0.0", b"0.15", b"-0.3", b"1.2", b"-2.5", b"4.0", b"-7.5", b"10.5", b"-12.0", b"55.0", b"#3", b"#-2",
               b"#1", b"#-1"]

    def other(match):
        roll = rng.random()
        if roll < 0.02:
            return b""                                  # an eval missing
        if roll < 0.5:
            return match.group(0)
        return b"[%eval " + rng.choice(choices) + b"]"

    data = re.sub(rb"\[%eval [^\]]*\]", other, _EVAL_GAMES[0])
    assert_same(data)
    csv_same(data)


NAG_TOKENS = [b"e4", b"e5", b"Nf3", b"Nc6!", b"Bb5?!", b"a6??", b"O-O!!", b"Nf6!?", b"d4?", b"$1", b"$14", b"$0",
              b"$255", b"$32767", b"$32768", b"$000002", b"!", b"?", b"!?", b"??", b"+-", b"(", b")", b"{ note }",
              b"2.", b"2...", b"*", b"1-0", b"[%clk 0:01:00]", b";x\n", b"\n", b"$"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(NAG_TOKENS), max_size=30), min_size=1, max_size=4),
       st.sampled_from([b" ", b"", b"  "]))
def test_nags_agree_on_any_movetext(games, sep):
    """NAGs, glyphs, variations and results in any order: the same nags (and every other column) on both sinks."""
    data = b"".join(b'[Site "https://lichess.org/g%d"]\n\n1. ' % i + sep.join(g) + b" *\n\n"
                    for i, g in enumerate(games))
    for stop in (False, True):
        assert_same(data, stop=stop)
    csv_same(data)
