"""The CSV sink: the compiled one (scan/csv.pxi) against its pure twin (scan/csv.py), and the converter's CSV.

The compiled sink writes the column sink's buffers as CSV text in C; the
pure twin writes the pure column sink's lists through fastpgn.csv_text.
Equal bytes here mean a user gets the same file from either backend, and
the converter's ``--format csv`` gives the bytes it gave when the rows were
written in Python from the live kernel's records (the reference below).
"""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend, csv_text, filters, schema
from fastpgn.convert.converter import Converter, Options
from fastpgn.scan import columns as _columns_py
from helpers import CASES, MUTATION, NOISE, corpus_files, decompressed, mutated, real_game, shared

BACKENDS = dict(_backend.available("scan._scan"))
needs_cy = pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here")
OPENINGS = _columns_py.default_openings()


def answers(data: bytes, stop: bool = False, where=None, uci: bool = False, columns=None, first: int = 0):
    """Each kernel's ``csv_from_block`` answer (or the error it raised) for ``data``."""
    got = []
    spec = None if where is None else filters.as_where(where).spec()
    for name in ("py", "cy"):
        kernel = BACKENDS[name]
        try:
            got.append(kernel.csv_from_block(data, 0, len(data), base_offset=7, first_game=first, stop_on_error=stop,
                                             where=kernel.where_plan(spec), openings=kernel.opening_table(OPENINGS),
                                             uci=uci, columns=columns))
        except Exception as exc:  # noqa: BLE001 - compared: the same class and message from both
            got.append((type(exc), str(exc)))
    return got


def assert_same(data: bytes, **options) -> bytes:
    py, cy = answers(data, **options)
    if py != cy and isinstance(py[0], bytes) and isinstance(cy[0], bytes):
        for a, b in zip(py[0].split(b"\r\n"), cy[0].split(b"\r\n")):   # the first row that differs, shown
            assert a == b
    assert py == cy
    return py[0]


def rows(data: bytes, **options) -> bytes:
    """The CSV rows of ``data`` on both kernels (checked equal)."""
    if "cy" in BACKENDS:
        return assert_same(data, **options)
    kernel = BACKENDS["py"]
    return kernel.csv_from_block(data, 0, len(data), base_offset=7, openings=OPENINGS, **options)[0]


# ------------------------------------------------------------ compiled against pure

@needs_cy
@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_sinks_agree_on_every_file(path):
    data = decompressed(path)
    for stop in (False, True):
        assert_same(data, stop=stop)
    assert_same(data, uci=True)


@needs_cy
@pytest.mark.parametrize("path", [p for p in corpus_files() if "2022-06.head2499" in p.name], ids=lambda p: p.name)
def test_sinks_agree_under_a_filter_and_on_chosen_columns(path):
    data = decompressed(path)
    assert_same(data, where={"min_elo": 1800, "speed": ["blitz"], "with_evals": True})
    assert_same(data, columns=["tags", "white", "clock", "byte_offset"])
    assert_same(data, uci=True, columns=["uci", "moves"])


@needs_cy
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), MUTATION, st.integers(0, 10**9), NOISE),
                min_size=1, max_size=4),
       st.integers(0, 10_000), st.integers(1, 3), st.booleans())
def test_sinks_agree_on_mutated_real_games(mutations, first, count, uci):
    data = mutated(b"".join(real_game(first + k) for k in range(count)), mutations)
    assert_same(data, uci=uci)
    assert_same(data, stop=True)


TAG_TEXT = st.binary(max_size=12).map(lambda b: b.replace(b'"', b"").replace(b"\\", b"").replace(b"\n", b"")
                                      .replace(b"\r", b"").replace(b"]", b""))


@needs_cy
@settings(max_examples=200, deadline=None)
@given(TAG_TEXT, TAG_TEXT, st.sampled_from([b",", b'\\"', b"\x01", b"\t", b"\x7f", b"\xe2\x94\x82", b"\xff", b""]))
def test_any_bytes_in_tag_values_are_written_alike(white, note, extra):
    data = b'[White "' + white + extra + b'"]\n[Note "' + extra + note + b'"]\n\n1. e4 *\n'
    assert_same(data)


CLOCKS = st.tuples(st.integers(0, 10**15 - 1), st.integers(0, 59), st.integers(0, 59),
                   st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=40).map(lambda t: "." + t)))


@needs_cy
@settings(max_examples=300, deadline=None)
@given(st.lists(CLOCKS, min_size=1, max_size=4))
def test_any_clock_is_written_alike(clocks):
    """A clock with tenths is written as Python writes the float the reader gives (shortest text)."""
    plies = " ".join(f"{'1.' if i == 0 else ''} e4 {{ [%clk {h}:{m:02}:{s:02}{f}] }}" if i % 2 == 0 else
                     f"e5 {{ [%clk {h}:{m:02}:{s:02}{f}] }}" for i, (h, m, s, f) in enumerate(clocks))
    assert_same(f"{plies} *\n".encode())


