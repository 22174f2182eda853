"""Headers-only reading and filtered conversion, timed as whole processes beside their floors.

Two comparisons, each measured in the same run with interleaved rounds
(machine noise hits all alike) and reported as medians:

* headers only: ``read_headers`` over the plain PGN in a fresh process,
  beside the grep floor (``grep -c '^\\[Event '`` on the same file) and the
  full ``read_games``; python-chess's ``read_headers`` is timed once on the
  first ``--sample`` bytes and extrapolated (it is two orders slower).
* filtered conversion: ``python -m fastpgn INPUT CHUNK -q`` (``--compression``
  gz by default, as the converter) without and with ``--filter`` (default ``--min-elo 1900``, printed with the
  share of games it keeps; aim for about 10%).

MB are 10^6 bytes of decompressed PGN; the ratio column divides each
row's median MB/s by its floor's (grep for reading, the unfiltered converter
for conversion).

    python -m benchmarks.bench_filters bench-data/lichess-100MB-seed0.pgn
    python -m benchmarks.bench_filters bench-data/lichess-100MB-seed0.pgn --rounds 7 --json
    python -m benchmarks.bench_filters FILE --filter "--speed bullet --min-elo 1800"
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COUNT = """
import sys
from fastpgn.reader import {func}
reader = {func}(sys.argv[1]{extra})
n = sum(1 for _ in reader)
print(n, reader.games_read)
"""


def timed(argv: list[str], env=None) -> tuple[float, float, str]:
    """Seconds a whole process takes (wall clock, and CPU: user + system), and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0 and not (argv[0] == "grep" and proc.returncode == 1):  # grep -c: 1 = counted none
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return seconds, cpu, proc.stdout.decode()


def python_chess_mb_per_s(path: Path, sample: int) -> tuple[float, int] | None:
    """python-chess's read_headers over the first ``sample`` bytes (whole games): MB/s and games."""
    try:
        import chess.pgn
    except ImportError:
        return None
    import io

    with open(path, "rb") as f:
        data = f.read(sample)
    cut = data.rfind(b"\n\n[Event ")
    data = data[:cut + 2] if cut > 0 else data
    text = io.StringIO(data.decode("utf-8", "replace"))
    t = time.perf_counter()
    games = 0
    while chess.pgn.read_headers(text) is not None:
        games += 1
    seconds = time.perf_counter() - t
    return len(data) / 1e6 / seconds, games


