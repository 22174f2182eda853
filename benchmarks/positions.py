"""What the position columns cost: the Parquet converter with --positions and --fens beside the one without.

Each row is ``python -m fastpgn INPUT CHUNK --format parquet -q`` as a whole
process (``-j`` as given, default 1), in interleaved rounds (machine noise
hits all alike), reported as medians. The ratio column divides each row's
MB/s by that of the plain Parquet run in the same rounds; the bytes column
is the Parquet output's size a game, and what each flag adds over the plain
run (zstd, as the converter writes it).

    python -m benchmarks.positions bench-data/lichess-100MB-seed0.pgn.zst
    python -m benchmarks.positions FILE --rounds 5 -j 2 --json
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

CASES = (("parquet", []), ("parquet --positions", ["--positions"]), ("parquet --fens", ["--fens"]),
         ("parquet --positions --fens", ["--positions", "--fens"]),
         ("parquet --validate", ["--validate"]))


def run(path: Path, flags: list[str], jobs: int, out: Path) -> tuple[float, int, int]:
    """Seconds of one converter process, the Parquet bytes it wrote and the games in them."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "fastpgn", str(path), "1000000000", "--format", "parquet", "-q", "-j", str(jobs),
            "-o", str(out), *flags]
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    files = sorted(out.glob("*.parquet"))
    import pyarrow.parquet as pq

    games = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return seconds, sum(f.stat().st_size for f in files), games


def pgn_bytes(path: Path) -> int:
    """The decompressed PGN's size (MB/s are of it)."""
    if path.suffix not in (".zst", ".bz2", ".gz"):
        return path.stat().st_size
    if path.suffix == ".zst":
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"))
    elif path.suffix == ".bz2":
        import bz2

        stream = bz2.open(path)
    else:
        import gzip

        stream = gzip.open(path)
    total = 0
    with stream:
        while chunk := stream.read(1 << 22):
            total += len(chunk)
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    size = pgn_bytes(args.input)
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    sizes: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name, flags in CASES:
                seconds, written, games = run(args.input, flags, args.jobs, Path(tmp) / "out")
                times[name].append(seconds)
                sizes[name] = (written, games)
    base = size / 1e6 / statistics.median(times["parquet"])
    plain = sizes["parquet"][0] / max(sizes["parquet"][1], 1)
    rows = []
    for name, _ in CASES:
        mb_s = size / 1e6 / statistics.median(times[name])
        written, games = sizes[name]
        per_game = written / max(games, 1)
        rows.append({"case": name, "mb_per_s": round(mb_s, 1), "ratio": round(mb_s / base, 2),
                     "games_per_s": round(games / statistics.median(times[name])),
                     "bytes_per_game": round(per_game, 1), "added_bytes_per_game": round(per_game - plain, 1),
                     "runs": [round(t, 2) for t in times[name]]})
    if args.json:
        print(json.dumps({"input": str(args.input), "pgn_bytes": size, "jobs": args.jobs, "rounds": args.rounds,
                          "load": os.getloadavg()[0], "rows": rows}, indent=1))
        return 0
    print(f"{args.input}: {size / 1e6:.1f} MB of PGN, -j {args.jobs}, {args.rounds} rounds, medians "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"{'case':<28} {'MB/s':>7} {'ratio':>6} {'games/s':>9} {'B/game':>8} {'added':>7}")
    for r in rows:
        print(f"{r['case']:<28} {r['mb_per_s']:>7} {r['ratio']:>6} {r['games_per_s']:>9} {r['bytes_per_game']:>8} "
              f"{r['added_bytes_per_game']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
