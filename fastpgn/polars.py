"""A PGN input as a polars ``LazyFrame``: the columns a query names read, and its filter run in the kernel.

``scan_pgn(source)`` registers a polars IO source (``polars.io.plugins.register_io_source``)
over anything ``read_arrow`` reads (a dump, ``-``, bytes, lichess's Parquet release; a
multi-frame zstd dump decoded on every core). polars hands the source the
columns the query projects, its predicate, a row limit and a batch size:

- the columns become ``read_arrow``'s ``columns=`` (with those the predicate reads),
  so a query of header columns never builds the per-ply lists;
- the parts of the predicate that ``fastpgn.Where`` can test (comparisons and
  ``is_in`` on ``white_elo``/``black_elo``, ``speed``, ``termination``, ``eco``,
  ``date``, ``white``/``black``, ``variant``, ``plies``, joined by ``&``) run in the
  kernel before a game is built; the whole predicate is then applied by polars to
  each batch, so a part the kernel cannot test (``|``, ``result``, any expression)
  is never lost, only not pushed;
- a row limit (``head``, ``n_rows``) stops the read.

polars is imported on first use (``pip install "fastpgn[polars]"``).
"""

from __future__ import annotations

import datetime
import io
import json
from typing import Any

from fastpgn import schema as _schema

POLARS_EXTRA = 'pip install "fastpgn[polars]"'

# polars' comparison operators, and the operator with its sides swapped (``3 < plies`` is ``plies > 3``)
_FLIPPED = {"Gt": "Lt", "GtEq": "LtEq", "Lt": "Gt", "LtEq": "GtEq", "Eq": "Eq"}
_EPOCH = datetime.date(1970, 1, 1)


def _require_polars():
    try:
        import polars
    except ImportError as exc:
        raise ImportError(f"fastpgn.polars needs polars, which is not installed: {POLARS_EXTRA}") from exc
    return polars


def polars_schema(uci: bool = False, positions: bool = False, fens: bool = False) -> dict:
    """The analysis schema (``fastpgn.schema``) as polars types, in order.

    >>> polars_schema()["white_elo"]
    Int16
    """
    pl = _require_polars()
    import pyarrow as pa

    empty = pa.Table.from_batches([], schema=_schema.arrow_schema(uci, positions, fens))
    return dict(pl.from_arrow(empty).schema)


def scan_pgn(source, *, uci: bool = False, positions: bool = False, fens: bool = False,
             encoding: str | None = None, errors: str = "raise", openings=None, jobs: int | None = None):
    """A ``polars.LazyFrame`` of the games of ``source`` in the analysis schema (docs/schema.md).

    ``source`` and the keywords are ``read_arrow``'s; the source is read
    again at each ``collect`` (a stream such as ``-`` or a file object can
    be collected once). ``pushed_where(predicate)`` shows what of a
    predicate runs in the kernel.

    >>> import polars as pl
    >>> pgn = b'[WhiteElo "2300"]\\n[BlackElo "2250"]\\n[TimeControl "180+0"]\\n\\n1. e4 e5 1-0\\n'
    >>> lf = scan_pgn(pgn)
    >>> lf.filter(pl.col("white_elo") >= 2200).select("white_elo", "speed", "plies").collect().row(0)
    (2300, 'blitz', 2)
    """
    pl = _require_polars()
    from polars.io.plugins import register_io_source

    from fastpgn.arrow import read_arrow

    full = polars_schema(uci, positions, fens)
    options = {"uci": uci, "positions": positions, "fens": fens, "encoding": encoding, "errors": errors,
               "openings": openings, "jobs": jobs}

    def games(with_columns: list[str] | None, predicate, n_rows: int | None, batch_size: int | None):
        wanted = list(full) if with_columns is None else list(with_columns)
        needed = list(wanted)
        if predicate is not None:
            needed += [name for name in predicate.meta.root_names() if name not in needed and name in full]
        where = pushed_where(predicate)
        left = n_rows
        if left is not None and left <= 0:
            return
        kwargs: dict[str, Any] = {"columns": needed, "where": where}
        if batch_size:
            kwargs["batch_size"] = batch_size
        with read_arrow(source, **kwargs, **options) as reader:
            for batch in reader:
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                if predicate is not None:
                    frame = frame.filter(predicate)
                frame = frame.select(wanted)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                if frame.height:
                    yield frame
                if left is not None and left <= 0:
                    return

    name = getattr(source, "name", None) if not isinstance(source, (str, bytes)) else source
    detail = name if isinstance(name, str) and len(name) < 200 else type(source).__name__
    import inspect

    named: dict[str, Any] = {"explain_name": "fastpgn", "explain_detail": detail}   # (polars 2: explain() shows them)
    accepted = inspect.signature(register_io_source).parameters
    return register_io_source(games, schema=full, **{k: v for k, v in named.items() if k in accepted})


