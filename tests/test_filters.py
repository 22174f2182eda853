"""Filters: the kernel's selection equals the same selection made in Python over the full read.

Every filter is checked on the real corpus (../shared/data) on both backends
(the ``scan`` fixture): ``games_from_block``/``lines_from_block`` with a
filter give exactly the games that the plain Python reference below keeps
from the unfiltered read, and the counts reconcile (read = kept + rejected +
filtered out). Then the reader, the converter and its flags.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import filters, openings
from fastpgn.arrow import read_arrow
from fastpgn.cli import main
from fastpgn.convert.converter import Converter, Options
from fastpgn.errors import InputError
from fastpgn.filters import Where, as_where, speed_of
from fastpgn.oneliner import format_line, iter_lines
from fastpgn.reader import read_games, read_headers, read_lines
from helpers import DATA, decompressed, shared

OPENINGS = openings.load()


def corpus() -> list[Path]:
    files = []
    for folder in ("lichess-db", "lichess-other", "edge-cases-nonlichess"):
        files += sorted(p for p in (DATA / folder).glob("*.pgn*"))
    return files


@pytest.fixture(scope="module")
def corpus_data():
    shared("data", "lichess-db")
    return {p.name: decompressed(p) for p in corpus()}


# ------------------------------------------------------------ the reference, written plainly

def _rating(headers, tag, w):
    value = headers.get(tag, "")
    if not (value.isascii() and value.isdigit() and len(value) <= 9):
        return False
    n = int(value)
    return (w.min_elo is None or n >= w.min_elo) and (w.max_elo is None or n <= w.max_elo)


def _speed(time_control):
    if time_control == "-":
        return "correspondence"
    if time_control is None or time_control.count("+") != 1:
        return None
    base, increment = time_control.split("+")
    if not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in (base, increment)):
        return None
    seconds = int(base) + 40 * int(increment)
    for name, limit in (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500),
                        ("classical", 21600)):
        if seconds < limit:
            return name
    return "correspondence"


def _date_ok(value):
    return (value is not None and len(value) == 10 and value[4] == "." and value[7] == "."
            and value.replace(".", "").isascii() and value.replace(".", "").isdigit()
            and len(value.replace(".", "")) == 8)


def fold(value: str | None) -> bytes | None:
    """The case-blind form of a tag value (A-Z lowered, no other letter), None for an absent tag."""
    return None if value is None else value.encode().lower()


def keeps(w: Where, headers: dict, moves: list, evals: list, clocks: list) -> bool:
    """Whether the game passes ``w``, decided in Python over read_games' record."""
    h = headers
    if w.min_elo is not None or w.max_elo is not None:
        white, black = _rating(h, "WhiteElo", w), _rating(h, "BlackElo", w)
        if not {"white": white, "black": black, "both": white and black, "either": white or black}[w.elo_of]:
            return False
    if w.speed and _speed(h.get("TimeControl")) not in w.speed:
        return False
    if w.since or w.until:
        date = h["UTCDate"] if "UTCDate" in h else h.get("Date")
        if not _date_ok(date) or (w.since and date < w.since) or (w.until and date > w.until):
            return False
    if w.time_control is not None and fold(h.get("TimeControl")) != fold(w.time_control):
        return False
    if w.variant is not None and h.get("Variant", "Standard").encode().lower() != w.variant.encode().lower():
        return False
    if w.player is not None and w.player.encode().lower() not in (
            h.get("White", "\0").encode().lower(), h.get("Black", "\0").encode().lower()):
        return False
    if w.eco is not None and ("ECO" not in h or not fold(h["ECO"]).startswith(fold(w.eco))):
        return False
    if w.termination is not None and fold(h.get("Termination")) != fold(w.termination):
        return False
    if w.with_evals and all(e is None for e in evals):
        return False
    if w.with_clocks and all(c is None for c in clocks):
        return False
    if w.min_plies is not None and len(moves) < w.min_plies:
        return False
    if w.max_plies is not None and len(moves) > w.max_plies:
        return False
    return all(h.get(name) == value for name, value in w.tags)


