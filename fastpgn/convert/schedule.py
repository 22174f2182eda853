"""The dump converter's scheduling: blocks read ahead on their own thread, handed to the workers, and
their results taken back in input order.

- the input's own thread (:class:`~fastpgn.io.ahead.ReadAhead`), which
  decompresses and cuts game-aligned blocks ahead of the main thread;
- :func:`start_workers`: threads, processes, or none, as the live kernel
  allows; each worker makes its format's :class:`~fastpgn.convert.chunks.BlockResult`
  of a block (``_work``);
- :class:`OrderedScheduler`: keeps the workers busy and gives back each
  block with its result in input order (the one ordered pool,
  :class:`~fastpgn.io.ordered.InOrder`); on an error it cancels what has
  not begun and waits for what has. Several schedulers may share one pool
  (many inputs converted at once): each then waits for its own blocks only,
  and the pool outlives them.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, wait

from fastpgn import scan as _scan
from fastpgn.convert.chunks import BlockResult, ChunkFormat
from fastpgn.errors import Rejected
from fastpgn.io.ahead import ReadAhead
from fastpgn.io.ordered import Done, InOrder
from fastpgn.io.sources import Block

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# ---------------------------------------------------------------- worker side


class WorkerSetup:
    """What a worker's kernel calls take besides the block: the opening table, the moves hook, the filter plan."""

    __slots__ = ("openings", "hook", "where")

    def __init__(self, openings: Any, hook: Any, where: Any) -> None:
        self.openings = openings
        self.hook = hook
        self.where = where


# How much lower than the run's other threads the workers' priority is (a nice increment; Linux threads, any
# worker process), and the Parquet encoders' (threads). The reader (decompressing, cutting) is one thread the
# whole run waits on, and the writer (appends, fsyncs, renames) another, while workers and encoders are
# interchangeable: with more busy threads than cores, an equal share starves the serial stages (the lines at
# -j 2 on two cores, the reader then their bound: 8% slower without it, 2026-11-28; Parquet, when one writer
# thread still encoded every row group: 15%). Raising one's own niceness needs no privilege.
WORKER_NICENESS = 10

_FORMAT: ChunkFormat | None = None      # set in each worker (once, by _init_worker)
_SETUP: WorkerSetup | None = None


def _init_worker(fmt: ChunkFormat, openings_map: Any, validate: bool, uci: bool, in_pool: bool = True,
                 where: Any = None) -> None:
    global _FORMAT, _SETUP
    if in_pool:
        # Ctrl-C reaches the whole process group: the main process alone handles it.
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _exit_with_parent()
        _yield_to_serial_stages(thread=False)
    # ``where`` is a Where's spec (a plain tuple): it crosses to worker processes pickled.
    _SETUP = WorkerSetup(_scan.kernel.opening_table(openings_map), _moves_hook(validate, uci),
                          _scan.kernel.where_plan(where))
    _FORMAT = fmt


def _exit_with_parent() -> None:
    """End this worker process when the converter that started it is gone.

    A killed converter (SIGKILL, OOM) cannot shut its pool down, and the
    workers would wait on their queue forever; a daemon thread notices the
    new parent and leaves.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="fastpgn-parent-watch", daemon=True).start()


def _yield_to_serial_stages(thread: bool = True) -> None:
    """Lower the calling worker's priority by WORKER_NICENESS: its thread (Linux, where a thread has a
    niceness of its own), or its process."""
    try:
        if not thread:
            if hasattr(os, "nice"):     # (not on Windows)
                os.nice(WORKER_NICENESS)
        elif sys.platform.startswith("linux"):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                           os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + WORKER_NICENESS)
    except OSError:     # (a sandbox that forbids it: the run goes on at the usual priority)
        pass


def start_encoders(jobs: int) -> ThreadPoolExecutor:
    """The threads that encode Parquet row groups (``tables.RowGroupEncoders``): ``jobs`` of them, threads
    whatever the backend (pyarrow encodes without the GIL), yielding to the serial stages as the workers do."""
    return ThreadPoolExecutor(jobs, thread_name_prefix="fastpgn-encoder", initializer=_yield_to_serial_stages)


def _moves_hook(validate: bool, uci: bool) -> Any:
    if not (validate or uci):
        return None
    from fastpgn.board import moves_hook

    return moves_hook(uci=uci)


def _work(data: Any, offset: int, at_stream_start: bool) -> BlockResult:
    """One block, on a worker: what the run's format makes of it."""
    assert _FORMAT is not None  # start_workers ran _init_worker in this process first
    return _FORMAT.block(data, offset, at_stream_start, _SETUP)


