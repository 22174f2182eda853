"""Evals from lichess's evaluation database, keyed by position, for ``analyse --evals-db``.

Two published layouts are read:

- Parquet as on Hugging Face (``Lichess/chess-position-evaluations``): one
  row per principal variation of each eval, columns ``fen``, ``line``,
  ``depth``, ``knodes``, ``cp``, ``mate``; the rows of one eval follow each
  other, its first pv first;
- lichess's JSON lines (database.lichess.org "evaluations", ``.jsonl``, may be
  ``.zst``): ``{"fen": .., "evals": [{"pvs": [{"cp": .., "line": ..}], "knodes": .., "depth": ..}]}``.

The FENs there have no move counters (and an en passant square only when the
capture is legal), so each is keyed by the Polyglot key of its position
(``fastpgn.position_key``), which ignores both. ``build_index`` keeps one eval
per position (the deepest, then the most nodes; its first pv), in a Parquet
file sorted by key, made once out of core with DuckDB; ``EvalsDB.lookup``
joins a batch of keys with it in DuckDB, so the database is never held in
memory. ``cp``/``mate`` are White's view, as lichess's ``[%eval]``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from fastpgn._duckdb_files import literal, parquet_files, sql_files, sql_string as _quote

__all__ = ["EvalsDB", "IndexSummary", "build_index", "default_index_path", "game_keys", "lichess_eval"]

DEFAULT_MEMORY = "2GB"
REFUSED_SHOWN = 5       # the FENs the board refused that an IndexSummary holds (the count holds them all)
INDEX_SUFFIX = ".fastpgn-index.parquet"


def lichess_eval(cp: int | None, mate: int | None) -> str | None:
    """A database eval in lichess's ``[%eval]`` notation, as the engine path writes it.

    ``mate`` 0 (checkmated now) is no eval: lichess drops such an eval
    before it annotates a game, so it never writes ``#0``; and a position
    the database gives as mate is no position of a game's movetext that goes
    on (analyse writes no eval after the mating move). The engine searches
    the position instead.

    >>> lichess_eval(30, None), lichess_eval(-125, None), lichess_eval(None, -3), lichess_eval(None, None)
    ('0.3', '-1.25', '#-3', None)
    >>> lichess_eval(None, 0) is None
    True
    """
    from fastpgn.engine.info import Score

    if mate == 0:
        return None
    if mate is not None:
        return Score(mate=int(mate)).lichess()
    if cp is not None:
        return Score(cp=int(cp)).lichess()
    return None


class IndexSummary:
    """What ``build_index`` read: FENs with an eval, positions indexed, FENs the board refused (the first
    few of them by FEN, each with the board's reason, in ``refused_fens``)."""

    def __init__(self, path: str, fens: int, positions: int, refused: int, seconds: float,
                 refused_fens: tuple[tuple[str, str], ...] = ()) -> None:
        self.path, self.fens, self.positions, self.refused, self.seconds = path, fens, positions, refused, seconds
        self.refused_fens = refused_fens

    def __repr__(self) -> str:
        return f"IndexSummary({self.path!r}, fens={self.fens}, positions={self.positions}, refused={self.refused})"


def default_index_path(source: str) -> str:
    """Where the index of ``source`` is kept by default: beside it."""
    return source.rstrip("/" + os.sep) + INDEX_SUFFIX


def _kind(source: str) -> str:
    """``parquet``, ``jsonl`` or ``index`` (an index build_index wrote): from the content, not the name."""
    from fastpgn.errors import InputError

    if os.path.isdir(source):
        return "parquet"
    try:
        with open(source, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise InputError(f"{source}: {exc.strerror or exc}") from None
    if head == b"PAR1":
        import pyarrow.parquet as pq

        names = pq.read_schema(source).names
        if names[:1] == ["zobrist"]:
            return "index"
        return "parquet"
    return "jsonl"


def _best_sql(source: str, kind: str) -> str:
    """SQL giving one row per FEN: its deepest eval's (then most nodes') first pv: fen, depth, knodes, cp, mate."""
    if kind == "parquet":
        return f"""
            SELECT fen, max_by(struct_pack(depth := depth, knodes := knodes, cp := cp, mate := mate),
                               struct_pack(depth := depth, knodes := knodes, first := -file_row_number)) AS e
            FROM read_parquet({sql_files(parquet_files(source))}, file_row_number = true)
            WHERE fen IS NOT NULL AND (cp IS NOT NULL OR mate IS NOT NULL)
            GROUP BY fen"""
    columns = ("{'fen': 'VARCHAR', 'evals': 'STRUCT(pvs STRUCT(cp BIGINT, mate BIGINT, line VARCHAR)[], "
               "knodes BIGINT, depth BIGINT)[]'}")
    return f"""
        SELECT fen, max_by(struct_pack(depth := e.depth, knodes := e.knodes, cp := e.pvs[1].cp,
                                       mate := e.pvs[1].mate),
                           struct_pack(depth := e.depth, knodes := e.knodes, first := -i)) AS e
        FROM (SELECT fen, unnest(evals) AS e, unnest(generate_series(1, len(evals))) AS i
              FROM read_json({_quote(literal(source))}, columns = {columns}, format = 'newline_delimited'))
        WHERE fen IS NOT NULL AND (e.pvs[1].cp IS NOT NULL OR e.pvs[1].mate IS NOT NULL)
        GROUP BY fen"""


def build_index(source: str, index: str | None = None, *, memory_limit: str = DEFAULT_MEMORY,
                temp_directory: str | None = None, progress: Callable[[int], object] | None = None
                ) -> IndexSummary:
    """Index an evaluation database (either layout) by position: ``index`` (default beside ``source``).

    One row per position: ``zobrist`` (signed 64-bit Polyglot key), ``depth``,
    ``knodes``, ``cp``, ``mate``, sorted by ``zobrist``. ``progress(fens)``
    is called as FENs are keyed. A FEN the board refuses is counted, not
    indexed.

    >>> build_index("lichess_db_eval.jsonl.zst")          # doctest: +SKIP
    IndexSummary('lichess_db_eval.jsonl.zst.fastpgn-index.parquet', fens=..., positions=..., refused=0)
    """
    import shutil
    import time

    import pyarrow as pa
    import pyarrow.parquet as pq

    from fastpgn import position_key
    from fastpgn.errors import InputError
    from fastpgn.explorer import connect

    started = time.perf_counter()
    index = index or default_index_path(source)
    kind = _kind(source)
    if kind == "index":
        raise ValueError(f"{source} is already an index")
    own_temp = temp_directory is None
    temp_directory = temp_directory or index + ".tmp"
    os.makedirs(temp_directory, exist_ok=True)
    staging = os.path.join(temp_directory, "keys.parquet")
    con = connect(memory_limit, os.path.join(temp_directory, "duckdb"))
    fens = refused = 0
    refused_fens: list[tuple[str, str]] = []
    schema = pa.schema([("zobrist", pa.int64()), ("depth", pa.int32()), ("knodes", pa.int64()),
                        ("cp", pa.int32()), ("mate", pa.int32())])
    try:
        try:
            reader = con.sql(_best_sql(source, kind)).to_arrow_reader(65_536)
        except Exception as exc:  # noqa: BLE001 - DuckDB's error for a file of neither layout
            raise InputError(f"{source}: not an evaluation database in lichess's JSON lines or Hugging Face's "
                             f"Parquet layout ({str(exc).splitlines()[0]})") from None
        with pq.ParquetWriter(staging, schema) as writer:
            for batch in reader:
                keys, depth, knodes, cps, mates = [], [], [], [], []
                evals = batch.column("e").to_pylist()
                for fen, e in zip(batch.column("fen").to_pylist(), evals):
                    fens += 1
                    try:
                        key = position_key(fen)
                    except ValueError as exc:
                        refused += 1
                        # (the first by FEN: DuckDB hands the FENs over in no fixed order)
                        refused_fens = sorted([*refused_fens, (fen, str(exc))])[:REFUSED_SHOWN]
                        continue
                    for name in ("depth", "cp", "mate"):
                        if e[name] is not None and not -(1 << 31) <= e[name] < 1 << 31:
                            raise InputError(f"{_place(source, kind, fen)}: {name} {e[name]} is outside the 32-bit "
                                             f"integers the index keeps (FEN {fen})")
                    keys.append(key)
                    depth.append(e["depth"])
                    knodes.append(e["knodes"])
                    cps.append(e["cp"])
                    mates.append(e["mate"])
                writer.write_table(pa.table([keys, depth, knodes, cps, mates], schema=schema))
                if progress is not None:
                    progress(fens)
        # Two FENs of one position (an en passant square written or not): the deeper eval.
        con.execute(f"""
            COPY (SELECT zobrist, e.depth AS depth, e.knodes AS knodes, e.cp AS cp, e.mate AS mate
                  FROM (SELECT zobrist, max_by(struct_pack(depth, knodes, cp, mate),
                                               struct_pack(depth, knodes, cp, mate)) AS e
                        FROM read_parquet({_quote(literal(staging))}) GROUP BY zobrist)
                  ORDER BY zobrist)
            TO {_quote(index + '.partial')} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)""")
        written = _quote(literal(index + ".partial"))
        positions = int(con.execute(f"SELECT count(*) FROM read_parquet({written})").fetchone()[0])
        os.replace(index + ".partial", index)
    finally:
        con.close()
        if own_temp:
            shutil.rmtree(temp_directory, ignore_errors=True)
        elif os.path.exists(staging):
            os.remove(staging)
    return IndexSummary(index, fens, positions, refused, time.perf_counter() - started, tuple(refused_fens))


def _place(source: str, kind: str, fen: str) -> str:
    """Where ``fen``'s first eval is in ``source``: ``FILE:LINE`` of the JSON lines, ``FILE, row N`` of
    Parquet (looked for once a value is refused: the SQL that picks each FEN's eval keeps no place)."""
    if kind == "jsonl":
        from fastpgn.io.sources import open_source

        needle = ('"' + fen + '"').encode()
        number, rest = 0, b""
        stream = open_source(source)
        try:
            for chunk in stream.chunks():
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    number += 1
                    if needle in line:
                        return f"{source}:{number}"
        finally:
            stream.close()
        return f"{source}:{number + 1}" if needle in rest else source
    from fastpgn.explorer import connect

    files = os.path.join(source, "**", "*.parquet") if os.path.isdir(source) else source
    con = connect(DEFAULT_MEMORY, None)
    try:
        row = con.execute(f"SELECT filename, file_row_number FROM read_parquet({_quote(files)}, filename = true, "
                          "file_row_number = true) WHERE fen = ? ORDER BY filename, file_row_number LIMIT 1",
                          [fen]).fetchone()
    finally:
        con.close()
    return source if row is None else f"{row[0]}, row {row[1] + 1}"


def game_keys(game) -> list[int] | None:
    """The Polyglot key of the position after each ply of ``game`` (a fastpgn Game); None when the board
    cannot replay it (a variant, an illegal move: the analysis reports why)."""
    from fastpgn.board import positions
    from fastpgn.errors import PGNError

    if not game.moves:
        return []
    try:
        fen, chess960 = game._start()           # the reader owns the rule for FEN and Variant tags
        keys, _ = positions(" ".join(game.moves).encode(), fen, chess960, False)     # the zobrist column's replay
        return keys
    except (PGNError, ValueError):
        return None


class EvalsDB:
    """An index ``build_index`` wrote, looked up a batch of positions at a time with a DuckDB join.

    >>> db = EvalsDB.open("lichess_db_eval.jsonl.zst")       # doctest: +SKIP
    >>> db.lookup([position_key("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -")])    # doctest: +SKIP
    {5060803636482931868: '0.18'}
    """

    def __init__(self, index: str, memory_limit: str = DEFAULT_MEMORY, temp_directory: str | None = None) -> None:
        from fastpgn.explorer import connect

        self.index = index
        self.con = connect(memory_limit, temp_directory)
        self.con.execute(f"CREATE VIEW evals AS SELECT * FROM read_parquet({_quote(literal(index))})")

    @classmethod
    def open(cls, source: str, index: str | None = None, *, memory_limit: str = DEFAULT_MEMORY,
             on_build: Callable[[str], object] | None = None,
             on_built: Callable[[IndexSummary], object] | None = None) -> EvalsDB:
        """The database at ``source`` (either layout, or an index), indexed first when its index is missing
        or older than it (``on_build(index)`` is told before the build, ``on_built(summary)`` after)."""
        from fastpgn.errors import InputError

        if not os.path.exists(source):
            raise InputError(f"{source}: no such file or folder")
        if _kind(source) == "index":
            return cls(source, memory_limit)
        index = index or default_index_path(source)
        if not os.path.exists(index) or os.path.getmtime(index) < os.path.getmtime(source):
            if on_build is not None:
                on_build(index)
            summary = build_index(source, index, memory_limit=memory_limit)
            if on_built is not None:
                on_built(summary)
        return cls(index, memory_limit)

    def lookup(self, keys: Iterable[int]) -> dict[int, str]:
        """The evals (lichess's notation) of those of ``keys`` the database holds."""
        import pyarrow as pa

        probe = pa.table({"zobrist": pa.array(sorted(set(keys)), pa.int64())})
        if probe.num_rows == 0:
            return {}
        self.con.register("probe", probe)
        try:
            rows = self.con.execute(
                "SELECT e.zobrist, e.cp, e.mate FROM evals e JOIN probe p ON e.zobrist = p.zobrist").fetchall()
        finally:
            self.con.unregister("probe")
        out = {}
        for key, cp, mate in rows:
            value = lichess_eval(cp, mate)
            if value is not None:
                out[key] = value
        return out

    def close(self) -> None:
        self.con.close()


# The examples run with doctest.testmod(fastpgn.engine.evals_db).
__test__ = {"lichess_eval": lichess_eval}
