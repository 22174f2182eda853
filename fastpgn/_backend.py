"""Which kernels are live: the FASTPGN_IMPLEMENTATION switch, read once at import.

``auto`` (the default) uses a compiled kernel when it imports and the
pure-Python twin otherwise; ``cython`` never falls back (the ImportError says
why); ``python`` always uses the twin. Any other value is an error.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

CHOICES = ("auto", "cython", "python")


def requested() -> str:
    value = os.environ.get("FASTPGN_IMPLEMENTATION", "auto").strip().lower() or "auto"
    if value not in CHOICES:
        raise ImportError(
            f"FASTPGN_IMPLEMENTATION={value!r} is not one of {', '.join(CHOICES)}"
        )
    return value


def load(name: str) -> tuple[ModuleType, str]:
    """Return ``(module, "cython"|"python")`` for kernel ``fastpgn.<name>``."""
    impl = requested()
    if impl != "python":
        try:
            return importlib.import_module(f"fastpgn.{name}_cy"), "cython"
        except ImportError as exc:
            if impl == "cython":
                raise ImportError(
                    f"FASTPGN_IMPLEMENTATION=cython but the compiled kernel "
                    f"fastpgn.{name}_cy did not import ({exc}); build it with "
                    f"FASTPGN_IMPLEMENTATION=cython pip install -e ."
                ) from exc
    return importlib.import_module(f"fastpgn.{name}_py"), "python"


def available(name: str) -> list[tuple[str, ModuleType]]:
    """Every importable backend of kernel ``name`` as ``[(id, module)]``: for tests."""
    found = [("py", importlib.import_module(f"fastpgn.{name}_py"))]
    try:
        found.append(("cy", importlib.import_module(f"fastpgn.{name}_cy")))
    except ImportError:
        if requested() == "cython":
            raise
    return found
