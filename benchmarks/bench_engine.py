"""The engine bridge beside python-chess: positions/s of ``analyse`` at a fixed node count, in one run.

Every contender is a whole process (start-up, reading the games and the
engine's start included) analysing the same first ``--games`` games of a
lichess file, each position after a move searched by the same engine with
``Threads 1``, ``Hash 16`` and ``go nodes N`` (default 10,000), ``ucinewgame``
before each game, each position sent with its game's moves:

    pipe floor           a bare loop: write position and go, read lines until bestmove (no parsing, no checks)
    python-chess         chess.engine.SimpleEngine.analyse, the game's board pushed move by move
    fastpgn -j 1         python -m fastpgn analyse --no-cache -j 1 (the bridge, its checks and the PGN out)
    fastpgn -j 2         the same with two engines
    fastpgn -j 1 cache   the cache on: positions met again are not searched
    fastpgn -j 1 parquet -j 1 with --format parquet (the analysis schema: accuracy, ACPL, ... of the evals)

The table shows medians of ``--rounds`` interleaved rounds and each rate's
ratio to python-chess's; under it, ``-j 2`` over ``-j 1`` and the share of
positions the cache served, and ``--format parquet`` over ``--format pgn``
(the table formats must cost nothing next to the engine). Positions/s counts the positions given an eval
(searched or from the cache); the mating positions, which nobody searches,
are left out of every count. Last, the share of positions the cache would
serve over the whole input (``--cache-games``), counted from the positions
alone: a position is served when its key was met before in the run.

    python -m benchmarks.bench_engine --games 20
    python -m benchmarks.bench_engine --input games.pgn.zst --games 100 --rounds 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared"))
DEFAULT_INPUT = SHARED / "data" / "lichess-db" / "lichess_db_standard_rated_2013-01.head348.pgn.zst"
SUMMARY = re.compile(r"([\d,]+) positions, ([\d,]+) searched, ([\d,]+) from the cache")


def positions(path: str, games: int) -> list[tuple[str | None, list[str], int]]:
    """Per game: its start FEN (None: the standard start), its UCI moves, and how many of the positions
    after them get searched (all but a final mate or stalemate)."""
    from fastpgn import read_games
    from fastpgn.board import san_to_uci

    out = []
    for number, game in enumerate(read_games(path, errors="skip")):
        if number == games:
            break
        fen = game.headers.get("FEN")
        ucis = san_to_uci(" ".join(game.moves), fen).split() if game.moves else []
        board = game.board()
        final = bool(ucis) and (board.is_checkmate() or board.is_stalemate())
        out.append((fen, ucis, len(ucis) - final))
    return out


# ---------------------------------------------------------------- contenders run in a child process

def pipe_floor(engine: str, games, nodes: int) -> int:
    proc = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    send = proc.stdin.write

    def until(word: str) -> None:
        for line in proc.stdout:
            if line.startswith(word):
                return
        raise SystemExit("the engine ended")

    send("uci\n")
    until("uciok")
    send("setoption name Threads value 1\nsetoption name Hash value 16\n"
         "setoption name UCI_AnalyseMode value true\n")
    count = 0
    for fen, ucis, searched in games:
        send("ucinewgame\nisready\n")
        until("readyok")
        root = "position startpos" if fen is None else f"position fen {fen}"
        for k in range(searched):
            send(f"{root} moves {' '.join(ucis[:k + 1])}\ngo nodes {nodes}\n")
            until("bestmove")
            count += 1
    send("quit\n")
    proc.wait()
    return count


def python_chess(engine: str, games, nodes: int) -> int:
    import chess
    import chess.engine

    count = 0
    with chess.engine.SimpleEngine.popen_uci(engine) as sf:
        sf.configure({"Threads": 1, "Hash": 16})
        limit = chess.engine.Limit(nodes=nodes)
        for number, (fen, ucis, searched) in enumerate(games):
            board = chess.Board(fen) if fen else chess.Board()
            for uci in ucis[:searched]:
                board.push_uci(uci)
                sf.analyse(board, limit, game=number)
                count += 1
    return count


# ---------------------------------------------------------------- the run

def contenders(args, output: Path) -> list[tuple[str, list[str]]]:
    table = output.with_suffix(".parquet")
    me = [sys.executable, "-m", "benchmarks.bench_engine", "--input", str(args.input), "--games", str(args.games),
          "--nodes", str(args.nodes), "--engine", args.engine, "--child"]
    fastpgn = [sys.executable, "-m", "fastpgn.cli.analyse", str(args.input), "--limit", str(args.games),
               "--nodes", str(args.nodes), "--engine", args.engine, "--threads", "1", "--hash", "16",
               "-o", str(output), "--overwrite"]
    return [
        ("pipe floor", me + ["pipe"]),
        ("python-chess", me + ["python-chess"]),
        ("fastpgn -j 1", fastpgn + ["-j", "1", "--no-cache"]),
        ("fastpgn -j 2", fastpgn + ["-j", "2", "--no-cache"]),
        ("fastpgn -j 1 cache", fastpgn + ["-j", "1"]),
        ("fastpgn -j 1 parquet", fastpgn[:-3] + ["-o", str(table), "--overwrite", "-j", "1", "--no-cache",
                                                  "--format", "parquet"]),
    ]


def cache_share(path: str, games: int | None) -> tuple[int, int, int]:
    """Games, positions and cache hits of a -j 1 run over the first ``games`` games (all: None), counted
    from the positions alone: a position is served when its key was met before in the run."""
    from fastpgn import read_games
    from fastpgn.board import Board, replay_fens
    from fastpgn.engine.analysis import analysable, fen_without_counters

    seen: set[str] = set()
    count = positions = hits = 0
    for game in read_games(path, errors="skip"):
        if games is not None and count == games:
            break
        count += 1
        if not game.moves or analysable(game) is not None:
            continue
        fen, chess960 = game._start()
        fens = list(replay_fens(" ".join(game.moves), fen, chess960))
        last = Board(fens[-1], chess960)
        if last.is_checkmate() or last.is_stalemate():
            fens.pop()
        for fen in fens:
            key = fen_without_counters(fen)
            positions += 1
            if key in seen:
                hits += 1
            else:
                seen.add(key)
    return count, positions, hits


def once(argv: list[str]) -> tuple[float, int, int]:
    """Wall seconds, positions given an eval, positions from the cache."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    found = SUMMARY.search(done.stderr)
    if found:
        total, _searched, cached = (int(g.replace(",", "")) for g in found.groups())
        finals = total - _searched - cached            # mating and stalemating positions: not searched
        return seconds, total - finals, cached
    return seconds, int(done.stdout.strip()), 0


