"""The compiled kernels' sources stay buildable by the Cython versions we test, and built one way.

No ``DEF``/``IF`` (Cython's compile-time statements, deprecated since 3.0 and due to go): constants
are ``cdef enum`` members. No ``# cython:`` header: setup.py's ``cythonize`` call is the one place the
directives are set, so a kernel cannot be built with bounds checks by one path and without by another.
The build requirement names the Cython versions the kernels were built and tested with.
"""

from __future__ import annotations

import ast
import re
import tomllib

from helpers import ROOT

SOURCES = sorted(p for ext in ("pyx", "pxi", "pxd") for p in (ROOT / "fastpgn").rglob(f"*.{ext}"))
# The directives every kernel is compiled with (setup.py); without them each index is checked at run time.
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "initializedcheck": False}


def _lines_matching(pattern: str) -> list[str]:
    regex = re.compile(pattern)
    return [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for path in SOURCES
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if regex.match(line)]


def test_the_kernel_sources_are_found():
    names = {p.name for p in SOURCES}
    assert {"_scan_cy.pyx", "grammar.pxi", "_board_cy.pyx", "_board_cy.pxd", "_compact_cy.pyx", "_pages_cy.pyx",
            "_buffer.pxd"} <= names


def test_no_compile_time_DEF_or_IF():
    assert _lines_matching(r"\s*(DEF|IF|ELIF)\s") == []


def test_no_directive_header_in_a_kernel_source():
    assert _lines_matching(r"#\s*cython\s*:") == []


def _cythonize_call() -> ast.Call:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id == "cythonize"]
    assert len(calls) == 1, "setup.py should call cythonize once"
    return calls[0]


def test_setup_py_sets_every_directive():
    keywords = {k.arg: ast.literal_eval(k.value) for k in _cythonize_call().keywords}
    assert keywords["language_level"] == 3
    assert keywords["compiler_directives"] == DIRECTIVES


def test_the_cython_build_requirement_is_bounded():
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    cython = [r for r in requires if re.match(r"(?i)cython\b", r)]
    assert len(cython) == 1, requires
    clauses = sorted(re.sub(r"[0-9.]+$", "", c) for c in cython[0][len("cython"):].replace(" ", "").split(","))
    assert clauses == ["<", ">="], f"{cython[0]}: want the tested minimum (>=) and an exclusive upper bound (<)"
