"""A query of a dump where analysts work: polars' ``scan_pgn`` with its predicate pushed into the kernel, the same
query with polars filtering alone, the converter's filter, and header-only reads of lichess's Parquet release.

    python -m benchmarks.query_engines [DUMP.pgn.zst] [--release FOLDER] [--rounds 3] [--jobs 2] [--json OUT]

Each case is a whole process (``python -c``), timed with ``perf_counter``
around it, run once per round in turn (interleaved, so a noisy machine
slows every case alike); the table shows the median seconds, the median CPU
seconds of the process (user + system, every thread) and the ratios the
targets name, each of medians of the same rounds:

- ``scan_pgn pushed``: ``scan_pgn(dump).filter(white_elo >= 2500 & black_elo >= 2500 & speed == "blitz")
  .select(four header columns).collect()``; the kernel drops the other games before it builds them.
- ``polars alone``: the same columns read with ``read_arrow`` into polars, filtered there (no pushdown).
- ``converter``: ``python -m fastpgn DUMP --min-elo 2500 --speed blitz`` to 22-field lines.
- with ``--release`` (a folder ``benchmarks.lichess_release`` wrote from the same dump): ``read_arrow`` of two
  header columns (the movetext column never read) and of the same with ``moves`` (every movetext decoded).

Targets (docs/performance.md): pushed ≥ 0.9× the converter and ≥ 3× polars alone; the release's header-only
read ≥ 5× the read with moves.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "bench-data" / "lichess-300MB-seed0.pgn.zst"
COLUMNS = ["game_id", "white", "black", "white_elo"]

PUSHED = ("import sys, polars as pl\n"
          "from fastpgn.polars import scan_pgn\n"
          f"cols = {COLUMNS!r}\n"
          "q = (scan_pgn(sys.argv[1], jobs=int(sys.argv[2]))\n"
          "     .filter((pl.col('white_elo') >= 2500) & (pl.col('black_elo') >= 2500) & (pl.col('speed') == 'blitz'))\n"
          "     .select(cols))\n"
          "print(q.collect().height)\n")
ALONE = ("import sys, polars as pl, fastpgn\n"
         f"cols = {COLUMNS!r}\n"
         "reader = fastpgn.read_arrow(sys.argv[1], jobs=int(sys.argv[2]), columns=cols + ['black_elo', 'speed'])\n"
         "df = pl.from_arrow(reader.read_all())\n"
         "df = df.filter((pl.col('white_elo') >= 2500) & (pl.col('black_elo') >= 2500)\n"
         "               & (pl.col('speed') == 'blitz'))\n"
         "print(df.select(cols).height)\n")
CONVERT = ("import sys, tempfile\n"
           "from fastpgn.cli import main\n"
           "with tempfile.TemporaryDirectory() as out:\n"
           "    sys.exit(main([sys.argv[1], '1000000', '-o', out, '-j', sys.argv[2], '-q', '--min-elo', '2500',\n"
           "                   '--speed', 'blitz']))\n")
RELEASE_HEADS = ("import sys, fastpgn\n"
                 "r = fastpgn.read_arrow(sys.argv[1], jobs=int(sys.argv[2]), columns=['white_elo', 'speed'])\n"
                 "print(sum(b.num_rows for b in r))\n")
RELEASE_MOVES = ("import sys, fastpgn\n"
                 "r = fastpgn.read_arrow(sys.argv[1], jobs=int(sys.argv[2]), columns=['white_elo', 'speed', 'moves'])\n"
                 "print(sum(b.num_rows for b in r))\n")


def _cases(dump: Path, release: Path | None, jobs: int) -> dict[str, list[str]]:
    cases = {"scan_pgn pushed": ["-c", PUSHED, str(dump), str(jobs)],
             "polars alone": ["-c", ALONE, str(dump), str(jobs)],
             "converter --min-elo 2500 --speed blitz": ["-c", CONVERT, str(dump), str(jobs)]}
    if release is not None:
        cases["release header-only"] = ["-c", RELEASE_HEADS, str(release), str(jobs)]
        cases["release with moves"] = ["-c", RELEASE_MOVES, str(release), str(jobs)]
    return cases


def _run(args: list[str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"query_engines: a case failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip()


def measure(dump: Path, release: Path | None, jobs: int, rounds: int) -> dict:
    cases = _cases(dump, release, jobs)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, args in cases.items():
            wall, cpu, out = _run(args)
            walls[name].append(wall)
            cpus[name].append(cpu)
            outputs[name] = out
    if outputs["scan_pgn pushed"] != outputs["polars alone"]:
        raise SystemExit(f"query_engines: the pushed query found {outputs['scan_pgn pushed']} games, polars alone "
                         f"{outputs['polars alone']}")
    med = {name: statistics.median(v) for name, v in walls.items()}
    ratios = {"pushed / converter (>= 0.9)": med["converter --min-elo 2500 --speed blitz"] / med["scan_pgn pushed"],
              "pushed / polars alone (>= 3)": med["polars alone"] / med["scan_pgn pushed"]}
    if release is not None:
        ratios["release header-only / with moves (>= 5)"] = med["release with moves"] / med["release header-only"]
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         cwd=ROOT).stdout.strip()
    import fastpgn

    return {"date": time.strftime("%Y-%m-%d"), "commit": git, "backend": fastpgn.BACKEND, "cpus": os.cpu_count(),
            "dump": str(dump), "dump_bytes": dump.stat().st_size, "release": str(release) if release else None,
            "jobs": jobs, "rounds": rounds, "games_found": outputs["scan_pgn pushed"],
            "median_seconds": med, "median_cpu_seconds": {n: statistics.median(v) for n, v in cpus.items()},
            "seconds": walls, "ratios": ratios}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", nargs="?", type=Path, default=DUMP)
    parser.add_argument("--release", type=Path, help="a folder benchmarks.lichess_release wrote from the dump")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    if not args.dump.exists():
        print(f"query_engines: no {args.dump} (python -m benchmarks.make_corpus --size 300MB)", file=sys.stderr)
        return 2
    result = measure(args.dump, args.release, args.jobs, args.rounds)
    print(f"{'case':42} {'median s':>9} {'cpu s':>7}")
    for name, seconds in result["median_seconds"].items():
        print(f"{name:42} {seconds:9.2f} {result['median_cpu_seconds'][name]:7.2f}")
    for name, ratio in result["ratios"].items():
        print(f"{name:42} {ratio:9.2f}x")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
