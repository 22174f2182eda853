"""Settings of a command's process, made once at its start (``python -m fastpgn``, the ``fastpgn`` script).

They suit a command that runs a while over blocks of one size and then
ends; the library (``read_arrow`` in a user's own program) sets nothing.
A setting the user has made wins over each.
"""

from __future__ import annotations

import os

# glibc's mallopt parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def settle() -> None:
    """The command's process settings."""
    # pyarrow imports numpy, whose OpenBLAS starts a thread per core that spins on start (0.1 s of CPU a
    # run); no command does linear algebra
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if _keep_freed_memory() and "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        # pyarrow's buffers from that heap too: a Parquet conversion peaks 20% lower (353 against 446 MB
        # at -j 2), for the same or less time and CPU (docs/performance.md). Read when pyarrow is first
        # loaded, after this.
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    # Elsewhere pyarrow keeps its own allocator, mimalloc, which returns freed pages to the kernel after
    # 10 ms, and the next row group faults them in again, zeroed: kept, a Parquet conversion was 3% faster.
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")


def _keep_freed_memory() -> bool:
    """glibc: the buffers of up to 32 MiB a block's columns and text are written into come from the heap, and
    the heap keeps what is freed (up to 1 GiB) for the next block, instead of mapping fresh pages from the
    kernel and returning them at every block (by default buffers past a threshold are mapped apart, and the
    threshold stops rising at 32 MiB). The pages are touched once, not per block: a CSV conversion spent
    1.0-1.5 s per GB in the kernel zeroing pages, 0.2 s so; its peak memory 84 -> 103 MB
    (docs/performance.md). True when it was set so."""
    if any(name in os.environ for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")):
        return False
    import platform

    if platform.libc_ver()[0] != "glibc":
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 1 << 30))
