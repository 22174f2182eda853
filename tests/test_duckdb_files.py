"""Every reader that hands paths to DuckDB reads exactly the files named, whatever characters the names hold.

DuckDB takes a path as a glob pattern (``*``, ``?``, ``[...]``), so a file
named ``x[1].parquet`` once read ``x1.parquet`` beside it, and a folder named
``g[1]*?`` every folder its pattern matches. Here real games of the shipped
sample are laid out in files and folders whose names hold those characters,
each beside the plain-named files and folders its pattern would match, and
the explorer, the report, ``games_reaching`` and the evals database each
count the games (or positions) of the files named, counted apart with pyarrow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import ROOT

pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
ODD = "g[1]*?"                  # a folder name holding every glob character
NEAR = "g1ab"                   # a folder that ODD read as a pattern matches
# (file name, rows) in ODD; x[1], x* and x? read as patterns match x1.parquet (and each other)
LAYOUT = (("x[1].parquet", 15), ("x*.parquet", 20), ("x?.parquet", 25), ("x1.parquet", 348))


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> pa.Table:
    """The shipped sample's 3,000 games as the converter writes them, with positions and FENs."""
    from fastpgn.cli import main as convert

    out = tmp_path_factory.mktemp("games")
    assert convert([str(ROOT / "data" / "sample.pgn.zst"), "3000", "--format", "parquet", "--positions", "--uci",
                    "--fens", "-o", str(out), "-q", "-j", "1"]) == 0
    return pa.concat_tables(pq.read_table(p) for p in sorted(out.glob("*.parquet")))


@pytest.fixture(scope="module")
def layout(games, tmp_path_factory) -> tuple[Path, dict[str, pa.Table]]:
    """ODD holding LAYOUT's files and NEAR two more files; {path relative to the top: its table}."""
    top = tmp_path_factory.mktemp("names")
    tables: dict[str, pa.Table] = {}
    start = 0
    for folder, files in ((ODD, LAYOUT), (NEAR, (("x[1].parquet", 100), ("x1.parquet", 200)))):
        (top / folder).mkdir()
        for name, rows in files:
            tables[f"{folder}/{name}"] = games.slice(start, rows)
            pq.write_table(tables[f"{folder}/{name}"], top / folder / name)
            start += rows
    return top, tables


def _in(tables: dict[str, pa.Table], folder: str) -> list[pa.Table]:
    return [t for name, t in tables.items() if name.startswith(folder + "/")]


def _from_the_start(tables: list[pa.Table]) -> int:
    """The games that start at the standard position (no FEN tag), counted with pyarrow."""
    return sum(t.column("fen").null_count for t in tables)


def _named(top: Path, tables: dict[str, pa.Table]):
    """Each input to try: (path, the tables it names): each odd file alone, and the odd folder."""
    for name, _ in LAYOUT[:3]:
        yield top / ODD / name, [tables[f"{ODD}/{name}"]]
    yield top / ODD, _in(tables, ODD)


def test_the_layout_is_what_a_glob_would_confuse(layout):
    """(the test's premise, with real DuckDB: read as a pattern, the odd path names another file, not itself)"""
    import duckdb

    top, tables = layout
    con = duckdb.connect()
    globbed = con.execute(f"SELECT count(*) FROM read_parquet('{top / ODD / 'x[1].parquet'}')").fetchone()[0]
    assert globbed == tables[f"{NEAR}/x1.parquet"].num_rows


def test_the_report_counts_the_files_named(layout, tmp_path):
    from fastpgn.report import build

    top, tables = layout
    for path, named in _named(top, tables):
        report = build(path, tmp_path / "r[1]*?.html", quiet=True)
        assert report.games == sum(t.num_rows for t in named), path
        assert (tmp_path / "r[1]*?.html").is_file()


def test_games_reaching_counts_the_files_named(layout):
    from fastpgn.positions import games_reaching

    top, tables = layout
    for path, named in _named(top, tables):
        reaching = games_reaching(path, START)
        assert reaching.num_rows == _from_the_start(named) > 0, path
        assert sorted(reaching.column("game_id").to_pylist()) == \
            sorted(g for t in named for g, fen in zip(t.column("game_id").to_pylist(), t.column("fen").to_pylist())
                   if fen is None)


