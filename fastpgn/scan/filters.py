"""The filters tested on a game's tags and movetext, pure Python: twin of fastpgn/scan/filters.pxi.

Part of the pure scanner kernel fastpgn.scan._scan_py (see its docstring for the parts):
fastpgn.filters.Where is the face, and this module is what the grammar
(fastpgn.scan.grammar._scan_game) asks of a game between its tag section and
its movetext (``keep_tags``) and after its movetext (``keep_moves``).
"""

from __future__ import annotations

from fastpgn import lichess

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, TypeVar

    _Text = TypeVar("_Text", bytes, str)

# fastpgn.filters.Where compiles to a spec of plain values (where_spec);
# where_plan turns the spec into what the kernel reads. A game's tags are
# tested when its tag section is read, before its movetext: a game they
# refuse is never built, its movetext only skipped (_skip_movetext).

ELO_WHITE, ELO_BLACK, ELO_BOTH, ELO_EITHER = range(4)
# A tag test's kind is bits: TAG_FOLD compares ignoring the case of A-Z, TAG_PREFIX a start of the value
# (both: an ECO prefix).
TAG_EQUAL, TAG_FOLD, TAG_PREFIX = 0, 1, 2
# lichess's speeds (fastpgn.lichess), and the upper bounds, exclusive, of all but correspondence.
SPEEDS = lichess.SPEEDS
SPEED_LIMITS = tuple(limit for _, limit in lichess.SPEED_LIMITS)


def _ascii_lower(value: _Text) -> _Text:
    """``value`` (bytes or str) with A-Z lowered, nothing else."""
    if isinstance(value, bytes):
        return value.lower()
    return value.lower() if value.isascii() else value.encode().lower().decode()


def _digits(value: bytes | str) -> int:
    """The number 1 to 9 ASCII digits say, else -1."""
    if 0 < len(value) <= 9 and value.isdigit() and value.isascii():
        return int(value)
    return -1


def speed_bit(time_control: bytes | str) -> int:
    """The bit (1 << index in SPEEDS) of lichess's speed for a TimeControl value; 0 if it names none."""
    index = lichess.speed_index(time_control)
    return 1 << index if index >= 0 else 0


def _well_formed_date(value: bytes | str) -> bool:
    """``YYYY.MM.DD`` with ASCII digits (what a date range compares)."""
    if len(value) != 10 or not value.isascii():
        return False
    for i in (0, 1, 2, 3, 5, 6, 8, 9):
        if not value[i:i + 1].isdigit():
            return False
    return value[4:5] in (b".", ".") and value[7:8] in (b".", ".")


class _Where:
    """A where_spec as the pure kernel reads it: the same tests on bytes (lines) or str (records)."""

    __slots__ = ("elo_mode", "min_elo", "max_elo", "speeds", "dates", "tests", "min_plies", "max_plies",
                 "evals", "clocks", "needs_moves", "spec")

    def __init__(self, spec: tuple[Any, ...]) -> None:
        (self.elo_mode, self.min_elo, self.max_elo, self.speeds, since, until, tests, self.evals, self.clocks,
         self.min_plies, self.max_plies) = spec
        self.spec = spec
        self.dates: tuple[tuple[bytes | None, bytes | None], tuple[str | None, str | None]] | None = None
        if since is not None or until is not None:
            self.dates = ((since, until), (None if since is None else since.decode(),
                                           None if until is None else until.decode()))
        self.tests = (tests, tuple(
            (tuple(n.decode() for n in names), kind, tuple(v.decode() for v in values),
             None if default is None else default.decode())
            for names, kind, values, default in tests))
        self.needs_moves = bool(self.evals or self.clocks or self.min_plies >= 0 or self.max_plies >= 0)

    def __reduce__(self) -> tuple[type[_Where], tuple[tuple[Any, ...]]]:
        return (_Where, (self.spec,))

    def keep_tags(self, tags: Iterable[tuple[Any, Any]], text: bool) -> bool:
        """Whether a game with these ``(name, value)`` pairs (the last of a name counts) passes the tag tests."""
        d = dict(tags)
        if self.elo_mode >= 0:
            white = _digits(d.get("WhiteElo" if text else b"WhiteElo", ""))
            black = _digits(d.get("BlackElo" if text else b"BlackElo", ""))
            lo, hi = self.min_elo, self.max_elo
            ok_white = white >= 0 and lo <= white and (hi < 0 or white <= hi)
            ok_black = black >= 0 and lo <= black and (hi < 0 or black <= hi)
            mode = self.elo_mode
            if not (ok_white if mode == ELO_WHITE else ok_black if mode == ELO_BLACK
                    else ok_white and ok_black if mode == ELO_BOTH else ok_white or ok_black):
                return False
        if self.speeds:
            tc = d.get("TimeControl" if text else b"TimeControl")
            if tc is None or not speed_bit(tc) & self.speeds:
                return False
        if self.dates is not None:
            since, until = self.dates[text]
            date = d.get("UTCDate" if text else b"UTCDate")
            if date is None:
                date = d.get("Date" if text else b"Date")
            if (date is None or not _well_formed_date(date) or (since is not None and date < since)
                    or (until is not None and date > until)):
                return False
        for names, kind, values, default in self.tests[text]:
            for name in names:
                value = d.get(name, default)
                if value is None:
                    continue
                if kind & TAG_FOLD:
                    value = _ascii_lower(value)
                if value.startswith(values) if kind & TAG_PREFIX else value in values:
                    break
            else:
                return False
        return True

    def keep_moves(self, plies: int, has_evals: bool, has_clocks: bool) -> bool:
        """Whether a game read in full passes the movetext tests."""
        return ((not self.evals or has_evals) and (not self.clocks or has_clocks)
                and plies >= self.min_plies and (self.max_plies < 0 or plies <= self.max_plies))


if TYPE_CHECKING:
    #: A filter as the pure kernel takes it: fastpgn.filters.Where.spec()'s tuple, or where_plan's _Where.
    Spec = tuple[Any, ...] | _Where


def where_plan(spec: Spec | None) -> _Where | None:
    """A filter spec (fastpgn.filters.Where.spec()) as the kernel reads it; None stays None.

    Make it once per run, as opening_table: the compiled kernel copies the
    spec into C arrays it reads without the GIL.
    """
    return spec if spec is None or isinstance(spec, _Where) else _Where(spec)
