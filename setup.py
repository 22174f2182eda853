"""Build the compiled kernels; everything else lives in pyproject.toml.

FASTPGN_IMPLEMENTATION=auto (default): each *_cy.pyx extension is optional, so
a machine without a compiler still installs the pure-Python backend.
FASTPGN_IMPLEMENTATION=cython: the extensions are required (CI).
FASTPGN_IMPLEMENTATION=python: build no extension.
"""

import glob
import os

from setuptools import Extension, setup

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
    if cythonize is not None:
        sources = sorted(glob.glob("fastpgn/**/*_cy.pyx", recursive=True))
        extensions = [
            Extension(
                path[:-4].replace("/", "."),
                [path],
                optional=(impl == "auto"),
                extra_compile_args=["-O3"],
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