def test_the_explorer_counts_the_files_named(layout, tmp_path):
    from fastpgn.explorer import build_tree, lookup

    top, tables = layout
    for i, (path, named) in enumerate(_named(top, tables)):
        tree = tmp_path / f"t{i}[1]*?.parquet"
        build_tree(str(path), str(tree), max_plies=2, every_game=True)
        answer = lookup(str(tree), START)
        # (every game that moves from the start counts; the decided ones in the totals)
        moved = sum(1 for t in named for fen, plies, result in zip(*(t.column(c).to_pylist()
                                                                     for c in ("fen", "plies", "result")))
                    if fen is None and plies and result in ("1-0", "1/2-1/2", "0-1"))
        assert answer["white"] + answer["draws"] + answer["black"] == moved > 0, path


def _fens(table: pa.Table) -> list[str]:
    """The distinct positions (FEN without the move counters) after each move of ``table``'s games."""
    seen = dict.fromkeys(" ".join(f.split()[:4]) for fens in table.column("fens").to_pylist() for f in fens or ())
    return list(seen)


def test_the_evals_database_reads_the_files_named(layout, tmp_path):
    """Hugging Face's Parquet layout (files and a folder) and lichess's JSON lines, named with glob characters."""
    from fastpgn.engine.evals_db import EvalsDB, build_index

    top, tables = layout
    # Each file its own positions: 10 per table of the layout, none shared, so the counts tell the files apart.
    taken: set[str] = set()
    made: dict[str, list[str]] = {}
    for name, t in tables.items():
        fens = [f for f in _fens(t) if f not in taken][:10]
        taken.update(fens)
        made[name] = fens
    types = {"fen": pa.string(), "line": pa.string(), "depth": pa.int64(), "knodes": pa.int64(),
             "cp": pa.int64(), "mate": pa.int64()}
    for folder in (ODD, NEAR):
        (tmp_path / folder).mkdir()
    for name, fens in made.items():
        stem = name.removesuffix(".parquet")
        rows = {"fen": fens, "line": ["e2e4"] * len(fens), "depth": [20] * len(fens), "knodes": [100] * len(fens),
                "cp": list(range(len(fens))), "mate": [None] * len(fens)}
        pq.write_table(pa.table({k: pa.array(v, types[k]) for k, v in rows.items()}), tmp_path / name)
        with open(tmp_path / (stem + ".jsonl"), "w") as fh:
            for cp, fen in enumerate(fens):
                fh.write(json.dumps({"fen": fen, "evals": [{"pvs": [{"cp": cp, "line": "e2e4"}], "knodes": 100,
                                                            "depth": 20}]}) + "\n")
    from fastpgn import position_key

    every = [position_key(f) for fens in made.values() for f in fens]
    (tmp_path / "indexes").mkdir()
    for i, (name, _) in enumerate(LAYOUT[:3]):
        keys = {position_key(f) for f in made[f"{ODD}/{name}"]}
        for source in (tmp_path / ODD / name, tmp_path / ODD / name.replace(".parquet", ".jsonl")):
            summary = build_index(str(source), str(tmp_path / "indexes" / f"{i}[1]*?{source.suffix}.parquet"))
            assert (summary.fens, summary.positions) == (10, len(keys)), source
            db = EvalsDB(summary.path)
            try:
                assert set(db.lookup(every)) == keys, source
            finally:
                db.close()
    summary = build_index(str(tmp_path / ODD), str(tmp_path / "indexes" / "folder[1].parquet"))
    assert summary.fens == 10 * len(LAYOUT)


def test_a_path_duckdb_cannot_name_is_one_line(layout, tmp_path, capsys):
    """A backslash (DuckDB's other folder separator) with a glob character: refused in one line, exit 2."""
    import shutil

    from fastpgn.cli.report import main

    top, _ = layout
    odd = tmp_path / "a\\b[1].parquet"
    shutil.copy(top / ODD / "x[1].parquet", odd)
    assert main([str(odd), "-o", str(tmp_path / "r.html"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds both a backslash and one of * ? [" in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()

