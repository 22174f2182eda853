"""``analyse``'s run: the games of INPUT read ahead on a thread of their own, analysed by one engine a worker
thread, written in input order (the one ordered pool, :class:`fastpgn.io.ordered.InOrder`), with
``--resume``, ``--evals-db``, the counts and the faults.

What is done to one game (its evals, the cache, lichess's layout) is
:mod:`fastpgn.engine.analysis`'s; the options, the checks before the run,
the messages and the exit status are the ``analyse`` command's
(``fastpgn.cli.analyse``), which runs a :class:`Pipeline` with its parsed
options.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TextIO

from fastpgn.convert.table_out import TableOut
from fastpgn.engine.analysis import EvalCache, Limit, analysable, analyse_game, lichess_pgn
from fastpgn.engine.uci import Engine
from fastpgn.errors import EngineError, InputDamageError, InputError, OutputError, PGNError, not_utf8_note, plural

if TYPE_CHECKING:
    from fastpgn.engine.evals_db import EvalsDB
    from fastpgn.scan._kernel import Openings

__all__ = ["DEFAULT_NODES", "EVALS_DB_BATCH", "Failed", "Pipeline"]

DEFAULT_NODES = 100_000
EVALS_DB_BATCH = 16_384    # --evals-db: games whose positions are looked up in one join (each join scans the index)


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


class Failed(Exception):
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


class _Stopped(Exception):
    """``--errors raise`` met a bad game."""


class Pipeline:
    """One ``analyse`` run over ``args`` (the command's parsed options: ``input``, ``output``, ``format``,
    ``jobs``, the search limit, the filters and the rest): the engines, the reader, the workers and the
    writing in input order; the messages go to ``say``.

    ``run`` (the command's) opens ``out`` and the engines and calls
    ``_pipeline``; ``_shutdown`` ends them all.
    """

    def __init__(self, args) -> None:
        self.args = args
        self.limit = (Limit("depth", args.depth) if args.depth else Limit("movetime", args.movetime)
                      if args.movetime else Limit("nodes", args.nodes or DEFAULT_NODES))
        self.stats = _Stats()
        self.progress: Any = None           # a progress bar: update(positions, games, total), write(text)
        self.engines: list[Engine] = []     # the engines started (with --evals-db: as they are needed)
        self.slots: list = []               # one per -j: an Engine, or with --evals-db a _LazyEngine
        self.evals_db: EvalsDB | None = None     # --evals-db: the database
        self.out: TextIO | _OutputFile | TableOut | None = None
        self.stop = threading.Event()
        self.pool: Any = None               # the engines' threads (a ThreadPoolExecutor), while they run
        self.feeder: Any = None             # the reader's thread (a ReadAhead), while it runs
        self.resume_headers = None
        self.resume_line_id: str | None = None     # --resume --format lines: the last line's game id
        self._openings: Openings | None = None     # --format lines: the kernel's openings table
        self.cache: EvalCache | None = None
        self.total: int | None = None           # the games this run analyses, once counted (the progress bar)
        self._end: tuple | None = None          # the reader's counts, once the input is read

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress.write(text)
        else:
            print(text, file=sys.stderr)

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

    def _cannot_write(self, exc: OSError) -> str:
        """The line for a failed write to OUTPUT: what, and what is kept."""
        args = self.args
        kept = f"; {plural(self.stats.written, 'game')} written before it" + (
            ", --resume continues" if args.output and args.format in ("pgn", "lines") else "")
        return f"cannot write {args.output or 'stdout'}: {exc.strerror or exc}{kept}"

    def _stop_threads(self, code: int) -> None:
        """End the reader, the engines (quit after a run that succeeded, else killed) and their threads."""
        self.stop.set()
        if self.feeder is not None and self.evals_db is not None:
            self.feeder.stop(5.0)       # (its lookup in DuckDB ends before the database closes)
        if self.evals_db is not None:
            self.evals_db.close()
        for engine in self.engines:
            if code == 0:
                engine.quit()
            else:
                engine.kill()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)     # (a killed engine's search ends at once)
        if self.feeder is not None:
            self.feeder.stop(5.0)       # it stops at the next game once told (stdin may keep it longer)

    def _pipeline(self, skip: int) -> int:
        from concurrent.futures import ThreadPoolExecutor

        from fastpgn.io.ahead import ReadAhead
        from fastpgn.io.ordered import InOrder

        args = self.args
        jobs = len(self.slots)
        cache = None if args.no_cache else EvalCache()
        self.cache = cache
        self.stats.counts = [[0, 0, 0, 0] for _ in range(jobs)]
        self.stats.skipped = skip
        # Each worker thread takes one engine (and its counts) for the run: an engine answers one search at a time.
        slots = list(zip(self.slots, self.stats.counts))
        mine = threading.local()

        def take_slot() -> None:
            mine.engine, mine.counts = slots.pop()

        def submit(item):
            return item, self.pool.submit(lambda: self._work(mine.engine, item, cache, mine.counts))

        self.pool = ThreadPoolExecutor(jobs, thread_name_prefix="fastpgn-analyse", initializer=take_slot)
        if self.progress is not None and args.input != "-":
            threading.Thread(target=self._count, args=(skip,), daemon=True, name="fastpgn-analyse-count").start()
        self.feeder = ReadAhead(self._feed(skip), name="fastpgn-analyse-reader", close_items=True)
        # At most 4 games an engine are handed out and not yet written.
        order = InOrder(self._games(self.feeder), submit, 4 * jobs, waiting=self._tick)
        code = 0
        try:
            for _, message in order:
                if message[0] == "fault":
                    _, index, game, exc = message
                    where = f"game {game.number} (PGN byte {game.offset})" if game is not None else "start-up"
                    written = f"; {plural(self.stats.written, 'game')} written" + (
                        f" to {args.output}, --resume continues" if args.output else "")
                    raise Failed(f"engine failed at {where}: {exc}{written}", 2)
                if self._write(message):
                    code = 1
                    raise _Stopped
                self._tick()
        except _Stopped:
            pass
        except KeyboardInterrupt:
            self.stop.set()
            for engine in self.engines:
                engine.kill()
            self._flush(order)
            self.say(f"fastpgn analyse: interrupted; {plural(self.stats.written, 'game')} written"
                     + (f" to {args.output}, --resume continues" if args.output else ""))
            return 130
        finally:
            self.stop.set()
            order.cancel()
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.feeder.cancel()
        if code:
            return code                 # _shutdown kills the engines, then joins their threads
        assert self._end is not None    # (the reader's last item is its counts)
        end_error = self._end[2]
        if end_error is not None:
            # (unreadable or not PGN: 2; damage, even before any game, is damage: 1)
            if (isinstance(end_error, InputError) and not isinstance(end_error, InputDamageError)
                    and self.stats.games_read == 0):
                raise Failed(f"{end_error}", 2)
            if isinstance(end_error, PGNError):
                what = "stopped at a bad game" if args.errors == "raise" and not isinstance(end_error, InputError) \
                    else "the input is damaged"
                self.say(f"fastpgn analyse: {what}: {end_error}; every game before it was written")
                return 1
            raise end_error
        if self.stats.games_read == 0 and not skip:
            raise Failed(f"{args.input}: no PGN games found (empty or not PGN)", 2)
        return 0

    def _games(self, fed):
        """The reader's games, its notes said as they come (ahead of the games still in the engines' hands)
        and its counts kept at the end."""
        for item in fed:
            kind = item[0]
            if kind == "note":
                self.say(item[1])
            elif kind == "end":
                self._end = item
                _, _, _, self.stats.games_read, self.stats.rejected, self.stats.filtered = item
            else:
                yield item

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

    def _flush(self, order) -> None:
        """After Ctrl-C: write the finished games that follow the written ones."""
        for _, message in order.finished():
            if message[0] != "game" or self._write(message):
                return

    def _continues(self, game) -> bool:
        """Whether the last game OUTPUT holds (--resume) is ``game``, the input's game at that place."""
        if self.args.format == "lines":
            return self._line(lichess_pgn(game)).split("\u2502", 1)[0] == self.resume_line_id
        return (game.headers or {"Result": game.result}) == self.resume_headers

    def _line(self, text: str) -> str:
        """The 22-field line of one game's PGN text: the converter's own kernel writes it."""
        from fastpgn import openings, scan as _scan

        if self._openings is None:
            self._openings = _scan.kernel.opening_table(openings.load())
        data = text.encode("utf-8")
        lines, _, rejects, _ = _scan.kernel.lines_from_block(data, 0, len(data), openings=self._openings)
        if rejects:     # written by lichess_pgn from a game the reader read: not expected
            raise Failed(f"fastpgn analyse: no 22-field line for an analysed game: {rejects[0][0]}", 2)
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
            raise Failed(self._cannot_write(exc), 2) from None
        except OutputError as exc:  # --format parquet|csv: a link planted at a chunk's name, a game without a row
            raise Failed(f"{exc}", 2) from None
        self.stats.written += 1
        if status == "analysed":
            self.stats.analysed += 1
        elif status == "kept":
            self.stats.kept += 1
        else:
            self.stats.not_analysed += 1
        return False

    # -- threads -----------------------------------------------------------------
    def _feed(self, skip: int):
        """The reader's games, on its own thread: ``("game", index, game, known)`` in order, a
        ``("note", text)`` for each rejected game, and last ``("end", games, error, read, rejected,
        filtered)``."""
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
                    yield "note", f"fastpgn analyse: {args.input}: {reader.rejected[reported].error()}"
                    reported += 1
                if self.stop.is_set():
                    break
                if index < skip:
                    if index == skip - 1 and not self._continues(game):
                        raise Failed(
                            f"{args.output} does not continue {args.input}: its last game ({skip:,}) has other "
                            "tags than the input's game at that place; --overwrite starts again", 2)
                    index += 1
                    continue
                if args.limit is not None and index >= args.limit:
                    limited = True
                    break
                if self.evals_db is not None:
                    batch.append((index, game))
                    last = game.number
                    index += 1
                    if len(batch) >= EVALS_DB_BATCH:
                        yield from self._looked_up(batch)
                    continue
                yield "game", index, game, None
                last = game.number
                index += 1
            else:
                if index < skip:
                    raise Failed(f"{args.output} holds {plural(skip, 'game')}, more than {args.input} ({index:,})", 2)
        except PGNError as exc:
            error = exc
        if batch:
            yield from self._looked_up(batch)
        while reported < len(reader.rejected):
            if error is None or reader.rejected[reported].error().game != getattr(error, "game", None):
                yield "note", f"fastpgn analyse: {args.input}: {reader.rejected[reported].error()}"
            reported += 1
        if reader.games_not_utf8:
            note = not_utf8_note(reader.games_not_utf8, reader.first_not_utf8)
            yield "note", f"fastpgn analyse: {args.input}: {note}"
        # --limit: the games up to the last one handed out, not the rest of the reader's block.
        if limited:
            rejected = reported
            # (the filtered ones before it: those the reader dropped between the games it gave)
            before = sum(1 for r in reader.rejected[:reported] if (r.error().game or 0) < last)
            filtered = max(0, last - index - before) if args.where is not None else 0
            read = index + reported + filtered
        else:
            rejected, filtered, read = len(reader.rejected), reader.games_filtered, reader.games_read
        self.total = index - skip
        yield "end", index, error, read, rejected, filtered

    def _looked_up(self, batch: list):
        """--evals-db: look the positions of a batch of games up at once, then hand the games out in order
        with the evals found."""
        from fastpgn.engine.evals_db import game_keys

        args = self.args
        keys: list = []
        for _, game in batch:
            wanted = not (args.only_missing and any(e is not None for e in game.evals)) and analysable(game) is None
            keys.append(game_keys(game) if wanted else None)
        assert self.evals_db is not None
        found = self.evals_db.lookup(k for ks in keys if ks for k in ks)
        games = [("game", index, game, None if ks is None else [found.get(k) for k in ks])
                 for (index, game), ks in zip(batch, keys)]
        batch.clear()
        yield from games

    def _work(self, engine: Engine, item, cache, counts) -> tuple:
        """One game, on an engine's thread: ``("game", index, game, text, status, note)``, or ``("fault",
        index, game, error)`` when the engine failed."""
        args = self.args
        _, index, game, known = item

        def counter(how: str) -> None:
            counts[0] += 1
            if how == "cached":
                counts[1] += 1
            elif how == "searched":
                counts[2] += 1
            elif how == "database":
                counts[3] += 1

        if self.stop.is_set():
            return ("stopped",)
        try:
            if args.only_missing and any(e is not None for e in game.evals):
                return "game", index, game, lichess_pgn(game), "kept", None
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
                return "game", index, game, lichess_pgn(game, evals), "analysed", None
            note = f"{args.input}: game {game.number} (PGN byte {game.offset}) not analysed: {reason}"
            return "game", index, game, lichess_pgn(game), "bad", note
        except EngineError as exc:
            return "fault", index, game, exc


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
