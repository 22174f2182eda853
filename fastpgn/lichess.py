"""lichess's rules, one table each: speeds, result and termination codes, the separator, draw offers, known issues.

The floor that the scanner kernel, the schema, the filters and the faces all
read: it imports nothing of fastpgn, so any module may import it. The
compiled kernel keeps C copies of these tables (``scan/filters.pxi``'s
speed limits, ``scan/lines.pxi``'s codes); tests/test_lichess.py holds both
kernels to them.

>>> speed_of("180+2"), speed_of("15+0"), speed_of("-"), speed_of("?")
('blitz', 'ultraBullet', 'correspondence', None)
>>> RESULT_CODES["1-0"], TERMINATION_CODES["Time forfeit"]
('W', 'T')
"""

from __future__ import annotations

#: lichess's speed of a clock (scalachess ``Speed``): the estimated duration,
#: limit + 40 x increment in seconds, falls below the first of these bounds
#: (exclusive); 21600 seconds and more, and ``-`` (no clock), are correspondence.
SPEED_LIMITS = (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500), ("classical", 21600))
#: The speeds, fastest first (a speed filter's bit is 1 << its index here).
SPEEDS = tuple(name for name, _ in SPEED_LIMITS) + ("correspondence",)
#: The increment's weight in the estimated duration.
INCREMENT_MOVES = 40

#: The 22-field line's separator (and the openings map's): U+2502, written as is in UTF-8.
SEP = "\u2502"

#: Field 4 of the 22-field line: the Result tag (else the movetext's result) as one letter; anything else is ``*``.
RESULT_CODES = {"1-0": "W", "0-1": "B", "1/2-1/2": "D"}
#: Field 5: the Termination tag as one letter; anything else (or none) is ``*``.
TERMINATION_CODES = {"Normal": "N", "Time forfeit": "T", "Abandoned": "A", "Unterminated": "U",
                     "Rules infraction": "R"}


def _digits(value: str | bytes) -> int:
    """The number that 1 to 9 ASCII digits say, else -1 (the bound keeps the sum within a C long long)."""
    if 0 < len(value) <= 9 and value.isdigit() and value.isascii():
        return int(value)
    return -1


def speed_index(time_control: str | bytes) -> int:
    """The index in SPEEDS of lichess's speed for a TimeControl value (str or bytes); -1 if it names none.

    >>> speed_index("60+0"), speed_index(b"-"), speed_index("1+2+3")
    (1, 5, -1)
    """
    if time_control == "-" or time_control == b"-":
        return len(SPEEDS) - 1
    parts: list[str] | list[bytes] = (time_control.split("+") if isinstance(time_control, str)
                                      else time_control.split(b"+"))
    if len(parts) != 2:
        return -1
    base, increment = _digits(parts[0]), _digits(parts[1])
    if base < 0 or increment < 0:
        return -1
    seconds = base + INCREMENT_MOVES * increment
    for index, (_, limit) in enumerate(SPEED_LIMITS):
        if seconds < limit:
            return index
    return len(SPEEDS) - 1


def speed_of(time_control: str) -> str | None:
    """lichess's speed for a TimeControl value (``"180+2"`` is blitz, ``"-"`` correspondence); None if it names none.

    >>> speed_of("600+0"), speed_of("1500+0"), speed_of("?")
    ('rapid', 'classical', None)
    """
    index = speed_index(time_control)
    return SPEEDS[index] if index >= 0 else None


#: The comments lichess's database exporter writes after a move since July 2026 (lichess-org/database,
#: ``Annotator.addDrawOffers``), by the side that offered. Each is a comment block of its own, first after the
#: move and before the eval and clock block: ``12. Qd2 { White offers draw } { [%eval 0.21] [%clk 0:02:58] }``.
#: lichess lets a player offer on either turn and moves an offer made on the opponent's turn to the offerer's
#: next move, so the comment always follows a move of the side it names.
DRAW_OFFER_COMMENTS = {"White offers draw": "white", "Black offers draw": "black"}

