"""Work on a pool's workers, results handed back in input order (:class:`InOrder`): the one ordered pool of
the converter (``fastpgn.convert.schedule``), the readers' ``jobs=`` (``fastpgn._parallel``) and ``analyse``
(``fastpgn.engine.pipeline``).

The pool is the caller's (threads, processes, or none), and so is what a
worker does; this keeps the workers busy, at most ``depth`` items in their
hands or waiting to be handed back (the backpressure), and gives each item
back at its turn.
"""

from __future__ import annotations

from collections import deque

_END = object()


class Done:
    """The result of an item worked out at once (inline, or skipped): what a ``submit`` returns in place of
    a pool's future."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def result(self, timeout: float | None = None):
        return self.value

    def done(self) -> bool:
        return True

    def cancel(self) -> bool:
        return False


class InOrder:
    """``(kept, result)`` for each item of ``items``, in input order, each handed to ``submit(item)``,
    which returns ``(kept, job)``: what to hand back with the result (the item, or what the caller keeps of
    it: a block's bytes copied before its buffer went back) and a pool's future
    (``concurrent.futures.Future``) or a :class:`Done`.

    At most ``depth`` items are submitted and not yet handed back
    (``pending``). An exception of ``items`` comes after the results of
    every item before it (``defer_errors``; else at once, the items still
    pending left to ``cancel``), but Ctrl-C (``KeyboardInterrupt``), raised
    at once; one of the work at its item's turn. With
    ``waiting``, a result not ready is waited for ``every`` seconds at a
    time, ``waiting()`` called between (a progress bar's tick).

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     [r for _, r in InOrder(iter(range(6)), lambda i: (i, pool.submit(pow, i, 2)), 3)]
    [0, 1, 4, 9, 16, 25]
    """

    def __init__(self, items, submit, depth: int, defer_errors: bool = True, waiting=None,
                 every: float = 0.25) -> None:
        self._items = items
        self._submit = submit
        self.depth = depth
        self._defer = defer_errors
        self._waiting = waiting
        self._every = every
        self.pending: deque = deque()

    def __iter__(self):
        more = True
        error = None
        pending = self.pending
        while True:
            while more and len(pending) < self.depth:
                try:
                    item = next(self._items, _END)
                except Exception as exc:  # noqa: BLE001 - raised once the items before it are handed back
                    # (not Ctrl-C: it stops the caller now, whatever the workers still hold)
                    if not self._defer:
                        raise
                    item, error = _END, exc
                if item is _END:
                    more = False
                    break
                pending.append(self._submit(item))
            if not pending:
                if error is not None:
                    raise error
                return
            item, job = pending[0]
            result = self._result(job)
            pending.popleft()
            yield item, result

    def _result(self, job):
        if self._waiting is None:
            return job.result()
        from concurrent.futures import TimeoutError as NotYet

        while True:
            try:
                return job.result(self._every)
            except NotYet:
                self._waiting()

    def finished(self):
        """The pending items whose results are ready, from the next one to hand back up to the first that is
        not: ``(item, result)`` each, taken out of ``pending`` (what an interrupted run still writes)."""
        while self.pending and self.pending[0][1].done() and not self.pending[0][1].cancelled():
            item, job = self.pending.popleft()
            yield item, job.result()

    def cancel(self) -> list:
        """Cancel the pending items not begun; the futures of those begun (to wait for, if need be)."""
        jobs = [job for _, job in self.pending if not isinstance(job, Done)]
        for job in jobs:
            job.cancel()
        return jobs
