"""fastpgn on Spark: the analysis schema as a Spark type, the 22-field chunks as a typed DataFrame, and
dump files converted to a Parquet dataset by Spark tasks that run fastpgn's kernel.

pyspark is imported on first use (``pip install "fastpgn[spark]"``); ``import fastpgn`` never needs it.

- ``schema()``: the ``StructType`` of ``fastpgn.schema`` (docs/schema.md), built from its column list.
- ``read_lines(spark, paths)``: the converter's chunk files (``.cri.gz``, ``.cri.zst``, ``.cri``) as a
  DataFrame of the 22 fields, typed, with Spark SQL functions only: the executors need no fastpgn.
- ``read_pgn(spark, inputs)``: dump files as a DataFrame of ``schema()``, one task per file, the kernel
  inside the tasks through ``mapInArrow`` (the executors need fastpgn).
- ``spark.read.format("fastpgn").load(paths)`` (``register(spark)``; ``session()`` registers it): the same
  rows through Spark's Python Data Source API, each big multi-frame input split into frame-range tasks,
  the filters Spark pushes down run in the kernel (``fastpgn.spark.source``).
- ``convert(spark, inputs, output)``: dump files to a Parquet dataset, one task per file or per frame
  range of a multi-frame zstd file, the tasks writing their own files, each input published with one
  rename when its last task ends; reruns skip complete files.

The dataset's layout, why tasks write their own files rather than through Spark's writer, and what the
executors need: docs/spark.md.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from fastpgn import schema as _schema
from fastpgn.arrow import ColumnReader  # (pyarrow is imported on first use, not here)
from fastpgn.io import output as _output
from fastpgn.io.frame_ranges import RANGE_SIZE

SPARK_EXTRA = 'pip install "fastpgn[spark]"'

#: Rows a Parquet file of the dataset holds at most (about 170 MB of Parquet for lichess games).
ROWS_PER_FILE = 1_000_000
#: Rows a record batch, and so a Parquet row group, holds: the converter's row groups.
BATCH_ROWS = 16_384
#: The file, inside each input's folder, that says the folder is complete (Spark and DuckDB pass over it).
RECORD = "_fastpgn.json"
REJECTED = "_rejected.pgn"
STAGING = "_staging"
#: A range task's status for an input that reads whole only (``UnevenFrames``): never a final report's.
UNSPLIT = "unsplit"
LOCK = ".spark-dataset.fastpgn-lock"


def _require_pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import types
    except ImportError as exc:
        raise ImportError(f"fastpgn.spark needs pyspark, which is not installed: {SPARK_EXTRA}") from exc
    return types


# ---------------------------------------------------------------- the schema

def spark_type(spec: str):
    """The Spark type of a ``fastpgn.schema.Column`` type text (``int16`` -> ShortType, ...).

    >>> spark_type("list<int16>")
    ArrayType(ShortType(), True)
    """
    T = _require_pyspark()
    if spec.startswith("list<"):
        return T.ArrayType(spark_type(spec[5:-1]), containsNull=True)
    if spec.startswith("struct<"):
        from fastpgn.schema import struct_fields

        return T.StructType([T.StructField(name, spark_type(kind), True) for name, kind in struct_fields(spec)])
    # Spark has one timestamp type: microseconds, an instant shown in the session's time zone.
    return {"string": T.StringType(), "date32": T.DateType(), "bool": T.BooleanType(), "int8": T.ByteType(),
            "int16": T.ShortType(), "int32": T.IntegerType(), "int64": T.LongType(), "float32": T.FloatType(),
            "timestamp[s, tz=UTC]": T.TimestampType()}[spec]


def schema(uci: bool = False, positions: bool = False, fens: bool = False):
    """The analysis schema (``fastpgn.schema``) as a Spark ``StructType``: the same names, in order.

    Every field is nullable, as Spark reads the Parquet files. int8 and int16
    are ByteType and ShortType; ``utc`` is a TimestampType (whole seconds;
    Spark shows it in ``spark.sql.session.timeZone``). ``zobrist`` (with
    ``positions``) is an array of LongType: each ply's Polyglot key as the
    signed 64-bit number with the same bits.

    >>> schema()["white_elo"].dataType, schema()["utc"].dataType
    (ShortType(), TimestampType())
    """
    T = _require_pyspark()
    return T.StructType([T.StructField(c.name, spark_type(c.type), True)
                         for c in _schema.columns(uci, positions, fens)])


def _task_arrow_schema(uci: bool, positions: bool = False, fens: bool = False):
    """The Arrow schema Spark expects back from a task for ``schema(uci)``: timestamps in microseconds."""
    import pyarrow as pa

    fields = []
    for field in _schema.arrow_schema(uci, positions, fens):
        if pa.types.is_timestamp(field.type):
            field = field.with_type(pa.timestamp("us", tz="UTC"))
        fields.append(field)
    return pa.schema(fields)


# ---------------------------------------------------------------- the 22-field lines

#: The typed line: (name of ``fastpgn.oneliner.Line``'s field, its Spark SQL type).
LINE_TYPES = (
    ("id", "string"), ("date", "date"), ("time", "int"), ("result", "string"), ("termination", "string"),
    ("mate", "boolean"), ("has_eval", "boolean"), ("has_clock", "boolean"), ("plies", "int"),
    ("opening", "string"), ("time_control", "string"), ("white", "string"), ("white_elo", "smallint"),
    ("white_elo_diff", "smallint"), ("white_title", "string"), ("black", "string"), ("black_elo", "smallint"),
    ("black_elo_diff", "smallint"), ("black_title", "string"), ("moves", "array<string>"),
    ("evals", "array<string>"), ("clocks", "array<float>"),
)
_CHUNK_SUFFIXES = (".cri", ".cri.gz", ".cri.zst")


def _line_field(name: str, kind: str, f: str) -> str:
    """The SQL expression that types one field ``f`` (a string column) of the line."""
    if kind == "string":
        return f"nullif({f}, '')"
    if kind == "date":
        return f"CASE WHEN {f} RLIKE '^[0-9]{{8}}$' THEN CAST(try_to_timestamp({f}, 'yyyyMMdd') AS DATE) END"
    if kind == "int":
        return f"CASE WHEN {f} RLIKE '^[0-9]{{1,9}}$' THEN CAST({f} AS INT) END"
    if kind == "boolean":
        return f"{f} = 'Y'"
    if kind == "smallint":     # fastpgn.schema.int16: an optionally signed integer within int16, else null
        return f"CASE WHEN {f} RLIKE '^[+-]?[0-9]{{1,10}}$' THEN try_cast({f} AS SMALLINT) END"
    if name == "moves":
        return f"CASE WHEN {f} = '' THEN CAST(array() AS ARRAY<STRING>) ELSE split({f}, ' ') END"
    if name == "evals":
        return f"CASE WHEN {f} != '' THEN split({f}, ' ') END"
    if name == "clocks":
        return f"CASE WHEN {f} != '' THEN transform(split({f}, ' '), c -> try_cast(c AS FLOAT)) END"
    raise ValueError(name)


def _chunk_paths(paths) -> list[str]:
    """Files as given; a local folder as the converter's chunk files in it (not its rejects or records).

    A local folder is listed here, file by file, rather than handed to Spark
    as a glob: Spark looks for a streaming sink's metadata under a single path
    it is given, and on a glob that look logs a Java FileNotFoundException of
    some 90 lines, though the read goes on well.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[str] = []
    for path in paths:
        text = os.fspath(path)
        if "://" in text or not os.path.isdir(text):
            found.append(text)
            continue
        chunks = sorted(os.path.join(text, name) for name in os.listdir(text)
                        if name.endswith(_CHUNK_SUFFIXES) and not name.startswith((".", "_")))
        if not chunks:
            raise ValueError(f"{text}: no chunk files in this folder (names ending "
                             f"{', '.join(_CHUNK_SUFFIXES)})")
        found.extend(chunks)
    if not found:
        raise ValueError("read_lines needs at least one path")
    return found


