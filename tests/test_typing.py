"""The package type-checks: `mypy fastpgn` with pyproject.toml's [tool.mypy] reports no error.

A user's type checker sees what this one sees: Board and Move are real
classes (the board kernels' shared interface is read off the pure twin and
board/_board_cy.pyi), not Any, and the board layer is annotated throughout.
"""

from __future__ import annotations

import pytest

from helpers import ROOT

api = pytest.importorskip("mypy.api", reason="mypy not installed: pip install -e .[test]")


def mypy(*args: str) -> tuple[str, int]:
    out, err, status = api.run([*args, "--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(ROOT / ".mypy_cache")])
    return out + err, status


def test_the_package_type_checks():
    report, status = mypy(str(ROOT / "fastpgn"))
    errors = [line for line in report.splitlines() if ": error:" in line]
    assert status == 0 and not errors, (
        "mypy fastpgn reports errors (the board layer is clean; the rest are modules typed before "
        "mypy ran in the tests, to be fixed where they stand):\n" + "\n".join(errors))


def test_board_and_its_moves_are_typed_for_users(tmp_path):
    """What a program using fastpgn.board is told: real types, and mistakes caught."""
    script = tmp_path / "uses_board.py"
    script.write_text(
        "from fastpgn.board import Board, Move, Outcome, replay, san_to_uci\n"
        "b: Board = replay('e4 e5')\n"
        "m: Move = b.push_san('Nf3')\n"
        "o: Outcome | None = b.outcome()\n"
        "reveal_type(b.copy())\n"
        "reveal_type(san_to_uci(b'e4'))\n"
        "reveal_type(san_to_uci(['e4']))\n"
        "b.push_san(3)\n",
        encoding="utf-8")
    report, _ = mypy(str(script))
    said = [line.split(": ", 1)[1] for line in report.splitlines() if "uses_board.py:" in line]
    assert said == [
        'note: Revealed type is "fastpgn.board.face.Board"',
        'note: Revealed type is "bytes"',
        'note: Revealed type is "list[str]"',
        'error: Argument 1 to "push_san" of "BoardCore" has incompatible type "int"; expected "str"  [arg-type]',
    ], report


def test_the_scanner_kernel_is_typed_once_for_both_backends(tmp_path):
    """fastpgn.scan.kernel is typed by scan/_kernel.pyi whichever backend is live: options by keyword, and
    a ScanResult whose output the call says (tests/scan/test_kernel_contract.py holds both backends to the stub)."""
    script = tmp_path / "uses_kernel.py"
    script.write_text(
        "from fastpgn.reader import Game\n"
        "from fastpgn.scan import kernel\n"
        "pgn = b'1. e4 *'\n"
        "reveal_type(kernel.lines_from_block(pgn, 0, len(pgn)).output)\n"
        "reveal_type(kernel.lines_from_block(pgn, 0, len(pgn), text=True).output)\n"
        "reveal_type(kernel.games_from_block(pgn, 0, len(pgn), record=Game).output)\n"
        "reveal_type(kernel.headers_from_block(memoryview(pgn), 0, len(pgn)).filtered)\n"
        "kernel.columns_from_block(pgn, 0, len(pgn), 0, 0)\n",
        encoding="utf-8")
    report, _ = mypy(str(script))
    said = [line.split(": ", 1)[1] for line in report.splitlines() if "uses_kernel.py:" in line]
    assert said == [
        'note: Revealed type is "bytes"',
        'note: Revealed type is "list[str]"',
        'note: Revealed type is "list[fastpgn.game.Game]"',
        'note: Revealed type is "int"',
        'error: Too many positional arguments for "columns_from_block"  [call-arg]',
        'note: "columns_from_block" defined in "fastpgn.scan._kernel"',
    ], report
