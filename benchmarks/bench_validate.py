"""The validated conversion (``--validate``) in memory: the scanner alone beside the scanner with every move replayed.

One core, the decompressed PGN in memory, cut into game-aligned blocks of
4 MiB as the converter cuts a stream (``--block-size 0``: one
``lines_from_block`` call over the whole input). Three runs a round: the
scanner without a hook; with ``contenders.validation_hook`` (each game's SAN
replayed on the board, the SAN written); and with ``board.moves_hook(uci=True)``
(replayed, the UCI moves written in field 20: the board's target, "lines with UCI
moves", the converter's ``--uci``). Rounds are interleaved so machine noise
hits all alike; the table shows medians and best rounds, games/s, the ratio
of the medians to the scanner's, and what the board and its hook add per
100 MB (best rounds).

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


def game_aligned_blocks(data: bytes, block_size: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the blocks the converter's cutter makes.

    Each ends at the first game start past a multiple of ``block_size``.
    """
    from fastpgn.io.sources import find_cut

    if block_size <= 0:
        return [(0, len(data))]
    spans, start = [], 0
    while start < len(data):
        target = (start // block_size + 1) * block_size
        cut = find_cut(data, target) if target < len(data) else -1
        end = len(data) if cut < 0 else cut
        spans.append((start, end))
        start = end
    return spans


def run(path: Path, rounds: int, block_size: int) -> dict:
    from benchmarks.contenders import validation_hook
    from fastpgn import openings, scan as _scan
    from fastpgn.board import _kernel as _board, moves_hook

    scan = _scan.kernel.lines_from_block
    # The C copy of the map, as read_lines and the converter pass it.
    table = _scan.kernel.opening_table(openings.load())
    data = path.read_bytes()
    blocks = game_aligned_blocks(data, block_size)
    hooks = {"scanner": None, "scanner + board (SAN)": validation_hook(_board.kernel),
             "scanner + board (UCI)": moves_hook(uci=True)}

    def convert(hook) -> tuple[list[bytes], int]:
        lines, games = [], 0
        for start, end in blocks:
            out, read, rejects, _ = scan(data, start, end, base_offset=start, first_game=games,
                                         at_stream_start=start == 0, openings=table, moves_hook=hook)
            if rejects:
                raise SystemExit(f"game {rejects[0][2]} rejected: {rejects[0][0]}")
            lines.append(out)
            games += read
        return lines, games

    convert(hooks["scanner + board (SAN)"])  # warm-up: first-call set-up untimed
    times: dict[str, list[float]] = {name: [] for name in hooks}
    outputs = {}
    for _ in range(rounds):
        for name, hook in hooks.items():
            t = time.perf_counter()
            outputs[name] = convert(hook)
            times[name].append(time.perf_counter() - t)
    if outputs["scanner"] != outputs["scanner + board (SAN)"]:
        raise SystemExit("the validated lines differ from the scanner's: a game was rejected or changed")
    games = outputs["scanner"][1]
    if outputs["scanner + board (UCI)"][1] != games:
        raise SystemExit("the UCI run read a different number of games")
    mb = len(data) / 1e6
    base = times["scanner"]
    rows = [{"run": name, "median_mb_s": mb / statistics.median(t), "best_mb_s": mb / min(t),
             "games_per_s": games / statistics.median(t), "ratio": statistics.median(base) / statistics.median(t)}
            for name, t in times.items()]
    return {"input": str(path), "mb": mb, "games": games, "rounds": rounds, "blocks": len(blocks),
            "block_size": block_size, "scan_backend": _scan.BACKEND, "board_backend": _board.BACKEND,
            "rows": rows,
            "board_s_per_100mb": {name: (min(t) - min(base)) * 100 / mb for name, t in times.items()
                                  if name != "scanner"}}


def table(report: dict) -> str:
    cut = (f"{report['blocks']} blocks of {report['block_size'] >> 20} MiB" if report["block_size"] > 0
           else "one call")
    lines = [f"{report['input']}: {report['mb']:.1f} MB, {report['games']:,} games, {cut}, scanner "
             f"{report['scan_backend']}, board {report['board_backend']}, {report['rounds']} rounds",
             f"{'run':<22}{'median MB/s':>12}{'best MB/s':>11}{'games/s':>10}{'x scanner':>11}"]
    lines += [f"{r['run']:<22}{r['median_mb_s']:>12.1f}{r['best_mb_s']:>11.1f}{r['games_per_s']:>10,.0f}"
              f"{r['ratio']:>11.3f}" for r in report["rows"]]
    added = ", ".join(f"{s:.3f} s ({name[-4:-1]} out)"
                      for name, s in report["board_s_per_100mb"].items())
    lines.append(f"board + hook add per 100 MB (best rounds): {added}; ratios are of medians")
    return "\n".join(lines)


def main(argv=None) -> int:
    from fastpgn.io.sources import BLOCK_SIZE

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_validate", description=__doc__.split("\n")[0])
    parser.add_argument("pgn", type=Path, help="a decompressed PGN (e.g. bench-data/lichess-100MB-seed0.pgn)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--block-size", type=int, default=BLOCK_SIZE,
                        help=f"bytes per game-aligned block (default {BLOCK_SIZE}, the converter's); 0: one call")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    try:
        report = run(args.pgn, args.rounds, args.block_size)
        print(json.dumps(report, indent=2) if args.json else table(report))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
