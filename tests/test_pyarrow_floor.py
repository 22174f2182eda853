"""The oldest pyarrow ``pyproject.toml`` allows is one fastpgn's Parquet works on.

Every extra that brings pyarrow names one floor; that very version is
installed apart (``pip install --target``, next to the environment's own
pyarrow, untouched) and the Parquet tests run on it in a child process: the
row groups joined byte for byte as one pyarrow writer writes them, the
kernel's list pages read back by pyarrow, DuckDB and polars, lichess's
Parquet release read. Below the floor they fail: pyarrow 17 and older write
a copy of each column chunk's metadata after its pages, which the join does
not move (``fastpgn.parquet.row_groups``), and before 16 pyarrow needs NumPy 1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest
from packaging.version import Version

from helpers import ROOT, child_pytest

#: The Parquet tests, run on the floor.
PARQUET_TESTS = ("tests/parquet", "tests/test_parquet_writer.py", "tests/io/test_lichess_parquet.py")


def declared_floors() -> dict[str, str]:
    """Each extra of pyproject.toml that names pyarrow, and the floor it names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floors = {}
    for extra, requirements in project["optional-dependencies"].items():
        for requirement in requirements:
            found = re.fullmatch(r"pyarrow\s*>=\s*([0-9.]+)", requirement.strip())
            if found:
                floors[extra] = found.group(1)
            else:
                assert not requirement.startswith("pyarrow"), f"{extra}: {requirement} names no plain floor"
    return floors


def test_every_extra_that_brings_pyarrow_names_the_same_floor():
    floors = declared_floors()
    assert {"arrow", "spark", "report", "duckdb", "test", "bench"} <= set(floors)
    assert len(set(floors.values())) == 1, floors


@pytest.mark.slow
def test_the_parquet_tests_pass_on_the_oldest_pyarrow_allowed(tmp_path):
    floor = next(iter(declared_floors().values()))
    target = tmp_path / "pyarrow-floor"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                          "--only-binary", ":all:", "--target", str(target), f"pyarrow=={floor}"],
                         capture_output=True, text=True)
    if pip.returncode:
        why = f"pip cannot install pyarrow=={floor} here: {(pip.stderr.strip().splitlines() or ['?'])[-1]}"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI must not skip the floor)")
        pytest.skip(why)
    version = subprocess.run([sys.executable, "-c", "import pyarrow; print(pyarrow.__version__)"], cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(target)])),
                             capture_output=True, text=True)
    assert Version(version.stdout.strip()) == Version(floor), version.stdout + version.stderr
    run = child_pytest("-q", *PARQUET_TESTS, pythonpath=(str(target),))
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, f"on pyarrow {version.stdout.strip()}:\n{run.stdout[-6000:]}{run.stderr[-2000:]}"
    assert re.search(r"\d+ passed", summary) and "failed" not in summary, summary
