"""``python -m fastpgn crypt``: PGN Crypt's command line (``encode`` and ``decode``).

The notation itself, both ways, is :mod:`fastpgn.notations.crypt`'s; this
module owns the options, reading INPUT in blocks of whole lines, the summary
and the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from fastpgn.cli._common import EXIT_RULE, Run, add_encoding_argument, add_error_options, guarded, parse_args
from fastpgn.errors import InputError
from fastpgn.io.sources import line_blocks
from fastpgn.notations.crypt import decode_games, encode_games


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fastpgn crypt",
                                description="PGN Crypt: movetext to 'e4,e5.Nf3,Nc6' and back.",
                                epilog=EXIT_RULE, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="encode|decode")
    enc = sub.add_parser("encode", help="PGN (any file fastpgn reads) to crypt lines, one per game",
                         description="PGN (any file fastpgn reads: plain, .gz, .bz2, .zst) to crypt lines, "
                                     "one per game.",
                         epilog=EXIT_RULE, formatter_class=argparse.RawDescriptionHelpFormatter)
    enc.add_argument("--headers", action="store_true", help="keep the tags, in a form decode restores")
    dec = sub.add_parser("decode", help="crypt lines to PGN", description="Crypt lines (one game a line) to PGN.",
                         epilog=EXIT_RULE, formatter_class=argparse.RawDescriptionHelpFormatter)
    for q in (enc, dec):
        q.add_argument("input", metavar="INPUT", help="input file; '-' for stdin")
        q.add_argument("-o", "--output", metavar="OUT",
                       help="output file, its folder made if missing (default: stdout)")
        add_error_options(q)
        add_encoding_argument(q)
        q.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    return p


_BLOCK = 1 << 20  # bytes of whole lines read at a time


def _text_lines(data) -> Iterator[str]:
    """The lines of a binary file as text (without their line break): UTF-8, a BOM skipped,
    CRLF or LF. Decoded a block at a time; bytes that are not UTF-8 are an InputError naming
    their line, raised after the lines before it."""
    number = 1
    for block in line_blocks(data, _BLOCK):
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            for k, raw in enumerate(block.split(b"\n"), number):
                try:
                    yield raw.decode("utf-8-sig" if k == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError("not UTF-8 text", line=k, column=exc.start + 1) from None
            raise AssertionError("unreachable") from undecodable  # pragma: no cover
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        lines = text.split("\n")
        yield from lines
        number += len(lines)


def _encode(args, run: Run) -> None:
    with run.open_pgn() as stream:
        lines: list[str] = []
        try:
            games = run.pgn_games(stream, ends_whole=True)   # (PGN Crypt's files end with a move, no result)
            for line in encode_games(None, headers=args.headers, on_error=run.bad, reader=games):
                lines.append(line)
                run.written += 1
                if len(lines) == 512:
                    run.out.write("\n".join(lines) + "\n")
                    lines.clear()
        finally:
            if lines:
                run.out.write("\n".join(lines) + "\n")


def _decode(args, run: Run) -> None:
    with run.open_binary() as raw:
        texts: list[str] = []
        try:
            for pgn in decode_games(_text_lines(raw), on_error=run.bad):
                texts.append(pgn)
                run.written += 1
                if len(texts) == 512:
                    run.out.write(("\n\n" if run.written > 512 else "") + "\n\n".join(texts))
                    texts.clear()
        finally:
            if texts:
                run.out.write(("\n\n" if run.written > len(texts) else "") + "\n\n".join(texts) + "\n")
            elif run.written:
                run.out.write("\n")


def main(argv: list[str] | None = None) -> int:
    """The ``crypt`` command: ``main(["encode", "games.pgn", "-o", "games.crypt"])`` returns the exit status.

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
    if args.command == "encode":
        run = Run("crypt encode", args, nothing="empty or not PGN", output=args.output)
        work = _encode
    else:
        run = Run("crypt decode", args, nothing="the input is empty", output=args.output)
        work = _decode

    def checked() -> None:
        if args.output:
            run.refuse_to_overwrite(args.output)
        work(args, run)

    return guarded(lambda: run.execute(checked))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