def read_lines(spark, paths):
    """The converter's 22-field chunk files as a typed DataFrame, with Spark SQL functions only.

    ``paths``: a chunk file (``.cri.gz``, ``.cri.zst``, ``.cri``: Spark picks the
    codec by the name's end), a folder (its chunk files, leaving out the
    rejected games and the records beside them), a glob, or a list of these.
    The columns are ``fastpgn.oneliner.Line``'s fields, in order, typed as
    ``LINE_TYPES`` says (docs/spark.md): empty text is null, ``Y``/``N`` are
    booleans, numbers that are not numbers are null, fields 20-22 are arrays
    (``evals`` keeps the raw text, ``#-3`` and the ``#`` after a mating move).
    Then ``utc``: the date and the second of the day as a timestamp. A line
    without 22 fields fails the query, naming the line, as ``parse_line`` does.
    The executors need no fastpgn.

    >>> games = read_lines(spark, "out/")                                              # doctest: +SKIP
    >>> games.groupBy("white_title").agg(F.avg("white_elo")).show()                    # doctest: +SKIP
    """
    _require_pyspark()
    from pyspark.sql import functions as F

    text = spark.read.option("lineSep", "\n").text(_chunk_paths(paths))
    parts = text.select(F.split(F.col("value"), "\u2502", -1).alias("p"), F.col("value"))
    check = ("CASE WHEN size(p) != 22 THEN raise_error(concat('not a 22-field line (', size(p), "
             "' fields): ', substr(value, 1, 80))) END")
    columns = []
    for i, (name, kind) in enumerate(LINE_TYPES):
        expr = _line_field(name, kind, f"get(p, {i})")   # get: null past the end (the check below fails such a line)
        if i == 0:
            expr = f"coalesce({check}, {expr})"
        columns.append(F.expr(expr).cast(kind).alias(name))
    typed = parts.select(*columns)
    seconds = "CAST(unix_date(date) AS BIGINT) * 86400 + time"
    return typed.withColumn("utc", F.expr(f"timestamp_seconds({seconds})"))


# ---------------------------------------------------------------- dump files in Spark tasks

class _Input(NamedTuple):
    key: str        # the input's name in the dataset: its file name
    path: str       # absolute, as the executors open it
    size: int


