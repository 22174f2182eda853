"""lichess's rules are defined once (``fastpgn.lichess``): every kernel's copy of them is held to that table.

The compiled kernel keeps its own C copies (the speed limits in
``scan/filters.pxi``'s ``_speed_bit``, the speed names of the ``speed``
column, the codes of fields 4 and 5 in ``scan/lines.pxi``); each test runs on
both backends (the ``scan`` fixture, or the live backend of the run), so a
table changed in one place and not the other fails here.
"""

from __future__ import annotations

import pytest

from fastpgn import lichess, oneliner, openings
from fastpgn.arrow import read_arrow
from helpers import decompressed, shared

# Every limit, a second under it, with and without an increment that carries the estimate across it.
TIME_CONTROLS = sorted({f"{base}+{inc}" for _, limit in lichess.SPEED_LIMITS
                        for seconds in (limit - 1, limit, limit + 1)
                        for inc in (0, 1, 2, 5)
                        for base in (seconds - lichess.INCREMENT_MOVES * inc,) if base >= 0}
                       | {"0+0", "999999999+999999999", "-", "?", "", "+", "1+", "+1", "1+2+3", "a+1", "1 +2",
                          "60+1.5", "0060+0", "1234567890+0", "١٢٠+٠"})


def test_the_kernels_speed_tables_are_lichess_s(scan):
    assert scan.SPEEDS == lichess.SPEEDS
    assert scan.SPEED_LIMITS == tuple(limit for _, limit in lichess.SPEED_LIMITS)
    assert scan.SEP == lichess.SEP.encode()


@pytest.mark.parametrize("time_control", TIME_CONTROLS)
def test_the_kernels_speed_rule_is_lichess_s(scan, time_control):
    """speed_bit (what a speed filter tests) names lichess's speed, on str and bytes alike."""
    expected = lichess.speed_of(time_control)
    want = 1 << lichess.SPEEDS.index(expected) if expected else 0
    assert scan.speed_bit(time_control) == want
    assert scan.speed_bit(time_control.encode()) == want


def _column(source, name: str) -> list:
    return [value for batch in read_arrow(source, columns=["time_control", "speed"])
            for value in batch.column(name).to_pylist()]


def test_the_speed_column_is_lichess_s_speed():
    """The live kernel's column sink writes the speed lichess's table names, for every edge and the corpus."""
    games = "".join(f'[TimeControl "{tc}"]\n\n1. e4 *\n\n' for tc in TIME_CONTROLS).encode()
    assert _column(games, "speed") == [lichess.speed_of(tc) for tc in TIME_CONTROLS]

    data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    speeds = _column(data, "speed")
    assert len(set(speeds)) >= 4        # the month plays most speeds
    assert speeds == [None if tc is None else lichess.speed_of(tc) for tc in _column(data, "time_control")]


@pytest.mark.parametrize("result", [*lichess.RESULT_CODES, "*", "?", ""])
@pytest.mark.parametrize("termination", [*lichess.TERMINATION_CODES, "Time  forfeit", None])
def test_fields_4_and_5_are_lichess_s_codes(scan, result, termination):
    """Both line sinks write lichess's codes, and parse_line reads them back."""
    tags = f'[Result "{result}"]\n' + (f'[Termination "{termination}"]\n' if termination is not None else "")
    data = f"{tags}\n1. e4 e5 *\n".encode()
    lines, read, rejects, _ = scan.lines_from_block(data, 0, len(data))
    assert read == 1 and not rejects
    line = oneliner.parse_line(lines.decode())
    assert line.result == lichess.RESULT_CODES.get(result, "*")
    assert line.termination == lichess.TERMINATION_CODES.get(termination or "", "*")


def test_the_line_and_the_openings_map_share_the_separator():
    assert oneliner.format_line(oneliner.Line(*"abcdefghijklmnopqrstuv")).count(lichess.SEP) == 21
    assert openings.SEP == lichess.SEP
