"""How the dump converter scales with ``-j``: the same input at several job counts, in one run.

Each job count runs the whole converter as its own process (``python -m
fastpgn INPUT 100000 -j J``, gz chunks unless ``--compression``), several
times, interleaved (every job count once, then again), so machine noise hits
all of them alike; the table shows medians. Beside wall time and MB/s of PGN
it shows what bounds the run: the process's CPU seconds, and the CPU seconds
of its main thread, which alone decompresses the input and appends the
chunks (``main busy`` near 100% means more workers cannot help). The floor
row is Python ``zstandard`` decompressing the same file with nothing else,
the ceiling of any reader of one zstd stream.

Per-thread CPU is sampled from ``/proc/PID/task/*/stat`` every 20 ms (Linux;
the last 20 ms are missed); peak RSS is the process's ``VmHWM``. The chunks
of every job count are hashed in the first round: the table says whether
they were byte-identical to ``-j 1``'s (they must be).

    python -m benchmarks.make_corpus --size 1GB
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --jobs 1,2,4,8,16 --runs 5
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --extra=--validate
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.compare import commit, machine

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
SUMMARY = re.compile(r"fastpgn: ([\d,]+) games written, ([\d,]+) rejected .* ([\d,.]+) MB in")


def _thread_ticks(pid: int) -> dict[int, int]:
    """utime + stime, in clock ticks, of every thread of ``pid`` (empty once it is gone)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)
    return out


def _hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_once(argv: list[str], env: dict, poll: float = 0.02) -> dict:
    """Run ``argv``; wall seconds, CPU seconds (process, main thread, busiest other thread), peak RSS."""
    ticks: dict[int, int] = {}
    hwm = 0
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        while proc.poll() is None:
            ticks.update(_thread_ticks(proc.pid))
            hwm = max(hwm, _hwm_kb(proc.pid))
            time.sleep(poll)
        wall = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {stderr.strip()[-500:]}")
    main = ticks.get(proc.pid, 0) / TICK
    others = sorted((v for k, v in ticks.items() if k != proc.pid), reverse=True)
    return {"wall": wall, "cpu": sum(ticks.values()) / TICK, "main_cpu": main,
            "busiest_other_cpu": (others[0] / TICK) if others else 0.0,
            "threads": len(ticks), "rss_kb": hwm, "stderr": stderr}


