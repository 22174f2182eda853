"""How the dump converter scales with ``-j``: the same input at several job counts, in one run.

Each job count runs the whole converter as its own process (``python -m
fastpgn INPUT 100000 -j J``, gz chunks unless ``--compression``), several
times, interleaved (every job count once, then again), so machine noise hits
all of them alike; the table shows medians. Beside wall time and MB/s of PGN
it shows what bounds the run: the process's CPU seconds, and those of its
busiest thread (``busy`` is that thread's CPU over the wall time: near 100%
means that thread, not the number of workers, sets the pace; since the
reader thread came, it is the reader, which alone decodes the one zstd
stream). The floor is Python ``zstandard`` decompressing the same file with
nothing else, the ceiling of any reader of one zstd stream.

Per-thread CPU is sampled from ``/proc/PID/task/*/stat`` every 20 ms (Linux;
the last 20 ms are missed); peak RSS is the process's ``VmHWM``. The chunks
of every job count are hashed in the first round: the table says whether
they were byte-identical to the first row's (they must be).

``--against DIR`` runs a second checkout (its compiled kernels built) in
the same interleaved rounds, each of its job counts beside this one's: the
way to compare a change with what it replaces on a noisy machine.

    python -m benchmarks.make_corpus --size 1GB
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --jobs 1,2,4,8,16 --runs 5
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --extra=--validate
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --jobs 2 --runs 9 --against ../old-checkout
    python -m benchmarks.scaling bench-data/lichess-1GB-seed0.pgn.zst --jobs 1,2 --formats lines,parquet,csv

``--pzstd`` adds ``pzstd -d -p J`` of the same input to ``/dev/null`` at each ``-j`` in the same rounds:
the frames of lichess's framing decoded on J threads and nothing else, what a parallel decoder can reach
(``x lines`` on its rows: the lines converter's time over pzstd's).

``--formats`` runs each output format at each job count in the same rounds;
``x lines`` is the lines converter's wall time over the row's, at the same
``-j`` (the issue's "Parquet at 0.8x the lines converter"), and each format's
chunks are compared with its own first row's.
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
from benchmarks.contenders import _drain

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
SUMMARY = re.compile(r"fastpgn: ([\d,]+) games written, ([\d,]+) rejected .* ([\d,.]+) MB of PGN")


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


def run_once(argv: list[str], env: dict, cwd: Path, poll: float = 0.02) -> dict:
    """Run ``argv``; wall seconds, CPU seconds (process, main thread, busiest thread), peak RSS."""
    ticks: dict[int, int] = {}
    hwm = 0
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        while proc.poll() is None:
            ticks.update(_thread_ticks(proc.pid))
            hwm = max(hwm, _hwm_kb(proc.pid))
            time.sleep(poll)
        wall = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {stderr.strip()[-500:]}")
    return {"wall": wall, "cpu": sum(ticks.values()) / TICK, "main_cpu": ticks.get(proc.pid, 0) / TICK,
            "busiest_cpu": max(ticks.values(), default=0) / TICK,
            "threads": len(ticks), "rss_kb": hwm, "stderr": stderr}


def chunks_hash(folder: Path) -> str:
    """One hash of a folder's chunk files, names and bytes: equal hashes, identical output."""
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        if ".part_" in p.name:
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def floor_zstd(path: Path) -> tuple[float, int]:
    """Seconds and bytes for Python ``zstandard`` to stream-decompress ``path`` (1 MiB reads), in-process."""
    import zstandard

    t0 = time.perf_counter()
    # read_across_frames: every frame of a multi-frame input (pzstd's, concatenated files), not the first alone
    with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as f:
        n = _drain(f)
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
    p.add_argument("--formats", default="lines", help="comma-separated --format values run side by side "
                   "(default lines)")
    p.add_argument("--extra", action="append", default=[], help="another converter option, e.g. --extra=--validate")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="another checkout of fastpgn to run in the same rounds (rows marked 'against')")
    p.add_argument("--pzstd", nargs="?", const=shutil.which("pzstd") or "pzstd", metavar="PATH",
                   help="also time pzstd -d -p J of the input at each -j (PATH: that pzstd binary)")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    args = p.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    trees = {"this": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    envs = {name: dict(os.environ, FASTPGN_IMPLEMENTATION=args.backend,
                       PYTHONPATH=os.pathsep.join([str(tree)] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
            for name, tree in trees.items()}
    formats = args.formats.split(",")
    cases = [(name, fmt, j) for j in jobs for fmt in [*formats, "pzstd -d"] for name in trees
             if fmt != "pzstd -d" or (args.pzstd and name == "this")]
    source = args.input.resolve()

    floor = None
    pgn_bytes = None
    if args.input.name.endswith(".zst"):
        floor = statistics.median(floor_zstd(args.input)[0] for _ in range(3))
        pgn_bytes = floor_zstd(args.input)[1]
    work = Path(tempfile.mkdtemp(prefix="scaling-", dir=source.parent))
    results: dict[tuple, list[dict]] = {c: [] for c in cases}
    hashes: dict[tuple, str] = {}
    games = None
    try:
        for run in range(1, args.runs + 1):
            for name, fmt, j in cases:
                if fmt == "pzstd -d":
                    r = run_once([args.pzstd, "-d", "-q", "-p", str(j), "-c", str(source)], dict(os.environ), ROOT)
                    r.pop("stderr")
                    results[name, fmt, j].append(r)
                    print(f"[run {run}/{args.runs}] pzstd -d -p {j}: {r['wall']:.2f} s", file=sys.stderr, flush=True)
                    continue
                out = work / f"{name}-{fmt}-j{j}"
                shutil.rmtree(out, ignore_errors=True)
                cmd = [sys.executable, "-m", "fastpgn", str(source), "100000", "-j", str(j), "-o", str(out),
                       "--compression", args.compression, *(["--format", fmt] if fmt != "lines" else []),
                       *args.extra]
                r = run_once(cmd, envs[name], trees[name])
                m = SUMMARY.search(r.pop("stderr"))
                if m:
                    games = int(m.group(1).replace(",", ""))
                    pgn_bytes = pgn_bytes or int(float(m.group(3).replace(",", "")) * 1e6)
                if run == 1:
                    hashes[name, fmt, j] = chunks_hash(out)
                results[name, fmt, j].append(r)
                print(f"[run {run}/{args.runs}] {name} {fmt} -j {j}: {r['wall']:.2f} s, "
                      f"busiest thread {r['busiest_cpu']:.2f} s CPU", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = []
    base = statistics.median(r["wall"] for r in results[cases[0]])
    for name, fmt, j in cases:
        rs = results[name, fmt, j]
        wall = statistics.median(r["wall"] for r in rs)
        med = {k: statistics.median(r[k] for r in rs) for k in ("cpu", "main_cpu", "busiest_cpu", "rss_kb")}
        lines = results.get((name, "lines", j))
        first = next(c for c in cases if c[1] == fmt)
        rows.append({"tree": name, "format": fmt, "jobs": j, "wall_s": round(wall, 3),
                     "walls": [round(r["wall"], 3) for r in rs],
                     "mb_per_s": round(pgn_bytes / wall / 1e6, 1) if pgn_bytes else None,
                     "speedup": round(base / wall, 2), "cpu_s": round(med["cpu"], 2),
                     "cpu_s_per_gb": round(med["cpu"] / (pgn_bytes / 1e9), 2) if pgn_bytes else None,
                     "x_lines": round(statistics.median(r["wall"] for r in lines) / wall, 2) if lines else None,
                     "main_cpu_s": round(med["main_cpu"], 2), "busiest_cpu_s": round(med["busiest_cpu"], 2),
                     "busiest_busy": round(med["busiest_cpu"] / wall, 2),
                     "peak_rss_mb": round(med["rss_kb"] / 1024, 1),
                     "same_as_first": None if fmt == "pzstd -d" else hashes.get((name, fmt, j)) == hashes.get(first)})
    meta = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "commit": os.environ.get("FASTPGN_COMMIT") or commit(), "python": platform.python_version(),
            "backend": args.backend, "input": args.input.name, "pgn_bytes": pgn_bytes, "games": games,
            "compression": args.compression, "formats": formats, "extra": args.extra, "runs": args.runs,
            "against": str(args.against) if args.against else None, "pzstd": args.pzstd,
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
    if args.against:
        print(f"against: {args.against} (rows marked 'against'; speedups are of this tree's first row)")
    print("| format | -j | wall s | MB/s | speedup | x lines | CPU s | CPU s/GB | busiest thread CPU s | busy "
          "| peak RSS MB | chunks = first row |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for r in rows:
        label = f"{r['jobs']}" + (" against" if r["tree"] == "against" else "")
        print(f"| {r['format']} | {label} | {r['wall_s']:.2f} | {r['mb_per_s'] or 0:,.0f} | {r['speedup']:.2f}x "
              f"| {r['x_lines'] or 0:.2f} | {r['cpu_s']:.1f} | {r['cpu_s_per_gb'] or 0:.2f} "
              f"| {r['busiest_cpu_s']:.2f} | {r['busiest_busy']:.0%} | {r['peak_rss_mb']:.0f} "
              f"| {'—' if r['same_as_first'] is None else 'yes' if r['same_as_first'] else 'NO'} |")
    return 0 if all(r["same_as_first"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
