"""The analysis schema as CSV text (RFC 4180), in pure Python: no pyarrow needed.

One header row of the column names (``fastpgn.schema``), then one row per
game, lines ending ``\\r\\n``, fields quoted only where they must be. How each
type is written:

* null: an empty field; bool: ``true`` / ``false``;
* ``utc``: ``YYYY-MM-DD HH:MM:SSZ`` (the ``Z``: UTC, so DuckDB and polars read a zoned timestamp); ``date``: ``YYYY-MM-DD``;
* lists: the entries separated by one space, a null entry empty (``33  -12``
  is 33, null, -12); a null list, an empty list and a list of one null
  entry are all empty; ``fens`` (a FEN holds spaces): separated by ``;``;
* ``nags`` (a list per ply): the plies separated by one space, a ply's NAGs by ``;`` (``5;14  2`` is
  [5, 14], [], [2]);
* ``clock`` entries: the shortest text of the seconds (``180``, ``17.7``);
* ``tags``: a JSON object (``{"Date":"2024.01.02","Round":"-"}``).

>>> import io
>>> out = io.BytesIO()
>>> write_csv({"white": ["Ann, Jr."], "eval_cp": [[33, None, -12]], "mate": [False]}, out)
1
>>> out.getvalue()
b'white,eval_cp,mate\\r\\n"Ann, Jr.",33  -12,false\\r\\n'
"""

from __future__ import annotations

import csv
import datetime as _datetime
import io
import json

from fastpgn import schema

_EPOCH_ORDINAL = _datetime.date(1970, 1, 1).toordinal()
_TYPES = {c.name: c.type for c in schema.columns(uci=True, positions=True, fens=True)}


def _day_text(days: int, cache: dict) -> str:
    text = cache.get(days)
    if text is None:
        text = cache[days] = _datetime.date.fromordinal(days + _EPOCH_ORDINAL).isoformat()
    return text


def _dates(values: list) -> list:
    cache: dict = {}
    return ["" if v is None else _day_text(v, cache) for v in values]


def _timestamps(values: list) -> list:
    cache: dict = {}
    out = []
    for v in values:
        if v is None:
            out.append("")
            continue
        days, seconds = divmod(v, 86400)
        minutes, s = divmod(seconds, 60)
        out.append(f"{_day_text(days, cache)} {minutes // 60:02}:{minutes % 60:02}:{s:02}Z")
    return out


def number_text(value) -> str:
    """An int or float as its shortest text: ``180``, ``17.7`` (``180.0`` is ``180``); None is empty."""
    if value is None:
        return ""
    if type(value) is float:
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


def _lists(values: list, kind: str, sep: str = " ") -> list:
    if sep != " ":
        return ["" if v is None else sep.join(v) for v in values]
    if kind == "list<list<int16>>":  # nags: a ply's NAGs joined by ';'
        return ["" if v is None else " ".join(";".join(map(number_text, p)) for p in v) for v in values]
    if kind == "list<string>":   # (a null entry: judgement's moves without one)
        return ["" if v is None else " ".join(v) if None not in v else " ".join(x or "" for x in v) for v in values]
    return ["" if v is None else " ".join(map(number_text, v)) for v in values]


def _maps(values: list) -> list:
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    return [dumps(dict(v)) if v is not None else "" for v in values]


def column_text(name: str, values: list) -> list:
    """One column's values as CSV field texts (ints and strings stay as they are: ``csv`` writes them)."""
    kind = _TYPES[name]
    if kind == "bool":
        return [None if v is None else ("true" if v else "false") for v in values]
    if kind == "date32":
        return _dates(values)
    if kind.startswith("timestamp"):
        return _timestamps(values)
    if kind == "float32":              # (as a list's entries: 100, not 100.0)
        return list(map(number_text, values))
    if kind.startswith("list<struct<"):     # the tags: name and value pairs
        return _maps(values)
    if kind.startswith("list<"):
        return _lists(values, kind, ";" if name == "fens" else " ")
    return values


def write_csv(columns: dict, stream, *, header: bool = True) -> int:
    """Write the rows of a column dict (schema names, one list each) to a binary stream; return the rows written.

    ``header`` writes the row of column names first (leave it out for the
    blocks after the first).
    """
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\r\n")
    if header:
        writer.writerow(columns)
    fields = [column_text(name, values) for name, values in columns.items()]
    rows = len(fields[0]) if fields else 0
    writer.writerows(zip(*fields))
    stream.write(text.getvalue().encode("utf-8"))
    return rows


__all__ = ["column_text", "number_text", "write_csv"]
