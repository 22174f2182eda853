"""``python -m fastpgn explorer`` and ``explorer-lookup``: an opening tree built in DuckDB, and a position's moves.

The aggregation and the lookup are :mod:`fastpgn.explorer`'s; this module
owns the options, the conversion of a PGN input on the way (into a
temporary folder, positions on), the progress bar, the summary and the exit
status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from fastpgn.cli._common import Parser, guarded, parse_args, plural
from fastpgn.cli._filters import FilterParser, add_filter_arguments
from fastpgn.errors import InputError, OutputError, PGNError
from fastpgn.io import output

__all__ = ["lookup_main", "main"]

EXIT_RULE = """\
exit status (the same rule as every fastpgn command):
  0    the tree is written (games without positions are counted in the summary)
  1    a PGN input is damaged (the tree holds the games before the damage)
  2    usage error; missing, unreadable or non-Parquet/non-PGN input; a Parquet
       dataset written without --positions --uci; output that cannot be written
  130  interrupted (Ctrl-C): no tree is written
"""

EXAMPLES = """\
examples:
  python -m fastpgn dump.pgn.zst 100000 --format parquet --positions --uci -o games/
  python -m fastpgn explorer games/ -o tree.parquet --max-plies 20 --by-speed --by-rating
  python -m fastpgn explorer dump.pgn.zst -o tree.parquet --min-elo 2000 --speed blitz,rapid
  python -m fastpgn explorer-lookup tree.parquet "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"

DATASET is Parquet the converter wrote with --positions --uci (a file, or a
folder: every .parquet under it), or a PGN dump (any compression), converted
on the way by the converter (every core; positions and UCI on) into a
temporary folder beside -o (--temp-dir), removed after; bad games are
skipped, counted and kept with their reasons in TREE.rejected.pgn. DuckDB aggregates out of core: past --memory-limit it
spills to the temporary folder.

The games count as lichess's opening explorer counts them: only decisive or
drawn games of two rated players, neither a BOT, with a clock (--every-game
counts every game); a position a game reached again counts once, with the
last move played from it; a move's rating is its movers' average. The tree
is one Parquet file, one row per (position, speed, rating group, move):
zobrist (the Polyglot key of the position before the move, signed 64-bit),
speed, rating, uci, san, games, white, draws, black, rating_sum, rated,
games_kept (docs/explorer.md).

""" + EXIT_RULE


def _plies(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of plies, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def parser() -> argparse.ArgumentParser:
    from fastpgn.explorer import DEFAULT_MAX_PLIES, DEFAULT_MEMORY

    p = FilterParser(prog="python -m fastpgn explorer", name="fastpgn explorer",
                     description="Count every (position, move) pair of the games' first plies, with the results "
                                 "and ratings, into an opening tree (Parquet) that explorer-lookup reads.",
                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", metavar="DATASET",
                   help="Parquet written with --positions --uci (file or folder), or a PGN dump")
    p.add_argument("-o", "--output", metavar="TREE", required=True, help="the tree's Parquet file")
    p.add_argument("--max-plies", type=_plies, default=DEFAULT_MAX_PLIES, metavar="N", dest="depth",
                   help=f"count the first N plies of each game (default {DEFAULT_MAX_PLIES}; here not the filter "
                        "of the other commands: --min-plies filters by length)")
    p.add_argument("--every-game", action="store_true",
                   help="count every game, not only those lichess's explorer counts (decisive or drawn, both "
                        "players rated, no BOT, a clock)")
    p.add_argument("--by-speed", action="store_true",
                   help="(always on: every tree has a row per speed; kept for older scripts)")
    p.add_argument("--by-rating", action="store_true",
                   help="(always on: every tree has a row per rating group, lichess's 0, 1000, 1200, 1400, "
                        "1600, 1800, 2000, 2200, 2500, 2800; kept for older scripts)")
    p.add_argument("--memory-limit", default=DEFAULT_MEMORY, metavar="SIZE",
                   help="DuckDB's memory limit (default %(default)s); past it DuckDB spills to --temp-dir")
    p.add_argument("--temp-dir", metavar="DIR",
                   help="DuckDB's spill folder and a PGN input's conversion (default: beside TREE, removed after)")
    p.add_argument("-j", "--jobs", type=_plies, metavar="N", help="DuckDB threads (default: every core)")
    p.add_argument("--overwrite", action="store_true", help="replace TREE if it exists")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    add_filter_arguments(p, leave_out=("--max-plies",))
    return p


def _is_parquet(path: str) -> bool:
    """Whether DATASET is Parquet: a folder holding .parquet files (those the tree reads), or a file starting
    with PAR1."""
    if os.path.isdir(path):
        from fastpgn._duckdb_files import parquet_files

        return bool(parquet_files(path))
    with open(path, "rb") as fh:
        return fh.read(4) == b"PAR1"


class _Bar:
    """A tqdm bar on a terminal: one step, then DuckDB's percent of the query."""

    def __init__(self, desc: str) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=100, desc=desc, dynamic_ncols=True, mininterval=0.25, file=sys.stderr,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")

    def __call__(self, percent: float) -> None:
        self.bar.update(max(0.0, min(100.0, percent) - self.bar.n))

    def close(self) -> None:
        self.bar.close()


