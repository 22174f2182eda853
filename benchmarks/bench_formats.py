"""Speed of the lichess-text and crypt converters on real lichess games, all four directions.

- ``lichess-text``: compact lichess strings -> PGN (+ statistics)
- ``lichess-text --reverse``: PGN -> compact strings
- ``crypt encode``: PGN -> crypt lines
- ``crypt decode``: crypt lines -> PGN

Inputs are built once into ``bench-data/formats/`` from the first ``--size`` MB
(whole games) of a real-games PGN: that PGN itself (crypt encode), the same
games with every White tag set to the ``--me`` player (``--reverse`` needs
"me" to be one of the players: lichess games have no common player), the
compact strings ``--reverse`` writes from it (lichess-text) and the crypt
lines ``crypt encode`` writes (crypt decode). So each converter reads what
its own other direction wrote from real games.

Every run is its own process (``python -m fastpgn ...`` run by a tiny
launcher that also times ``main()`` inside the process); runs are
interleaved and the table shows medians. MB/s is of the input the
direction reads (MB = 10**6 bytes); ``PGN MB/s`` is of the PGN side (read
or written), for comparison across directions. ``process`` includes the
interpreter start-up and imports (the ``start-up`` row alone), ``in-process``
is ``main()`` only. ``x target`` is in-process MB/s over the 20 MB/s target set for them.

    python -m benchmarks.bench_formats                       # 30 MB of games, both backends, 3 runs
    python -m benchmarks.bench_formats --backend cython --size 50 --json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared"))
DEFAULT_SOURCE = ROOT / "bench-data" / "lichess-100MB-seed0.pgn"
TARGET = 20.0  # MB/s, the converters' target

# Runs main() of the module named in argv[1] with the rest of argv, prints its time on stderr.
LAUNCHER = """
import importlib, sys, time
module = importlib.import_module(sys.argv[1])
start = time.perf_counter()
code = module.main(sys.argv[2:])
seconds = time.perf_counter() - start
import fastpgn
try:
    peak = next((line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")), "0")
except OSError:  # not Linux: no peak
    peak = "0"
sys.stderr.write(f"\\nBENCH {seconds!r} {code} {fastpgn.BACKEND} {peak}\\n")
"""


# ------------------------------------------------------------------ inputs

def _source_text(source: Path | None, nbytes: int) -> bytes:
    """The first ``nbytes`` (or a little less: whole games) of real PGN."""
    if source is None:
        source = DEFAULT_SOURCE if DEFAULT_SOURCE.exists() else None
    if source is not None and source.suffix != ".zst":
        with open(source, "rb") as f:
            data = f.read(nbytes + 100_000)
    else:
        import zstandard

        paths = [source] if source is not None else sorted((SHARED / "data" / "lichess-db").glob("*.pgn.zst"))
        if not paths:
            raise SystemExit("no input: give --source or build bench-data/ (benchmarks/README.md)")
        parts = []
        for path in paths:
            with open(path, "rb") as f:
                text = zstandard.ZstdDecompressor().stream_reader(f).read()
            parts.append(text[: text.rfind(b"\n\n[Event ") + 2])  # drop a cut-off last game
        data = b"".join(parts)
    if len(data) > nbytes:
        data = data[: data.rfind(b"\n\n[Event ", 0, nbytes) + 2]
    return data


def _with_white(pgn: bytes, me: str) -> bytes:
    out = []
    for line in pgn.split(b"\n"):
        out.append(b'[White "' + me.encode() + b'"]' if line.startswith(b'[White "') else line)
    return b"\n".join(out)


def _fastpgn(args: list[str], backend: str) -> None:
    env = {**os.environ, "FASTPGN_IMPLEMENTATION": backend, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "fastpgn", *args], env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"building inputs failed: fastpgn {' '.join(args)}: {r.stderr[-2000:]}")


def build_inputs(folder: Path, source: Path | None, mb: float, me: str) -> dict[str, Path]:
    """PGN, PGN with "me" as White, compact strings and crypt lines of the same games (cached)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"lichess-{mb:g}MB" if source is None else f"{source.name.split('.')[0]}-{mb:g}MB"
    paths = {"pgn": folder / f"{stem}.pgn", "me-pgn": folder / f"{stem}-{me}.pgn",
             "compact": folder / f"{stem}-{me}.txt", "crypt": folder / f"{stem}.crypt"}
    if not paths["pgn"].exists():
        paths["pgn"].write_bytes(_source_text(source, int(mb * 1e6)))
    if not paths["me-pgn"].exists():
        paths["me-pgn"].write_bytes(_with_white(paths["pgn"].read_bytes(), me))
    # Built with the compiled backend: both backends give the same bytes (the differential tests).
    if not paths["compact"].exists():
        _fastpgn(["lichess-text", "--reverse", str(paths["me-pgn"]), "-o", str(folder), "--me", me, "-q"],
                 "cython")
    if not paths["crypt"].exists():
        _fastpgn(["crypt", "encode", str(paths["pgn"]), "-o", str(paths["crypt"]), "-q"], "cython")
    return paths


def _games(path: Path, kind: str) -> int:
    data = path.read_bytes()
    if kind in ("pgn", "me-pgn"):
        return data.count(b"[Event ")
    if kind == "crypt":
        return sum(1 for line in data.split(b"\n") if line.strip())
    # compact: a details line (YY.MM.DD...) per game
    return sum(1 for line in data.split(b"\n") if line[2:3] == b"." and line[5:6] == b".")


# ------------------------------------------------------------------ runs

DIRECTIONS = {
    # name: (module, input kind, the PGN file it writes (None: it reads PGN), argv builder)
    "compact -> PGN": ("fastpgn.cli.lichess_text", "compact", lambda i, o: o / (i.stem + ".pgn"),
                       lambda i, o, me: [str(i), "-o", str(o), "--me", me, "-q"]),
    "PGN -> compact": ("fastpgn.cli.lichess_text", "me-pgn", None,
                       lambda i, o, me: ["--reverse", str(i), "-o", str(o), "--me", me, "-q"]),
    "crypt encode": ("fastpgn.cli.crypt", "pgn", None,
                     lambda i, o, me: ["encode", str(i), "-o", str(o / "out.crypt"), "-q"]),
    "crypt decode": ("fastpgn.cli.crypt", "crypt", lambda i, o: o / "out.pgn",
                     lambda i, o, me: ["decode", str(i), "-o", str(o / "out.pgn"), "-q"]),
}


def run_once(module: str, argv: list[str], backend: str) -> dict:
    env = {**os.environ, "FASTPGN_IMPLEMENTATION": backend, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, module, *argv], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, _ = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    line = next((x for x in reversed(err.splitlines()) if x.startswith("BENCH ")), None)
    if line is None:
        raise SystemExit(f"{module} {' '.join(argv)} failed:\n{err[-3000:]}")
    _, seconds, code, live, peak_kb = line.split()
    if live != backend:
        raise SystemExit(f"asked for the {backend} backend, got {live}")
    return {"wall": wall, "inside": float(seconds), "exit": int(code), "rss_mb": int(peak_kb) / 1024}


def startup(backend: str) -> float:
    env = {**os.environ, "FASTPGN_IMPLEMENTATION": backend, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import fastpgn.cli.lichess_text, fastpgn.cli.crypt"],
                   env=env, cwd=ROOT, check=True)
    return time.perf_counter() - start


def commit() -> str:
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "fastpgn/notations"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + ("+dirty formats" if dirty else "") if r.returncode == 0 else "?"
    except OSError:
        return "?"


def machine() -> str:
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                      if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} cores {model}".strip() + f", {platform.system()}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_formats", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--source", type=Path, help="real-games PGN (.pgn or .pgn.zst); default "
                   "bench-data/lichess-100MB-seed0.pgn, else the shared corpus's data/lichess-db/*.pgn.zst")
    p.add_argument("--size", type=float, default=30, help="MB of PGN games for the compiled backend (default 30)")
    p.add_argument("--py-size", type=float, default=5,
                   help="MB of PGN games for the pure-Python backend (default 5)")
    p.add_argument("--backend", choices=("cython", "python", "both"), default="both")
    p.add_argument("--only", help="comma-separated directions (e.g. 'crypt decode')")
    p.add_argument("--runs", type=int, default=3, help="runs per direction (median; default 3)")
    p.add_argument("--me", default="Mike", help="the player set as White for --reverse (default Mike)")
    p.add_argument("--json", action="store_true", help="print every run as JSON instead of the table")
    args = p.parse_args(argv)

    backends = ["cython", "python"] if args.backend == "both" else [args.backend]
    names = [n.strip() for n in args.only.split(",")] if args.only else list(DIRECTIONS)
    for n in names:
        if n not in DIRECTIONS:
            p.error(f"unknown direction {n!r}; choose from {', '.join(DIRECTIONS)}")
    folder = ROOT / "bench-data" / "formats"
    sizes = {"cython": args.size, "python": args.py_size}
    inputs = {b: build_inputs(folder, args.source, sizes[b], args.me) for b in backends}

    cases = [(b, n) for n in names for b in backends]
    results: dict = {c: [] for c in cases}
    floors = {b: [] for b in backends}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        for _ in range(args.runs):
            for b in backends:
                floors[b].append(startup(b))
            for b, n in cases:
                module, kind, _, build = DIRECTIONS[n]
                out = Path(tmp) / f"{b}-{n.replace(' ', '_').replace('>', '')}"
                out.mkdir(exist_ok=True)
                run = run_once(module, build(inputs[b][kind], out, args.me), b)
                written = DIRECTIONS[n][2]
                run["pgn_bytes"] = (written(inputs[b][kind], out) if written else inputs[b][kind]).stat().st_size
                results[(b, n)].append(run)
    total = time.perf_counter() - started

    rows = []
    for b, n in cases:
        kind = DIRECTIONS[n][1]
        path = inputs[b][kind]
        mb = path.stat().st_size / 1e6
        runs = results[(b, n)]
        pgn_mb = runs[-1]["pgn_bytes"] / 1e6  # the PGN it read, or the PGN it wrote
        wall = statistics.median(r["wall"] for r in runs)
        inside = statistics.median(r["inside"] for r in runs)
        rows.append({"direction": n, "backend": b, "input": path.name, "input_mb": mb, "games": _games(path, kind),
                     "process_mb_s": mb / wall, "inprocess_mb_s": mb / inside, "pgn_mb_s": pgn_mb / inside,
                     "games_s": _games(path, kind) / inside, "rss_mb": max(r["rss_mb"] for r in runs),
                     "exit": sorted({r["exit"] for r in runs}), "runs": runs})
    head = {"date": datetime.date.today().isoformat(), "commit": commit(), "machine": machine(),
            "backends": backends, "runs": args.runs, "load_before": load_before,
            "load_after": os.getloadavg()[0], "seconds": total,
            "startup_s": {b: statistics.median(floors[b]) for b in backends}}
    if args.json:
        print(json.dumps({**head, "rows": rows}, indent=1))
        return 0
    print(f"Date {head['date']}, commit {head['commit']}, backend {' and '.join(backends)} "
          f"(FASTPGN_IMPLEMENTATION), {head['machine']}; median of {args.runs} runs; "
          f"1-min load {load_before:.2f} before, {head['load_after']:.2f} after; {total:.0f} s in all\n")
    print("| direction | backend | input | MB | games | MB/s process | MB/s in-process | x target "
          "| PGN MB/s | games/s | peak RSS MB | exit |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['direction']} | {r['backend']} | {r['input']} | {r['input_mb']:.1f} | {r['games']:,} "
              f"| {r['process_mb_s']:.1f} | {r['inprocess_mb_s']:.1f} | {r['inprocess_mb_s'] / TARGET:.2f} "
              f"| {r['pgn_mb_s']:.1f} | {r['games_s']:,.0f} | {r['rss_mb']:.0f} "
              f"| {'/'.join(map(str, r['exit']))} |")
    for b in backends:
        print(f"| start-up (import both converters) | {b} | | | | {head['startup_s'][b] * 1000:.0f} ms "
              f"| | | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
