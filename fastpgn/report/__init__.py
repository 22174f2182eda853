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
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastpgn
from fastpgn._duckdb_files import literal, parquet_files, sql_files
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
class Source:
    """One input's games in the report, and what its conversion counted (None where no record says).

    ``state``: ``finished``, ``damaged`` (the conversion ended at damage:
    ``damage`` says where; the Parquet holds the whole games before it),
    ``unfinished`` (interrupted: no totals) or ``no record`` (Parquet
    without the converter's record of its run). ``rows``: the games in its
    Parquet; ``games``: those in the report (the filters passed).
    """

    name: str
    where: str                      # the folder of its Parquet, or "converted on the way"
    files: list[str]
    state: str
    converted: bool = False         # converted on the way, with the report's filters
    read: int | None = None
    written: int | None = None
    rejected: int | None = None
    filtered: int | None = None     # by the conversion's filters
    damage: str | None = None
    rows: int = 0
    games: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "where": self.where, "state": self.state, "games": self.games,
                "games_read": self.read, "games_rejected": self.rejected,
                "games_filtered": self.filtered_out(), "damage": self.damage}

    def filtered_out(self) -> int | None:
        """Left out by the conversion's filters and by the report's (None where the conversion's are unknown)."""
        if self.filtered is None:
            return None
        return self.filtered + (0 if self.converted else self.rows - self.games)


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
    sources: list[Source] = field(default_factory=list)

    @property
    def damaged(self) -> list[Source]:
        """The inputs that are damaged: the page holds their whole games before the damage."""
        return [s for s in self.sources if s.state == "damaged"]

    def as_dict(self) -> dict[str, Any]:
        """The page's data, JSON-ready: what the page embeds in its ``fastpgn-report-data`` script tag."""
        return {"fastpgn": fastpgn.__version__, "inputs": self.inputs, "filters": self.filters,
                "games": self.games, "games_read": self.games_read, "games_rejected": self.games_rejected,
                "games_filtered": self.games_filtered, "notes": self.notes,
                "sources": [s.as_dict() for s in self.sources], "tables": self.tables}


def _is_fastpgn_parquet(path: str, con) -> bool:
    try:
        names = {row[0] for row in con.execute("SELECT name FROM parquet_schema(?)", [literal(path)]).fetchall()}
    except Exception as exc:  # noqa: BLE001 - duckdb's own error classes; the message is one line
        raise ReportError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    return NEEDED_COLUMNS <= names


class _Inputs:
    """The inputs sorted into fastpgn's Parquet (each input given, with its files) and the inputs to convert."""

    def __init__(self, names: list[str], con) -> None:
        self.parquet: list[tuple[str, list[str]]] = []
        self.convert: list[str] = []
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
            files = parquet_files(name)
            if files:
                if _is_fastpgn_parquet(files[0], con):
                    self.parquet.append((name, files))
                else:
                    self.convert.append(name)        # lichess's Parquet release, read as PGN by the converter
                return
            pgn = [p for p in expand_inputs([name]) if not os.path.isdir(p)]
            if not pgn:
                raise ReportError(f"{name}: no Parquet files (nor PGN dumps) in this folder; convert a dump "
                                  "with --format parquet first, or name the dump")
            self.convert.extend(pgn)
        elif name.endswith(".parquet") and _is_fastpgn_parquet(name, con):
            self.parquet.append((name, [name]))
        else:
            self.convert.append(name)


# The converter's chunk names: NAME.part_NNNNNN.parquet, in the output folder or its year=/month= folders.
_CHUNK = re.compile(r"(.+)\.part_\d+\.parquet")


def _output_folder(chunk: str) -> str:
    folder = os.path.dirname(chunk)
    if (os.path.basename(folder).startswith("month=")
            and os.path.basename(os.path.dirname(folder)).startswith("year=")):
        return os.path.dirname(os.path.dirname(folder))
    return folder


def _sources_of(name: str, files: list[str]) -> list[Source]:
    """The Parquet files of one input given, by the conversion that wrote them, with its record's counts."""
    from fastpgn.convert.resume import run_record

    groups: dict[tuple[str, str] | None, list[str]] = {}
    for path in files:
        chunk = _CHUNK.fullmatch(os.path.basename(path))
        groups.setdefault(None if chunk is None else (_output_folder(path), chunk.group(1)), []).append(path)
    sources = []
    for key, mine in groups.items():
        if key is None:
            sources.append(Source(name, os.path.dirname(mine[0]) or ".", mine, "no record"))
            continue
        folder, prefix = key
        record = run_record(Path(folder or "."), prefix)
        if record is None:
            sources.append(Source(prefix, folder or ".", mine, "no record"))
        else:
            sources.append(Source(prefix, folder or ".", mine, record.state, read=record.games_read,
                                  written=record.games_written, rejected=record.games_rejected,
                                  filtered=record.games_filtered, damage=record.damage))
    return sources


