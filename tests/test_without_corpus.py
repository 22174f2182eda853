"""The README's test command on a fresh clone, without the shared corpus beside it: every test that reads the
shared folder skips with a reason, none fails or errs.

``helpers.shared()`` skips by itself when a path is absent; what can break is
a test that reaches the folder another way (``DATA / ...``, ``SHARED``,
``CONFORMANCE``, ``corpus_files()``), at collection or when it runs. So the
whole suite is collected with ``FASTPGN_SHARED`` naming an empty folder, and
every test that names those directly (or through a name of its module that
does) is run there. The whole suite would take minutes; these take seconds.
"""

from __future__ import annotations

import ast
import re

import pytest

from helpers import ROOT, child_pytest

#: The names of tests/helpers.py that lead into the shared folder without skipping.
DIRECT = frozenset({"DATA", "SHARED", "CONFORMANCE", "corpus_files"})


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def direct_readers() -> list[str]:
    """The node ids (``file::test``) of the tests that reach the shared folder other than by ``shared()``: a
    test whose code or decorators name one of ``DIRECT``, or a function or value of its module that does
    (followed to the end: ``CORPUS = _corpus()``, ``needs_corpus = skipif(not CORPUS)``)."""
    found = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name == "test_without_corpus.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined: dict[str, set[str]] = {}          # a module-level name -> the names its definition uses
        tests = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined[node.name] = _names(node)
                if node.name.startswith("test_"):
                    tests.append(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in _names(target):
                        defined.setdefault(name, set()).update(_names(node.value) if node.value else ())
        reaching = set(DIRECT)
        while True:
            more = {name for name, uses in defined.items() if uses & reaching} - reaching
            if not more:
                break
            reaching |= more
        rel = path.relative_to(ROOT).as_posix()
        found += [f"{rel}::{name}" for name in tests if name in reaching]
    return found


def _summary(out: str) -> str:
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def test_the_selection_finds_the_tests_that_read_the_folder_directly():
    """The walk finds direct readers of each kind: in a test's body, in its parametrisation, through a
    module-level value and a marker made of it."""
    found = direct_readers()
    assert "tests/test_reader_jobs.py::test_games_on_worker_threads_are_read_there_and_numbered_as_on_one" \
        in found                                                              # DATA / ... in the body
    assert "tests/test_schema.py::test_every_file_gives_the_lines_games_typed" in found     # corpus_files()
    assert "tests/test_reader_jobs.py::test_every_reader_gives_the_same_at_any_jobs" in found   # CORPUS = _corpus()
    assert "tests/notations/test_icn_bridge.py::test_round_trip_keeps_moves_and_tags_of_every_lichess_game" \
        in found                                                              # a module function's DATA
    assert not any(f.endswith("::test_ruff_reports_nothing") for f in found)


@pytest.mark.slow
def test_without_the_corpus_the_suite_collects_and_its_readers_skip(tmp_path):
    empty = tmp_path / "no-corpus"
    empty.mkdir()
    collect = child_pytest("--collect-only", "-q", "tests", FASTPGN_SHARED=str(empty))
    assert collect.returncode == 0, collect.stdout[-4000:] + collect.stderr[-4000:]
    assert re.search(r"\d+ tests? collected", _summary(collect.stdout)), collect.stdout[-2000:]
    assert "error" not in _summary(collect.stdout)
    readers = direct_readers()
    run = child_pytest("-q", "-rs", *readers, FASTPGN_SHARED=str(empty))
    summary = _summary(run.stdout)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    assert re.search(r"\d+ skipped", summary), summary
    # each skip names its reason: the absent folder
    assert str(empty) in run.stdout or "FASTPGN_SHARED" in run.stdout, run.stdout[-2000:]