FILTERS = [
    Where(min_elo=1800),
    Where(min_elo=1800, elo_of="either"),
    Where(min_elo=1700, max_elo=2000, elo_of="white"),
    Where(max_elo=1500, elo_of="black"),
    *[Where(speed=s) for s in filters.SPEEDS],
    Where(speed="bullet,blitz"),
    Where(time_control="180+0"),
    Where(time_control="-"),
    Where(since="2013.01.15"),
    Where(since="2021-10-01", until="2022.06.30"),
    Where(until="2013.01.01"),
    Where(variant="chess960"),
    Where(variant="Crazyhouse"),
    Where(variant="standard"),
    Where(eco="B"),
    Where(eco="C2"),
    Where(eco="c2"),
    Where(eco="a00"),
    Where(termination="Time forfeit"),
    Where(termination="Normal"),
    Where(termination="normal"),
    Where(termination="TIME FORFEIT"),
    Where(with_evals=True),
    Where(with_clocks=True),
    Where(min_plies=60),
    Where(max_plies=10),
    Where(min_plies=20, max_plies=30),
    Where(tags={"Result": "1-0"}),
    Where(tags=[("Event", "Rated Blitz game"), ("Result", "0-1")]),
    # combined
    Where(min_elo=1600, speed="blitz", with_clocks=True),
    Where(speed=["rapid", "classical"], eco="C", min_plies=30, termination="Normal"),
    Where(min_elo=1500, max_elo=2200, elo_of="either", since="2013.01.10", tags={"Result": "1/2-1/2"}),
    Where(variant="Standard", with_evals=True, max_plies=80),
]


def full_read(scan, data):
    return scan.games_from_block(data, 0, len(data))


def test_the_reference_rule_agrees_with_speed_of():
    for tc in ("0+1", "15+0", "29+0", "30+0", "60+3", "179+0", "180+0", "120+2", "300+4", "479+0", "480+0",
               "600+5", "1499+0", "1500+0", "5400+30", "21599+0", "21600+0", "-", "?", "", "1+2+3", "a+1"):
        assert speed_of(tc) == _speed(tc or None), tc


@pytest.mark.parametrize("where", FILTERS, ids=lambda w: ",".join(f"{k}={v}" for k, v in w.as_dict().items()))
def test_each_filter_selects_what_python_selects(scan, corpus_data, where):
    plan = scan.where_plan(where.spec())
    total_kept = 0
    for name, data in corpus_data.items():
        records, read, rejects, _ = full_read(scan, data)
        expected = [r for r in records if keeps(where, r[2], r[3], r[4], r[5])]
        got, got_read, got_rejects, filtered = scan.games_from_block(data, 0, len(data), where=plan)
        assert got == expected, name
        assert got_read == read, name
        assert len(got) + len(got_rejects) + filtered == got_read, name
        # a rejected game stays rejected, unless the tags drop it first (its movetext is then not read)
        assert {r[2] for r in got_rejects} <= {r[2] for r in rejects}, name
        total_kept += len(got)
    assert total_kept > 0 or where in (Where(until="2013.01.01"),), "a filter that keeps nothing tests little"


@pytest.mark.parametrize("where", [FILTERS[0], FILTERS[10], Where(min_elo=1600, speed="blitz", with_clocks=True),
                                   Where(player="ZUGZWANG"), Where(eco="B", max_plies=50)],
                         ids=["min_elo", "speed", "combined", "player", "eco+plies"])
