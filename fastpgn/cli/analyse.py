"""``python -m fastpgn analyse``: a UCI engine's eval for every ply of every game, written as lichess writes it.

This module owns the ``analyse`` command: its options, the checks of INPUT
and OUTPUT before any engine starts, ``--resume``'s truncation, the progress
bar, the messages, the summary and the exit status. The run itself (the
reader thread, one thread per engine, the games written in input order) is
``fastpgn.engine.pipeline``'s, the Parquet and CSV output
``fastpgn.convert.table_out``'s, and what is done to one game (its evals,
the cache, lichess's layout) :mod:`fastpgn.engine.analysis`'s.

With ``-j N`` the games go to N engines at once and come out in input order.
A position met again in the run (the openings) is served from a cache keyed
by its FEN without the move counters and the search limit (``--no-cache``:
every position searched).
"""

from __future__ import annotations

import argparse
import mmap
import os
import sys
import time

from fastpgn.cli._common import (
    add_encoding_argument,
    add_jobs_option,
    add_parquet_writer_option,
    parse_args,
    plural,
    progress_bar,
    set_progress_total,
)
from fastpgn.cli._filters import FilterParser, add_filter_arguments
from fastpgn.convert.table_out import TableOut, chunk_files, is_folder, stem_of
from fastpgn.engine import EngineError
from fastpgn.engine.analysis import complete_games
from fastpgn.engine.pipeline import DEFAULT_NODES, Failed, Pipeline, _OutputFile
from fastpgn.errors import InputError, OutputError
from fastpgn.io import output as _output

__all__ = ["main"]

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


class _Run(Pipeline):
    """The command's side of a run: INPUT and OUTPUT checked, OUTPUT opened, the messages and the summary."""

    # -- set-up ------------------------------------------------------------------
    def _check_files(self) -> int:
        """Check INPUT and OUTPUT; returns how many games OUTPUT already holds (``--resume``)."""
        args = self.args
        if args.input != "-":
            self._check_input(args.input, args.encoding)
        if args.resume and args.overwrite:
            raise Failed("--resume continues OUTPUT and --overwrite replaces it: give one of them", 2)
        if args.parquet_writer != "fastpgn" and args.format != "parquet":
            raise Failed(f"--parquet-writer {args.parquet_writer} writes Parquet files: add --format parquet", 2)
        if args.format in ("parquet", "csv"):
            if args.resume:
                raise Failed(f"--resume continues pgn and lines output, not --format {args.format}: "
                              "run again with --overwrite", 2)
            if args.output is None and args.format == "parquet":
                raise Failed("--format parquet needs -o OUTPUT (a file, or a folder for chunks)", 2)
            if args.format == "parquet":
                from fastpgn.schema import require_pyarrow

                try:
                    require_pyarrow("--format parquet")
                except ImportError as exc:
                    raise Failed(f"{exc}", 2) from None
            if args.output is not None and is_folder(args.output):
                if args.format == "csv":
                    raise Failed(f"--format csv writes one file, not a folder: {args.output}", 2)
                self._refuse_links(args.output)
                chunks = chunk_files(args.output)
                if chunks and not args.overwrite:
                    raise Failed(f"{args.output} holds {plural(len(chunks), 'Parquet chunk')}: --overwrite "
                                  "replaces them", 2)
                return 0
        if args.output is None:
            if args.resume:
                raise Failed("--resume needs -o OUTPUT", 2)
            return 0
        try:
            _output.named(args.output)     # (a link there is refused: never written through)
        except OutputError as exc:
            raise Failed(f"{exc}", 2) from None
        if args.input != "-" and os.path.exists(args.output) and os.path.samefile(args.input, args.output):
            raise Failed(f"{args.output} is INPUT: write somewhere else", 2)
        if not os.path.exists(args.output) or os.path.getsize(args.output) == 0 or args.overwrite:
            return 0
        if not args.resume:
            raise Failed(f"{args.output} exists: --resume continues it, --overwrite replaces it", 2)
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
        stem = stem_of(self.args.input)
        if os.path.isdir(folder):
            try:
                _output.refuse_links(os.path.join(folder, name) for name in sorted(os.listdir(folder))
                                    if name.startswith((f"{stem}.part_", f".{stem}.part_")))
            except OutputError as exc:
                raise Failed(f"{exc}", 2) from None

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
            raise Failed(f"{exc}", 2) from None

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
            raise Failed(f"--evals-db: {exc}", 2) from None
        except OSError as exc:
            raise Failed(f"--evals-db: cannot write its index: {exc.strerror or exc}", 2) from None

    def _open_output(self, resumed: int):
        if self.args.format in ("parquet", "csv"):
            return TableOut(self.args.format, self.args.output, stem_of(self.args.input), self.args.overwrite,
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
                raise Failed(f"cannot write {args.output}: {exc.strerror or exc}", 2) from None
            except OutputError as exc:
                raise Failed(f"{exc}", 2) from None
            except EngineError as exc:
                raise Failed(f"{exc}", 2) from None
            if not args.quiet and sys.stderr.isatty():
                try:
                    self.progress = _Progress()
                except ImportError:
                    self.progress = None
            code = self._pipeline(resumed)
            self._close_table()
        except Failed as exc:
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
        if isinstance(self.out, TableOut):
            out, self.out = self.out, None
            try:
                out.close()
            except OSError as exc:
                raise Failed(f"cannot write {self.args.output or 'stdout'}: {exc.strerror or exc}", 2) from None
            except OutputError as exc:     # a link planted at a chunk's name, a game without a row
                raise Failed(f"{exc}", 2) from None

    def _shutdown(self, code: int) -> int:
        """End the engines, the threads and OUTPUT; the exit status, ``code`` unless closing OUTPUT failed."""
        self._stop_threads(code)
        if self.progress is not None:
            self.progress.close()
            self.progress = None
        if isinstance(self.out, TableOut):
            try:
                self._close_table()     # a failed run: the games finished are written
            except Failed as exc:
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

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
