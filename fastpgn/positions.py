"""A key for every position: the Polyglot key of a query, and the games of a Parquet dataset that reach it.

With ``positions=True`` (``--positions`` for the converter) each game's row
holds ``zobrist``: the Polyglot key of the position after each ply, the key
opening books and python-chess's ``chess.polyglot.zobrist_hash`` give,
stored as the signed 64-bit integer with the same bits (Arrow, Parquet,
Spark and Java have no unsigned 64-bit type). ``position_key`` gives a
query's key in that form; ``games_reaching`` finds the games of a Parquet
file or folder that reach a position, and the move played next, in DuckDB
(``pip install "fastpgn[duckdb]"``). docs/positions.md has the same query
in DuckDB, polars and Spark.

Such a query reads every game's whole ``zobrist`` list (Parquet's
statistics cannot skip row groups by a list's entries). ``build_index``
writes, in one DuckDB query, the postings sorted by key: one row per
(position, game), so that the min/max statistics of its small row groups
lead a point lookup to one or a few of them; ``games_reaching`` reads it
when it is given, or when it lies beside the dataset (``index_path``) and
still describes the dataset's files, and scans otherwise (it says which in
the table's schema metadata and in the ``fastpgn.positions`` log).
"""

from __future__ import annotations

import json
import logging
import os
import time

#: The key of the standard starting position (no ply leads to it: games_reaching matches it at ply 0).
START_KEY = 5060803636482931868

_DUCKDB_EXTRA = 'pip install "fastpgn[duckdb]"'

#: The index's rows a row group: small enough that a point lookup decodes few rows (a rare position's
#: postings lie in one group), large enough that the footer, read by every lookup, stays small.
INDEX_ROW_GROUP = 65536
#: The key of the index's Parquet key-value metadata: what it was built from (its files and their sizes).
INDEX_METADATA = "fastpgn_position_index"
#: The key of a result's schema metadata that says how it was found: ``index`` or ``scan``.
SOURCE_METADATA = b"fastpgn_source"
_INDEX_VERSION = 1
_log = logging.getLogger("fastpgn.positions")


def position_key(fen_or_board) -> int:
    """The signed Polyglot key of a position: a FEN, a ``fastpgn.Board``, or any board with a ``fen()`` method.

    It equals the ``zobrist`` column's entry for the same position (and, as
    an unsigned number, ``chess.polyglot.zobrist_hash``). A FEN may name any
    en passant square: its file counts only where a pawn of the side to move
    stands beside the pawn that moved, as Polyglot has it. Castling may be
    written ``KQkq`` or with files (Chess960); the key is the same either way.

    >>> position_key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    -9062197578030825066
    >>> from fastpgn import Board
    >>> b = Board()
    >>> _ = b.push_san("e4")
    >>> position_key(b) == b.zobrist()
    True
    """
    from fastpgn.board import Board

    if isinstance(fen_or_board, str):
        # the key does not depend on the variant: read as Chess960, any castling notation passes
        return Board(fen_or_board, chess960=True).zobrist()
    zobrist = getattr(fen_or_board, "zobrist", None)
    if callable(zobrist):
        return zobrist()
    fen = getattr(fen_or_board, "fen", None)
    if callable(fen):
        return Board(fen(), chess960=True).zobrist()
    raise TypeError(f"position_key takes a FEN or a board, not {type(fen_or_board).__name__}")


def _parquet_files(dataset) -> list[str]:
    """The read_parquet argument for a Parquet file or a folder of them (any depth, as the converter writes):
    the files as literal DuckDB patterns, so that a name holding ``[``, ``*`` or ``?`` reads that file alone."""
    from fastpgn._duckdb_files import literal

    return [literal(f) for f in _dataset_files(dataset)]


def _dataset_files(dataset) -> list[str]:
    from fastpgn._duckdb_files import parquet_files

    path = os.fspath(dataset)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no Parquet file or folder at {path}")
    files = parquet_files(path)
    if not files:
        raise FileNotFoundError(f"no Parquet files in {path}")
    return files


def _require_duckdb(what: str):
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError(f"fastpgn.positions.{what} needs DuckDB, which is not installed: {_DUCKDB_EXTRA}"
                          ) from exc
    return duckdb


