"""Many inputs in one converter run, against one run per input, on the same files.

A corpus (the plain ``.pgn`` that ``make_corpus`` writes) is cut at game
boundaries into ``--pieces`` files of about equal size, each compressed
with zstd -3 (Python ``zstandard``, as ``make_corpus`` does), in a work
folder that later runs reuse. Every contender converts all the pieces to gz
chunks of 100,000 games with ``-j JOBS`` in all, as whole processes, in
interleaved rounds (every contender once, then again), so machine noise
hits them alike; the table shows medians:

- ``one-per-input``: ``python -m fastpgn PIECE 100000 -j JOBS`` for each
  piece, one after another (a shell loop);
- ``processes-K``: the same with ``-j JOBS/K``, K processes at a time
  (``xargs -P K``): inputs side by side, each with its own share of the
  workers, in processes of their own;
- ``many-A``: ``python -m fastpgn PIECE... 100000 -j JOBS --inputs-at-once A``,
  one process, the inputs sharing one pool of workers (``many-default``:
  without ``--inputs-at-once``).

MB/s is of decompressed PGN (10^6 bytes). CPU is user + system seconds of
every process; peak RSS the largest of any one process (``/usr/bin/time``).
On a machine shared with others, ``--idle 0.9`` starts each run only once
the cores have been at least 90% idle for a second (``/proc/stat``; at
most ``--idle-wait`` seconds, then it runs anyway): the idle share seen is
kept with each run in the JSON.
The chunks of every contender are hashed in the first round and must equal
``one-per-input``'s (the ``same`` column).

    python -m benchmarks.make_corpus --size 1GB -o /tmp/corpus --no-oracle
    python -m benchmarks.many_inputs /tmp/corpus/lichess-1GB-seed0.pgn --pieces 4 --jobs 2 --runs 5
    python -m benchmarks.many_inputs bench-data/lichess-100MB-seed0.pgn --pieces 100 --jobs 2 --runs 5
"""

from __future__ import annotations

import argparse
import bisect
import datetime
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

from benchmarks.compare import commit, game_starts, machine
from benchmarks.scaling import chunks_hash

ROOT = Path(__file__).resolve().parent.parent
TIME = shutil.which("time", path="/usr/bin:/bin")


def split(corpus: Path, pieces: int, work: Path) -> tuple[list[Path], int]:
    """``corpus`` cut into ``pieces`` .pgn.zst files at game starts (reused when already there); PGN bytes."""
    import zstandard

    manifest = work / "pieces.json"
    key = {"corpus": str(corpus.resolve()), "size": corpus.stat().st_size, "pieces": pieces}
    if manifest.exists():
        saved = json.loads(manifest.read_text())
        paths = [work / name for name in saved["files"]]
        if saved["key"] == key and all(p.exists() for p in paths):
            return paths, saved["pgn_bytes"]
    work.mkdir(parents=True, exist_ok=True)
    data = corpus.read_bytes()
    starts = game_starts(data)
    cuts = [0]
    for i in range(1, pieces):
        at = bisect.bisect_left(starts, len(data) * i // pieces)
        if at < len(starts) and starts[at] > cuts[-1]:
            cuts.append(starts[at])
    cuts.append(len(data))
    width = len(str(len(cuts) - 1))
    paths = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        path = work / f"{corpus.stem}.piece{i:0{width}d}.pgn.zst"
        path.write_bytes(zstandard.ZstdCompressor(level=3).compress(data[a:b]))
        paths.append(path)
    manifest.write_text(json.dumps({"key": key, "files": [p.name for p in paths], "pgn_bytes": len(data)}))
    return paths, len(data)


def _command(args: list[str], backend: str, rss_file: Path) -> tuple[list[str], dict]:
    argv = [sys.executable, "-m", "fastpgn", *args]
    if TIME:
        argv = [TIME, "-f", "%M", "-o", str(rss_file), *argv]
    return argv, dict(os.environ, PYTHONPATH=str(ROOT), FASTPGN_IMPLEMENTATION=backend)


def run_contender(commands: list[list[str]], at_a_time: int, backend: str, scratch: Path) -> dict:
    """Run ``commands`` (converter arguments), ``at_a_time`` processes at once; wall, CPU, peak RSS."""
    waiting = list(commands)
    running: dict[int, tuple[subprocess.Popen, Path, Path]] = {}
    cpu = 0.0
    rss_kb = 0
    t0 = time.perf_counter()
    for n in range(len(commands) + 1):
        while waiting and len(running) < at_a_time:
            rss_file, err_file = scratch / f"rss{n}-{len(running)}", scratch / f"err{n}-{len(running)}"
            argv, env = _command(waiting.pop(0), backend, rss_file)
            with open(err_file, "wb") as err:
                proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
            running[proc.pid] = (proc, rss_file, err_file)
        if not running:
            break
        pid, status, usage = os.wait4(-1, 0)
        proc, rss_file, err_file = running.pop(pid)
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"{' '.join(map(str, proc.args))} exited {code}: {err_file.read_text()[-500:]}")
        cpu += usage.ru_utime + usage.ru_stime
        text = rss_file.read_text().split() if rss_file.exists() else []
        rss_kb = max(rss_kb, int(text[-1]) if text and text[-1].isdigit() else usage.ru_maxrss)
    return {"wall": time.perf_counter() - t0, "cpu": cpu, "rss_kb": rss_kb}


