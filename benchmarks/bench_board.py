"""Board kernel speed beside python-chess, in one run: validated SAN -> UCI replay and perft.

Replay: every game of the shared corpus's ``data/lichess-db/*.pgn.zst`` (the movetext's
SAN tokens, annotations and check marks included, exactly what the dump
converter hands the kernel) through ``san_to_uci`` of each backend, and
through python-chess's ``push_san`` + ``Move.uci`` (every move validated in
both). Perft: legal-move-tree leaves from the start position, counted in bulk
at the last ply by every contender (python-chess: ``legal_moves.count()``), or with
``--no-bulk`` every leaf made and unmade.

Two C peers join where they are installed, skipped with a note where not:
fastchess (``Board.push_san`` returns the UCI; perft over ``legal_moves_uci``
and board copies, as it has no undo) in this process, and bulletchess
(``Move.from_san`` + ``Board.apply``, ``Move.uci``; perft with ``apply``/``undo``)
in a Python 3.13 of its own (``--py313``; bulletchess is built for 3.13 only):
one process a round, the replay and perft timed inside it, the games handed
over in a file.

Rounds are interleaved (round 1 of every contender, then round 2, ...) so
machine noise hits all alike; the table shows medians and each rate's ratio
to python-chess's. Slow contenders replay a prefix of the games
(``--py-games``, ``--chess-games``); their rate is per ply all the same.

    python -m benchmarks.bench_board
    python -m benchmarks.bench_board --rounds 5 --json > board.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared"))
_COMMENT = re.compile(r"\{[^}]*\}")
_NOT_A_MOVE = re.compile(r"\d+\.+|1-0|0-1|1/2-1/2|\*|\$\d+")


def load_games(folder: Path) -> list[str]:
    """Each game's SAN moves, space-separated, as the converter will pass them."""
    import zstandard

    games = []
    for path in sorted(folder.glob("*.pgn.zst")):
        text = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()).decode()
        for chunk in re.split(r"\n\n(?=\[Event )", text.strip("\n")):
            movetext = chunk.partition("\n\n")[2]
            games.append(" ".join(t for t in _COMMENT.sub(" ", movetext).split()
                                  if not _NOT_A_MOVE.fullmatch(t)))
    return games


def _bare(san: str) -> str:
    return san.rstrip("!?")


def replay_fastchess(games):
    import fastchess

    for sans in games:
        board = fastchess.Board()
        # push_san takes check marks but no "!?" (annotations a PGN reader splits off first).
        " ".join(board.push_san(_bare(san)) for san in sans.split())


def perft_fastchess(board, depth, bulk):
    if depth == 0:
        return 1
    moves = board.legal_moves_uci()
    if depth == 1 and bulk:
        return len(moves)
    total = 0
    for move in moves:
        child = board.copy()
        child.push_uci(move)
        total += perft_fastchess(child, depth - 1, bulk)
    return total


def replay_bulletchess(games):
    import bulletchess

    from_san = bulletchess.Move.from_san
    for sans in games:
        board = bulletchess.Board()
        uci = []
        for san in sans.split():
            move = from_san(_bare(san), board)
            uci.append(move.uci())
            board.apply(move)
        " ".join(uci)


def perft_bulletchess(board, depth, bulk):
    if depth == 0:
        return 1
    moves = board.legal_moves()
    if depth == 1 and bulk:
        return len(moves)
    total = 0
    for move in moves:
        board.apply(move)
        total += perft_bulletchess(board, depth - 1, bulk)
        board.undo()
    return total


def bulletchess_worker(games_file: str, depth: int, bulk: bool) -> int:
    """One round of the bulletchess contender, in the Python that has it: replay, then perft; prints JSON."""
    import bulletchess

    with open(games_file, encoding="utf-8") as f:
        games = f.read().splitlines()
    t = time.perf_counter()
    replay_bulletchess(games)
    replay_s = time.perf_counter() - t
    t = time.perf_counter()
    nodes = perft_bulletchess(bulletchess.Board(), depth, bulk)
    perft_s = time.perf_counter() - t
    print(json.dumps({"replay_s": replay_s, "perft_s": perft_s, "nodes": nodes}))
    return 0