def index_path(dataset) -> str:
    """Where ``build_index`` writes a dataset's index by default, and where ``games_reaching`` looks for it.

    In a folder, ``_positions.parquet`` in it; beside a file ``NAME.parquet``,
    ``_NAME.positions.parquet``. The leading ``_`` keeps it out of the
    dataset: fastpgn, pyarrow.dataset and Spark pass over such names.

    >>> index_path("/data/games.parquet")
    '/data/_games.positions.parquet'
    """
    path = os.path.abspath(os.fspath(dataset))
    if os.path.isdir(path):
        return os.path.join(path, "_positions.parquet")
    folder, name = os.path.split(path)
    return os.path.join(folder, f"_{name.removesuffix('.parquet')}.positions.parquet")


def _fingerprint(dataset, files: list[str]) -> list[list]:
    """The dataset's files (relative to it) and their sizes, in its order: what an index was built from."""
    root = os.path.abspath(os.fspath(dataset))
    base = root if os.path.isdir(root) else os.path.dirname(root)
    return [[os.path.relpath(os.path.abspath(f), base), os.path.getsize(f)] for f in files]


class PositionIndex:
    """What ``build_index`` wrote: its path, the games and postings (rows) in it, its bytes and seconds."""

    def __init__(self, path: str, games: int, postings: int, size: int, seconds: float) -> None:
        self.path = path
        self.games = games
        self.postings = postings
        self.size = size
        self.seconds = seconds

    def __repr__(self) -> str:
        return (f"PositionIndex({self.path!r}, games={self.games}, postings={self.postings}, size={self.size}, "
                f"seconds={self.seconds:.2f})")