def run(args) -> dict:
    from fastpgn.engine import find_engine

    engine = find_engine(args.engine)
    if engine is None:
        raise SystemExit(f"engine not found: {args.engine} (Debian: apt-get install -y stockfish)")
    args.engine = engine
    with tempfile.TemporaryDirectory() as tmp:
        entries = contenders(args, Path(tmp) / "out.pgn")
        runs: dict[str, list] = {name: [] for name, _ in entries}
        for round_ in range(args.rounds):
            for name, argv in entries:
                runs[name].append(once(argv))
                print(f"round {round_ + 1}/{args.rounds}: {name} done", file=sys.stderr)
    results = []
    for name, _ in entries:
        seconds = statistics.median(r[0] for r in runs[name])
        count, cached = runs[name][0][1], runs[name][0][2]
        results.append({"contender": name, "positions": count, "from_cache": cached, "seconds": seconds,
                        "positions_per_s": count / seconds})
    rates = {r["contender"]: r["positions_per_s"] for r in results}
    for r in results:
        r["ratio_to_python_chess"] = r["positions_per_s"] / rates["python-chess"]
    cache_row = next(r for r in results if r["contender"] == "fastpgn -j 1 cache")
    corpus_games, corpus_positions, corpus_hits = cache_share(str(args.input), args.cache_games)
    return {"input": str(args.input), "games": args.games, "nodes": args.nodes, "rounds": args.rounds,
            "engine": engine, "python": platform.python_version(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(), "results": results,
            "j2_over_j1": rates["fastpgn -j 2"] / rates["fastpgn -j 1"],
            "fastpgn_j1_over_pipe_floor": rates["fastpgn -j 1"] / rates["pipe floor"],
            "parquet_over_pgn": rates["fastpgn -j 1 parquet"] / rates["fastpgn -j 1"],
            "cache_share": cache_row["from_cache"] / cache_row["positions"] if cache_row["positions"] else 0.0,
            "corpus_cache": {"games": corpus_games, "positions": corpus_positions, "served": corpus_hits,
                             "share": corpus_hits / corpus_positions if corpus_positions else 0.0}}


def table(report: dict) -> str:
    head = f"{'contender':<20}{'positions':>10}{'cached':>8}{'seconds':>9}{'positions/s':>13}{'x chess':>9}"
    lines = [f"{report['games']} games of {Path(report['input']).name}, go nodes {report['nodes']:,}, Threads 1, "
             f"Hash 16, median of {report['rounds']} round(s), {report['cpus']} CPUs, Python {report['python']}",
             head, "-" * len(head)]
    for r in report["results"]:
        lines.append(f"{r['contender']:<20}{r['positions']:>10,}{r['from_cache']:>8,}{r['seconds']:>9.2f}"
                     f"{r['positions_per_s']:>13,.1f}{r['ratio_to_python_chess']:>9.2f}")
    lines.append(f"-j 2 / -j 1: {report['j2_over_j1']:.2f}x; fastpgn -j 1 / pipe floor: "
                 f"{report['fastpgn_j1_over_pipe_floor']:.2f}x; --format parquet / pgn: "
                 f"{report['parquet_over_pgn']:.2f}x; the cache served "
                 f"{100 * report['cache_share']:.1f}% of the positions")
    c = report["corpus_cache"]
    lines.append(f"cache over the input's first {c['games']:,} games (counted from their positions, no engine): "
                 f"{c['served']:,} of {c['positions']:,} positions served, {100 * c['share']:.1f}%")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_engine", description=__doc__.split("\n")[0])
    parser.add_argument("--input", type=Path, default=DEFAULT_INPUT, help="lichess PGN (any compression)")
    parser.add_argument("--games", type=int, default=20, help="games analysed (the first N)")
    parser.add_argument("--nodes", type=int, default=10_000, help="nodes per position")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; medians are shown")
    parser.add_argument("--engine", default="stockfish", help="UCI engine (default stockfish, /usr/games too)")
    parser.add_argument("--cache-games", type=int, default=None,
                        help="games over which the cache's share is counted without an engine (default: all)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--child", choices=("pipe", "python-chess"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.child:
            games = positions(str(args.input), args.games)
            count = (pipe_floor if args.child == "pipe" else python_chess)(args.engine, games, args.nodes)
            print(count)
            return 0
        report = run(args)
        print(json.dumps(report, indent=2) if args.json else table(report))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
