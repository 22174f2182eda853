"""``python -m fastpgn icn``: standard games between PGN and ICN, on the command line.

The bridge itself is :mod:`fastpgn.notations.icn_pgn`'s; this module owns the
options, reading INPUT as lines of text, the summary and the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from fastpgn.cli._common import EXIT_RULE, Run, add_encoding_argument, add_error_options, guarded, parse_args
from fastpgn.errors import InputError
from fastpgn.notations.icn_pgn import icn_to_pgn, pgn_to_icn


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fastpgn icn",
        description="Standard chess games between PGN and Infinite Chess Notation (the notation of\n"
                    "the infinite chess project; its converter is FormatConverter.js).\n\n"
                    "PGN to ICN writes one game per line: the ICN short form, or with --json the\n"
                    "long form as one JSON object per line (JSON Lines), so output streams.\n"
                    "--to-pgn reads the same one-game-a-line files back to PGN; a game that\n"
                    "leaves the 8x8 board, has fairy pieces or another win condition has no PGN\n"
                    "and is reported with its game and line number, then skipped.",
        epilog="examples:\n"
               "  python -m fastpgn icn games.pgn.zst -o games.icn\n"
               "  python -m fastpgn icn games.pgn --json -o out/games.jsonl\n"
               "  python -m fastpgn icn --to-pgn games.icn -o back.pgn\n"
               "  python -m fastpgn icn --to-pgn --whole pasted.icn\n"
               "  zstdcat games.pgn.zst | python -m fastpgn icn - | head\n\n" + EXIT_RULE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT",
                   help="PGN (any file fastpgn reads: plain, .gz, .bz2, .zst) or, with --to-pgn, "
                        "ICN lines (same compressions); '-' for stdin")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="output file, its folder made if missing (default: stdout)")
    p.add_argument("--json", action="store_true",
                   help="the long form: one JSON object per line (written, or read with --to-pgn)")
    p.add_argument("--to-pgn", action="store_true", help="ICN (one game a line) to PGN")
    p.add_argument("--whole", action="store_true",
                   help="with --to-pgn: the input is one game in any layout, e.g. upstream's "
                        "several lines with blank lines between the sections (as copied from "
                        "infinitechess.org); lines and columns in errors are the input's")
    p.add_argument("--lenient", action="store_true",
                   help="with --to-pgn: read ICN as the upstream converter does, dropping what it "
                        "cannot read instead of reporting it")
    add_error_options(p)
    add_encoding_argument(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    return p


def _text_lines(source) -> Iterator[str]:
    """The lines of an open ``source`` (any compression) as text, without line ends."""
    rest = b""
    number = 0
    for chunk in source.chunks():
        data = rest + chunk
        lines = data.split(b"\n")
        rest = lines.pop()
        for raw in lines:
            number += 1
            yield _decode(raw, number)
    if rest:
        yield _decode(rest, number + 1)


def _decode(raw: bytes, number: int) -> str:
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("not UTF-8 text", line=number, column=exc.start + 1) from None
    return text[:-1] if text.endswith("\r") else text


def _to_pgn(args, run: Run) -> None:
    if args.output:
        run.refuse_to_overwrite(args.output)
    source = run.open_source()
    try:
        lines: Iterable[str] = _text_lines(source)
        if args.whole:
            lines = ["\n".join(lines)]
        form = "long" if args.json else "short"
        for pgn in icn_to_pgn(lines, form=form, lenient=args.lenient, on_error=run.bad):
            run.out.write(pgn + "\n")
            run.written += 1
    finally:
        source.close()


def _to_icn(args, run: Run) -> None:
    if args.output:
        run.refuse_to_overwrite(args.output)
    form = "long" if args.json else "short"
    with run.open_pgn(_icn_instead) as stream:
        for line in pgn_to_icn(run.pgn_games(stream), form=form, on_error=run.bad):
            run.out.write(line + "\n")
            run.written += 1


def _icn_instead(head: bytes) -> str | None:
    """Why PGN input that starts as ``head`` is refused when its first line is an ICN game (this command's
    own output, whose tags look like PGN's); None for PGN."""
    line = next((raw for raw in head.split(b"\n", 64)[:-1] if raw.strip()), b"").decode("utf-8", "replace")
    for form in ("short", "long"):
        failed: list = []
        if line and list(icn_to_pgn([line], form=form, on_error=failed.append)):
            return (f"its first line is an ICN game, not PGN: add --to-pgn{' --json' if form == 'long' else ''} "
                    "to turn ICN back into PGN")
    return None


def main(argv: list[str] | None = None) -> int:
    """The ``icn`` command: ``main(["games.pgn", "-o", "games.icn"])`` returns the exit status.

    0: the run finished, bad games skipped (each reported on stderr and
    counted in the summary line); 1: the input is damaged, or ``--errors
    raise`` stopped at the first bad game; 2: usage error, input missing,
    unreadable, empty, not PGN or not UTF-8 text, output that cannot be
    written; 130: interrupted (a closed stdout exits 0). The ``--help``
    text says the same.
    """
    args = parse_args(_parser(), argv)
    if isinstance(args, int):
        return args
    for flag, given in (("--lenient", args.lenient), ("--whole", args.whole)):
        if given and not args.to_pgn:
            print(f"python -m fastpgn icn: {flag} reads ICN, so it needs --to-pgn", file=sys.stderr)
            return 2
    if args.to_pgn:
        run = Run("icn --to-pgn", args, nothing="the input is empty", output=args.output)
        return guarded(lambda: run.execute(lambda: _to_pgn(args, run)))
    run = Run("icn", args, nothing="empty or not PGN", output=args.output)
    return guarded(lambda: run.execute(lambda: _to_icn(args, run)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