def test_lines_with_a_filter_are_the_lines_of_the_kept_games(scan, corpus_data, where):
    plan = scan.where_plan(where.spec())
    for name, data in corpus_data.items():
        records, *_ = full_read(scan, data)
        lines, read, rejects, _ = scan.lines_from_block(data, 0, len(data), openings=OPENINGS)
        all_lines = lines.split(b"\n")[:-1]
        assert len(all_lines) == len(records)
        expected = [line for line, r in zip(all_lines, records) if keeps(where, r[2], r[3], r[4], r[5])]
        got, got_read, got_rejects, filtered = scan.lines_from_block(data, 0, len(data), openings=OPENINGS, where=plan)
        assert got.split(b"\n")[:-1] == expected, name
        assert got_read == read and len(expected) + len(got_rejects) + filtered == read


def test_player_is_either_side_ignoring_case(scan, corpus_data):
    data = corpus_data["lichess_db_standard_rated_2013-01.slice5000.pgn.zst"]
    records, *_ = full_read(scan, data)
    names = [r[2]["White"] for r in records[:50]] + [r[2]["Black"] for r in records[:50]]
    name = max(set(names), key=names.count)
    where = Where(player=name.swapcase())
    got = scan.games_from_block(data, 0, len(data), where=scan.where_plan(where.spec()))[0]
    expected = [r for r in records if name.lower() in (r[2]["White"].lower(), r[2]["Black"].lower())]
    assert got == expected and len(got) >= 2
    assert any(r[2]["White"] == name for r in got) or any(r[2]["Black"] == name for r in got)


def test_both_backends_filter_alike_and_the_plan_pickles(corpus_data):
    from fastpgn import _backend

    mods = dict(_backend.available("scan._scan"))
    where = FILTERS[-3]
    data = corpus_data["lichess_db_standard_rated_2022-06.head2499.pgn.zst"]
    answers = []
    for mod in mods.values():
        plan = pickle.loads(pickle.dumps(mod.where_plan(where.spec())))
        answers.append(mod.lines_from_block(data, 0, len(data), openings=OPENINGS, where=plan))
    assert all(a == answers[0] for a in answers)


def test_tag_values_compare_unescaped(scan):
    data = (b'[White "A \\"B\\" C"]\n[Black "x\\\\y"]\n\n1. e4 *\n\n'
            b'[White "A"]\n[Black "x"]\n\n1. d4 *\n')
    for where, kept in ((Where(tags={"White": 'A "B" C'}), ["e4"]), (Where(player="X\\Y"), ["e4"]),
                        (Where(player="a"), ["d4"]), (Where(tags={"Black": "x\\\\y"}), [])):
        got = scan.games_from_block(data, 0, len(data), where=scan.where_plan(where.spec()))
        assert [r[3][0] for r in got[0]] == kept, where


def test_the_last_of_two_same_tags_counts_and_absent_tags_fail(scan):
    data = (b'[WhiteElo "2500"]\n[WhiteElo "1200"]\n[BlackElo "2500"]\n\n1. e4 *\n\n'
            b'[BlackElo "2500"]\n\n1. d4 *\n\n[WhiteElo "?"]\n[BlackElo "2600"]\n\n1. c4 *\n')

    def get(w):
        return [r[3][0] for r in scan.games_from_block(data, 0, len(data), where=scan.where_plan(w.spec()))[0]]

    assert get(Where(min_elo=2000)) == []
    assert get(Where(min_elo=2000, elo_of="either")) == ["e4", "d4", "c4"]
    assert get(Where(max_elo=2000, elo_of="white")) == ["e4"]
    assert get(Where(variant="standard")) == ["e4", "d4", "c4"]
    assert get(Where(since="2000.01.01")) == []


