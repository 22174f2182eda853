"""lichess's rules, one table each: speeds and their limits, the codes of a result and a termination, the separator.

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


__all__ = ["INCREMENT_MOVES", "RESULT_CODES", "SEP", "SPEEDS", "SPEED_LIMITS", "TERMINATION_CODES", "speed_index",
           "speed_of"]