#: The months lichess's database page (database.lichess.org, "Known issues") lists as having known problems:
#: ``(first month, last month, what is wrong, source)``, months as ``YYYY-MM`` inclusive (the dumps start in
#: 2013-01). A row names a month when some of its games are affected, not all of them.
KNOWN_ISSUES = (
    ("2013-01", "2015-12", "mate may not be forced in the number of moves the evals give",
     "https://github.com/lichess-org/database/issues/9#issuecomment-373883385"),
    ("2013-01", "2016-02", "some players played themselves in rated games",
     "https://github.com/lichess-org/lila/issues/7031"),
    ("2013-01", "2016-08", "7 games with illegal castling moves",
     "https://github.com/lichess-org/database/issues/23"),
    ("2016-12", "2016-12", "many games may have incorrect evals (up to and especially the 9th)",
     "https://github.com/lichess-org/database/issues/10"),
    ("2013-01", "2020-12", "some games lack the Round and Date tags and black move numbers after comments",
     "https://github.com/lichess-org/database/issues/31"),
    ("2020-06", "2020-06", "some players played themselves in rated games",
     "https://github.com/lichess-org/lila/issues/7031"),
    ("2020-07", "2020-08", "many games, variants above all, may have incorrect evals in the first 15 plies "
     "(July, the 31st above all, and August up to the 16th)", "https://github.com/lichess-org/lila/issues/7086"),
    ("2020-12", "2021-01", "many variant games were analysed with standard NNUE: incorrect evals",
     "https://github.com/niklasf/fishnet/issues/147"),
    ("2021-02", "2021-02", "some games were resigned after they ended (the 9th); in variants, moves after the end",
     "https://lichess.org/forum/lichess-feedback/bug-with-game-completion-today-between-724-and-804"),
    ("2021-03", "2021-03", "some games have incorrect results (the 12th, a datacenter fire)",
     "https://lichess.org/forum/lichess-feedback/fire-in-a-lichess-datacenter"),
    ("2022-12", "2022-12", "some Antichess games were recorded with bullet ratings",
     "https://github.com/lichess-org/lila/commit/3a742bcbb9504ca471e3c4baf6fe7ab25fc46441"),
    ("2023-11", "2023-11", "some Chess960 rematches have invalid castling rights in their starting FEN",
     "https://github.com/lichess-org/database/issues/54"),
)

#: The flags of a game, in the order ``game_flags`` gives them.
FLAGS = ("unterminated", "abandoned", "truncated", "known_issue")


def known_issues(date: str) -> tuple[tuple[str, str, str, str], ...]:
    """The rows of KNOWN_ISSUES whose months hold a date (``YYYY.MM.DD`` as in UTCDate, or ``YYYY-MM``).

    >>> [row[3] for row in known_issues("2023.11.30")]
    ['https://github.com/lichess-org/database/issues/54']
    >>> known_issues("2024.01.01"), known_issues("????.??.??")
    ((), ())
    """
    month = date[:7].replace(".", "-")
    if len(month) != 7 or month[4] != "-" or not all("0" <= c <= "9" for c in month[:4] + month[5:]):
        return ()
    return tuple(row for row in KNOWN_ISSUES if row[0] <= month <= row[1])


def game_flags(headers: dict[str, str], plies: int) -> tuple[str, ...]:
    """The FLAGS that hold for a game, from its tags and its number of moves.

    ``unterminated``: ``Termination "Unterminated"``, a game still running when
    the month was exported (correspondence games above all). ``abandoned``:
    ``Termination "Abandoned"``, what lichess writes for a game aborted or never
    started. ``truncated``: Result ``*`` with moves and no Unterminated: a game
    cut off mid-game (lichess ends its movetext with ``*``). ``known_issue``: its UTCDate (else Date)
    falls in a month of KNOWN_ISSUES.

    >>> game_flags({"Result": "*", "Termination": "Unterminated"}, 30)
    ('unterminated',)
    >>> game_flags({"Result": "*", "Termination": "Normal", "UTCDate": "2021.03.12"}, 12)
    ('truncated', 'known_issue')
    """
    termination = headers.get("Termination")
    flags = []
    if termination == "Unterminated":
        flags.append("unterminated")
    if termination == "Abandoned":
        flags.append("abandoned")
    if headers.get("Result") == "*" and plies > 0 and termination != "Unterminated":
        flags.append("truncated")
    if known_issues(headers.get("UTCDate") or headers.get("Date") or ""):
        flags.append("known_issue")
    return tuple(flags)


__all__ = ["DRAW_OFFER_COMMENTS", "FLAGS", "INCREMENT_MOVES", "KNOWN_ISSUES", "RESULT_CODES", "SEP", "SPEEDS",
           "SPEED_LIMITS", "TERMINATION_CODES", "game_flags", "known_issues", "speed_index", "speed_of"]