def _convert(inputs: list[str], folder: str, where: Where | None, jobs: int | None, step) -> list[Source]:
    """Convert each input to Parquet under ``folder``: a Source for each, with the converter's counts."""
    from fastpgn.convert.converter import Converter, Options, OutputError
    from fastpgn.errors import PGNError

    sources = []
    for i, name in enumerate(inputs):
        step(f"converting {os.path.basename(name)}")
        out = os.path.join(folder, str(i))
        opts = Options(input=name, chunk_size=1_000_000, output_dir=out, format="parquet", jobs=jobs or 0,
                       errors="skip", where=where)
        try:
            summary = Converter(opts).run()
        except (OutputError, InputError) as exc:
            raise ReportError(str(exc) if name in str(exc) else f"{name}: {exc}") from None
        except PGNError as exc:
            raise ReportError(f"{name}: {exc}") from None
        if summary.games_read == 0 and not summary.damage:
            raise ReportError(f"{name}: no PGN games found (empty or not PGN)")
        # (a damaged input keeps its whole games: the page shows them under a banner, as the converter does)
        sources.append(Source(name, "converted on the way", parquet_files(out) if os.path.isdir(out) else [],
                              "damaged" if summary.damage else "finished", converted=True,
                              read=summary.games_read, written=summary.games_written,
                              rejected=summary.games_rejected, filtered=summary.games_filtered,
                              damage=summary.damage))
    return sources


def _count_sources(con, sources: list[Source], condition: str, notes: list[str]) -> None:
    """Each source's rows and games in the report; counts a record gives that its Parquet does not bear out
    are dropped (a chunk removed or added since), with a note."""
    for s in sources:
        if not s.files:
            continue
        s.rows = _count(con, _read(s.files))
        s.games = s.rows if s.converted else _count(con, f"{_read(s.files)} WHERE {condition}")
        if s.written is not None and s.written != s.rows:
            notes.append(f"the record of {s.name} counts {s.written:,} games written where its Parquet holds "
                         f"{s.rows:,}: its read and rejected games are not known")
            s.read = s.rejected = s.filtered = s.written = None
        if s.state == "unfinished":
            notes.append(f"the conversion of {s.name} did not finish (interrupted, or still running): the page "
                         f"holds the {s.rows:,} games of its complete chunks, and its read and rejected games are "
                         "not known (python -m fastpgn ... --resume finishes it)")


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


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
    duckdb = _require()
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
        sources = [s for name, files in found.parquet for s in _sources_of(name, files)]
        converted: list[Source] = []
        if found.convert:
            converted = _convert(found.convert, os.path.join(work, "parquet"), where, jobs, step)
        sources += converted
        condition = where_sql(where)
        step("reading the Parquet")
        notes: list[str] = []
        _count_sources(con, sources, condition, notes)
        if not any(s.rows or s.read or s.damage for s in sources):
            raise ReportError(f"{', '.join(names)}: no games in the Parquet (an empty dataset)")
        # The Parquet inputs are filtered here; the converted ones were filtered on the way in.
        parts = []
        given = [f for s in sources if not s.converted for f in s.files]
        if given:
            parts.append(f"SELECT * FROM {_read(given)} WHERE {condition}")
        made = [f for s in converted for f in s.files]
        if made:
            parts.append(f"SELECT * FROM {_read(made)}")
        games = 0
        if parts:       # none: every game of the converted inputs was filtered out or rejected
            con.execute("CREATE TEMP VIEW games AS " + " UNION ALL BY NAME ".join(f"({p})" for p in parts))
            games = _count(con, "games")
        filtered_out = [s.filtered_out() for s in sources]
        report = Report(path=os.fspath(path), tables={}, inputs=names,
                        filters=where.as_dict() if where else {}, games=games,
                        games_read=_total([s.read for s in sources]),
                        games_rejected=_total([s.rejected for s in sources]),
                        # (the report's own filters are counted even where a conversion's are not known)
                        games_filtered=sum(f if f is not None else s.rows - s.games
                                           for f, s in zip(filtered_out, sources)),
                        notes=notes, sources=sources)
        if any(s.state == "no record" for s in sources):
            report.notes.append("rejected games unknown: the Parquet was not written by the converter "
                                "(or its record of the run is gone)")
        if games == 0:
            report.notes.append("no game passes the filters" if report.games_filtered
                                else "no whole game before the damage" if report.damaged and not report.games_rejected
                                else "no game could be read: every game was rejected (bad PGN)")
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


REPORT_EXTRA = 'pip install "fastpgn[report]"'


def _require():
    """The duckdb module, once plotly and pyarrow are known to import too: else an ImportError naming what is
    missing and the extra that installs it (checked before any input is read or converted)."""
    import importlib

    modules = {}
    missing = []
    for name in ("duckdb", "plotly", "pyarrow"):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ImportError(f"fastpgn report needs {' and '.join(missing)}, which "
                          f"{'is' if len(missing) == 1 else 'are'} not installed: {REPORT_EXTRA}")
    return modules["duckdb"]


def _read(paths: list[str]) -> str:
    """DuckDB's reader of exactly these Parquet files (their columns by name; year=/month= folders add none)."""
    return f"read_parquet({sql_files(paths)}, union_by_name = true, hive_partitioning = false)"


__all__ = ["Report", "ReportError", "Source", "build"]
