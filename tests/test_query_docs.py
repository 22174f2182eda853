"""Every ```python block of docs/query/*.md runs, and its answers hold: the stream's equal to the Parquet's,
both equal to a count of the games made apart from any engine.

Each page asks the same questions of a dump (``lichess_db_standard_rated_2024-01.pgn.zst`` in the text)
and of the converter's Parquet (``games/``): games by month and rating band, the most played openings by
speed, accuracy by rating. The test puts the corpus's 2,499-game lichess month and a conversion of it made
here in place of the two, runs the page's blocks in order in one namespace, and compares the variables
they assign (``by_month_stream`` with ``by_month_parquet`` ...) with an answer counted in plain Python over
``fastpgn.read_games``: its headers, and ``Game``'s accuracy. Blocks of other kinds (```sh) are shown, not
run. The Spark page runs on a real local[2] Spark, skipped (naming the install) without pyspark or Java.
"""

from __future__ import annotations

import collections
import io
import math
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import fastpgn
from fastpgn.cli import main as cli_main
from helpers import ROOT, SINGLE, shared, spark_session

pytest.importorskip("pyarrow")

PAGES = ROOT / "docs" / "query"
DUMP = "lichess_db_standard_rated_2024-01.pgn.zst"
FOLDER = "games/"
CONVERT = f"python -m fastpgn {DUMP} 1000000 --format parquet -o {FOLDER}"
QUESTIONS = ("by_month", "openings", "accuracy")
TOP = 3                 # openings a speed, as the pages ask
_BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def python_blocks(page: Path) -> list[str]:
    """The page's ```python blocks, in order (```sh and the others are not run)."""
    return [code for kind, code in _BLOCK.findall(page.read_text(encoding="utf-8")) if kind == "python"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The real month, and the converter's Parquet of it, made as the pages' command makes it."""
    dump = shared(*SINGLE)
    folder = tmp_path_factory.mktemp("query") / "games"
    with redirect_stderr(io.StringIO()):
        assert cli_main([str(dump), "1000000", "--format", "parquet", "-o", str(folder), "-q"]) == 0
    assert list(folder.glob("*.parquet"))
    return dump, folder


def run_page(name: str, corpus, namespace: dict | None = None) -> dict:
    """Run the page's python blocks, the placeholders replaced by the corpus, in one namespace (what they
    print in ``printed``)."""
    page = PAGES / name
    text = page.read_text(encoding="utf-8")
    assert CONVERT in text, f"{name} does not show the conversion the test makes: {CONVERT}"
    dump, folder = corpus
    namespace = dict(namespace or {}, __name__=f"docs_query_{page.stem}")
    blocks = python_blocks(page)
    assert DUMP in "".join(blocks) and FOLDER in "".join(blocks), f"{name}: its blocks read no dump or no Parquet"
    printed = io.StringIO()
    for i, code in enumerate(blocks):
        code = code.replace(DUMP, str(dump)).replace(FOLDER, f"{folder}/")
        with redirect_stdout(printed):
            exec(compile(code, f"{page} (python block {i + 1})", "exec"), namespace)  # noqa: S102
    namespace["printed"] = printed.getvalue()
    return namespace


def _plain(value):
    """A value as Python compares it (numpy's and pyarrow's scalars, a Spark Row's fields)."""
    if hasattr(value, "as_py"):
        value = value.as_py()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    return value


def rows(answer) -> list[tuple]:
    """An engine's answer as a list of tuples: a polars or pandas frame, DuckDB's or Spark's rows, a list."""
    if hasattr(answer, "rows") and callable(answer.rows):                 # polars
        found = answer.rows()
    elif hasattr(answer, "itertuples"):                                    # pandas
        found = list(answer.itertuples(index=False, name=None))
    else:                                                                  # DuckDB's fetchall, Spark's Rows, lists
        found = [tuple(row) for row in answer]
    return [tuple(_plain(v) for v in row) for row in found]


# ---------------------------------------------------------------- the answers, counted without an engine

def _speed(time_control: str | None) -> str | None:
    """lichess's speed of a TimeControl tag: base + 40 x increment seconds."""
    if time_control == "-":
        return "correspondence"
    base, plus, increment = (time_control or "").partition("+")
    if not (plus and base.isdigit() and increment.isdigit()):
        return None
    total = int(base) + 40 * int(increment)
    for name, below in (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500),
                        ("classical", 21600)):
        if total < below:
            return name
    return "correspondence"


