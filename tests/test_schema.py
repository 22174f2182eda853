"""The analysis schema: Arrow batches, Parquet and CSV hold what the 22-field line holds, typed.

The column list is pinned (names, order, types); every file of the real
corpus (../shared/data, skipped when absent) and every named edge case reads
into the same games, in the same order, as ``read_lines``, field by field;
Parquet read back by pyarrow, DuckDB and polars, and CSV read back by
Python's ``csv``, DuckDB and polars, give the same table. Run on each
backend (FASTPGN_IMPLEMENTATION); the column builder is also compared
across both scanner kernels directly.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import struct
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from fastpgn import _backend, arrow, csv_rows, csv_text, scan as _scan, schema
from fastpgn.errors import InputError, PGNError, PGNSyntaxError
from fastpgn.oneliner import parse_line
from fastpgn.reader import Rejected, read_games, read_lines
from fastpgn.scan import columns as _columns_py
from helpers import CASES, DATA, ROOT, shared

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SEP = "\u2502"
SAMPLE = ("lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")


def corpus_files() -> list[Path]:
    if not DATA.exists():
        return []
    return sorted(p for p in DATA.rglob("*") if p.suffix in (".pgn", ".zst", ".bz2"))


def read_all(reader) -> tuple[list, Exception | None]:
    """Everything a reader yields, and the InputError that ends it early (a damaged input), if any."""
    out = []
    try:
        for item in reader:
            out.append(item)
    except InputError as exc:
        return out, exc
    return out, None


def table_of(source, **options):
    batches, damage = read_all(arrow.read_arrow(source, **options))
    reader = arrow.read_arrow(source, **options)
    return pa.Table.from_batches(batches, schema=reader.schema), damage


# ------------------------------------------------------------ the contract

GOLDEN = [
    ("game_id", "string"), ("site", "string"), ("event", "string"), ("utc", "timestamp[s, tz=UTC]"),
    ("date", "date32[day]"),
    ("white", "string"), ("black", "string"), ("white_elo", "int16"), ("black_elo", "int16"),
    ("white_rating_diff", "int16"), ("black_rating_diff", "int16"), ("white_title", "string"),
    ("black_title", "string"), ("result", "string"), ("termination", "string"), ("time_control", "string"),
    ("base_seconds", "int32"), ("increment_seconds", "int16"), ("speed", "string"), ("eco", "string"),
    ("opening", "string"), ("opening_code", "string"), ("variant", "string"), ("fen", "string"),
    ("plies", "int16"), ("mate", "bool"), ("moves", "list<item: string>"), ("eval_cp", "list<item: int16>"),
    ("eval_mate", "list<item: int8>"), ("clock", "list<item: float>"), ("nags", "list<item: list<item: int16>>"),
    # what lichess computes from the evals and clocks (issue 32)
    ("win_percent", "list<item: float>"), ("judgement", "list<item: string>"), ("move_seconds", "list<item: float>"),
    ("white_accuracy", "float"), ("black_accuracy", "float"), ("white_acpl", "int16"), ("black_acpl", "int16"),
    ("white_inaccuracies", "int16"), ("white_mistakes", "int16"), ("white_blunders", "int16"),
    ("black_inaccuracies", "int16"), ("black_mistakes", "int16"), ("black_blunders", "int16"),
    # what lichess's exporter writes (draw offers) and the games to flag
    ("white_draw_offers", "list<item: int16>"), ("black_draw_offers", "list<item: int16>"),
    ("flags", "list<item: string>"),
    ("byte_offset", "int64"),
    ("tags", "list<item: struct<key: string, value: string>>"),
]


def test_golden_schema():
    assert [(f.name, str(f.type)) for f in schema.arrow_schema()] == GOLDEN
    assert [(f.name, str(f.type)) for f in schema.arrow_schema(uci=True)] == GOLDEN + [("uci", "list<item: string>")]
    assert schema.names() == tuple(name for name, _ in GOLDEN)
    # Arrow types stay plain: no dictionary type, whatever Parquet does with them.
    assert not any(pa.types.is_dictionary(f.type) for f in schema.arrow_schema(uci=True))


def test_batches_carry_the_golden_schema():
    batch = next(arrow.read_arrow(b'[White "A"]\n\n1. e4 *\n', uci=True))
    assert [(f.name, str(f.type)) for f in batch.schema] == GOLDEN + [("uci", "list<item: string>")]


# ------------------------------------------------------------ value rules a user sees

def pgn(tags: dict, movetext: str = "1. e4 e5 *") -> bytes:
    return ("".join(f'[{k} "{v}"]\n' for k, v in tags.items()) + "\n" + movetext + "\n").encode()


def row(tags: dict, movetext: str = "1. e4 e5 *", **options) -> dict:
    return next(arrow.read_arrow(pgn(tags, movetext), **options)).to_pylist()[0]


def test_ratings_dates_and_time_controls():
    r = row({"Site": "https://lichess.org/abcdefgh", "UTCDate": "2024.01.02", "UTCTime": "18:08:33",
             "WhiteElo": "2479", "BlackElo": "?", "WhiteRatingDiff": "+11", "BlackRatingDiff": "-12",
             "TimeControl": "600+5", "Date": "2024.01.01", "Round": "-"})
    assert (r["game_id"], r["site"]) == ("abcdefgh", "https://lichess.org/abcdefgh")
    assert r["utc"] == datetime.datetime(2024, 1, 2, 18, 8, 33, tzinfo=datetime.UTC)
    assert r["date"] == datetime.date(2024, 1, 2)
    assert (r["white_elo"], r["black_elo"], r["white_rating_diff"], r["black_rating_diff"]) == (2479, None, 11, -12)
    assert (r["base_seconds"], r["increment_seconds"], r["speed"]) == (600, 5, "rapid")
    # Date and Round are no column of their own: they stay in tags, in file order.
    assert r["tags"] == [{"key": "Date", "value": "2024.01.01"}, {"key": "Round", "value": "-"}]
    bare = row({"Date": "????.??.??", "WhiteElo": "40000", "TimeControl": "-"})
    assert (bare["game_id"], bare["site"], bare["utc"], bare["date"], bare["white_elo"]) == (None,) * 5
    assert (bare["base_seconds"], bare["increment_seconds"], bare["speed"]) == (None, None, "correspondence")
    old = row({"Date": "2013.01.01", "Time": "03:34:47"})   # no UTC tags: Date and Time
    assert old["utc"] == datetime.datetime(2013, 1, 1, 3, 34, 47, tzinfo=datetime.UTC)
    assert row({"UTCDate": "2021.02.30", "UTCTime": "12:00:00"})["date"] is None


def test_evals_are_exact_centipawns_and_mates():
    # 0.29 * 100 is 28.999999999999996 in floating point; the column holds 29.
    r = row({}, "1. e4 { [%eval 0.29] } e5 { [%eval -1.5] } 2. Qh5 { [%eval #3] } Nc6 { [%eval #-7] } "
                "3. Bc4 Nf6 { [%eval 400] } 4. Qxf7# { [%eval #0] } 1-0")
    assert r["eval_cp"] == [29, -150, None, None, None, 32767, None]
    assert r["eval_mate"] == [None, None, 3, -7, None, None, 0]
    assert r["mate"] is True and r["result"] == "1-0" and r["plies"] == 7
    none = row({}, "1. e4 { [%clk 0:03:00] } e5 { [%clk 0:02:57.7] } *")
    assert none["eval_cp"] is None and none["eval_mate"] is None
    assert none["clock"] == [180.0, pytest.approx(177.7)]
    assert row({})["clock"] is None


def test_results_follow_field_4():
    assert row({"Result": "0-1"}, "1. e4 1-0")["result"] == "0-1"
    assert row({}, "1. e4 1/2-1/2")["result"] == "1/2-1/2"
    assert row({"Result": "?"}, "1. e4 1-0")["result"] == "*"


def test_strings_are_unescaped_and_null_when_absent():
    r = row({"White": 'The \\"Big\\" one', "Opening": "Sicilian Defense", "ECO": "B20"})
    assert r["white"] == 'The "Big" one' and r["black"] is None and r["event"] is None
    assert r["opening_code"] is not None and r["opening_code"].startswith("B20")
    assert row({"ECO": "B20", "Opening": "No Such Opening"})["opening_code"] is None


def test_duplicate_tags_keep_the_last_value_at_the_first_place():
    r = row({"Round": "1", "Annotator": "x"}, "*")
    assert r["tags"] == [{"key": "Round", "value": "1"}, {"key": "Annotator", "value": "x"}]
    data = b'[Round "1"]\n[Annotator "x"]\n[Round "2"]\n\n*\n'
    assert next(arrow.read_arrow(data)).to_pylist()[0]["tags"] == [{"key": "Round", "value": "2"},
                                                                   {"key": "Annotator", "value": "x"}]


# ------------------------------------------------------------ the 22-field line, typed

TERMINATION = {"Normal": "N", "Time forfeit": "T", "Abandoned": "A", "Unterminated": "U", "Rules infraction": "R"}
RESULT = {"1-0": "W", "0-1": "B", "1/2-1/2": "D", "*": "*"}


def field(value) -> str:
    """A column's text as the line writes it (no separator, no line break; null is empty)."""
    return "" if value is None else value.replace(SEP, "").replace("\n", "").replace("\r", "")


