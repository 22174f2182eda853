"""A dump at a glance: one self-contained HTML page of charts and tables (``python -m fastpgn report``).

``build`` gathers the inputs (fastpgn's Parquet as it is; a PGN dump, or
lichess's own Parquet release, converted on the way into a temporary
folder), runs the queries of ``fastpgn.report.queries`` in DuckDB (out of
core: a memory limit and a spill folder) and hands the tables to
``fastpgn.report.page``, which draws them with Plotly. Needs the ``report``
extra (``pip install "fastpgn[report]"``: duckdb, plotly, pyarrow).
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import fastpgn
from fastpgn.errors import InputError
from fastpgn.filters import Where, as_where, where_sql
from fastpgn.report import queries

# The columns the queries read: a Parquet file without them is not fastpgn's (lichess's release is converted).
NEEDED_COLUMNS = frozenset({
    "white", "black", "white_elo", "black_elo", "result", "termination", "speed", "date", "opening", "fen",
    "eval_cp", "clock", "judgement", "win_percent", "white_accuracy", "white_acpl", "white_blunders", "plies",
})
# Games by day up to this many days of play, else by month.
DAYS_SHOWN = 92


class ReportError(InputError):
    """The report cannot be made from these inputs: missing, empty, not games; the message names the input."""


@dataclass
class Report:
    """What ``build`` found: the page's tables, the counts around them, and where the page is."""

    path: str
    tables: dict[str, dict[str, list]]
    inputs: list[str]
    filters: dict[str, Any]
    games: int
    games_read: int | None = None           # before the filters, where known
    games_rejected: int | None = None       # by the conversion, where known
    games_filtered: int | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The page's data, JSON-ready: what the page embeds in its ``fastpgn-report-data`` script tag."""
        return {"fastpgn": fastpgn.__version__, "inputs": self.inputs, "filters": self.filters,
                "games": self.games, "games_read": self.games_read, "games_rejected": self.games_rejected,
                "games_filtered": self.games_filtered, "notes": self.notes, "tables": self.tables}


def _is_fastpgn_parquet(path: str, con) -> bool:
    try:
        names = {row[0] for row in con.execute("SELECT name FROM parquet_schema(?)", [path]).fetchall()}
    except Exception as exc:  # noqa: BLE001 - duckdb's own error classes; the message is one line
        raise ReportError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    return NEEDED_COLUMNS <= names


class _Inputs:
    """The inputs sorted into fastpgn's Parquet files and the inputs to convert, with the counts of earlier runs."""

    def __init__(self, names: list[str], con) -> None:
        self.parquet: list[str] = []
        self.convert: list[str] = []
        self.done_files: list[str] = []
        for name in names:
            if name != "-" and glob.has_magic(name) and not os.path.lexists(name):
                matches = sorted(glob.glob(name, recursive=True))
                if not matches:
                    raise ReportError(f"{name}: no file matches this pattern")
                for match in matches:
                    self._add(match, con)
            else:
                self._add(name, con)

    def _add(self, name: str, con) -> None:
        from fastpgn.convert.many import expand_inputs

        if name == "-":
            raise ReportError("-: the report reads files, not stdin (convert the stream with -o DIR first)")
        if not os.path.exists(name):
            raise ReportError(f"{name}: no such file or folder")
        if os.path.isdir(name):
            files = sorted(str(p) for p in Path(name).rglob("*.parquet") if not p.name.startswith("."))
            if files:
                if _is_fastpgn_parquet(files[0], con):
                    self.parquet.extend(files)
                    self.done_files.extend(sorted(str(p) for p in Path(name).rglob(".*.fastpgn-done.json")))
                else:
                    self.convert.append(name)        # lichess's Parquet release, read as PGN by the converter
                return
            pgn = [p for p in expand_inputs([name]) if not os.path.isdir(p)]
            if not pgn:
                raise ReportError(f"{name}: no Parquet files (nor PGN dumps) in this folder; convert a dump "
                                  "with --format parquet first, or name the dump")
            self.convert.extend(pgn)
        elif name.endswith(".parquet") and _is_fastpgn_parquet(name, con):
            self.parquet.append(name)
        else:
            self.convert.append(name)


