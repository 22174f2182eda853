"""``python -m fastpgn spark``: dump files to a Parquet dataset on Spark, one task per file or frame range.

The conversion is :func:`fastpgn.spark.convert`'s; this module owns the
options, the Spark session (started here unless one is already running in
this process), one summary line per file and a total on stderr, and the
exit status.
"""

from __future__ import annotations

import argparse
import sys
import time

from fastpgn.cli._common import add_encoding_argument, guarded, parse_args, plural
from fastpgn.cli._filters import FilterParser, add_filter_arguments

DESCRIPTION = """\
Convert PGN dumps (.pgn.zst, .pgn.bz2, .gz, plain; a folder: its files) to one
Parquet dataset of the analysis schema (docs/schema.md) on Spark, fastpgn's
kernel inside the tasks: one Spark task per file, or, for a zstd file of many
frames (lichess's dumps), one per range of frames of about --range-size bytes
of PGN. Each file's games land in
DIR/input=NAME/year=YYYY/month=MM/part-NNNNN.parquet, published with one
rename when the file is done, so a file's output is there whole or not at all.
A rerun skips the files already complete; a damaged file keeps the games
before the damage and is converted again by the next run. Bad games are kept
in DIR/input=NAME/_rejected.pgn. Needs pyspark and Java 17+
(pip install "fastpgn[spark]"); the executors need fastpgn (docs/spark.md)."""

EXAMPLES = """\
examples:
  python -m fastpgn spark lichess_db_standard_rated_2024-0*.pgn.zst -o games/
  python -m fastpgn spark dumps/ -o /mnt/nfs/games --master spark://head:7077 --conf spark.executor.memory=2g
  python -c "import duckdb; print(duckdb.sql(\\"SELECT year, month, count(*) FROM read_parquet('games/input=*/year=*/month=*/*.parquet', hive_partitioning=true) GROUP BY ALL\\"))"

exit status:
  0    every file is complete (converted now or skipped as done before); bad
       games are counted and kept in each file's _rejected.pgn, and do not fail it
  1    a file is damaged (truncated or corrupt): its games before the damage
       are in the dataset, the others are complete
  2    usage error; a missing input; an input that is not PGN or cannot be read
       (nothing of it is published, the others are complete); an output folder
       that cannot be written or that another run is writing; Spark or Java
       missing, or the Spark job failed
  130  interrupted (Ctrl-C): complete files stay, a rerun converts the rest
byte offsets count bytes of the decompressed PGN, not of the .zst/.bz2/.gz file
"""  # noqa: E501 (a command line to copy whole)


