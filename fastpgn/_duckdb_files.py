"""Files handed to DuckDB by name, read as exactly those files and no others.

DuckDB takes every path its readers are given (``read_parquet``,
``read_json``, ``parquet_schema``, a list of paths too) as a glob pattern:
``*``, ``?`` and ``[...]`` match (DuckDB's "Reading Multiple Files"), so
``x[1].parquet`` reads ``x1.parquet`` and ``a*.parquet`` every ``a...``.
``literal`` writes a path as the pattern that matches only itself: each
glob character alone in a bracket class (``[[]``, ``[*]``, ``[?]``: a class
of one character matches that character), the path made absolute (DuckDB
reads a relative path that starts at a folder named ``~`` as the home
folder). DuckDB splits a pattern at ``\\`` as at ``/``, so on POSIX a path
holding both a backslash and a glob character cannot be written so: it is
refused in one line. ``parquet_files`` lists a dataset's files in Python, so
a folder is never handed to DuckDB as a pattern either. Every module that
reads files in DuckDB (the explorer, the report, ``games_reaching``, the
evals database) goes through these.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

GLOB_CHARACTERS = frozenset("*?[")


def literal(path) -> str:
    """``path`` as the DuckDB glob pattern that matches that one file (or folder) and nothing else.

    >>> literal("/data/x[1]*.parquet")
    '/data/x[[]1][*].parquet'
    >>> literal("/data/plain.parquet")
    '/data/plain.parquet'
    """
    text = os.path.abspath(os.fspath(path))
    if not GLOB_CHARACTERS.intersection(text):
        return text         # DuckDB opens a path without glob characters as it is
    if os.sep != "\\" and "\\" in text:
        from fastpgn.errors import InputError

        raise InputError(f"{text}: DuckDB cannot read a file whose path holds both a backslash and one of "
                         "* ? [ (it takes the backslash for a folder separator): rename it")
    return "".join(f"[{c}]" if c in GLOB_CHARACTERS else c for c in text)


def sql_string(text: str) -> str:
    """A SQL string literal.

    >>> sql_string("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def sql_files(paths: Iterable) -> str:
    """The SQL list of ``paths`` as literal patterns, for ``read_parquet(...)`` and its kin.

    >>> sql_files(["/a/x[1].parquet", "/a/x1.parquet"])
    "['/a/x[[]1].parquet', '/a/x1.parquet']"
    """
    return "[" + ", ".join(sql_string(literal(p)) for p in paths) + "]"


def _hidden(name: str) -> bool:
    # pyarrow.dataset's rule: unfinished chunks (.NAME.tmp), run records, Spark's _SUCCESS and _temporary
    return name.startswith((".", "_"))


def parquet_files(dataset) -> list[str]:
    """The Parquet files of a dataset: a file as given, or every ``*.parquet`` under a folder, at any depth.

    In name order, folder by folder; names (of files and of folders below
    ``dataset``) that start with ``.`` or ``_`` are passed over, as
    pyarrow.dataset passes over them. A folder without any gives ``[]``.

    >>> import os, tempfile
    >>> top = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(top, "year=2024", "month=01"))
    >>> for name in ("year=2024/month=01/b.parquet", "a[1].parquet", ".a.parquet.tmp", "_SUCCESS", ".c.parquet"):
    ...     open(os.path.join(top, name), "wb").close()
    >>> [os.path.relpath(p, top) for p in parquet_files(top)]
    ['a[1].parquet', 'year=2024/month=01/b.parquet']
    """
    path = os.fspath(dataset)
    if not os.path.isdir(path):
        return [path]
    found: list[str] = []
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".parquet") and not _hidden(n))
    return found


__all__ = ["literal", "parquet_files", "sql_files", "sql_string"]
