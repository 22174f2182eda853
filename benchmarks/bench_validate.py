"""Issue 4's validated point in memory: the scanner alone beside the scanner with every move replayed.

One core, the decompressed PGN in memory, ``lines_from_block`` over the whole
input in one call: without a hook, and with ``contenders.validation_hook``
(each game's SAN replayed on the board). Rounds are interleaved so machine
noise hits both alike; the table shows medians and best rounds, games/s and
the ratio of the medians to the scanner's, and what the board and its hook
add per 100 MB (best rounds).

    python -m benchmarks.bench_validate bench-data/lichess-100MB-seed0.pgn
    python -m benchmarks.bench_validate bench-data/lichess-100MB-seed0.pgn --rounds 9 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def run(path: Path, rounds: int) -> dict:
    from benchmarks.contenders import validation_hook
    from fastpgn import _board, _scan, openings

    scan = _scan.kernel.lines_from_block
    # The C copy of the map, as read_lines and the converter pass it.
    table = _scan.kernel.opening_table(openings.load())
    data = path.read_bytes()
    hook = validation_hook(_board.kernel)
    times: dict[str, list[float]] = {"scanner": [], "scanner + board": []}
    outputs = {}
    scan(data, 0, min(len(data), 1 << 20), 0, 0, True, table, False, hook)  # warm-up: first-call set-up untimed
    for _ in range(rounds):
        for name, extra in (("scanner", ()), ("scanner + board", (hook,))):
            t = time.perf_counter()
            outputs[name] = scan(data, 0, len(data), 0, 0, True, table, False, *extra)
            times[name].append(time.perf_counter() - t)
    if outputs["scanner"][0] != outputs["scanner + board"][0]:
        raise SystemExit("the validated lines differ from the scanner's: a game was rejected or changed")
    mb = len(data) / 1e6
    base, validated = times["scanner"], times["scanner + board"]
    games = outputs["scanner"][1]
    rows = [{"run": name, "median_mb_s": mb / statistics.median(t), "best_mb_s": mb / min(t),
             "games_per_s": games / statistics.median(t), "ratio": statistics.median(base) / statistics.median(t)}
            for name, t in times.items()]
    return {"input": str(path), "mb": mb, "games": games, "rounds": rounds,
            "scan_backend": _scan.BACKEND, "board_backend": _board.BACKEND, "rows": rows,
            "ratio": statistics.median(base) / statistics.median(validated),
            "board_s_per_100mb": (min(validated) - min(base)) * 100 / mb}


def table(report: dict) -> str:
    lines = [f"{report['input']}: {report['mb']:.1f} MB, {report['games']:,} games, scanner "
             f"{report['scan_backend']}, board {report['board_backend']}, {report['rounds']} rounds",
             f"{'run':<18}{'median MB/s':>12}{'best MB/s':>11}{'games/s':>10}{'x scanner':>11}"]
    lines += [f"{r['run']:<18}{r['median_mb_s']:>12.1f}{r['best_mb_s']:>11.1f}{r['games_per_s']:>10,.0f}"
              f"{r['ratio']:>11.3f}" for r in report["rows"]]
    lines.append(f"board + hook add {report['board_s_per_100mb']:.3f} s per 100 MB (best rounds); "
                 f"ratios are of medians")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_validate", description=__doc__.split("\n")[0])
    parser.add_argument("pgn", type=Path, help="a decompressed PGN (e.g. bench-data/lichess-100MB-seed0.pgn)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    try:
        report = run(args.pgn, args.rounds)
        print(json.dumps(report, indent=2) if args.json else table(report))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
