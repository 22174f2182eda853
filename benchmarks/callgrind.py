"""Instructions a reader or kernel call spends on the first MB of a corpus, counted by callgrind.

Instruction counts do not move with the load of a shared machine, so they
decide what a change costs or saves (docs/performance.md); wall-clock figures
for reporting come from ``compare.py`` and ``ab.py``. The corpus is read and
cut into the converter's 4 MiB game-aligned blocks before counting starts;
only the run itself is counted (callgrind's collection is switched on for
the one ``itertools.starmap`` call that wraps it).

    python -m benchmarks.callgrind lines-validate bench-data/lichess-100MB-seed0.pgn --mb 20
    python -m benchmarks.callgrind read-lines CORPUS --tree ../other-checkout   # an older tree, same modes

Modes: lines, lines-validate, lines-uci, lines-filtered (``--min-elo 1900``),
games, headers, columns, columns-uci, csv (the kernel front ends over the blocks);
read-lines, read-headers, read-games (the readers over the same bytes in memory).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("lines", "lines-validate", "lines-uci", "lines-filtered", "games", "headers", "columns", "columns-uci",
         "csv", "read-lines", "read-headers", "read-games")


def _run(mode: str, corpus: str, mb: float) -> None:
    """The measured process: prepare untimed, then one starmap call around the run."""
    from fastpgn import filters, openings, scan as _scan
    from fastpgn.board import moves_hook
    from fastpgn.io.sources import BLOCK_SIZE, cut_blocks, open_source
    from fastpgn.reader import read_games, read_headers, read_lines

    with open(corpus, "rb") as f:
        data = f.read(int(mb * 1e6))
    data = data[:data.rfind(b"\n\n[Event ") + 2]
    shipped = openings.load()
    shipped[openings.SEP.encode().join((b"A00", b"fastpgn benchmark warm-up"))]   # its fuzzy index, built now
    table = _scan.kernel.opening_table(shipped)
    blocks = [bytes(b.data) for b in cut_blocks(open_source(data).readinto, BLOCK_SIZE)]
    kernel = _scan.kernel
    hook = {"lines-validate": moves_hook(), "lines-uci": moves_hook(uci=True)}.get(mode)
    where = filters.plan(filters.Where(min_elo=1900)) if mode == "lines-filtered" else None

    def run() -> int:
        n = 0
        for block in blocks if not mode.startswith("read-") else ():
            if mode.startswith("lines"):
                n += kernel.lines_from_block(block, 0, len(block), openings=table, moves_hook=hook,
                                             where=where).games_read
            elif mode == "games":
                n += kernel.games_from_block(block, 0, len(block)).games_read
            elif mode == "headers":
                n += kernel.headers_from_block(block, 0, len(block)).games_read
            elif mode == "csv":
                n += kernel.csv_from_block(block, 0, len(block), openings=table).games_read
            else:
                n += kernel.columns_from_block(block, 0, len(block), uci=mode == "columns-uci").games_read
        if mode == "read-lines":
            n = sum(1 for _ in read_lines(data, openings=shipped))
        elif mode == "read-headers":
            n = sum(1 for _ in read_headers(data))
        elif mode == "read-games":
            n = sum(1 for _ in read_games(data))
        return n

    print(f"{mode}: {list(itertools.starmap(run, [()]))[0]} games in {len(data):,} bytes", file=sys.stderr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.callgrind", description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=MODES)
    p.add_argument("corpus", type=Path)
    p.add_argument("--mb", type=float, default=20.0, help="MB of the corpus (whole games; default 20)")
    p.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose fastpgn runs (kernels built)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _run(args.mode, str(args.corpus), args.mb)
        return 0
    if shutil.which("valgrind") is None:
        print("callgrind: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        # this file run as a script (its folder, not a tree, first on the path) with -S (no site-packages:
        # an editable install of another checkout cannot win over --tree)
        env = dict(os.environ, PYTHONPATH=str(args.tree.resolve()), FASTPGN_IMPLEMENTATION="cython")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                        "--toggle-collect=starmap_next", sys.executable, "-S", str(Path(__file__).resolve()),
                        args.mode, str(args.corpus.resolve()), "--mb", str(args.mb), "--child"],
                       cwd=work, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        totals = subprocess.run(["callgrind_annotate", str(out)], capture_output=True, text=True).stdout
    match = re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", totals)
    print(f"{args.mode} ({args.tree.resolve().name}, {args.mb:g} MB): "
          f"{match.group(1) if match else '?'} instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
