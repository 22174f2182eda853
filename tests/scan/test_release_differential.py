"""The release text builder, compiled against its pure twin: the same PGN bytes from every batch.

A record batch of lichess's Parquet release becomes PGN text before the
scanner reads it (fastpgn.io.lichess_parquet); the pure kernel writes it with
pyarrow.compute (scan/release.py), the compiled one straight from the Arrow
buffers (scan/release.pxi). Equal bytes here mean equal games, offsets and
errors downstream, whichever backend reads the release.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastpgn
from fastpgn import _backend
from fastpgn.io import lichess_parquet, sources
from helpers import RELEASE_DUMPS, official_schema, release_rows, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')

BACKENDS = dict(_backend.available("scan._scan"))
pytestmark = pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here")


def answers(columns, movetext):
    """Each kernel's ``release_text`` (bytes, or None) or the exception it raised, as comparable values."""
    out = []
    for name in ("py", "cy"):
        try:
            text = BACKENDS[name].release_text(columns, movetext)
            out.append(None if text is None else bytes(text))
        except Exception as exc:  # noqa: BLE001 - the errors are compared too
            out.append((type(exc).__name__, str(exc)))
    return out


def pgn_texts(batch, monkeypatch):
    """``lichess_parquet.pgn_text(batch)`` on each kernel (the fallback for dates and times included)."""
    out = []
    for name in ("py", "cy"):
        monkeypatch.setattr(fastpgn.scan, "kernel", BACKENDS[name])
        out.append(lichess_parquet.pgn_text(batch))
    return out


@pytest.fixture(scope="module")
def release_table():
    pgn = b"\n".join(b"".join(sources.open_source(shared("data", "lichess-db", name)).chunks())
                     for name in RELEASE_DUMPS)
    return pa.Table.from_pylist(release_rows(pgn), schema=official_schema())


def test_the_real_games_in_batches_and_slices(release_table, monkeypatch):
    batches = (release_table.to_batches(max_chunksize=97)
               + [release_table.slice(5, 200).combine_chunks().to_batches()[0]])
    for batch in batches:
        py, cy = pgn_texts(batch, monkeypatch)
        assert py == cy
    # As read back from Parquet: time32[s] comes back as time32[ms], which the kernels write as well.
    import io

    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(release_table, buffer)
    back = pq.read_table(buffer)
    assert back.schema.field("UTCTime").type == pa.time32("ms")
    py, cy = pgn_texts(back.combine_chunks().to_batches()[0], monkeypatch)
    assert py == cy and py.count(b'[UTCTime "') == release_table.num_rows - release_table.column("UTCTime").null_count


def test_every_kind_as_the_dumps_write_it(scan, monkeypatch):
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    batch = pa.record_batch({
        "White": ['Ann "the rook"', "back\\slash", "line\r\nbreak", "é"],
        "WhiteElo": pa.array([None, 1500, -32768, 32767], pa.int16()),
        "WhiteRatingDiff": pa.array([0, -8, 5, None], pa.int64()),
        "BlackRatingDiff": pa.array([-128, 127, 0, None], pa.int8()),
        "UTCDate": pa.array([datetime.date(1, 1, 1), datetime.date(1969, 12, 31), datetime.date(9999, 12, 31), None]),
        "UTCTime": pa.array([datetime.time(0, 0, 0), datetime.time(23, 59, 59, 999_999), None,
                             datetime.time(12, 30, 1, 500_000)], pa.time64("us")),
        "movetext": ["1. e4 *", None, "", "1. d4 d5 1/2-1/2"],
    })
    text = lichess_parquet.pgn_text(batch).decode()
    assert text == (
        '[White "Ann \\"the rook\\""]\n[UTCDate "0001.01.01"]\n[UTCTime "00:00:00"]\n[WhiteElo "?"]\n'
        '[WhiteRatingDiff "+0"]\n[BlackRatingDiff "-128"]\n\n1. e4 *\n\n'
        '[White "back\\\\slash"]\n[UTCDate "1969.12.31"]\n[UTCTime "23:59:59"]\n[WhiteElo "1500"]\n'
        '[WhiteRatingDiff "-8"]\n[BlackRatingDiff "+127"]\n\n*\n\n'
        '[White "line  break"]\n[UTCDate "9999.12.31"]\n[WhiteElo "-32768"]\n'
        '[WhiteRatingDiff "+5"]\n[BlackRatingDiff "+0"]\n\n*\n\n'
        '[White "é"]\n[UTCTime "12:30:01"]\n[WhiteElo "32767"]\n\n1. d4 d5 1/2-1/2\n\n')


@pytest.mark.parametrize("column", [pa.array([0, 2_932_897], pa.date32()), pa.array([-719_163, 1], pa.date32()),
                                    pa.array([86_400, 1], pa.time32("s")), pa.array([-1, 1], pa.time32("ms"))],
                         ids=["year-10000", "year-0", "a-day-on", "before-midnight"])
