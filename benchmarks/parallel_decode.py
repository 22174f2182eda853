"""gzip and bzip2 input: the standard library's stream decoders against the parallel libraries.

    python -m benchmarks.parallel_decode DUMP.pgn.gz DUMP.pgn.bz2 [--threads 2] [--rounds 5] [--json FILE]

Each case is a whole process (``python -c``), timed with ``perf_counter``
around it, run once per round in turn (the rounds interleaved); the table
gives the median wall and CPU seconds (user + system, every thread) and
the decompressed MB/s. Cases, for each input: the decode alone (fastpgn's
``Source``, as the readers and the converter read) and
``read_arrow(columns=["white_elo", "black_elo", "result"], jobs=THREADS)``,
each through the stream decoder and through the parallel one at
``--threads``: gzip by ISA-L (zlib without it) against rapidgzip (given to
``read_arrow`` as the decompressed file object it makes), bzip2 by the
standard library's bz2 against indexed_bzip2 (the path fastpgn takes at
``threads`` above 1). rapidgzip's rows are left out where it is not
installed (``pip install rapidgzip``). Results: docs/performance.md,
2026-12-07.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The stream decoder where a library is hidden: the import fails as if it were not installed.
_HIDE = "import sys\nfor _m in sys.argv[3].split(','):\n    if _m: sys.modules[_m] = None\n"
DECODE = _HIDE + ("from fastpgn.io.sources import open_source\n"
                  "source = open_source(sys.argv[1], threads=int(sys.argv[2]))\n"
                  "print(sum(len(piece) for piece in source.chunks()))\n")
RAPIDGZIP = ("import sys, rapidgzip\n"
             "f = rapidgzip.open(sys.argv[1], parallelization=int(sys.argv[2]))\n"
             "n = 0\n"
             "while piece := f.read(4 << 20):\n"
             "    n += len(piece)\n"
             "f.close()   # (left open, it aborts the interpreter at exit)\n"
             "print(n)\n")
ARROW = _HIDE + ("import fastpgn\n"
                 "source = sys.argv[1]\n"
                 "if sys.argv[4] == 'rapidgzip':\n"
                 "    import rapidgzip\n"
                 "    source = rapidgzip.open(source, parallelization=int(sys.argv[2]))\n"
                 "columns = ['white_elo', 'black_elo', 'result']\n"
                 "batches = fastpgn.read_arrow(source, columns=columns, jobs=int(sys.argv[2]))\n"
                 "print(sum(b.num_rows for b in batches))\n"
                 "if sys.argv[4] == 'rapidgzip':\n"
                 "    source.close()\n")


def _cases(gz: Path, bz2: Path, threads: int) -> dict[str, list[str]]:
    t = str(threads)
    chosen = {
        "gz decode, stream (ISA-L)": ["-c", DECODE, str(gz), "1", ""],
        "gz decode, stream (zlib)": ["-c", DECODE, str(gz), "1", "isal,isal.isal_zlib"],
        f"gz decode, rapidgzip threads={t}": ["-c", RAPIDGZIP, str(gz), t],
        f"gz read_arrow jobs={t}, stream (ISA-L)": ["-c", ARROW, str(gz), t, "", "-"],
        f"gz read_arrow jobs={t}, rapidgzip threads={t}": ["-c", ARROW, str(gz), t, "", "rapidgzip"],
        "bz2 decode, stream (bz2)": ["-c", DECODE, str(bz2), "1", ""],
        f"bz2 decode, indexed_bzip2 threads={t}": ["-c", DECODE, str(bz2), t, ""],
        f"bz2 read_arrow jobs={t}, stream (bz2)": ["-c", ARROW, str(bz2), t, "indexed_bzip2", "-"],
        f"bz2 read_arrow jobs={t}, indexed_bzip2 threads={t}": ["-c", ARROW, str(bz2), t, "", "-"],
    }
    try:
        import rapidgzip  # noqa: F401
    except ImportError:
        print("(rapidgzip is not installed: its rows are left out)", file=sys.stderr)
        chosen = {name: args for name, args in chosen.items() if "rapidgzip" not in name}
    return chosen


def _run(args: list[str]) -> tuple[float, float, str]:
    """One whole process: its wall seconds, CPU seconds (every thread) and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout.strip()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("gz", type=Path)
    p.add_argument("bz2", type=Path)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", type=Path, help="write every run and the medians to this file")
    args = p.parse_args(argv)
    cases = _cases(args.gz, args.bz2, args.threads)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    printed: dict[str, set[str]] = {name: set() for name in cases}
    for _ in range(args.rounds):
        for name, case in cases.items():
            wall, cpu, out = _run(case)
            walls[name].append(wall)
            cpus[name].append(cpu)
            printed[name].add(out)
    # Each input's decodes give the same byte count and its reads the same row count, whatever the decoder.
    for kind in ("gz decode", "gz read_arrow", "bz2 decode", "bz2 read_arrow"):
        outs = set().union(*(printed[name] for name in cases if name.startswith(kind)))
        assert len(outs) == 1, (kind, outs)
    size = int(next(iter(printed["bz2 decode, stream (bz2)"])))
    print(f"{'case':52} {'wall s':>7} {'cpu s':>7} {'MB/s':>7}")
    medians = {}
    for name in cases:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        medians[name] = {"wall_s": wall, "cpu_s": cpu, "mb_per_s": size / 1e6 / wall}
        print(f"{name:52} {wall:7.2f} {cpu:7.2f} {size / 1e6 / wall:7.0f}")
    if args.json:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
                "machine": f"{platform.node()}, {os.cpu_count()} cores", "python": platform.python_version(),
                "rounds": args.rounds, "threads": args.threads, "pgn_bytes": size,
                "gz": str(args.gz.name), "bz2": str(args.bz2.name), "load_after": os.getloadavg()}
        args.json.write_text(json.dumps({"meta": meta, "medians": medians, "wall_s": walls, "cpu_s": cpus},
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