def _earlier_counts(done_files: list[str]) -> tuple[int, int, int] | None:
    """Games read, rejected and filtered out by the conversions that wrote the Parquet (their done files)."""
    if not done_files:
        return None
    read = rejected = filtered = 0
    for path in done_files:
        try:
            with open(path, encoding="utf-8") as fh:
                progress = json.load(fh)["progress"]
            read += int(progress["games_read"])
            rejected += int(progress["games_rejected"])
            filtered += int(progress.get("games_filtered", 0))
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return read, rejected, filtered


def _convert(inputs: list[str], folder: str, where: Where | None, jobs: int | None, step) -> tuple[int, int, int]:
    """Convert each input to Parquet under ``folder``; the games read, rejected and filtered out."""
    from fastpgn.convert.converter import Converter, Options, OutputError
    from fastpgn.errors import PGNError

    read = rejected = filtered = 0
    for i, name in enumerate(inputs):
        step(f"converting {os.path.basename(name)}")
        opts = Options(input=name, chunk_size=1_000_000, output_dir=os.path.join(folder, str(i)), format="parquet",
                       jobs=jobs or 0, errors="skip", where=where)
        try:
            summary = Converter(opts).run()
        except (OutputError, InputError) as exc:
            raise ReportError(str(exc) if name in str(exc) else f"{name}: {exc}") from None
        except PGNError as exc:
            raise ReportError(f"{name}: {exc}") from None
        if summary.damage:
            raise ReportError(f"{name}: {summary.damage}")
        if summary.games_read == 0:
            raise ReportError(f"{name}: no PGN games found (empty or not PGN)")
        read += summary.games_read
        rejected += summary.games_rejected
        filtered += summary.games_filtered
    return read, rejected, filtered


def _table(con, sql: str, params: list | None = None) -> dict[str, list]:
    """A query's answer as ``{"columns": [...], "rows": [[...], ...]}`` with JSON-ready values."""
    cursor = con.execute(sql, params or [])
    columns = [d[0] for d in cursor.description]
    rows = [[v.isoformat() if isinstance(v, datetime.date) else v for v in row] for row in cursor.fetchall()]
    return {"columns": columns, "rows": rows}


def _progress_bar(total: int, quiet: bool):
    """A step function: a tqdm bar on stderr when it is a terminal and not ``quiet``, else nothing."""
    import sys

    if quiet or not sys.stderr.isatty():
        return (lambda text: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, bar_format="fastpgn report: {percentage:3.0f}%|{bar}| {desc} [{elapsed}]",
               file=sys.stderr, dynamic_ncols=True)
    started = [False]

    def step(text: str) -> None:
        if started[0]:
            bar.update(1)
        started[0] = True
        bar.set_description_str(text)

    def close() -> None:
        bar.update(1)
        bar.close()

    return step, close