def test_a_game_dropped_by_its_tags_is_not_checked_but_one_kept_is(scan):
    bad = b'[WhiteElo "1000"]\n\n1. e4 Zz9 *\n\n'
    good = b'[WhiteElo "2000"]\n\n1. e4 Zz9 *\n\n'
    where = scan.where_plan(Where(min_elo=1500, elo_of="white").spec())
    for data, counts in ((bad, (0, 1, 0, 1)), (good, (0, 1, 1, 0))):
        records, read, rejects, filtered = scan.games_from_block(data, 0, len(data), where=where)
        assert (len(records), read, len(rejects), filtered) == counts
    # a movetext filter reads the movetext of the games whose tags pass, so the bad one is rejected
    where = scan.where_plan(Where(min_elo=1500, elo_of="white", min_plies=1).spec())
    records, read, rejects, filtered = scan.games_from_block(good, 0, len(good), where=where)
    assert (len(records), read, len(rejects), filtered) == (0, 1, 1, 0)


# ------------------------------------------------------------ the vocabulary

def test_unknown_keywords_name_the_valid_ones():
    with pytest.raises(TypeError, match="valid keywords: min_elo, max_elo, elo_of, speed"):
        Where(min_rating=3)
    with pytest.raises(TypeError, match="min_rating"):
        list(read_games(b"1. e4 *", where={"min_rating": 3}))
    with pytest.raises(TypeError, match="valid keywords"):
        read_lines(b"1. e4 *", where={"speeds": "blitz"})
    with pytest.raises(TypeError, match="Where or a dict"):
        as_where("blitz")


