"""The report beside the conversion it reads: whole processes, medians, peak memory (indicative).

Three rows, in interleaved rounds (machine noise hits all alike):

* convert: ``python -m fastpgn INPUT 1000000 --format parquet -o DIR -q``, the floor;
* report (Parquet): ``python -m fastpgn report DIR -o PAGE -q`` over that Parquet;
* report (PGN): ``python -m fastpgn report INPUT -o PAGE -q``, converting on the way.

MB are 10^6 bytes of decompressed PGN (the input's games, whichever row
reads them); the ratio column divides each row's median seconds by the
conversion's; peak memory is the process's own maximum resident set
(``wait4``), the largest of the rounds.

    python -m benchmarks.report bench-data/lichess-100MB-seed0.pgn.zst
    python -m benchmarks.report bench-data/lichess-100MB-seed0.pgn.zst --rounds 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> tuple[float, float]:
    """Seconds a whole process takes, and its peak resident memory in MB."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def pgn_megabytes(path: str) -> float:
    """The decompressed size of the input, MB (a .zst decompressed here; other files as they are)."""
    if not path.endswith(".zst"):
        return os.path.getsize(path) / 1e6
    import zstandard

    total = 0
    with open(path, "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as reader:
        while chunk := reader.read(1 << 24):
            total += len(chunk)
    return total / 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input", help="a PGN dump, e.g. bench-data/lichess-100MB-seed0.pgn.zst")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("-j", "--jobs", type=int, default=None, help="the converter's workers (default: every core)")
    p.add_argument("--json", action="store_true", help="the figures as JSON on stdout instead of a table")
    args = p.parse_args(argv)
    python = sys.executable
    jobs = [] if args.jobs is None else ["-j", str(args.jobs)]
    work = Path(tempfile.mkdtemp(prefix="fastpgn-bench-report-"))
    try:
        megabytes = pgn_megabytes(args.input)
        games = work / "games"
        rows = {
            "convert to Parquet": lambda: [python, "-m", "fastpgn", args.input, "1000000", "--format", "parquet",
                                           "-o", str(games), "-q", "--overwrite", *jobs],
            "report (Parquet)": lambda: [python, "-m", "fastpgn", "report", str(games), "-o",
                                         str(work / "a.html"), "-q"],
            "report (PGN)": lambda: [python, "-m", "fastpgn", "report", args.input, "-o", str(work / "b.html"),
                                     "-q", *jobs],
        }
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, command in rows.items():
                figures[name].append(timed(command()))
        base = statistics.median(s for s, _ in figures["convert to Parquet"])
        result = {name: {"seconds": statistics.median(s for s, _ in runs), "peak_mb": max(m for _, m in runs)}
                  for name, runs in figures.items()}
        for value in result.values():
            value["mb_per_s"] = megabytes / value["seconds"]
            value["ratio"] = value["seconds"] / base
        page_mb = (work / "a.html").stat().st_size / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"input": args.input, "pgn_mb": megabytes, "rounds": args.rounds, "page_mb": page_mb,
                          "rows": result}, indent=1))
        return 0
    print(f"{args.input}: {megabytes:,.1f} MB of PGN, {args.rounds} rounds (medians); the page: {page_mb:.1f} MB")
    print(f"{'':22} {'seconds':>8} {'MB/s':>8} {'peak MB':>8} {'x convert':>10}")
    for name, value in result.items():
        print(f"{name:22} {value['seconds']:8.2f} {value['mb_per_s']:8.1f} {value['peak_mb']:8.0f} "
              f"{value['ratio']:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
