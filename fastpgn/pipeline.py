"""The dump converter: PGN in, chunk files of 22-field lines out, on every core, nothing lost.

Design. A reader thread decompresses the input and cuts it into
game-aligned blocks (``fastpgn.sources.cut_blocks``: cuts depend only on
the data); the main thread hands them to the workers, which turn a block
into lines and compress them as one independent gzip member or zstd frame,
and passes the results on in input order to a writer thread, which appends
them to the chunk files. With the compiled kernel the workers are threads: the
kernel, zstd and ISA-L all run without the GIL, so no block is copied
between processes (``Converter._pool`` says when processes are used
instead). One zstd stream cannot be decoded by more than one thread, so on
a machine of many cores that decoding bounds the run: the reader thread
(``_BlockReader``) does nothing else, and the appends, fsyncs, renames and
checkpoints of the chunk files are the writer thread's (``_ChunkWriter``).
A chunk holds exactly CHUNK_SIZE written games: when a block's lines
straddle a chunk boundary, the writer thread inflates that block's member,
splits its lines and compresses each piece on its own (once per chunk, so
cheap at dump-sized chunks). Every output byte is a pure function of the
input and the options, so any ``-j`` and a ``--resume`` give identical files.

Safety. A chunk is written as ``NAME.tmp`` and renamed when complete. After
each complete chunk a small JSON state (``<input>.fastpgn-state.json``)
records where its successor starts: the block that holds the boundary, the
lines of that block already written, and the counters. ``--resume`` restarts
from that block; a run that finishes replaces it by a hidden record
(``.<input>.fastpgn-done.json``), so that ``--resume`` then does nothing. Bad games are written,
raw and with a ``%`` comment line naming byte, game number and reason, to
``<input>.rejected.pgn``, itself a PGN file; games read = games written +
games rejected.

Ownership. The chunks, state and rejected games of one input in one folder
belong to one run: a run holds a lock file (``.<input>.fastpgn-lock``) while
it writes, and refuses a folder that already holds that input's output
unless told to continue it (``resume``) or replace it (``overwrite``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import stat
import threading
import time
from collections import deque
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fastpgn import _scan, openings as _openings
from fastpgn.errors import InputError, PGNError, PGNSyntaxError
from fastpgn.sources import BLOCK_SIZE, READ_SIZE, Source, check_pgn, cut_blocks, has_moves, open_source

try:
    from isal import igzip as _gzip

    GZIP_LIBRARY = "isal"
    # ISA-L level 2 is both faster and smaller than level 1 on 22-field lines
    # (2026-11-22, 37 MB of lines from the 100 MB corpus: 340 vs 300 MB/s, ratio 2.21 vs 2.15).
    GZIP_LEVEL = 2
except ImportError:  # pragma: no cover - exercised where isal is absent
    import gzip as _gzip

    GZIP_LIBRARY = "zlib"
    GZIP_LEVEL = 1

ZSTD_LEVEL = 3
SUFFIX = {"gz": ".cri.gz", "zst": ".cri.zst", "none": ".cri"}
STATE_VERSION = 1


class OutputError(PGNError):
    """The output folder cannot be written (permissions, full disk)."""


@dataclass
class Options:
    input: str
    chunk_size: int
    output_dir: str | None = None
    compression: str = "gz"
    jobs: int = 0
    errors: str = "skip"
    limit: int | None = None
    openings_map: str | None = None
    resume: bool = False
    overwrite: bool = False
    validate: bool = False
    uci: bool = False
    block_size: int = BLOCK_SIZE
    # fastpgn.filters.Where (or a dict of its keywords): only the games it passes are written;
    # the others are counted in Summary.games_filtered.
    where: object = None


@dataclass
class Summary:
    games_read: int = 0
    games_written: int = 0
    games_rejected: int = 0
    games_filtered: int = 0             # dropped by Options.where: read = written + rejected + filtered
    chunks: int = 0
    bytes_in: int = 0
    raw_bytes_in: int = 0
    seconds: float = 0.0
    backend: str = ""
    workers: int = 1
    resumed_from_chunk: int = 0
    damage: str | None = None
    already_complete: bool = False      # --resume found the run finished: nothing was done
    outputs: list = field(default_factory=list)

    @property
    def mb_per_s(self) -> float:
        return self.bytes_in / 1e6 / self.seconds if self.seconds > 0 else 0.0


# ---------------------------------------------------------------- compression (pure functions)

def compress(data: bytes, kind: str) -> bytes:
    """One gzip member / zstd frame / plain bytes; deterministic (gzip mtime 0)."""
    if kind == "gz":
        return _gzip.compress(data, GZIP_LEVEL, mtime=0)
    if kind == "zst":
        import zstandard

        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)
    return data


def decompress(data: bytes, kind: str) -> bytes:
    if kind == "gz":
        return _gzip.decompress(data)
    if kind == "zst":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


# ---------------------------------------------------------------- worker side

_WORKER: dict = {}


def _init_worker(openings_map, compression: str, validate: bool, uci: bool, in_pool: bool = True,
                 where=None) -> None:
    if in_pool:
        # Ctrl-C reaches the whole process group: the main process alone handles it.
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _exit_with_parent()
    _WORKER["openings"] = _scan.kernel.opening_table(openings_map)
    _WORKER["compression"] = compression
    _WORKER["hook"] = _moves_hook(validate, uci)
    # ``where`` is a Where's spec (a plain tuple): it crosses to worker processes pickled.
    _WORKER["where"] = _scan.kernel.where_plan(where)


def _exit_with_parent() -> None:
    """End this worker process when the converter that started it is gone.

    A killed converter (SIGKILL, OOM) cannot shut its pool down, and the
    workers would wait on their queue forever; a daemon thread notices the
    new parent and leaves.
    """
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="fastpgn-parent-watch", daemon=True).start()


def _moves_hook(validate: bool, uci: bool):
    if not (validate or uci):
        return None
    from fastpgn.board import moves_hook

    return moves_hook(uci=uci)


def _work(data: bytes, offset: int, at_stream_start: bool):
    """Lines of one block, compressed: ``(member, lines, games_read, rejects, games_filtered)``."""
    where = _WORKER.get("where")
    filtered = 0
    if where is None:
        lines, read, rejects = _scan.kernel.lines_from_block(
            data, 0, len(data), offset, 0, at_stream_start, _WORKER["openings"], False, _WORKER["hook"])
    else:
        lines, read, rejects, filtered = _scan.kernel.lines_from_block(
            data, 0, len(data), offset, 0, at_stream_start, _WORKER["openings"], False, _WORKER["hook"], where)
    raw = [(reason, error_offset, number, bytes(data[start:end]))
           for reason, error_offset, number, start, end in rejects]
    return compress(lines, _WORKER["compression"]), read - len(raw) - filtered, read, raw, filtered


def _kept_up_to_line(keep: int, data, offset: int, at_stream_start: bool, raw: list, where) -> tuple[int, list, int]:
    """_games_up_to_line for a filtered block: how many games up to its ``keep``-th written line, the
    rejected among them, and the filtered out among them.

    Which games a filter dropped is not in _work's answer, so the block is read
    again (once a run, where --limit falls) for the numbers of the games it kept.
    """
    records = _scan.kernel.games_from_block(data, 0, len(data), offset, 0, at_stream_start, False, where)[0]
    rejected = {r[2] for r in raw}    # a moves hook rejects games games_from_block keeps
    written = [r[1] for r in records if r[1] not in rejected]
    last = written[keep - 1] if 0 < keep <= len(written) else (0 if keep <= 0 else None)
    if last is None:
        raise AssertionError("the block holds fewer lines than --limit counts")
    raw = [r for r in raw if r[2] <= last]
    return last, raw, last - keep - len(raw)


# ---------------------------------------------------------------- main side

class _Chunks:
    """Chunk files: exactly ``chunk_size`` lines each, written under .tmp and renamed when complete."""

    def __init__(self, folder: Path, prefix: str, opts: Options, index: int, written: int) -> None:
        self.folder = folder
        self.prefix = prefix
        self.kind = opts.compression
        self.size = opts.chunk_size
        self.index = index
        self.lines = 0              # lines in the open chunk
        self.written = written      # lines written in all chunks
        self.file = None
        self.finished: list[Path] = []

    def path(self, index: int) -> Path:
        return self.folder / f"{self.prefix}.part_{index:06d}{SUFFIX[self.kind]}"

    def _tmp(self) -> Path:
        return self.path(self.index).with_name(self.path(self.index).name + ".tmp")

    def room(self) -> int:
        return self.size - self.lines

    def append(self, member: bytes, count: int) -> bool:
        """Append ``count`` lines compressed as ``member``; True when that completed a chunk."""
        if count == 0:
            return False
        if self.file is None:
            self.file = open(self._tmp(), "wb")
        self.file.write(member)
        self.lines += count
        self.written += count
        if self.lines == self.size:
            self.close()
            return True
        return False

    def close(self) -> None:
        if self.file is None:
            return
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        final = self.path(self.index)
        os.replace(self._tmp(), final)
        self.file = None            # only now: until renamed, abandon() still removes the .tmp
        self.finished.append(final)
        self.index += 1
        self.lines = 0

    def abandon(self) -> None:
        """Drop the open chunk's temporary file (after an error: a full disk may fail the close too)."""
        if self.file is not None:
            file, self.file = self.file, None
            try:
                file.close()
            except OSError:
                pass
            try:
                os.unlink(self._tmp())
            except OSError:
                pass


