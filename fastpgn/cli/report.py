"""``python -m fastpgn report INPUT... -o report.html [filters]``: a dump at a glance in one HTML page."""

from __future__ import annotations

import argparse
import os
import sys

from fastpgn.cli._common import add_jobs_option, guarded, parse_args, plural
from fastpgn.cli._filters import FilterParser, add_filter_arguments
from fastpgn.errors import OutputError
from fastpgn.report import ReportError, build

EPILOG = """\
examples:
  python -m fastpgn report games/ -o report.html
      games/ holds the converter's Parquet (python -m fastpgn DUMP 100000 --format parquet -o games/)
  python -m fastpgn report lichess_db_standard_rated_2024-01.pgn.zst -o report.html --speed blitz
      a PGN dump is converted on the way (into a temporary folder), with the filters
  python -m fastpgn report games/ -o strong.html --min-elo 2200 --since 2024-01-15

The page is one file with everything inside (Plotly's JavaScript too): it
opens offline, in any browser. DuckDB reads the Parquet out of core, within
--memory-limit, spilling to --temp-dir. Needs pip install "fastpgn[report]".
See docs/report.md.

exit status:
  0    the page is written (a filter that keeps no game: the page says so,
       and a line on stderr too)
  1    the page is written, but an input is damaged (truncated or corrupt):
       the page holds its whole games before the damage, under a banner
       that says where it is, and a line on stderr says so too
  2    usage error; an input that is missing, empty, not Parquet nor PGN; a
       page that cannot be written; duckdb, plotly or pyarrow missing
  130  interrupted (Ctrl-C)
"""


def parser() -> argparse.ArgumentParser:
    p = FilterParser(prog="python -m fastpgn report", name="fastpgn report",
                     description="A dump at a glance: games by speed and by day, ratings, results, openings, "
                                 "accuracy and mistakes by rating and by clock, in one self-contained HTML page.",
                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", metavar="INPUT", nargs="+",
                   help="fastpgn's Parquet (a folder of the converter's --format parquet output, or files), "
                        "or PGN dumps (any compression) or lichess's Parquet release, converted on the way")
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the HTML page to write")
    p.add_argument("--memory-limit", default="2GB", metavar="SIZE",
                   help="DuckDB's memory limit (default 2GB); beyond it DuckDB spills to --temp-dir")
    p.add_argument("--temp-dir", metavar="DIR",
                   help="folder for the temporary files: converted PGN, DuckDB's spill (default: the system's)")
    add_jobs_option(p, None, "every core", "workers converting a PGN input, and DuckDB's threads (default: every core)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary line")
    add_filter_arguments(p)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(parser(), argv)
    if isinstance(args, int):
        return args
    return guarded(lambda: _run(args))


def _run(args) -> int:
    try:
        result = build(args.inputs, args.output, where=args.where, memory_limit=args.memory_limit,
                       temp_dir=args.temp_dir, jobs=args.jobs, quiet=args.quiet)
    except ImportError as exc:
        print(f"fastpgn report: {exc}", file=sys.stderr)
        return 2
    except (ReportError, OutputError) as exc:
        print(f"fastpgn report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fastpgn report: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - duckdb's errors (a bad --memory-limit, a damaged Parquet file)
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        print(f"fastpgn report: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    for source in result.damaged:
        # (said even with -q, as the converter says damage: the exit status alone does not say which input)
        print(f"fastpgn report: {source.name}: {source.damage}; the page holds its "
              f"{plural(source.rows, 'whole game')} before the damage", file=sys.stderr)
    if result.games == 0:
        print(f"fastpgn report: {result.notes[-1]}; {args.output} says so", file=sys.stderr)
    elif not args.quiet:
        print(f"fastpgn report: {plural(result.games, 'game')} in {os.path.abspath(args.output)}", file=sys.stderr)
    return 1 if result.damaged else 0