def build(dataset, path, *, where=None, memory_limit: str = "2GB", temp_dir: str | None = None,
          jobs: int | None = None, quiet: bool = True, progress: Callable[[str], None] | None = None,
          **filters) -> Report:
    """Write the report of ``dataset`` to the HTML file ``path``; the numbers it shows, as a :class:`Report`.

    ``dataset``: a folder or file of fastpgn's Parquet (the converter's
    ``--format parquet``), a PGN dump (converted on the way), or a list of
    them. The filters are ``fastpgn.filters.Where``'s keywords (or
    ``where=``). ``memory_limit`` and ``temp_dir`` bound DuckDB (it spills
    to ``temp_dir``, by default the system's temporary folder); ``jobs``:
    the converter's workers and DuckDB's threads (default: every core). A progress bar on stderr unless ``quiet``.
    Raises ReportError (one line naming the input) when nothing can be
    read; a filter that keeps no game gives a page that says so.

    >>> import fastpgn.report
    >>> r = fastpgn.report.build("games/", "report.html", speed="blitz")          # doctest: +SKIP
    >>> r.games, r.tables["by_speed"]["rows"]                                     # doctest: +SKIP
    (1183, [['blitz', 1183, 100.0]])
    """
    try:
        import duckdb
    except ImportError:
        raise ImportError('fastpgn report needs duckdb and plotly: pip install "fastpgn[report]"') from None
    from fastpgn.report import page

    if filters:
        if where is not None:
            raise TypeError("give the filters as keywords or as where=, not both")
        where = Where(**filters)
    where = as_where(where)
    names = [os.fspath(dataset)] if isinstance(dataset, (str, os.PathLike)) else [os.fspath(d) for d in dataset]
    if not names:
        raise ReportError("no input named")
    work = tempfile.mkdtemp(prefix="fastpgn-report-", dir=temp_dir)
    config: dict[str, Any] = {"memory_limit": memory_limit, "temp_directory": os.path.join(work, "duckdb")}
    if jobs:
        config["threads"] = int(jobs)
    close: Callable[[], None] = lambda: None  # noqa: E731
    con = None
    try:
        con = duckdb.connect(config=config)     # a bad memory_limit is duckdb's one-line error
        found = _Inputs(names, con)
        steps = len(found.convert) + len(queries.QUERIES) + 2
        step, close = (progress, close) if progress is not None else _progress_bar(steps, quiet)
        counts = None
        converted: list[str] = []
        if found.convert:
            counts = _convert(found.convert, os.path.join(work, "parquet"), where, jobs, step)
            converted = sorted(str(p) for p in Path(work, "parquet").rglob("*.parquet"))
        condition = where_sql(where)
        step("reading the Parquet")
        # The Parquet inputs are filtered here; the converted ones were filtered on the way in.
        parts = []
        given = 0
        if found.parquet:
            given_sql = _read(found.parquet)
            given = _count(con, given_sql)
            parts.append(f"SELECT * FROM {given_sql} WHERE {condition}")
        if converted:
            parts.append(f"SELECT * FROM {_read(converted)}")
        games = 0
        if parts:       # none: every game of the converted inputs was filtered out or rejected
            con.execute("CREATE TEMP VIEW games AS " + " UNION ALL BY NAME ".join(f"({p})" for p in parts))
            games = _count(con, "games")
        converted_games = _count(con, _read(converted)) if converted else 0
        conv_read, conv_rejected, conv_filtered = counts or (0, 0, 0)
        if given + conv_read == 0:
            raise ReportError(f"{', '.join(names)}: no games in the Parquet (an empty dataset)")
        earlier = _earlier_counts(found.done_files) if found.parquet else (0, 0, 0)
        filtered = (given - (games - converted_games)) + conv_filtered
        read: int | None = None
        rejected: int | None = None
        if earlier is not None:
            read, rejected = earlier[0] + conv_read, earlier[1] + conv_rejected
            filtered += earlier[2]
        report = Report(path=os.fspath(path), tables={}, inputs=names,
                        filters=where.as_dict() if where else {}, games=games, games_read=read,
                        games_rejected=rejected, games_filtered=filtered)
        if found.parquet and earlier is None:
            report.notes.append("rejected games unknown: the Parquet was not written by the converter "
                                "(or its record of the run is gone)")
        if games == 0:
            report.notes.append("no game passes the filters" if filtered else "no game could be read: every game "
                                "was rejected (bad PGN)")
        else:
            for name, query in queries.QUERIES.items():
                step(query.title.format(period="day or month"))
                sql = query.sql
                if name == "by_period":
                    span = report.tables["summary"]["rows"][0]
                    days = (_days(span[2]) - _days(span[1])) if span[1] and span[2] else 0
                    period, fmt = ("day", "%Y-%m-%d") if days < DAYS_SHOWN else ("month", "%Y-%m")
                    sql = sql.replace("{period}", period).replace("{fmt}", fmt)
                report.tables[name] = _table(con, sql)
        step("drawing the page")
        page.write(report)
        return report
    finally:
        close()
        if con is not None:
            con.close()
        shutil.rmtree(work, ignore_errors=True)


def _count(con, source: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {source}").fetchone()
    return int(row[0]) if row else 0


def _days(iso: str) -> int:
    return datetime.date.fromisoformat(iso).toordinal()


def _read(paths: list[str]) -> str:
    """DuckDB's reader of these Parquet files (their columns by name; year=/month= folders add none)."""
    listed = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    return f"read_parquet([{listed}], union_by_name = true, hive_partitioning = false)"



__all__ = ["Report", "ReportError", "build"]
