"""A PGN input as a DuckDB relation: SQL over the stream, only the columns asked for made.

DuckDB reads Arrow record batch readers straight from Python, so the games
of any input ``read_arrow`` reads (a dump, lichess's Parquet release, a
multi-frame dump decoded on every core) can be queried without converting
them first. DuckDB's Python API has no table functions, so the columns and
the filter are named here (they become ``read_arrow``'s ``columns=`` and
``where=``: the kernel makes those columns only, and tests the filter
before a game is built); SQL does the rest. A relation over a stream is
read once: make it again for another query, or convert the input to
Parquet (``python -m fastpgn INPUT CHUNK --format parquet``) to query it
many times.

DuckDB is imported on first use (``pip install "fastpgn[duckdb]"``).
"""

from __future__ import annotations

from typing import Any

DUCKDB_EXTRA = 'pip install "fastpgn[duckdb]"'


def _require_duckdb():
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError(f"fastpgn.duckdb needs duckdb, which is not installed: {DUCKDB_EXTRA}") from exc
    return duckdb


def read_pgn(source, *, columns=None, where=None, connection=None, **options: Any):
    """A DuckDB relation of the games of ``source`` (the analysis schema, or ``columns``), read as a stream.

    ``where`` and the other keywords are ``read_arrow``'s; ``connection``: a
    ``duckdb.DuckDBPyConnection`` (default: DuckDB's default connection).

    >>> pgn = b'[WhiteElo "2300"]\\n[TimeControl "180+0"]\\n\\n1. e4 e5 1-0\\n'
    >>> read_pgn(pgn, columns=["speed", "white_elo"]).aggregate("speed, max(white_elo)").fetchall()
    [('blitz', 2300)]
    """
    duckdb = _require_duckdb()
    from fastpgn.arrow import read_arrow

    con = connection if connection is not None else duckdb.default_connection()
    return con.from_arrow(read_arrow(source, columns=columns, where=where, **options).to_reader())


def register(connection, name: str, source, *, columns=None, where=None, **options: Any):
    """Register the games of ``source`` as the view ``name`` of ``connection``, for SQL (read once); returns
    the connection.

    >>> import duckdb
    >>> con = register(duckdb.connect(), "games", b'[WhiteElo "2300"]\\n\\n1. e4 1-0\\n', columns=["white_elo"])
    >>> con.sql("SELECT count(*) FROM games WHERE white_elo > 2000").fetchall()
    [(1,)]
    """
    _require_duckdb()
    from fastpgn.arrow import read_arrow

    connection.register(name, read_arrow(source, columns=columns, where=where, **options).to_reader())
    return connection
