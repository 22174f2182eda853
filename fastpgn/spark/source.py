"""``spark.read.format("fastpgn")``: dump files as a DataFrame through Spark's Python Data Source API, one
big multi-frame file split into many tasks.

Each input is cut into frame ranges of about ``partitionSize`` bytes of PGN
(``fastpgn.io.frame_ranges``; 256 MiB by default): a lichess dump
(pzstd's frames) or any zstd file of several frames that state their sizes.
An input that cannot be split (one zstd frame, bzip2, gzip, plain PGN, an
``encoding`` given) is one partition. A task reads its range with the
kernel (``read_arrow``) and yields Arrow record batches of the schema asked
for; ``byte_offset`` is the game's offset in the whole decompressed file,
and the rows of all the partitions are those ``read_arrow`` reads of the
files.

Filters Spark pushes down (``pushFilters``) run in the kernel where they are
a ``fastpgn.filters.Where`` test that keeps exactly the rows Spark's would
(``PUSHED``); the others are handed back to Spark.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)

from fastpgn.io.frame_ranges import RANGE_SIZE, FrameRange, frame_ranges

#: What runs in the kernel when Spark pushes it (``column`` op ``value``, ANDed with the rest); every other
#: filter is Spark's. Text equality is the tag's exact value; speed one of lichess's names as the column has
#: them. (Not pushed: ``result``, which the movetext's result fills in where the tag lacks; dates, whose
#: column reads a partial date as a day; text tests other than equality; ``In`` but on speed.)
PUSHED = {
    "white_elo": "=, <, <=, >, >= a whole number (with black_elo: the same bounds on both, else white's alone)",
    "black_elo": "=, <, <=, >, >= a whole number",
    "plies": "=, <, <=, >, >= a whole number",
    "speed": "= or IN lichess's speed names (ultraBullet, bullet, blitz, rapid, classical, correspondence)",
    "white": "= a text", "black": "= a text", "termination": "= a text", "eco": "= a text",
    "time_control": "= a text", "event": "= a text", "site": "= a text", "variant": "= a text",
}

_TAGS = {"white": "White", "black": "Black", "termination": "Termination", "eco": "ECO",
         "time_control": "TimeControl", "event": "Event", "site": "Site", "variant": "Variant"}
_BOUNDS = {"white_elo": "white", "black_elo": "black", "plies": "plies"}


def _option(options, name: str, default: str | None = None) -> str | None:
    """An option as given (Spark's option names ignore case)."""
    for key, value in options.items():
        if key.lower() == name.lower():
            return value
    return default


def _flag(options, name: str) -> bool:
    value = (_option(options, name, "false") or "false").strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"the fastpgn data source's option {name} is true or false, not {value!r}")
    return value == "true"


def _paths(options) -> list[str]:
    paths = _option(options, "paths")
    if paths:
        listed = json.loads(paths)
        if listed:
            return [str(p) for p in listed]
    path = _option(options, "path")
    if not path:
        raise ValueError('spark.read.format("fastpgn").load(path) needs a path (or a list of paths)')
    return [path]


class FastpgnDataSource(DataSource):
    """dump files (a path, or a list: ``load(paths)``; a folder: its files) read by fastpgn's kernel.

    Options: ``uci``, ``positions``, ``fens`` (true/false: the columns
    ``fastpgn.spark.schema`` adds), ``encoding`` (the files' text encoding:
    docs/encoding.md), ``partitionSize`` (bytes of PGN a partition reads,
    about; default 256 MiB). The schema is ``fastpgn.spark.schema(uci,
    positions, fens)``, or the columns of it given to ``.schema(...)``.

    >>> register(spark); spark.read.format("fastpgn").load("2024-01.pgn.zst").count()   # doctest: +SKIP
    """

    @classmethod
    def name(cls) -> str:
        return "fastpgn"

    def schema(self):
        from fastpgn.spark import schema

        options = self.options
        return schema(_flag(options, "uci"), _flag(options, "positions"), _flag(options, "fens"))

    def reader(self, schema) -> FastpgnReader:
        return FastpgnReader(dict(self.options), schema)


class _Range(InputPartition):
    """A partition: the frame range (or the whole file) one task reads."""

    def __init__(self, source: FrameRange) -> None:
        super().__init__(source)
        self.source = source


