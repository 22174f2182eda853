"""A scripted fake UCI engine for the fault tests: ``python fake_engine.py --mode MODE``.

It speaks just enough UCI to be driven (``uci``, ``isready``, ``setoption``,
``ucinewgame``, ``position``, ``go``, ``stop``, ``quit``) and answers ``go``
with a score and the first legal move found by fastpgn's board. The mode
picks the fault:

    ok            behaves
    garbage       mixes junk lines (undecodable bytes, broken info lines, unknown words) into its answers
    die           on go (after --after good searches): writes an info line and a last word, exits with code 3
    hang          on go: one info line, then ignores everything, stop and quit included
    hang-child    as hang, and a child process holds its output open (only a process-group kill ends both)
    slow          on go: searches until stop, then answers
    illegal       answers go with bestmove e2e5, legal nowhere after move one
    no-score      answers go with info lines without a score, then its move
    mate-zero     answers go with score mate 0 (checkmated now) in whatever position, then its move
    none          answers go with bestmove (none), whatever the position
    null          answers go with bestmove 0000, whatever the position
    no-uciok      never answers uci
    exit          exits at once with code 1 and an error line

``--log FILE`` appends ``pid N`` and then every command received, one per line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

OPTIONS = [
    "option name Threads type spin default 1 min 1 max 8",
    "option name Hash type spin default 16 min 1 max 1024",
    "option name Clear Hash type button",
    "option name Ponder type check default false",
    "option name UCI_Chess960 type check default false",
    "option name Style type combo default Normal var Solid var Normal var Risky",
    "option name Book File type string default my book.bin",
]


def say(text) -> None:
    out = sys.stdout.buffer
    out.write(text if isinstance(text, bytes) else text.encode() + b"\n")
    out.flush()


def best_move(position: str) -> str:
    from fastpgn.board import Board

    words = position.split()
    moves = words[words.index("moves") + 1:] if "moves" in words else []
    if len(words) > 1 and words[1] == "fen":
        end = words.index("moves") if "moves" in words else len(words)
        board = Board(" ".join(words[2:end]))
    else:
        board = Board()
    for move in moves:
        board.push_uci(move)
    legal = board.legal_moves()
    return board.uci(legal[0]) if legal else "(none)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--after", type=int, default=0, help="good searches before the fault")
    parser.add_argument("--log")
    args = parser.parse_args()
    mode = args.mode
    if mode == "exit":
        say("error: cannot open the network file nn-missing.nnue")
        return 1
    log = open(args.log, "a") if args.log else None
    if log:
        log.write(f"pid {os.getpid()}\n")
        log.flush()
    position = "position startpos"
    searches = 0
    for raw in sys.stdin:
        line = raw.strip()
        if log:
            log.write(line + "\n")
            log.flush()
        word = line.split(" ", 1)[0]
        if word == "uci":
            if mode == "no-uciok":
                continue
            if mode == "garbage":
                say(b"\xff\xfe garbage \x00 bytes\n")
                say("option name")
                say("option type spin")
            say("id name Fake Engine 1.0")
            say("id author the fastpgn tests")
            for option in OPTIONS:
                say(option)
            say("uciok")
        elif word == "isready":
            if mode == "garbage":
                say("readyokay? no")
            say("readyok")
        elif word == "position":
            position = line
        elif word == "go":
            faulty = searches >= args.after
            searches += 1
            if mode == "die" and faulty:
                say("info depth 1 score cp 10 pv e2e4")
                say("fatal: simulated crash in search")
                sys.stdout.flush()
                os._exit(3)
            if mode in ("hang", "hang-child") and faulty:
                say("info depth 1 score cp 10")
                if mode == "hang-child":
                    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                while True:
                    time.sleep(60)
            if mode == "slow" and faulty:
                say("info depth 1 score cp 10")
                for raw in sys.stdin:
                    if raw.strip() == "stop":
                        break
            best = best_move(position)
            if mode == "garbage":
                say("info depth x score cp y pv e2e4")
                say("info score mate")
                say("info depth 2 score cp 7 lowerbound nodes ??? pv zz99 e2e4")
                say("hello world")
                say(b"\x80\x81\x82\n")
                say("info string all fine here")
            if mode == "no-score" and faulty:
                say(f"info depth 1 seldepth 1 nodes 100 nps 1000 time 1 pv {best}")
                say("info string no evaluation here")
            elif mode == "mate-zero" and faulty:
                say(f"info depth 1 seldepth 1 score mate 0 nodes 100 pv {best}")
            else:
                say(f"info depth 1 seldepth 1 multipv 1 score cp 12 nodes 100 nps 1000 time 1 pv {best}"
                    if best != "(none)" else "info depth 0 score mate 0")
            if mode == "illegal" and faulty:
                best = "e2e5"
            if mode in ("none", "null") and faulty:
                best = "(none)" if mode == "none" else "0000"
            say(f"bestmove {best}")
        elif word == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
