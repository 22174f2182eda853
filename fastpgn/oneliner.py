"""The 22-field line of python-lichess-db-pgn-parser: its fields, and its reading back into records.

A face above ``scan/`` and ``io/``: the fields (``Line``) and the reading
(``parse_line``, ``iter_lines``, which opens a chunk file). The rules the line
is written by, the separator and the codes of fields 4 and 5
(``RESULT_CODES``, ``TERMINATION_CODES``), are lichess's and live in
``fastpgn.lichess``; the writers are the scanner kernel's line sinks, which
take those tables (the pure twin, ``fastpgn.scan.lines``) or mirror them in C
(the compiled one, ``scan/lines.pxi``), held to them and to the original
program's golden cases by the tests.

One game per line, fields separated by ``│`` (U+2502), ``\\n`` at the end:

 1 id, 2 date ``YYYYMMDD``, 3 second of the day, 4 result ``W|B|D|*``,
 5 termination ``N|T|A|U|R|*``, 6 mate ``Y|N``, 7 hasEval, 8 hasClock,
 9 plies, 10 opening code, 11 time control, 12-15 white name/elo/elo
 diff/title, 16-19 black name/elo/elo diff/title, 20 SAN moves, 21 evals
 (raw; ``#`` appended after a mating move when the game has evals),
 22 clocks in seconds; 20-22 are space-separated.

``parse_line`` and ``format_line`` round-trip: ``format_line(parse_line(s)) == s``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from fastpgn.errors import FormatError
from fastpgn.io.sources import open_source
from fastpgn.lichess import SEP


class Line(NamedTuple):
    """One game of the 22-field format; every field is the text as written."""

    id: str
    date: str
    time: str
    result: str
    termination: str
    mate: str
    has_eval: str
    has_clock: str
    plies: str
    opening: str
    time_control: str
    white: str
    white_elo: str
    white_elo_diff: str
    white_title: str
    black: str
    black_elo: str
    black_elo_diff: str
    black_title: str
    moves: str
    evals: str
    clocks: str

    @property
    def move_list(self) -> list[str]:
        return self.moves.split(" ") if self.moves else []

    @property
    def eval_list(self) -> list[str]:
        return self.evals.split(" ") if self.evals else []

    @property
    def clock_list(self) -> list[int | float]:
        return [float(c) if "." in c else int(c) for c in self.clocks.split(" ")] if self.clocks else []


def parse_line(text: str, line: int | None = None) -> Line:
    """Read one 22-field line (with or without its ``\\n``).

    >>> rec = parse_line("abc│20240101│0│W│N│N│N│N│1│?│60+0│a│1500│+5││b│1490│-5││e4││")
    >>> rec.id, rec.move_list, rec.result
    ('abc', ['e4'], 'W')
    """
    if text.endswith("\n"):
        text = text[:-1]
    fields = text.split(SEP)
    if len(fields) != 22:
        raise FormatError(f"expected 22 fields separated by U+2502, found {len(fields)}", line=line)
    return Line(*fields)


def format_line(record: Line) -> str:
    """The line for ``record``, without the ``\\n``."""
    return SEP.join(record)


def iter_lines(source) -> Iterator[Line]:
    """Read a chunk file (``.cri.gz``, ``.cri.zst`` or plain) back into records, in order."""
    src = open_source(source)
    try:
        pending = b""
        number = 0
        for chunk in src.chunks():
            pending += chunk
            parts = pending.split(b"\n")
            pending = parts.pop()
            for raw in parts:
                number += 1
                yield parse_line(raw.decode("utf-8"), number)
        if pending:
            number += 1
            yield parse_line(pending.decode("utf-8"), number)
    finally:
        src.close()
