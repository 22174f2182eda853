"""Items made on a thread of their own, a bounded number ahead of their reader (:class:`ReadAhead`): the
converter's blocks, the readers' blocks (``fastpgn._parallel``), the Parquet release's batches
(``fastpgn.io.lichess_parquet``) and ``analyse``'s games; and an iterator's first item, taken early, put back
in front of the rest (``chained``)."""

from __future__ import annotations

END = object()      # (what the thread hands over after the last item)


def chained(first, rest):
    """``first`` (None: nothing, ``rest`` was empty), then the items of ``rest``, which is closed with this
    generator (if it can be).

    >>> list(chained(1, iter([2, 3])))
    [1, 2, 3]
    """
    try:
        if first is not None:
            yield first
            yield from rest
    finally:
        close = getattr(rest, "close", None)
        if close is not None:
            close()


class ReadAhead:
    """``items`` (an iterator) run on a thread of its own, at most ``depth`` items ahead of the thread
    that iterates this.

    Iterating gives the items in order; an exception ``items`` raises is
    raised here, after the items before it, and ends the iteration.
    With ``close_items`` the thread closes ``items`` as it ends (if it can
    be closed). ``cancel`` asks the thread to end early: it does at once
    if it waits to hand an item over, else once the item it makes is made
    (a few milliseconds from a file). From a stalled pipe that may be
    never, so ``stop`` waits a limited time, and ``then`` leaves what must
    follow the thread (closing the input) to the thread itself.

    >>> ahead = ReadAhead(iter(range(5)), depth=2)
    >>> list(ahead), ahead.stop()
    ([0, 1, 2, 3, 4], True)
    """

    def __init__(self, items, depth: int = 2, name: str = "fastpgn-read", close_items: bool = False) -> None:
        import queue
        import threading

        self._items = items
        self._close_items = close_items
        self._queue: queue.Queue = queue.Queue(depth)
        self._full = queue.Full
        self._stopping = False
        self._ended = False
        self._lock = threading.Lock()
        self._exited = False
        self._on_exit = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            self._produce()
        finally:
            if self._close_items:
                close = getattr(self._items, "close", None)
                if close is not None:
                    close()
            with self._lock:
                self._exited = True
                on_exit, self._on_exit = self._on_exit, None
            if on_exit is not None:
                on_exit()

    def _produce(self) -> None:
        try:
            for item in self._items:
                if not self._offer((True, item)):
                    return
        except BaseException as exc:  # noqa: B036 - handed to the iterating thread, which raises it
            self._offer((False, exc))
            return
        self._offer((True, END))

    def _offer(self, item) -> bool:
        while not self._stopping:
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except self._full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        if self._ended:
            raise StopIteration
        ok, item = self._queue.get()
        if ok and item is not END:
            return item
        self._ended = True
        if not ok:
            raise item
        raise StopIteration

    def cancel(self) -> None:
        """Ask the thread to end (without waiting for it)."""
        self._stopping = True

    def stop(self, timeout: float | None = None) -> bool:
        """Cancel and wait up to ``timeout`` seconds; whether the thread has ended."""
        self.cancel()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def then(self, action) -> None:
        """Run ``action`` once the thread has ended: now if it has, else on the thread as it ends."""
        with self._lock:
            if not self._exited:
                self._on_exit = action
                return
        action()


def read_ahead(items, depth: int = 2, name: str = "fastpgn-read"):
    """Iterate ``items`` (an iterator, closed at its end on its thread) run on a thread of its own, at most
    ``depth`` items ahead (a :class:`ReadAhead`); an exception it raises is raised here, after the items
    before it.

    Closing this generator stops the thread: at once if it waits to hand an
    item over, else once the item it makes is made.

    >>> list(read_ahead(iter("abc")))
    ['a', 'b', 'c']
    """
    ahead = ReadAhead(items, depth, name, close_items=True)
    try:
        yield from ahead
    finally:
        # A thread blocked in a read of a stalled pipe cannot be stopped: it closes the input itself once
        # the read returns; anything else ends within milliseconds.
        ahead.stop(5.0)