#: Each input's result, one row a file (the report ``convert`` returns).
REPORT_FIELDS = (
    ("input", "string"), ("path", "string"), ("status", "string"), ("games_read", "bigint"),
    ("games_written", "bigint"), ("games_rejected", "bigint"), ("games_filtered", "bigint"),
    ("pgn_bytes", "bigint"), ("seconds", "double"), ("files", "int"), ("message", "string"),
    ("damage_offset", "bigint"), ("backend", "string"), ("peak_rss_mb", "double"), ("tasks", "int"),
)


class FileReport(NamedTuple):
    """One input's result: ``status`` is ``converted``, ``damaged`` (the games before the damage are in the
    dataset; ``message`` names the damage and ``damage_offset`` its PGN byte), ``skipped`` (complete from an
    earlier run) or ``failed`` (unusable: missing, not PGN, unwritable; nothing was published). An input
    converted in several tasks (``tasks``, its frame ranges) has their counts summed and ``seconds`` their
    tasks' seconds added up; ``peak_rss_mb`` is the highest of them."""

    input: str
    path: str
    status: str
    games_read: int
    games_written: int
    games_rejected: int
    games_filtered: int
    pgn_bytes: int
    seconds: float
    files: int
    message: str | None
    damage_offset: int | None
    backend: str | None
    peak_rss_mb: float | None = None    # the task's Python worker, its peak so far (workers are reused)
    tasks: int = 1      # the Spark tasks the input was converted in: its frame ranges (``seconds``: their sum)


def partition_value(text: str) -> str:
    """``text`` escaped for a ``name=value`` folder as Spark escapes partition values (``%XX``).

    >>> partition_value("lichess_db_standard_rated_2024-01.pgn.zst"), partition_value("a=b c")
    ('lichess_db_standard_rated_2024-01.pgn.zst', 'a%3Db c')
    """
    special = set('"#%\'*/:=?\\\x7f{[]^')
    return "".join(f"%{ord(c):02X}" if c in special or ord(c) < 0x20 else c for c in text)


def _inputs(inputs) -> list[_Input]:
    """The input files (a folder: its files, names starting ``.`` or ``_`` left out), biggest first."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    files: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.is_file() and p.name[0] not in "._")
        elif path.is_file():
            files.append(path)
        else:
            from fastpgn.errors import InputError

            raise InputError(f"{item}: no such file")
    found: dict[str, _Input] = {}
    for path in files:
        key = path.name
        absolute = os.path.abspath(path)     # a link keeps its own name (the key), not its target's
        if key in found and found[key].path != absolute:
            raise ValueError(f"two inputs have the name {key} ({found[key].path} and {absolute}): the dataset "
                             f"keeps each input under its file name, so give them different names")
        found[key] = _Input(key, absolute, path.stat().st_size)
    # Longest first: the biggest files start first, so no core waits on one big file at the end.
    return sorted(found.values(), key=lambda i: (-i.size, i.key))


def _options_record(where, uci: bool, openings, positions: bool = False, fens: bool = False,
                    encoding: str | None = None, writer: str = "fastpgn") -> dict:
    # (positions, fens, encoding and writer only when asked: the record of a dataset written before them still
    # matches; the encoding as the codec it names: "Windows-1252" is "cp1252", "UTF-8" none)
    from fastpgn.io.sources import _codec_name

    encoding = _codec_name(encoding)
    return {"uci": bool(uci), "where": None if where is None else repr(where),
            "openings": None if openings is None else os.fspath(openings),
            **({"positions": True} if positions else {}), **({"fens": True} if fens else {}),
            **({"encoding": encoding} if encoding else {}),
            **({"writer": writer} if writer != "fastpgn" else {})}


def _read_record(folder: Path) -> dict | None:
    try:
        text = _output.read_own(folder / RECORD)    # (a link at the name is no record: OutputError is a ValueError)
        return None if text is None else json.loads(text.decode("utf-8"))
    except (OSError, ValueError):
        return None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _TaskReader(ColumnReader):
    """The column dicts of each block, for a task: damage recorded, not raised, so the games before it
    are still written. Each block's batch goes to the writer as it is: ``_Partitions`` gathers a row
    group from several, where ``read_arrow`` would first copy them into batches of one size."""

    damage = None

    def _damage(self, block) -> None:
        if block.damage is not None:
            self.damage = block.damage


class _Partition:
    """One month's files: the open writer, rows in its file, files so far, batches waiting for a row group."""

    def __init__(self) -> None:
        self.writer: Any = None     # a list_chunks.ParquetFileWriter while a file is open
        self.path = Path()
        self.rows = 0
        self.files = 0
        self.pending: list = []
        self.pending_rows = 0