def main(argv: list[str] | None = None) -> int:
    """The ``explorer`` command: ``main(["games/", "-o", "tree.parquet"])`` returns the exit code."""
    args = parse_args(parser(), argv)
    if isinstance(args, int):
        return args
    return guarded(lambda: _run(args))


def _say(text: str) -> None:
    print(f"fastpgn explorer: {text}", file=sys.stderr)


def _run(args) -> int:
    from fastpgn import explorer

    started = time.perf_counter()
    if not os.path.exists(args.dataset):
        _say(f"{args.dataset}: no such file or folder")
        return 2
    if os.path.exists(args.output) and not args.overwrite:
        _say(f"{args.output} exists: --overwrite replaces it")
        return 2
    try:
        parquet = _is_parquet(args.dataset)
    except OSError as exc:
        _say(f"cannot read {args.dataset}: {exc.strerror or exc}")
        return 2
    if os.path.isdir(args.dataset) and not parquet:
        _say(f"{args.dataset}: a folder without Parquet files (give a PGN file, or the converter's Parquet)")
        return 2
    show = not args.quiet and sys.stderr.isatty()
    where = args.where
    folder = os.path.dirname(os.path.abspath(args.output))
    try:
        os.makedirs(folder, exist_ok=True)
        temp = tempfile.mkdtemp(prefix=".fastpgn-explorer-", dir=args.temp_dir or folder)
    except OSError as exc:
        _say(f"cannot write {args.output}: {exc.strerror or exc}")
        return 2
    code = 0
    converted = None
    try:
        dataset = args.dataset
        if not parquet:
            converted, code = _convert(args, os.path.join(temp, "games"), show)
            if converted is None:
                return code
            dataset, where = os.path.join(temp, "games"), None
        bar = _Bar("explorer") if show else None
        try:
            # (the tree appears whole, by a rename, or not at all: explorer.build_tree)
            tree = explorer.build_tree(dataset, args.output, max_plies=args.depth, where=where,
                                       every_game=args.every_game,
                                       memory_limit=args.memory_limit, temp_directory=os.path.join(temp, "duckdb"),
                                       threads=args.jobs, progress=bar)
        except (InputError, ValueError, ImportError) as exc:
            _say(f"{exc}")
            return 2
        except OSError as exc:
            _say(f"cannot write {args.output}: {exc.strerror or exc}")
            return 2
        except Exception as exc:
            import duckdb

            if isinstance(exc, duckdb.Error):
                _say(f"DuckDB failed: {str(exc).splitlines()[0]}")
                return 2
            raise
        finally:
            if bar is not None:
                bar.close()
    except KeyboardInterrupt:
        return 130
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    if not args.quiet:
        if converted is not None:
            s = converted
            read = (f"{plural(s.games_read, 'game')} read from PGN ({s.games_written:,} converted, "
                    f"{s.games_rejected:,} rejected, {s.games_filtered:,} filtered out), ")
        else:
            filtered = f", {tree.games_filtered:,} filtered out" if where else ""
            read = f"{plural(tree.games_read, 'game')} read{filtered}, "
        left_out = ("" if args.every_game else
                    f"{tree.games_left_out:,} left out as lichess's explorer leaves them out (unfinished, "
                    "unrated, BOT or no clock), ")
        print(f"explorer: {read}{tree.games_used:,} in the tree, {left_out}{tree.games_without_positions:,} "
              f"without positions (a variant or an illegal move); {plural(tree.rows, 'row')} of the first "
              f"{plural(args.depth, 'ply', 'plies')} to {args.output}; "
              f"{time.perf_counter() - started:.1f} s",
              file=sys.stderr)
    return code