@pytest.mark.parametrize("fields, message", [
    ({"min_elo": "abc"}, "min_elo must be a whole number, not 'abc'"),
    ({"min_elo": -1}, "min_elo must not be negative"),
    ({"since": "2024.13.01"}, "since must be a date YYYY.MM.DD or YYYY-MM-DD, not '2024.13.01'"),
    ({"until": "yesterday"}, "until must be a date"),
    ({"speed": "superfast"}, "speed must be one of ultraBullet, bullet, blitz, rapid, classical, correspondence"),
    ({"elo_of": "white player"}, "elo_of must be one of white, black, both, either"),
    ({"tags": ["Event"]}, "a tag test is NAME=VALUE"),
    ({"tags": {"Bad Name": "x"}}, "a tag name is a word"),
    ({"min_plies": 10, "max_plies": 5}, "min_plies (10) is above max_plies (5)"),
    ({"since": "2024-02-01", "until": "2024.01.01"}, "since (2024.02.01) is after until (2024.01.01)"),
    ({"player": ""}, "player must be a non-empty string"),
])
def test_bad_values_are_clear_errors(fields, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        Where(**fields)


def test_where_normalises_and_compares():
    a = Where(min_elo="2000", speed="Blitz, bullet", since="2024-01-31", tags={"Event": "x"})
    b = Where(min_elo=2000, speed=["bullet", "blitz"], since="2024.01.31", tags=[("Event", "x")])
    assert a == b and hash(a) == hash(b) and a.spec() == b.spec()
    assert a.as_dict() == {"min_elo": 2000, "speed": ["blitz", "bullet"], "since": "2024.01.31",
                           "tags": [["Event", "x"]]}
    assert not Where() and Where(with_evals=True)
    assert pickle.loads(pickle.dumps(a)) == a


# ------------------------------------------------------------ the reader

def test_read_games_and_read_lines_with_where_reconcile(corpus_data):
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
    where = {"min_elo": 1800, "speed": "blitz"}
    everything = list(read_games(path, errors="skip"))
    reader = read_games(path, errors="skip", where=where)
    got = [(g.number, g.offset, g.headers, g.moves) for g in reader]
    expected = [(g.number, g.offset, g.headers, g.moves) for g in everything
                if keeps(Where(**where), g.headers, g.moves, g.evals, g.clocks)]
    assert got == expected and 0 < len(got) < len(everything)
    assert reader.games_read == reader.games_yielded + len(reader.rejected) + reader.games_filtered == 2499
    lines = read_lines(path, errors="skip", where=Where(**where))
    assert len(list(lines)) == len(got) and lines.games_filtered == reader.games_filtered
    headers = read_headers(path, where=where)
    assert [(g.number, g.offset, g.headers) for g in headers] == [e[:3] for e in expected]
    assert headers.games_filtered == reader.games_filtered


# ------------------------------------------------------------ the converter and its flags

SAMPLE = "lichess_db_standard_rated_2022-06.head2499.pgn.zst"
FLAGS = ["--min-elo", "1700", "--speed", "blitz", "--speed", "bullet,rapid", "--with-clocks", "--min-plies", "20",
         "--since", "2022-06-01", "--tag", "Event=Rated Blitz game"]
FLAGS_WHERE = Where(min_elo=1700, speed="blitz,bullet,rapid", with_clocks=True, min_plies=20, since="2022.06.01",
                    tags={"Event": "Rated Blitz game"})


def until_damage(reader) -> list:
    """What a reader yields before the damage at the end of a truncated input."""
    out = []
    try:
        for item in reader:
            out.append(item)
    except InputError:
        pass
    return out


def chunk_lines(folder: Path) -> list[str]:
    files = sorted(p for p in folder.glob("*.part_*") if not p.name.endswith(".tmp"))
    return [format_line(r) for f in files for r in iter_lines(f)]


def test_cli_flags_give_the_lines_read_lines_gives(tmp_path, capsys):
    src = shared("data", "lichess-db", SAMPLE)
    out = tmp_path / "o"
    assert main([str(src), "100", "-o", str(out), "-j", "2", *FLAGS]) == 0
    err = capsys.readouterr().err
    expected = list(read_lines(src, where=FLAGS_WHERE))
    assert chunk_lines(out) == expected and 0 < len(expected) < 2499
    reader = read_lines(src, where=FLAGS_WHERE)
    list(reader)
    assert (f"{len(expected):,} games written, 0 rejected, {reader.games_filtered:,} filtered out "
            f"(of 2,499 read)") in err


def test_converter_counts_reconcile_with_rejects_and_limit(tmp_path):
    src = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2")
    where = Where(speed="blitz")
    s = Converter(Options(input=str(src), chunk_size=50, output_dir=str(tmp_path / "a"), jobs=2,
                          block_size=100_000, where=where)).run()
    assert s.games_read == s.games_written + s.games_rejected + s.games_filtered
    assert s.games_filtered > 0 and s.games_rejected >= 1 and s.games_written > 0
    kept = until_damage(read_lines(src, errors="skip", where=where))
    assert chunk_lines(tmp_path / "a") == kept
    # --limit: the games read are those up to the last one written
    games = [g.number for g in until_damage(read_games(src, errors="skip", where=where))]
    for limit in (1, 37, 120):
        s = Converter(Options(input=str(src), chunk_size=50, output_dir=str(tmp_path / f"l{limit}"), jobs=2,
                              block_size=100_000, where=where, limit=limit)).run()
        assert s.games_written == limit and chunk_lines(tmp_path / f"l{limit}") == kept[:limit]
        assert s.games_read == games[limit - 1]
        assert s.games_read == s.games_written + s.games_rejected + s.games_filtered


def test_resume_needs_the_same_filter(tmp_path, capsys):
    src = shared("data", "lichess-db", SAMPLE)
    out = tmp_path / "o"
    assert main([str(src), "100", "-o", str(out), "-q", "--speed", "blitz"]) == 0
    assert main([str(src), "100", "-o", str(out), "-q", "--resume", "--speed", "blitz"]) == 0
    assert main([str(src), "100", "-o", str(out), "-q", "--resume", "--speed", "bullet"]) == 2
    assert "other options" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--min-elo", "abc"], "fastpgn: --min-elo must be a whole number, not 'abc'\n"),
    (["--since", "2024.13.01"], "fastpgn: --since must be a date YYYY.MM.DD or YYYY-MM-DD, not '2024.13.01'\n"),
    (["--speed", "superfast"], "fastpgn: --speed must be one of ultraBullet, bullet, blitz, rapid, classical, "
                               "correspondence, not 'superfast'\n"),
    (["--min-elo", "2500", "--max-elo", "2000"], "fastpgn: --min-elo (2500) is above --max-elo (2000): "
                                                 "no game can pass\n"),
    (["--tag", "Event"], "fastpgn: --tag: a tag test is NAME=VALUE, not 'Event'\n"),
    # (an --elo-of without a bound filtered nothing, silently)
    (["--elo-of", "white", "--speed", "blitz"], "fastpgn: --elo-of white says whose rating --min-elo and "
                                                "--max-elo bound: give one of them too\n"),
])
def test_bad_flag_values_are_one_line_exit_2(tmp_path, capsys, flags, message):
    src = shared("data", "lichess-db", SAMPLE)
    with pytest.raises(SystemExit) as exit:   # argparse's exit, as for every usage error
        main([str(src), "100", "-o", str(tmp_path / "o"), *flags])
    assert exit.value.code == 2
    assert capsys.readouterr().err == message
    assert not (tmp_path / "o").exists()


