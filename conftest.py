"""The docstring examples' rule for the suite: an example that needs an optional extra is skipped without it.

pyproject.toml's ``addopts`` runs every example in ``fastpgn/`` (``--doctest-modules``). The modules import
their extras (pyarrow, pyspark, DuckDB, ...) only when called, so each one is collected everywhere; an example
that reaches an extra which is not installed is skipped with the package's name, and any other failure stays
a failure.
"""

from __future__ import annotations

import doctest

import pytest

# The import names of the packages the extras (and python-chess, for Game.to_python_chess) bring.
OPTIONAL = frozenset({"pyarrow", "pyspark", "pandas", "duckdb", "plotly", "polars", "chess", "isal", "indexed_bzip2",
                      "numpy"})


def missing_optional(exc: BaseException | None) -> str | None:
    """The optional package whose absence raised ``exc`` (fastpgn's ImportError keeps it as its cause), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in OPTIONAL:
            return exc.name.split(".")[0]
        exc = exc.__cause__ or exc.__context__
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except doctest.UnexpectedException as failure:
        package = missing_optional(failure.exc_info[1])
        if package is None:
            raise
        pytest.skip(f"the example needs {package}, which is not installed")