def _hash_dir(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        if ".part_" in p.name:
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def floor_zstd(path: Path) -> tuple[float, int]:
    """Seconds and bytes for Python ``zstandard`` to stream-decompress ``path`` (1 MiB reads), in-process."""
    import zstandard

    n = 0
    t0 = time.perf_counter()
    with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as f:
        while True:
            piece = f.read(1 << 20)
            if not piece:
                break
            n += len(piece)
    return time.perf_counter() - t0, n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("input", type=Path, help="a .pgn.zst written by make_corpus (or any PGN input)")
    cores = os.cpu_count() or 1
    default_jobs = sorted({1, 2, cores} | {j for j in (4, 8, 16, 32, 64) if j < cores})
    p.add_argument("--jobs", default=",".join(map(str, default_jobs)),
                   help=f"comma-separated -j values (default {','.join(map(str, default_jobs))})")
    p.add_argument("--runs", type=int, default=3, help="runs per job count (default 3; medians reported)")
    p.add_argument("--backend", default="cython", choices=("cython", "python", "auto"))
    p.add_argument("--compression", default="gz", choices=("gz", "zst", "none"))
    p.add_argument("--extra", action="append", default=[], help="another converter option, e.g. --extra=--validate")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    args = p.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    env = dict(os.environ, FASTPGN_IMPLEMENTATION=args.backend)

    floor = None
    pgn_bytes = None
    if args.input.name.endswith(".zst"):
        floor = statistics.median(floor_zstd(args.input)[0] for _ in range(3))
        pgn_bytes = floor_zstd(args.input)[1]
    work = Path(tempfile.mkdtemp(prefix="scaling-", dir=args.input.parent))
    results: dict[int, list[dict]] = {j: [] for j in jobs}
    hashes: dict[int, str] = {}
    games = None
    try:
        for run in range(1, args.runs + 1):
            for j in jobs:
                out = work / f"j{j}"
                shutil.rmtree(out, ignore_errors=True)
                cmd = [sys.executable, "-m", "fastpgn", str(args.input), "100000", "-j", str(j), "-o", str(out),
                       "--compression", args.compression, *args.extra]
                r = run_once(cmd, env)
                m = SUMMARY.search(r.pop("stderr"))
                if m:
                    games = int(m.group(1).replace(",", ""))
                    pgn_bytes = pgn_bytes or int(float(m.group(3).replace(",", "")) * 1e6)
                if run == 1:
                    hashes[j] = _hash_dir(out)
                results[j].append(r)
                print(f"[run {run}/{args.runs}] -j {j}: {r['wall']:.2f} s, main thread {r['main_cpu']:.2f} s CPU",
                      file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = []
    base = None
    for j in jobs:
        rs = results[j]
        wall = statistics.median(r["wall"] for r in rs)
        base = base or wall
        med = {k: statistics.median(r[k] for r in rs) for k in ("cpu", "main_cpu", "busiest_other_cpu", "rss_kb")}
        rows.append({"jobs": j, "wall_s": round(wall, 3), "walls": [round(r["wall"], 3) for r in rs],
                     "mb_per_s": round(pgn_bytes / wall / 1e6, 1) if pgn_bytes else None,
                     "speedup": round(base / wall, 2), "cpu_s": round(med["cpu"], 2),
                     "main_cpu_s": round(med["main_cpu"], 2), "main_busy": round(med["main_cpu"] / wall, 2),
                     "busiest_other_cpu_s": round(med["busiest_other_cpu"], 2),
                     "peak_rss_mb": round(med["rss_kb"] / 1024, 1),
                     "same_as_j1": hashes.get(j) == hashes.get(jobs[0])})
    meta = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "commit": os.environ.get("FASTPGN_COMMIT") or commit(), "python": platform.python_version(),
            "backend": args.backend, "input": args.input.name, "pgn_bytes": pgn_bytes, "games": games,
            "compression": args.compression, "extra": args.extra, "runs": args.runs,
            "floor_zstd_s": round(floor, 3) if floor else None,
            "floor_zstd_mb_per_s": round(pgn_bytes / floor / 1e6, 1) if floor and pgn_bytes else None}
    result = {"meta": meta, "rows": rows}
    if args.save:
        args.save.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{meta['input']}: {pgn_bytes / 1e6 if pgn_bytes else 0:,.0f} MB of PGN, {games or 0:,} games; "
          f"{meta['machine']}; commit {meta['commit']}; Python {meta['python']}, {args.backend} backend; "
          f"{args.compression} chunks {' '.join(args.extra)}; medians of {args.runs}; {meta['date']}")
    if floor:
        print(f"floor: Python zstandard alone {meta['floor_zstd_mb_per_s']:,.0f} MB/s ({floor:.2f} s)")
    print("| -j | wall s | MB/s | speedup | CPU s | main thread CPU s | main busy | busiest worker CPU s "
          "| peak RSS MB | chunks = -j 1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for r in rows:
        print(f"| {r['jobs']} | {r['wall_s']:.2f} | {r['mb_per_s'] or 0:,.0f} | {r['speedup']:.2f}x | {r['cpu_s']:.1f} "
              f"| {r['main_cpu_s']:.2f} | {r['main_busy']:.0%} | {r['busiest_other_cpu_s']:.2f} "
              f"| {r['peak_rss_mb']:.0f} | {'yes' if r['same_as_j1'] else 'NO'} |")
    return 0 if all(r["same_as_j1"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
