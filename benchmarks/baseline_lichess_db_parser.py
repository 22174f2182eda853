"""A plain str-split PGN -> 22-field line converter in the style of python-lichess-db-pgn-parser, as a baseline.

Our own code, written here to stand for the hand-written scripts users run
on the lichess dumps: read the file line by line, ``str.split`` and
``str.partition`` only, no regular expressions, no compiled code. It knows
the lichess dump layout (tags, a blank line, movetext, a blank line) and
makes no effort beyond it; it is a speed baseline, not a reference. The
opening code (field 10) comes from fastpgn's shipped map file.

    python -m benchmarks.baseline_lichess_db_parser INPUT.pgn[.bz2|.zst] [-o OUT]

It prints one ``RESULT {json}`` line with its counts on stderr.
"""

from __future__ import annotations

import argparse
import bz2
import io
import json
import sys
from pathlib import Path

SEP = "\u2502"
MAP = Path(__file__).resolve().parent.parent / "fastpgn" / "data" / "openings.tsv"
RESULT = {"1-0": "W", "0-1": "B", "1/2-1/2": "D"}
TERMINATION = {"Normal": "N", "Time forfeit": "T", "Abandoned": "A", "Unterminated": "U",
               "Rules infraction": "R"}
RESULT_TOKENS = ("1-0", "0-1", "1/2-1/2", "*")


def load_openings(path: Path = MAP) -> dict:
    table = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            code, eco, name = line.rstrip("\n").split(SEP, 2)
            table[eco + SEP + name] = code
    return table


def open_text(path: str):
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8")
    if path.endswith(".zst"):
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)
        return io.TextIOWrapper(raw, encoding="utf-8")
    return open(path, encoding="utf-8")


def seconds(clock: str) -> str:
    h, m, s = clock.split(":")
    return str(int(h) * 3600 + int(m) * 60 + int(float(s)))


def game_line(tags: dict, movetext: str, openings: dict, counts: list) -> str:
    moves = []
    evals = []
    clocks = []
    in_comment = False
    want = None
    for tok in movetext.split():
        if in_comment:
            if want is not None:
                value = tok[:-1] if tok.endswith("]") else tok
                (evals if want == "eval" else clocks).append(value if want == "eval" else seconds(value))
                want = None
            elif tok == "[%eval":
                want = "eval"
            elif tok == "[%clk":
                want = "clk"
            if tok.endswith("}"):
                in_comment = False
            continue
        if tok.startswith("{"):
            in_comment = not tok.endswith("}")
            continue
        if tok[-1] == "." or tok[0] == "$" or tok in RESULT_TOKENS:
            continue
        moves.append(tok)
    mate = "Y" if moves and "#" in moves[-1] else "N"
    counts[0] += len(moves)
    counts[1] += len(evals)
    counts[2] += len(clocks)
    if evals and mate == "Y":
        evals.append("#")
    time_of_day = tags.get("UTCTime", "")
    if time_of_day:
        h, m, s = time_of_day.split(":")
        time_of_day = str(int(h) * 3600 + int(m) * 60 + int(s))
    return SEP.join((
        tags.get("Site", "").rpartition("/")[2],
        tags.get("UTCDate", "").replace(".", ""),
        time_of_day,
        RESULT.get(tags.get("Result", "*"), "*"),
        TERMINATION.get(tags.get("Termination", ""), "*"),
        mate,
        "Y" if evals else "N",
        "Y" if clocks else "N",
        str(len(moves)),
        openings.get(tags.get("ECO", "") + SEP + tags.get("Opening", ""), "?"),
        tags.get("TimeControl", ""),
        tags.get("White", "").replace(SEP, ""),
        tags.get("WhiteElo", ""),
        tags.get("WhiteRatingDiff", ""),
        tags.get("WhiteTitle", ""),
        tags.get("Black", "").replace(SEP, ""),
        tags.get("BlackElo", ""),
        tags.get("BlackRatingDiff", ""),
        tags.get("BlackTitle", ""),
        " ".join(moves),
        " ".join(evals),
        " ".join(clocks),
    )) + "\n"


def convert(lines, out, openings: dict) -> dict:
    games = 0
    counts = [0, 0, 0]
    tags: dict = {}
    movetext: list = []
    for line in lines:
        if line.startswith("["):
            if movetext:
                out.write(game_line(tags, " ".join(movetext), openings, counts))
                games += 1
                tags = {}
                movetext = []
            name, _, value = line.rstrip()[1:-1].partition(" ")
            tags[name] = value[1:-1]
        elif line.strip():
            movetext.append(line.strip())
    if tags or movetext:
        out.write(game_line(tags, " ".join(movetext), openings, counts))
        games += 1
    return {"games": games, "plies": counts[0], "evals": counts[1], "clocks": counts[2]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.baseline_lichess_db_parser",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("input", help=".pgn, .pgn.bz2 or .pgn.zst (by name, as python-lichess-db-pgn-parser does)")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = p.parse_args(argv)
    openings = load_openings()
    with open_text(args.input) as lines:
        if args.output == "-":
            counts = convert(lines, sys.stdout, openings)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                counts = convert(lines, out, openings)
    print("RESULT " + json.dumps(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