class FastpgnReader(DataSourceReader):
    """The partitions of the inputs (frame ranges), and the reading of one in a task."""

    def __init__(self, options: dict, schema) -> None:
        from fastpgn import schema as _schema
        from fastpgn.io.source import _codec_name

        self.paths = _paths(options)
        self.uci = _flag(options, "uci")
        self.positions = _flag(options, "positions")
        self.fens = _flag(options, "fens")
        self.encoding = _option(options, "encoding")
        _codec_name(self.encoding)      # an unknown encoding: the caller's error, on the driver
        size = _option(options, "partitionSize", str(RANGE_SIZE))
        try:
            self.partition_size = int(size or "")
        except ValueError:
            raise ValueError(f"the fastpgn data source's option partitionSize is a number of bytes, not "
                             f"{size!r}") from None
        if self.partition_size < 1:
            raise ValueError(f"partitionSize must be at least 1 byte, not {self.partition_size}")
        known = {c.name for c in _schema.columns(self.uci, self.positions, self.fens)}
        self.columns = [field.name for field in schema.fields]
        unknown = [name for name in self.columns if name not in known]
        if unknown:
            raise ValueError(f"the fastpgn data source has no column {', '.join(unknown)} (its columns: "
                             f"fastpgn.spark.schema(); uci, positions and fens as options)")
        self.where: dict[str, Any] = {}
        self.pushed: list = []      # the filters run in the kernel

    def pushFilters(self, filters):
        """The filters that ``PUSHED`` names join ``where`` (run in the kernel); the others are yielded back."""
        bounds: dict[str, list] = {}
        speeds: set | None = None
        tags: list[tuple[str, str]] = []
        rest = []
        for f in filters:
            column = f.attribute[0] if len(f.attribute) == 1 else None
            if column in _BOUNDS and type(f) in _RANGE_OPS and _whole(f.value):
                low, high = _RANGE_OPS[type(f)](f.value)
                bounds.setdefault(column, []).append((f, low, high))
            elif column == "speed" and isinstance(f, (EqualTo, In)):
                from fastpgn.lichess import SPEEDS

                values = {f.value} if isinstance(f, EqualTo) else set(f.value)
                if values <= set(SPEEDS) and values and (speeds is None or speeds & values):
                    speeds = values if speeds is None else speeds & values
                    self.pushed.append(f)
                else:
                    rest.append(f)
            elif column in _TAGS and isinstance(f, EqualTo) and _plain_text(f.value):
                tags.append((_TAGS[column], f.value))
                self.pushed.append(f)
            else:
                rest.append(f)
        where: dict[str, Any] = {}
        if speeds is not None:
            where["speed"] = sorted(speeds)
        if tags:
            where["tags"] = tags
        ranges = {}
        for column, found in bounds.items():
            low, high = _joined(found)
            if (low is not None and low < 0) or (high is not None and (high < 0 or (low or 0) > high)):
                rest += [f for f, _, _ in found]    # (Where takes no such bounds: Spark's to test)
            else:
                ranges[column] = (low, high)
        if "plies" in ranges:
            where["min_plies"], where["max_plies"] = ranges["plies"]
        white, black = ranges.get("white_elo"), ranges.get("black_elo")
        elo_of = "both" if white and white == black else "white" if white else "black" if black else None
        if elo_of is not None:
            where["min_elo"], where["max_elo"] = white or black
            where["elo_of"] = elo_of
        for column in ranges:
            ours = column == "plies" or elo_of == "both" or column == f"{elo_of}_elo"
            (self.pushed if ours else rest).extend(f for f, _, _ in bounds[column])
        self.where = where
        return iter(rest)

    def partitions(self):
        from fastpgn.spark import _inputs

        parts = []
        for job in sorted(_inputs(self.paths), key=lambda i: i.path):
            if self.encoding is not None:
                parts.append(_Range(FrameRange(job.path)))
            else:
                parts += [_Range(r) for r in frame_ranges(job.path, self.partition_size)]
        return parts

    def read(self, partition):
        from fastpgn.arrow import read_arrow
        from fastpgn.spark import BATCH_ROWS, _task_arrow_schema

        full = _task_arrow_schema(self.uci, self.positions, self.fens)
        import pyarrow as pa

        target = pa.schema([full.field(name) for name in self.columns])
        # (one thread a task: Spark runs a task on each of its cores)
        with read_arrow(partition.source, batch_size=BATCH_ROWS, columns=self.columns, errors="skip", jobs=1,
                        where=self.where or None, uci=self.uci, positions=self.positions, fens=self.fens,
                        encoding=self.encoding) as reader:
            for batch in reader:
                yield batch.cast(target)


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Each comparison as inclusive bounds (None: open).
_RANGE_OPS = {
    EqualTo: lambda v: (v, v),
    GreaterThan: lambda v: (v + 1, None),
    GreaterThanOrEqual: lambda v: (v, None),
    LessThan: lambda v: (None, v - 1),
    LessThanOrEqual: lambda v: (None, v),
}


def _joined(found: list) -> tuple:
    """The tightest inclusive bounds of ``(filter, low, high)`` together."""
    lows = [low for _, low, _ in found if low is not None]
    highs = [high for _, _, high in found if high is not None]
    return (max(lows) if lows else None, min(highs) if highs else None)


def _plain_text(value) -> bool:
    """A text the tag test compares as the column holds it (no quote or backslash, which PGN escapes)."""
    return isinstance(value, str) and value != "" and '"' not in value and "\\" not in value


def register(spark) -> None:
    """Make ``spark.read.format("fastpgn")`` read dump files in ``spark`` (a SparkSession), with the filters it
    pushes down run in fastpgn's kernel (``spark.sql.python.filterPushdown.enabled``)."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(FastpgnDataSource)


__all__ = ["PUSHED", "FastpgnDataSource", "FastpgnReader", "register"]