def as_int(text: str, low: int, high: int):
    if text[:1] in "+-" and text[1:].isascii() and text[1:].isdigit() or text.isascii() and text.isdigit():
        value = int(text)
        return value if low <= value <= high else None
    return None


def eval_pair(text: str):
    """The reference: ``%eval`` text as (centipawns, mate), by Decimal arithmetic."""
    if text.startswith("#"):
        return None, max(-127, min(127, int(text[1:])))
    cp = int((Decimal(text) * 100).to_integral_value(rounding=ROUND_HALF_UP))
    return max(-32767, min(32767, cp)), None


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def check_row(r: dict, line) -> None:
    """Every field of the line against the typed row."""
    assert field(r["game_id"]) == line.id
    if r["date"] is not None:
        assert line.date == r["date"].strftime("%Y%m%d")
    else:
        assert len(line.date) != 8 or not line.date.isdigit() or schema.date_days(
            f"{line.date[:4]}.{line.date[4:6]}.{line.date[6:]}") is None
    if r["utc"] is not None:
        assert r["utc"].date() == r["date"]
        assert line.time == str(r["utc"].hour * 3600 + r["utc"].minute * 60 + r["utc"].second)
    else:
        assert r["date"] is None or line.time == "" or line.time == "86400"   # (86400: 23:59:60)
    assert line.result == RESULT[r["result"]]
    assert line.termination == TERMINATION.get(r["termination"], "*")
    assert line.mate == ("Y" if r["mate"] else "N")
    assert line.has_eval == ("Y" if r["eval_cp"] is not None else "N")
    assert (r["eval_cp"] is None) == (r["eval_mate"] is None)
    assert line.has_clock == ("Y" if r["clock"] is not None else "N")
    assert line.plies == str(r["plies"]) == str(len(r["moves"]))
    assert line.opening == (r["opening_code"] or "?")
    assert line.time_control == field(r["time_control"])
    tc = (r["time_control"] or "").split("+")   # (the line drops a separator the tag holds)
    if len(tc) == 2 and all(p.isascii() and p.isdigit() and 0 < len(p) <= 9 for p in tc):
        assert (r["base_seconds"], r["increment_seconds"]) == (int(tc[0]), as_int(tc[1], 0, 32767))
    else:
        assert r["base_seconds"] is None and r["increment_seconds"] is None
    for side, name, elo, diff, title in (("white", line.white, line.white_elo, line.white_elo_diff, line.white_title),
                                         ("black", line.black, line.black_elo, line.black_elo_diff, line.black_title)):
        assert name == field(r[side])
        assert title == field(r[f"{side}_title"])
        assert r[f"{side}_elo"] == as_int(elo, -32768, 32767)
        assert r[f"{side}_rating_diff"] == as_int(diff, -32768, 32767)
    assert line.move_list == r["moves"]
    evals = line.eval_list
    if evals and line.mate == "Y":
        assert evals.pop() == "#"           # the line's mark after a mating move
    if r["eval_cp"] is not None:
        assert len(r["eval_cp"]) == len(r["eval_mate"]) == len(r["moves"])
        got = [(cp, mate) for cp, mate in zip(r["eval_cp"], r["eval_mate"]) if cp is not None or mate is not None]
        assert got == [eval_pair(e) for e in evals]
    if r["clock"] is not None:
        assert len(r["clock"]) == len(r["moves"])
        assert [c for c in r["clock"] if c is not None] == [f32(c) for c in line.clock_list]