def build_index(dataset, output=None, *, row_group_size: int = INDEX_ROW_GROUP, memory_limit: str = "2GB",
                temp_directory: str | None = None, threads: int | None = None) -> PositionIndex:
    """Write the position index of a Parquet dataset (written with ``positions=True``) to ``output``.

    One DuckDB query reads the dataset and writes one Parquet file sorted
    by ``key``, one row per position a game reaches, at its first visit:
    ``key`` (the signed Polyglot key), ``game_id``, ``ply`` (as
    ``games_reaching`` counts it: 0 for the standard start of a game without
    a FEN tag), ``next_move``, ``next_uci`` (when the dataset has ``uci``),
    ``result``, ``byte_offset``, ``file`` (the game's file, relative to the
    dataset), and ``file_no`` and ``row`` (its place in the dataset's order).
    Row groups hold ``row_group_size`` rows, so that their min/max
    statistics lead a lookup of one key to one or a few. The files the
    index was built from (names and sizes) are in its key-value metadata
    (``INDEX_METADATA``): ``games_reaching`` scans instead of reading an
    index that no longer describes the dataset. ``output`` defaults to
    ``index_path(dataset)``; it is written whole or not at all, in a private
    folder beside it, and renamed onto it (``fastpgn.io.output.staged``: a
    link there is replaced, never written through). DuckDB spills past
    ``memory_limit`` into ``temp_directory`` (default: that private folder).

    >>> import tempfile, os, fastpgn
    >>> folder = tempfile.mkdtemp()
    >>> pgn = b'[Site "x/a"]\\n\\n1. e4 e5 2. Nf3 *\\n\\n[Site "x/b"]\\n\\n1. d4 *\\n'
    >>> _ = fastpgn.to_parquet(pgn, os.path.join(folder, "games.parquet"), positions=True)
    >>> build_index(folder).postings          # 2 starts, 3 + 1 plies
    6
    >>> games_reaching(folder, "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1").to_pylist()
    [{'game_id': 'b', 'ply': 1, 'next_move': None}]
    """
    import shutil
    import tempfile

    from fastpgn._duckdb_files import literal, sql_files, sql_string
    from fastpgn.io.output import staged

    duckdb = _require_duckdb("build_index")
    if not isinstance(row_group_size, int) or isinstance(row_group_size, bool) or row_group_size < 1:
        raise ValueError(f"row_group_size must be a whole number of rows, not {row_group_size!r}")
    started = time.perf_counter()
    files = _dataset_files(dataset)
    fingerprint = _fingerprint(dataset, files)
    output = index_path(dataset) if output is None else os.fspath(output)
    if os.path.abspath(output) in {os.path.abspath(f) for f in files}:
        raise ValueError(f"{output} is a file of the dataset: write the index elsewhere")
    with staged(output) as written:
        spill = temp_directory
        if spill is None:
            spill = (os.path.join(os.path.dirname(written), "duckdb") if written != output
                     else tempfile.mkdtemp(prefix="fastpgn-index-"))
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = {sql_string(memory_limit)}")
            con.execute(f"SET temp_directory = {sql_string(spill)}")
            con.execute("SET preserve_insertion_order = false")     # (the rows are sorted: less held in memory)
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            source = f"read_parquet({sql_files(files)}, union_by_name = true, filename = true, file_row_number = true)"
            names = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
            for need in ("zobrist", "moves", "game_id"):
                if need not in names:
                    raise ValueError(f"{os.fspath(dataset)} has no {need} column"
                                     + (": write it with positions=True (--positions)" if need == "zobrist" else ""))
            # Each game's file as a number and a relative name, looked up in two lists (a join here had DuckDB
            # build its hash table on the games, lists and all, and run out of memory on 1 GB)
            paths = "[" + ", ".join(sql_string(os.path.abspath(f)) for f in files) + "]"
            rels = "[" + ", ".join(sql_string(rel) for rel, _ in fingerprint) + "]"
            where_file = f"list_position({paths}, g.filename)"
            uci = "uci" in names
            standard = "g.fen IS NULL" if "fen" in names else "true"
            result = "g.result" if "result" in names else "NULL::VARCHAR"
            offset = "g.byte_offset" if "byte_offset" in names else "NULL::BIGINT"
            uci_out = ", next_uci" if uci else ""
            # (the columns as games_reaching's scan sees them, hive partitions included: it need not ask again)
            seen = sorted(row[0] for row in con.execute(
                "DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true)", [[literal(f) for f in files]]
            ).fetchall())
            meta = json.dumps({"version": _INDEX_VERSION, "files": fingerprint, "uci": uci, "columns": seen},
                              separators=(",", ":"))
            # Only the columns the postings are made of (the dataset's others, the per-ply lists above all, are
            # never read).
            read = ", ".join(n for n in ("zobrist", "moves", "game_id", "uci", "fen", "result", "byte_offset",
                                         "filename", "file_row_number") if n in names or n.startswith("file"))
            common = (f"({where_file} - 1)::INTEGER AS file_no, {rels}[{where_file}] AS file, "
                      f"g.file_row_number AS row, g.game_id, {result} AS result, "
                      f"{offset} AS byte_offset")
            # A game's postings: its first visit of each position (games_reaching's list_position), the standard
            # start at ply 0 for a game without a FEN tag (whatever ply it comes back to it at): its keys are the
            # start's, then zobrist's. (One scan of the files: a UNION of two, each of the lists, ran out of
            # memory on 1 GB.)
            keys = (f"(CASE WHEN {standard} THEN list_prepend({START_KEY}::BIGINT, coalesce(g.zobrist, [])) "
                    f"ELSE g.zobrist END)")
            first = f"(CASE WHEN {standard} THEN 0 ELSE 1 END)"
            uci_next = f", unnest(CASE WHEN {standard} THEN g.uci ELSE g.uci[2:] END) AS next_uci" if uci else ""
            sql = f"""
                COPY (
                  WITH g AS (SELECT {read} FROM {source}), postings AS (
                    SELECT * EXCLUDE (first) FROM (
                      SELECT unnest({keys}) AS key, unnest(range({first}, {first} + len({keys})))::INTEGER AS ply,
                             unnest(CASE WHEN {standard} THEN g.moves ELSE g.moves[2:] END) AS next_move{uci_next},
                             {common},
                             unnest(list_transform({keys}, lambda k, i: list_position({keys}, k) = i)) AS first
                      FROM g)
                    -- (a key is null past the end of zobrist only where moves is longer: a damaged file)
                    WHERE first AND key IS NOT NULL
                  )
                  SELECT key, game_id, ply, next_move{uci_out}, result, byte_offset, file, file_no, row
                  FROM postings ORDER BY key, file_no, row
                ) TO {sql_string(written)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {row_group_size},
                                            KV_METADATA {{{INDEX_METADATA}: {sql_string(meta)}}})"""
            con.execute(sql)
            postings, games = (int(x) for x in con.execute(
                f"SELECT count(*), count(DISTINCT (file_no, row)) FROM read_parquet({sql_string(literal(written))})"
            ).fetchone())
        finally:
            con.close()
            if temp_directory is None and os.path.isdir(spill):
                shutil.rmtree(spill, ignore_errors=True)
    return PositionIndex(output, games, postings, os.path.getsize(output), time.perf_counter() - started)


