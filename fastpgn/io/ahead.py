"""Items made on a thread of their own, a bounded number ahead of their reader: the readers' blocks
(``fastpgn._parallel``) and the Parquet release's batches (``fastpgn.io.lichess_parquet``); and an
iterator's first item, taken early, put back in front of the rest (``chained``)."""

from __future__ import annotations

END = object()      # (what the thread hands over after the last item)


def chained(first, rest):
    """``first`` (None: nothing, ``rest`` was empty), then the items of ``rest``, which is closed with this
    generator (if it can be)."""
    try:
        if first is not None:
            yield first
            yield from rest
    finally:
        close = getattr(rest, "close", None)
        if close is not None:
            close()


def read_ahead(items, depth: int = 2, name: str = "fastpgn-read"):
    """Iterate ``items`` (an iterator, closed at its end on its thread) run on a thread of its own, at most
    ``depth`` items ahead; an exception it raises is raised here, after the items before it.

    Closing this generator stops the thread: at once if it waits to hand an
    item over, else once the item it makes is made.
    """
    import queue
    import threading

    ready: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, END))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread, raised there
            put((False, exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    try:
        while True:
            ok, item = ready.get()
            if not ok:
                raise item
            if item is END:
                return
            yield item
    finally:
        stop.set()
        # A thread blocked in a read of a stalled pipe cannot be stopped: it closes the input itself once
        # the read returns (its finally above); anything else ends within milliseconds.
        thread.join(5.0)
