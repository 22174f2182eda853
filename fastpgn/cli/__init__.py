"""``python -m fastpgn``: the dump converter and the converters for the other notations.

    python -m fastpgn INPUT... CHUNK_SIZE [options]   lichess PGN -> chunks of 22-field lines
    python -m fastpgn lichess-text INPUT ...          compact lichess strings <-> PGN (pgn-transform)
    python -m fastpgn crypt encode|decode INPUT ...   PGN Crypt
    python -m fastpgn icn INPUT [--json] [--to-pgn]   standard games between PGN and ICN
    python -m fastpgn analyse INPUT -o OUT            a UCI engine's eval on every ply
    python -m fastpgn explorer DATASET -o TREE        an opening tree in DuckDB; explorer-lookup reads it
    python -m fastpgn positions-index DATASET         the position index games_reaching reads
    python -m fastpgn openings DIR [-o FILE]          build the openings map from the lichess list
    python -m fastpgn report INPUT... -o FILE         a dump at a glance in one HTML page

Data goes to files or stdout; progress (on a terminal), warnings and the
summary go to stderr. Every command exits by one rule (``EXIT_CODES``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
import time

import fastpgn
from fastpgn.cli import _process
from fastpgn.cli._common import (
    add_encoding_argument,
    add_jobs_option,
    add_parquet_writer_option,
    at_least_one,
    guarded,
    not_utf8_note,
    plural,
    progress_bar,
)
from fastpgn.cli._filters import FilterParser, add_filter_arguments
from fastpgn.errors import InputError, PGNError

EXIT_CODES = """\
exit status (the same for every command):
  0    the run finished; bad games it skipped are counted on stderr and kept
       (the converter: in _<input>.rejected.pgn), and do not fail the run
  1    the input is damaged (truncated or corrupt: the games after the damage
       are lost, every whole game before it is written), or --errors raise
       stopped the run at a bad game
  2    usage error; missing, unreadable, empty or non-PGN input; output that
       cannot be written, or that another run owns or is writing
  130  interrupted (Ctrl-C); a closed stdout (| head) exits 0
