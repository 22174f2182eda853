"""Make data/sample.pgn.zst: synthetic games in the layout of a lichess dump.

The games are made here, not copied: each one plays a line of the lichess
chess-openings list (public domain; the same list the openings map is built
from, so field 10 resolves), with made-up players, ratings, evals, clocks
and annotations in lichess's style, and a few of the odd cases real dumps
hold (no moves, abandoned, time forfeit, unterminated, titled players).
Deterministic for a given seed.

    python tools/make_sample.py ../shared/data/openings -o data/sample.pgn.zst
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import zstandard

NAMES = ["Aurora", "Basil", "Cosmo", "Dara", "Elio", "Fenna", "Gus", "Hana", "Ivo", "Juno", "Kai", "Lumi",
         "Milo", "Nia", "Otto", "Pia", "Quin", "Rhea", "Sami", "Tove", "Uma", "Vito", "Wren", "Xeno"]
SPEEDS = [("Bullet", "60+0", 60, 0), ("Blitz", "180+2", 180, 2), ("Blitz", "300+0", 300, 0),
          ("Rapid", "600+5", 600, 5), ("Classical", "1800+20", 1800, 20)]
TITLES = ["", "", "", "", "", "", "FM", "IM", "GM", "BOT"]


def movetext_moves(pgn: str) -> list[str]:
    return [t for t in pgn.split() if not t[0].isdigit()]


def game(rng: random.Random, number: int, eco: str, name: str, moves: list[str]) -> str:
    speed, tc, base, inc = rng.choice(SPEEDS)
    white, black = rng.sample(NAMES, 2)
    white += str(rng.randint(1, 999))
    black += str(rng.randint(1, 999))
    welo, belo = rng.randint(800, 2900), rng.randint(800, 2900)
    result = rng.choice(["1-0", "0-1", "1/2-1/2", "1-0", "0-1"])
    termination = rng.choice(["Normal", "Normal", "Normal", "Time forfeit"])
    if number % 97 == 0:
        moves, termination, result = [], "Abandoned", rng.choice(["1-0", "0-1"])
    if number % 211 == 0:
        result, termination = "*", "Unterminated"
    diff = rng.randint(1, 12)
    wdiff, bdiff = (f"+{diff}", f"-{diff}") if result == "1-0" else (f"-{diff}", f"+{diff}")
    day = 1 + number % 28
    secs = rng.randint(0, 86399)
    game_id = "".join(rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(8))
    tags = [("Event", f"Rated {speed} game"), ("Site", f"https://lichess.org/{game_id}"),
            ("Date", f"2024.01.{day:02d}"), ("Round", "-"), ("White", white), ("Black", black),
            ("Result", result), ("UTCDate", f"2024.01.{day:02d}"),
            ("UTCTime", f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"),
            ("WhiteElo", str(welo)), ("BlackElo", str(belo)), ("WhiteRatingDiff", wdiff),
            ("BlackRatingDiff", bdiff)]
    wtitle, btitle = rng.choice(TITLES), rng.choice(TITLES)
    if wtitle:
        tags.append(("WhiteTitle", wtitle))
    if btitle:
        tags.append(("BlackTitle", btitle))
    tags += [("Variant", "Standard"), ("TimeControl", tc), ("ECO", eco), ("Opening", name),
             ("Termination", termination)]
    with_evals = rng.random() < 0.15
    clocks = [base, base]
    ev = rng.uniform(-0.3, 0.5)
    parts = []
    for ply, san in enumerate(moves):
        side = ply % 2
        spent = rng.randint(0, max(1, base // 40))      # (drawn on every ply: the games' other values stay put)
        if ply >= 2:    # each side's first move shows the base, as lichess's dumps: its clock is not running yet
            clocks[side] = max(0, clocks[side] - spent + inc)
        ev += rng.gauss(0, 0.4)
        mark = ""
        if with_evals and rng.random() < 0.08:
            mark = rng.choice(["?!", "?", "??"])
        number_text = f"{ply // 2 + 1}. " if side == 0 else f"{ply // 2 + 1}... "
        comment = []
        if with_evals:
            comment.append(f"[%eval {ev:.2f}]" if rng.random() > 0.02 else f"[%eval #{rng.choice([-3, 2, 5])}]")
        comment.append(f"[%clk {clocks[side] // 3600}:{clocks[side] // 60 % 60:02d}:{clocks[side] % 60:02d}]")
        parts.append(f"{number_text}{san}{mark} {{ {' '.join(comment)} }}")
    body = " ".join(parts + [result])
    head = "\n".join(f'[{k} "{v}"]' for k, v in tags)
    return f"{head}\n\n{body}\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("openings", help="folder with the lichess chess-openings a.tsv ... e.tsv")
    parser.add_argument("-o", "--output", default="data/sample.pgn.zst")
    parser.add_argument("-n", "--games", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rows = []
    for path in sorted(Path(args.openings).glob("*.tsv")):
        for line in path.read_text("utf-8").splitlines()[1:]:
            eco, name, pgn = line.split("\t")
            rows.append((eco, name, movetext_moves(pgn)))
    rng = random.Random(args.seed)
    text = "".join(game(rng, i + 1, *rng.choice(rows)) for i in range(args.games))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_bytes(zstandard.ZstdCompressor(level=19).compress(text.encode()))
    print(f"{args.output}: {args.games} games, {len(text):,} bytes of PGN")


if __name__ == "__main__":
    main()