@pytest.mark.parametrize("path", corpus_files() + sorted(CASES.glob("*.pgn")), ids=lambda p: p.name)
def test_every_file_gives_the_lines_games_typed(path):
    table, damage = table_of(path, errors="skip")
    lines, line_damage = read_all(read_lines(path, errors="skip"))
    assert str(damage) == str(line_damage)
    assert table.num_rows == len(lines)
    for r, line in zip(table.to_pylist(), lines):
        check_row(r, parse_line(line))


def test_offsets_and_tags_are_the_records():
    path = shared("data", *SAMPLE)
    table, _ = table_of(path)
    games = list(read_games(path))
    assert table.column("byte_offset").to_pylist() == [g.offset for g in games]
    assert table.column("tags").to_pylist() == [
        [{"key": k, "value": v} for k, v in g.headers.items() if k not in schema.SOURCE_TAGS] for g in games]
    assert table.column("clock").to_pylist() == [
        None if all(c is None for c in g.clocks) else [None if c is None else f32(c) for c in g.clocks] for g in games]


def test_both_kernels_give_equal_columns(monkeypatch):
    kernels = dict(_backend.available("scan._scan"))
    if len(kernels) < 2:
        pytest.skip("the compiled scanner is not built")
    files = ([shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")]
             + sorted((DATA / "lichess-other").glob("*.pgn*")) + sorted(CASES.glob("*.pgn")))
    from helpers import decompressed

    for path in files:
        data = decompressed(path)
        answers = []
        for name in ("py", "cy"):
            monkeypatch.setattr(_scan, "kernel", kernels[name])
            answers.append(_columns_py.columns_from_block(data, 0, len(data), base_offset=3, first_game=5, uci=True))
        assert answers[0] == answers[1], path.name


# ------------------------------------------------------------ batches, filters, errors

def test_batches_are_batch_size_rows_and_independent_of_blocks():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    whole, _ = table_of(path)
    batches = list(arrow.read_arrow(path, batch_size=1000, block_size=64 << 10))
    assert [b.num_rows for b in batches] == [1000, 1000, 499]
    assert pa.Table.from_batches(batches).equals(whole)


def test_columns_pick_and_order():
    batch = next(arrow.read_arrow(pgn({"White": "A", "WhiteElo": "1500"}), columns=["white_elo", "white"]))
    assert batch.schema.names == ["white_elo", "white"] and batch.to_pylist() == [{"white_elo": 1500, "white": "A"}]
    with pytest.raises(ValueError, match="no column 'elo'"):
        arrow.read_arrow(b"", columns=["elo"])
    with pytest.raises(ValueError, match="uci=True"):
        arrow.read_arrow(b"", columns=["uci"])


def test_where_filters_and_counts_reconcile():
    path = shared("data", *SAMPLE)
    reader = arrow.read_arrow(path, where={"speed": "blitz", "with_evals": True})
    table = pa.Table.from_batches(list(reader))
    assert set(table.column("speed").to_pylist()) == {"blitz"}
    assert all(e is not None for e in table.column("eval_cp").to_pylist())
    games = read_games(path, where={"speed": "blitz", "with_evals": True})
    assert table.column("byte_offset").to_pylist() == [g.offset for g in games]
    assert reader.games_read == 999 == reader.games_yielded + len(reader.rejected) + reader.games_filtered
    assert reader.games_yielded == table.num_rows > 0


BAD = (CASES / "invalid-move-token.pgn").read_bytes()
GOOD = b'[White "Ann"]\n\n1. e4 e5 *\n\n'


def test_a_bad_game_is_rejected_or_raised():
    data = GOOD + BAD + b'\n\n[White "Bob"]\n\n1. d4 *\n'
    reader = arrow.read_arrow(data, errors="skip")
    table = pa.Table.from_batches(list(reader))
    assert table.column("white").to_pylist() == ["Ann", "Alice", "Bob"]   # the case's second game is good
    assert [type(r) for r in reader.rejected] == [Rejected]
    assert reader.rejected[0].reason == "invalid move token 'hello'" and reader.rejected[0].number == 2
    assert reader.rejected[0].text == BAD[:BAD.index(b"[Event", 10)]
    assert reader.games_read == 4 == reader.games_yielded + len(reader.rejected)

    reader = arrow.read_arrow(data)
    seen = []
    with pytest.raises(PGNSyntaxError) as info:
        for batch in reader:
            seen += batch.column("white").to_pylist()
    assert seen == ["Ann"]                  # the games before the bad one first
    assert info.value.game == 2 and "invalid move token 'hello'" in str(info.value)


def test_to_parquet_leaves_no_half_file(tmp_path):
    out = tmp_path / "x.parquet"
    with pytest.raises(PGNError):
        arrow.to_parquet(GOOD + BAD, out)
    assert not out.exists()
    reader = arrow.to_parquet(GOOD + BAD, out, errors="skip")
    assert pq.read_table(out).column("white").to_pylist() == ["Ann", "Alice"] and len(reader.rejected) == 1


def test_read_arrow_is_a_reader_like_the_others(tmp_path):
    import os

    path = shared("data", *SAMPLE)
    whole, _ = table_of(path)
    text = read_all(read_lines(path))[0]
    assert whole.num_rows == len(text) == 999
    plain = tmp_path / "games.pgn"
    from helpers import decompressed

    plain.write_bytes(decompressed(path))
    # Every kind of source read_games takes: the same table.
    for source in (str(path), plain.read_bytes(), open(plain, "rb"), open(plain, encoding="utf-8"),
                   plain.read_text(encoding="utf-8").splitlines()):
        assert pa.Table.from_batches(list(arrow.read_arrow(source))).equals(whole)
        if hasattr(source, "close"):
            assert not source.closed       # a file given is left open
            source.close()
    fds = lambda: len(os.listdir("/proc/self/fd"))  # noqa: E731
    if not os.path.isdir("/proc/self/fd"):
        return
    before = fds()
    reader = arrow.read_arrow(path, batch_size=100, jobs=1)
    assert iter(reader) is reader and fds() == before        # nothing opened before the first batch
    with reader:
        assert next(reader).num_rows == 100 and fds() == before + 1
    assert fds() == before and next(reader, None) is None     # closed on leaving the block, one pass
    # (with threads, the input read ahead may be read to its end, and closed, before the first batch is out)
    reader = arrow.read_arrow(path, batch_size=100, jobs=2)
    assert fds() == before
    with reader:
        assert next(reader).num_rows == 100 and fds() <= before + 1
    assert fds() == before and next(reader, None) is None
    with pytest.raises(PGNError):
        list(arrow.read_arrow(CASES / "invalid-move-token.pgn"))
    assert fds() == before                                   # an error closes it too


# ------------------------------------------------------------ UCI

UCI_FILES = (("lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst"),
             ("edge-cases-nonlichess", "chess960_rapid-wch-2009_fen-setup.pgn"),
             ("edge-cases-nonlichess", "python-chess_cutechess-fischerrandom.pgn"),
             ("edge-cases-nonlichess", "fics_atomic_10games.pgn"),
             ("edge-cases-nonlichess", "chessops_headers-and-moves-on-the-same-line.pgn"))


@pytest.mark.parametrize("parts", UCI_FILES, ids=lambda p: p[1])
def test_uci_is_san_to_uci_and_rejects_as_the_converter(parts):
    from fastpgn.board import declared_start, moves_hook, san_to_uci
    from helpers import decompressed

    path = shared("data", *parts)
    reader = arrow.read_arrow(path, uci=True, errors="skip")
    table = pa.Table.from_batches(list(reader), schema=reader.schema)
    games = {g.number: g for g in read_games(path)}
    kept = [g for g in games.values() if g.number not in {r.number for r in reader.rejected}]
    assert table.column("byte_offset").to_pylist() == [g.offset for g in kept]
    for uci, game in zip(table.column("uci").to_pylist(), kept):
        fen, chess960 = declared_start(game.headers.get("FEN"), game.headers.get("Variant"))
        assert uci == (san_to_uci(game.moves, fen, chess960) if game.moves else [])
    # The converter's --uci: the same games rejected, for the same reasons, at the same places.
    data = decompressed(path)
    _, read, rejects, _ = _scan.kernel.lines_from_block(data, 0, len(data), openings=_columns_py.default_openings(),
                                                        moves_hook=moves_hook(uci=True))
    assert [(r.reason, r.error_offset, r.number, r.offset) for r in reader.rejected] == [
        (reason, offset, number, start) for reason, offset, number, start, _ in rejects]
    assert reader.games_read == read


def test_uci_stop_on_error_counts_as_the_converter():
    from fastpgn import filters
    from fastpgn.board import moves_hook

    data = (b'[WhiteElo "2000"]\n\n1. e4 e5 *\n\n[WhiteElo "2000"]\n\n1. e4 Ke7 2. Ke3 *\n\n'
            b'[WhiteElo "1000"]\n\n1. d4 *\n\n[WhiteElo "2000"]\n\n1. Nf3 *\n')
    where = filters.plan({"min_elo": 1500, "elo_of": "white"})
    for stop in (True, False):
        cols, read, rejects, filtered = _columns_py.columns_from_block(data, 0, len(data), stop_on_error=stop,
                                                                       where=where, uci=True)
        _, line_read, line_rejects, line_filtered = _scan.kernel.lines_from_block(
            data, 0, len(data), openings=_columns_py.default_openings(), stop_on_error=stop,
            moves_hook=moves_hook(uci=True), where=where)
        assert (read, rejects, filtered) == (line_read, line_rejects, line_filtered)
        assert len(cols["uci"]) == read - len(rejects) - filtered
    assert (read, filtered, len(cols["uci"])) == (4, 1, 2)
    seen = []
    with pytest.raises(PGNSyntaxError, match=r"illegal move 1\.\.\. Ke7") as info:
        for batch in arrow.read_arrow(data, uci=True):
            seen += batch.column("uci").to_pylist()
    assert seen == [["e2e4", "e7e5"]] and info.value.game == 2 and info.value.offset == data.index(b"[", 5)


# ------------------------------------------------------------ Parquet read back as users read it

PARQUET_FILES = (SAMPLE, ("lichess-other", "broadcast-study_2025-02_eval-and-clk.pgn.zst"),
                 ("edge-cases-nonlichess", "chesscom_export_2025_29games_incl-chess960.pgn"))


def normal(name: str, value):
    """One value as every reader can be compared: UTC seconds, tags as pairs, clock as float32."""
    if value is None:
        return None
    if name == "utc":
        return int(value.timestamp())
    if name == "tags":
        if isinstance(value, dict):
            return list(value.items())
        return [tuple(p.values()) if isinstance(p, dict) else tuple(p) for p in value]
    if name == "clock":
        return [None if c is None else f32(c) for c in value]
    return value


def rows_of(names: list, rows) -> list:
    return [tuple(normal(n, v) for n, v in zip(names, r)) for r in rows]


@pytest.mark.parametrize("parts", PARQUET_FILES, ids=lambda p: p[1])
def test_parquet_reads_back_in_pyarrow_duckdb_and_polars(parts, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    path = shared("data", *parts)
    table, _ = table_of(path)
    out = tmp_path / "games.parquet"
    reader = arrow.to_parquet(path, out)
    assert reader.games_yielded == table.num_rows > 0
    back = pq.read_table(out)
    # Parquet has no timestamp in seconds: the file holds the same instants in milliseconds.
    utc = table.schema.get_field_index("utc")
    assert back.schema.field("utc").type == pa.timestamp("ms", tz="UTC")
    assert back.equals(table.cast(table.schema.set(utc, pa.field("utc", pa.timestamp("ms", tz="UTC")))))
    names = table.schema.names
    expected = rows_of(names, (tuple(r.values()) for r in table.to_pylist()))
    dk = duckdb.sql(f"SELECT * FROM read_parquet('{tmp_path}/*.parquet')")
    assert dk.columns == names
    assert rows_of(names, dk.fetchall()) == expected
    frame = pl.read_parquet(out)
    assert frame.columns == names
    assert rows_of(names, frame.iter_rows()) == expected
    # zstd everywhere; dictionary pages for the low-cardinality strings (and wherever else they pay).
    meta = pq.ParquetFile(out).metadata.row_group(0)
    for i in range(meta.num_columns):
        column = meta.column(i)
        assert column.compression == "ZSTD"
        top = column.path_in_schema.split(".")[0]
        if top in schema.DICTIONARY_COLUMNS:
            assert "RLE_DICTIONARY" in column.encodings, top


# ------------------------------------------------------------ CSV

CSV_FILES = PARQUET_FILES + (("lichess-other", "crazyhouse_2017-04_annotated-clk.pgn"),)


def csv_value(kind: str, text: str):
    """A CSV field back to the typed value (the reference reader of docs/schema.md's rules)."""
    if text == "":
        return None
    if kind == "list<list<int16>>":     # nags: plies apart by spaces, a ply's NAGs by ';'
        return [[csv_value("int16", x) for x in p.split(";")] if p else [] for p in text.split(" ")]
    if kind.startswith("list<struct<"):     # tags: a JSON object
        return list(json.loads(text).items())
    if kind.startswith("list<"):
        item = kind[5:-1]
        return [csv_value(item, t) for t in text.split(" ")]
    if kind == "bool":
        return {"true": True, "false": False}[text]
    if kind.startswith("int"):
        return int(text)
    if kind == "float32":
        return f32(float(text))
    if kind == "date32":
        return datetime.date.fromisoformat(text)
    if kind.startswith("timestamp"):
        assert text.endswith("Z")
        return datetime.datetime.fromisoformat(text)
    return text


@pytest.mark.parametrize("parts", CSV_FILES, ids=lambda p: p[1])
def test_csv_reads_back_in_csv_duckdb_and_polars(parts, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    path = shared("data", *parts)
    out = tmp_path / "games.csv"
    csv_rows.to_csv(path, out)
    raw = out.read_bytes()
    assert raw.count(b"\r\n") >= 2 and b"\n" not in raw.replace(b"\r\n", b"")
    with open(out, newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    assert tuple(header) == schema.names()
    dk = duckdb.sql(f"SELECT * FROM read_csv('{out}', header = true, all_varchar = true)")
    assert dk.columns == header
    assert [tuple("" if v is None else v for v in r) for r in dk.fetchall()] == [tuple(r) for r in rows]
    frame = pl.read_csv(out, infer_schema_length=0)
    assert frame.columns == header
    assert [tuple("" if v is None else v for v in r) for r in frame.iter_rows()] == [tuple(r) for r in rows]
    # The text is the table: every field back to its type equals the Arrow batches.
    table, _ = table_of(path)
    kinds = [c.type for c in schema.COLUMNS]
    typed = [tuple(csv_value(k, t) for k, t in zip(kinds, r)) for r in rows]
    expected = [tuple(r.values()) for r in table.to_pylist()]
    # A null list, an empty one and one of a single null are each an empty field (plies tells them apart).
    lists = [i for i, k in enumerate(kinds) if k.startswith("list<")]
    expected = [tuple(None if i in lists and v in ([], [None]) else v for i, v in enumerate(r)) for r in expected]
    assert rows_of(header, typed) == rows_of(header, expected)


def test_csv_types_as_duckdb_guesses_them(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "games.csv"
    csv_rows.to_csv(shared("data", *SAMPLE), out)
    types = dict(zip(*(lambda r: (r.columns, [str(t) for t in r.types]))(
        duckdb.sql(f"SELECT * FROM read_csv('{out}')"))))
    assert types["utc"] == "TIMESTAMP WITH TIME ZONE" and types["date"] == "DATE" and types["mate"] == "BOOLEAN"
    assert types["white_elo"] in ("SMALLINT", "INTEGER", "BIGINT")


def test_csv_text_rules():
    out = io.BytesIO()
    cols = {"utc": [86461, None], "date": [1, None], "clock": [[180, 17.7, None, 60.0], None],
            "eval_cp": [[33, None, -12], None], "mate": [True, False], "tags": [[("Round", "-")], []],
            "white": ['Say "hi", then', None]}
    assert csv_text.write_csv(cols, out) == 2
    assert out.getvalue().decode().split("\r\n") == [
        "utc,date,clock,eval_cp,mate,tags,white",
        '1970-01-02 00:01:01Z,1970-01-02,180 17.7  60,33  -12,true,"{""Round"":""-""}","Say ""hi"", then"',
        ",,,,false,{},",
        "",
    ]


# ------------------------------------------------------------ without pyarrow

def test_without_pyarrow_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)     # import pyarrow raises ImportError
    for call in (lambda: arrow.read_arrow(b"1. e4 *"), lambda: schema.arrow_schema(),
                 lambda: arrow.to_parquet(b"1. e4 *", "never.parquet")):
        with pytest.raises(ImportError, match=r'pip install "fastpgn\[arrow\]"'):
            call()
    # CSV needs no pyarrow.
    out = io.BytesIO()
    csv_rows.to_csv(b'[White "A"]\n\n1. e4 *\n', out, columns=["white", "plies"])
    assert out.getvalue() == b"white,plies\r\nA,1\r\n"


def test_import_fastpgn_does_not_import_pyarrow():
    code = ("import sys, fastpgn; fastpgn.read_arrow; fastpgn.to_parquet; "
            "assert 'pyarrow' not in sys.modules, 'pyarrow imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