class _Partitions:
    """Parquet files under ``root/year=YYYY/month=MM/``, in input order: row groups of BATCH_ROWS games
    (a month's games gathered across batches, so a batch that spans months makes no small row groups),
    files of ``rows_per_file`` games at most."""

    def __init__(self, root: Path, arrow_schema, rows_per_file: int, writer: str = "fastpgn",
                 prefix: str = "part-") -> None:
        self.root = root
        self.prefix = prefix        # the files' names: PREFIX00000.parquet, ...
        self.schema = arrow_schema
        self.writer = writer        # who writes the per-ply lists' pages (fastpgn.parquet.list_chunks.WRITERS)
        self.rows_per_file = rows_per_file
        self._parts: dict = {}      # month folder (fastpgn.schema.by_month's) -> _Partition
        self.files: list[Path] = []

    def write(self, folder: str, batch) -> None:
        part = self._parts.get(folder)
        if part is None:
            part = self._parts[folder] = _Partition()
        part.pending.append(batch)
        part.pending_rows += batch.num_rows
        while part.pending_rows >= BATCH_ROWS:
            self._flush(folder, part, BATCH_ROWS)

    def _flush(self, folder: str, part: _Partition, size: int) -> None:
        """Write the first ``size`` pending rows: one row group, or two where a file ends among them."""
        import pyarrow as pa

        from fastpgn.parquet.list_chunks import ParquetFileWriter
        from fastpgn.parquet.settings import parquet_writer

        table = pa.Table.from_batches(part.pending, schema=self.schema)
        while size:
            if part.writer is None or part.rows >= self.rows_per_file:
                self._close(part)
                part.path = _output.folders(self.root, folder) / f"{self.prefix}{part.files:05d}.parquet"
                # as the converter writes
                part.writer = ParquetFileWriter(part.path, self.schema, parquet_writer, self.writer)
                part.files += 1
                part.rows = 0
                self.files.append(part.path)
            take = min(size, self.rows_per_file - part.rows)
            part.writer.write_table(table.slice(0, take), row_group_size=take)
            table = table.slice(take)
            part.rows += take
            size -= take
        part.pending = table.to_batches()
        part.pending_rows = table.num_rows

    @staticmethod
    def _close(part: _Partition) -> None:
        if part.writer is not None:
            part.writer.close()
            _fsync(part.path)
            part.writer = None

    def close(self, flush: bool = True) -> None:
        """Write what is pending (unless ``flush`` is False: the task failed) and close every file."""
        for folder, part in self._parts.items():
            if flush and part.pending_rows:
                self._flush(folder, part, part.pending_rows)
            self._close(part)


class _Task(NamedTuple):
    """One Spark task of ``convert``: frames ``[first, stop)`` of an input (``parts`` 1: the whole input), its
    range number ``part`` of ``parts``, written under ``_staging/STAGING`` (the input's, for this run)."""

    job: _Input
    part: int
    parts: int
    first: int
    stop: int | None
    staging: str


def _tasks(jobs: list[_Input], range_size: int | None, encoding: str | None) -> list[_Task]:
    """The tasks of ``jobs`` (biggest first): each multi-frame zstd input cut into frame ranges of about
    ``range_size`` bytes of PGN (``fastpgn.io.frame_ranges``), any other input one task."""
    from fastpgn.io.frame_ranges import FrameRange, frame_ranges

    tasks = []
    for job in jobs:
        # (transcoded text is read whole: its offsets depend on all the text before them)
        ranges = (frame_ranges(job.path, range_size) if range_size and encoding is None
                  else [FrameRange(job.path)])
        staging = f"{partition_value(job.key)}.{uuid.uuid4().hex}"
        tasks += [_Task(job, i, len(ranges), r.first, r.stop, staging) for i, r in enumerate(ranges)]
    return tasks


def _write_games(source, folder: Path, options: dict, writer: str, rows_per_file: int, prefix: str) -> dict:
    """``source`` (a path or a FrameRange) read by the kernel into Parquet files and ``_rejected.pgn`` under
    ``folder``: its counts, files, damage, and where each rejected game's ``%`` line starts (``rejects``)."""
    from fastpgn.convert.rejects import RejectsFile
    from fastpgn.io.sources import BLOCK_SIZE
    from fastpgn.parquet.batches import record_batch

    # The converter's blocks (4 MiB), not the readers' 1 MiB: fewer, larger batches.
    # One thread a task: Spark runs a task on each of its cores.
    reader = _TaskReader(source, errors="skip", block_size=BLOCK_SIZE, jobs=1, **options)
    parts = _Partitions(folder, _schema.arrow_schema(reader.uci, reader.positions, reader.fens), rows_per_file,
                        writer, prefix)
    rejects = RejectsFile(folder / REJECTED)
    marks: list[list[int]] = []     # [byte of the rejects file where a game's % line starts, its number]

    def keep(games) -> None:
        for game in games:
            marks.append([rejects.size(), game.number])
            rejects.add(game)
        del games[:]        # written: memory stays bounded

    flush = False
    try:
        with reader:
            for columns in reader:
                batch = record_batch(columns, reader.uci, reader.positions, reader.fens)
                for month, rows in _schema.by_month(batch):
                    parts.write(month, rows)
                keep(reader.rejected)
            keep(reader.rejected)
        flush = True
    finally:
        parts.close(flush)
        rejects.close()
    got = reader._source
    return {"games_read": reader.games_read, "games_written": reader.games_yielded, "games_rejected": len(marks),
            "games_filtered": reader.games_filtered, "pgn_bytes": 0 if got is None else got.offset,
            "files": [str(p.relative_to(folder)) for p in parts.files], "damage": reader.damage, "rejects": marks}


_COUNTS = ("games_read", "games_written", "games_rejected", "games_filtered")