def test_dates_and_times_the_kernels_do_not_write(column, monkeypatch):
    name = "UTCDate" if pa.types.is_date(column.type) else "UTCTime"
    movetext = pa.array(["*", "*"])
    kind = "date" if name == "UTCDate" else "time"
    assert answers([(name, kind, False, False, column)], movetext) == [None, None]
    batch = pa.record_batch({name: column, "movetext": movetext})
    py, cy = pgn_texts(batch, monkeypatch)
    assert py == cy
    # written as pyarrow writes such a value, as before the kernels wrote dates and times themselves
    want = column.cast(pa.string()).to_pylist()[0]
    want = want.replace("-", ".") if kind == "date" else want[:8] if column.type.unit != "s" else want
    assert py.startswith(f'[{name} "{want}"]\n'.encode())


@pytest.mark.parametrize("columns, movetext", [
    ([("White", "name", False, False, pa.array(["a"]))], pa.array(["*"])),
    ([("White", "int", False, False, pa.array(["a"]))], pa.array(["*"])),
    ([("WhiteElo", "int", False, False, pa.array([1], pa.uint16()))], pa.array(["*"])),
    ([("White", "text", False, False, pa.array(["a", "b"]))], pa.array(["*"])),
    ([("White", "text", False, False, pa.array(["a"]))], pa.array([1])),
    ([("White", "text", False, False, pa.array(["a"])), ("X", "date", False, False, pa.array([1]))], pa.array(["*"])),
], ids=["no-such-kind", "text-as-int", "unsigned", "rows", "movetext-type", "second-column"])
def test_the_same_errors(columns, movetext):
    py, cy = answers(columns, movetext)
    assert isinstance(py, tuple) and py == cy


def _values(draw, kind: str, rows: int):
    """A column of ``kind`` (a few values outside the written ranges), and its type."""
    if kind == "text":
        text = st.text(st.sampled_from('ab "\\\r\n\té€'), max_size=6) | st.text(max_size=4)
        return draw(st.lists(st.none() | text, min_size=rows, max_size=rows)), pa.string()
    if kind == "int":
        bits = draw(st.sampled_from((8, 16, 32, 64)))
        top = 2 ** (bits - 1)
        ints = st.integers(-top, top - 1)
        return draw(st.lists(st.none() | ints, min_size=rows, max_size=rows)), pa.int64() if bits == 64 else \
            getattr(pa, f"int{bits}")()
    if kind == "date":
        days = st.integers(-719_162, 2_932_896) | st.integers(-800_000, 3_000_000)
        return [None if d is None else datetime.date(1970, 1, 1) + datetime.timedelta(days=d)
                if -719_162 <= d <= 2_932_896 else d
                for d in draw(st.lists(st.none() | days, min_size=rows, max_size=rows))], pa.date32()
    unit = draw(st.sampled_from(("s", "ms", "us", "ns")))
    per = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    seconds = st.integers(0, 86_400 * per - 1) | st.integers(-per, 86_401 * per)
    return draw(st.lists(st.none() | seconds, min_size=rows, max_size=rows)), \
        (pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit))


@st.composite
def batches(draw):
    rows = draw(st.integers(0, 12))
    columns = []
    for i in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(("text", "int", "date", "time")))
        values, kind_type = _values(draw, kind, rows + 3)
        if kind == "date":      # days as numbers: dates Python cannot hold are built from int32
            array = pa.array([v if not isinstance(v, int) else None for v in values], pa.date32())
            if any(isinstance(v, int) for v in values):
                days = [None if v is None else (v - datetime.date(1970, 1, 1)).days if not isinstance(v, int) else v
                        for v in values]
                array = pa.array(days, pa.int32()).view(pa.date32())
        else:
            array = pa.array(values, kind_type)
        start = draw(st.integers(0, 3))
        columns.append((f"Tag{i}", kind, draw(st.booleans()), draw(st.booleans()), array.slice(start, rows)))
    movetext = pa.array(draw(st.lists(st.none() | st.sampled_from(("", "1. e4 *", "1. d4 { [%clk 0:03:00] } 1-0")) |
                                      st.text(max_size=5), min_size=rows + 1, max_size=rows + 1)), pa.string())
    return columns, movetext.slice(draw(st.integers(0, 1)), rows)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_random_batches(batch):
    columns, movetext = batch
    py, cy = answers(columns, movetext)
    assert py == cy


# ---------------------------------------------------------------- the room the compiled builder reserves
#
# The compiled builder measures a batch's text with the code that writes it (_release_rows called
# without a buffer); an estimate made apart once reserved one byte too few for a null rating in a
# string column (written [WhiteElo "?"]), and the process aborted with a corrupted heap at some row
# counts. `make asan` runs these under AddressSanitizer, which reports the first byte too far.

