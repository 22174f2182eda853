"""Build the compiled kernels; everything else lives in pyproject.toml.

FASTPGN_IMPLEMENTATION=auto (default): each *_cy.pyx extension is optional, so
a machine without a compiler still installs the pure-Python backend.
FASTPGN_IMPLEMENTATION=cython: the extensions are required (CI).
FASTPGN_IMPLEMENTATION=python: build no extension.
"""

import glob
import os
import re
import sys
import tomllib

from setuptools import Extension, setup


def _cython_below_floor() -> str | None:
    """Why the installed Cython must not build the kernels (older than pyproject.toml allows), or None.

    pip's isolated build installs an allowed Cython itself; this guards builds that use the one at hand
    (--no-build-isolation, setup.py build_ext, tools/asan.sh)."""
    import Cython

    with open("pyproject.toml", "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    floor = next(re.search(r">=\s*([0-9.]+)", r).group(1) for r in requires if re.match(r"(?i)cython\b", r))
    have = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", Cython.__version__)
    if tuple(int(n or 0) for n in have.groups()) >= tuple(int(n) for n in (floor + ".0.0").split(".")[:3]):
        return None
    return f"Cython {Cython.__version__} is older than {floor}, the oldest that builds the kernels right"

impl = os.environ.get("FASTPGN_IMPLEMENTATION", "auto").strip().lower() or "auto"
if impl not in ("auto", "cython", "python"):
    raise SystemExit(f"FASTPGN_IMPLEMENTATION={impl!r}: use auto, cython or python")

ext_modules = []
if impl != "python":
    try:
        from Cython.Build import cythonize
    except ImportError:
        if impl == "cython":
            raise
        cythonize = None
    if cythonize is not None and (why := _cython_below_floor()):
        if impl == "cython":
            raise SystemExit(why)
        print(f"{why}: the pure-Python backend only", file=sys.stderr)
        cythonize = None
    if cythonize is not None:
        sources = sorted(glob.glob("fastpgn/**/*_cy.pyx", recursive=True))
        extensions = [
            Extension(
                path[:-4].replace("/", "."),
                [path],
                optional=(impl == "auto"),
                # -ffp-contract=off: no fused multiply-add, so the analysis columns keep the pure twin's doubles
                extra_compile_args=["-O3", "-ffp-contract=off"],
            )
            for path in sources
        ]
        # The one place the kernels' Cython directives are set: the .pyx files carry no
        # `# cython:` header, so every build (pip, setup.py, tools/asan.sh) compiles the same C.
        ext_modules = cythonize(
            extensions,
            language_level=3,
            compiler_directives={
                "boundscheck": False,
                "wraparound": False,
                "cdivision": True,
                "initializedcheck": False,
            },
        )

setup(ext_modules=ext_modules)