class _BlockReader:
    """The input's own thread: decompresses and cuts blocks ahead of the main thread.

    Iterating it gives the blocks of ``blocks`` (an iterator run on the
    thread) in order; an exception raised there is raised here. At most
    ``depth`` blocks wait, so memory stays bounded by the blocks in flight.
    ``cancel`` asks the thread to end early: it does at once if it waits on
    the main thread, else once the block it is cutting is whole (a few
    milliseconds from a file). From a stalled pipe that may be never, so
    ``stop`` waits a limited time, and ``then`` leaves what must follow the
    thread (closing the input) to the thread itself.
    """

    def __init__(self, blocks, depth: int = 2) -> None:
        self._blocks = blocks
        self._queue: queue.Queue = queue.Queue(depth)
        self._stopping = False
        self._ended = False
        self._lock = threading.Lock()
        self._exited = False
        self._on_exit = None
        self._thread = threading.Thread(target=self._loop, name="fastpgn-reader", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            self._produce()
        finally:
            with self._lock:
                self._exited = True
                on_exit, self._on_exit = self._on_exit, None
            if on_exit is not None:
                on_exit()

    def _produce(self) -> None:
        try:
            for block in self._blocks:
                if not self._offer((block, None)):
                    return
        except BaseException as exc:  # noqa: B036 - handed to the main thread, which re-raises it
            self._offer((None, exc))
            return
        self._offer((None, None))

    def _offer(self, item) -> bool:
        while not self._stopping:
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        if self._ended:
            raise StopIteration
        block, error = self._queue.get()
        if block is not None:
            return block
        self._ended = True
        if error is not None:
            raise error
        raise StopIteration

    def cancel(self) -> None:
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


class _ChunkWriter:
    """The chunk files' own thread: appends, fsyncs, renames and checkpoints, in order.

    Only one thread can decode the input's one zstd stream, and it waits
    while the main thread cannot take its blocks; on a machine of many
    cores every moment the main thread spends elsewhere (a chunk's fsync,
    its writes, a straddling block split and compressed again) idles the
    reader and all the workers at once. Deliveries come through a bounded queue
    and are made in the order they came; the first error (a full disk, say)
    is kept, later deliveries are dropped, and ``check``/``finish`` raise it
    on the main thread, which owns the error handling.
    """

    def __init__(self, deliver, depth: int = 8) -> None:
        self._deliver = deliver
        self._queue: queue.Queue = queue.Queue(depth)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="fastpgn-writer", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self.error is None:
                try:
                    self._deliver(*item)
                except BaseException as exc:  # noqa: B036 - handed to the main thread, which re-raises it
                    self.error = exc

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def put(self, *item) -> None:
        self.check()
        self._queue.put(item)

    def finish(self) -> None:
        """Wait until every delivery is made; raise the first error."""
        self.stop()
        self.check()

    def stop(self) -> None:
        """Make the deliveries already queued and end (the thread drains the queue, so this returns).

        After an error on the main thread too: what was queued lies before
        it in the input (a bad game under ``--errors raise``, Ctrl-C), so
        the chunks it completes are kept, as when the main thread appended.
        """
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


class _RunLock:
    """A lock file held for a run, so that two runs never write one input's chunks at once.

    ``flock`` is released by the kernel when the holder dies (kill -9
    included), so a file left behind never blocks a later run; the holder
    writes its pid in it for the message, and removes it when done.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise OutputError(f"cannot write to {self.path.parent}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pid = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise OutputError(f"{self.path.parent} is in use by another fastpgn run (pid {pid}) "
                                  f"writing {self.path.name[1:-len('.fastpgn-lock')]}") from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)        # the run that held it removed it meanwhile: lock the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.unlink(self.path)    # while still held, so no other run locks a removed file
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


def _is_stream(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _games_up_to_line(keep: int, read: int, raw: list) -> tuple[int, list]:
    """The games of a block up to its ``keep``-th written line: how many, and the rejected among them.

    A block's games are numbered from 1; ``raw`` holds the rejected ones
    (their number third), every other game wrote one line, in order.
    """
    last = keep
    for number in sorted(r[2] for r in raw):
        if number > last:
            break
        last += 1
    return min(last, read), [r for r in raw if r[2] <= last]


def _split_lines(text: bytes, counts: list[int]) -> list[bytes]:
    pieces = []
    pos = 0
    for count in counts:
        end = pos
        for _ in range(count):
            end = text.index(b"\n", end) + 1
        pieces.append(text[pos:end])
        pos = end
    if pos != len(text):
        pieces.append(text[pos:])
    return pieces


class Converter:
    """One run of the dump converter; ``run()`` returns a Summary or raises."""

    def __init__(self, opts: Options, progress=None) -> None:
        if opts.chunk_size < 1:
            raise ValueError("CHUNK_SIZE must be at least 1")
        if opts.compression not in SUFFIX:
            raise ValueError(f"compression must be one of {', '.join(SUFFIX)}")
        if opts.errors not in ("skip", "raise"):
            raise ValueError("errors must be skip or raise")
        self.opts = opts
        self.progress = progress
        self._reader: _BlockReader | None = None     # the run's reader thread, while one runs
        self.jobs = opts.jobs if opts.jobs and opts.jobs > 0 else (os.cpu_count() or 1)
        # stdin, or a pipe such as <(zstdcat dump.pgn.zst): no folder of its own to write beside.
        stdin = opts.input == "-" or _is_stream(opts.input)
        name = "stdin" if stdin else Path(opts.input).name
        self.prefix = name
        if opts.output_dir:
            self.folder = Path(opts.output_dir)
        else:
            self.folder = Path.cwd() if stdin else Path(opts.input).resolve().parent
        self.state_path = self.folder / f"{name}.fastpgn-state.json"
        # A finished run's record, hidden (Spark and globs pass over dot files): --resume then has nothing to do.
        self.done_path = self.folder / f".{name}.fastpgn-done.json"
        self.rejects_path = self.folder / f"{name}.rejected.pgn"
        self.summary = Summary(backend=_scan.BACKEND, workers=self.jobs)
        from fastpgn import filters

        where = filters.as_where(opts.where)
        self.where = where if where else None   # a Where that tests nothing filters nothing

    # -- state for --resume

    def _fingerprint(self, source: Source) -> dict:
        o = self.opts
        return {"version": STATE_VERSION, "input": self.prefix, "input_size": source.size,
                "chunk_size": o.chunk_size, "compression": o.compression, "limit": o.limit,
                "openings_map": o.openings_map, "validate": o.validate, "uci": o.uci,
                "block_size": o.block_size, "gzip": f"{GZIP_LIBRARY}-{GZIP_LEVEL}",
                **({"where": self.where.as_dict()} if self.where is not None else {})}

    def _save_state(self, fingerprint: dict, progress: dict, path: Path | None = None) -> None:
        path = path or self.state_path
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"options": fingerprint, "progress": progress}, indent=1), "utf-8")
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)     # a full disk: no half-written state left beside the chunks
            raise

    def _load_state(self, fingerprint: dict) -> dict | None:
        """With --resume, where the interrupted (or finished) run of these options left off."""
        if not self.opts.resume:
            return None
        for path in (self.state_path, self.done_path):
            if path.exists():
                saved = json.loads(path.read_text("utf-8"))
                if saved.get("options") != fingerprint:
                    raise InputError(f"the run in {self.folder} was made with other options or from another "
                                     "input; run with --overwrite instead of --resume to start over")
                return saved["progress"]
        return None

    # -- the run

    def _pool(self, table) -> Executor | None:
        """Where blocks are turned into compressed lines: threads, processes, or inline (None).

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
        ``if __name__ == "__main__":`` guard.
        """
        opts = self.opts
        args = (table, opts.compression, opts.validate, opts.uci)
        spec = None if self.where is None else self.where.spec()
        kernel = _scan.kernel
        if getattr(kernel, "RELEASES_GIL", False) and (
                not (opts.validate or opts.uci) or getattr(kernel, "REPLAYS_WITHOUT_GIL", False)):
            _init_worker(*args, in_pool=False, where=spec)
            return ThreadPoolExecutor(self.jobs, thread_name_prefix="fastpgn")
        if self.jobs > 1:
            # Started fresh, not forked: the main process may run threads by now (indexed_bzip2's
            # decoder, tqdm's monitor), and a fork copies their locks in whatever state they are.
            return ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_init_worker, initargs=(*args, True, spec))
        _init_worker(*args, in_pool=False, where=spec)
        return None

    def _check_output(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe = self.folder / f".{self.prefix}.fastpgn-probe"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise OutputError(f"cannot write to {self.folder}: {exc.strerror or exc}") from None

    def _owned(self) -> list[Path]:
        """This input's files in the output folder: chunks (and .tmp), resume state, rejected games."""
        names = {self.state_path.name, self.state_path.name + ".tmp", self.rejects_path.name,
                 self.done_path.name, self.done_path.name + ".tmp"}
        parts = f"{self.prefix}.part_"
        try:
            entries = sorted(os.listdir(self.folder))
        except OSError:
            return []
        return [self.folder / n for n in entries if n in names or n.startswith(parts)]

    def _claim_output(self) -> None:
        """Refuse to mix this run's chunks with another run's: --resume continues one, --overwrite replaces it."""
        opts = self.opts
        owned = self._owned()
        if not owned:
            return
        if opts.overwrite:
            for path in owned:
                path.unlink(missing_ok=True)
            return
        named = [p.name for p in owned if not p.name.startswith(".")] or [owned[0].name]   # chunks first
        shown = ", ".join(named[:3]) + (f" and {len(owned) - 3:,} more" if len(owned) > 3 else "")
        if not opts.resume:
            raise OutputError(f"{self.folder} already holds output for {self.prefix} ({shown}): "
                              "add --resume to continue an interrupted run, or --overwrite to replace it")
        if not (self.state_path.exists() or self.done_path.exists()):
            raise OutputError(f"nothing to resume in {self.folder}: it holds output for {self.prefix} "
                              f"({shown}) but no record of the run that wrote it; add --overwrite to "
                              "convert it again")

    def run(self) -> Summary:
        start_time = time.perf_counter()
        table = _openings.load(self.opts.openings_map)     # a bad map is an input error, before any output
        self._check_output()
        lock = _RunLock(self.folder / f".{self.prefix}.fastpgn-lock")
        lock.acquire()
        try:
            self._claim_output()
            source = open_source(self.opts.input, threads=self.jobs)
            try:
                return self._run(source, table, start_time)
            finally:
                self._close(source)
        finally:
            lock.release()

    def _close(self, source: Source) -> None:
        """Close the input once the reader thread has let go of it."""
        reader, self._reader = self._reader, None
        if reader is None or reader.stop(timeout=1.0):
            source.close()
        else:
            # The reader is blocked on a stalled pipe, a read that may never return (Ctrl-C
            # reaches the main thread only): leave it, a daemon, to close the input if it does.
            reader.then(source.close)

    def _run(self, source: Source, table, start_time: float) -> Summary:
        opts = self.opts
        fingerprint = self._fingerprint(source)
        saved = self._load_state(fingerprint)
        if saved and saved.get("complete"):
            s = self.summary
            s.games_read, s.games_written = saved["games_read"], saved["games_written"]
            s.games_rejected, s.chunks = saved["games_rejected"], saved["chunk"]
            s.games_filtered = saved.get("games_filtered", 0)
            s.resumed_from_chunk = saved["chunk"]
            s.already_complete = True
            s.seconds = time.perf_counter() - start_time
            return s
        p = saved or {"chunk": 0, "block_offset": 0, "skip_lines": 0, "games_read": 0,
                      "games_written": 0, "games_rejected": 0, "rejects_size": 0}
        self.summary.resumed_from_chunk = p["chunk"]
        chunks = _Chunks(self.folder, self.prefix, opts, p["chunk"], p["games_written"])
        games_read = p["games_read"]
        rejected = p["games_rejected"]
        filtered = p.get("games_filtered", 0)
        skip_lines = p["skip_lines"]
        rejects_file = None
        if saved and p["rejects_size"]:
            with open(self.rejects_path, "ab") as f:
                f.truncate(p["rejects_size"])
            rejects_file = open(self.rejects_path, "ab")
        else:
            self.rejects_path.unlink(missing_ok=True)   # a file appears with the first rejected game

        head, moves_seen = self._first_bytes(source, p["block_offset"])
        if p["block_offset"] == 0:
            check_pgn(head, source.name)
        # Buffers of blocks already delivered come back here and hold later blocks.
        buffers: list = []
        pool = writer = block_iter = None
        pending: deque = deque()
        damage = None
        done = False
        limit = opts.limit
        written = p["games_written"]    # lines handed to the writer (it may lag behind)
        try:
            pool = self._pool(table)
            writer = _ChunkWriter(lambda *item: self._deliver(chunks, fingerprint, *item))
            block_iter = self._reader = _BlockReader(
                cut_blocks(source.readinto, opts.block_size, p["block_offset"], head, buffers, moves_seen))
            blocks_left = True
            while not done:
                while blocks_left and len(pending) < 2 * self.jobs + 1:
                    block = next(block_iter, None)
                    if block is None:
                        blocks_left = False
                        break
                    # (a filtered run with --limit keeps each block's bytes: _kept_up_to_line reads them)
                    if block.truncated:
                        pending.append((block, None, None))
                    elif pool is None:
                        data = bytes(block.data) if self.where is not None and limit is not None else None
                        pending.append((block, _work(block.data, block.offset, block.at_stream_start), data))
                        block.release()
                    elif isinstance(pool, ThreadPoolExecutor):  # threads read the block in place
                        pending.append((block, pool.submit(_work, block.data, block.offset,
                                                           block.at_stream_start), None))
                    else:
                        data = bytes(block.data)
                        pending.append((block, pool.submit(_work, data, block.offset,
                                                           block.at_stream_start), data))
                        block.release()
                if not pending:
                    break
                block, job, data = pending.popleft()
                rejects_size = rejects_file.tell() if rejects_file else 0
                if job is None:
                    member, count, read, raw, dropped = compress(b"", opts.compression), 0, 0, [], 0
                    text = bytes(block.data)
                    if text.strip():
                        raw = [(block.truncation_reason(), block.damage.offset, 1, text)]
                        read = 1
                else:
                    member, count, read, raw, dropped = job if pool is None else job.result()
                before = {"games_read": games_read, "games_rejected": rejected,
                          "rejects_size": rejects_size, "games_filtered": filtered}
                if limit is not None and written + count - skip_lines >= limit:
                    # The limit falls in this block: only the games up to the last one written count.
                    keep = limit - written + skip_lines
                    if dropped:
                        read, raw, dropped = _kept_up_to_line(
                            keep, block.data if data is None else data, block.offset, block.at_stream_start,
                            raw, _scan.kernel.where_plan(self.where.spec()))
                    else:
                        read, raw = _games_up_to_line(keep, read, raw)
                    if keep < count:
                        text = decompress(member, opts.compression)
                        member = compress(_split_lines(text, [keep])[0], opts.compression)
                        count = keep
                    done = True
                for reason, error_offset, number, text in raw:
                    rejected += 1
                    if rejects_file is None:
                        rejects_file = open(self.rejects_path, "ab")
                    rejects_file.write(f"% fastpgn rejected game {games_read + number} at PGN byte "
                                       f"{error_offset}: {reason}\n".encode() + text.rstrip(b"\r\n")
                                       + b"\n\n")
                    if opts.errors == "raise":
                        raise PGNSyntaxError(reason, error_offset, games_read + number)
                block.release()
                games_read += read
                filtered += dropped
                if rejects_file is not None:
                    rejects_file.flush()
                after = {"games_read": games_read, "games_rejected": rejected,
                         "rejects_size": rejects_file.tell() if rejects_file else 0, "games_filtered": filtered}
                writer.put(member, count, skip_lines, block.offset, block.offset + len(block.data),
                           before, after)
                written += max(count - skip_lines, 0)
                skip_lines = 0
                if block.damage is not None:
                    damage = block.damage
                if self.progress is not None:
                    self.progress(source.raw_read, source.offset, written, rejected)
            writer.finish()
            chunks.close()
        except BaseException:
            if writer is not None:
                writer.stop()
            chunks.abandon()
            if pool is not None:
                for _, job, _ in pending:
                    if job is not None:
                        job.cancel()
                # Workers finish the one block each has in hand (milliseconds; worker processes ignore
                # Ctrl-C), so nothing of this run outlives it. Not wait=False: a process pool left
                # running can fail at interpreter exit ("Exception ignored ... Bad file descriptor").
                pool.shutdown(wait=True, cancel_futures=True)
                pool = None
            raise
        finally:
            if block_iter is not None:
                block_iter.cancel()     # run() waits for it, then closes the input
            if rejects_file is not None:
                rejects_file.close()
            if pool is not None:
                pool.shutdown()
        s = self.summary
        s.games_read = games_read
        s.games_written = chunks.written
        s.games_rejected = rejected
        s.games_filtered = filtered
        s.chunks = chunks.index
        s.bytes_in = source.offset
        s.raw_bytes_in = source.raw_read
        s.outputs = [str(p) for p in chunks.finished]
        s.seconds = time.perf_counter() - start_time
        if damage is not None:
            # The state stays: once the input is whole again (a download finished), --resume goes on.
            s.damage = str(damage)
        else:
            # Finished: the state gives way to a hidden record, so --resume knows there is nothing to do.
            self._save_state(fingerprint, {"complete": True, "chunk": chunks.index, "games_read": games_read,
                                           "games_written": chunks.written, "games_rejected": rejected,
                                           "games_filtered": filtered},
                             self.done_path)
            self.state_path.unlink(missing_ok=True)
        return s

    def _first_bytes(self, source: Source, skip: int) -> tuple[bytes, bool]:
        """The first decompressed bytes from absolute offset ``skip``, and whether movetext came before.

        A resumed run reads and drops the bytes before ``skip``, noting on
        the way whether they held movetext, as the interrupted run's cutter
        did (see ``sources.cut_blocks``).
        """
        scratch = bytearray(READ_SIZE)
        view = memoryview(scratch)
        seen = 0
        moves_seen = False
        partial = b""       # the line the last piece ended inside
        while True:
            n = source.readinto(view)
            if not n:
                if seen < skip:
                    raise InputError(f"{source.name} is shorter than when the run was interrupted; "
                                     "run without --resume", seen)
                return b"", moves_seen
            if seen + n > skip:
                if not moves_seen and skip > seen:
                    text = partial + bytes(view[:skip - seen])
                    moves_seen = has_moves(text, len(text))
                return bytes(view[skip - seen:n]), moves_seen
            if not moves_seen:
                text = partial + bytes(view[:n])
                cut = text.rfind(b"\n") + 1
                moves_seen = has_moves(text, cut)
                partial = text[cut:]
            seen += n

    def _deliver(self, chunks: _Chunks, fingerprint: dict, member: bytes, count: int, skip: int,
                 start: int, end: int, before: dict, after: dict) -> None:
        """Append a block's lines to the chunks, splitting at chunk boundaries (on the writer thread).

        The block spans input bytes ``start``..``end``; ``before``/``after``
        are the counters (games read, rejected, size of the rejects file)
        before and after it, for the resume state.
        """
        kind = self.opts.compression
        if count - skip <= 0:
            return
        if skip == 0 and count <= chunks.room():
            if chunks.append(member, count):
                self._checkpoint(chunks, fingerprint, start, end, count, count, before, after)
            return
        text = decompress(member, kind)
        sizes = [skip] if skip else []
        left = count - skip
        room = chunks.room()
        while left > 0:
            take = min(room, left)
            sizes.append(take)
            left -= take
            room = chunks.size
        pieces = _split_lines(text, sizes)
        if skip:
            pieces = pieces[1:]
            sizes = sizes[1:]
        done = skip
        for piece, size in zip(pieces, sizes):
            done += size
            if chunks.append(compress(piece, kind), size):
                self._checkpoint(chunks, fingerprint, start, end, done, count, before, after)

    def _checkpoint(self, chunks: _Chunks, fingerprint: dict, start: int, end: int, lines_done: int,
                    count: int, before: dict, after: dict) -> None:
        """A chunk is complete: record where the next one starts."""
        if lines_done == count:
            # The boundary is this block's end: resume at the next block.
            progress = dict(after, chunk=chunks.index, block_offset=end,
                            skip_lines=0, games_written=chunks.written)
        else:
            # The boundary is inside this block: resume at it and skip the lines already written.
            progress = dict(before, chunk=chunks.index, block_offset=start,
                            skip_lines=lines_done, games_written=chunks.written)
        self._save_state(fingerprint, progress)
