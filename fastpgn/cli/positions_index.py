"""``python -m fastpgn positions-index``: the position index of a Parquet dataset, for ``games_reaching``.

The index is :func:`fastpgn.positions.build_index`'s; this module owns the
options, the summary and the exit status.
"""

from __future__ import annotations

import argparse
import os
import sys

from fastpgn.cli._common import Parser, add_jobs_option, at_least_one, guarded, parse_args, plural
from fastpgn.errors import OutputError

__all__ = ["main"]

EPILOG = """\
examples:
  python -m fastpgn dump.pgn.zst 1000000 --format parquet --positions --uci -o games/
  python -m fastpgn positions-index games/             writes games/_positions.parquet
  python -m fastpgn positions-index games/ -o index.parquet

The index is one Parquet file sorted by position key, one row per position
each game reaches (its first visit): key, game_id, ply, next_move, next_uci,
result, byte_offset, file, file_no, row (docs/positions.md). Its default
place, _positions.parquet in the dataset's folder (_NAME.positions.parquet
beside a file), is where fastpgn.positions.games_reaching looks for it; the
leading _ keeps it out of the dataset. It is written whole or not at all.

exit status (the same rule as every fastpgn command):
  0    the index is written
  2    usage error; missing or non-Parquet input; a dataset written without
       --positions; output that exists (--overwrite) or cannot be written
  130  interrupted (Ctrl-C): no index is written
"""


def parser() -> argparse.ArgumentParser:
    from fastpgn.positions import INDEX_ROW_GROUP

    p = Parser(prog="python -m fastpgn positions-index", name="fastpgn positions-index",
               description="Write the position index of Parquet the converter wrote with --positions: the games "
                           "reaching each position, sorted by key, so that a lookup reads a few row groups.",
               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", metavar="DATASET", help="Parquet written with --positions (file or folder)")
    p.add_argument("-o", "--output", metavar="OUT", help="the index's Parquet file (default: beside the dataset, "
                                                         "where games_reaching looks)")
    p.add_argument("--row-group-size", type=at_least_one, default=INDEX_ROW_GROUP, metavar="ROWS",
                   help="rows a row group (default %(default)s)")
    p.add_argument("--memory-limit", default="2GB", metavar="SIZE",
                   help="DuckDB's memory limit (default %(default)s); past it DuckDB spills beside OUT")
    add_jobs_option(p, None, "every core", "DuckDB threads (default: every core)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary")
    return p


def main(argv: list[str] | None = None) -> int:
    """The ``positions-index`` command: ``main(["games/"])`` returns the exit code."""
    args = parse_args(parser(), argv)
    if isinstance(args, int):
        return args
    return guarded(lambda: _run(args))


def _say(text: str) -> None:
    print(f"fastpgn positions-index: {text}", file=sys.stderr)


def _run(args) -> int:
    from fastpgn import positions

    if not os.path.exists(args.dataset):
        _say(f"{args.dataset}: no such file or folder")
        return 2
    output = args.output or positions.index_path(args.dataset)
    if os.path.lexists(output) and not args.overwrite:
        _say(f"{output} exists: --overwrite replaces it")
        return 2
    try:
        index = positions.build_index(args.dataset, output, row_group_size=args.row_group_size,
                                      memory_limit=args.memory_limit, threads=args.jobs)
    except (FileNotFoundError, ValueError, ImportError, OutputError) as exc:
        _say(str(exc))
        return 2
    except OSError as exc:
        _say(f"cannot write {output}: {exc.strerror or exc}")
        return 2
    except Exception as exc:
        import duckdb

        if isinstance(exc, duckdb.Error):
            _say(f"DuckDB failed: {str(exc).splitlines()[0]}")
            return 2
        raise
    if not args.quiet:
        per_game = index.size / index.games if index.games else 0.0
        print(f"positions-index: {plural(index.games, 'game')}, {plural(index.postings, 'posting')} to {output} "
              f"({index.size:,} bytes, {per_game:,.0f} a game); {index.seconds:.1f} s", file=sys.stderr)
    return 0