@pytest.mark.parametrize("rows", [1, 127, 128, 1000, 1928, 2047, 2048, 4096])
@pytest.mark.parametrize("movetext", [None, ""], ids=["null-movetext", "empty-movetext"])
def test_null_ratings_in_string_columns(rows, movetext, tmp_path, monkeypatch):
    batch = pa.record_batch({"WhiteElo": pa.array([None] * rows, pa.string()),
                             "BlackElo": pa.array([None] * rows, pa.string()),
                             "movetext": pa.array([movetext] * rows, pa.string())})
    py, cy = pgn_texts(batch, monkeypatch)
    assert py == cy and py.count(b'[WhiteElo "?"]') == rows
    # and through a file, as a user reads it: one game a row, on each backend
    path = tmp_path / "elo.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_batches([batch]), path)
    monkeypatch.undo()      # the backend of this run (the suite runs once on each)
    games = list(fastpgn.read_games(path))
    assert len(games) == rows and games[0].headers["WhiteElo"] == "?"


@st.composite
def release_layouts(draw):
    """Batches in the release's shape: a few of its columns, each of a type it may have, nulls anywhere."""
    rows = draw(st.integers(1, 40))
    nulls = st.sampled_from(("none", "all", "some"))
    columns = {}
    for name in draw(st.lists(st.sampled_from(("Event", "White", "WhiteElo", "BlackElo", "WhiteRatingDiff",
                                                "UTCDate", "Opening")), unique=True, max_size=4)):
        as_text = draw(st.booleans())
        values = [draw(st.text(st.sampled_from('12 "\\\r\né'), max_size=5)) if as_text else
                  draw(st.integers(-3000, 3000)) for _ in range(rows)]
        shape = draw(nulls)
        values = [None if shape == "all" or (shape == "some" and draw(st.booleans())) else v for v in values]
        columns[name] = pa.array(values, pa.string() if as_text else pa.int16())
    moves = st.none() | st.sampled_from(("", "1. e4 *", "1. d4 { [%clk 0:03:00] } 1-0"))
    columns["movetext"] = pa.array([draw(moves) for _ in range(rows)], pa.string())
    return pa.record_batch(columns)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(batch=release_layouts())
def test_release_layouts_compiled_against_pure(batch, monkeypatch):
    py, cy = pgn_texts(batch, monkeypatch)
    assert py == cy


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | st.text(st.sampled_from("10/2-* \t\r\n[e4.{}x"), max_size=14), max_size=12),
       st.integers(0, 2))
def test_the_rows_scanned_alone_are_the_same(texts, start):
    # the cheap test that picks the rows whose movetext may read as more than one game
    movetext = pa.array(["pad"] * start + texts, pa.string()).slice(start)
    py, cy = (BACKENDS[name].release_suspects(movetext) for name in ("py", "cy"))
    assert py == cy


def test_lichess_movetext_is_never_scanned_alone():
    movetext = pa.array(["1. e4 { [%eval -0.25] [%clk 0:03:00] } 1... e5 2. O-O-O 1-0", "1. d4 0-1 ", "*", "1/2-1/2",
                         None, "", "1. e4 1-0 2. d4", '1. e4 *\n\n[White "x"]', " [Event", "1. e4 {*} 1-0"])
    for name in ("py", "cy"):
        assert BACKENDS[name].release_suspects(movetext) == [6, 7, 8, 9]


# The compiled test runs sixteen bytes at a time over text of sixteen bytes and more (lichess's rows are
# hundreds of bytes long): what marks a row is found wherever it falls against those sixteen.
_PLAIN_ROW = "1. e4 { [%eval 0.25] [%clk 0:03:00] } 1... e5 { [%clk 0:02:59] } 2. Nf3 Nc6 3. Bb5 a6 "


@pytest.mark.parametrize("mark", ["1-0 ", "0-1 ", "1/2-1/2 ", "* ", "\n", "\r"])
def test_a_mark_anywhere_in_a_long_row_is_found(mark):
    rows = [_PLAIN_ROW[:at] + mark + _PLAIN_ROW[at:] + "1-0" for at in range(0, len(_PLAIN_ROW) + 1)]
    movetext = pa.array([_PLAIN_ROW + "1-0", _PLAIN_ROW + "O-O-O O-O 0-1"] + rows, pa.string())
    for name in ("py", "cy"):
        # the plain rows, castling and all, end with their result: never scanned alone
        assert BACKENDS[name].release_suspects(movetext) == list(range(2, len(rows) + 2)), name


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | st.text(st.sampled_from("10/2-* \t\r\n[e4.{}xO"), min_size=15, max_size=70),
                max_size=8), st.integers(0, 2))
def test_long_rows_scanned_alone_are_the_same(texts, start):
    movetext = pa.array(["pad"] * start + texts, pa.string()).slice(start)
    py, cy = (BACKENDS[name].release_suspects(movetext) for name in ("py", "cy"))
    assert py == cy
