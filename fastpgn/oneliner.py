"""The 22-field line of python-lichess-db-pgn-parser: its definition, and its reading back into records.

This module owns the format both ways: the fields (``Line``), the codes of
fields 4 and 5 (``RESULT_CODES``, ``TERMINATION_CODES``) and the reading;
the writers are the scanner kernel's line sinks, which take these tables
(the pure twin, ``fastpgn.scan.lines``) or mirror them in C (the compiled one,
``scan/lines.pxi``), held to the original program's golden cases by the tests.

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

from typing import Iterator, NamedTuple

from fastpgn.errors import FormatError
from fastpgn.io.sources import open_source

SEP = "\u2502"

#: Field 4: the Result tag (else the movetext's result) as one letter; anything else is ``*``.
RESULT_CODES = {"1-0": "W", "0-1": "B", "1/2-1/2": "D"}
#: Field 5: the Termination tag as one letter; anything else (or none) is ``*``.
TERMINATION_CODES = {"Normal": "N", "Time forfeit": "T", "Abandoned": "A", "Unterminated": "U",
                     "Rules infraction": "R"}


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