def _bulletchess_round(py313: str, games_file: Path, depth: int, bulk: bool) -> dict:
    import subprocess

    argv = [py313, "-m", "benchmarks.bench_board", "--bulletchess-worker", str(games_file),
            "--slow-depth", str(depth)] + ([] if bulk else ["--no-bulk"])
    r = subprocess.run(argv, capture_output=True, text=True, cwd=str(ROOT),
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if r.returncode != 0:
        raise SystemExit(f"bulletchess ({py313}) failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def replay_kernel(kernel, games):
    for sans in games:
        kernel.san_to_uci(sans)


def replay_python_chess(games):
    import chess

    for sans in games:
        board = chess.Board()
        # parse_san takes no "!?" (python-chess's PGN reader splits them off first).
        " ".join(board.push_san(san.rstrip("!?")).uci() for san in sans.split())


def perft_python_chess(board, depth, bulk):
    if depth == 0:
        return 1
    if depth == 1 and bulk:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += perft_python_chess(board, depth - 1, bulk)
        board.pop()
    return total


def contenders(args, games):
    """(name, replay callable, plies it replays, perft callable, perft depth) per contender."""
    from fastpgn import _backend

    def plies(sample):
        return sum(len(g.split()) for g in sample)

    out = []
    for ident, kernel in reversed(_backend.available("board._board")):
        name = "fastpgn-cy" if ident == "cy" else "fastpgn-py"
        sample = games if ident == "cy" else games[:args.py_games]
        depth = args.depth if ident == "cy" else args.slow_depth
        out.append((name, (lambda k=kernel, s=sample: replay_kernel(k, s)), plies(sample),
                    (lambda k=kernel, d=depth: k.Board().perft(d, bulk=args.bulk)), depth))
    try:
        import chess
    except ImportError:
        print("python-chess is not installed: no reference column", file=sys.stderr)
    else:
        sample = games[:args.chess_games]
        out.append(("python-chess", (lambda s=sample: replay_python_chess(s)), plies(sample),
                    (lambda: perft_python_chess(chess.Board(), args.slow_depth, args.bulk)),
                    args.slow_depth))
    try:
        import fastchess
    except ImportError:
        args.notes.append("fastchess skipped: not installed (pip install fastchess)")
    else:
        sample = games[:args.peer_games]
        out.append(("fastchess", (lambda s=sample: replay_fastchess(s)), plies(sample),
                    (lambda: perft_fastchess(fastchess.Board(), args.slow_depth, args.bulk)), args.slow_depth))
    from benchmarks.compare import py313_with

    py313, why = py313_with("bulletchess", args.py313)
    if py313 is None:
        args.notes.append(f"bulletchess skipped: {why}")
    else:
        args.notes.append(f"bulletchess ran in {py313} (its own process a round, timed inside it)")
        sample = games[:args.peer_games]
        args.games_file.write_text("\n".join(sample) + "\n", encoding="utf-8")
        out.append(("bulletchess", (lambda: _bulletchess_round(py313, args.games_file, args.slow_depth, args.bulk)),
                    plies(sample), None, args.slow_depth))
    return out


PERFT = {1: 20, 2: 400, 3: 8902, 4: 197281, 5: 4865609, 6: 119060324}


def _rounds(args, entries) -> dict:
    times = {name: {"replay": [], "perft": []} for name, *_ in entries}
    for round_ in range(args.rounds):
        for name, replay, _, perft, depth in entries:
            if perft is None:       # a contender in a process of its own: it times itself
                got = replay()
                times[name]["replay"].append(got["replay_s"])
                times[name]["perft"].append(got["perft_s"])
                nodes = got["nodes"]
            else:
                t = time.perf_counter()
                replay()
                times[name]["replay"].append(time.perf_counter() - t)
                t = time.perf_counter()
                nodes = perft()
                times[name]["perft"].append(time.perf_counter() - t)
            if nodes != PERFT[depth]:
                raise SystemExit(f"{name}: perft({depth}) = {nodes}, expected {PERFT[depth]}")
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    return times


def run(args) -> dict:
    games = load_games(args.source)
    if not games:
        raise SystemExit(f"no games under {args.source}")
    import tempfile

    args.notes = []
    with tempfile.TemporaryDirectory(prefix="bench-board-") as tmp:
        args.games_file = Path(tmp) / "games.txt"
        entries = contenders(args, games)
        times = _rounds(args, entries)
    results = []
    for name, _, plies, _, depth in entries:
        replay_s = statistics.median(times[name]["replay"])
        perft_s = statistics.median(times[name]["perft"])
        results.append({"contender": name, "plies": plies, "replay_s": replay_s,
                        "plies_per_s": plies / replay_s, "perft_depth": depth,
                        "perft_nodes": PERFT[depth], "perft_s": perft_s,
                        "perft_nodes_per_s": PERFT[depth] / perft_s})
    reference = next((r for r in results if r["contender"] == "python-chess"), None)
    for r in results:
        r["plies_ratio"] = r["plies_per_s"] / reference["plies_per_s"] if reference else None
        r["perft_ratio"] = r["perft_nodes_per_s"] / reference["perft_nodes_per_s"] if reference else None
    return {"games": len(games), "rounds": args.rounds, "perft_bulk": args.bulk,
            "python": platform.python_version(),
            "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "results": results, "notes": args.notes}


def table(report: dict) -> str:
    head = (f"{'contender':<14}{'plies':>9}{'SAN->UCI plies/s':>18}{'x chess':>9}"
            f"{'perft':>8}{'nodes/s':>14}{'x chess':>9}")
    lines = [f"{report['games']} lichess-db games, median of {report['rounds']} rounds, "
             f"Python {report['python']}", head, "-" * len(head)]
    for r in report["results"]:
        ratio_p = f"{r['plies_ratio']:.1f}" if r["plies_ratio"] is not None else "-"
        ratio_n = f"{r['perft_ratio']:.1f}" if r["perft_ratio"] is not None else "-"
        lines.append(f"{r['contender']:<14}{r['plies']:>9}{r['plies_per_s']:>18,.0f}{ratio_p:>9}"
                     f"{'d' + str(r['perft_depth']):>8}{r['perft_nodes_per_s']:>14,.0f}{ratio_n:>9}")
    lines.append("perft: last ply bulk-counted by every contender" if report["perft_bulk"]
                 else "perft: every leaf made and unmade by every contender (--no-bulk)")
    lines += [f"note: {n}" for n in report.get("notes", ())]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_board", description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=SHARED / "data" / "lichess-db",
                        help="folder of *.pgn.zst lichess games (default: data/lichess-db of the shared corpus, "
                             "$FASTPGN_SHARED or shared/ beside the checkout)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are shown")
    parser.add_argument("--depth", type=int, default=5, choices=range(1, 7), help="perft depth for Cython")
    parser.add_argument("--slow-depth", type=int, default=4, choices=range(1, 7),
                        help="perft depth for the pure twin and python-chess")
    parser.add_argument("--py-games", type=int, default=3000, help="games the pure twin replays")
    parser.add_argument("--chess-games", type=int, default=1000, help="games python-chess replays")
    parser.add_argument("--no-bulk", dest="bulk", action="store_false",
                        help="perft makes and unmakes every leaf instead of counting the last ply")
    parser.add_argument("--peer-games", type=int, default=3000, help="games fastchess and bulletchess replay")
    parser.add_argument("--py313", metavar="PYTHON", help="a Python 3.13 with bulletchess (default: bench-data/py313, "
                        "pyenv's 3.13, python3.13)")
    parser.add_argument("--bulletchess-worker", metavar="GAMES", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    if args.bulletchess_worker:
        return bulletchess_worker(args.bulletchess_worker, args.slow_depth, args.bulk)
    try:
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