def test_worker_processes_get_the_filter(tmp_path, monkeypatch):
    """The pure backend's worker processes get the filter pickled (here forced on whichever backend runs)."""
    from fastpgn.convert import converter as pipeline
    from fastpgn.scan import _scan_py

    monkeypatch.setattr(pipeline._scan, "kernel", _scan_py)
    src = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    where = Where(speed="blitz", min_elo=1500)
    s = Converter(Options(input=str(src), chunk_size=100, output_dir=str(tmp_path / "p"), jobs=2,
                          block_size=200_000, where=where)).run()
    assert chunk_lines(tmp_path / "p") == list(read_lines(src, where=where))
    assert s.games_read == 999 == s.games_written + s.games_filtered


# ------------------------------------------------------------ both backends, both pure paths, mutated games

GAMES = (b'[Event "Rated Blitz game"]\n[White "Ann"]\n[Black "Bob"]\n[WhiteElo "2100"]\n[BlackElo "1900"]\n'
         b'[TimeControl "180+2"]\n[UTCDate "2024.01.15"]\n[ECO "B20"]\n\n'
         b'1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... c5 { [%eval 0.3] [%clk 0:02:59] } 2. Nf3 1-0\n\n'
         b'[Event "Rated Bullet game"]\n[White "Cy"]\n[Black "Ann"]\n[WhiteElo "1500"]\n[BlackElo "2200"]\n'
         b'[TimeControl "60+0"]\n[UTCDate "2024.02.01"]\n[ECO "C20"]\n\n1. e4 e5 2. Qh5 Nc6 0-1\n\n')
MUTATED_WHERE = [Where(min_elo=2000), Where(min_elo=2000, elo_of="either", speed="bullet"), Where(player="ann"),
                 Where(with_clocks=True), Where(eco="B", max_plies=2), Where(since="2024.01.20")]


def _filtered_answers(mod, data, where):
    plan = mod.where_plan(where.spec())
    return (mod.lines_from_block(data, 0, len(data), openings=OPENINGS, where=plan),
            mod.games_from_block(data, 0, len(data), where=plan),
            mod.headers_from_block(data, 0, len(data), where=plan))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 2 * len(GAMES)), st.sampled_from(sorted(set(b' \n{}()-"[]1.0e*%\\AB'))),
                          st.booleans()), max_size=4),
       st.sampled_from(MUTATED_WHERE))