EVALS = st.one_of(st.integers(-3000, 3000).map(lambda cp: f"{cp / 100:.2f}"),
                  st.integers(-20, 20).map(lambda m: f"#{m}"))
SHORT_CLOCKS = st.tuples(st.integers(0, 3), st.integers(0, 59), st.integers(0, 59),
                         st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=3).map(lambda t: "." + t)))


@needs_cy
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(EVALS, SHORT_CLOCKS), min_size=1, max_size=12), st.sampled_from(["180+2", "60+0", "-"]))
def test_the_analysis_floats_are_written_alike(plies, time_control):
    """win_percent, the accuracies and move_seconds (tenths or not, from clocks with fractions) are written
    as Python writes the floats the pure sink computes (the shortest text that reads back)."""
    moves = ("e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d4", "exd4", "cxd4", "Bb4+")
    text = " ".join(f"{f'{i // 2 + 1}. ' if i % 2 == 0 else ''}{moves[i]} {{ [%eval {e}] [%clk {h}:{m:02}:{s:02}{f}] }}"
                    for i, (e, (h, m, s, f)) in enumerate(plies))
    assert_same(f'[TimeControl "{time_control}"]\n\n{text} *\n'.encode(),
                columns=["win_percent", "white_accuracy", "black_accuracy", "move_seconds"])


# ------------------------------------------------------------ what a user reads

def _field(tags: str, column: str, movetext: str = "1. e4 e5 *") -> str:
    """The field of ``column`` in the one game's row (written after its offset)."""
    text = rows(f"{tags}\n\n{movetext}\n".encode(), columns=["byte_offset", column]).decode()
    assert text.endswith("\r\n")
    return text[:-2].split(",", 1)[1]


EDGES = [
    # (tags, column, the field as written)
    ('[White "Ann, Jr."]', "white", '"Ann, Jr."'),
    ('[White "A \\"B\\" C"]', "white", '"A ""B"" C"'),
    ('[White "plain"]', "white", "plain"),
    ('[Black ""]', "black", ""),
    ("", "white", ""),
    ('[WhiteElo "-32768"]', "white_elo", "-32768"),
    ('[WhiteElo "?"]', "white_elo", ""),
    ('[UTCDate "2024.02.29"]\n[UTCTime "1:2:3"]', "utc", "2024-02-29 01:02:03Z"),
    ('[UTCDate "1969.12.31"]\n[UTCTime "23:59:59"]', "utc", "1969-12-31 23:59:59Z"),
    ('[UTCDate "0001.01.01"]\n[UTCTime "00:00:00"]', "utc", "0001-01-01 00:00:00Z"),
    ('[Date "9999.12.31"]', "date", "9999-12-31"),
    ('[Date "0099.03.01"]', "date", "0099-03-01"),
    ('[Date "2024.??.??"]', "date", ""),
    ('[TimeControl "600+40000"]', "base_seconds", "600"),
    ('[TimeControl "600+40000"]', "increment_seconds", ""),
    ('[Round "3"]\n[Round "4"]\n[Date "2024.01.01"]', "tags", '"{""Round"":""4"",""Date"":""2024.01.01""}"'),
    ("", "tags", "{}"),
    ('[Note "a\\\\b\tc\x01d\x7f"]', "tags", '"{""Note"":""a\\\\b\\tc\\u0001d\x7f""}"'),
    ('[Note "x\u2502y"]', "tags", '"{""Note"":""x\u2502y""}"'),
    ('[Site "https://lichess.org/AbCd1234"]', "game_id", "AbCd1234"),
    ("", "mate", "false"),
]


@pytest.mark.parametrize("tags, column, expected", EDGES)
def test_fields_read_as_documented(tags, column, expected):
    assert _field(tags, column) == expected


MOVETEXT = [
    # (movetext, column, the field as written)
    ("1. e4 { [%clk 0:02:57.7] } e5 { [%clk 0:03:00] } *", "clock", "177.7 180"),
    ("1. e4 { [%clk 0:02:57.0] } e5 { [%clk 0:00:00.00001] } *", "clock", "177 1e-05"),
    ("1. e4 { [%clk 0:00:00.0001] } e5 { [%clk 0:00:00.000015] } *", "clock", "0.0001 1.5e-05"),
    ("1. e4 { [%clk 0:00:00.1234567890123456789] } *", "clock", "0.12345678901234568"),
    ("1. e4 { [%clk 999999999999999:00:00] } *", "clock", "3599999999999996400"),
    ("1. e4 e5 { [%clk 0:03:00] } *", "clock", " 180"),
    ("1. e4 e5 *", "clock", ""),
    ("1. e4 { [%eval 0.33] } e5 d4 { [%eval -1.5] } *", "eval_cp", "33  -150"),
    ("1. e4 { [%eval #-3] } *", "eval_mate", "-3"),
    ("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0", "mate", "true"),
    ("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0", "moves", "e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7#"),
    ("*", "moves", ""),
]


