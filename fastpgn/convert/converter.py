"""The dump converter: PGN in, chunk files of 22-field lines out, on every core, nothing lost.

Design. A reader thread decompresses the input and cuts it into
game-aligned blocks (``fastpgn.io.sources.cut_blocks``: cuts depend only on
the data); the main thread hands them to the workers, which turn a block
into lines and compress them as one independent gzip member or zstd frame,
and passes the results on in input order to a writer thread, which appends
them to the chunk files. With the compiled kernel the workers are threads: the
kernel, zstd and ISA-L all run without the GIL, so no block is copied
between processes (``schedule.start_workers`` says when processes are used
instead). One zstd stream cannot be decoded by more than one thread, so on
a machine of many cores that decoding bounds the run: the reader thread
(``fastpgn.io.ahead.ReadAhead``) does nothing else, and the appends, fsyncs,
renames and checkpoints of the chunk files are the writer thread's
(``chunks.ChunkWriter``). A chunk holds exactly CHUNK_SIZE written games:
when a block's lines straddle a chunk boundary, the writer thread inflates
that block's member, splits its lines and compresses each piece on its own
(once per chunk, so cheap at dump-sized chunks). Parquet's row groups are
encoded on encoder threads of their own (``tables.RowGroupEncoders``), several
at once, and the writer thread joins them into the chunk in order
(``fastpgn.parquet.row_groups``). Every output byte is a pure function of the input and the
options, so any ``-j`` and a ``--resume`` give identical files.

Safety. A chunk is written as a hidden ``.NAME.tmp`` and renamed when complete. After
each complete chunk a small JSON state (``.<input>.fastpgn-state.json``)
records where its successor starts: the block that holds the boundary, the
lines of that block already written, and the counters. ``--resume`` restarts
from that block; a run that finishes replaces it by a hidden record
(``.<input>.fastpgn-done.json``), so that ``--resume`` then does nothing. Bad games are written,
raw and with a ``%`` comment line naming byte, game number and reason, to
``_<input>.rejected.pgn``, itself a PGN file; games read = games written +
games rejected.

Ownership. The chunks, state and rejected games of one input in one folder
belong to one run: a run holds a lock file (``.<input>.fastpgn-lock``) while
it writes, and refuses a folder that already holds that input's output
unless told to continue it (``resume``) or replace it (``overwrite``).

Parts. This module tells the story of a run (``Converter``) and owns the
output folder; each part has a module of its own:

- ``schedule``: the reader thread, the workers, and the ordered scheduler
  that hands blocks out and takes their results back in input order;
- ``chunks``: the output: a ``ChunkFormat`` (what a worker makes of a
  block, how it is cut; the 22-field lines are ``LinesFormat``), the chunk
  files, and the writer thread;
- ``tables``: the Parquet and CSV formats (``ParquetFormat``, ``CsvFormat``)
  and the Parquet encoder threads;
- ``pgn``: ``--format pgn``, the kept games as their input bytes (``PgnFormat``);
- ``resume``: the resume state (``ResumeState``), loaded, checkpointed and saved;
- ``rejects``: the rejected games' file;
- ``limit``: the ``--limit`` rule, which cuts the run's last block.

Many inputs in one run (``fastpgn.convert.many``) are a Converter each, run on
threads of their own and sharing one pool of workers (``SharedWorkers``):
every input's chunks, state, rejects and lock are exactly those of a run
on that input alone.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fastpgn import openings as _openings, scan as _scan
from fastpgn.convert.chunks import (
    GZIP_LEVEL,
    GZIP_LIBRARY,
    SUFFIX,
    ZSTD_LEVEL,
    BlockResult,
    ChunkFiles,
    ChunkFormat,
    ChunkWriter,
    LinesFormat,  # noqa: F401 - the converter's public name
    StreamOutput,
    compress,
    decompress,
)
from fastpgn.convert.limit import GameLimit
from fastpgn.convert.rejects import RejectsFile
from fastpgn.convert.resume import STATE_VERSION, ResumeState, Tally, damage_note, done_name, state_name
from fastpgn.convert.schedule import OrderedScheduler, start_encoders, start_workers
from fastpgn.convert.tables import (
    FORMATS,  # noqa: F401 - the converter's public name
    ParquetFormat,
    RowGroupEncoders,
    chunk_format,
    encoder_limit,
)
from fastpgn.errors import InputError, OutputError, PGNError, Rejected
from fastpgn.io import output as _output
from fastpgn.io.ahead import ReadAhead
from fastpgn.io.sources import (
    BLOCK_SIZE,
    READ_SIZE,
    Block,
    Source,
    check_pgn,
    cut_blocks,
    has_moves,
    not_utf8,
    open_source,
)

__all__ = ["Converter", "Options", "OutputError", "SharedWorkers", "Summary",
           # the chunk output's settings and codec, for code written against them here
           "GZIP_LEVEL", "GZIP_LIBRARY", "STATE_VERSION", "SUFFIX", "ZSTD_LEVEL", "compress", "decompress"]


@dataclass
class Options:
    input: str
    chunk_size: int
    output_dir: str | None = None
    compression: str = "gz"
    jobs: int = 0                       # workers; 0: every core
    errors: str = "skip"
    limit: int | None = None
    openings_map: str | None = None
    resume: bool = False
    overwrite: bool = False
    validate: bool = False
    uci: bool = False
    # Parquet and CSV: the zobrist column (each ply's Polyglot key) and the fens column; both replay the games
    positions: bool = False
    fens: bool = False
    block_size: int = BLOCK_SIZE
    # fastpgn.filters.Where (or a dict of its keywords): only the games it passes are written;
    # the others are counted in Summary.games_filtered.
    where: object = None
    # lines (the 22-field line, the default), parquet or csv: the analysis schema (docs/schema.md)
    format: str = "lines"
    # None, or "month": Parquet chunks in year=YYYY/month=MM/ folders by month of play (schema.by_month)
    partition: str | None = None
    # Parquet: who writes the per-ply lists' pages, "fastpgn" (its list-page writer) or "pyarrow" (every column
    # pyarrow's; fastpgn.parquet.list_chunks)
    parquet_writer: str = "fastpgn"
    # the input's encoding, transcoded to UTF-8 as it is read (None: UTF-8; docs/encoding.md)
    encoding: str | None = None


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
    games_not_utf8: int = 0             # games holding bytes that are not UTF-8 (read as U+FFFD)
    first_not_utf8: int | None = None   # the first such byte's offset
    split_note: str | None = None       # why a zstd input decoded on one thread (fastpgn.io.frames.split_note)
    outputs: list[Any] = field(default_factory=list)

    @property
    def mb_per_s(self) -> float:
        return self.bytes_in / 1e6 / self.seconds if self.seconds > 0 else 0.0


class Delivery(NamedTuple):
    """A block's result on its way to the writer thread, with what a checkpoint after it records.

    ``skip`` games of it are in chunks already (a resumed run's first
    block); it spans input bytes ``start``..``end``; ``before``/``after``
    are the run's counts before and after it.
    """

    payload: object
    written: int    # games (not ``count``: that name is the tuple's own method)
    skip: int
    start: int
    end: int
    before: Tally
    after: Tally


class _RunLock:
    """A lock file held for a run, so that two runs never write one input's chunks at once.

    ``flock`` is released by the kernel when the holder dies (kill -9
    included), so a file left behind never blocks a later run; the holder
    writes its pid in it for the message, and removes it when done. The
    file is opened as ``fastpgn.io.output.open_own`` opens one: a link
    planted at its name is refused, never truncated through.
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
                fd = _output.open_own(self.path, os.O_RDWR | os.O_CREAT)
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
                same = os.lstat(self.path).st_ino == os.fstat(fd).st_ino
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