def test_mutated_games_filter_alike_on_every_path(edits, where):
    from fastpgn import _backend
    from fastpgn.scan import _scan_py

    data = bytearray(GAMES * 2)
    for at, byte, replace in edits:
        at = min(at, len(data) - 1)
        if replace:
            data[at] = byte
        else:
            data[at:at] = bytes([byte])
    data = bytes(data)
    answer = _filtered_answers(_scan_py, data, where)
    fast_where, fast_headers = _scan_py._fast_where, _scan_py._fast_headers
    _scan_py._fast_where = lambda *a: None
    _scan_py._fast_headers = lambda *a: None
    try:
        assert _filtered_answers(_scan_py, data, where) == answer
    finally:
        _scan_py._fast_where, _scan_py._fast_headers = fast_where, fast_headers
    cy = dict(_backend.available("scan._scan")).get("cy")
    if cy is not None:
        assert _filtered_answers(cy, data, where) == answer


def test_where_sql_refuses_a_tag_kept_without_text_and_quotes_values():
    from fastpgn.filters import where_sql

    assert where_sql(None) == "TRUE"
    with pytest.raises(ValueError, match="UTCDate"):
        where_sql({"tags": ["UTCDate=2024.01.02"]})
    duckdb = pytest.importorskip("duckdb")
    # a value with a quote is a value, not SQL: the row with it is found, the other is not
    con = duckdb.connect()
    con.execute("CREATE TABLE games AS SELECT * FROM (VALUES ('King''s Gambit'), ('x'' OR ''1''=''1')) t(opening)")
    sql = where_sql({"tags": ["Opening=King's Gambit"]})
    assert con.execute(f"SELECT opening FROM games WHERE {sql}").fetchall() == [("King's Gambit",)]


def test_where_sql_finds_a_tag_among_the_tags_pairs_of_fastpgns_parquet(tmp_path):
    """A tag with no column of its own (Round, Annotator) is one of the ``tags`` pairs: DuckDB finds the games
    whose pairs hold it, value for value, as the kernel's ``--tag`` keeps them from the PGN."""
    duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    from fastpgn import arrow
    from fastpgn.filters import where_sql

    pgn = (b'[White "a"]\n[Round "1"]\n\n1. e4 *\n\n[White "b"]\n[Round "2"]\n[Annotator "O\'Neil"]\n\n1. d4 *\n\n'
           b'[White "c"]\n[Annotator "1"]\n\n1. c4 *\n\n')
    path = tmp_path / "games.parquet"
    arrow.to_parquet(pgn, path)
    for tag, kept in (("Round=1", ["a"]), ("Round=2", ["b"]), ("Annotator=O'Neil", ["b"]), ("Round=3", []),
                      ("Annotator=1", ["c"])):
        sql = where_sql({"tags": [tag]})
        got = [w for (w,) in duckdb.sql(f"SELECT white FROM read_parquet('{path}') WHERE {sql} ORDER BY white")
               .fetchall()]
        assert got == kept, tag
        assert [g.headers["White"] for g in read_games(pgn, where={"tags": [tag]})] == kept, tag


# ------------------------------------------------------------ the same filter as SQL over the columns

def _edge_game(moves: str = "1. e4 e5 *", **tags: str) -> bytes:
    return "".join(f'[{k} "{v}"]\n' for k, v in tags.items()).encode() + b"\n" + moves.encode() + b"\n\n"


# Tag values where case, a missing tag or a date that is no day could make the SQL and the kernel part ways.
EDGE_GAMES = b"".join([
    _edge_game(White="\u00c9lodie", Black="Bob", Termination="normal", ECO="b20", Variant="chess960",
               TimeControl="180+2", UTCDate="2021.02.28", WhiteElo="2100", BlackElo="1900"),
    _edge_game(White="\u00e9lodie", Black="BOB", Termination="NORMAL", ECO="B20", Variant="CHESS960",
               TimeControl="-", Date="2021.02.28", WhiteElo="?", BlackElo="2000"),
    _edge_game(White="ann", Black="\u00c9LODIE", Termination="Time forfeit", ECO="?", TimeControl="?",
               UTCDate="2013.??.??", Date="2013.01.05"),
    _edge_game(White="Ann", Black="Cy", Variant="Standard", ECO="C2", UTCDate="2021.03.01"),
    _edge_game(White="x", Black="y", Termination="Abandoned", TimeControl="60+0", Date="2021-03-01"),
    _edge_game("1. d4 { [%eval #-3] [%clk 0:01:00] } d5 { [%eval 0.2] } 1-0", White="m", Black="n",
               Variant="standard", Result="1-0"),
    _edge_game("1. c4 { [%eval #2] } 0-1", White="p", Black="q", Event="Rated Blitz game", Result="0-1"),
])