@pytest.mark.parametrize("movetext, column, expected", MOVETEXT)
def test_per_ply_fields_read_as_documented(movetext, column, expected):
    assert _field("", column, movetext) == expected


def test_a_row_of_one_empty_field_is_quoted_as_pythons_csv_quotes_it():
    """Else the row would read back as a blank line, no row at all."""
    data = b'[White ""]\n\n1. e4 *\n\n[White "A"]\n\n1. d4 *\n\n1. c4 *\n'
    assert rows(data, columns=["white"]) == b'""\r\nA\r\n""\r\n'
    assert rows(data, columns=["white", "black"]) == b',\r\nA,\r\n,\r\n'


def test_the_rows_parse_back_with_pythons_csv():
    import csv

    data = b'[White "a,\\"b\\""]\n[Note "x\\"y,z"]\n\n1. e4 { [%clk 0:00:01.5] } *\n' * 2
    text = rows(data, columns=["white", "tags", "clock"]).decode()
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    assert parsed == [['a,"b"', '{"Note":"x\\"y,z"}', "1.5"]] * 2


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_bad_column_choices_raise_the_same_errors(name):
    kernel = BACKENDS[name]
    data = b"1. e4 *\n"
    cases = [(["nope"], ValueError, "no column 'nope'"), (["uci"], ValueError, "the uci column needs uci=True"),
             ([], ValueError, "columns names no column"), (["white", "white"], ValueError, "named twice"),
             ("white", TypeError, "not a string")]
    for columns, kind, text in cases:
        with pytest.raises(kind, match=text):
            kernel.csv_from_block(data, 0, len(data), columns=columns)


# ------------------------------------------------------------ the converter's CSV, as it was

def before(data: bytes, replay: bool = False, uci: bool = False) -> bytes:
    """The converter's CSV rows as CsvFormat wrote them before the CSV sink: the pure column sink over the
    live kernel's records, through csv_text (``replay``: --validate or --uci; the uci column with --uci)."""
    columns, *_ = _columns_py.columns_from_block(data, 0, len(data), openings=OPENINGS, uci=replay)
    if replay and not uci:
        del columns["uci"]
    out = io.BytesIO()
    csv_text.write_csv(columns, out, header=False)
    return out.getvalue()


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("path", [p for p in corpus_files() if "lichess-db" in str(p)], ids=lambda p: p.name)
def test_converter_csv_is_what_it_was(tmp_path, path, jobs):
    data = decompressed(path)
    if "truncated" in path.name:    # the cut-off last game: the converter rejects it as damage
        data = data[:data.rindex(b"\n[Event ") + 1]
    for validate in (False, True):
        expected = before(data, replay=validate)
        out = tmp_path / f"out-{validate}"
        opts = Options(input=str(path), chunk_size=10**6, output_dir=str(out), jobs=jobs, block_size=200_000,
                       format="csv", compression="none", validate=validate)
        Converter(opts).run()
        chunks = sorted(out.glob("*.csv"))
        assert len(chunks) == 1
        header = (",".join(schema.names()) + "\r\n").encode()
        assert chunks[0].read_bytes() == header + expected


def test_converter_csv_with_uci_is_what_it_was(tmp_path):
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    out = tmp_path / "out"
    Converter(Options(input=str(path), chunk_size=10**6, output_dir=str(out), jobs=2, block_size=100_000,
                      format="csv", compression="none", uci=True)).run()
    header = (",".join(schema.names(uci=True)) + "\r\n").encode()
    assert sorted(out.glob("*.csv"))[0].read_bytes() == header + before(decompressed(path), replay=True, uci=True)


@needs_cy
def test_the_converter_writes_csv_through_the_compiled_sink(tmp_path, monkeypatch):
    """The rows no longer come from Python lists: the pure column sink is never asked (it held the GIL and
    ran at the pure twin's speed)."""
    from fastpgn import scan as _scan

    def refused(*args, **kwargs):
        raise AssertionError("the pure column sink ran")

    monkeypatch.setattr(_scan, "kernel", BACKENDS["cy"])
    monkeypatch.setattr(_columns_py, "columns_from_block", refused)
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    summary = Converter(Options(input=str(path), chunk_size=100, output_dir=str(tmp_path), jobs=1, format="csv",
                                compression="none")).run()
    assert summary.games_written == 15
    assert len(sorted(tmp_path.glob("*.csv"))[0].read_bytes().split(b"\r\n")) == 1 + 15 + 1
