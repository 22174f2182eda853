"""The opening explorer over the Parquet of a real-games corpus, against the conversion that made it (indicative).

Rows, each its own process, median of ``--runs`` interleaved rounds:

- ``convert --format parquet``: the floor, the converter without positions;
- ``convert --positions --uci``: the dataset the explorer reads (every ply replayed, its key and UCI);
- ``explorer``: the tree of the first ``--max-plies`` plies of that dataset, in DuckDB
  (``--memory-limit``; peak memory is the process's, DuckDB's included);
- ``explorer --by-speed --by-rating``: the same with a row per speed and rating band.

MB/s is of the PGN (10**6 bytes); ``x convert`` is the row's time over the positions conversion's.

    python -m benchmarks.bench_explorer                       # bench-data/lichess-100MB-seed0.pgn, 3 runs
    python -m benchmarks.bench_explorer --source dump.pgn.zst --runs 1 --json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT / "bench-data" / "lichess-100MB-seed0.pgn"

# Runs FUNCTION (argv[2]) of the module named in argv[1] with the rest of argv; prints its time and peak
# memory on stderr.
LAUNCHER = """
import importlib, sys, time
function = getattr(importlib.import_module(sys.argv[1]), sys.argv[2])
start = time.perf_counter()
code = function(sys.argv[3:])
seconds = time.perf_counter() - start
try:
    peak = next((line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")), "0")
except OSError:  # not Linux: no peak
    peak = "0"
sys.stderr.write(f"\\nBENCH {seconds!r} {code} {peak}\\n")
"""


def _run(argv: list[str]) -> tuple[float, int]:
    """(seconds, peak kB) of ``python -c LAUNCHER argv`` in a process of its own."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], capture_output=True, text=True, env=env)
    line = [x for x in done.stderr.splitlines() if x.startswith("BENCH ")]
    if done.returncode != 0 or not line or line[-1].split()[2] != "0":
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    _, seconds, _, peak = line[-1].split()
    return float(seconds), int(peak)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_explorer", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="PGN (any compression), default %(default)s")
    p.add_argument("--runs", type=int, default=3, help="rounds, interleaved (default 3)")
    p.add_argument("--max-plies", type=int, default=20, help="the explorer's --max-plies (default 20)")
    p.add_argument("--memory-limit", default="2GB", help="the explorer's --memory-limit (default 2GB)")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="converter workers and DuckDB threads (default: every core)")
    p.add_argument("--json", action="store_true", help="the results as JSON on stdout")
    args = p.parse_args(argv)
    if not args.source.exists():
        raise SystemExit(f"{args.source}: missing; make it with python -m benchmarks.make_corpus --size 100MB")
    import zstandard

    with open(args.source, "rb") as fh:
        stream = zstandard.ZstdDecompressor().stream_reader(fh) if args.source.suffix == ".zst" else fh
        size = sum(len(b) for b in iter(lambda: stream.read(1 << 24), b""))
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    work = Path(tempfile.mkdtemp(prefix="bench-explorer-"))
    rows = {
        "convert --format parquet": lambda: ["fastpgn.cli", "main", str(args.source), "100000", "-o",
                                             str(work / "plain"), "--format", "parquet", "--overwrite", "-q", *jobs],
        "convert --positions --uci": lambda: ["fastpgn.cli", "main", str(args.source), "100000", "-o",
                                              str(work / "games"), "--format", "parquet", "--positions", "--uci",
                                              "--overwrite", "-q", *jobs],
        "explorer": lambda: ["fastpgn.cli.explorer", "main", str(work / "games"), "-o", str(work / "tree.parquet"),
                             "--max-plies", str(args.max_plies), "--memory-limit", args.memory_limit, "--overwrite",
                             "-q", *jobs],
        "explorer --by-speed --by-rating": lambda: [
            "fastpgn.cli.explorer", "main", str(work / "games"), "-o", str(work / "tree2.parquet"), "--max-plies",
            str(args.max_plies), "--memory-limit", args.memory_limit, "--by-speed", "--by-rating", "--overwrite",
            "-q", *jobs],
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    peaks: dict[str, list[int]] = {name: [] for name in rows}
    try:
        for _ in range(args.runs):
            for name, command in rows.items():
                seconds, peak = _run(command())
                times[name].append(seconds)
                peaks[name].append(peak)
        import duckdb

        tree_rows = duckdb.sql(f"SELECT count(*) FROM '{work / 'tree.parquet'}'").fetchall()[0][0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(times["convert --positions --uci"])
    results = [{"row": name, "seconds": statistics.median(t), "mb_s": size / 1e6 / statistics.median(t),
                "peak_mb": max(peaks[name]) / 1024, "x_convert": statistics.median(t) / base}
               for name, t in times.items()]
    if args.json:
        print(json.dumps({"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                          "machine": platform.platform(), "cpus": os.cpu_count(), "source": str(args.source),
                          "pgn_bytes": size, "runs": args.runs, "max_plies": args.max_plies,
                          "tree_rows": tree_rows, "results": results}, indent=1))
        return 0
    print(f"{args.source.name}: {size / 1e6:,.0f} MB of PGN, {args.runs} runs (medians), tree of "
          f"{tree_rows:,} rows for {args.max_plies} plies, {os.cpu_count()} CPUs")
    print(f"{'row':<34} {'seconds':>8} {'MB/s':>8} {'peak MB':>8} {'x convert':>9}")
    for r in results:
        print(f"{r['row']:<34} {r['seconds']:>8.2f} {r['mb_s']:>8.1f} {r['peak_mb']:>8.0f} {r['x_convert']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
