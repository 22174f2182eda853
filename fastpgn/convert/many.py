"""Many inputs in one run of the dump converter: which files the arguments name, and converting them at once.

- :func:`expand_inputs`: the inputs as files: a glob pattern (quoted, so
  that the shell left it alone) expanded here, a folder as the PGN files
  directly in it; a folder of lichess's Parquet release and no PGN files
  stays one input, as it is for a run on it alone.
- :class:`ManyInputs`: one ``pipeline.Converter`` per input, a few at a
  time on threads of their own, all handing their blocks to one pool of
  workers (``pipeline.SharedWorkers``). Each input is a run of its own:
  its chunks, resume state, rejected games and lock are byte for byte those
  of a run on it alone, and a damaged or unreadable input ends as an
  :class:`InputOutcome` with its error while the others go on.

Why one shared pool and several inputs at a time: one zstd stream is
decoded by one thread, so one input cannot keep many workers busy, and
between inputs (opening the next, its first block, the last chunk's fsync)
the workers would wait; inputs run side by side fill those gaps, and the
pool's queue shares the workers out among them. One pool rather than a pool
per input (or a process per input): no worker sits idle while another
input's have work, and on the pure backend one set of worker processes is
spawned, not one per input (measurements in docs/performance.md).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import queue
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastpgn.convert.converter import Converter, Options, OutputError, SharedWorkers, Summary
from fastpgn.errors import InputError

__all__ = ["PGN_SUFFIXES", "ManyInputs", "InputOutcome", "expand_inputs", "is_pgn_name"]

#: The names a folder's PGN files end with (any case).
PGN_SUFFIXES = (".pgn", ".pgn.zst", ".pgn.bz2", ".pgn.gz")

# What the converter itself leaves in a folder: chunks, rejected games, its state, lock and records.
_OWN_OUTPUT = re.compile(r"\.part_\d{6}[.]|\.rejected\.pgn$|\.fastpgn-(state|done|lock|probe)")


def is_pgn_name(name: str) -> bool:
    """Whether a file of a folder is taken as a PGN input by its name.

    >>> is_pgn_name("lichess_db_standard_rated_2024-01.pgn.zst"), is_pgn_name("notes.txt")
    (True, False)
    >>> is_pgn_name("_games.pgn.zst.rejected.pgn"), is_pgn_name(".hidden.pgn")
    (False, False)
    """
    return name.lower().endswith(PGN_SUFFIXES) and not _own_output(name)


def _own_output(name: str) -> bool:
    return name.startswith(".") or _OWN_OUTPUT.search(name) is not None


def expand_inputs(args: Sequence[str]) -> list[str]:
    """The files ``args`` name, in order, each once.

    An argument that exists is taken as it is, but a folder holding PGN
    files (see :data:`PGN_SUFFIXES`) stands for those files, by name; a
    folder without them stays one input (lichess's Parquet release, a
    tree of ``.parquet`` files, is read whole). An argument that does not
    exist and holds ``*``, ``?`` or ``[`` is a glob pattern (``**``
    crosses folders), each match taken as if named. The converter's own
    files (chunks, ``*.rejected.pgn``, dot files) are never taken from a
    folder or a pattern. A file named twice is kept once, where first named.

    Raises InputError for a pattern that matches nothing, and for a folder
    that holds both PGN files and Parquet files (which of them is meant?).

    >>> expand_inputs(["-"])
    ['-']
    """
    found: list[str] = []
    for arg in args:
        if arg != "-" and glob.has_magic(arg) and not os.path.lexists(arg):
            matches = [m for m in sorted(glob.glob(arg, recursive=True)) if not _own_output(os.path.basename(m))]
            if not matches:
                raise InputError(f"{arg}: no file matches this pattern")
            for match in matches:
                found.extend(_folder(match) if os.path.isdir(match) else [match])
        elif os.path.isdir(arg):
            found.extend(_folder(arg))
        else:
            found.append(arg)
    unique: list[str] = []
    seen: set[str] = set()
    for path in found:
        key = path if path == "-" else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _folder(path: str) -> list[str]:
    """A folder's PGN files, by name; the folder itself when it holds none."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return [path]               # the run on it says why it cannot be read
    pgn = [os.path.join(path, name) for name in names
           if is_pgn_name(name) and os.path.isfile(os.path.join(path, name))]
    if not pgn:
        return [path]
    from fastpgn.io.lichess_parquet import parquet_files

    parquet = [p for p in parquet_files(path) if not _own_output(p.name)]
    if parquet:
        raise InputError(f"{path} holds both PGN files ({Path(pgn[0]).name}, ...) and Parquet files "
                         f"({parquet[0].relative_to(path)}, ...): name the PGN files (a pattern such as "
                         f"'{os.path.join(path, '*.pgn*')}') or the Parquet files")
    return pgn


@dataclass
class InputOutcome:
    """How one input's run ended: its Summary, or the error that stopped it (``summary`` is then None)."""

    input: str
    converter: Converter
    summary: Summary | None = None
    error: BaseException | None = None


class ManyInputs:
    """Convert ``inputs`` with the options ``opts`` (its ``input`` ignored), each as a run of its own.

    Every input gets a Converter here, so an output two inputs would share
    (the same file name into one folder), stdin among other inputs or a bad
    option raises before anything is converted. ``progress(i)``, when
    given, is the progress callback for the ``i``-th input's run.
    ``at_once`` inputs are converted at a time (default: ``default_at_once``,
    half as many as the workers, at least two); with ``-o -`` one at a time,
    in order, their games one stream, CSV's header row once.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     many = ManyInputs(["data/sample.pgn.zst"], Options("", 1000, output_dir=out, jobs=1))
    ...     [o.summary.games_written for o in many.run()]
    [3000]
    """

    def __init__(self, inputs: Sequence[str], opts: Options,
                 progress: Callable[[int], object] | None = None, at_once: int | None = None) -> None:
        if not inputs:
            raise ValueError("no inputs")
        if "-" in inputs and len(inputs) > 1:
            raise InputError("- (stdin) can only be converted on its own, not among other inputs")
        self.opts = opts
        self.cancel = threading.Event()
        self.converters = [Converter(dataclasses.replace(opts, input=path), progress(i) if progress else None,
                                     cancel=self.cancel) for i, path in enumerate(inputs)]
        self.to_stdout = opts.output_dir == "-"
        self._check_outputs()
        jobs = self.converters[0].jobs
        self.at_once = 1 if self.to_stdout else max(1, min(at_once or default_at_once(jobs), len(inputs)))
        # Started here, so that a bad openings map stops the run before it starts (its threads or
        # processes start with the first block).
        self.workers = SharedWorkers(opts, self.at_once)
        if self.workers.pool is None:
            self.at_once = 1    # the work is done on the inputs' own threads, under the GIL: one at a time
        for converter in self.converters:
            converter.workers = self.workers

    def _check_outputs(self) -> None:
        """Refuse inputs whose output would be the same files (one name, one folder)."""
        owners: dict[tuple[str, str], str] = {}
        for converter in self.converters:
            key = (os.path.realpath(converter.folder), converter.prefix)
            other = owners.setdefault(key, converter.opts.input)
            if other != converter.opts.input:
                where = "the current folder" if self.to_stdout else converter.folder
                raise OutputError(f"{other} and {converter.opts.input} would write the same files "
                                  f"({converter.prefix}.*) into {where}: convert them into different folders")

    def run(self) -> Iterator[InputOutcome]:
        """Convert every input; yield each one's InputOutcome as its run ends.

        Closing the iterator early, or Ctrl-C while it waits, stops the runs
        under way as Ctrl-C stops one (their complete chunks kept, ready for
        ``--resume``) and starts no other. The workers end with the iterator,
        so a ManyInputs runs once.
        """
        shared = self.workers
        done: queue.Queue[Any] = queue.Queue()
        todo = deque(self.converters)
        threads: list[threading.Thread] = []
        running = 0
        try:
            while todo or running:
                while todo and running < self.at_once:
                    converter = todo.popleft()
                    if self.to_stdout:
                        converter.stream_header = not any(c.stream_started for c in self.converters)
                    thread = threading.Thread(target=self._convert, args=(converter, done),
                                              name=f"fastpgn-input-{len(threads)}", daemon=True)
                    threads.append(thread)
                    thread.start()
                    running += 1
                outcome = done.get()
                running -= 1
                yield outcome
        finally:
            if running:
                self.cancel.set()
            for thread in threads:
                thread.join()
            shared.close(cancel=self.cancel.is_set())

    def _convert(self, converter: Converter, done: queue.Queue[Any]) -> None:
        """One input's run, on its own thread; its InputOutcome to ``done``."""
        outcome = InputOutcome(converter.opts.input, converter)
        try:
            if self.cancel.is_set():
                raise KeyboardInterrupt
            outcome.summary = converter.run()
        except BaseException as exc:  # noqa: B036 - the caller decides what each error means
            outcome.error = exc
        done.put(outcome)


def default_at_once(jobs: int) -> int:
    """How many inputs to convert at a time with ``jobs`` workers: half as many, and at least two.

    One input's reader thread feeds about two workers (on 16 cores one
    input stopped gaining at about 440 MB/s, where one worker does some
    200), so half as many inputs as workers keep them all busy; more would
    only hold more blocks and open files. Two at least, because between two
    inputs (the last chunk's fsync, the next input opened and its first
    block cut) the workers would otherwise wait: on 2 cores, 100 inputs of
    1 MB took 1.8 s one at a time and 1.2 s two at a time, the same CPU
    (docs/performance.md).

    >>> [default_at_once(j) for j in (1, 2, 4, 16)]
    [2, 2, 2, 8]
    """
    return max(2, -(-jobs // 2))
