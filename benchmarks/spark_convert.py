"""Spark against the plain converter on the same files: a corpus split into N ``.pgn.zst`` files.

Contenders, each a whole process, rounds interleaved, medians reported:

* ``converter``: ``python -m fastpgn PART 1000000 --format parquet -j J`` on
  each part in turn (the plain converter takes one input a run);
* ``spark``: ``python -m fastpgn spark``'s work, ``fastpgn.spark.convert``
  of all parts into one dataset on ``--master`` (default ``local[2]``), in a
  process of its own; the Spark start is timed apart and left out of its
  MB/s: the JVM and SparkContext, then the Python workers (a no-op job on
  every slot that imports pyspark's worker, pandas, pyarrow and fastpgn),
  which a run pays once per executor slot whatever the data.

MB are 10^6 bytes of decompressed PGN. The parts are cut at game starts and
compressed with zstd level 3 (as ``make_corpus``), cached beside the corpus.

``--multiframe FILE`` measures instead one zstd file of several frames (lichess's
framing, pzstd's) converted by ``fastpgn.spark.convert`` in frame-range tasks
(``--range-size``, by default the file's PGN over the master's slots: one range
a core) against the same file in one task (``range_size=0``), each a process of
its own, rounds interleaved, the Spark start left out of both.

    python -m benchmarks.make_corpus --size 1GB
    python -m benchmarks.spark_convert bench-data/lichess-1GB-seed0.pgn --runs 3 --json out.json
    python -m benchmarks.spark_convert --multiframe bench-data/lichess-300MB-seed0.pgn.pzstd.zst --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def split(corpus: Path, parts: int) -> list[Path]:
    """``corpus`` (plain PGN) cut into ``parts`` files at game starts, zstd level 3; made once, then reused."""
    import zstandard

    names = [corpus.with_name(f"{corpus.stem}.part{i + 1}of{parts}.pgn.zst") for i in range(parts)]
    if all(p.exists() for p in names):
        return names
    data = corpus.read_bytes()
    cuts = [0]
    for i in range(1, parts):
        at = data.find(b"\n\n[Event ", len(data) * i // parts)
        cuts.append(at + 2)
    cuts.append(len(data))
    for i, name in enumerate(names):
        piece = data[cuts[i]:cuts[i + 1]]
        tmp = name.with_suffix(".tmp")
        tmp.write_bytes(zstandard.ZstdCompressor(level=3, threads=2).compress(piece))
        os.replace(tmp, name)
    return names


def pgn_bytes(files: list[Path]) -> int:
    import zstandard

    total = 0
    for f in files:
        with open(f, "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as r:
            while chunk := r.read(1 << 24):
                total += len(chunk)
    return total


def run_converter(files: list[Path], jobs: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-conv-"))
    try:
        start = time.perf_counter()
        for f in files:
            subprocess.run([sys.executable, "-m", "fastpgn", str(f), "1000000", "--format", "parquet",
                            "-j", str(jobs), "-o", str(out), "-q"], check=True, cwd=ROOT)
        seconds = time.perf_counter() - start
        games = sum(_rows(p) for p in out.glob("*.parquet"))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"seconds": seconds, "games": games}


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


def run_spark(files: list[Path], master: str, range_size: int | None = None) -> dict:
    """``fastpgn.spark.convert`` of ``files`` in a process of its own (``range_size`` None: convert's default)."""
    out = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.spark_convert", "--child", master, str(out),
                               "default" if range_size is None else str(range_size), *map(str, files)],
                              check=True, cwd=ROOT, capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def child(master: str, out: str, range_size: str, files: list[str]) -> None:
    """In its own process: start Spark (timed apart), convert, report."""
    begin = time.perf_counter()
    from fastpgn import spark as fs

    spark = fs.session(master, "fastpgn benchmark")
    spark.sparkContext.setLogLevel("ERROR")
    jvm = time.perf_counter()
    # The Python workers' start (pyspark's worker, pandas, pyarrow, fastpgn): paid once per executor
    # slot whatever the data, as the JVM's start is; timed apart too.
    slots = spark.sparkContext.defaultParallelism
    spark.range(0, slots, 1, slots).mapInArrow(_warm, "id long").collect()
    started = time.perf_counter()
    sizes = {} if range_size == "default" else {"range_size": int(range_size)}
    reports = fs.convert(spark, files, out, **sizes)
    done = time.perf_counter()
    spark.stop()
    assert all(r.status == "converted" for r in reports), reports
    print("RESULT " + json.dumps({"seconds": done - started, "start_seconds": started - begin,
                                  "jvm_seconds": jvm - begin, "workers_seconds": started - jvm,
                                  "games": sum(r.games_written for r in reports),
                                  "task_seconds": [r.seconds for r in reports],
                                  "task_mb_per_s": [r.pgn_bytes / 1e6 / r.seconds for r in reports],
                                  "task_peak_rss_mb": [r.peak_rss_mb for r in reports],
                                  "tasks": sum(r.tasks for r in reports),
                                  "pgn_bytes": sum(r.pgn_bytes for r in reports),
                                  "backend": reports[0].backend}))


