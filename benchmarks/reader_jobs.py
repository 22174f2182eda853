"""The readers' ``jobs=``: read_arrow, read_games and read_headers at one worker thread and at several.

    python -m benchmarks.reader_jobs [DUMP.pgn.zst] [--release FOLDER] [--jobs 1,2] [--rounds 5]
        [--readers arrow,games,headers,heads] [--json]

Each case is a whole process (``python -c``), timed with ``perf_counter``
around it, run once per round in turn; the table shows medians, MB/s of
the decompressed PGN (the release: of the PGN text it is read as), the median CPU
seconds of the process (user + system, every thread), and the
ratio to ``jobs=1`` measured in the same rounds. Cases: ``read_arrow``,
``read_games`` and ``read_headers`` of the dump (``--readers``; ``heads`` adds ``read_arrow`` of three
header columns, the decode-bound reading), and with ``--release`` (a folder ``benchmarks.lichess_release``
wrote from the same dump) ``read_arrow(uci=True)`` of the release; the Rust
binding's ``parse_games(movetext, num_threads=2)`` over the release's
movetext joins them where ``rust-pgn-reader-python-binding`` is installed.
Targets (docs/performance.md): the dump at jobs=2 at least 1.6 times jobs=1;
the release with ``uci=True`` at jobs=2 at least 1.5 times the binding.
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
DUMP = ROOT / "bench-data" / "lichess-100MB-seed0.pgn.zst"

ARROW = ("import fastpgn, sys\n"
         "batches = fastpgn.read_arrow(sys.argv[1], jobs=int(sys.argv[2]), uci=sys.argv[3] == 'uci')\n"
         "print(sum(b.num_rows for b in batches))\n")
HEADS = ("import fastpgn, sys\n"
         "batches = fastpgn.read_arrow(sys.argv[1], jobs=int(sys.argv[2]),\n"
         "                             columns=['white_elo', 'black_elo', 'result'])\n"
         "print(sum(b.num_rows for b in batches))\n")
GAMES = ("import fastpgn, sys\n"
         "print(sum(1 for _ in fastpgn.read_games(sys.argv[1], jobs=int(sys.argv[2]))))\n")
HEADERS = ("import fastpgn, sys\n"
           "print(sum(1 for _ in fastpgn.read_headers(sys.argv[1], jobs=int(sys.argv[2]))))\n")
RUST = ("import sys, pyarrow.dataset as ds, rust_pgn_reader_python_binding as r\n"
        "movetext = ds.dataset(sys.argv[1], format='parquet', partitioning='hive').to_table(columns=['movetext'])"
        ".column('movetext')\n"
        "out = r.parse_games(movetext, num_threads=2)\n"
        "print(len(movetext))\n")


def _cases(dump: Path, release: Path | None, jobs: list[int],
           readers: tuple[str, ...] = ("arrow", "games", "headers")) -> dict[str, list[str]]:
    chosen = {}
    if "arrow" in readers:
        chosen.update({f"read_arrow dump jobs={j}": ["-c", ARROW, str(dump), str(j), "-"] for j in jobs})
    if "heads" in readers:
        chosen.update({f"read_arrow(3 headers) dump jobs={j}": ["-c", HEADS, str(dump), str(j)] for j in jobs})
    if "games" in readers:
        chosen.update({f"read_games dump jobs={j}": ["-c", GAMES, str(dump), str(j)] for j in jobs})
    if "headers" in readers:
        chosen.update({f"read_headers dump jobs={j}": ["-c", HEADERS, str(dump), str(j)] for j in jobs})
    if release is not None:
        chosen.update({f"read_arrow(uci) release jobs={j}": ["-c", ARROW, str(release), str(j), "uci"] for j in jobs})
        try:
            import rust_pgn_reader_python_binding  # noqa: F401
        except ImportError:
            print("(rust-pgn-reader-python-binding is not installed: its row is left out)", file=sys.stderr)
        else:
            chosen["rust parse_games(num_threads=2) release"] = ["-c", RUST, str(release)]
    return chosen


def _run(args: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, every thread) of one whole process, and what it printed."""
    env = dict(os.environ, FASTPGN_IMPLEMENTATION="cython", PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"failed: {' '.join(args[2:])}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip()


def _pgn_bytes(source: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from fastpgn.io.sources import open_source

    opened = open_source(str(source))
    try:
        return sum(len(chunk) for chunk in opened.chunks())
    finally:
        opened.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.reader_jobs")
    p.add_argument("dump", nargs="?", default=str(DUMP))
    p.add_argument("--release", help="lichess's Parquet release of the same games (benchmarks.lichess_release)")
    p.add_argument("--jobs", default="1,2", help="the jobs= to time (default 1,2)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--readers", default="arrow,games,headers",
                   help="the dump's readers: arrow, games, headers, heads (read_arrow of three header columns)")
    p.add_argument("--json", action="store_true", help="print the medians as JSON")
    args = p.parse_args(argv)
    dump, release = Path(args.dump), Path(args.release) if args.release else None
    cases = _cases(dump, release, [int(j) for j in args.jobs.split(",")], tuple(args.readers.split(",")))
    sizes = {"dump": _pgn_bytes(dump), "release": _pgn_bytes(release) if release else 0}
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for r in range(args.rounds):
        names = list(cases) if r % 2 == 0 else list(reversed(cases))
        for name in names:
            wall, cpu, _ = _run(cases[name])
            times[name].append(wall)
            cpus[name].append(cpu)
    medians = {name: statistics.median(t) for name, t in times.items()}
    cpu_medians = {name: statistics.median(t) for name, t in cpus.items()}
    if args.json:
        print(json.dumps({"wall": medians, "cpu": cpu_medians, "pgn_bytes": sizes["dump"], "input": dump.name},
                         indent=2))
        return 0
    print(f"{'case':45} {'median s':>9} {'CPU s':>7} {'MB/s':>8} {'ratio':>7}")
    for name, m in medians.items():
        kind = "release" if "release" in name else "dump"
        reader = name.split(" dump ")[0]
        base = medians.get(f"{reader} dump jobs={args.jobs.split(',')[0]}") if kind == "dump" else \
            medians.get("rust parse_games(num_threads=2) release")
        ratio = f"{base / m:6.2f}x" if base else ""
        print(f"{name:45} {m:9.3f} {cpu_medians[name]:7.3f} {sizes[kind] / m / 1e6:8.1f} {ratio:>7}")
    print("ratio: the dump's rows to the same reader's first jobs=; the release's to the Rust binding (higher is "
          "faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
