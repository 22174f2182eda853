"""Two checkouts of fastpgn side by side: interleaved whole processes, medians, and the ratio.

    python -m benchmarks.ab BASE_TREE HEAD_TREE [--rounds N] [--cases a,b] [--release FOLDER] [--json FILE]
    python -m benchmarks.ab BASE_TREE HEAD_TREE --same-output FILE... [--formats lines,parquet,csv]

Each tree must have its compiled kernels built (``FASTPGN_IMPLEMENTATION=cython
python setup.py build_ext --inplace``); every case runs in each tree in turn,
the order flipped every round, on the Cython backend. The kernel cases report
the kernel calls' own time (``inner_seconds``), the others the whole process.
Used to check that a change costs nothing beyond noise (docs/performance.md).
Each run's CPU seconds (user + system of the process and its threads) are kept beside its wall time.
``--same-output`` times nothing: it converts each FILE with both trees' converters in every format
(``-j 2``) and compares every file written, byte for byte, and the exit status; it exits 1 on a difference.
The contender cases run ``benchmarks/contenders.py`` of each tree: to time an
older tree with a contender it lacks, copy this tree's script into it first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import bytecode

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench-data" / "lichess-100MB-seed0.pgn"


def cases(pgn: Path, release: Path | None = None) -> dict[str, list[str]]:
    zst = str(pgn) + ".zst"
    chosen = {
        "kernel-lines": ["-m", "benchmarks.contenders", "kernel-lines", str(pgn)],
        "kernel-games": ["-m", "benchmarks.contenders", "kernel-games", str(pgn)],
        "memory-lines": ["-m", "benchmarks.contenders", "memory-lines", str(pgn)],
        "read_games": ["-m", "benchmarks.contenders", "fastpgn-games", str(pgn)],
        "read_headers": ["-m", "benchmarks.contenders", "fastpgn-headers", str(pgn)],
        "convert-j2": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "-o", "{OUT}"],
        "convert-j2-filtered": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--min-elo", "1900", "-o", "{OUT}"],
        "convert-j2-validate": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--validate", "-o", "{OUT}"],
        "read_arrow-zst": ["-m", "benchmarks.contenders", "fastpgn-arrow", zst],
        "read_arrow-heads-j2": ["-m", "benchmarks.contenders", "fastpgn-arrow-heads-j2", zst],
        "convert-j2-uci": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--uci", "-o", "{OUT}"],
        "convert-j1-parquet": ["-m", "fastpgn", zst, "100000", "-j", "1", "-q", "--format", "parquet", "-o", "{OUT}"],
        "convert-j2-parquet": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--format", "parquet", "-o", "{OUT}"],
        "convert-j2-csv": ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--format", "csv", "-o", "{OUT}"],
    }
    frames = Path(str(pgn) + ".pzstd.zst")      # the same PGN in lichess's framing (make_corpus --pzstd)
    if frames.exists():
        mf = str(frames)
        chosen["frames-convert-j2-elo2200"] = ["-m", "fastpgn", mf, "100000", "-j", "2", "-q", "--min-elo", "2200",
                                               "-o", "{OUT}"]
        chosen["frames-read_arrow-heads-j2"] = ["-m", "benchmarks.contenders", "fastpgn-arrow-heads-j2", mf]
        chosen["frames-convert-j2"] = ["-m", "fastpgn", mf, "100000", "-j", "2", "-q", "-o", "{OUT}"]
        chosen["frames-convert-j2-parquet"] = ["-m", "fastpgn", mf, "100000", "-j", "2", "-q", "--format", "parquet",
                                               "-o", "{OUT}"]
        chosen["convert-j2-elo2200"] = ["-m", "fastpgn", zst, "100000", "-j", "2", "-q", "--min-elo", "2200",
                                        "-o", "{OUT}"]
    if release is not None:     # lichess's Parquet release of the same games (benchmarks.lichess_release)
        chosen["release-read_arrow"] = ["-m", "benchmarks.contenders", "lichess-parquet-arrow", str(release)]
        chosen["release-convert-j2-parquet"] = ["-m", "fastpgn", str(release), "100000", "-j", "2", "-q",
                                                "--format", "parquet", "-o", "{OUT}"]
    return chosen


def run(tree: Path, args: list[str], out: Path) -> tuple[float, float]:
    """(seconds, CPU seconds) of one case in ``tree``: the kernel's own time when the case reports it."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, FASTPGN_IMPLEMENTATION="cython", PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *[a.replace("{OUT}", str(out)) for a in args]], cwd=tree, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT ") and json.loads(line[7:]).get("inner_seconds"):
            return json.loads(line[7:])["inner_seconds"], cpu
    return wall, cpu