with several inputs (the converter), each is converted whatever befalls the
others, and the exit status is the highest of theirs (2 over 1 over 0)
byte offsets in messages count bytes of the decompressed PGN, not of the .zst/.bz2/.gz file
"""

SUBCOMMANDS = {
    "lichess-text": "fastpgn.cli.lichess_text",
    "crypt": "fastpgn.cli.crypt",
    "icn": "fastpgn.cli.icn",
    "analyse": "fastpgn.cli.analyse",
    "spark": "fastpgn.cli.spark",
    "report": "fastpgn.cli.report",
    "explorer": "fastpgn.cli.explorer",
    "explorer-lookup": "fastpgn.cli.explorer:lookup_main",
    "positions-index": "fastpgn.cli.positions_index",
}

EXAMPLES = """\
examples:
  python -m fastpgn lichess_db_standard_rated_2024-01.pgn.zst 100000
      chunks lichess_db_standard_rated_2024-01.pgn.zst.part_000000.cri.gz, ... beside the input
  python -m fastpgn dump.pgn.bz2 100_000 -o out/ -j 8 --compression zst
  python -m fastpgn dumps/2024-*.pgn.zst 100000 -o out/ -j 16
      several inputs at once, each one's chunks as if converted alone; also 'dumps/*.pgn.zst' or dumps/
  zstdcat dump.pgn.zst | python -m fastpgn - 50000 -o out/
  python -m fastpgn dump.pgn.zst 100000 --resume        after an interruption
  python -m fastpgn dump.pgn.zst 100000 --validate --uci   replay every game; UCI moves in field 20
  python -m fastpgn dump.pgn.zst 100000 --format parquet -o out/
      typed columns (docs/schema.md): out/dump.pgn.zst.part_000000.parquet, ...
  python -m fastpgn dump.pgn.zst -o - --format csv | duckdb -c "SELECT speed, avg(white_elo) FROM read_csv('/dev/stdin') GROUP BY 1"

other commands (each has --help):
  lichess-text   compact lichess game strings <-> PGN, with statistics (as pgn-transform)
  crypt          PGN Crypt: encode and decode
  icn            standard games between PGN and Infinite Chess Notation
  analyse        add a UCI engine's [%eval] to every ply, as lichess writes it
  spark          many dumps to one Parquet dataset on Spark, one task per file
  explorer       an opening tree: every (position, move) of the first plies, counted in DuckDB
  explorer-lookup  a position's moves in that tree, as lichess's opening explorer shows them
  positions-index  the games reaching each position of a --positions dataset, sorted by key for games_reaching
  openings       build the openings map from the lichess chess-openings list
  report         a dump (or its Parquet) at a glance: charts and tables in one HTML page

Bad games are skipped, counted and appended with their byte offset and reason
to _<input>.rejected.pgn beside the chunks; games read = written + rejected.
A second run into a folder that holds the input's chunks needs --resume (go
on with an interrupted run) or --overwrite (start again).

Several inputs: name them, give a folder (the .pgn, .pgn.zst, .pgn.bz2 and
.pgn.gz files directly in it, by name; a folder of Parquet files and no PGN
is lichess's Parquet release, read as one input) or a quoted glob pattern
('dumps/*.pgn.zst', ** for subfolders). With two or more positional
arguments the last is CHUNK_SIZE when it is a whole number (write a file
named like a number as ./2024), or the first, in the original's order.
Several inputs are converted at once, sharing the -j workers; each is a run
of its own: its chunks, --resume, --limit and rejected games are exactly
those of a run on it alone, and a damaged input is named, with its byte
offset, while the others go on. A summary line per input, then a total.
Missing inputs, or two inputs of one name into one folder, stop the run
before it starts. With -o - the inputs are one stream, one after the other
in order (CSV's header row once).

""" + EXIT_CODES  # noqa: E501 (a command line to copy whole)


def _chunk_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"CHUNK_SIZE must be a whole number such as 100000 or 100_000, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("CHUNK_SIZE must be at least 1")
    return value


def _is_int(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


def convert_parser() -> argparse.ArgumentParser:
    parser = FilterParser(
        prog="python -m fastpgn", name="fastpgn",
        description="Turn a lichess PGN dump (.pgn.zst, .pgn.bz2, .pgn.gz, plain, or - for stdin; "
                    "recognised by content) into chunk files of one 22-field line per game, on every core.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", metavar="INPUT", nargs="+",
                        help="PGN file (any compression), - for stdin, or lichess's Parquet release (a .parquet "
                             "file or a folder of them); several files, a folder of PGN files or a quoted glob "
                             "pattern convert several inputs at once (below)")
    # Which positional argument is CHUNK_SIZE is decided before argparse sees them (_positionals).
    parser.add_argument("chunk_size", metavar="CHUNK_SIZE", nargs="?",
                        help="games per output file, e.g. 100000 or 100_000 (none needed with -o -); with several "
                             "positional arguments, the last one when it is a whole number")
    parser.add_argument("-o", "--output-dir", metavar="DIR",
                        help="folder for the chunks (default: beside the input; the current folder for stdin or a "
                             "pipe); - writes one stream to stdout instead (lines, csv or pgn, uncompressed by "
                             "default)")
    parser.add_argument("--format", choices=("lines", "parquet", "csv", "pgn"), default="lines",
                        help="lines (default): the 22-field line of python-lichess-db-pgn-parser; parquet: the "
                             "analysis schema (typed columns, per-ply lists; docs/schema.md), one .parquet file a "
                             "chunk, needs pyarrow (pip install \"fastpgn[arrow]\"); csv: the same columns as CSV "
                             "with a header row; pgn: each kept game exactly as the input holds it (an extract: "
                             "with the filters, --limit, --validate)")
    parser.add_argument("--partition", choices=("month",), default=None,
                        help="month: Parquet chunks in year=YYYY/month=MM/ folders by the month of play (UTCDate, "
                             "else Date; no date: year=0/month=00), the layout of lichess's own Parquet release; "
                             "needs --format parquet")
    add_parquet_writer_option(parser)
    add_jobs_option(parser, None, "every core",
                    "workers, at least 1 (default: every core): threads with the compiled kernel (--validate "
                    "and --uci too), processes with the pure one; output is identical for any N")
    parser.add_argument("--inputs-at-once", type=at_least_one, metavar="N",
                        help="with several inputs, how many are converted at a time, all sharing the -j "
                             "workers (default: half the workers, at least 2; one at a time with -o -)")
    parser.add_argument("--compression", choices=("gz", "zst", "none"), default=None,
                        help="chunk compression of lines, csv and pgn (default gz: gzip, Spark and Python read it "
                             "whole; none with -o -); Parquet is zstd inside")
    parser.add_argument("--errors", choices=("skip", "raise"), default="skip",
                        help="skip (default): reject bad games to _<input>.rejected.pgn and go on; "
                             "raise: stop at the first one")
    parser.add_argument("--limit", type=_chunk_size, metavar="N", help="stop after writing N games")
    parser.add_argument("--openings-map", metavar="FILE",
                        help="openings map in the original format (CCCNNN\u2502CCC\u2502Name per line) "
                             "instead of the shipped one")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run: keep the complete chunks, redo the rest")
    parser.add_argument("--overwrite", action="store_true",
                        help="remove this input's chunks, rejected games and state from an earlier run "
                             "in the output folder first")
    parser.add_argument("--validate", action="store_true",
                        help="replay every game on a board; a game with an illegal move is rejected")
    parser.add_argument("--uci", action="store_true",
                        help="write UCI moves (e2e4) instead of SAN in field 20 (implies --validate)")
    parser.add_argument("--positions", action="store_true",
                        help="--format parquet/csv: a zobrist column, each ply's Polyglot key (implies --validate)")
    parser.add_argument("--fens", action="store_true",
                        help="--format parquet/csv: a fens column, the FEN after each ply (implies --validate)")
    add_encoding_argument(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    add_filter_arguments(parser)
    parser.add_argument("--version", action="version",
                        version=f"fastpgn {fastpgn.__version__} (backend: {fastpgn.BACKEND})")
    return parser


def openings_main(argv) -> int:
    from fastpgn import openings

    parser = argparse.ArgumentParser(
        prog="python -m fastpgn openings",
        description="Build the openings map (original CCCNNN\u2502CCC\u2502Name format) from the lichess "
                    "chess-openings TSV files (a.tsv ... e.tsv).",
        epilog="example: python -m fastpgn openings chess-openings/ -o fastpgn/data/openings.tsv")
    parser.add_argument("source", metavar="DIR", help="folder with the lichess chess-openings .tsv files")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        lines = openings.build(args.source)
    except (OSError, ValueError) as exc:
        print(f"fastpgn openings: {exc}", file=sys.stderr)
        return 2
    text = "\n".join(lines) + "\n"
    if args.output:
        from fastpgn.errors import OutputError
        from fastpgn.io.output import open_named

        try:
            with open_named(args.output, "w", encoding="utf-8") as out:
                out.write(text)
        except (OutputError, OSError) as exc:
            print(f"fastpgn openings: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 0


class _Progress:
    """A tqdm bar on a terminal: how much of the input file is read (for the ETA); PGN MB, MB/s, games.

    The bar's length is the compressed file, the one size known before the
    end; the figures beside it are in the summary's unit, MB (10^6 bytes) of
    decompressed PGN.
    """

    def __init__(self, total: int | None) -> None:
        self.start = time.perf_counter()
        self.bar = progress_bar("fastpgn", total, "0 MB of PGN")

    def __call__(self, raw_read: int, offset: int, written: int, rejected: int) -> None:
        seconds = time.perf_counter() - self.start
        rate = offset / 1e6 / seconds if seconds > 0 else 0.0
        self.bar.set_description_str(f"{offset / 1e6:,.0f} MB of PGN, {rate:,.1f} MB/s, {plural(written, 'game')}, "
                                     f"{rejected:,} rejected", refresh=False)
        self.bar.update(raw_read - self.bar.n)

    def close(self) -> None:
        self.bar.close()





def _positional_indexes(parser: argparse.ArgumentParser, argv: list[str]) -> list[int]:
    """Where in ``argv`` the positional arguments are: not options, nor the values options take."""
    takes_value = {flag for action in parser._actions if action.nargs != 0 for flag in action.option_strings}
    found: list[int] = []
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--":
            return found + list(range(i + 1, len(argv)))
        elif arg.startswith("-") and arg != "-" and not _is_int(arg):   # ("-5": a CHUNK_SIZE, refused below)
            skip = arg in takes_value          # "--min-elo 2000"; "--min-elo=2000" is one token
        else:
            found.append(i)
    return found


def _positionals(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """``argv`` taken apart: the inputs, the CHUNK_SIZE text (None when not given), and the options.

    With two or more positional arguments the last is CHUNK_SIZE when it is
    a whole number; else the first is, when it is one and names no file (the
    original's order, ``100_000 FILE``). A single one is the input.
    """
    where = _positional_indexes(parser, argv)
    values = [argv[i] for i in where]
    taken = set(where)
    # The "--" that ends the options goes too: the inputs are handed back after one of our own.
    dashes = next((i for i, arg in enumerate(argv) if arg == "--" and i not in taken), None)
    options = [arg for i, arg in enumerate(argv) if i not in taken and i != dashes]
    chunk = None
    if len(values) >= 2:
        if _is_int(values[-1]):
            chunk, values = values[-1], values[:-1]
        elif _is_int(values[0]) and not os.path.exists(values[0]):
            chunk, values = values[0], values[1:]
    return values, chunk, options


def convert_main(argv) -> int:
    from fastpgn.convert.converter import Options
    from fastpgn.convert.many import expand_inputs

    parser = convert_parser()
    inputs, chunk, options = _positionals(parser, list(argv))
    args = parser.parse_args([*options, "--", *inputs] if inputs else options)
    try:
        args.chunk_size = None if chunk is None else _chunk_size(chunk)
    except argparse.ArgumentTypeError as exc:
        parser.error(f"argument CHUNK_SIZE: {exc}")
    to_stdout = args.output_dir == "-"
    if args.chunk_size is None and not to_stdout:
        import glob

        last = args.inputs[-1] if len(args.inputs) >= 2 else None
        if last is not None and not (last == "-" or os.path.exists(last) or glob.has_magic(last)):
            # "dump.pgn.zst 100,000": a mistyped CHUNK_SIZE, not a second input
            parser.error(f"argument CHUNK_SIZE: the last argument, {last!r}, is neither a file nor a whole "
                         "number of games per chunk (such as 100000 or 100_000)")
        parser.error("the following arguments are required: CHUNK_SIZE (games per chunk file; "
                     "leave it out only with -o -, one stream to stdout)")
    if args.partition and args.format != "parquet":
        parser.error(f"--partition {args.partition} writes Parquet folders: add --format parquet")
    if args.parquet_writer != "fastpgn" and args.format != "parquet":
        parser.error(f"--parquet-writer {args.parquet_writer} writes Parquet files: add --format parquet")
    if (args.positions or args.fens) and args.format in ("lines", "pgn"):
        parser.error(f"{'--positions' if args.positions else '--fens'} writes a column of the analysis schema: "
                     "add --format parquet or --format csv")
    if args.uci and args.format == "pgn":
        parser.error("--uci writes UCI moves, and --format pgn writes each game as it was read: use --validate "
                     "to keep only the games that replay")
    if args.compression is not None and args.format == "parquet":
        print(f"fastpgn: --compression {args.compression} compresses lines, csv and pgn chunks; Parquet is "
              "compressed inside (zstd): leave --compression out", file=sys.stderr)
        return 2
    if args.resume and args.overwrite:
        print("fastpgn: --resume continues an earlier run and --overwrite removes it: give one of them",
              file=sys.stderr)
        return 2
    try:
        inputs = expand_inputs(args.inputs)
        _check_inputs(inputs)
    except InputError as exc:
        print(f"fastpgn: {exc}", file=sys.stderr)
        return 2
    if args.inputs_at_once is not None and len(inputs) == 1:
        print(f"fastpgn: --inputs-at-once {args.inputs_at_once} says how many of several inputs are converted "
              f"at a time, and {inputs[0]} is the only input", file=sys.stderr)
        return 2
    compression = args.compression or ("none" if to_stdout else "gz")
    opts = Options(input=inputs[0], chunk_size=args.chunk_size or 0, output_dir=args.output_dir,
                   compression=compression, jobs=args.jobs or 0, errors=args.errors, limit=args.limit,
                   openings_map=args.openings_map, resume=args.resume, overwrite=args.overwrite,
                   validate=args.validate or args.uci or args.positions or args.fens, uci=args.uci,
                   where=args.where, format=args.format, partition=args.partition, encoding=args.encoding,
                   positions=args.positions, fens=args.fens, parquet_writer=args.parquet_writer)
    if len(inputs) > 1:
        return _convert_many(args, inputs, opts)
    progress = None
    if not args.quiet and sys.stderr.isatty():
        try:
            size = None if opts.input == "-" else os.path.getsize(opts.input)
            progress = _Progress(size)
        except (ImportError, OSError):
            progress = None
    from fastpgn.convert.converter import Converter

    converter = summary = error = None
    try:
        converter = Converter(opts, progress)
        summary = converter.run()
    except KeyboardInterrupt:
        print(f"fastpgn: {_interrupted(args)}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise                       # the reader of stdout left (| head): guarded ends quietly
    except (PGNError, ImportError, OSError) as exc:
        error = exc
    finally:
        if progress is not None:
            progress.close()
    return _report(opts.input, summary, error, converter, args, print_line)


def _check_inputs(inputs: list[str]) -> None:
    """Raise InputError for a folder among ``inputs`` that holds neither PGN files nor Parquet files (a
    folder of PGN files was expanded to them already, by expand_inputs)."""
    from fastpgn.convert.many import PGN_SUFFIXES
    from fastpgn.io.sources import is_parquet_input

    for path in inputs:
        if os.path.isdir(path) and not is_parquet_input(path):
            raise InputError(f"{path}: a folder holding no PGN files (none named *{', *'.join(PGN_SUFFIXES)}) "
                             "and no Parquet files")


def _interrupted(args) -> str:
    """What Ctrl-C leaves: chunks to --resume, or (-o -) a stream cut short, which only a new run writes whole."""
    if args.output_dir == "-":
        return "interrupted; the stream to stdout was cut short, rerun to write it whole"
    return "interrupted; complete chunks were kept, rerun with --resume to continue"


def print_line(line: str) -> None:
    print(line, file=sys.stderr)


def _report(name: str, summary, error: BaseException | None, converter, args, say, many: bool = False) -> int:
    """Say how the run on ``name`` ended (its summary, or ``error``) through ``say``; its exit status.

    With ``many`` (one of several inputs) each line names the input, and the
    summary line leaves the backend and workers to the total's line.
    """
    from fastpgn.convert.converter import OutputError

    def named(message: str) -> str:
        return message if not many or name in message else f"{name}: {message}"

    if error is not None:
        if isinstance(error, (OutputError, InputError)):
            say(f"fastpgn: {named(str(error))}")
            return 2
        if isinstance(error, PGNError):
            say(f"fastpgn: {named('stopped at a bad game: ')}{error}")
            return 1
        if isinstance(error, ImportError):      # --format parquet without pyarrow: the message names the extra
            say(f"fastpgn: {error}")
            return 2
        if isinstance(error, OSError):
            say(f"fastpgn: {named('cannot write output: ')}{error.strerror or error}")
            return 2
        raise error
    s = summary
    if s.games_read == 0 and s.resumed_from_chunk == 0 and not s.damage:
        say(f"fastpgn: {name}: no PGN games found (empty or not PGN)")
        return 2
    if s.already_complete:
        if not args.quiet:
            say(f"fastpgn: nothing to resume: {name} was converted already ("
                f"{plural(s.games_written, 'game')} written, {s.games_rejected:,} rejected, "
                f"{plural(s.chunks, 'chunk')}); --overwrite converts it again")
        return 0
    if not args.quiet:
        say(f"fastpgn: {named(_counts(s, args))}"
            + ("" if many else f", backend {s.backend}, {plural(s.workers, 'worker')}"))
        if s.games_rejected:
            say(f"fastpgn: {named('rejected games, each with its reason: ')}{converter.rejects_path}")
        if s.split_note:
            say(f"fastpgn: {named(s.split_note)}")
    if s.games_not_utf8:
        # Never silent, -q or not: the games were written with U+FFFD for those bytes.
        say(f"fastpgn: {named(not_utf8_note(s.games_not_utf8, s.first_not_utf8))}")
    if s.damage:
        # -o - cannot be resumed: the stream is written again from the start.
        again = "rerun" if args.output_dir == "-" else "rerun with --resume"
        say(f"fastpgn: {named(s.damage)}; every whole game before the damage was written "
            f"({again} once the input is whole)")
        return 1
    return 0


def _counts(s, args) -> str:
    """A summary's counts, place, size, time and rate, as the summary line gives them."""
    filtered = f", {s.games_filtered:,} filtered out" if args.where is not None else ""
    where_to = "to stdout" if args.output_dir == "-" else plural(s.chunks, 'chunk')
    return (f"{plural(s.games_written, 'game')} written, {s.games_rejected:,} rejected{filtered} "
            f"(of {s.games_read:,} read), {where_to}, {s.bytes_in / 1e6:,.1f} MB of PGN, "
            f"{s.seconds:.1f} s, {s.mb_per_s:,.1f} MB/s")


class _ManyProgress:
    """One bar for several inputs converted at once: the sums of every input's figures."""

    def __init__(self, sizes: list[int | None]) -> None:
        self.bar = _Progress(None if None in sizes else sum(s or 0 for s in sizes))
        self._parts: list[tuple[int, ...]] = [(0, 0, 0, 0)] * len(sizes)
        self._lock = threading.Lock()

    def part(self, index: int):
        """The progress callback of the ``index``-th input's run (called on that run's thread)."""
        def update(*figures: int) -> None:
            with self._lock:
                self._parts[index] = figures
                self.bar(*(sum(column) for column in zip(*self._parts)))
        return update

    def say(self, line: str) -> None:
        with self._lock:
            self.bar.bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


def _convert_many(args, inputs: list[str], opts) -> int:
    """Several inputs at once: a summary line per input as it ends, a total, the highest exit status."""
    from fastpgn.convert.converter import OutputError, Summary
    from fastpgn.convert.many import ManyInputs

    if "-" in inputs:
        print("fastpgn: - (stdin) can only be converted on its own, not among other inputs", file=sys.stderr)
        return 2
    missing = [name for name in inputs if not os.path.exists(name)]
    for name in missing:
        print(f"fastpgn: {name}: no such file", file=sys.stderr)
    if missing:
        return 2
    progress = None
    if not args.quiet and sys.stderr.isatty():
        try:
            progress = _ManyProgress([os.path.getsize(n) if os.path.isfile(n) else None for n in inputs])
        except ImportError:
            progress = None
    say = progress.say if progress is not None else print_line
    try:
        many = ManyInputs(inputs, opts, progress.part if progress is not None else None, args.inputs_at_once)
    except (OutputError, InputError, ImportError) as exc:
        if progress is not None:
            progress.close()
        print(f"fastpgn: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    first = many.converters[0].summary
    total = Summary(backend=first.backend, workers=first.workers)
    worst = 0
    failed: list[str] = []
    unexpected: BaseException | None = None
    try:
        for outcome in many.run():
            if isinstance(outcome.error, BrokenPipeError):
                raise outcome.error     # the reader of stdout left (| head): guarded ends quietly
            try:
                code = _report(outcome.input, outcome.summary, outcome.error, outcome.converter, args, say, True)
            except Exception as exc:  # noqa: BLE001 - a fault of fastpgn's own: raised once the others are done
                unexpected = unexpected or exc
                code = 2
            worst = max(worst, code)
            if code:
                failed.append(outcome.input)
            s = outcome.summary
            if s is not None:
                for name in ("games_read", "games_written", "games_rejected", "games_filtered", "chunks",
                             "bytes_in"):
                    setattr(total, name, getattr(total, name) + getattr(s, name))
    except KeyboardInterrupt:
        say(f"fastpgn: {_interrupted(args)}")
        return 130
    finally:
        if progress is not None:
            progress.close()
    if unexpected is not None:
        raise unexpected
    total.seconds = time.perf_counter() - start
    if not args.quiet:
        shown = ", ".join(failed[:3]) + (f" and {len(failed) - 3:,} more" if len(failed) > 3 else "")
        outcome_text = f"; {len(failed):,} failed: {shown}" if failed else ""
        print(f"fastpgn: {plural(len(inputs), 'input')}: {_counts(total, args)}, backend {total.backend}, "
              f"{plural(total.workers, 'worker')}, {plural(many.at_once, 'input')} at a time{outcome_text}",
              file=sys.stderr)
    return worst


USAGE = """\
usage: python -m fastpgn INPUT CHUNK_SIZE [options]   a PGN dump -> chunks of 22-field lines (or Parquet, CSV)
       python -m fastpgn lichess-text INPUT ...        compact lichess strings <-> PGN
       python -m fastpgn crypt encode|decode INPUT ... PGN Crypt
       python -m fastpgn icn INPUT ...                 PGN <-> Infinite Chess Notation
       python -m fastpgn analyse INPUT [-o OUT]        a UCI engine's eval on every ply, as lichess writes it
       python -m fastpgn spark INPUT... -o DIR         many dumps to one Parquet dataset on Spark
       python -m fastpgn explorer DATASET -o TREE      an opening tree; explorer-lookup TREE FEN reads it
       python -m fastpgn positions-index DATASET       the games reaching each position, for games_reaching
       python -m fastpgn openings DIR [-o FILE]        the openings map from the lichess list
       python -m fastpgn report INPUT... -o FILE       a dump at a glance: charts in one HTML page
each command has --help; python -m fastpgn --help lists the converter's options"""


def _not_a_command(word: str, rest: list[str]) -> str | None:
    """The error for a first argument that looks like a mistyped command, not an input; else None."""
    import difflib

    commands = [*SUBCOMMANDS, "openings"]
    if word in commands or word == "-" or word.startswith("-") or os.path.exists(word) or _is_int(word):
        return None
    if not word.replace("-", "").isalpha() or not word.islower():
        return None
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    positional = [a for a in rest if not a.startswith("-")]
    if not close and positional and _is_int(positional[0]):
        return None     # a missing input file named like a word: the converter says "no such file"
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"fastpgn: {word!r} is neither a command ({', '.join(commands)}) nor an existing file{hint}"


def main(argv=None) -> int:
    _process.settle()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    unknown = _not_a_command(argv[0], argv[1:])
    if unknown:
        print(unknown, file=sys.stderr)
        return 2
    if argv and argv[0] in SUBCOMMANDS:
        module_name, _, function = SUBCOMMANDS[argv[0]].partition(":")
        return getattr(importlib.import_module(module_name), function or "main")(argv[1:])
    if argv and argv[0] == "openings":
        return guarded(lambda: openings_main(argv[1:]))
    return guarded(lambda: convert_main(argv))
