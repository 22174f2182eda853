"""An opening explorer: every (position, move) pair of games' first plies counted in DuckDB, and looked up.

``build_tree`` reads Parquet the converter wrote with positions on
(``--positions --uci``: the ``zobrist``, ``uci`` and ``moves`` columns) and
aggregates, out of core, one row per position and move::

    zobrist  the Polyglot key (signed 64-bit) of the position BEFORE the move
    uci san  the move
    games white draws black   how many games played it, and how they ended
    white_rating black_rating the players' average ratings in those games

(with ``by_speed`` a ``speed`` column, with ``by_rating`` a ``rating`` column:
the lichess explorer's band of the two players' average rating), in one
Parquet file sorted by ``zobrist``, so that ``lookup`` reads only the row
groups that can hold a position.

``lookup(tree, fen_or_board)`` answers as lichess's opening explorer API
does: the position's white/draws/black totals and its ``moves`` sorted by
games, each with ``uci``, ``san``, ``white``, ``draws``, ``black`` and
``averageRating``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from fastpgn._duckdb_files import literal, parquet_files, sql_files, sql_string as _quote
from fastpgn.filters import where_sql
from fastpgn.lichess import SPEEDS

__all__ = ["RATING_BANDS", "SPEEDS", "Tree", "build_tree", "lookup", "start_key"]

#: The lichess opening explorer's rating bands: a game counts in the band of its players' average rating.
RATING_BANDS = (0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500)
DEFAULT_MAX_PLIES = 20
DEFAULT_MEMORY = "2GB"

# The analysis schema's columns for the tags the filters test (the others are in the ``tags`` pairs).
class Tree:
    """What ``build_tree`` did: the games it read, used, filtered out and could not use (no positions)."""

    def __init__(self, path: str, rows: int, games_read: int, games_used: int, games_filtered: int,
                 games_without_positions: int, seconds: float) -> None:
        self.path = path
        self.rows = rows
        self.games_read = games_read
        self.games_used = games_used
        self.games_filtered = games_filtered
        self.games_without_positions = games_without_positions
        self.seconds = seconds

    def __repr__(self) -> str:
        return (f"Tree({self.path!r}, rows={self.rows}, games_read={self.games_read}, games_used={self.games_used}, "
                f"games_filtered={self.games_filtered}, games_without_positions={self.games_without_positions})")


def start_key(fen: str | None = None) -> int:
    """The Polyglot key (signed 64-bit) of a game's start: its FEN tag, else the standard start.

    >>> hex(start_key() & (1 << 64) - 1)
    '0x463b96181691fc9c'
    """
    from fastpgn import position_key

    return position_key(fen) if fen else position_key("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")


def require_duckdb():
    """The duckdb module, or an ImportError that says how to install it (an extra: the core stays light)."""
    try:
        import duckdb
    except ImportError:
        raise ImportError("DuckDB is not installed (the explorer and analyse --evals-db need it): "
                          "pip install 'fastpgn[duckdb]'") from None
    return duckdb


def connect(memory_limit: str = DEFAULT_MEMORY, temp_directory: str | None = None, threads: int | None = None):
    """An embedded DuckDB that spills to ``temp_directory`` past ``memory_limit`` (a month does not fit)."""
    duckdb = require_duckdb()

    con = duckdb.connect(":memory:")
    con.execute(f"SET memory_limit = {_quote(memory_limit)}")
    if temp_directory is not None:
        con.execute(f"SET temp_directory = {_quote(temp_directory)}")
    con.execute("SET preserve_insertion_order = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def _with_progress(con, sql: str, progress: Callable[[float], object] | None):
    """Run ``sql`` on ``con``; ``progress(percent)`` a few times a second from another thread while it runs."""
    if progress is None:
        return con.execute(sql)
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.25):
            try:
                value = con.query_progress()
            except Exception:  # noqa: BLE001 - the progress is a courtesy, never a failure
                return
            if value is not None and value >= 0:
                progress(float(value))

    thread = threading.Thread(target=poll, daemon=True, name="fastpgn-explorer-progress")
    thread.start()
    try:
        return con.execute(sql)
    finally:
        done.set()
        thread.join()
        progress(100.0)


def build_tree(dataset: str, output: str, *, max_plies: int = DEFAULT_MAX_PLIES, where=None,
               by_speed: bool = False, by_rating: bool = False, memory_limit: str = DEFAULT_MEMORY,
               temp_directory: str | None = None, threads: int | None = None,
               progress: Callable[[float], object] | None = None) -> Tree:
    """Aggregate the first ``max_plies`` plies of a Parquet dataset (written with positions on) into ``output``.

    ``where``: a fastpgn.filters.Where (or dict) the games must pass; the
    others are counted as filtered out. Games without positions (a variant
    the board does not play, a move it refused) are counted apart. Returns
    a ``Tree`` with the counts: read = used + filtered out + without positions.
    ``output`` is written whole or not at all, in a private folder beside it
    (where DuckDB also spills, unless ``temp_directory`` says elsewhere) and
    renamed onto it (``fastpgn.io.output.staged``: a link at ``output`` is
    replaced by the tree, never written through).

    >>> tree = build_tree("games/", "tree.parquet", max_plies=16)       # doctest: +SKIP
    >>> fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    >>> lookup("tree.parquet", fen)["moves"][0]["san"]                  # doctest: +SKIP
    'e5'
    """
    import shutil
    import tempfile
    import time

    from fastpgn.errors import InputError
    from fastpgn.io.output import staged

    if max_plies < 1:
        raise ValueError(f"max_plies must be at least 1, not {max_plies}")
    started = time.perf_counter()
    files = parquet_files(dataset)
    if not files:
        raise InputError(f"{dataset}: no Parquet files")
    for path in files:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
    condition = where_sql(where)
    with staged(output) as written:
        spill = temp_directory
        if spill is None:
            # (the private folder the tree is written in: no one else can plant a link where DuckDB spills)
            spill = (os.path.join(os.path.dirname(written), "duckdb") if written != os.fspath(output)
                     else tempfile.mkdtemp(prefix="fastpgn-explorer-"))
        try:
            con = connect(memory_limit, spill, threads)
            rows, read, used, passed = _aggregate(con, files, dataset, written, condition, max_plies, by_speed,
                                                  by_rating, progress)
        finally:
            if temp_directory is None and os.path.isdir(spill):
                shutil.rmtree(spill, ignore_errors=True)
    return Tree(output, rows, read, used, read - passed, passed - used, time.perf_counter() - started)


def _aggregate(con, files, dataset, written, condition, max_plies, by_speed, by_rating, progress):
    """build_tree's queries on ``con`` (closed at the end): the tree written to ``written``; its rows, and the
    games read, used and passing the filter."""
    from fastpgn.errors import InputError

    try:
        source = f"read_parquet({sql_files(files)}, union_by_name = true)"
        try:
            names = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        except Exception as exc:  # noqa: BLE001 - DuckDB's error for a file that is not Parquet
            raise InputError(f"{dataset}: not a Parquet dataset ({str(exc).splitlines()[0]})") from None
        missing = [c for c in ("zobrist", "uci", "moves") if c not in names]
        if missing:
            raise InputError(f"{dataset}: no {', '.join(missing)} column: convert it with "
                             "--format parquet --positions --uci")
        fens = [r[0] for r in con.execute(
            f"SELECT DISTINCT fen FROM {source} WHERE fen IS NOT NULL AND ({condition})").fetchall()]
        starts: dict[str, int] = {}
        for fen in fens:
            try:
                starts[fen] = start_key(fen)
            except ValueError:
                pass            # a FEN the board refuses: its games have no positions either
        con.execute("CREATE TEMP TABLE starts (fen VARCHAR, k BIGINT)")
        if starts:
            con.executemany("INSERT INTO starts VALUES (?, ?)", list(starts.items()))
        standard = start_key()
        counts = con.execute(f"""
            SELECT count(*),
                   count(*) FILTER (WHERE {condition}),
                   count(*) FILTER (WHERE ({condition}) AND zobrist IS NOT NULL AND uci IS NOT NULL
                                    AND len(zobrist) = len(moves) AND len(uci) = len(moves)
                                    AND (fen IS NULL OR fen IN (SELECT fen FROM starts)))
            FROM {source}""").fetchone()
        read, passed, used = (int(x) for x in counts)
        keys = ["zobrist"] + (["speed"] if by_speed else []) + (["rating"] if by_rating else []) + ["uci", "san"]
        band = ("CASE WHEN white_elo IS NULL OR black_elo IS NULL THEN NULL "
                + " ".join(f"WHEN (white_elo + black_elo) / 2 >= {b} THEN {b}" for b in reversed(RATING_BANDS[1:]))
                + " ELSE 0 END")
        sql = f"""
            COPY (
              SELECT {', '.join(keys)}, count(*)::BIGINT AS games,
                     count(*) FILTER (WHERE result = '1-0')::BIGINT AS white,
                     count(*) FILTER (WHERE result = '1/2-1/2')::BIGINT AS draws,
                     count(*) FILTER (WHERE result = '0-1')::BIGINT AS black,
                     round(avg(white_elo))::INTEGER AS white_rating,
                     round(avg(black_elo))::INTEGER AS black_rating
              FROM (
                SELECT unnest(list_prepend(coalesce(s.k, {standard}), g.zobrist[1:{max_plies - 1}])) AS zobrist,
                       unnest(g.uci[1:{max_plies}]) AS uci,
                       rtrim(unnest(g.moves[1:{max_plies}]), '?!') AS san,
                       g.result, g.white_elo, g.black_elo{', g.speed' if by_speed else ''},
                       {band} AS rating
                FROM {source} g LEFT JOIN starts s ON g.fen = s.fen
                WHERE ({condition}) AND g.zobrist IS NOT NULL AND g.uci IS NOT NULL
                      AND len(g.zobrist) = len(g.moves) AND len(g.uci) = len(g.moves)
                      AND (g.fen IS NULL OR s.k IS NOT NULL)
              )
              WHERE san IS NOT NULL
              GROUP BY ALL
              ORDER BY zobrist, games DESC, uci
            ) TO {_quote(written)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 65536)"""
        _with_progress(con, sql, progress)
        rows = int(con.execute(f"SELECT count(*) FROM read_parquet({_quote(literal(written))})").fetchone()[0])
    finally:
        con.close()
    return rows, read, used, passed


def _key_of(fen_or_board) -> int:
    from fastpgn import position_key

    return position_key(fen_or_board)


def lookup(tree: str, fen_or_board, *, speeds=None, ratings=None, con=None) -> dict[str, Any]:
    """The moves played from a position, as lichess's opening explorer API answers.

    ``{"white": .., "draws": .., "black": .., "moves": [{"uci", "san", "white", "draws", "black",
    "averageRating"}, ...]}``, the moves sorted by games (most first); the
    totals are the sums over the moves (games that ended in the position are
    not counted). An unknown position has zero totals and no moves.
    ``speeds``/``ratings`` keep the rows of those speeds / rating bands (the
    tree must have been built with ``by_speed``/``by_rating``).

    >>> lookup("tree.parquet", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")   # doctest: +SKIP
    {'white': 1612, 'draws': 137, 'black': 1470, 'moves': [{'uci': 'e2e4', 'san': 'e4', ...}, ...]}
    """
    from fastpgn.errors import InputError

    duckdb = require_duckdb()
    key = _key_of(fen_or_board)
    own = con is None
    if own:
        con = duckdb.connect(":memory:")
    try:
        source = f"read_parquet({_quote(literal(tree))})"
        try:
            names = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        except duckdb.Error as exc:
            raise InputError(f"{tree}: not an explorer tree ({str(exc).splitlines()[0]})") from None
        if not {"zobrist", "uci", "san", "games"} <= names:
            raise InputError(f"{tree}: not an explorer tree (no zobrist, uci, san, games columns)")
        tests = [f"zobrist = {int(key)}"]
        for flag, column, values, known in (("speeds", "speed", speeds, SPEEDS),
                                            ("ratings", "rating", ratings, RATING_BANDS)):
            if not values:
                continue
            if column not in names:
                raise ValueError(f"{flag}: the tree has no {column} column (build it with by_{column}, "
                                 f"explorer --by-{column})")
            values = [values] if isinstance(values, (str, int)) else list(values)
            bad = [v for v in values if v not in known]
            if bad:
                raise ValueError(f"{flag}: {bad[0]!r} is not one of {', '.join(map(str, known))}")
            tests.append(f"{column} IN (" + ", ".join(_quote(v) if isinstance(v, str) else str(int(v))
                                                       for v in values) + ")")
        rows = con.execute(f"""
            SELECT uci, any_value(san), sum(games)::BIGINT AS n, sum(white)::BIGINT, sum(draws)::BIGINT,
                   sum(black)::BIGINT,
                   round(sum((white_rating + black_rating) / 2 * games) / nullif(sum(games) FILTER (
                         WHERE white_rating IS NOT NULL AND black_rating IS NOT NULL), 0))::INTEGER
            FROM {source} WHERE {' AND '.join(tests)}
            GROUP BY uci ORDER BY n DESC, uci""").fetchall()
    finally:
        if own:
            con.close()
    moves = [{"uci": u, "san": s, "white": w, "draws": d, "black": b, "averageRating": r}
             for u, s, _n, w, d, b, r in rows]
    return {"white": sum(m["white"] for m in moves), "draws": sum(m["draws"] for m in moves),
            "black": sum(m["black"] for m in moves), "moves": moves}


# The examples run with doctest.testmod(fastpgn.explorer).
__test__ = {"start_key": start_key}