def _written(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by its relative path: its sha256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def same_output(trees: dict[str, Path], files: list[Path], formats: list[str], work: Path) -> list[str]:
    """The differences between the trees' conversions of ``files`` in ``formats`` (none: byte-identical)."""
    differences = []
    for f in files:
        for fmt in formats:
            seen = {}
            for name, tree in trees.items():
                out = work / name / fmt / f.name
                shutil.rmtree(out, ignore_errors=True)
                env = dict(os.environ, FASTPGN_IMPLEMENTATION="cython", PYTHONPATH=str(tree))
                proc = subprocess.run([sys.executable, "-m", "fastpgn", str(f.resolve()), "100000", "-j", "2", "-q",
                                       "--format", fmt, "-o", str(out)], cwd=tree, env=env, capture_output=True)
                seen[name] = (proc.returncode, _written(out))
            (rc_b, base), (rc_h, head) = seen["base"], seen["head"]
            if rc_b != rc_h:
                differences.append(f"{f} {fmt}: exit {rc_b} (base) against {rc_h} (head)")
            for path in sorted(set(base) | set(head)):
                if base.get(path) != head.get(path):
                    differences.append(f"{f} {fmt}: {path} differs (or is only in one tree)")
            print(f"{f.name:60s} {fmt:8s} exit {rc_h}, {len(head)} files "
                  f"{'identical' if base == head and rc_b == rc_h else 'DIFFER'}", flush=True)
    return differences


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.splitlines()[0])
    p.add_argument("base", type=Path)
    p.add_argument("head", type=Path)
    p.add_argument("--corpus", type=Path, default=CORPUS,
                   help="plain PGN, with PGN.zst beside it (and PGN.pzstd.zst, lichess's framing, for frames-*)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cases", help="comma-separated: " + ", ".join(cases(CORPUS, Path("RELEASE"))))
    p.add_argument("--release", type=Path,
                   help="lichess's Parquet release of the corpus's games, for the release-* cases")
    p.add_argument("--json", type=Path, help="write the timings here")
    p.add_argument("--same-output", type=Path, nargs="+", metavar="FILE",
                   help="time nothing: compare both trees' conversions of these files, byte for byte")
    p.add_argument("--formats", default="lines,parquet,csv", help="the formats --same-output converts to")
    args = p.parse_args(argv)
    if args.same_output:
        trees = {"base": args.base.resolve(), "head": args.head.resolve()}
        with tempfile.TemporaryDirectory() as work:
            differences = same_output(trees, args.same_output, args.formats.split(","), Path(work))
        print("\n".join(differences) or f"byte-identical: {len(args.same_output)} files, formats {args.formats}")
        return 1 if differences else 0
    # resolved: every case runs with its tree as the current folder
    chosen = {k: v for k, v in cases(args.corpus.resolve(), args.release and args.release.resolve()).items()
              if not args.cases or k in args.cases.split(",")}
    trees = {"base": args.base.resolve(), "head": args.head.resolve()}
    for tree in trees.values():
        bytecode(tree)
    times: dict[str, dict[str, list[float]]] = {c: {t: [] for t in trees} for c in chosen}
    cpu: dict[str, dict[str, list[float]]] = {c: {t: [] for t in trees} for c in chosen}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            for case, argv_ in chosen.items():
                for name in (("base", "head") if r % 2 == 0 else ("head", "base")):
                    wall, used = run(trees[name], argv_, Path(work) / name)
                    times[case][name].append(wall)
                    cpu[case][name].append(used)
    for case, t in times.items():
        b, h = statistics.median(t["base"]), statistics.median(t["head"])
        cb, ch = statistics.median(cpu[case]["base"]), statistics.median(cpu[case]["head"])
        print(f"{case:22s} base {b:7.3f} s  head {h:7.3f} s  head/base {h / b:5.3f}   "
              f"CPU base {cb:7.3f} s  head {ch:7.3f} s  head/base {ch / cb:5.3f}")
    if args.json:
        args.json.write_text(json.dumps({"trees": {k: str(v) for k, v in trees.items()}, "rounds": args.rounds,
                                         "corpus": str(args.corpus.resolve()), "seconds": times,
                                         "cpu_seconds": cpu}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