# ---------------------------------------------------------------- the predicate, as far as Where tests it

def pushed_where(predicate):
    """The ``fastpgn.Where`` the kernel tests for a polars predicate: every game the predicate keeps passes
    it (it may pass more, which polars then drops); None when no part of it maps.

    >>> import polars as pl
    >>> pushed_where((pl.col("white_elo") >= 2200) & (pl.col("speed") == "blitz") | (pl.col("plies") > 1))
    >>> pushed_where((pl.col("white_elo") >= 2200) & pl.col("speed").is_in(["blitz", "rapid"])).as_dict()
    {'min_elo': 2200, 'elo_of': 'white', 'speed': ['blitz', 'rapid']}
    """
    if predicate is None:
        return None
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # noqa: BLE001 - a polars that serialises otherwise: nothing pushed, polars filters
        return None
    bounds: dict[str, list] = {}
    for atom in _conjuncts(tree):
        found = _atom(atom)
        if found is not None:
            column, op, value = found
            bounds.setdefault(column, []).append((op, value))
    return _where(bounds)


def _conjuncts(node) -> list:
    """The parts of an ``&`` chain (a node that is not ``&``: itself)."""
    expr = node.get("BinaryExpr") if isinstance(node, dict) else None
    if expr is not None and expr.get("op") in ("And", "LogicalAnd"):
        return _conjuncts(expr["left"]) + _conjuncts(expr["right"])
    return [node]


def _column(node) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("Column"), str):
        return node["Column"]
    return None


_NO_VALUE = object()


def _literal(node):
    """A literal's Python value (_NO_VALUE when the node is not one this reads)."""
    if not isinstance(node, dict) or "Literal" not in node:
        return _NO_VALUE
    lit = node["Literal"]
    for kind in ("Dyn", "Scalar"):
        inner = lit.get(kind) if isinstance(lit, dict) else None
        if isinstance(inner, dict) and len(inner) == 1:
            (name, value), = inner.items()
            if name == "Date" and isinstance(value, int):
                return _EPOCH + datetime.timedelta(days=value)
            if name in ("String", "Int", "Float") or name.startswith(("Int", "UInt")):
                return value
            if name == "List" and isinstance(value, list):
                return _ipc_list(value)
    return _NO_VALUE


def _ipc_list(data: list[int]):
    """An ``is_in`` list, which polars serialises as an Arrow IPC stream of one column."""
    try:
        import pyarrow.ipc as ipc

        table = ipc.open_stream(io.BytesIO(bytes(data))).read_all()
        return table.column(0).to_pylist()
    except Exception:  # noqa: BLE001 - not read: nothing pushed
        return _NO_VALUE


def _atom(node):
    """``(column, op, value)`` of a comparison of a column with a literal, or of ``is_in`` (op ``In``)."""
    if not isinstance(node, dict):
        return None
    expr = node.get("BinaryExpr")
    if expr is not None:
        op = expr.get("op")
        if op not in _FLIPPED:
            return None
        column, value = _column(expr["left"]), _literal(expr["right"])
        if column is None:
            column, value, op = _column(expr["right"]), _literal(expr["left"]), _FLIPPED[op]
        if column is None or value is _NO_VALUE or value is None:
            return None
        return column, op, value
    func = node.get("Function")
    if isinstance(func, dict) and "IsIn" in json.dumps(func.get("function")):
        args = func.get("input") or []
        if len(args) == 2 and _column(args[0]) is not None:
            values = _literal(args[1])
            if isinstance(values, list) and values and None not in values:
                return _column(args[0]), "In", values
    return None