def _parser() -> argparse.ArgumentParser:
    p = FilterParser(prog="python -m fastpgn spark", name="fastpgn spark", description=DESCRIPTION,
                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="PGN dump files (any compression), or folders of them")
    p.add_argument("-o", "--output-dir", metavar="DIR", required=True,
                   help="the dataset's folder (made if missing), on a file system the executors share")
    p.add_argument("--master", metavar="URL", default="local[*]",
                   help="Spark master (default local[*]: every core of this machine); spark://HOST:7077, yarn, ...")
    p.add_argument("--conf", metavar="KEY=VALUE", action="append", default=[],
                   help="a Spark setting, e.g. spark.executor.memory=2g; repeatable")
    p.add_argument("--overwrite", action="store_true", help="convert again the files an earlier run completed")
    p.add_argument("--rows-per-file", metavar="N", type=int, default=None,
                   help="games per Parquet file at most (default 1,000,000: about 170 MB of lichess games)")
    p.add_argument("--range-size", metavar="BYTES", type=int, default=None,
                   help="bytes of PGN a task reads, about, of a zstd file of many frames (default 256 MiB: "
                        "268435456); 0: one task per file")
    p.add_argument("--uci", action="store_true", help="add the uci column: the moves replayed on fastpgn's board")
    p.add_argument("--positions", action="store_true",
                   help="add the zobrist column: each ply's Polyglot key, replayed on fastpgn's board")
    p.add_argument("--fens", action="store_true", help="add the fens column: the FEN after each ply")
    p.add_argument("--openings-map", metavar="FILE",
                   help="openings map in the original format (every executor must read FILE)")
    add_encoding_argument(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary lines")
    add_filter_arguments(p)
    return p


def _say(text: str) -> None:
    print(f"fastpgn spark: {text}", file=sys.stderr)


def _line(r, filtered: bool) -> str:
    if r.status == "skipped":
        return f"{r.input}: complete from an earlier run ({plural(r.games_written, 'game')}), skipped"
    if r.status == "failed":
        return f"{r.input}: failed, nothing published: {r.message}"
    rate = r.pgn_bytes / 1e6 / r.seconds if r.seconds > 0 else 0.0
    text = (f"{r.input}: {plural(r.games_written, 'game')} written, {r.games_rejected:,} rejected"
            f"{f', {r.games_filtered:,} filtered out' if filtered else ''} "
            f"(of {r.games_read:,} read), {plural(r.files, 'file')}, {r.pgn_bytes / 1e6:,.1f} MB of PGN, "
            f"{r.seconds:.1f} s{' in its tasks' if r.tasks > 1 else ''}, {rate:,.1f} MB/s"
            f"{f' a task, {r.tasks} tasks' if r.tasks > 1 else ''}, backend {r.backend}")
    if r.status == "damaged":
        text += f"; damaged: {r.message}; every whole game before the damage was written"
    return text


def _run(argv) -> int:
    args = parse_args(_parser(), argv)
    if isinstance(args, int):
        return args
    conf = []
    for item in args.conf:
        key, eq, value = item.partition("=")
        if not eq or not key:
            _say(f"--conf takes KEY=VALUE, not {item!r}")
            return 2
        conf.append((key, value))
    if args.rows_per_file is not None and args.rows_per_file < 1:
        _say("--rows-per-file must be at least 1")
        return 2
    if args.range_size is not None and args.range_size < 0:
        _say("--range-size must be 0 (one task per file) or more")
        return 2
    try:
        from fastpgn import spark as fs

        fs._require_pyspark()
    except ImportError as exc:
        _say(str(exc))
        return 2
    from pyspark.sql import SparkSession

    from fastpgn.convert.converter import OutputError
    from fastpgn.errors import InputError

    try:
        fs._inputs(args.inputs)      # a missing input, or two of one name, stop the run before Spark starts
    except (InputError, ValueError) as exc:
        _say(str(exc))
        return 2
    own = SparkSession.getActiveSession() is None
    started = time.perf_counter()
    try:
        spark = fs.session(args.master, "fastpgn spark", conf)
    except Exception as exc:        # no Java, a master that does not answer: pyspark's own errors
        _say(f"cannot start Spark ({args.master}): {str(exc).strip().splitlines()[0]} (Java 17+ is needed: "
             f"apt-get install -y openjdk-17-jre-headless)")
        return 2
    jvm = time.perf_counter() - started
    try:
        if own:
            spark.sparkContext.setLogLevel("ERROR")
        began = time.perf_counter()
        try:
            reports = fs.convert(spark, args.inputs, args.output_dir, where=args.where, uci=args.uci,
                                 openings=args.openings_map, overwrite=args.overwrite,
                                 rows_per_file=args.rows_per_file or fs.ROWS_PER_FILE, positions=args.positions,
                                 fens=args.fens, encoding=args.encoding,
                                 range_size=fs.RANGE_SIZE if args.range_size is None else args.range_size)
        except (OutputError, ValueError) as exc:
            _say(str(exc))
            return 2
        except OSError as exc:
            _say(f"cannot write {args.output_dir}: {exc.strerror or exc}")
            return 2
        except Exception as exc:    # the Spark job failed: its first line says why
            _say(f"the Spark job failed: {str(exc).strip().splitlines()[0]}")
            return 2
        seconds = time.perf_counter() - began
    finally:
        if own:
            spark.stop()
    counts = {s: sum(r.status == s for r in reports) for s in ("converted", "damaged", "skipped", "failed")}
    if not args.quiet:
        for r in reports:
            _say(_line(r, args.where is not None))
        done = [r for r in reports if r.status in ("converted", "damaged")]
        mb = sum(r.pgn_bytes for r in done) / 1e6
        _say(f"{plural(len(reports), 'file')}: {', '.join(f'{n} {s}' for s, n in counts.items())}; "
             f"{plural(sum(r.games_written for r in done), 'game')} written, "
             f"{sum(r.games_rejected for r in done):,} rejected, "
             f"{f'{sum(r.games_filtered for r in done):,} filtered out, ' if args.where is not None else ''}"
             f"{mb:,.1f} MB of PGN in {seconds:.1f} s "
             f"({mb / seconds if seconds > 0 else 0.0:,.1f} MB/s; Spark start {jvm:.1f} s apart), "
             f"master {args.master}, dataset {args.output_dir}")
    if counts["failed"]:
        return 2
    return 1 if counts["damaged"] else 0


def main(argv=None) -> int:
    return guarded(lambda: _run(sys.argv[1:] if argv is None else list(argv)))
