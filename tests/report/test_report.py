"""``python -m fastpgn report``: every number on the page against the same figure computed another way.

The page's numbers (its JSON script tag, and the tables beside the charts)
are checked against counts over ``read_games`` on the PGN (the tags, as
the kernel reads them) and against plain Python over the Parquet's rows
read with pyarrow, never against DuckDB again; the filters on Parquet
(SQL) against the kernel's filters (``read_games(where=...)``) and against
a report made from the PGN; and the bad inputs' one-line errors.
"""

from __future__ import annotations

import html.parser
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import fastpgn
from fastpgn.filters import Where, speed_of
from helpers import ROOT

pytest.importorskip("duckdb")
pytest.importorskip("plotly")
pq = pytest.importorskip("pyarrow.parquet")

from fastpgn.cli.report import main  # noqa: E402
from fastpgn.report import ReportError, build  # noqa: E402
from fastpgn.report.queries import CLOCK_BANDS  # noqa: E402

SAMPLE = ROOT / "data" / "sample.pgn.zst"


def page_data(path: Path) -> dict:
    """The numbers a page embeds (its ``fastpgn-report-data`` script tag)."""
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="fastpgn-report-data">(.*?)</script>', text, re.S)
    assert found, "the page embeds its numbers"
    return json.loads(found.group(1))


