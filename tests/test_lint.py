"""The habits of the house, held by a machine: ruff reports nothing, and tests share helpers through one
module (tests/helpers.py), never by importing one another; the test folders mirror the package's."""

from __future__ import annotations

import ast
import subprocess
import sys

from helpers import ROOT, missing_system_package

LINTED = ("fastpgn", "tests", "benchmarks", "tools", "examples")


def test_ruff_reports_nothing():
    try:
        import ruff  # noqa: F401
    except ImportError:
        missing_system_package('ruff is not installed: pip install -e ".[test]"')
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *LINTED], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"ruff check {' '.join(LINTED)} ([tool.ruff]):\n{proc.stdout}{proc.stderr}"


def test_no_test_module_imports_another():
    """A helper two test modules need lives in tests/helpers.py; conftest.py holds fixtures and hooks only."""
    tests = ROOT / "tests"
    private = {p.stem for p in tests.rglob("*.py")} - {"helpers"}     # conftest, test_*, fake_engine
    found = []
    for path in sorted([*tests.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if (top in private or top == "tests"
                        or top == "helpers" and path.is_relative_to(ROOT / "benchmarks")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert found == []


def test_the_test_folders_mirror_the_package():
    folders = sorted(p.name for p in (ROOT / "tests").iterdir()
                     if p.is_dir() and p.name not in ("cases", "__pycache__") and any(p.glob("test_*.py")))
    assert folders and all((ROOT / "fastpgn" / name / "__init__.py").is_file() for name in folders), folders
