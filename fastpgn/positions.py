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
"""

from __future__ import annotations

import os

#: The key of the standard starting position (no ply leads to it: games_reaching matches it at ply 0).
START_KEY = 5060803636482931868

_DUCKDB_EXTRA = 'pip install "fastpgn[duckdb]"'


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
    from fastpgn._duckdb_files import literal, parquet_files

    path = os.fspath(dataset)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no Parquet file or folder at {path}")
    files = parquet_files(path)
    if not files:
        raise FileNotFoundError(f"no Parquet files in {path}")
    return [literal(f) for f in files]


def games_reaching(dataset, fen, *, columns=(), limit: int | None = None, pandas: bool = False):
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

    >>> import tempfile, os, fastpgn
    >>> folder = tempfile.mkdtemp()
    >>> pgn = b'[Site "x/a"]\\n\\n1. e4 e5 2. Nf3 *\\n\\n[Site "x/b"]\\n\\n1. d4 *\\n'
    >>> _ = fastpgn.to_parquet(pgn, os.path.join(folder, "games.parquet"), positions=True)
    >>> start = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    >>> games_reaching(folder, start).to_pylist()
    [{'game_id': 'a', 'ply': 1, 'next_move': 'e5'}]
    """
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError(f"fastpgn.positions.games_reaching needs DuckDB, which is not installed: {_DUCKDB_EXTRA}"
                          ) from exc
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be a whole number of games, not {limit!r}")
    if isinstance(columns, str):
        raise TypeError("columns must be a list of column names, not a string")
    key = position_key(fen)
    files = _parquet_files(dataset)
    con = duckdb.connect()
    try:
        # (DESCRIBE reads one file's schema, not every file's footer)
        names = {row[0] for row in con.execute("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true)",
                                               [files]).fetchall()}
        for need in ("zobrist", "moves", "game_id"):
            if need not in names:
                raise ValueError(f"{os.fspath(dataset)} has no {need} column"
                                 + (": write it with positions=True (--positions)" if need == "zobrist" else ""))
        for name in columns:
            if name not in names:
                raise ValueError(f"{os.fspath(dataset)} has no column {name!r}")
        start = "fen IS NULL" if "fen" in names else "true"
        # list_position: where the key first comes (1-based), the plies played then; the next move is one on
        ply = f"coalesce(list_position(zobrist, $key), CASE WHEN $key = {START_KEY} AND {start} THEN 0 END)"
        extra = "".join(f", {_quoted(name)}" for name in columns)
        next_uci = ", uci[ply + 1] AS next_uci" if "uci" in names else ""
        sql = (f"SELECT game_id, ply, moves[ply + 1] AS next_move{next_uci}{extra} FROM ("
               f"SELECT *, {ply} AS ply FROM read_parquet($files, hive_partitioning = true)) WHERE ply IS NOT NULL"
               + ("" if limit is None else f" LIMIT {int(limit)}"))
        result = con.sql(sql, params={"key": key, "files": files})
        if pandas:
            return result.df()
        # (DuckDB 1.4 named arrow() to_arrow_table())
        to_table = getattr(result, "to_arrow_table", None) or result.arrow
        return to_table()
    finally:
        con.close()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["START_KEY", "games_reaching", "position_key"]
