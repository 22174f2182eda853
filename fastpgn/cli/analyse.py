"""``python -m fastpgn analyse``: a UCI engine's eval for every ply of every game, written as lichess writes it.

This module owns the ``analyse`` command: its options, the reader thread,
one thread per engine, the games written in input order, ``--resume``, the
summary and the exit status. What is done to one game (its evals, the
cache, lichess's layout) is ``fastpgn.engine.analysis``'s, public as
:mod:`fastpgn.engine.analysis`.

With ``-j N`` the games go to N engines at once and come out in input order.
A position met again in the run (the openings) is served from a cache keyed
by its FEN without the move counters and the search limit (``--no-cache``:
every position searched).
"""

from __future__ import annotations

import argparse
import mmap
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TextIO

from fastpgn.engine.analysis import EvalCache, Limit, analysable, analyse_game, complete_games, lichess_pgn
from fastpgn.cli._common import (
    add_encoding_argument, add_jobs_option, add_parquet_writer_option, not_utf8_note, parse_args, plural,
    progress_bar, set_progress_total,
)
from fastpgn.cli._filters import FilterParser, add_filter_arguments
from fastpgn.engine import Engine, EngineError
from fastpgn.errors import InputDamageError, InputError, OutputError, PGNError
from fastpgn.io import output as _output

if TYPE_CHECKING:
    from fastpgn.engine.evals_db import EvalsDB
    from fastpgn.scan._kernel import Openings

__all__ = ["main"]

DEFAULT_NODES = 100_000

EXIT_RULE = """\
exit status (the same rule as every fastpgn command):
  0    the run finished; bad games it skipped are reported on stderr, one line
       each, and counted in the summary, and do not fail the run
  1    the input is damaged (truncated or corrupt: the games after the damage
       are lost, every whole game before it is written), or --errors raise
       stopped the run at a bad game
  2    usage error; missing, unreadable, empty or non-PGN input; output that
       cannot be written; an engine that is not found, does not start, or fails
       during the run, a position left without a score or a move included (the
       games finished before it are written: --resume continues)
  130  interrupted (Ctrl-C): the games finished are written, --resume continues
"""

