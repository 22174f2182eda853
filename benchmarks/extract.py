"""An extract by a filter: fastpgn's converter ``--format pgn`` beside pgn-extract, on the same plain .pgn.

``python -m benchmarks.extract [--pgn bench-data/lichess-100MB-seed0.pgn] [--min-elo 1900] [--rounds 3]
[--jobs 1] [--json]``: both keep the games whose two players are rated at least ``--min-elo`` (1900 keeps
about 11% of the 100 MB corpus) and write them as PGN; whole processes, interleaved rounds, medians,
MB/s of input and the ratio pgn-extract / fastpgn. The kept games are counted in both outputs and must
agree. pgn-extract is Debian's (``apt-get install pgn-extract``; in /usr/games).
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


def _time(cmd: list[str], stdout) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=stdout, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _games(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.startswith(b"[Event "))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pgn", default=str(ROOT / "bench-data" / "lichess-100MB-seed0.pgn"))
    p.add_argument("--min-elo", type=int, default=1900)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=1, help="fastpgn's -j (pgn-extract has one thread)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    pgn = Path(args.pgn)
    pe = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")
    if pe is None:
        print("pgn-extract is not installed: apt-get install pgn-extract", file=sys.stderr)
        return 2
    size = pgn.stat().st_size
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tags = work / "elo.tags"
        tags.write_text(f'WhiteElo >= "{args.min_elo}"\nBlackElo >= "{args.min_elo}"\n')
        ours_out, theirs_out = work / "fastpgn.pgn", work / "pgn-extract.pgn"
        ours = [sys.executable, "-m", "fastpgn", str(pgn), "-o", "-", "--format", "pgn", "--min-elo",
                str(args.min_elo), "-j", str(args.jobs), "-q"]
        theirs = [pe, "--quiet", "-s", "-t", str(tags), "-o", str(theirs_out), str(pgn)]
        times: dict[str, list[float]] = {"fastpgn": [], "pgn-extract": []}
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        for _ in range(args.rounds):
            with open(ours_out, "wb") as out:
                start = time.perf_counter()
                subprocess.run(ours, check=True, stdout=out, stderr=subprocess.DEVNULL, env=env)
                times["fastpgn"].append(time.perf_counter() - start)
            times["pgn-extract"].append(_time(theirs, subprocess.DEVNULL))
        kept = {"fastpgn": _games(ours_out), "pgn-extract": _games(theirs_out)}
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [{"tool": k, "seconds": round(med[k], 3), "MB/s": round(size / 1e6 / med[k], 1), "games": kept[k],
             "ratio": round(med["pgn-extract"] / med[k], 2)} for k in times]
    if args.json:
        print(json.dumps({"input": str(pgn), "bytes": size, "min_elo": args.min_elo, "rounds": args.rounds,
                          "rows": rows}))
    else:
        print(f"{pgn.name}, {size / 1e6:.0f} MB, both players >= {args.min_elo}, median of {args.rounds}")
        print(f"{'tool':<12} {'seconds':>8} {'MB/s':>8} {'games':>8} {'x pgn-extract':>14}")
        for r in rows:
            print(f"{r['tool']:<12} {r['seconds']:>8.2f} {r['MB/s']:>8.1f} {r['games']:>8} {r['ratio']:>14.2f}")
    if kept["fastpgn"] != kept["pgn-extract"]:
        print(f"the tools kept different games: {kept}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