def _elo(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


@pytest.fixture(scope="module")
def expected(corpus):
    """The three answers from the games' headers and ``Game``'s accuracy, in the pages' order."""
    months, speeds, sides = collections.Counter(), collections.Counter(), collections.defaultdict(list)
    for game in fastpgn.read_games(str(corpus[0])):
        h = game.headers
        white, black = _elo(h.get("WhiteElo")), _elo(h.get("BlackElo"))
        day = h.get("UTCDate") or h.get("Date") or ""
        if white is not None and black is not None and re.fullmatch(r"\d{4}\.\d\d\.\d\d", day):
            months[(day[:4] + "-" + day[5:7], (white + black) // 400 * 200)] += 1
        speeds[(_speed(h.get("TimeControl")), h.get("ECO"), h.get("Opening"))] += 1
        for elo, accuracy in ((white, game.white_accuracy), (black, game.black_accuracy)):
            if elo is not None and accuracy is not None:
                sides[elo // 200 * 200].append(accuracy)
    by_month = sorted((month, band, n) for (month, band), n in months.items())
    ranked = sorted(speeds.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1], kv[0][2]))
    openings, kept = [], collections.Counter()
    for (speed, eco, opening), n in ranked:
        if kept[speed] < TOP:
            kept[speed] += 1
            openings.append((speed, eco, opening, n))
    accuracy = [(band, len(values), math.fsum(values) / len(values)) for band, values in sorted(sides.items())]
    assert len(by_month) > 5 and len(openings) > 10 and sum(n for _, n, _ in accuracy) > 100
    return {"by_month": by_month, "openings": openings, "accuracy": accuracy}


def check_answers(namespace: dict, expected: dict, page: str) -> None:
    for question in QUESTIONS:
        stream, parquet = (rows(namespace[f"{question}_{kind}"]) for kind in ("stream", "parquet"))
        assert stream == parquet, f"{page}: {question} differs between the stream and the Parquet"
        want = expected[question]
        if question == "accuracy":      # the pages round the mean to 0.1
            assert [row[:2] for row in stream] == [row[:2] for row in want], f"{page}: {question}"
            assert all(abs(got[2] - row[2]) <= 0.05 + 1e-4 for got, row in zip(stream, want)), \
                f"{page}: accuracy {stream} against {want}"
        else:
            assert stream == want, f"{page}: {question}"


ENGINES = {"polars.md": "polars", "duckdb.md": "duckdb", "pandas.md": "pandas", "huggingface.md": "datasets"}


@pytest.mark.parametrize("page", sorted(ENGINES))
def test_the_page_runs_and_its_answers_hold(page, corpus, expected, tmp_path, monkeypatch):
    engine = pytest.importorskip(ENGINES[page])
    if page == "huggingface.md":     # from_parquet's Arrow copy and the maps' caches: here, not in ~/.cache
        monkeypatch.setattr(engine.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
        engine.disable_progress_bars()
    namespace = run_page(page, corpus)
    check_answers(namespace, expected, page)
    if page in ("polars.md", "duckdb.md"):
        assert namespace["strong_blitz_stream"] == namespace["strong_blitz_parquet"] > 0
    if page == "polars.md":
        assert namespace["pushed"].as_dict() == {"min_elo": 2000, "elo_of": "white", "speed": ["blitz"]}
        assert "{'min_elo': 2000, 'elo_of': 'white', 'speed': ['blitz']}" in namespace["printed"]
    if page == "duckdb.md":         # the relation and the variable: the same games as the Parquet's
        parquet = namespace["parquet"]
        assert rows(namespace["by_speed"]) == rows(parquet.sql(
            "SELECT speed, count(*), max(white_elo) FROM games WHERE speed = 'blitz' AND white_elo >= 2000 "
            "GROUP BY speed").fetchall())
        assert rows(namespace["long_games"]) == rows(parquet.sql(
            "SELECT speed, avg(plies) FROM games GROUP BY speed ORDER BY speed").fetchall())
    if page == "pandas.md":
        assert namespace["types_stream"] == namespace["types_parquet"]
        assert str(namespace["types_stream"]["white_elo"]) == "int16[pyarrow]"
    if page == "huggingface.md":
        assert namespace["features_stream"] == namespace["features_parquet"]


def test_a_wrong_answer_fails_the_check(expected):
    """check_answers catches a stream that differs from the Parquet, and an answer off the count."""
    right = {f"{q}_{kind}": expected[q] for q in QUESTIONS for kind in ("stream", "parquet")}
    check_answers(right, expected, "right")
    off = [(m, b, n + 1) for m, b, n in expected["by_month"]]
    for wrong in ({**right, "by_month_stream": off}, {**right, "by_month_stream": off, "by_month_parquet": off},
                  {**right, "openings_parquet": expected["openings"][1:]}):
        with pytest.raises(AssertionError):
            check_answers(wrong, expected, "wrong")


@pytest.fixture(scope="module")
def spark():
    yield from spark_session("fastpgn query docs")


def test_the_spark_page_runs_and_its_answers_hold(spark, corpus, expected):
    namespace = run_page("spark.md", corpus, {"spark": spark})
    check_answers(namespace, expected, "spark.md")
    assert namespace["strong_blitz_stream"] == namespace["strong_blitz_parquet"] > 0
    # the plan the page shows: the speed and the rating pushed into the kernel, the result left to Spark
    assert "PushedFilters: [EqualTo(speed,blitz), GreaterThanOrEqual(white_elo,2000)]" in namespace["printed"]


def test_every_page_is_in_the_index():
    index = (ROOT / "docs" / "query.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in PAGES.glob("*.md"))
    assert pages == ["duckdb.md", "huggingface.md", "pandas.md", "polars.md", "spark.md"]
    assert all(f"(query/{name})" in index for name in pages)


def test_the_block_reader_sees_python_blocks_only(tmp_path):
    """A ```sh block is shown, not run; a ```python block is run (a test that cannot fail is a defect)."""
    page = tmp_path / "p.md"
    page.write_text("a\n```sh\nrm -rf /\n```\n\n```python\nx = 1\n```\n```py\ny\n```\n```python\nz = 2\n```\n")
    assert python_blocks(page) == ["x = 1\n", "z = 2\n"]