def _usable_index(dataset, files: list[str], index) -> tuple[str | None, dict | None, str]:
    """The index games_reaching reads (its path and metadata), or None and why it scans."""
    if index is False:
        return None, None, "index=False"
    path = index_path(dataset) if index is None or index is True else os.fspath(index)
    if not os.path.exists(path):
        if index is not None and index is not True:
            raise FileNotFoundError(f"no position index at {path}")
        return None, None, f"no index at {path}"
    import pyarrow.parquet as pq

    raw = (pq.read_metadata(path).metadata or {}).get(INDEX_METADATA.encode())
    meta = json.loads(raw) if raw else None
    if not meta or meta.get("version") != _INDEX_VERSION or "columns" not in meta:
        return None, None, f"{path} is not a position index of this fastpgn (build it again)"
    if meta["files"] != _fingerprint(dataset, files):
        return None, None, f"{path} was built from other files than the dataset's (build it again)"
    return path, meta, f"index {path}"


def games_reaching(dataset, fen, *, columns=(), limit: int | None = None, pandas: bool = False, index=None,
                   con=None):
    """The games of a Parquet dataset (written with ``positions=True``) that reach a position, and the move next.

    ``dataset`` is a Parquet file or a folder of them (the converter's
    output with ``--positions``); ``fen`` a FEN or a board (``position_key``).
    One row per game that reaches the position, in the dataset's order:
    ``game_id``, ``ply`` (the plies played when the position is on the board:
    1 after White's first move; 0 for the standard start, which every game
    without a FEN tag has before its first move), ``next_move`` (the SAN
    played from there; null where the game ends there), ``next_uci`` when the
    dataset has the ``uci`` column, then ``columns`` (names of other columns
    to carry). A game that comes back to the position counts once, at its
    first visit. ``limit`` keeps the first rows. Returns a ``pyarrow.Table``,
    or with ``pandas`` a DataFrame. Needs DuckDB (``pip install
    "fastpgn[duckdb]"``); the query is the one docs/positions.md shows.

    ``index``: the path of ``build_index``'s index to read; None (the
    default) reads ``index_path(dataset)`` when it is there and was built
    from the dataset's files as they are now; False always scans. The
    answer is the same either way; how it was found is the table's schema
    metadata ``SOURCE_METADATA`` (``b"index"`` or ``b"scan"``; a
    DataFrame's ``attrs["fastpgn_source"]``) and an INFO line of the
    ``fastpgn.positions`` log, which says why it scans. Columns the index
    does not hold (``columns`` other than ``result`` and ``byte_offset``)
    are read from the dataset's files that hold the games found. ``con``: a
    DuckDB connection to run in (many lookups in one save its start, some
    15 ms each); by default one of its own.

    >>> import tempfile, os, fastpgn
    >>> folder = tempfile.mkdtemp()
    >>> pgn = b'[Site "x/a"]\\n\\n1. e4 e5 2. Nf3 *\\n\\n[Site "x/b"]\\n\\n1. d4 *\\n'
    >>> _ = fastpgn.to_parquet(pgn, os.path.join(folder, "games.parquet"), positions=True)
    >>> start = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    >>> games_reaching(folder, start).to_pylist()
    [{'game_id': 'a', 'ply': 1, 'next_move': 'e5'}]
    """
    from fastpgn._duckdb_files import literal

    duckdb = _require_duckdb("games_reaching")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be a whole number of games, not {limit!r}")
    if isinstance(columns, str):
        raise TypeError("columns must be a list of column names, not a string")
    key = position_key(fen)
    raw = _dataset_files(dataset)
    files = [literal(f) for f in raw]
    found, meta, why = _usable_index(dataset, raw, index)
    own = con is None
    if own:
        con = duckdb.connect()
    try:
        if meta is not None:
            names = set(meta["columns"])        # (the dataset's, recorded with the files it was built from)
        else:
            # (DESCRIBE reads one file's schema, not every file's footer)
            names = {row[0] for row in con.execute(
                "DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true)", [files]).fetchall()}
        for need in ("zobrist", "moves", "game_id"):
            if need not in names:
                raise ValueError(f"{os.fspath(dataset)} has no {need} column"
                                 + (": write it with positions=True (--positions)" if need == "zobrist" else ""))
        for name in columns:
            if name not in names:
                raise ValueError(f"{os.fspath(dataset)} has no column {name!r}")
        if found is not None:
            result = _from_index(con, found, raw, key, list(columns), limit, "uci" in names)
            source = b"index"
        else:
            result = _scan(con, files, names, key, list(columns), limit)
            source = b"scan"
        _log.info("games_reaching %s: %s (%s)", os.fspath(dataset), source.decode(), why)
        if pandas:
            frame = result.df()
            frame.attrs["fastpgn_source"] = source.decode()
            return frame
        # (DuckDB 1.4 named arrow() to_arrow_table())
        to_table = getattr(result, "to_arrow_table", None) or result.arrow
        table = to_table()
        return table.replace_schema_metadata({**(table.schema.metadata or {}), SOURCE_METADATA: source})
    finally:
        if own:
            con.close()
        else:
            con.execute("DROP TABLE IF EXISTS temp._fastpgn_hits; DROP TABLE IF EXISTS temp._fastpgn_hit_files")