def contenders(pieces: list[Path], jobs: int, out: Path, at_once: list[int], processes: list[int]) -> dict:
    """name -> (list of converter argument lists, processes at a time)."""
    common = ["100000", "-o", str(out), "--compression", "gz", "-q"]
    found = {"one-per-input": ([[str(p), *common, "-j", str(jobs)] for p in pieces], 1)}
    for k in processes:
        found[f"processes-{k}"] = ([[str(p), *common, "-j", str(max(1, jobs // k))] for p in pieces], k)
    found["many-default"] = ([[*map(str, pieces), *common, "-j", str(jobs)]], 1)
    for a in at_once:
        found[f"many-{a}"] = ([[*map(str, pieces), *common, "-j", str(jobs), "--inputs-at-once", str(a)]], 1)
    return found


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[3] + fields[4], sum(fields)      # idle + iowait, all


def wait_for_idle(share: float, longest: float) -> float:
    """Wait until the cores were ``share`` idle over a second (at most ``longest`` s); the last share seen."""
    deadline = time.monotonic() + longest
    while True:
        idle0, all0 = _cpu_times()
        time.sleep(1.0)
        idle1, all1 = _cpu_times()
        seen = (idle1 - idle0) / max(all1 - all0, 1)
        if seen >= share or time.monotonic() >= deadline:
            return seen


def _warm(paths: list[Path]) -> None:
    # This machine reclaims cold page-cache pages within seconds: the inputs are read once more first.
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.many_inputs", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("corpus", type=Path, help="a plain .pgn corpus written by make_corpus")
    p.add_argument("--pieces", type=int, default=4, help="files to cut the corpus into (default 4)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="-j in all (default: all cores)")
    p.add_argument("--at-once", default="1,2,4", help="--inputs-at-once values to run (default 1,2,4)")
    p.add_argument("--processes", default="2", help="K of the processes-K contenders (default 2)")
    p.add_argument("--runs", type=int, default=5, help="rounds (default 5; medians reported)")
    p.add_argument("--backend", default="cython", choices=("cython", "python", "auto"))
    p.add_argument("--idle", type=float, default=0.0, metavar="SHARE",
                   help="start each run once the cores were this idle over a second (0-1; default 0: at once)")
    p.add_argument("--idle-wait", type=float, default=120.0, metavar="S",
                   help="the longest wait for --idle before a run goes ahead anyway (default 120 s)")
    p.add_argument("--work", type=Path, help="folder for the pieces (default: a folder in the temp dir, reused)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    args = p.parse_args(argv)
    work = args.work or Path(tempfile.gettempdir()) / f"fastpgn-many-inputs-{args.corpus.stem}-{args.pieces}"
    pieces, pgn_bytes = split(args.corpus, args.pieces, work)
    at_once = [int(a) for a in args.at_once.split(",") if a]
    processes = [int(k) for k in args.processes.split(",") if k]
    scratch = Path(tempfile.mkdtemp(prefix="fastpgn-many-bench-"))
    out = scratch / "out"
    found = contenders(pieces, args.jobs, out, at_once, processes)
    results: dict[str, list[dict]] = {name: [] for name in found}
    hashes: dict[str, str] = {}
    load_before = os.getloadavg()[0]
    try:
        for run in range(1, args.runs + 1):
            for name, (commands, at_a_time) in found.items():
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                _warm(pieces)
                idle = wait_for_idle(args.idle, args.idle_wait) if args.idle > 0 else None
                r = run_contender(commands, at_a_time, args.backend, scratch)
                r["idle_before"] = idle
                results[name].append(r)
                if run == 1:
                    hashes[name] = chunks_hash(out)
                print(f"[run {run}/{args.runs}] {name}: {r['wall']:.2f} s"
                      + (f" (cores {idle:.0%} idle before)" if idle is not None else ""), file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load_after = os.getloadavg()[0]
    base = statistics.median(r["wall"] for r in results["one-per-input"])
    rows = []
    for name, runs in results.items():
        wall = statistics.median(r["wall"] for r in runs)
        rows.append({"name": name, "runs_s": [round(r["wall"], 3) for r in runs],
                     "runs_cpu_s": [round(r["cpu"], 3) for r in runs],
                     "idle_before": [r["idle_before"] and round(r["idle_before"], 3) for r in runs], "seconds": wall,
                     "mb_per_s": pgn_bytes / 1e6 / wall, "vs_one_per_input": base / wall,
                     "cpu_s": statistics.median(r["cpu"] for r in runs),
                     "peak_rss_mb": max(r["rss_kb"] for r in runs) / 1024,
                     "same_chunks": hashes[name] == hashes["one-per-input"]})
    meta = {"date": datetime.date.today().isoformat(), "machine": machine(), "commit": commit(),
            "python": platform.python_version(), "backend": args.backend, "corpus": args.corpus.name,
            "pgn_bytes": pgn_bytes, "pieces": len(pieces), "jobs": args.jobs, "runs": args.runs,
            "load_average_1min": [load_before, load_after], "idle_share_asked": args.idle}
    report = {"meta": meta, "rows": rows}
    if args.save:
        args.save.write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{meta['corpus']} ({pgn_bytes / 1e6:,.0f} MB of PGN) in {len(pieces)} .pgn.zst pieces, -j {args.jobs}, "
          f"{args.backend}; {meta['date']}, {meta['machine']}, commit {meta['commit']}; median of {args.runs} "
          f"rounds; load average {load_before:.1f} before, {load_after:.1f} after\n")
    print("| contender | s | MB/s | vs one-per-input | CPU s | peak RSS MB | same chunks |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['name']} | {r['seconds']:.2f} | {r['mb_per_s']:,.0f} | {r['vs_one_per_input']:.2f}x | "
              f"{r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {'yes' if r['same_chunks'] else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
