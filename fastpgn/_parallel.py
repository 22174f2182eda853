"""The readers' threads (``jobs=`` of read_games, read_lines, read_arrow, to_parquet): a source's blocks
read ahead on a thread of their own, turned into results on worker threads, handed back in input order.

The compiled kernel scans, writes columns and replays moves without the GIL,
so worker threads share the work with no copy between processes; the pure
kernel holds the GIL, so threads give it the same output and no speed
(``default_jobs`` gives it one). Memory stays bounded: at most ``2 * jobs``
blocks are in the workers' hands or waiting to be handed back, and
``AHEAD`` more wait, read, for a worker. Closing the iteration early (a
caller that stops reading) cancels the blocks not begun, waits for those
begun (a block is milliseconds of work) and ends the reading thread, which
closes the input; no thread outlives it (but a reading thread blocked on a
stalled pipe, which ends, closing the input, once its read returns).
"""

from __future__ import annotations

import os

from fastpgn.io.ahead import read_ahead

# queue, threading and concurrent.futures are imported by the first reader that runs threads: a reader of
# one thread (or of a file's headers) does without them (start-up: docs/performance.md).

#: Blocks read ahead of the workers (each a block of the input in memory).
AHEAD = 2


def default_jobs() -> int:
    """The workers of ``jobs=None``: every core (``os.cpu_count()``, the converter's ``-j`` default) where the
    live kernel runs without the GIL; one (no thread) for the pure-Python kernel, which threads do not speed up.

    >>> default_jobs() >= 1
    True
    """
    from fastpgn import scan as _scan

    if not getattr(_scan.kernel, "RELEASES_GIL", False):
        return 1
    return os.cpu_count() or 1


def jobs_for(jobs) -> int:
    """``jobs`` checked: None for ``default_jobs()``, else a whole number of workers, at least 1."""
    if jobs is None:
        return default_jobs()
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of workers, at least 1 (None: every core), not {jobs!r}")
    return jobs


def ordered(items, work, jobs: int, skip=None, ahead: bool = True):
    """``(item, work(item))`` for each item of ``items``, in order, ``work`` run on ``jobs`` worker threads
    and ``items`` read on a thread of its own (``read_ahead``; with ``ahead`` false, on the calling thread as
    results are taken: where making an item is cheap, as reading a plain file, a thread of its own only
    costs its share of the GIL); an item ``skip(item)`` is true for comes as ``(item, None)``, in its place.

    At most ``2 * jobs`` items are in the workers' hands or waiting to be
    handed back, and ``AHEAD`` more are read (the one ordered pool,
    ``fastpgn.io.ordered.InOrder``). An exception of ``items`` comes after
    the results of every item before it; one of ``work`` at its item's
    turn. Closing the generator cancels the items not begun and waits for
    those begun, and closes ``items``.

    >>> list(ordered(iter(range(4)), lambda i: i * 10, 2))
    [(0, 0), (1, 10), (2, 20), (3, 30)]
    """
    from concurrent.futures import ThreadPoolExecutor

    from fastpgn.io.ordered import Done, InOrder

    source = read_ahead(items, AHEAD) if ahead else items
    pool = ThreadPoolExecutor(jobs, thread_name_prefix="fastpgn-worker")

    def submit(item):
        return item, Done(None) if skip is not None and skip(item) else pool.submit(work, item)

    order = InOrder(source, submit, 2 * jobs)
    try:
        yield from order
    finally:
        order.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        source.close()