def _convert_one(task: _Task, output: str, options: dict, record_options: dict, rows_per_file: int) -> dict | None:
    """One task: a whole input converted into its staging folder, then published with one rename; or one of
    its frame ranges, the last range to finish publishing the input (``_finish``). The input's report, or
    None from a range task that left the publishing to another."""
    import fastpgn
    from fastpgn.errors import InputError, OutputError, PGNError
    from fastpgn.io.frame_ranges import FrameRange, UnevenFrames

    job = task.job
    start = time.perf_counter()
    out = Path(output)
    final = out / f"input={partition_value(job.key)}"
    staging = out / STAGING / task.staging
    split = task.parts > 1
    folder = staging / f"_r{task.part:05d}.{uuid.uuid4().hex}" if split else staging
    report = {"input": job.key, "path": job.path, "status": "converted", "games_read": 0, "games_written": 0,
              "games_rejected": 0, "games_filtered": 0, "pgn_bytes": 0, "seconds": 0.0, "files": 0,
              "message": None, "damage_offset": None, "backend": fastpgn.BACKEND, "peak_rss_mb": None,
              "tasks": task.parts}
    writer = record_options.get("writer", "fastpgn")
    try:
        # (the staging folder checked to be no link, as the driver checked it; this input's own one is new)
        _output.folders(out, STAGING)
        if split:
            _output.folders(out / STAGING, task.staging)    # (its ranges' tasks make it together)
        folder.mkdir()
        source = FrameRange(job.path, task.first, task.stop) if split else job.path
        done = _write_games(source, folder, options, writer, rows_per_file,
                            f"part-{task.part:05d}-" if split else "part-")
        report.update({k: done[k] for k in (*_COUNTS, "pgn_bytes")}, files=len(done["files"]))
        if isinstance(done["damage"], UnevenFrames):
            report.update(status=UNSPLIT, message=f"{job.path}: {done['damage']}")     # (converted again whole)
        elif done["damage"] is not None:
            report.update(status="damaged", message=f"{job.path}: {done['damage']}",
                          damage_offset=done["damage"].offset)
    except (InputError, OutputError, OSError) as exc:
        # Unusable (missing, not PGN, unreadable from the start) or unwritable: nothing is published.
        text = str(exc) if isinstance(exc, PGNError) else f"cannot write {output}: {exc.strerror or exc}"
        report.update(status=UNSPLIT if isinstance(exc, UnevenFrames) else "failed",
                      message=text if job.path in text else f"{job.path}: {text}")
        done = None
        if not split:
            shutil.rmtree(staging, ignore_errors=True)
            report["seconds"] = time.perf_counter() - start
            return report
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    report["seconds"] = time.perf_counter() - start
    report["peak_rss_mb"] = _peak_rss_mb()
    try:
        if not split:
            assert done is not None
            _write_record(staging, job, record_options, report, done["files"])
            _publish(staging, final)
            return report
        return _range_done(task, folder, report, done, final, record_options)
    except (OutputError, OSError) as exc:
        shutil.rmtree(staging if not split else folder, ignore_errors=True)
        report.update(status="failed", message=f"{job.path}: cannot write {output}: {exc}")
        return report


def _write_record(staging: Path, job: _Input, record_options: dict, report: dict, files: list[str],
                  ranges: list | None = None) -> None:
    """An input's ``_fastpgn.json`` in its staging folder (``ranges``: its frame ranges' summaries), synced."""
    import fastpgn

    record = {"input": job.path, "size": job.size, "options": record_options,
              "fastpgn": fastpgn.__version__, "host": socket.gethostname(), "files": files,
              **{k: report[k] for k in ("status", *_COUNTS, "pgn_bytes", "message", "damage_offset",
                                        "backend", "seconds", "peak_rss_mb", "tasks")},
              **({"ranges": ranges} if ranges is not None else {})}
    with _output.create(staging / RECORD) as f:
        f.write((json.dumps(record, indent=1) + "\n").encode("utf-8"))
    _fsync(staging / RECORD)


