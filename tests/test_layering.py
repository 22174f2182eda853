"""The layers: the command line (``fastpgn.cli``) sits on the library, and the library never imports it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

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