def _convert(args, folder: str, show: bool):
    """A PGN DATASET converted by the converter (every core) to Parquet with positions and UCI in ``folder``:
    (its Summary, exit code), or (None, code) when there is nothing to build a tree of.

    Bad games are skipped and counted; their text and reasons are kept beside TREE
    (``TREE.rejected.pgn``, the converter's rejected-games file). Damage keeps the games before it (exit 1).
    """
    from fastpgn.convert import Converter, Options

    opts = Options(input=args.dataset, chunk_size=100_000, output_dir=folder, format="parquet", uci=True,
                   validate=True, positions=True, where=args.where, jobs=args.jobs or 0)
    progress = None
    if show:
        from fastpgn.cli import _Progress

        try:
            progress = _Progress(os.path.getsize(args.dataset))
        except (ImportError, OSError):
            progress = None
    converter = None
    try:
        converter = Converter(opts, progress)
        summary = converter.run()
    except (InputError, OutputError, ImportError) as exc:
        _say(f"{exc}")
        return None, 2
    except PGNError as exc:
        _say(f"{args.dataset}: {exc}")
        return None, 1
    finally:
        if progress is not None:
            progress.close()
    if summary.games_rejected and converter is not None and os.path.exists(converter.rejects_path):
        kept = args.output + ".rejected.pgn"
        try:
            # (a name fastpgn makes beside TREE: never written through a link there)
            with open(converter.rejects_path, "rb") as src, output.create(kept) as dst:
                shutil.copyfileobj(src, dst)
        except (OSError, OutputError) as exc:
            _say(f"cannot write {kept}: {exc.strerror or exc}" if isinstance(exc, OSError) else f"{exc}")
            return None, 2
        _say(f"{plural(summary.games_rejected, 'rejected game')}, each with its reason: {kept}")
    if summary.games_read == 0 and not summary.damage:
        _say(f"{args.dataset}: no PGN games found (empty or not PGN)")
        return None, 2
    if summary.damage:
        _say(f"{args.dataset}: {summary.damage}; the tree holds every whole game before the damage")
        return summary, 1
    return summary, 0


# -- explorer-lookup -------------------------------------------------------------

LOOKUP_EXAMPLES = """\
examples:
  python -m fastpgn explorer-lookup tree.parquet "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
  python -m fastpgn explorer-lookup tree.parquet startpos --speed blitz --rating 2000 --rating 2200
  python -m fastpgn explorer-lookup tree.parquet "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -" --json

exit status: 0 the position was found; 1 it is not in the tree (one line says
so); 2 usage error, an unreadable tree or a FEN the board refuses
"""


def lookup_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m fastpgn explorer-lookup", name="fastpgn explorer-lookup",
               description="The moves played from a position in an opening tree (explorer's output), "
                           "as lichess's opening explorer shows them.",
               epilog=LOOKUP_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", metavar="TREE", help="the tree's Parquet file")
    p.add_argument("fen", metavar="FEN", help="the position (move counters may be left out), or startpos")
    p.add_argument("--speed", action="append", metavar="SPEED",
                   help="only these speeds (ultraBullet, bullet, blitz, rapid, classical, correspondence); "
                        "repeatable")
    p.add_argument("--rating", action="append", type=int, metavar="GROUP",
                   help="only these rating groups (0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500: 2500 holds "
                        "2800 and over, as lichess's API); repeatable")
    p.add_argument("--moves", type=int, default=12, metavar="N",
                   help="the N most played moves (default %(default)s, as lichess; 0 for all); the totals count "
                        "every move")
    p.add_argument("--json", action="store_true", help="lichess's API answer as JSON instead of a table")
    return p


def lookup_main(argv: list[str] | None = None) -> int:
    """The ``explorer-lookup`` command: prints the position's moves as a table; returns the exit code."""
    args = parse_args(lookup_parser(), argv)
    if isinstance(args, int):
        return args
    return guarded(lambda: _lookup(args))


def _lookup(args) -> int:
    from fastpgn.explorer import lookup

    def say(text: str) -> None:
        print(f"fastpgn explorer-lookup: {text}", file=sys.stderr)

    fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" if args.fen == "startpos" else args.fen
    if not os.path.exists(args.tree):
        say(f"{args.tree}: no such file")
        return 2
    try:
        answer = lookup(args.tree, fen, speeds=args.speed, ratings=args.rating, moves=args.moves or None)
    except (InputError, ValueError, ImportError) as exc:
        say(f"{exc}")
        return 2
    if args.json:
        import json

        print(json.dumps(answer))
        return 0 if answer["moves"] else 1
    if not answer["moves"]:
        print(f"position not in the tree: {fen}")
        return 1
    total = answer["white"] + answer["draws"] + answer["black"]
    rows = [("move", "uci", "games", "white", "draws", "black", "rating")]
    for m in answer["moves"]:
        n = m["white"] + m["draws"] + m["black"]
        rows.append((m["san"], m["uci"], f"{n:,}", _share(m["white"], n), _share(m["draws"], n),
                     _share(m["black"], n), "" if m["averageRating"] is None else str(m["averageRating"])))
    rows.append(("total", "", f"{total:,}", _share(answer["white"], total), _share(answer["draws"], total),
                 _share(answer["black"], total), ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(r, widths))).rstrip())
    return 0


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