class _Tables(html.parser.HTMLParser):
    """The page's ``<table data-table=NAME>`` cells as text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._name: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._name = dict(attrs).get("data-table")
            self.tables[self._name or "?"] = []
        elif tag == "tr" and self._name:
            self.tables[self._name].append([])
        elif tag == "td" and self._name:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None and self._name:
            self.tables[self._name][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._name = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory) -> Path:
    """The shipped sample converted as users do: ``python -m fastpgn SAMPLE 1000 --format parquet``."""
    from fastpgn.cli import main as convert

    out = tmp_path_factory.mktemp("games")
    assert convert([str(SAMPLE), "1000", "--format", "parquet", "-o", str(out), "-q", "-j", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def rows(parquet_dir) -> list[dict]:
    """The Parquet's rows as Python dicts (pyarrow, not DuckDB)."""
    return [r for f in sorted(parquet_dir.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def page(parquet_dir, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("page") / "report.html"
    assert main([str(parquet_dir), "-o", str(out), "-q"]) == 0
    return out, page_data(out)


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def _table(data: dict, name: str) -> list[dict]:
    t = data["tables"][name]
    return [dict(zip(t["columns"], row)) for row in t["rows"]]


def _pct(part: float, whole: float) -> float:
    return round(100 * part / whole, 2)


def _score(result: str) -> float | None:
    return {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result)


def test_counts_agree_with_read_games(page):
    """Games, speeds, results and terminations: the page against the tags as read_games reads the PGN."""
    _, data = page
    games = list(fastpgn.read_games(str(SAMPLE)))
    assert data["games"] == len(games) == 3000
    assert (data["games_read"], data["games_rejected"], data["games_filtered"]) == (3000, 0, 0)
    speeds = Counter(speed_of(g.headers.get("TimeControl", "")) or "unknown" for g in games)
    assert {r["speed"]: r["games"] for r in _table(data, "by_speed")} == speeds
    assert [r["games"] for r in _table(data, "by_speed")] == sorted(speeds.values(), reverse=True)
    results = Counter((speed_of(g.headers["TimeControl"]), g.headers["Result"]) for g in games)
    assert {(r["speed"], r["result"]): r["games"] for r in _table(data, "results")} == results
    terms = Counter((speed_of(g.headers["TimeControl"]), g.headers.get("Termination", "unknown")) for g in games)
    assert {(r["speed"], r["termination"]): r["games"] for r in _table(data, "terminations")} == terms
    for r in _table(data, "terminations"):
        assert r["pct"] == _pct(r["games"], speeds[r["speed"]])
    summary = _table(data, "summary")[0]
    players = {g.headers[side] for g in games for side in ("White", "Black")}
    assert summary["players"] == len(players)
    days = sorted(g.headers["UTCDate"].replace(".", "-") for g in games)
    assert (summary["first_day"], summary["last_day"]) == (days[0], days[-1])
    assert summary["with_evals"] == sum(1 for g in games if any(e is not None for e in g.evals))
    assert summary["with_clocks"] == sum(1 for g in games if any(c is not None for c in g.clocks))
    by_day = Counter((g.headers["UTCDate"].replace(".", "-"), speed_of(g.headers["TimeControl"])) for g in games)
    assert {(r["day"], r["speed"]): r["games"] for r in _table(data, "by_period")} == by_day


def test_ratings_scores_and_openings(page, rows):
    """Rating histogram, White's score by rating gap and the top openings: the page against Python over the rows."""
    _, data = page
    hist = Counter((r["speed"], r[side] // 100 * 100) for r in rows for side in ("white_elo", "black_elo")
                   if r[side] is not None)
    assert {(r["speed"], r["rating"]): r["players"] for r in _table(data, "ratings")} == hist
    gaps: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if r["white_elo"] is not None and r["black_elo"] is not None and _score(r["result"]) is not None:
            diff = r["white_elo"] - r["black_elo"]      # to the nearest 50, halves away from zero
            gap = max(-800, min(800, int(math.copysign(math.floor(abs(diff) / 50 + 0.5), diff)) * 50))
            gaps[gap].append(_score(r["result"]))
    shown = _table(data, "score_by_diff")
    assert [r["diff"] for r in shown] == sorted(gaps)
    for r in shown:
        scores = gaps[r["diff"]]
        assert r["games"] == len(scores)
        assert r["white_score_pct"] == pytest.approx(100 * sum(scores) / len(scores), abs=0.006)
        assert r["expected_pct"] == pytest.approx(100 / (1 + 10 ** (-r["diff"] / 400)), abs=0.006)
    openings = Counter(r["opening"] for r in rows if r["opening"] is not None)
    top = sorted(openings.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    shown = _table(data, "openings")
    assert [(r["opening"], r["games"]) for r in shown] == top
    for r in shown:
        mine = [_score(g["result"]) for g in rows if g["opening"] == r["opening"]]
        finished = [s for s in mine if s is not None]
        assert r["white_score_pct"] == pytest.approx(100 * sum(finished) / len(finished), abs=0.006)
        assert r["draws_pct"] == pytest.approx(100 * finished.count(0.5) / len(finished), abs=0.006)


def test_analysis_by_rating_and_clock(page, rows):
    """Accuracy, ACPL and judgement rates by rating band and by clock: the page against Python over the rows."""
    _, data = page
    sides: dict[int, list[tuple[float, int]]] = defaultdict(list)
    moves: dict[str, dict[int, Counter]] = {"band": defaultdict(Counter), "clock": defaultdict(Counter)}
    for r in rows:
        for colour in ("white", "black"):
            if r[f"{colour}_elo"] is not None and r[f"{colour}_accuracy"] is not None:
                sides[r[f"{colour}_elo"] // 200 * 200].append((r[f"{colour}_accuracy"], r[f"{colour}_acpl"]))
        if r["judgement"] is None:
            continue
        black_first = r["fen"] is not None and r["fen"].split()[1] == "b"
        for i, judgement in enumerate(r["judgement"]):
            if r["win_percent"][i] is None:
                continue
            white_moved = (i % 2 == 0) != black_first
            elo = r["white_elo"] if white_moved else r["black_elo"]
            if elo is not None:
                moves["band"][elo // 200 * 200][judgement] += 1
            left = r["clock"][i] if r["clock"] is not None else None
            if left is not None:
                band = next(k for k, (high, _) in enumerate(CLOCK_BANDS) if high is None or left < high)
                moves["clock"][band][judgement] += 1
    shown = _table(data, "accuracy_by_band")
    assert sides and [r["band"] for r in shown] == sorted(sides)
    for r in shown:
        mine = sides[r["band"]]
        assert r["sides"] == len(mine)
        assert r["accuracy"] == pytest.approx(sum(a for a, _ in mine) / len(mine), abs=0.006)
        assert r["acpl"] == pytest.approx(sum(c for _, c in mine) / len(mine), abs=0.006)
    for name, key in (("judgements_by_band", "band"), ("judgements_by_clock", "clock_band")):
        shown = _table(data, name)
        expected = moves[key.split("_")[0]]
        assert expected and [r[key] for r in shown] == sorted(expected)
        for r in shown:
            counts = expected[r[key]]
            total = sum(counts.values())
            assert r["moves"] == total
            for word, column in (("Inaccuracy", "inaccuracy_pct"), ("Mistake", "mistake_pct"),
                                 ("Blunder", "blunder_pct")):
                assert r[column] == pytest.approx(100 * counts[word] / total, abs=0.006)
    assert sum(r["moves"] for r in _table(data, "judgements_by_clock")) > 1000


def test_tables_beside_the_charts_show_the_embedded_numbers(page):
    """What a reader sees in each table is what the JSON holds (the charts are drawn from the same lists)."""
    path, data = page
    assert path.stat().st_mode & 0o044 == 0o044 & ~_umask()      # readable by others, as any file written
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    for name, t in data["tables"].items():
        if name == "summary":
            continue
        cells = parser.tables[name][1:]          # the first row is the headings
        assert len(cells) == len(t["rows"]), name
        for shown, row in zip(cells, t["rows"]):
            if name == "judgements_by_clock":
                row = [CLOCK_BANDS[row[0]][1], *row[1:]]
            for text, value in zip(shown, row):
                if isinstance(value, float):
                    assert float(text.replace(",", "")) == pytest.approx(value, abs=0.006), name
                elif isinstance(value, int):
                    assert int(text.replace(",", "")) == value, name
                else:
                    assert text == ("" if value is None else str(value)), name
    page_text = path.read_text(encoding="utf-8")
    assert f"fastpgn {fastpgn.__version__}" in page_text and "Filters: none" in page_text
    assert "<th>games in the report</th><td>3,000</td>" in page_text


FILTERS = [
    {"speed": "blitz"},
    {"min_elo": 1800, "elo_of": "either"},
    {"min_elo": 1500, "max_elo": 2200},
    {"max_elo": 1400, "elo_of": "white"},
    {"since": "2024-01-10", "until": "2024.01.20"},
    {"eco": "B2"},
    {"termination": "Time forfeit", "with_clocks": True},
    {"with_evals": True, "min_plies": 40},
    {"max_plies": 20},
    {"time_control": "180+2"},
    {"variant": "standard"},
    {"tags": ["Result=1-0", "WhiteTitle=FM"]},
]


@pytest.mark.parametrize("where", FILTERS, ids=lambda w: ",".join(w))
def test_filters_on_parquet_keep_what_the_kernel_keeps(parquet_dir, tmp_path, where):
    """The filters as SQL over the Parquet keep exactly the games the kernel's filters keep on the PGN."""
    kept = list(fastpgn.read_games(str(SAMPLE), where=Where(**where)))
    report = build(parquet_dir, tmp_path / "r.html", **where)
    assert report.games == len(kept)
    assert report.games_filtered == 3000 - len(kept) and report.games_read == 3000
    speeds = Counter(speed_of(g.headers["TimeControl"]) for g in kept)
    assert {s: n for s, n, _ in report.tables.get("by_speed", {"rows": []})["rows"]} == speeds
    assert page_data(tmp_path / "r.html")["filters"] == Where(**where).as_dict()


def test_a_pgn_input_gives_the_page_of_its_parquet(parquet_dir, tmp_path):
    """A PGN dump, converted on the way with the filters, gives the numbers of its converted Parquet filtered."""
    where = {"min_elo": 1600, "speed": "blitz,rapid"}
    from_pgn = build(SAMPLE, tmp_path / "a.html", jobs=1, **where)
    from_parquet = build(parquet_dir, tmp_path / "b.html", **where)
    assert from_pgn.tables == from_parquet.tables and from_pgn.games > 0
    assert (from_pgn.games_read, from_pgn.games_rejected, from_pgn.games_filtered) == \
           (3000, 0, 3000 - from_pgn.games)


def test_rejected_games_of_a_pgn_input_are_counted(tmp_path):
    """A PGN with a bad game: read = in the page + rejected, and the summary shows it."""
    good = b'[Event "x"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n[TimeControl "60+0"]\n\n1. e4 e5 1-0\n\n'
    bad = b'[Event "y"]\n[Result "0-1"]\n\n1. e4 @@ 0-1\n\n'
    (tmp_path / "d.pgn").write_bytes(good + bad)
    report = build(tmp_path / "d.pgn", tmp_path / "r.html", jobs=1)
    assert (report.games, report.games_rejected, report.games_read) == (1, 1, 2)
    assert "<th>games rejected (bad PGN)</th><td>1</td>" in (tmp_path / "r.html").read_text()


def test_a_filter_that_keeps_nothing_says_so(parquet_dir, tmp_path, capsys):
    out = tmp_path / "none.html"
    assert main([str(parquet_dir), "-o", str(out), "--min-elo", "3900"]) == 0
    assert capsys.readouterr().err.strip().endswith("no game passes the filters; " + str(out) + " says so")
    text = out.read_text()
    assert "No game passes the filters." in text and 'id="chart-' not in text and "<h2>Ratings" not in text
    assert page_data(out)["games"] == 0 and page_data(out)["games_filtered"] == 3000
    # the same from the PGN: the converter keeps nothing, so writes no Parquet at all
    assert main([str(SAMPLE), "-o", str(out), "--min-elo", "3900", "-j", "1"]) == 0
    assert "no game passes the filters" in capsys.readouterr().err
    assert "No game passes the filters." in out.read_text() and page_data(out)["games_filtered"] == 3000


def test_a_dump_of_bad_games_only_says_so(tmp_path, capsys):
    (tmp_path / "bad.pgn").write_bytes(b'[Event "y"]\n[Result "0-1"]\n\n1. e4 @@ 0-1\n\n')
    assert main([str(tmp_path / "bad.pgn"), "-o", str(tmp_path / "r.html"), "-j", "1"]) == 0
    assert "every game was rejected" in _one_line(capsys)
    data = page_data(tmp_path / "r.html")
    assert (data["games"], data["games_read"], data["games_rejected"]) == (0, 1, 1)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_bad_inputs_get_one_line(parquet_dir, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "-o", str(tmp_path / "r.html")]) == 2
    assert "no Parquet files" in _one_line(capsys)
    assert main([str(tmp_path / "missing"), "-o", str(tmp_path / "r.html")]) == 2
    assert "missing: no such file" in _one_line(capsys)
    (tmp_path / "notes.txt").write_text("hello\n")
    assert main([str(tmp_path / "notes.txt"), "-o", str(tmp_path / "r.html")]) == 2
    assert "is not PGN" in _one_line(capsys)
    # an empty dataset: fastpgn's Parquet schema, no row
    empty = tmp_path / "nogames"
    empty.mkdir()
    table = pq.read_table(next(parquet_dir.glob("*.parquet")))
    pq.write_table(table.slice(0, 0), empty / "part.parquet")
    assert main([str(empty), "-o", str(tmp_path / "r.html")]) == 2
    assert "no games in the Parquet" in _one_line(capsys)
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    assert main([str(tmp_path / "broken.parquet"), "-o", str(tmp_path / "r.html")]) == 2
    assert "broken.parquet" in _one_line(capsys)
    assert main([str(parquet_dir), "-o", str(tmp_path / "r.html"), "--min-elo", "x"]) == 2
    assert "--min-elo" in _one_line(capsys)
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(ReportError, match="no such file"):
        build(tmp_path / "missing", tmp_path / "r.html")


def test_memory_limit_and_temp_dir(parquet_dir, tmp_path):
    """DuckDB within a small memory limit, spilling to the folder given, gives the same numbers; the folder is
    left clean."""
    spill = tmp_path / "spill"
    spill.mkdir()
    small = build(parquet_dir, tmp_path / "a.html", memory_limit="64MB", temp_dir=str(spill))
    assert list(spill.iterdir()) == []
    assert small.tables == build(parquet_dir, tmp_path / "b.html").tables
    assert math.isclose(sum(r[1] for r in small.tables["by_speed"]["rows"]), 3000)


def test_parquet_without_the_converters_record_says_rejected_is_not_known(parquet_dir, tmp_path):
    """Parquet files copied without the converter's record of the run: the page does not invent a count."""
    import shutil

    bare = tmp_path / "bare"
    bare.mkdir()
    for f in parquet_dir.glob("*.parquet"):
        shutil.copy(f, bare / f.name)
    report = build(bare, tmp_path / "r.html", speed="bullet")
    assert report.games_rejected is None and report.games_read is None
    assert report.games_filtered == 3000 - report.games
    text = (tmp_path / "r.html").read_text()
    assert "<th>games rejected (bad PGN)</th><td>not known</td>" in text and "Rejected games unknown" in text


def test_progress_bar_on_a_terminal_and_quiet(parquet_dir, tmp_path):
    """On a terminal a bar names each query as it runs, then the summary line; -q leaves stderr empty."""
    import sys

    from helpers import stderr_on_a_terminal

    command = [sys.executable, "-m", "fastpgn", "report", str(parquet_dir), "-o", str(tmp_path / "r.html")]
    shown = stderr_on_a_terminal(command)
    assert "fastpgn report:" in shown and "100%" in shown and "mistakes by clock" in shown
    assert shown.rstrip().endswith(f"3,000 games in {tmp_path / 'r.html'}")
    assert stderr_on_a_terminal(command + ["-q"]) == ""


def test_real_dumps_of_several_months_by_month(tmp_path):
    """Two real lichess dumps years apart, converted on the way: games by month, evals and clocks as read_games
    sees them."""
    from helpers import G2013, G2021, shared

    inputs = [shared(*G2013), shared(*G2021)]
    report = build(inputs, tmp_path / "r.html", jobs=1)
    games = [g for path in inputs for g in fastpgn.read_games(str(path))]
    assert report.games == len(games) == report.games_read - report.games_rejected
    months = Counter((g.headers["UTCDate"][:7].replace(".", "-"), speed_of(g.headers["TimeControl"]) or "unknown")
                     for g in games)
    t = report.tables["by_period"]
    assert t["columns"][0] == "month"
    assert {(m, s): n for m, s, n in t["rows"]} == months
    summary = dict(zip(report.tables["summary"]["columns"], report.tables["summary"]["rows"][0]))
    assert summary["with_evals"] == sum(1 for g in games if any(e is not None for e in g.evals)) > 0
    assert summary["with_clocks"] == sum(1 for g in games if any(c is not None for c in g.clocks)) > 0
    assert report.tables["judgements_by_band"]["rows"], "the 2021 dump has analysed games"
    assert page_data(tmp_path / "r.html")["inputs"] == [str(p) for p in inputs]


def test_lichess_release_parquet_is_read_as_pgn(tmp_path):
    """lichess's own Parquet release (not fastpgn's schema) is converted on the way, as the converter reads it."""
    import pyarrow as pa

    from helpers import G2023, decompressed, official_schema, release_rows, shared

    pgn = decompressed(shared(*G2023))
    release = tmp_path / "release" / "year=2023" / "month=02"
    release.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(release_rows(pgn), schema=official_schema()), release / "0.parquet")
    report = build(tmp_path / "release", tmp_path / "r.html", jobs=1)
    games = list(fastpgn.read_games(pgn))
    assert report.games == len(games) == 15 and report.games_rejected == 0
    assert {s: n for s, n, _ in report.tables["by_speed"]["rows"]} == \
        Counter(speed_of(g.headers["TimeControl"]) for g in games)


def test_a_bad_memory_limit_is_one_line_and_leaves_nothing(parquet_dir, tmp_path, capsys):
    spill = tmp_path / "spill"
    spill.mkdir()
    assert main([str(parquet_dir), "-o", str(tmp_path / "r.html"), "--memory-limit", "3XB",
                 "--temp-dir", str(spill)]) == 2
    assert "memory" in _one_line(capsys).lower()
    assert list(spill.iterdir()) == [] and not (tmp_path / "r.html").exists()


def test_a_page_that_cannot_be_written_is_one_line(parquet_dir, tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    assert main([str(parquet_dir), "-o", str(tmp_path / "taken"), "-q"]) == 2
    assert f"cannot write {tmp_path / 'taken'}" in _one_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]      # no temporary page left behind


def _cut_sample(folder: Path) -> tuple[Path, int]:
    """The sample's first 60,000 bytes (a download cut short), and the games its readable part starts."""
    import io

    import zstandard

    cut = folder / "cut.pgn.zst"
    cut.write_bytes(SAMPLE.read_bytes()[:60_000])
    text = bytearray()
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(cut.read_bytes()), read_across_frames=True)
    try:
        while block := reader.read(65_536):
            text += block
    except zstandard.ZstdError:
        pass                                    # the cut: everything before it was read
    return cut, text.count(b"[Event ")


def test_a_truncated_dump_gets_a_page_of_its_whole_games_under_a_banner(tmp_path, capsys):
    """Damage: the page holds the whole games before it, a banner says where it is, and the exit status is 1."""
    cut, started = _cut_sample(tmp_path)
    out = tmp_path / "r.html"
    assert main([str(cut), "-o", str(out), "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert f"fastpgn report: {cut}: truncated zst data in {cut} (PGN byte " in err and "Traceback" not in err
    assert f"the page holds its {started - 1} whole games before the damage" in err
    data = page_data(out)
    # the last game begun is cut: read, and rejected (kept in the converter's rejects)
    assert (data["games"], data["games_read"], data["games_rejected"]) == (started - 1, started, 1)
    assert [s["state"] for s in data["sources"]] == ["damaged"] and "truncated zst data" in data["sources"][0]["damage"]
    banner = re.search(r'<p class="damage" role="alert">(.*?)</p>', out.read_text()).group(1)
    assert "cut.pgn.zst is damaged: truncated zst data" in banner and f"holds its {started - 1:,} whole games" in banner


def test_the_summary_counts_every_input_damaged_ones_too(parquet_dir, tmp_path, capsys):
    """A whole conversion and one that ended at damage: read and rejected are the sums over both records."""
    from fastpgn.cli import main as convert

    cut, started = _cut_sample(tmp_path)
    assert convert([str(cut), "1000", "--format", "parquet", "-o", str(tmp_path / "cut"), "-q", "-j", "1"]) == 1
    out = tmp_path / "r.html"
    assert main([str(parquet_dir), str(tmp_path / "cut"), "-o", str(out), "-q"]) == 1
    assert "cut.pgn.zst: truncated zst data" in capsys.readouterr().err
    data = page_data(out)
    assert (data["games"], data["games_read"], data["games_rejected"], data["games_filtered"]) == \
           (3000 + started - 1, 3000 + started, 1, 0)
    assert sorted((s["name"], s["state"], s["games"]) for s in data["sources"]) == \
           [("cut.pgn.zst", "damaged", started - 1), ("sample.pgn.zst", "finished", 3000)]
    text = out.read_text()
    assert f"<th>games read</th><td>{3000 + started:,}</td>" in text
    assert "<th>games rejected (bad PGN)</th><td>1</td>" in text


def test_an_unfinished_conversion_says_its_counts_are_not_known(parquet_dir, tmp_path):
    """A folder whose run did not finish (its state, no record of the end): the page says so, invents nothing."""
    import shutil

    unfinished = tmp_path / "unfinished"
    shutil.copytree(parquet_dir, unfinished)
    done = next(unfinished.glob(".*.fastpgn-done.json"))
    done.rename(unfinished / done.name.replace("-done.json", "-state.json"))
    report = build(unfinished, tmp_path / "r.html", quiet=True)
    assert report.games == 3000 and report.games_read is None and report.games_rejected is None
    assert any("did not finish" in n for n in report.notes)
    assert "<th>games read</th><td>not known</td>" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("missing", ["plotly", "duckdb"])
def test_a_missing_extra_names_what_to_install(missing, parquet_dir, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, missing, None)         # (import then raises ImportError, as when absent)
    assert main([str(parquet_dir), "-o", str(tmp_path / "r.html")]) == 2
    line = _one_line(capsys)
    assert f"needs {missing}, which is not installed" in line and 'pip install "fastpgn[report]"' in line
    assert not (tmp_path / "r.html").exists()