def start_workers(jobs: int, fmt: ChunkFormat, table: Any, validate: bool, uci: bool, where: Any) -> Executor | None:
    """Where blocks are turned into results: threads, processes, or inline (None).

    The compiled kernel reads and writes without the GIL, and zstd and
    gzip release it too, so threads share the work with no copying
    between processes; the reader thread decompresses and cuts blocks
    meanwhile, which is why even ``-j 1`` gets a worker thread. With
    --validate and --uci the compiled kernel replays the games on the
    compiled board without the GIL too, those set up from a plain FEN
    included; a game with an illegal move, or a FEN with other
    whitespace or escapes, is finished with the GIL.
    The pure backend holds the GIL throughout: it gets worker processes
    (or, with one job, the main process), spawned, so a script of one's
    own that runs a Converter on the pure backend needs the usual
    ``if __name__ == "__main__":`` guard. ``where`` is a Where's spec.
    Either way the workers run WORKER_NICENESS below the other threads
    (threads on Linux, where a thread has a niceness of its own; worker
    processes wherever ``os.nice`` exists).
    """
    args = (fmt, table, validate, uci)
    kernel = _scan.kernel
    if getattr(kernel, "RELEASES_GIL", False) and (
            not (validate or uci) or getattr(kernel, "REPLAYS_WITHOUT_GIL", False)):
        _init_worker(*args, in_pool=False, where=where)
        return ThreadPoolExecutor(jobs, thread_name_prefix="fastpgn", initializer=_yield_to_serial_stages)
    if jobs > 1:
        # Started fresh, not forked: the main process may run threads by now (indexed_bzip2's
        # decoder, tqdm's monitor), and a fork copies their locks in whatever state they are.
        return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker, initargs=(*args, True, where))
    _init_worker(*args, in_pool=False, where=where)
    return None


# ---------------------------------------------------------------- main side

def truncated_result(block: Block) -> BlockResult:
    """A block that holds the start of a game the damage cut short: that game, rejected, if it has text."""
    text = bytes(block.data)
    if not text.strip():
        return BlockResult(None, 0, 0, [], 0)
    reason, error_offset = block.truncation()
    return BlockResult(None, 0, 1, [Rejected(block.offset, 1, reason, error_offset, text)], 0)


class OrderedScheduler:
    """Blocks to the workers, results back in input order.

    Iterating gives ``(block, result, data)`` for each block of ``blocks``
    (read ahead on the input's own thread, ``reader``, a
    :class:`~fastpgn.io.ahead.ReadAhead` started here), in input order, with
    up to ``depth`` blocks in the workers' hands meanwhile (the one ordered
    pool, :class:`~fastpgn.io.ordered.InOrder`; an error of the reader is
    raised at once). ``data`` is a copy of the block's bytes where one was
    kept (a worker process got one; ``keep_bytes`` asks for one when the
    work is done inline), else None: the block's own ``data`` then stays
    readable until ``block.release()``, which is the caller's to call once
    done with it. A pool that is not ``owned`` serves other schedulers too:
    it is left running at the end, and ``cancel`` waits for this
    scheduler's blocks alone.
    """

    def __init__(self, pool: Executor | None, blocks: Any, depth: int, keep_bytes: bool, owned: bool = True) -> None:
        self.pool = pool
        self.owned = owned
        self._inline = pool is None
        self._threads = isinstance(pool, ThreadPoolExecutor)     # threads read the block in place
        self.depth = depth
        self.keep_bytes = keep_bytes
        self._order: InOrder | None = None
        try:
            self.reader = ReadAhead(blocks, name="fastpgn-reader")
            self._order = InOrder(self.reader, self._submit, depth, defer_errors=False)
        except BaseException:
            self.cancel()
            raise

    @property
    def pending(self) -> Any:
        """The blocks in the workers' hands or waiting to be handed back: ``((block, data), job)`` each."""
        return self._order.pending if self._order is not None else ()

    def __iter__(self) -> Iterator[tuple[Block, BlockResult, Any]]:
        assert self._order is not None  # (made in __init__, or __init__ raised)
        for (block, data), result in self._order:
            yield block, result, data

    def _submit(self, block: Block) -> Any:
        if block.truncated:
            return (block, None), Done(truncated_result(block))
        if self._inline:
            data = bytes(block.data) if self.keep_bytes else None
            result = _work(block.data, block.offset, block.at_stream_start)
            block.release()
            return (block, data), Done(result)
        pool = self.pool
        assert pool is not None  # not inline: the pool stays until cancel() or close() ends the run
        if self._threads:
            return (block, None), pool.submit(_work, block.data, block.offset, block.at_stream_start)
        data = bytes(block.data)
        job = pool.submit(_work, data, block.offset, block.at_stream_start)
        block.release()
        return (block, data), job

    def cancel(self) -> None:
        """After an error: cancel the blocks not begun, and wait for the workers to finish theirs."""
        if self.pool is not None:
            jobs = self._order.cancel() if self._order is not None else []
            if not self.owned:
                wait(jobs)      # the blocks already in a shared pool's hands, and no other run's
                self.pool = None
                return
            # Workers finish the one block each has in hand (milliseconds; worker processes ignore
            # Ctrl-C), so nothing of this run outlives it. Not wait=False: a process pool left
            # running can fail at interpreter exit ("Exception ignored ... Bad file descriptor").
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def close(self) -> None:
        """At the end of a run: the reader thread asked to end, the workers shut down."""
        reader = getattr(self, "reader", None)
        if reader is not None:
            reader.cancel()     # Converter.run waits for it, then closes the input
        if self.pool is not None and self.owned:
            self.pool.shutdown()
            self.pool = None