EXAMPLES = """\
examples:
  python -m fastpgn analyse games.pgn.zst -o analysed.pgn
  python -m fastpgn analyse games.pgn -o analysed.pgn --depth 18 -j 4 --hash 64
  python -m fastpgn analyse dump.pgn.zst -o dump-evals.pgn --only-missing --resume
  python -m fastpgn analyse games.pgn --engine /usr/games/stockfish --nodes 20000 | less
  python -m fastpgn analyse dump.pgn.zst --format lines -o dump-evals.lines   the converter's 22-field lines
  python -m fastpgn analyse dump.pgn.zst --only-missing --min-elo 2000 --format parquet -o out/

Each move's comment gets [%eval x] from White's view (0.33, -1.5, #3 when White
mates in 3, #-3 when Black does) beside its [%clk]; no eval after a mating
move (as lichess). Positions met again in the run are taken from a cache
(--no-cache: searched every time; then each game's evals depend on that game
alone and are the same for any -j).

--format parquet|csv writes the analysis schema (docs/schema.md) instead, its
accuracy, ACPL and judgements from the evals: -o FILE.parquet is one file,
-o FOLDER/ (or an existing folder) chunks of 16,384 games. The filter flags
pick the games analysed; the others are not written (counted as filtered out).

""" + EXIT_RULE


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, not {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, not {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("expected more than 0 seconds")
    return value


def _option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name.strip(), value


FORMATS = ("pgn", "lines", "parquet", "csv")
EVALS_DB_BATCH = 16_384    # --evals-db: games whose positions are looked up in one join (each join scans the index)
CHUNK_GAMES = 16_384        # --format parquet|csv: games turned into columns at once (a row group, a chunk)


class _Parser(FilterParser):
    """The filter flags' parser; a bad --format is one line too."""

    def error(self, message: str):
        head = "argument --format: "
        if message.startswith(head):
            self.exit(2, f"{self.name}: --format: {message[len(head):]}\n")
        super().error(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m fastpgn analyse", name="fastpgn analyse",
        description="Add a UCI engine's eval to every ply of every game ([%eval] in each move's comment, "
                    "lichess's notation, clocks and tags kept) and write the games as lichess does.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="PGN file (any compression) or - for stdin")
    p.add_argument("-o", "--output", metavar="OUTPUT", help="file to write (default: stdout)")
    p.add_argument("--format", choices=FORMATS, default="pgn",
                   help="pgn (default): the games as lichess writes them; lines: the converter's 22-field "
                        "line of each analysed game, evals in field 21; parquet, csv: the analysis schema "
                        "(accuracy, ACPL, judgements from the evals); parquet needs -o (a file, or a folder "
                        "for chunks)")
    add_parquet_writer_option(p)
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--nodes", type=_positive, metavar="N",
                       help=f"search each position to N nodes (default {DEFAULT_NODES:,})")
    limit.add_argument("--depth", type=_positive, metavar="N", help="search each position to depth N")
    limit.add_argument("--movetime", type=_positive, metavar="MS", help="search each position MS milliseconds")
    add_jobs_option(p, 1, "one engine",
                    "engine processes at once, at least 1 (default 1); games come out in input order")
    p.add_argument("--engine", default="stockfish", metavar="PATH",
                   help="UCI engine (default stockfish: on PATH, else /usr/games/stockfish)")
    p.add_argument("--threads", type=_positive, metavar="N", help="the engine's Threads option")
    p.add_argument("--hash", type=_positive, metavar="MB", help="the engine's Hash option (MB)")
    p.add_argument("--option", type=_option, action="append", default=[], metavar="NAME=VALUE",
                   help="another engine option (repeatable)")
    p.add_argument("--only-missing", action="store_true",
                   help="analyse only games without any eval; games with evals are written as they are")
    p.add_argument("--evals-db", metavar="FILE",
                   help="take each position's eval from lichess's evaluation database when it has one (Hugging "
                        "Face Parquet, or lichess's .jsonl[.zst]); the engine searches only the others and starts "
                        "only when one needs it. Indexed by position once, beside FILE (docs/engine.md)")
    p.add_argument("--evals-index", metavar="PATH",
                   help="where --evals-db's index is kept (default FILE.fastpgn-index.parquet)")
    p.add_argument("--no-cache", action="store_true",
                   help="search every position, even one met earlier in the run")
    p.add_argument("--timeout", type=_seconds, metavar="S",
                   help="give up on a search after S seconds (an engine failure: exit 2)")
    p.add_argument("--limit", type=_positive, metavar="N", help="stop after N games")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep OUTPUT's complete games, skip as many input games, "
                        "append the rest")
    p.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    p.add_argument("--errors", choices=("skip", "raise"), default="skip",
                   help="skip (default): report each bad game on stderr and go on; raise: stop at the first (exit 1)")
    add_encoding_argument(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    add_filter_arguments(p)
    return p


@dataclass
class _Stats:
    games_read: int = 0
    written: int = 0
    analysed: int = 0
    kept: int = 0
    not_analysed: int = 0
    rejected: int = 0
    filtered: int = 0
    skipped: int = 0
    counts: list = field(default_factory=list)     # per engine: [positions, from the cache, searched, database]

    @property
    def positions(self) -> int:
        return sum(c[0] for c in self.counts)

    @property
    def cached(self) -> int:
        return sum(c[1] for c in self.counts)

    @property
    def searched(self) -> int:
        return sum(c[2] for c in self.counts)

    @property
    def database(self) -> int:
        return sum(c[3] for c in self.counts)


class _Failed(Exception):
    """The run cannot go on: exit ``code`` after saying ``message``."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class _OutputFile:
    """``-o OUTPUT`` (pgn, lines), written a game at a time: a write that fails (a full disk) is one line."""

    def __init__(self, file: IO, name: str) -> None:
        self.file = file
        self.name = name
        self.failed = False

    def write(self, text: str) -> None:
        self._do(self.file.write, text)

    def flush(self) -> None:
        self._do(self.file.flush)

    def close(self) -> None:
        try:
            self.file.close()
        except OSError:
            if not self.failed:     # (once said, the unsent rest of a failed write is not said again)
                raise

    def _do(self, call, *args) -> None:
        try:
            call(*args)
        except OSError:
            self.failed = True      # (the caller says it, with the games written before it)
            raise


class _Progress:
    """A tqdm line on a terminal, the converter's (progress_bar): games written of the total once it is known
    (the percentage and the ETA), positions and positions/s."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.bar = progress_bar("fastpgn analyse", None, "0 positions")

    def update(self, positions: int, games: int, total: int | None) -> None:
        if total is not None:
            set_progress_total(self.bar, max(total, games))
        seconds = time.perf_counter() - self.start
        rate = positions / seconds if seconds > 0 else 0.0
        of = f" of {self.bar.total:,}" if self.bar.total else ""
        self.bar.set_description_str(f"{plural(games, 'game')}{of}, {plural(positions, 'position')}, "
                                     f"{rate:,.1f} positions/s", refresh=False)
        self.bar.update(games - self.bar.n)

    def write(self, text: str) -> None:
        self.bar.write(text, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


def main(argv: list[str] | None = None) -> int:
    """The ``analyse`` command: ``main(["games.pgn", "-o", "out.pgn", "--nodes", "20000"])`` returns the exit code."""
    args = parse_args(parser(), argv)
    if isinstance(args, int):
        return args
    return _Run(args).run()


class _Run:
    def __init__(self, args) -> None:
        self.args = args
        self.limit = (Limit("depth", args.depth) if args.depth else Limit("movetime", args.movetime)
                      if args.movetime else Limit("nodes", args.nodes or DEFAULT_NODES))
        self.stats = _Stats()
        self.progress: _Progress | None = None
        self.engines: list[Engine] = []     # the engines started (with --evals-db: as they are needed)
        self.slots: list = []               # one per -j: an Engine, or with --evals-db a _LazyEngine
        self.evals_db: EvalsDB | None = None     # --evals-db: the database
        self.out: TextIO | _OutputFile | _TableOut | None = None
        self.stop = threading.Event()
        self.workers: list[threading.Thread] = []
        self.feeder: threading.Thread | None = None
        self.resume_headers = None
        self.resume_line_id: str | None = None     # --resume --format lines: the last line's game id
        self._openings: Openings | None = None     # --format lines: the kernel's openings table
        self.cache: EvalCache | None = None
        self.total: int | None = None           # the games this run analyses, once counted (the progress bar)

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress.write(text)
        else:
            print(text, file=sys.stderr)

    # -- set-up ------------------------------------------------------------------
    def _check_files(self) -> int:
        """Check INPUT and OUTPUT; returns how many games OUTPUT already holds (``--resume``)."""
        args = self.args
        if args.input != "-":
            self._check_input(args.input, args.encoding)
        if args.resume and args.overwrite:
            raise _Failed("--resume continues OUTPUT and --overwrite replaces it: give one of them", 2)
        if args.parquet_writer != "fastpgn" and args.format != "parquet":
            raise _Failed(f"--parquet-writer {args.parquet_writer} writes Parquet files: add --format parquet", 2)
        if args.format in ("parquet", "csv"):
            if args.resume:
                raise _Failed(f"--resume continues pgn and lines output, not --format {args.format}: "
                              "run again with --overwrite", 2)
            if args.output is None and args.format == "parquet":
                raise _Failed("--format parquet needs -o OUTPUT (a file, or a folder for chunks)", 2)
            if args.format == "parquet":
                from fastpgn.schema import require_pyarrow

                try:
                    require_pyarrow("--format parquet")
                except ImportError as exc:
                    raise _Failed(f"{exc}", 2) from None
            if args.output is not None and _is_folder(args.output):
                if args.format == "csv":
                    raise _Failed(f"--format csv writes one file, not a folder: {args.output}", 2)
                self._refuse_links(args.output)
                chunks = _chunk_files(args.output)
                if chunks and not args.overwrite:
                    raise _Failed(f"{args.output} holds {plural(len(chunks), 'Parquet chunk')}: --overwrite "
                                  "replaces them", 2)
                return 0
        if args.output is None:
            if args.resume:
                raise _Failed("--resume needs -o OUTPUT", 2)
            return 0
        try:
            _output.named(args.output)     # (a link there is refused: never written through)
        except OutputError as exc:
            raise _Failed(f"{exc}", 2) from None
        if args.input != "-" and os.path.exists(args.output) and os.path.samefile(args.input, args.output):
            raise _Failed(f"{args.output} is INPUT: write somewhere else", 2)
        if not os.path.exists(args.output) or os.path.getsize(args.output) == 0 or args.overwrite:
            return 0
        if not args.resume:
            raise _Failed(f"{args.output} exists: --resume continues it, --overwrite replaces it", 2)
        with open(args.output, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            size = len(data)
            if args.format == "lines":
                end = data.rfind(b"\n") + 1
                count = data[:end].count(b"\n")
                if count:
                    # The last whole line's game id, to check the output continues this input.
                    last_line = data[data.rfind(b"\n", 0, end - 1) + 1:end].decode("utf-8", "replace")
                    self.resume_line_id = last_line.split("\u2502", 1)[0]
            else:
                count, end, last = complete_games(data)
                if count:
                    from fastpgn.reader import read_games

                    self.resume_headers = next(iter(read_games(data[last:end]))).headers
        if end < size:
            with _output.open_named(args.output, "r+b") as out:
                out.truncate(end)     # a game cut short by the interruption: written again
        return count

    def _refuse_links(self, folder: str) -> None:
        """``-o FOLDER/``: a link at a name of this input's chunks (or their ``.tmp``) is refused before the run."""
        stem = _stem(self.args.input)
        if os.path.isdir(folder):
            try:
                _output.refuse_links(os.path.join(folder, name) for name in sorted(os.listdir(folder))
                                    if name.startswith((f"{stem}.part_", f".{stem}.part_")))
            except OutputError as exc:
                raise _Failed(f"{exc}", 2) from None

    @staticmethod
    def _check_input(path: str, encoding: str | None = None) -> None:
        """Refuse a missing, unreadable or binary INPUT before any engine starts (stdin is read once, unchecked)."""
        from fastpgn.io.sources import check_pgn, open_source

        try:
            source = open_source(path, encoding=encoding)
            try:
                # (damage among the first bytes is the reader's to report, after the games before it)
                check_pgn(source.head(), source.name)
            finally:
                source.close()
        except InputError as exc:
            raise _Failed(f"{exc}", 2) from None

    def _start_engines(self) -> None:
        if self.args.evals_db:
            self.slots = [_LazyEngine(self._start_engine, self.engines) for _ in range(self.args.jobs)]
            return
        for _ in range(self.args.jobs):
            self.slots.append(self._start_engine())
            self.engines.append(self.slots[-1])

    def _start_engine(self) -> Engine:
        args = self.args
        options: dict[str, object] = {}
        if args.threads:
            options["Threads"] = args.threads
        if args.hash:
            options["Hash"] = args.hash
        options.update(args.option)
        engine = Engine.run(args.engine)
        try:
            # Analysis, not play (python-chess sets it too when it analyses).
            if "UCI_AnalyseMode" in engine.options and not any(k.lower() == "uci_analysemode" for k in options):
                engine.setoption("UCI_AnalyseMode", True)
            for name, value in options.items():
                engine.setoption(name, value)
            engine.isready()
        except BaseException:
            engine.kill()
            raise
        return engine

    def _open_evals_db(self) -> None:
        """--evals-db: the database, indexed first when its index is missing or older than it."""
        from fastpgn.engine.evals_db import EvalsDB

        args = self.args
        if not args.evals_db:
            return

        def building(index: str) -> None:
            if not args.quiet:
                self.say(f"fastpgn analyse: indexing {args.evals_db} by position into {index} (once)")

        def built(summary) -> None:
            if summary.refused:     # (never quiet: positions of the database are left out)
                shown = "; ".join(why if fen in why else f"{fen!r}: {why}" for fen, why in summary.refused_fens)
                more = f"; and {summary.refused - len(summary.refused_fens):,} more" \
                    if summary.refused > len(summary.refused_fens) else ""
                self.say(f"fastpgn analyse: --evals-db: {plural(summary.refused, 'FEN')} of {args.evals_db} the "
                         f"board refused, not indexed: {shown}{more}")

        try:
            self.evals_db = EvalsDB.open(args.evals_db, args.evals_index, on_build=building, on_built=built)
        except (InputError, ValueError, ImportError) as exc:
            raise _Failed(f"--evals-db: {exc}", 2) from None
        except OSError as exc:
            raise _Failed(f"--evals-db: cannot write its index: {exc.strerror or exc}", 2) from None

    def _open_output(self, resumed: int):
        if self.args.format in ("parquet", "csv"):
            return _TableOut(self.args.format, self.args.output, _stem(self.args.input), self.args.overwrite,
                             self.args.parquet_writer)
        if self.args.output is None:
            return sys.stdout
        folder = os.path.dirname(self.args.output)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return _OutputFile(_output.open_named(self.args.output, "a" if resumed else "w", encoding="utf-8",
                                              newline="\n"), self.args.output)

    # -- the run -------------------------------------------------------------------
    def run(self) -> int:
        args = self.args
        start = time.perf_counter()
        code = 0
        try:
            try:
                resumed = self._check_files()
                self._open_evals_db()
                self._start_engines()
                self.out = self._open_output(resumed)
            except OSError as exc:
                raise _Failed(f"cannot write {args.output}: {exc.strerror or exc}", 2) from None
            except OutputError as exc:
                raise _Failed(f"{exc}", 2) from None
            except EngineError as exc:
                raise _Failed(f"{exc}", 2) from None
            if not args.quiet and sys.stderr.isatty():
                try:
                    self.progress = _Progress()
                except ImportError:
                    self.progress = None
            code = self._pipeline(resumed)
            self._close_table()
        except _Failed as exc:
            self.say(f"fastpgn analyse: {exc}")
            code = exc.code
        except BrokenPipeError:
            # The reader of stdout left early (| head): drop what is unsent, quietly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 0
        except KeyboardInterrupt:
            code = 130
        finally:
            code = self._shutdown(code)
        if code in (0, 1) and not args.quiet:
            self._summary(time.perf_counter() - start)
        return code

    def _close_table(self) -> None:
        """--format parquet|csv: write the games still pending and close OUTPUT."""
        if isinstance(self.out, _TableOut):
            out, self.out = self.out, None
            try:
                out.close()
            except OSError as exc:
                raise _Failed(f"cannot write {self.args.output or 'stdout'}: {exc.strerror or exc}", 2) from None

    def _cannot_write(self, exc: OSError) -> str:
        """The line for a failed write to OUTPUT: what, and what is kept."""
        args = self.args
        kept = f"; {plural(self.stats.written, 'game')} written before it" + (
            ", --resume continues" if args.output and args.format in ("pgn", "lines") else "")
        return f"cannot write {args.output or 'stdout'}: {exc.strerror or exc}{kept}"

    def _shutdown(self, code: int) -> int:
        """End the engines, the threads and OUTPUT; the exit status, ``code`` unless closing OUTPUT failed."""
        self.stop.set()
        if self.feeder is not None and self.evals_db is not None:
            self.feeder.join(5.0)        # (its lookup in DuckDB ends before the database closes)
        if self.evals_db is not None:
            self.evals_db.close()
        for engine in self.engines:
            if code == 0:
                engine.quit()
            else:
                engine.kill()
        for worker in self.workers:
            worker.join(10.0)
        if self.feeder is not None:
            self.feeder.join(5.0)        # it stops at the next game once told (stdin may keep it longer)
        if self.progress is not None:
            self.progress.close()
            self.progress = None
        if isinstance(self.out, _TableOut):
            try:
                self._close_table()     # a failed run: the games finished are written
            except _Failed as exc:
                self.say(f"fastpgn analyse: {exc}")
        elif self.out is not None and self.out is not sys.stdout:
            try:
                self.out.close()
            except OSError as exc:      # what a full disk left in the buffer
                if code in (0, 1):      # (else the run's failure is said already)
                    self.say(f"fastpgn analyse: {self._cannot_write(exc)}")
                    return 2
        elif self.out is sys.stdout:
            try:
                self.out.flush()
            except BrokenPipeError:
                pass
            except OSError as exc:
                if code in (0, 1):
                    self.say(f"fastpgn analyse: {self._cannot_write(exc)}")
                    return 2
        return code

    def _summary(self, seconds: float) -> None:
        s = self.stats
        searched = s.searched
        share = f" ({100 * s.cached / s.positions:.0f}%)" if s.positions else ""
        name = self.engines[0].name if self.engines and self.engines[0].name else self.args.engine
        database = f"{s.database:,} from the evals database, " if self.args.evals_db else ""
        if self.args.evals_db and not self.engines:
            name += " (not started)"
        resumed = f", {s.skipped:,} kept from the interrupted run" if s.skipped else ""
        filtered = f", {s.filtered:,} filtered out" if self.args.where is not None else ""
        print(f"analyse: {plural(s.games_read, 'game')} read, {s.written:,} written ({s.analysed:,} analysed, "
              f"{s.kept:,} kept with their evals, {s.not_analysed:,} not analysable), {s.rejected:,} rejected"
              f"{filtered}{resumed}; {plural(s.positions, 'position')}, {database}{searched:,} searched, "
              f"{s.cached:,} from the cache{share}; "
              f"{seconds:.1f} s, {s.positions / seconds if seconds > 0 else 0:,.1f} positions/s, "
              f"{self.args.jobs} x {name}", file=sys.stderr)

    def _pipeline(self, skip: int) -> int:
        args = self.args
        jobs = len(self.slots)
        work: queue.SimpleQueue = queue.SimpleQueue()
        results: queue.SimpleQueue = queue.SimpleQueue()
        room = threading.Semaphore(4 * jobs)      # games handed out and not yet written
        cache = None if args.no_cache else EvalCache()
        self.cache = cache
        self.stats.counts = [[0, 0, 0, 0] for _ in range(jobs)]
        self.stats.skipped = skip
        feeder = threading.Thread(target=self._feed, args=(work, results, room, skip), daemon=True,
                                  name="fastpgn-analyse-reader")
        workers = [threading.Thread(target=self._work, args=(engine, work, results, cache, self.stats.counts[i]),
                                    daemon=True, name=f"fastpgn-analyse-{i}")
                   for i, engine in enumerate(self.slots)]
        self.workers, self.feeder = workers, feeder
        if self.progress is not None and args.input != "-":
            threading.Thread(target=self._count, args=(skip,), daemon=True, name="fastpgn-analyse-count").start()
        feeder.start()
        for w in workers:
            w.start()
        pending: dict[int, tuple] = {}
        next_index = skip
        fed = None                    # games handed out, once the input is read
        end_error = None
        code = 0
        try:
            while fed is None or next_index < fed:
                try:
                    message = results.get(timeout=0.25)
                except queue.Empty:
                    self._tick()
                    continue
                kind = message[0]
                if kind == "game":
                    pending[message[1]] = message
                    while next_index in pending:
                        if self._write(pending.pop(next_index)):
                            code = 1
                            raise _Stopped
                        next_index += 1
                        room.release()
                    self._tick()
                elif kind == "note":
                    self.say(message[1])
                elif kind == "end":
                    _, fed, end_error, self.stats.games_read, self.stats.rejected, self.stats.filtered = message
                    self.total = fed - skip
                elif kind == "fault":
                    _, index, game, exc = message
                    self._flush(pending, next_index)
                    where = f"game {game.number} (PGN byte {game.offset})" if game is not None else "start-up"
                    written = f"; {plural(self.stats.written, 'game')} written" + (
                        f" to {args.output}, --resume continues" if args.output else "")
                    raise _Failed(f"engine failed at {where}: {exc}{written}", 2)
                elif kind == "crash":
                    raise message[1]
        except _Stopped:
            pass
        except KeyboardInterrupt:
            self.stop.set()
            for engine in self.engines:
                engine.kill()
            self._flush(pending, next_index)
            self.say(f"fastpgn analyse: interrupted; {plural(self.stats.written, 'game')} written"
                     + (f" to {args.output}, --resume continues" if args.output else ""))
            return 130
        finally:
            self.stop.set()
            for _ in workers:
                work.put(None)
        if code:
            return code                 # _shutdown kills the engines, then joins their threads
        if end_error is not None:
            # (unreadable or not PGN: 2; damage, even before any game, is damage: 1)
            if (isinstance(end_error, InputError) and not isinstance(end_error, InputDamageError)
                    and self.stats.games_read == 0):
                raise _Failed(f"{end_error}", 2)
            if isinstance(end_error, PGNError):
                what = "stopped at a bad game" if args.errors == "raise" and not isinstance(end_error, InputError) \
                    else "the input is damaged"
                self.say(f"fastpgn analyse: {what}: {end_error}; every game before it was written")
                return 1
            raise end_error
        if self.stats.games_read == 0 and not skip:
            raise _Failed(f"{args.input}: no PGN games found (empty or not PGN)", 2)
        return 0

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress.update(self.stats.positions, self.stats.written, self.total)

    def _count(self, skip: int) -> None:
        """The progress bar's total: the games of INPUT the filters keep (up to --limit), less those kept from
        an interrupted run, counted by a read of the tags alone beside the analysis."""
        from fastpgn.reader import read_headers

        args = self.args
        count = 0
        try:
            for _ in read_headers(args.input, errors="skip", where=args.where, encoding=args.encoding, jobs=1):
                count += 1
                if self.stop.is_set() or (args.limit is not None and count >= args.limit):
                    break
        except (PGNError, OSError):
            return                      # the feeder says what is wrong with INPUT
        if not self.stop.is_set() and self.total is None:
            self.total = max(count - skip, 0)

    def _flush(self, pending: dict, next_index: int) -> None:
        """After a fault: write the finished games that follow the written ones."""
        while next_index in pending:
            if self._write(pending.pop(next_index)):
                return
            next_index += 1

    def _continues(self, game) -> bool:
        """Whether the last game OUTPUT holds (--resume) is ``game``, the input's game at that place."""
        if self.args.format == "lines":
            return self._line(lichess_pgn(game)).split("\u2502", 1)[0] == self.resume_line_id
        return (game.headers or {"Result": game.result}) == self.resume_headers

    def _line(self, text: str) -> str:
        """The 22-field line of one game's PGN text: the converter's own kernel writes it."""
        from fastpgn import openings
        from fastpgn import scan as _scan

        if self._openings is None:
            self._openings = _scan.kernel.opening_table(openings.load())
        data = text.encode("utf-8")
        lines, _, rejects, _ = _scan.kernel.lines_from_block(data, 0, len(data), openings=self._openings)
        if rejects:     # written by lichess_pgn from a game the reader read: not expected
            raise _Failed(f"fastpgn analyse: no 22-field line for an analysed game: {rejects[0][0]}", 2)
        return lines.decode("utf-8")

    def _write(self, message) -> bool:
        """Write one finished game; True when ``--errors raise`` must stop at it instead."""
        _, _index, game, text, status, note = message
        if status == "bad":
            if self.args.errors == "raise":
                self.say(f"fastpgn analyse: stopped at a bad game: {note}")
                return True
            self.say(f"fastpgn analyse: {note}; written without new evals")
        if self.args.format == "lines":
            text = self._line(text)
        out = self.out
        assert out is not None  # run() opened it before the first game
        try:
            out.write(text)
            out.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:      # a full disk, most likely: one line, not a traceback
            raise _Failed(self._cannot_write(exc), 2) from None
        self.stats.written += 1
        if status == "analysed":
            self.stats.analysed += 1
        elif status == "kept":
            self.stats.kept += 1
        else:
            self.stats.not_analysed += 1
        return False

    # -- threads -----------------------------------------------------------------
    def _feed(self, work, results, room, skip: int) -> None:
        """The reader thread: hand the games out in order; report the rejected ones."""
        from fastpgn.reader import read_games

        args = self.args
        source = sys.stdin.buffer if args.input == "-" else args.input
        reader = read_games(source, errors=args.errors, encoding=args.encoding, where=args.where)
        reader._warn_not_utf8 = False   # one line of ours instead, below
        index = 0
        reported = 0
        error = None
        batch: list = []                # --evals-db: games waiting for one lookup
        limited = False
        last = 0                        # the input's number of the last game handed out
        try:
            for game in reader:
                while reported < len(reader.rejected):
                    results.put(("note", f"fastpgn analyse: {args.input}: {reader.rejected[reported].error()}"))
                    reported += 1
                if self.stop.is_set():
                    break
                if index < skip:
                    if index == skip - 1 and not self._continues(game):
                        results.put(("crash", _Failed(
                            f"{args.output} does not continue {args.input}: its last game ({skip:,}) has other "
                            "tags than the input's game at that place; --overwrite starts again", 2)))
                        return
                    index += 1
                    continue
                if args.limit is not None and index >= args.limit:
                    limited = True
                    break
                if self.evals_db is not None:
                    batch.append((index, game))
                    last = game.number
                    index += 1
                    if len(batch) >= EVALS_DB_BATCH and not self._hand_out(batch, work, room):
                        return
                    continue
                while not room.acquire(timeout=0.25):
                    if self.stop.is_set():
                        return
                work.put((index, game, None))
                last = game.number
                index += 1
            else:
                if index < skip:
                    results.put(("crash", _Failed(
                        f"{args.output} holds {plural(skip, 'game')}, more than {args.input} ({index:,})", 2)))
                    return
        except PGNError as exc:
            error = exc
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            results.put(("crash", exc))
            return
        try:
            if batch and not self._hand_out(batch, work, room):
                return
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            results.put(("crash", exc))
            return
        while reported < len(reader.rejected):
            if error is None or reader.rejected[reported].error().game != getattr(error, "game", None):
                results.put(("note", f"fastpgn analyse: {args.input}: {reader.rejected[reported].error()}"))
            reported += 1
        if reader.games_not_utf8:
            note = not_utf8_note(reader.games_not_utf8, reader.first_not_utf8)
            results.put(("note", f"fastpgn analyse: {args.input}: {note}"))
        # --limit: the games up to the last one handed out, not the rest of the reader's block.
        if limited:
            rejected = reported
            # (the filtered ones before it: those the reader dropped between the games it gave)
            before = sum(1 for r in reader.rejected[:reported] if (r.error().game or 0) < last)
            filtered = max(0, last - index - before) if args.where is not None else 0
            read = index + reported + filtered
        else:
            rejected, filtered, read = len(reader.rejected), reader.games_filtered, reader.games_read
        results.put(("end", index, error, read, rejected, filtered))

    def _hand_out(self, batch: list, work, room) -> bool:
        """--evals-db: look the positions of a batch of games up at once, then hand the games out in order
        with the evals found (False: the run is stopping)."""
        from fastpgn.engine.evals_db import game_keys

        args = self.args
        keys: list = []
        for _, game in batch:
            wanted = not (args.only_missing and any(e is not None for e in game.evals)) and analysable(game) is None
            keys.append(game_keys(game) if wanted else None)
        assert self.evals_db is not None
        found = self.evals_db.lookup(k for ks in keys if ks for k in ks)
        for (index, game), ks in zip(batch, keys):
            known = None if ks is None else [found.get(k) for k in ks]
            while not room.acquire(timeout=0.25):
                if self.stop.is_set():
                    return False
            work.put((index, game, known))
        batch.clear()
        return True

    def _work(self, engine: Engine, work, results, cache, counts) -> None:
        """One engine's thread: analyse the games handed to it."""
        args = self.args

        def counter(how: str) -> None:
            counts[0] += 1
            if how == "cached":
                counts[1] += 1
            elif how == "searched":
                counts[2] += 1
            elif how == "database":
                counts[3] += 1

        while True:
            item = work.get()
            if item is None or self.stop.is_set():
                return
            index, game, known = item
            try:
                if args.only_missing and any(e is not None for e in game.evals):
                    results.put(("game", index, game, lichess_pgn(game), "kept", None))
                    continue
                reason = analysable(game)
                if reason is None:
                    try:
                        evals = analyse_game(engine, game, self.limit, cache, timeout=args.timeout,
                                             counter=counter, known=known)
                    except EngineError:
                        raise
                    except PGNError as exc:
                        reason = str(exc)
                if reason is None:
                    results.put(("game", index, game, lichess_pgn(game, evals), "analysed", None))
                else:
                    note = f"{args.input}: game {game.number} (PGN byte {game.offset}) not analysed: {reason}"
                    results.put(("game", index, game, lichess_pgn(game), "bad", note))
            except EngineError as exc:
                if not self.stop.is_set():
                    results.put(("fault", index, game, exc))
                return
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                results.put(("crash", exc))
                return


class _LazyEngine:
    """--evals-db: an engine slot that starts its engine at the first position the database lacks (a run the
    database covers starts none); the engines started are appended to ``started``."""

    def __init__(self, start, started: list) -> None:
        self._start = start
        self._started = started
        self._engine: Engine | None = None

    def _get(self) -> Engine:
        if self._engine is None:
            self._engine = self._start()
            self._started.append(self._engine)
        return self._engine

    @property
    def name(self):
        return self._engine.name if self._engine is not None else None

    @property
    def path(self):
        return self._get().path

    def newgame(self) -> None:
        self._get().newgame()

    def position(self, *a, **k) -> None:
        self._get().position(*a, **k)

    def search(self, *a, **k):
        return self._get().search(*a, **k)


def _is_folder(output: str) -> bool:
    """Whether -o names a folder (an existing one, or a path ending with a separator): Parquet chunks there."""
    return output.endswith(("/", os.sep)) or os.path.isdir(output)


def _chunk_files(folder: str) -> list[str]:
    """The Parquet chunks a run of ``--format parquet -o FOLDER/`` leaves in ``folder``."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if ".part_" in name and name.endswith(".parquet"))


def _stem(path: str) -> str:
    """The chunks' name: INPUT's file name without its compression and .pgn suffixes."""
    if path == "-":
        return "stdin"
    name = _output.visible_name(path)      # (never a dot file: readers of the folder pass over those)
    for suffix in (".zst", ".zstd", ".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return name.removesuffix(".pgn") or "games"


class _TableOut:
    """--format parquet|csv: the analysed games' PGN text (what --format pgn writes) turned into the
    analysis schema's columns by the converter's column sink, CHUNK_GAMES games at a time.

    ``offset`` and the game numbers are those of that PGN text: the table equals ``read_arrow`` of the
    ``--format pgn`` output of the same run. Parquet goes to one file (a row group per chunk) or, for a
    folder, one file per chunk (``NAME.part_NNNNNN.parquet``); CSV to one file or stdout.
    """

    def __init__(self, fmt: str, output: str | None, stem: str, overwrite: bool,
                 parquet_writer: str = "fastpgn") -> None:
        from fastpgn import schema
        from fastpgn.scan import columns as _columns_py

        self.format = fmt
        self.parquet_writer = parquet_writer    # who writes the per-ply lists' pages (--parquet-writer)
        self.names = schema.names(False)
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.offset = 0                 # bytes of PGN text turned into columns so far
        self.games = 0
        self.chunks = 0
        self.header = True              # CSV: the row of names not yet written
        self.writer: Any = None         # --format parquet, one file: a parquet.list_chunks.ParquetFileWriter
        self.stream: Any = None         # the file (or stdout) written; None for a folder
        self.openings = _columns_py.default_openings()
        self.folder = output if fmt == "parquet" and output is not None and _is_folder(output) else None
        self.stem = stem
        self.output = output
        if self.folder is not None:
            os.makedirs(self.folder, exist_ok=True)
            if overwrite:
                for path in _chunk_files(self.folder):
                    os.remove(path)
        elif output is None:
            self.stream = sys.stdout.buffer     # (csv only: parquet without -o is refused before)
        else:
            folder = os.path.dirname(output)
            if folder:
                os.makedirs(folder, exist_ok=True)
            self.stream = _output.open_named(output, "wb")
        if fmt == "parquet":
            from fastpgn import scan as _scan

            self.arrow_schema = schema.arrow_schema(False)
            self.table = _scan.kernel.opening_table(self.openings)

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.pending.append(data)
        self.pending_bytes += len(data)
        if len(self.pending) >= CHUNK_GAMES or self.pending_bytes >= 1 << 26:
            self._chunk()

    def flush(self) -> None:
        """(the games are written a chunk at a time)"""

    def _chunk(self) -> None:
        if not self.pending:
            return
        data = b"".join(self.pending)
        count = len(self.pending)
        self.pending, self.pending_bytes = [], 0
        if self.format == "csv":
            from fastpgn.csv_text import write_csv
            from fastpgn.scan import columns as _columns_py

            columns, read, rejects, _ = _columns_py.columns_from_block(
                data, 0, len(data), base_offset=self.offset, first_game=self.games, openings=self.openings)
        else:
            from fastpgn import scan as _scan

            columns, read, rejects, _ = _scan.kernel.columns_from_block(
                data, 0, len(data), base_offset=self.offset, first_game=self.games, openings=self.table)
        if rejects or read != count:     # written by lichess_pgn from games the reader read: not expected
            raise _Failed(f"no {self.format} row for an analysed game: "
                          f"{rejects[0][0] if rejects else f'{read} games of {count}'}", 2)
        self.offset += len(data)
        self.games += count
        columns = {name: columns[name] for name in self.names}
        if self.format == "csv":
            write_csv(columns, self.stream, header=self.header)
            self.header = False
            self.stream.flush()
            return
        from fastpgn.arrow import record_batch

        batch = record_batch(columns)
        if self.folder is not None:
            path = os.path.join(self.folder, f"{self.stem}.part_{self.chunks:06d}.parquet")
            temporary = os.path.join(self.folder, f".{self.stem}.part_{self.chunks:06d}.parquet.tmp")
            try:
                writer = self._parquet_file(temporary)    # (made as fastpgn.io.output.create makes a file)
            except OutputError as exc:      # a link planted at the .tmp name since the run began
                raise _Failed(f"{exc}", 2) from None
            writer.write_batch(batch)
            writer.close()
            os.replace(temporary, path)
        else:
            if self.writer is None:
                self.writer = self._parquet_file(self.stream)
            self.writer.write_batch(batch)
        self.chunks += 1

    def _parquet_file(self, where):
        """A Parquet file as every Parquet file of fastpgn is written (the converter's encoding)."""
        from fastpgn.arrow import parquet_writer
        from fastpgn.parquet.list_chunks import ParquetFileWriter

        return ParquetFileWriter(where, self.arrow_schema, parquet_writer, self.parquet_writer)

    def close(self) -> None:
        """Write the games still pending (the finished games of an interrupted run too) and close the file."""
        try:
            self._chunk()
            if self.format == "csv" and self.header:
                from fastpgn.csv_text import write_csv

                write_csv({name: [] for name in self.names}, self.stream)
            elif self.format == "parquet" and self.folder is None and self.writer is None:
                self.writer = self._parquet_file(self.stream)     # no games: the schema alone
            if self.writer is not None:
                self.writer.close()
        finally:
            if self.stream is not None and self.stream is not sys.stdout.buffer:
                self.stream.close()
            elif self.stream is not None:
                self.stream.flush()


class _Stopped(Exception):
    """``--errors raise`` met a bad game."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