def run(path: Path, rounds: int, filter_flags: list[str], chunk: int, sample: int, jobs: int,
        compression: str) -> dict:
    size = path.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    py = sys.executable
    readers = {
        "grep -c '^\\[Event '": ["grep", "-c", r"^\[Event ", str(path)],
        "read_headers": [py, "-c", COUNT.format(func="read_headers", extra=""), str(path)],
        "read_games": [py, "-c", COUNT.format(func="read_games", extra=""), str(path)],
    }
    out = Path(tempfile.mkdtemp(prefix="bench-filters-"))
    jobs_flag = ["-j", str(jobs)] if jobs else []
    converters = {
        "convert": [py, "-m", "fastpgn", str(path), str(chunk), "-o", str(out / "all"), "-q", "--overwrite",
                    "--compression", compression, *jobs_flag],
        "convert " + " ".join(filter_flags): [py, "-m", "fastpgn", str(path), str(chunk), "-o", str(out / "some"),
                                              "-q", "--overwrite", "--compression", compression, *jobs_flag,
                                              *filter_flags],
    }
    times: dict[str, list[float]] = {name: [] for name in [*readers, *converters]}
    cpu: dict[str, list[float]] = {name: [] for name in [*readers, *converters]}
    answers = {}
    try:
        for argv in [*readers.values(), *converters.values()]:  # warm-up: page cache, imports
            timed(argv, env)
        for _ in range(rounds):
            for name, argv in [*readers.items(), *converters.items()]:
                seconds, cpu_seconds, stdout = timed(argv, env)
                times[name].append(seconds)
                cpu[name].append(cpu_seconds)
                answers[name] = stdout.split()
        from fastpgn.oneliner import iter_lines

        kept = sum(1 for f in (out / "some").glob("*.part_*") for _ in iter_lines(f))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    games = int(answers["read_games"][1])
    if int(answers["read_headers"][0]) != int(answers["read_games"][0]):
        raise SystemExit("read_headers and read_games yielded different numbers of games")
    rows = []
    for group, floor in ((readers, "grep -c '^\\[Event '"), (converters, "convert")):
        base = size / 1e6 / statistics.median(times[floor])
        for name in group:
            mbs = size / 1e6 / statistics.median(times[name])
            rows.append({"name": name, "median_s": statistics.median(times[name]), "best_s": min(times[name]),
                         "mb_per_s": mbs, "games_per_s": games / statistics.median(times[name]),
                         "ratio": mbs / base, "ratio_to": floor, "cpu_s": statistics.median(cpu[name]),
                         "cpu_ratio": statistics.median(cpu[floor]) / statistics.median(cpu[name])})
    reference = python_chess_mb_per_s(path, sample)
    if reference is not None:
        mbs, sample_games = reference
        rows.append({"name": f"python-chess read_headers ({sample / 1e6:.0f} MB sample, extrapolated)",
                     "median_s": size / 1e6 / mbs, "best_s": size / 1e6 / mbs, "mb_per_s": mbs,
                     "games_per_s": sample_games * mbs * 1e6 / sample, "ratio": mbs / (
                         size / 1e6 / statistics.median(times["grep -c '^\\[Event '"])),
                     "ratio_to": "grep -c '^\\[Event '", "cpu_s": size / 1e6 / mbs,
                     "cpu_ratio": statistics.median(cpu["grep -c '^\\[Event '"]) / (size / 1e6 / mbs)})
    from fastpgn import BACKEND

    return {"input": str(path), "bytes": size, "games": games, "rounds": rounds, "backend": BACKEND,
            "compression": compression,
            "cpus": os.cpu_count(), "filter": filter_flags, "kept": kept, "kept_share": kept / games if games else 0,
            "rows": rows}


def table(result: dict) -> str:
    lines = [f"{result['input']}: {result['bytes'] / 1e6:,.1f} MB, {result['games']:,} games, "
             f"backend {result['backend']}, {result['cpus']} CPUs, medians of {result['rounds']} interleaved rounds",
             f"converter --compression {result['compression']}; filter {' '.join(result['filter'])} keeps "
             f"{result['kept']:,} games "
             f"({100 * result['kept_share']:.1f}%)", ""]
    width = max(len(r["name"]) for r in result["rows"])
    lines.append(f"{'':{width}}  {'median s':>9}  {'MB/s':>8}  {'games/s':>11}  {'ratio':>6}  {'CPU s':>6}  "
                 f"{'CPU ratio':>9}  vs")
    for r in result["rows"]:
        lines.append(f"{r['name']:{width}}  {r['median_s']:9.3f}  {r['mb_per_s']:8.1f}  {r['games_per_s']:11,.0f}  "
                     f"{r['ratio']:5.2f}x  {r['cpu_s']:6.3f}  {r['cpu_ratio']:8.2f}x  {r['ratio_to']}")
    lines.append("")
    lines.append("ratio: MB/s over the floor's (wall clock); CPU ratio: the floor's CPU seconds (user + system, "
                 "all threads) over the row's, the figure a loaded machine disturbs least.")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_filters", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", type=Path, help="a plain (decompressed) PGN file")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--filter", default="--min-elo 1900",
                        help="the converter's filter flags, one string "
                             "(default: --min-elo 1900, about 11%% of lichess games)")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="CHUNK_SIZE of the conversions")
    parser.add_argument("--sample", type=int, default=5_000_000, help="bytes python-chess reads (default 5 MB)")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="converter workers (default: all cores)")
    parser.add_argument("--compression", choices=("gz", "zst", "none"), default="gz",
                        help="the conversions' chunk compression (default gz, the converter's default)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    result = run(args.input, args.rounds, shlex.split(args.filter), args.chunk, args.sample, args.jobs,
                 args.compression)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