def _range_done(task: _Task, folder: Path, report: dict, done: dict | None, final: Path,
                record_options: dict) -> dict | None:
    """A range's task, its files written: its record last, its folder renamed to ``_rNNNNN`` (a retried
    task's twin that got there first wins), then the input published if every range is done and this task
    is the one that claims it (``_claim``, made exclusively: one task publishes)."""
    staging = folder.parent
    summary = {"first": task.first, "stop": task.stop, **{k: report[k] for k in (
        "status", *_COUNTS, "pgn_bytes", "message", "damage_offset", "seconds", "peak_rss_mb", "backend")},
        "files": [] if done is None else done["files"], "rejects": [] if done is None else done["rejects"]}
    with _output.create(folder / "_range.json") as f:
        f.write(json.dumps(summary).encode("utf-8"))
    _fsync(folder / "_range.json")
    try:
        os.rename(folder, staging / f"_r{task.part:05d}")
    except OSError:     # (another attempt of this range finished first: its files stand)
        shutil.rmtree(folder, ignore_errors=True)
    ranges = [staging / f"_r{i:05d}" / "_range.json" for i in range(task.parts)]
    if not all(p.exists() for p in ranges):
        return None     # (the range that finishes last publishes)
    try:
        os.close(os.open(staging / "_claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return None
    return _publish_ranges(task, [json.loads(p.read_text("utf-8")) for p in ranges], final, record_options)


def _publish_ranges(task: _Task, ranges: list[dict], final: Path, record_options: dict) -> dict:
    """An input's ranges made one input's folder: the ranges up to the first damaged one (a serial read
    stops there; the games after it are not the input's), their files moved into place, their rejected
    games joined in order and numbered in the whole input, the counts summed; then the one rename."""
    job = task.job
    staging = final.parent / STAGING / task.staging
    last = next((i for i, r in enumerate(ranges) if r["status"] != "converted"), len(ranges) - 1)
    kept = ranges[:last + 1]
    report = {"input": job.key, "path": job.path, "status": kept[-1]["status"],
              **{k: sum(r[k] for r in kept) for k in _COUNTS}, "pgn_bytes": kept[-1]["pgn_bytes"],
              "seconds": sum(r["seconds"] for r in ranges), "files": 0, "message": kept[-1]["message"],
              "damage_offset": kept[-1]["damage_offset"], "backend": kept[-1]["backend"],
              "peak_rss_mb": max((r["peak_rss_mb"] for r in ranges if r["peak_rss_mb"] is not None), default=None),
              "tasks": task.parts}
    if report["status"] in ("failed", UNSPLIT):
        shutil.rmtree(staging, ignore_errors=True)
        return report
    files = []
    base = 0        # games read before the range: the rejected games' numbers count from the input's first
    joined = None
    for i, r in enumerate(kept):
        folder = staging / f"_r{i:05d}"
        for name in r["files"]:
            relative = Path(name)
            os.rename(folder / relative, _output.folders(staging, str(relative.parent)) / relative.name)
            files.append(name)
        if r["rejects"]:
            if joined is None:
                joined = _output.create(staging / REJECTED)
            _renumbered(folder / REJECTED, r["rejects"], base, joined)
        base += r["games_read"]
    if joined is not None:
        joined.close()
        _fsync(staging / REJECTED)
    for i in range(task.parts):
        shutil.rmtree(staging / f"_r{i:05d}", ignore_errors=True)
    os.unlink(staging / "_claim")
    report["files"] = len(files)
    summaries = [{k: r[k] for k in ("first", "stop", "status", *_COUNTS, "pgn_bytes", "seconds")} for r in ranges]
    _write_record(staging, job, record_options, report, files, summaries)
    _publish(staging, final)
    return report


def _renumbered(path: Path, marks: list, base: int, out) -> None:
    """A range's rejects file copied to ``out``, each game's number (counted from the range's first game) made
    the input's (``base`` more); ``marks``: where each ``%`` line starts, and the number it holds."""
    from fastpgn.convert.rejects import mark
    from fastpgn.errors import OutputError

    with open(path, "rb") as f:
        ends = [m[0] for m in marks[1:]] + [os.fstat(f.fileno()).st_size]
        for (at, number), end in zip(marks, ends):
            f.seek(at)
            game = f.read(end - at)     # (one game at a time: memory stays bounded)
            old = mark(number)
            if not game.startswith(old):
                raise OutputError(f"{path}: a range's rejected games changed while the run went on")
            out.write(mark(number + base) + game[len(old):])


def _peak_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:     # pragma: no cover - not POSIX
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024    # KiB on Linux


def _publish(staging: Path, final: Path) -> None:
    """Move ``staging`` to ``final`` with one rename; an older ``final`` (damaged, or of a changed input) goes."""
    old = None
    if final.exists():
        old = staging.with_name(staging.name + ".old")
        os.rename(final, old)
    os.rename(staging, final)
    dir_fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _task(tasks: list[_Task], output: str, options: dict, record_options: dict, rows_per_file: int):
    """The function ``mapInArrow`` runs: partition ``i`` (one row, the id ``i``) runs ``tasks[i]``, and gives
    the report of the input it published (none from a range that left the publishing to another)."""
    def run(batches):
        import pyarrow as pa

        for batch in batches:
            for i in batch.column(0).to_pylist():
                report = _convert_one(tasks[i], output, options, record_options, rows_per_file)
                if report is not None:
                    yield pa.RecordBatch.from_pylist([report], schema=_report_arrow_schema())
    return run


def _report_arrow_schema():
    import pyarrow as pa

    kinds = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(), "double": pa.float64()}
    return pa.schema([pa.field(name, kinds[kind]) for name, kind in REPORT_FIELDS])


def _reader_options(where, uci: bool, openings, positions: bool = False, fens: bool = False,
                    encoding: str | None = None) -> dict:
    from fastpgn.io.sources import _codec_name

    _codec_name(encoding)   # an unknown encoding: the caller's error, on the driver, before any task
    return {"where": where, "uci": bool(uci), "openings": None if openings is None else os.fspath(openings),
            "positions": bool(positions), "fens": bool(fens), "encoding": encoding}


def _one_task_each(spark, count: int):
    """A DataFrame of the ids 0..count-1, one a partition: one Spark task per input."""
    return spark.range(0, count, 1, count)


def _explain_task_failure(exc: Exception) -> Exception:
    if "No module named 'fastpgn'" in str(exc):
        return RuntimeError("fastpgn is not installed on the Spark executors (their Python cannot import it); "
                            "install it there or ship it (docs/spark.md, 'What the executors need')")
    return exc


def read_pgn(spark, inputs, *, where=None, uci: bool = False, openings=None, positions: bool = False,
             fens: bool = False, encoding: str | None = None):
    """Dump files as a DataFrame of ``schema(uci, positions, fens)``, one Spark task per file, fastpgn's kernel in
    the tasks.

    ``inputs``: paths (a folder: its files) the executors can open. Bad games
    are left out; damage (a truncated or corrupt file) fails the query, naming
    the file and its PGN byte. ``encoding`` names the files' text encoding
    (``"cp1252"``; default UTF-8: docs/encoding.md). The executors need
    fastpgn; ``convert`` writes the same rows to a Parquet dataset instead.

    >>> read_pgn(spark, ["2024-01.pgn.zst", "2024-02.pgn.zst"]).groupBy("speed").count().show()   # doctest: +SKIP
    """
    _require_pyspark()
    jobs = _inputs(inputs)
    options = _reader_options(where, uci, openings, positions, fens, encoding)
    target = _task_arrow_schema(uci, positions, fens)

    def run(batches):
        from fastpgn.arrow import read_arrow

        for batch in batches:
            for i in batch.column(0).to_pylist():
                # (one thread a task: Spark runs a task on each of its cores)
                with read_arrow(jobs[i].path, batch_size=BATCH_ROWS, errors="skip", jobs=1, **options) as reader:
                    for games in reader:
                        yield games.cast(target)
    return _one_task_each(spark, len(jobs)).mapInArrow(run, schema(uci, positions, fens))


def convert(spark, inputs, output, *, where=None, uci: bool = False, openings=None, overwrite: bool = False,
            rows_per_file: int = ROWS_PER_FILE, positions: bool = False, fens: bool = False,
            encoding: str | None = None, writer: str = "fastpgn",
            range_size: int | None = RANGE_SIZE) -> list[FileReport]:
    """Convert dump files to a Parquet dataset of ``schema(uci, positions, fens)``: one Spark task per file,
    or per frame range of a zstd file of many frames.

    ``inputs``: paths (a folder: its files) that the driver and the executors
    can open; ``output``: a folder on a file system they share. Each input's
    games land in ``output/input=NAME/year=YYYY/month=MM/part-NNNNN.parquet``
    (month of play, ``fastpgn.schema.by_month``'s; no date: ``year=0/month=00``), written in a
    staging folder and published with one rename, so an input's output is
    there whole or not at all; ``input=NAME/_fastpgn.json`` records its counts
    and ``_rejected.pgn`` its bad games. A rerun skips the inputs already
    complete (``overwrite=True`` converts them again; one converted with other
    options, ``encoding`` among them, is refused without it); a damaged input keeps the
    games before the damage, is reported with its byte offset, and is
    converted again by a rerun. ``encoding`` names the inputs' text encoding
    (default UTF-8: docs/encoding.md). ``writer="pyarrow"`` has pyarrow write every column of the
    files, the per-ply lists too (the converter's ``--parquet-writer pyarrow``; the same table read back).
    A zstd input of many frames (lichess's dumps, pzstd's frames) is converted in tasks of about
    ``range_size`` bytes of PGN each (``fastpgn.io.frame_ranges``; 0 or None: one task per input; an
    input read with ``encoding`` is one task); the last of its tasks to finish publishes it, and its rows,
    counts and rejected games are those one task would give (its files are named ``part-RRRRR-NNNNN``,
    range ``RRRRR``'s ``NNNNN``-th). Returns one ``FileReport`` per input.

    >>> reports = convert(spark, ["2024-01.pgn.zst", "2024-02.pgn.zst"], "games/")  # doctest: +SKIP
    >>> spark.read.parquet("games/").where("year = 2024").count()                   # doctest: +SKIP
    """
    _require_pyspark()
    from fastpgn.convert.converter import _RunLock

    if not isinstance(rows_per_file, int) or rows_per_file < 1:
        raise ValueError(f"rows_per_file must be a whole number, at least 1, not {rows_per_file!r}")
    if range_size is not None and (not isinstance(range_size, int) or range_size < 0):
        raise ValueError(f"range_size must be a number of bytes (0 or None: one task per input), not "
                         f"{range_size!r}")
    from fastpgn.parquet.list_chunks import check_writer

    check_writer(writer)
    jobs = _inputs(inputs)
    options = _reader_options(where, uci, openings, positions, fens, encoding)
    out = Path(output)
    _check_dataset_folder(out)
    record_options = _options_record(where, uci, openings, positions, fens, encoding, writer)
    lock = _RunLock(out / LOCK)
    lock.acquire()
    try:
        # A killed run's staging folders (only this run writes here now: the lock says so).
        shutil.rmtree(out / STAGING, ignore_errors=True)
        reports: dict[str, FileReport] = {}
        todo = []
        for job in jobs:
            done = _complete(out, job, record_options, overwrite)
            if done is not None:
                reports[job.key] = done
            else:
                todo.append(job)
        if todo:
            reports.update(_run_tasks(spark, _tasks(todo, range_size, encoding), out, options, record_options,
                                      rows_per_file))
            # An input behind pzstd's headers whose frames another writer cut unevenly reads whole only: it
            # is converted again in one task (its ranges published nothing).
            whole = [job for job in todo if job.key in reports and reports[job.key].status == UNSPLIT]
            if whole:
                reports.update(_run_tasks(spark, _tasks(whole, 0, encoding), out, options, record_options,
                                          rows_per_file))
            for job in todo:    # (a range's task retried after it claimed the publishing: none published it)
                if job.key not in reports:
                    reports[job.key] = FileReport(job.key, job.path, "failed", 0, 0, 0, 0, 0, 0.0, 0,
                                                  f"{job.path}: its tasks ended without publishing it: run again",
                                                  None, None)
        shutil.rmtree(out / STAGING, ignore_errors=True)
    finally:
        lock.release()
    return [reports[job.key] for job in sorted(jobs, key=lambda j: j.key)]


def _run_tasks(spark, tasks: list[_Task], out: Path, options: dict, record_options: dict,
               rows_per_file: int) -> dict[str, FileReport]:
    """``tasks`` run on Spark, one task each: the reports of the inputs their tasks published."""
    report_type = ", ".join(f"{n} {k}" for n, k in REPORT_FIELDS)    # DDL: every pyspark takes it
    frame = _one_task_each(spark, len(tasks)).mapInArrow(
        _task(tasks, str(out.resolve()), options, record_options, rows_per_file), report_type)
    try:
        rows = frame.collect()
    except Exception as exc:
        raise _explain_task_failure(exc) from exc
    return {row["input"]: FileReport(**row.asDict()) for row in rows}


def _check_dataset_folder(out: Path) -> None:
    """Make ``out``; refuse one that holds anything but a dataset's folders (a plain converter's chunks), or
    a link at a name ``convert`` writes (the lock, the staging folder, an input's folder)."""
    out.mkdir(parents=True, exist_ok=True)
    _output.refuse_links([out / LOCK, out / STAGING] + sorted(p for p in out.iterdir()
                                                             if p.name.startswith("input=")))
    strangers = sorted(p.name for p in out.iterdir() if p.name[0] not in "._" and not
                       (p.is_dir() and p.name.startswith("input=")))
    if strangers:
        shown = ", ".join(strangers[:3]) + (", ..." if len(strangers) > 3 else "")
        raise ValueError(f"{out} holds files that are not part of a dataset convert() writes ({shown}): "
                         f"give an empty folder or one convert() wrote")


def _complete(out: Path, job: _Input, record_options: dict, overwrite: bool) -> FileReport | None:
    """The report of an input already complete in ``out`` (to skip), or None (to convert)."""
    record = _read_record(out / f"input={partition_value(job.key)}")
    if record is None or overwrite or record.get("status") != "converted" or record.get("size") != job.size:
        return None     # absent, asked again, damaged last time, or the file changed since
    options = record.get("options")
    if options != record_options:
        raise ValueError(f"{job.key} was converted into {out} with other options ({options}); give "
                         f"overwrite=True to convert it again, or another output folder")
    return FileReport(job.key, job.path, "skipped", record["games_read"], record["games_written"],
                      record["games_rejected"], record["games_filtered"], record["pgn_bytes"], 0.0,
                      len(record.get("files", ())), None, None, record.get("backend"), record.get("peak_rss_mb"),
                      record.get("tasks", 1))


def read_dataset(spark, output, uci: bool = False, positions: bool = False, fens: bool = False):
    """The dataset ``convert`` wrote, with its partition columns typed: ``input`` string, ``year``, ``month`` int.

    >>> read_dataset(spark, "games/").where("year = 2024 AND month = 1").count()      # doctest: +SKIP
    """
    T = _require_pyspark()
    full = T.StructType(schema(uci, positions, fens).fields + [T.StructField("input", T.StringType()),
                                              T.StructField("year", T.IntegerType()),
                                              T.StructField("month", T.IntegerType())])
    return spark.read.schema(full).parquet(os.fspath(output))


def session(master: str | None = None, app: str = "fastpgn", conf: Iterable[tuple[str, str]] = ()):
    """A SparkSession for fastpgn: on a local master the executors run this Python (and so this fastpgn)."""
    _require_pyspark()
    import sys

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app).config("spark.ui.showConsoleProgress", "false")
    if master:
        builder = builder.master(master)
    if (master or "local").startswith("local"):
        # pyspark starts its workers with PYSPARK_PYTHON (else python3 on the PATH, which may lack fastpgn).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for key, value in conf:
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark


def register(spark) -> None:
    """Make ``spark.read.format("fastpgn").load(paths)`` read dump files in your own SparkSession ``spark``
    (``session()`` does it for its own): each input split into frame ranges read in parallel tasks, the
    filters Spark pushes down run in fastpgn's kernel (``fastpgn.spark.source``; docs/spark.md).

    >>> register(spark)                                                                    # doctest: +SKIP
    >>> spark.read.format("fastpgn").load("2024-01.pgn.zst").where("white_elo >= 2500").count()   # doctest: +SKIP
    """
    _require_pyspark()
    from fastpgn.spark import source

    source.register(spark)


__all__ = ["FileReport", "LINE_TYPES", "convert", "partition_value", "read_dataset", "read_lines", "read_pgn",
           "register", "schema", "session", "spark_type"]

