"""The position index: its size a game, its build time beside the conversion's, and lookups through it vs a scan.

Converts INPUT (a PGN dump, any compression) with ``python -m fastpgn INPUT
CHUNK --format parquet --positions --uci -q`` and builds the index with
``python -m fastpgn positions-index`` (each a whole process, timed), then
looks up ``--lookups`` positions (each a random ply of a random game, seeded)
with ``fastpgn.positions.games_reaching`` in this process, warm (each key
looked up once untimed first, so the files are in the page cache): through
the index and by scanning (``index=False``), in one DuckDB connection
(``con=``), checking that the two answers are equal; 20 of them again
through the index with a connection each (games_reaching's default).
Reports medians and p99s, and the ratio of the scan's median to each.

    python -m benchmarks.make_corpus --size 100MB
    python -m benchmarks.position_index bench-data/lichess-100MB-seed0.pgn.zst
    python -m benchmarks.position_index FILE -j 2 --lookups 200 --scan-lookups 50 --json
    python -m benchmarks.position_index --dataset games/ --json        (a dataset converted already)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> float:
    """Seconds of one whole process (which must succeed)."""
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return seconds


def parquet_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*.parquet") if not f.name.startswith(("_", ".")))


def sample_keys(dataset: Path, count: int, seed: int) -> list[int]:
    """``count`` keys, each of a random ply of a random game (so common positions come up as often as played)."""
    import pyarrow.dataset as ds

    lists = ds.dataset(dataset, format="parquet").to_table(columns=["zobrist"]).column("zobrist").to_pylist()
    games = [z for z in lists if z]
    rng = random.Random(seed)
    return [rng.choice(g) for g in (rng.choice(games) for _ in range(count))]


class Key:
    def __init__(self, key: int) -> None:
        self.key = key

    def zobrist(self) -> int:
        return self.key


def lookups(dataset: Path, keys: list[int], index, con) -> tuple[list[float], list]:
    """Each key's seconds (after one untimed warm-up lookup of it) and answer; in ``con`` (None: a connection
    each, some 15 ms more a lookup)."""
    from fastpgn.positions import games_reaching

    seconds, answers = [], []
    for key in keys:
        games_reaching(dataset, Key(key), index=index, con=con)
        started = time.perf_counter()
        answers.append(games_reaching(dataset, Key(key), index=index, con=con))
        seconds.append(time.perf_counter() - started)
    return seconds, answers


def summary(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {"lookups": len(seconds), "median_ms": round(1000 * statistics.median(ordered), 2),
            "p99_ms": round(1000 * p99, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path, nargs="?", help="a PGN dump to convert (or --dataset)")
    parser.add_argument("--dataset", type=Path, help="Parquet converted already with --positions (no conversion)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="converter workers and DuckDB threads")
    parser.add_argument("--lookups", type=int, default=200, help="point lookups through the index (default 200)")
    parser.add_argument("--scan-lookups", type=int, help="of those, how many also by scanning (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    if (args.input is None) == (args.dataset is None):
        parser.error("give a PGN INPUT or --dataset")
    with tempfile.TemporaryDirectory(prefix="fastpgn-bench-index-") as tmp:
        convert_s = None
        dataset = args.dataset
        if dataset is None:
            dataset = Path(tmp) / "games"
            convert_s = timed([sys.executable, "-m", "fastpgn", str(args.input), "1000000000", "--format", "parquet",
                               "--positions", "--uci", "-q", "-j", str(args.jobs), "-o", str(dataset)])
        index = Path(tmp) / "index.parquet"
        build_s = timed([sys.executable, "-m", "fastpgn", "positions-index", str(dataset), "-o", str(index), "-q",
                         "-j", str(args.jobs)])
        import pyarrow.parquet as pq

        meta = pq.read_metadata(index)
        from fastpgn.positions import index_path

        games = pq.ParquetDataset(dataset).read(columns=["game_id"]).num_rows
        keys = sample_keys(dataset, args.lookups, args.seed)
        # (games_reaching finds the index at its default place, or is given it)
        where = index if not os.path.exists(index_path(dataset)) else None
        import duckdb

        con = duckdb.connect()
        through, found = lookups(dataset, keys, where, con)
        own, _ = lookups(dataset, keys[:20], where, None)
        scan_keys = keys[:args.scan_lookups] if args.scan_lookups is not None else keys
        scanned, answers = lookups(dataset, scan_keys, False, con)
        con.close()
        if any(not a.equals(b) for a, b in zip(found, answers)):
            raise SystemExit("the index and the scan disagree")
        if found and found[0].schema.metadata[b"fastpgn_source"] != b"index":
            raise SystemExit("the lookups did not read the index")
        size = index.stat().st_size
        data = parquet_bytes(dataset)
        result = {
            "input": str(args.input or args.dataset), "jobs": args.jobs, "load": os.getloadavg()[0],
            "games": games, "postings": meta.num_rows, "row_groups": meta.num_row_groups,
            "dataset_bytes": data, "dataset_bytes_per_game": round(data / max(games, 1), 1),
            "index_bytes": size, "index_bytes_per_game": round(size / max(games, 1), 1),
            "index_bytes_per_posting": round(size / max(meta.num_rows, 1), 2),
            "convert_s": None if convert_s is None else round(convert_s, 2), "build_index_s": round(build_s, 2),
            "build_over_convert": None if convert_s is None else round(build_s / convert_s, 2),
            "index": summary(through), "scan": summary(scanned), "index_own_connection": summary(own),
            "rows_found_median": statistics.median(a.num_rows for a in found) if found else 0,
        }
        result["scan_over_index"] = round(result["scan"]["median_ms"] / max(result["index"]["median_ms"], 1e-9), 1)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['input']}: {games:,} games, {meta.num_rows:,} postings in {meta.num_row_groups} row groups, "
          f"-j {args.jobs} (load {result['load']:.1f})")
    print(f"dataset {data:,} B ({result['dataset_bytes_per_game']} a game); index {size:,} B "
          f"({result['index_bytes_per_game']} a game, {result['index_bytes_per_posting']} a posting)")
    if convert_s is not None:
        print(f"convert {convert_s:.2f} s; build index {build_s:.2f} s ({result['build_over_convert']}x)")
    else:
        print(f"build index {build_s:.2f} s")
    print(f"{'lookup':<22} {'n':>5} {'median ms':>10} {'p99 ms':>8} {'ratio':>6}")
    for name in ("index", "scan", "index_own_connection"):
        r = result[name]
        ratio = round(result["scan"]["median_ms"] / max(r["median_ms"], 1e-9), 1)
        print(f"{name:<22} {r['lookups']:>5} {r['median_ms']:>10} {r['p99_ms']:>8} {ratio:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