def _warm(batches):
    import pyarrow.compute  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    import fastpgn.arrow  # noqa: F401
    import fastpgn.spark  # noqa: F401

    for batch in batches:
        time.sleep(0.5)     # so that every slot starts a worker, not one worker taking every task
        yield batch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", default=str(ROOT / "bench-data" / "lichess-1GB-seed0.pgn"),
                        help="plain PGN corpus (python -m benchmarks.make_corpus)")
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="the converter's -j")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", metavar="FILE", help="write the raw results here")
    parser.add_argument("--multiframe", metavar="FILE",
                        help="one multi-frame .pgn.zst: frame-range tasks against one task, on --master")
    parser.add_argument("--range-size", type=int, default=None,
                        help="with --multiframe: bytes of PGN a task reads (default: the file's over the slots)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.child[2], args.child[3:])
        return 0
    if args.multiframe:
        return multiframe(Path(args.multiframe), args)
    import fastpgn

    files = split(Path(args.corpus), args.parts)
    mb = pgn_bytes(files) / 1e6
    results: dict[str, list[dict]] = {"converter": [], "spark": []}
    for r in range(args.runs):
        results["converter"].append(run_converter(files, args.jobs))
        results["spark"].append(run_spark(files, args.master))
        print(f"round {r + 1}: converter {results['converter'][-1]['seconds']:.1f} s, spark "
              f"{results['spark'][-1]['seconds']:.1f} s (+ start {results['spark'][-1]['start_seconds']:.1f} s)",
              file=sys.stderr)
    conv = statistics.median(x["seconds"] for x in results["converter"])
    spk = statistics.median(x["seconds"] for x in results["spark"])
    start = statistics.median(x["start_seconds"] for x in results["spark"])
    games = results["converter"][0]["games"]
    assert all(x["games"] == games for v in results.values() for x in v), "the contenders wrote other games"
    rows = [(f"converter --format parquet -j {args.jobs}, {args.parts} files one after another", conv, 1.0),
            (f"spark {args.master}, {args.parts} files, start excluded", spk, conv / spk),
            (f"spark {args.master}, {args.parts} files, start included", spk + start, conv / (spk + start))]
    print(f"{mb:,.0f} MB of PGN in {args.parts} .pgn.zst files, {games:,} games; medians of {args.runs} runs; "
          f"Spark start alone {start:.1f} s "
          f"(JVM {statistics.median(x['jvm_seconds'] for x in results['spark']):.1f} s, "
          f"Python workers {statistics.median(x['workers_seconds'] for x in results['spark']):.1f} s)")
    print(f"{'contender':<62} {'s':>6} {'MB/s':>7} {'games/s':>9} {'ratio':>6}")
    for name, seconds, ratio in rows:
        print(f"{name:<62} {seconds:6.1f} {mb / seconds:7.1f} {games / seconds:9,.0f} {ratio:6.2f}")
    if args.json:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        Path(args.json).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "commit": commit, "backend": fastpgn.BACKEND,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
            "load_average": os.getloadavg(), "corpus": Path(args.corpus).name, "parts": args.parts,
            "pgn_mb": mb, "games": games, "master": args.master, "jobs": args.jobs, "runs": results,
            "medians": {"converter_s": conv, "spark_s": spk, "spark_start_s": start,
                        "ratio_start_excluded": conv / spk, "ratio_start_included": conv / (spk + start)},
        }, indent=1) + "\n")
    return 0


def _slots(master: str) -> int:
    inside = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    return (os.cpu_count() or 1) if inside == "*" else int(inside)


def multiframe(path: Path, args) -> int:
    """One multi-frame file: frame-range tasks against one task, rounds interleaved, medians."""
    import fastpgn
    from fastpgn.io.frame_ranges import frame_ranges

    mb = pgn_bytes([path]) / 1e6
    size = args.range_size or -(-int(mb * 1e6) // _slots(args.master))
    ranges = len(frame_ranges(path, size))
    if ranges < 2:
        print(f"{path} makes {ranges} range of {size} bytes: give a multi-frame file or a smaller --range-size",
              file=sys.stderr)
        return 2
    results: dict[str, list[dict]] = {"ranges": [], "one": []}
    for r in range(args.runs):
        results["ranges"].append(run_spark([path], args.master, size))
        results["one"].append(run_spark([path], args.master, 0))
        print(f"round {r + 1}: {results['ranges'][-1]['tasks']} tasks {results['ranges'][-1]['seconds']:.1f} s, "
              f"one task {results['one'][-1]['seconds']:.1f} s", file=sys.stderr)
    split = statistics.median(x["seconds"] for x in results["ranges"])
    one = statistics.median(x["seconds"] for x in results["one"])
    start = statistics.median(x["start_seconds"] for v in results.values() for x in v)
    games = results["one"][0]["games"]
    assert all(x["games"] == games for v in results.values() for x in v), "the contenders wrote other games"
    assert all(x["tasks"] == ranges for x in results["ranges"]) and all(x["tasks"] == 1 for x in results["one"])
    print(f"{path.name}: {mb:,.0f} MB of PGN, {len(frame_ranges(path, 1))} frames, {games:,} games; medians of "
          f"{args.runs} rounds on {args.master}, Spark start ({start:.1f} s) left out")
    print(f"{'contender':<48} {'s':>6} {'MB/s':>7} {'ratio':>6}")
    for name, seconds in ((f"convert in {ranges} frame-range tasks ({size:,} B)", split), ("convert in one task", one)):
        print(f"{name:<48} {seconds:6.1f} {mb / seconds:7.1f} {one / seconds:6.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "backend": fastpgn.BACKEND, "file": path.name, "pgn_mb": mb,
            "games": games, "master": args.master, "range_size": size, "tasks": ranges, "runs": results,
            "medians": {"ranges_s": split, "one_task_s": one, "ratio": one / split},
            "load_average": os.getloadavg()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
