"""fastpgn's benchmarks (benchmarks/README.md).

Whole-process timings include Python's start-up. An installed fastpgn has
its modules' bytecode compiled (pip compiles it at install); a checkout run
with ``PYTHONDONTWRITEBYTECODE`` set (CI, containers) compiles every module
at every start, 0.1-0.2 s a run on the 2-core machine. The harnesses time
the installed case: importing this package writes the checkout's bytecode
(``bytecode``), and ``benchmarks.ab`` does it for both of its trees.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def bytecode(tree: Path) -> None:
    """Write the bytecode of ``tree``'s fastpgn and benchmarks packages (as pip does at install; kept under
    __pycache__)."""
    for folder in ("fastpgn", "benchmarks"):
        compileall.compile_dir(str(Path(tree) / folder), quiet=2)


bytecode(Path(__file__).resolve().parent.parent)