def _int_bounds(rules: list) -> tuple[int | None, int | None]:
    """The tightest whole-number ``[low, high]`` that every value the rules keep lies in (None: unbounded).

    >>> _int_bounds([("Gt", 2199.5), ("Lt", 2500), ("In", [2000, 2600])])
    (2200, 2499)
    """
    import math

    low: int | None = None
    high: int | None = None

    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    for op, value in rules:
        lo = hi = None
        if op == "In" and isinstance(value, list) and value and all(number(v) for v in value):
            lo, hi = math.ceil(min(value)), math.floor(max(value))
        elif not number(value):
            continue
        elif op == "Eq":
            lo, hi = math.ceil(value), math.floor(value)
        elif op == "GtEq":
            lo = math.ceil(value)
        elif op == "Gt":
            lo = math.floor(value) + 1
        elif op == "LtEq":
            hi = math.floor(value)
        elif op == "Lt":
            hi = math.ceil(value) - 1
        if lo is not None:
            low = lo if low is None else max(low, lo)
        if hi is not None:
            high = hi if high is None else min(high, hi)
    return low, high


def _date_bounds(rules: list) -> tuple[datetime.date | None, datetime.date | None]:
    low = high = None
    day = datetime.timedelta(days=1)
    for op, value in rules:
        values = value if op == "In" else [value]
        if not all(isinstance(v, datetime.date) for v in values):
            continue
        lo = hi = None
        if op in ("Eq", "In"):
            lo, hi = min(values), max(values)
        elif op in ("GtEq", "Gt"):
            lo = value + day if op == "Gt" else value
        else:
            hi = value - day if op == "Lt" else value
        if lo is not None:
            low = lo if low is None else max(low, lo)
        if hi is not None:
            high = hi if high is None else min(high, hi)
    return low, high


def _one_text(rules: list) -> str | None:
    """The text an ``==`` (or a one-value ``is_in``) asks for, if any."""
    for op, value in rules:
        values = value if op == "In" else [value] if op == "Eq" else []
        if len(values) == 1 and isinstance(values[0], str) and values[0]:
            return values[0]
    return None


def _where(bounds: dict[str, list]):
    from fastpgn.filters import SPEEDS, Where

    fields: dict[str, Any] = {}
    sides = {side: _int_bounds(bounds.get(f"{side}_elo", [])) for side in ("white", "black")}
    named = [side for side, b in sides.items() if b != (None, None)]
    if len(named) == 1:
        fields["elo_of"] = named[0]
        fields["min_elo"], fields["max_elo"] = sides[named[0]]
    elif len(named) == 2:
        (wl, wh), (bl, bh) = sides["white"], sides["black"]
        fields["elo_of"] = "both"
        fields["min_elo"] = None if wl is None or bl is None else min(wl, bl)
        fields["max_elo"] = None if wh is None or bh is None else max(wh, bh)
    speeds: set | None = None
    for op, value in bounds.get("speed", []):
        values = value if op == "In" else [value] if op == "Eq" else None
        if values is not None and all(isinstance(v, str) for v in values):
            asked = {v for v in values if v in SPEEDS}
            speeds = asked if speeds is None else speeds & asked
    if speeds:      # (no speed at all: a query that keeps nothing, left to polars)
        fields["speed"] = sorted(speeds)
    fields["min_plies"], fields["max_plies"] = _int_bounds(bounds.get("plies", []))
    since, until = _date_bounds(bounds.get("date", []))
    fields["since"] = since.isoformat() if since else None
    fields["until"] = until.isoformat() if until else None
    for column, field in (("termination", "termination"), ("variant", "variant"), ("eco", "eco")):
        fields[field] = _one_text(bounds.get(column, []))
    for column in ("white", "black"):
        player = _one_text(bounds.get(column, []))
        if player is not None:
            fields["player"] = player
    fields = {k: v for k, v in fields.items() if v is not None}
    if set(fields) <= {"elo_of"}:
        return None
    try:
        return Where(**fields)
    except ValueError:      # (bounds no game passes: nothing pushed, polars keeps none)
        return None