def _scan(con, files, names, key, columns, limit):
    """games_reaching's answer from the dataset's zobrist lists, every one read."""
    start = "fen IS NULL" if "fen" in names else "true"
    # list_position: where the key first comes (1-based), the plies played then; the next move is one on. A game
    # without a FEN tag is at the standard start at ply 0, before any later return to it.
    ply = f"CASE WHEN $key = {START_KEY} AND {start} THEN 0 ELSE list_position(zobrist, $key) END"
    extra = "".join(f", {_quoted(name)}" for name in columns)
    next_uci = ", uci[ply + 1] AS next_uci" if "uci" in names else ""
    sql = (f"SELECT game_id, ply, moves[ply + 1] AS next_move{next_uci}{extra} FROM ("
           f"SELECT *, {ply} AS ply FROM read_parquet($files, hive_partitioning = true)) WHERE ply IS NOT NULL"
           + ("" if limit is None else f" LIMIT {int(limit)}"))
    return con.sql(sql, params={"key": key, "files": files})


#: The dataset's columns the index holds, besides those games_reaching always gives.
_IN_INDEX = ("result", "byte_offset")


def _from_index(con, found, files, key, columns, limit, uci):
    """games_reaching's answer from the index: the row groups whose statistics can hold ``key``."""
    from fastpgn._duckdb_files import literal, sql_files, sql_string

    next_uci = ", next_uci" if uci else ""
    cut = "" if limit is None else f" LIMIT {int(limit)}"
    index = f"read_parquet({sql_string(literal(found))})"
    if all(name in _IN_INDEX for name in columns):
        extra = "".join(f", {_quoted(name)}" for name in columns)
        return con.sql(f"SELECT game_id, ply, next_move{next_uci}{extra} FROM {index} WHERE key = $key "
                       f"ORDER BY file_no, row{cut}", params={"key": key})
    # the other columns from the files holding the games found (only those columns are read)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _fastpgn_hits AS SELECT game_id, ply, next_move{next_uci}, file_no, "
                f"row FROM {index} "
                f"WHERE key = $key ORDER BY file_no, row{cut}", {"key": key})
    numbers = [r[0] for r in con.execute("SELECT DISTINCT file_no FROM _fastpgn_hits ORDER BY 1").fetchall()] or [0]
    con.execute("CREATE OR REPLACE TEMP TABLE _fastpgn_hit_files (path VARCHAR, no INTEGER)")
    con.executemany("INSERT INTO _fastpgn_hit_files VALUES (?, ?)", [(os.path.abspath(files[n]), n) for n in numbers])
    extra = "".join(f", d.{_quoted(name)}" for name in columns)
    data = (f"(SELECT *, file_row_number AS _row FROM read_parquet({sql_files([files[n] for n in numbers])}, "
            "hive_partitioning = true, filename = true, file_row_number = true))")
    return con.sql(f"SELECT h.game_id, h.ply, h.next_move{', h.next_uci' if uci else ''}{extra} "
                   f"FROM _fastpgn_hits h JOIN _fastpgn_hit_files f ON f.no = h.file_no "
                   f"JOIN {data} d ON d.filename = f.path AND d._row = h.row "
                   "ORDER BY h.file_no, h.row")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["INDEX_METADATA", "INDEX_ROW_GROUP", "SOURCE_METADATA", "START_KEY", "PositionIndex", "build_index",
           "games_reaching", "index_path", "position_key"]
