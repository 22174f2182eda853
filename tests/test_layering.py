"""The layers: the command line (``fastpgn.cli``) sits on the library, and the library never imports it; the rules
(lichess's tables, the schema) are a floor that imports no kernel, source or face; the kernel, the sources and the
Parquet writer import no face."""

from __future__ import annotations

import ast
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fastpgn

# Every module of the package but the command line's and ``python -m fastpgn``'s.
LIBRARY = sorted(m.name for m in pkgutil.walk_packages(fastpgn.__path__, "fastpgn.")
                 if m.name != "fastpgn.__main__" and m.name != "fastpgn.cli" and not m.name.startswith("fastpgn.cli."))


def test_the_library_never_imports_the_command_line():
    assert "fastpgn.notations.crypt" in LIBRARY and "fastpgn.engine.analysis" in LIBRARY
    script = ("import importlib, sys\n"
              f"for name in {LIBRARY!r}:\n"
              "    importlib.import_module(name)\n"
              "print(sorted(m for m in sys.modules if m == 'argparse' or m.split('.')[:2] == ['fastpgn', 'cli']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n", f"the library imported {done.stdout.strip()}"


def test_every_command_is_in_the_cli_package():
    from fastpgn import cli

    assert all(target.startswith("fastpgn.cli.") for target in cli.SUBCOMMANDS.values())
    for target in cli.SUBCOMMANDS.values():
        module, _, function = target.partition(":")
        __import__(module)
        assert callable(getattr(sys.modules[module], function or "main"))


def test_the_old_import_paths_are_gone():
    # Their aliases were removed; a program on an old path gets ImportError, not another module.
    import importlib

    for old in ("fastpgn.sources", "fastpgn.lichess_parquet", "fastpgn.pipeline", "fastpgn.analyse",
                "fastpgn.formats"):
        with pytest.raises(ImportError):
            importlib.import_module(old)


PACKAGE = Path(fastpgn.__file__).parent
#: The floor of rules: lichess's tables, the analysis schema and its formulas, the openings map. They import
#: only each other, the board and the errors, so the kernel, the sources and every face may read them.
RULES = ("fastpgn.lichess", "fastpgn.schema", "fastpgn.accuracy", "fastpgn.openings")
FLOOR = (*RULES, "fastpgn.errors", "fastpgn.board")
#: The faces: they open sources, run the kernel and hand out what users read; nothing below imports them.
FACES = ("fastpgn.arrow", "fastpgn.oneliner", "fastpgn.reader", "fastpgn.filters", "fastpgn.writer",
         "fastpgn.convert", "fastpgn.spark", "fastpgn.explorer", "fastpgn.report", "fastpgn.engine",
         "fastpgn.notations", "fastpgn.cli")


def _is_module(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.is_dir() or path.with_suffix(".py").exists()


def _imports(path: Path) -> set[str]:
    """Every fastpgn module that ``path`` imports, at its top or inside a function (a Cython file: each line
    that imports or cimports from fastpgn)."""
    names = set()
    if path.suffix in (".pyx", ".pxi"):
        for module, what in re.findall(r"^\s*from\s+(fastpgn[\w.]*)\s+c?import\s+([\w, ]+)", path.read_text(), re.M):
            names.update(f"{module}.{n.strip()}" if _is_module(f"{module}.{n.strip()}") else module
                         for n in what.split(","))
        return names
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: a relative import"
            base = node.module or ""
            # "from fastpgn import scan" imports the module fastpgn.scan, "from fastpgn.scan import kernel" fastpgn.scan
            names.update(f"{base}.{a.name}" if _is_module(f"{base}.{a.name}") else base for a in node.names)
    return {name for name in names if name == "fastpgn" or name.startswith("fastpgn.")}


def _module_path(name: str) -> Path:
    path = PACKAGE.parent / name.replace(".", "/")
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _within(name: str, rooms) -> bool:
    return any(name == room or name.startswith(room + ".") for room in rooms)


@pytest.mark.parametrize("rule", RULES)
def test_the_rules_import_only_each_other_the_board_and_the_errors(rule):
    imported = _imports(_module_path(rule))
    assert all(_within(name, FLOOR) for name in imported), sorted(n for n in imported if not _within(n, FLOOR))


@pytest.mark.parametrize("room", ["scan", "io", "parquet"])
def test_the_kernel_the_sources_and_parquet_import_no_face(room):
    """The kernel, the sources and the Parquet writer sit below the faces (read_*, iter_lines, read_arrow)."""
    files = sorted(p for p in (PACKAGE / room).iterdir() if p.suffix in (".py", ".pyx", ".pxi"))
    assert len(files) > 3
    for path in files:
        faces = sorted(name for name in _imports(path) if _within(name, FACES))
        assert not faces, f"{path.name} imports {faces}"
