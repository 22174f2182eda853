"""``python -m fastpgn lichess-text``: compact lichess game strings to PGN and statistics, and back.

The notation (its reader, writer and statistics) is
:mod:`fastpgn.notations.lichess_text`'s; this module owns the options, the
output files, reading INPUT in blocks of whole lines, the summary and the
exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from fastpgn.cli._common import (
    EXIT_RULE,
    Output,
    Run,
    Unusable,
    add_encoding_argument,
    add_error_options,
    guarded,
    parse_args,
    plural,
)
from fastpgn.errors import FormatError, InputError
from fastpgn.io.sources import line_blocks
from fastpgn.notations._lichess_text_read import _block_movetext, _read
from fastpgn.notations._lichess_text_stats import Stats
from fastpgn.notations._lichess_text_write import (
    DEFAULT_ME,
    DEFAULT_OPPONENT,
    _pgn_text,
    _player_tags,
    game_to_compact,
    my_colour,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fastpgn lichess-text",
        description="Convert compact lichess game strings (the notation of pgn-transform) to PGN plus "
                    "statistics, or PGN back to compact strings (--reverse).",
        epilog=EXIT_RULE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="compact strings (PGN with --reverse); '-' for stdin")
    p.add_argument("-o", "--output-dir", metavar="DIR",
                   help="where to write STEM.pgn and STEM.csv (default: beside INPUT); with --reverse, "
                        "write DIR/STEM.txt instead of stdout; DIR is made if missing")
    p.add_argument("--me", default=DEFAULT_ME, metavar="NAME", help=f"my name (default {DEFAULT_ME})")
    p.add_argument("--opponent", default=DEFAULT_OPPONENT, metavar="NAME",
                   help=f"the opponent's name (default {DEFAULT_OPPONENT})")
    p.add_argument("--reverse", action="store_true", help="PGN (any file fastpgn reads) to compact strings")
    add_error_options(p)
    add_encoding_argument(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    return p


def _stem(path: str) -> str:
    if path == "-":
        return "games"
    name = Path(path).name
    for ext in (".zst", ".bz2", ".gz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return Path(name).stem


_BLOCK = 1 << 20  # bytes of whole lines read at a time


def _file_batches(data) -> Iterator[tuple[int, list[str], list[str] | None]]:
    """Batches for :func:`_read` from a binary file: UTF-8, a BOM at the very start skipped,
    CRLF or LF; bytes that are not UTF-8 are an InputError naming their line, raised after
    the lines before it."""
    number = 1
    for block in line_blocks(data, _BLOCK):
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            lines = []
            for k, raw in enumerate(block.split(b"\n"), number):
                try:
                    lines.append(raw.decode("utf-8-sig" if k == 1 else "utf-8"))
                except UnicodeDecodeError as exc:
                    if lines:
                        yield number, lines, None
                    raise InputError("not UTF-8 text", line=k, column=exc.start + 1) from None
            raise AssertionError("unreachable") from undecodable  # pragma: no cover
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        lines = text.split("\n")
        yield number, lines, _block_movetext(block)
        number += len(lines)


def _forward(args, run: Run) -> None:
    source = args.input
    out_dir = Path(args.output_dir) if args.output_dir else (Path(source).parent if source != "-" else Path("."))
    stem = _stem(source)
    pgn_path, csv_path = str(out_dir / f"{stem}.pgn"), str(out_dir / f"{stem}.csv")
    run.refuse_to_overwrite(pgn_path, csv_path)
    stats = Stats()
    players = _player_tags(args.me, args.opponent)
    with run.open_binary() as data:
        run.out = pgn = Output(pgn_path)  # DIR is made with the first game
        texts: list[str] = []
        # (date, colour, result) of each game, counted in C a few hundred games at a time.
        outcomes: list[tuple[str, str, str]] = []
        tally: Counter = Counter()
        try:
            for (date, colour, result, comment, moves, number, _), movetext in _read(
                    _file_batches(data), run.bad, run.warn):
                texts.append(_pgn_text(date, colour, result, comment, moves, number, movetext, players))
                outcomes.append((date, colour, result))
                if len(texts) == 256:
                    pgn.write("".join(texts))
                    texts.clear()
                    tally.update(outcomes)
                    outcomes.clear()
        finally:
            if texts:
                pgn.write("".join(texts))
            tally.update(outcomes)
            run.written = tally.total()
    if run.written + run.rejected == 0:
        return  # no games: no statistics either (the run says so)
    for (date, colour, result), games in tally.items():
        stats._add(date, colour, result, games)
    csv = Output(csv_path)
    csv.write(stats.csv())
    csv.close(create=True)
    table = Output(None)
    table.write(stats.table())
    table.close(create=False)
    run.note = f"wrote {pgn_path} and {csv_path}"


def _reverse(args, run: Run) -> None:
    if args.output_dir:
        out_path = str(Path(args.output_dir) / f"{_stem(args.input)}.txt")
        run.refuse_to_overwrite(out_path)
        run.out = Output(out_path)
    texts: list[str] = []  # written a few hundred games at a time, and before any return
    # Games --me plays in neither colour (or both): one line for them all at the end, not one a game (a
    # --me that is not the user's lichess name would give one for every game). --errors raise stops at one.
    others, first = 0, ""
    with run.open_pgn() as stream:
        try:
            for game in run.pgn_games(stream):
                if run.errors == "skip" and my_colour(game.headers, args.me) is None:
                    others += 1
                    run.rejected += 1
                    if others == 1:
                        first = (f"game {game.number}, PGN byte {game.offset}: White {game.headers.get('White')!r}, "
                                 f"Black {game.headers.get('Black')!r}")
                    continue
                try:
                    texts.append(game_to_compact(game, me=args.me))
                except FormatError as exc:
                    run.bad(exc.at(offset=game.offset))
                    continue
                run.written += 1
                if len(texts) == 256:
                    run.out.write(("\n" if run.written > 256 else "") + "\n\n".join(texts) + "\n")
                    texts.clear()
        finally:
            if texts:
                run.out.write(("\n" if run.written > len(texts) else "") + "\n\n".join(texts) + "\n")
    if others:
        said = (f"{plural(others, 'game')} where the player {args.me!r} (--me) is not exactly one of White and "
                f"Black, skipped (the first: {first})")
        if run.written == 0:
            raise Unusable(f"{run.name}: {said}; no game to write: give --me your name as the games spell it")
        run.warn(said)


def main(argv: list[str] | None = None) -> int:
    """The ``lichess-text`` command: ``main(["games.txt", "-o", "out"])`` returns the exit status.

    0: the run finished, bad games skipped (each reported on stderr with its
    line and column, or byte offset and game number for PGN, and counted in
    the summary line); 1: the input is damaged, or ``--errors raise``
    stopped at the first bad game; 2: usage error, input missing, unreadable,
    empty, not PGN or not UTF-8 text, output that cannot be written; 130:
    interrupted (a closed stdout exits 0). The ``--help`` text says the same.
    """
    args = parse_args(_parser(), argv)
    if isinstance(args, int):
        return args
    if args.reverse:
        run = Run("lichess-text --reverse", args, nothing="empty or not PGN")
        return guarded(lambda: run.execute(lambda: _reverse(args, run)))
    run = Run("lichess-text", args, nothing="empty, or no details line such as 21.04.07W1-0")
    return guarded(lambda: run.execute(lambda: _forward(args, run)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