SQL_FILTERS = [
    Where(player="\u00e9lodie"), Where(player="\u00c9LODIE"), Where(player="bob"), Where(player="ANN"),
    Where(variant="CHESS960"), Where(variant="standard"), Where(eco="b2"), Where(eco="?"),
    Where(termination="normal"), Where(termination="time FORFEIT"), Where(time_control="?"),
    Where(since="2021.02.01", until="2021.03.31"), Where(until="2013.12.31"),
    Where(min_elo=2000, elo_of="either"), Where(with_evals=True), Where(with_clocks=True),
]


# The corpus files of the SQL comparison: each kind of input, the small ones (every filter reads them all).
SQL_CORPUS = ("lichess_db_standard_rated_2013-01.head348.pgn.zst", "lichess_db_standard_rated_2021-10.head999.pgn.zst",
              "lichess_db_standard_rated_2023-02.head15.pgn.zst")


@pytest.fixture(scope="module")
def tables(corpus_data):
    """Each input's games as read_games numbers them and as the analysis columns hold them, row ``i``."""
    pa = pytest.importorskip("pyarrow")
    chosen = {p.name for p in corpus() if p.parent.name != "lichess-db" or p.name in SQL_CORPUS}
    out = {}
    for name, data in [*((n, d) for n, d in corpus_data.items() if n in chosen), ("edges", EDGE_GAMES)]:
        # (a corpus file cut short: the games before the damage)
        games = until_damage(read_games(data, errors="skip"))
        numbers = [g.number for g in games]
        table = pa.Table.from_batches(until_damage(read_arrow(data, errors="skip")), schema=read_arrow(b"").schema)
        assert table.num_rows == len(numbers), name
        rows = {number: i for i, number in enumerate(numbers)}
        resultless = {rows[g.number] for g in games if "Result" not in g.headers}
        out[name] = (data, rows, resultless, table.append_column("i", pa.array(range(table.num_rows), pa.int64())))
    return out


def _where_id(w: Where) -> str:
    return ",".join(f"{k}={v}" for k, v in w.as_dict().items())


@pytest.mark.parametrize("where", FILTERS + SQL_FILTERS, ids=_where_id)
def test_where_sql_keeps_the_games_the_kernel_keeps(tables, where):
    """The report and the explorer filter Parquet with where_sql: the rows it keeps are the games the
    kernel's filter keeps from the same PGN (read_games, both backends by the suite's two runs). The one
    documented difference: the ``result`` column holds the movetext's result when the Result tag is absent,
    so ``--tag Result=...`` keeps there a game the kernel (testing the tag) filters out."""
    duckdb = pytest.importorskip("duckdb")
    from fastpgn.filters import where_sql

    con = duckdb.connect()
    kept_somewhere = 0
    tests_result = any(name == "Result" for name, _ in where.tags)
    for name, (data, rows, resultless, table) in tables.items():
        kernel = [rows[g.number] for g in until_damage(read_games(data, errors="skip", where=where))]
        con.register("games", table)
        sql = [i for (i,) in con.execute(f"SELECT i FROM games WHERE {where_sql(where)} ORDER BY i").fetchall()]
        con.unregister("games")
        if tests_result:
            sql = [i for i in sql if i not in resultless]
        assert sql == kernel, name
        kept_somewhere += len(kernel)
    assert kept_somewhere > 0 or where == Where(until="2013.01.01")