def workers_for(jobs: int | None) -> int:
    """The workers ``Options.jobs`` asks for: 0 (the default) or None for every core; below 0 is a ValueError.

    >>> workers_for(3), workers_for(0) == (os.cpu_count() or 1)
    (3, True)
    """
    if jobs is None or jobs == 0:
        return os.cpu_count() or 1
    if not isinstance(jobs, int) or jobs < 0:
        raise ValueError(f"jobs must be a whole number of workers, 0 for every core, not {jobs!r}")
    return jobs


class SharedWorkers:
    """One pool of workers for the Converters of several inputs converted at once.

    The inputs share their options, hence the workers' setup (format,
    openings, filter, replay): each Converter hands its blocks to the pool
    and leaves it running, and ``close`` ends it once every input is done.
    With ``at_once`` inputs running at a time, each keeps ``depth`` blocks
    in the workers' hands, and a decoder that can use threads (bzip2,
    lichess's Parquet) gets ``threads`` of them. For Parquet the inputs
    share ``encoders`` too, the row groups' encoder threads, each input
    keeping its ``share`` + 1 row groups in flight.
    """

    def __init__(self, opts: Options, at_once: int) -> None:
        from fastpgn import filters

        self.jobs = workers_for(opts.jobs)
        self.table = _openings.load(opts.openings_map)
        where = filters.as_where(opts.where)
        fmt = chunk_format(opts.format, opts.compression, opts.uci, None, opts.positions, opts.fens)
        self.pool = start_workers(self.jobs, fmt, self.table, opts.validate or opts.positions or opts.fens, opts.uci,
                                  where.spec() if where else None)
        share = -(-self.jobs // max(at_once, 1))
        self.depth = 2 * share + 1
        self.threads = share
        self.share = share
        # --format parquet: the threads that encode every input's row groups (each input keeps its share in
        # flight: RowGroupEncoders)
        self.encoders = start_encoders(self.jobs) if isinstance(fmt, ParquetFormat) else None

    def close(self, cancel: bool = False) -> None:
        """End the workers, once the inputs' runs have ended (``cancel``: drop blocks not begun)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=cancel)
            self.pool = None
        if self.encoders is not None:
            self.encoders.shutdown(wait=True, cancel_futures=cancel)
            self.encoders = None


class Converter:
    """One run of the dump converter; ``run()`` returns a Summary or raises.

    ``workers`` and ``cancel`` are for a run of many inputs: a pool shared
    with the other inputs' Converters, and an event that, once set, stops
    this run as Ctrl-C would (KeyboardInterrupt, complete chunks kept).
    With ``-o -``, ``stream_header`` False leaves out CSV's header row (the
    stream goes on after another input's games).
    """

    def __init__(self, opts: Options, progress: Any = None, *, workers: SharedWorkers | None = None,
                 cancel: threading.Event | None = None, stream_header: bool = True) -> None:
        # -o -: one stream to stdout, no chunks (so no CHUNK_SIZE and no --resume)
        self.to_stdout = opts.output_dir == "-"
        if self.to_stdout:
            if opts.format == "parquet":
                raise OutputError("Parquet cannot be written to stdout (a Parquet file ends with its index): "
                                  "give -o DIR, or --format csv or lines for a stream")
            if opts.resume:
                raise OutputError("--resume continues chunk files; output to stdout (-o -) cannot be resumed")
        elif not opts.chunk_size or opts.chunk_size < 1:
            raise ValueError("CHUNK_SIZE must be at least 1")
        if opts.compression not in SUFFIX:
            raise ValueError(f"compression must be one of {', '.join(SUFFIX)}")
        if opts.errors not in ("skip", "raise"):
            raise ValueError("errors must be skip or raise")
        self.opts = opts
        self.progress = progress
        self.workers = workers
        self.cancel = cancel
        self.stream_header = stream_header
        self.stream_started = False     # -o -: this run began writing to the stream
        self._reader: ReadAhead | None = None     # the run's reader thread, while one runs
        self.format: ChunkFormat = chunk_format(opts.format, opts.compression, opts.uci, opts.partition,
                                                opts.positions, opts.fens, opts.parquet_writer)
        if workers is not None:
            self.jobs = workers.jobs
        else:
            self.jobs = workers_for(opts.jobs)
        # stdin, or a pipe such as <(zstdcat dump.pgn.zst): no folder of its own to write beside.
        stdin = opts.input == "-" or _is_stream(opts.input)
        # (".", "..", "dir/" and ".hidden.pgn" name visible files: readers of the folder pass over dot files)
        name = "stdin" if stdin else _output.visible_name(opts.input)
        self.prefix = name
        if self.to_stdout:
            # No chunks: only rejected games are written, into the current folder (the input's may be read-only,
            # or shared with other runs); no lock, since no output folder is owned.
            self.folder = Path.cwd()
        elif opts.output_dir:
            self.folder = Path(opts.output_dir)
        else:
            self.folder = Path.cwd() if stdin else Path(opts.input).resolve().parent
        self.state_path = self.folder / state_name(name)
        # A finished run's record, hidden (Spark and globs pass over dot files): --resume then has nothing to do.
        self.done_path = self.folder / done_name(name)
        self.rejects_path = self.folder / f"_{name}.rejected.pgn"
        self.summary = Summary(backend=_scan.BACKEND, workers=self.jobs)
        from fastpgn import filters

        where = filters.as_where(opts.where)
        self.where = where if where else None   # a Where that tests nothing filters nothing
        self.limit = None if opts.limit is None else GameLimit(opts.limit, self.format, self.where)

    # -- the resume state's options

    def _fingerprint(self, source: Source) -> dict[str, Any]:
        o = self.opts
        return {"version": STATE_VERSION, "input": self.prefix, "input_size": source.size,
                "chunk_size": o.chunk_size, "compression": o.compression, "limit": o.limit,
                "openings_map": o.openings_map, "validate": o.validate, "uci": o.uci,
                "block_size": o.block_size, "gzip": f"{GZIP_LIBRARY}-{GZIP_LEVEL}",
                **({"where": self.where.as_dict()} if self.where is not None else {}),
                **({"format": o.format} if o.format != "lines" else {}),
                **({"partition": o.partition} if o.partition else {}),
                **({"parquet_writer": o.parquet_writer} if o.parquet_writer != "fastpgn" else {}),
                **({"positions": True} if o.positions else {}), **({"fens": True} if o.fens else {}),
                **({"encoding": o.encoding} if o.encoding else {})}

    # -- the output folder and the run

    def _check_output(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe = self.folder / f".{self.prefix}.fastpgn-probe"
            _output.create(probe).close()
            probe.unlink()
        except OSError as exc:
            why = ("it is a file, and -o names the folder of the output" if isinstance(exc, FileExistsError)
                   else exc.strerror or exc)   # (mkdir of an existing file)
            raise OutputError(f"cannot write to {self.folder}: {why}") from None

    def _adopt_earlier_names(self) -> None:
        """A run's state and rejected games under the names an earlier fastpgn gave them (without the ``.``
        and ``_`` that readers of the folder pass over): renamed, so that --resume goes on and --overwrite
        removes them."""
        for old, new in ((self.folder / f"{self.prefix}.fastpgn-state.json", self.state_path),
                         (self.folder / f"{self.prefix}.rejected.pgn", self.rejects_path)):
            if old.is_file() and not old.is_symlink() and not os.path.lexists(new):
                os.replace(old, new)

    def _owned(self) -> list[Path]:
        """This input's files in the output folder: chunks (and .tmp, in month folders too), resume state,
        rejected games; and, when this run writes month folders, those that are links (never looked into:
        see _claim_output)."""
        names = {self.state_path.name, self.state_path.name + ".tmp", self.rejects_path.name,
                 self.done_path.name, self.done_path.name + ".tmp"}
        parts = (f"{self.prefix}.part_", f".{self.prefix}.part_")     # chunks, and the hidden unfinished one
        try:
            entries = sorted(os.listdir(self.folder))
        except OSError:
            return []
        owned = [self.folder / n for n in entries if n in names or n.startswith(parts)]
        # --partition month: year=YYYY/month=MM/NAME.part_NNNNNN.parquet
        writes_months = self.opts.partition == "month"
        for year in sorted(n for n in entries if n.startswith("year=")):
            months = self.folder / year
            if months.is_symlink():
                owned += [months] if writes_months else []
                continue
            if not months.is_dir():
                continue
            for month in sorted(n for n in os.listdir(months) if n.startswith("month=")):
                folder = months / month
                if folder.is_symlink():
                    owned += [folder] if writes_months else []
                elif folder.is_dir():
                    owned += [folder / n for n in sorted(os.listdir(folder)) if n.startswith(parts)]
        return owned

    def _claim_output(self) -> None:
        """Refuse to mix this run's chunks with another run's: --resume continues one, --overwrite replaces it."""
        opts = self.opts
        owned = self._owned()
        # A link at a name this run writes was not made by fastpgn (it makes none): refused whatever the
        # options, before anything is written or removed (a shared folder's other users may have planted it).
        _output.refuse_links(owned)
        if not owned:
            return
        if opts.overwrite:
            for path in owned:
                path.unlink(missing_ok=True)
            return
        named = ([str(p.relative_to(self.folder)) for p in owned if not p.name.startswith(".")]
                 or [owned[0].name])   # chunks first
        shown = ", ".join(named[:3]) + (f" and {len(owned) - 3:,} more" if len(owned) > 3 else "")
        if not opts.resume:
            raise OutputError(f"{self.folder} already holds output for {self.prefix} ({shown}): "
                              "add --resume to continue an interrupted run, --overwrite to replace it, or give "
                              "another -o folder (to keep both, in two formats say)")
        if not (self.state_path.exists() or self.done_path.exists()):
            raise OutputError(f"nothing to resume in {self.folder}: it holds output for {self.prefix} "
                              f"({shown}) but no record of the run that wrote it; add --overwrite to "
                              "convert it again")

    def run(self) -> Summary:
        start_time = time.perf_counter()
        # A bad map is an input error, before any output (a shared pool's map was loaded before its first run).
        table = self.workers.table if self.workers is not None else _openings.load(self.opts.openings_map)
        self._check_output()
        lock = None if self.to_stdout else _RunLock(self.folder / f".{self.prefix}.fastpgn-lock")
        if lock is not None:
            lock.acquire()
        try:
            if lock is not None:
                self._adopt_earlier_names()
                self._claim_output()
            source = open_source(self.opts.input,
                                 threads=self.workers.threads if self.workers is not None else self.jobs,
                                 encoding=self.opts.encoding)
            try:
                return self._run(source, table, start_time)
            finally:
                self._close(source)
        finally:
            if lock is not None:
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

    def _run(self, source: Source, table: Any, start_time: float) -> Summary:
        """Go on where the last run left off, convert block by block in input order, record the end."""
        fingerprint = self._fingerprint(source)
        saved = ResumeState.load(fingerprint, self.state_path, self.done_path) if self.opts.resume else None
        self.summary.resumed_from_chunk = saved.chunk if saved else 0
        if saved is not None and saved.complete:
            return self._summarise(saved, start_time, already_complete=True)
        # The main thread's count; its games_written are those handed to the writer (which may lag behind).
        count = saved or ResumeState()
        chunks: StreamOutput | ChunkFiles
        if self.to_stdout:
            chunks = StreamOutput(sys.stdout.buffer, self.format, header=self.stream_header)
            self.stream_started = True
        else:
            chunks = ChunkFiles(self.folder, self.prefix, self.format, self.opts.chunk_size, count.chunk,
                                count.games_written)
        if count.rejects_size:
            size = self.rejects_path.stat().st_size if self.rejects_path.exists() else 0
            if size < count.rejects_size:
                raise OutputError(f"cannot resume: {self.rejects_path} holds {size:,} bytes where the interrupted "
                                  f"run had written {count.rejects_size:,}; it was changed since: add --overwrite "
                                  "to convert again")
        rejects = RejectsFile(self.rejects_path, keep=count.rejects_size)
        self._frame_at = source.frame_at
        head, moves_seen = self._first_bytes(source, count)
        if count.block_offset == 0:
            check_pgn(head, source.name)
        if saved is None and not self.to_stdout:
            # A record of the run before its first chunk is renamed: killed between that rename and
            # the first checkpoint, --resume still knows the chunk is this run's (and writes it again).
            count.save(self.state_path, fingerprint)
        scheduler = writer = damage = None
        encoders = self._start_encoders()
        try:
            scheduler = self._schedule(table, source, count.block_offset, head, moves_seen)
            writer = ChunkWriter(lambda *item: self._deliver(chunks, fingerprint, *item))
            for block, result, data in scheduler:
                if self.cancel is not None and self.cancel.is_set():
                    raise KeyboardInterrupt     # as Ctrl-C: what is queued for the writer is kept
                delivery, last = self._take(count, block, result, data, rejects)
                writer.put(delivery)
                if block.damage is not None:
                    damage = block.damage
                if self.progress is not None:
                    self.progress(source.raw_read, source.offset, count.games_written, count.games_rejected)
                if last:
                    break
            writer.finish()
            chunks.close()
        except BaseException:
            if writer is not None:
                writer.stop()
            chunks.abandon()
            if scheduler is not None:
                scheduler.cancel()
            raise
        finally:
            if scheduler is not None:
                scheduler.close()
            if encoders is not None:
                encoders.shutdown(wait=True, cancel_futures=True)    # (a shared pool is its owner's to end)
            rejects.close()
        done = ResumeState(chunk=chunks.index, games_read=count.games_read, games_written=chunks.written,
                           games_rejected=count.games_rejected, games_filtered=count.games_filtered, complete=True)
        if damage is None and not self.to_stdout:
            # Finished: the state gives way to a hidden record, so --resume knows there is nothing to do.
            done.save(self.done_path, fingerprint)
            self.state_path.unlink(missing_ok=True)
        elif not self.to_stdout:
            # The state stays: once the input is whole again (a download finished), --resume goes on. Beside it,
            # the damage and this run's totals, for the folder's readers (the report's counts and banner).
            checkpoint = ResumeState.load(fingerprint, self.state_path) or ResumeState()
            checkpoint.save(self.state_path, fingerprint, damage_note(str(damage), done))
        return self._summarise(done, start_time, source=source, outputs=chunks.finished, damage=damage)

    def _start_encoders(self) -> Executor | None:
        """Parquet: the encoder threads of the run's row groups (the shared ones of many inputs, else its own,
        returned to be shut down at the end); None for the other formats."""
        if not isinstance(self.format, ParquetFormat):
            return None
        shared = self.workers
        if shared is not None and shared.encoders is not None:
            self.format.encoders = RowGroupEncoders(shared.encoders, encoder_limit(shared.share))
            return None
        own = start_encoders(self.jobs)
        self.format.encoders = RowGroupEncoders(own, encoder_limit(self.jobs))
        return own

    def _schedule(self, table: Any, source: Source, start: int, head: bytes, moves_seen: bool) -> OrderedScheduler:
        """The workers started, and the input's blocks from ``start`` on their way to them."""
        opts = self.opts
        shared = self.workers
        pool = shared.pool if shared is not None else self._pool(table)
        # Buffers of blocks already delivered come back to the cutter and hold later blocks.
        blocks = cut_blocks(source.readinto, opts.block_size, start, head, [], moves_seen, source.whole_games)
        # (a run with --limit keeps each block's bytes: GameLimit.cut reads them again)
        scheduler = OrderedScheduler(pool, blocks, shared.depth if shared is not None else 2 * self.jobs + 1,
                                     keep_bytes=opts.limit is not None,
                                     owned=shared is None)
        self._reader = scheduler.reader
        return scheduler

    def _pool(self, table: Any) -> Executor | None:
        """The run's workers (see ``_schedule.start_workers``): threads, processes, or inline (None)."""
        o = self.opts
        return start_workers(self.jobs, self.format, table, o.validate or o.positions or o.fens, o.uci,
                             None if self.where is None else self.where.spec())

    def _take(self, count: ResumeState, block: Block, result: BlockResult, data: Any,
              rejects: RejectsFile) -> tuple[Delivery, bool]:
        """A block's result, in input order: the --limit rule, its rejected games, the counts.

        Returns the delivery for the writer thread, and whether the block
        ends the run (--limit).
        """
        count.rejects_size = rejects.size()
        count.frame_raw, count.frame_offset = self._frame_at(block.offset)
        before = count.tally()
        skip = count.skip_lines
        found = not_utf8(block.data, block.offset)
        if found is not None:
            self.summary.games_not_utf8 += found[0]
            if self.summary.first_not_utf8 is None:
                self.summary.first_not_utf8 = found[1]
        last = False
        if self.limit is not None and self.limit.falls_in(count.games_written, result.written, skip):
            last = True
            result = self.limit.cut(result, count.games_written, skip, block, data)
        for game in result.rejects:
            game = Rejected(game.offset, count.games_read + game.number, game.reason, game.error_offset,
                            game.text)  # numbered in the input
            count.games_rejected += 1
            rejects.add(game)
            if self.opts.errors == "raise":
                raise game.error()
        if not count.moves_seen:
            count.moves_seen = has_moves(bytes(block.data), len(block.data))
        end = block.offset + len(block.data)
        block.release()
        count.frame_raw, count.frame_offset = self._frame_at(end)
        count.games_read += result.read
        count.games_filtered += result.filtered
        rejects.flush()
        count.rejects_size = rejects.size()
        delivery = Delivery(result.payload, result.written, skip, block.offset, block.offset + len(block.data),
                            before, count.tally())
        count.games_written += max(result.written - skip, 0)
        count.skip_lines = 0
        return delivery, last

    def _summarise(self, done: ResumeState, start_time: float, *, source: Source | None = None, outputs: Any = (),
                   damage: PGNError | None = None, already_complete: bool = False) -> Summary:
        """The summary of the run that ``done`` counts (a finished run's record, when ``already_complete``)."""
        s = self.summary
        s.games_read, s.games_written = done.games_read, done.games_written
        s.games_rejected, s.games_filtered = done.games_rejected, done.games_filtered
        s.chunks = done.chunk
        s.already_complete = already_complete
        if source is not None:
            s.bytes_in, s.raw_bytes_in = source.offset, source.raw_read
            s.split_note = source.split_note
            if self.limit is not None and self.limit.read_to is not None:
                s.bytes_in = self.limit.read_to     # (the reader read ahead of the --limit-th game)
        s.outputs = [str(p) for p in outputs]
        s.damage = None if damage is None else str(damage)
        s.seconds = time.perf_counter() - start_time
        return s

    def _first_bytes(self, source: Source, count: ResumeState) -> tuple[bytes, bool]:
        """The first decompressed bytes from absolute offset ``count.block_offset``, and whether movetext came
        before.

        A resumed run reads and drops the bytes before that offset, noting on
        the way whether they held movetext, as the interrupted run's cutter
        did (see ``sources.cut_blocks``); a multi-frame zstd input decoded on
        threads begins at the frame that holds it (the state's ``frame_raw``),
        the state saying whether movetext came before. From the start, they
        are the input's first HEAD_SIZE bytes (``Source.head``: what check_pgn
        decides on, whatever the read sizes; damage among them comes with
        the blocks, after the whole games before it).
        """
        skip = count.block_offset
        if skip == 0:
            return source.head(), False
        seen = 0
        moves_seen = False
        if 0 < count.frame_offset <= skip and source.resume_at_frame(count.frame_raw, count.frame_offset):
            seen, moves_seen = count.frame_offset, count.moves_seen
        scratch = bytearray(READ_SIZE)
        view = memoryview(scratch)
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

    def _deliver(self, chunks: ChunkFiles | StreamOutput, fingerprint: dict[str, Any], delivery: Delivery) -> None:
        """On the writer thread: a block's games into the chunks, and a checkpoint after each chunk it completes."""
        d = delivery
        for lines_done in chunks.add(d.payload, d.written, d.skip):
            ResumeState.checkpoint(chunk=chunks.index, games_written=chunks.written, start=d.start, end=d.end,
                                   lines_done=lines_done, count=d.written, before=d.before,
                                   after=d.after).save(self.state_path, fingerprint)
