"""Game filters: one vocabulary for ``read_games``/``read_lines``/``read_headers`` and the converter's flags.

A ``Where`` names what a game must have to be kept; every field left at its
default tests nothing, and the fields set must all hold. The scanner kernel
applies it (``Where.spec()`` is what it reads): the tags are tested as soon
as a game's tag section is read, so a game they refuse is never built (no
line, no record; its movetext is only skipped to find where the next game
starts); the movetext tests (``with_evals``, ``with_clocks``,
``min_plies``/``max_plies``) are made once the game is read in full.

>>> from fastpgn import read_games
>>> pgn = (b'[WhiteElo "2100"]\\n[BlackElo "1900"]\\n[TimeControl "180+2"]\\n\\n1. e4 e5 *\\n\\n'
...        b'[WhiteElo "2300"]\\n[BlackElo "2250"]\\n[TimeControl "60+0"]\\n\\n1. d4 *\\n')
>>> [g.moves for g in read_games(pgn, where=Where(min_elo=2000, speed="blitz"))]
[]
>>> [g.moves for g in read_games(pgn, where={"min_elo": 2000, "elo_of": "either", "speed": "blitz"})]
[['e4', 'e5']]
>>> speed_of("180+2"), speed_of("15+0"), speed_of("-")
('blitz', 'ultraBullet', 'correspondence')
"""

from __future__ import annotations

import datetime as _datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastpgn import scan as _scan
from fastpgn.lichess import SPEED_LIMITS, SPEEDS, speed_of

ELO_OF = ("white", "black", "both", "either")

# A tag test's kind, bits (scan/filters.py): fold the case of A-Z, compare a prefix.
_TAG_EQUAL, _TAG_FOLD, _TAG_PREFIX = 0, 1, 2
_FIELDS = ("min_elo", "max_elo", "elo_of", "speed", "time_control", "since", "until", "variant", "player",
           "eco", "termination", "with_evals", "with_clocks", "min_plies", "max_plies", "tags")


def _whole(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{name} must be a whole number, not {value!r}")
        value = int(text)
    if value < 0:
        raise ValueError(f"{name} must not be negative, not {value!r}")
    if value > 999_999_999:
        raise ValueError(f"{name} must be at most 999999999, not {value!r}")
    return value


def _date(name: str, value) -> str | None:
    """A date bound as ``YYYY.MM.DD`` (from that, ``YYYY-MM-DD`` or a ``datetime.date``)."""
    if value is None:
        return None
    if isinstance(value, _datetime.date):
        return value.strftime("%Y.%m.%d")
    text = value.strip() if isinstance(value, str) else None
    if text is not None and len(text) == 10 and text[4] == text[7] and text[4] in ".-":
        parts = text.split(text[4])
        if all(p.isascii() and p.isdigit() for p in parts):
            try:
                return _datetime.date(*map(int, parts)).strftime("%Y.%m.%d")
            except ValueError:
                pass
    raise ValueError(f"{name} must be a date YYYY.MM.DD or YYYY-MM-DD, not {value!r}")


def _speeds(value) -> frozenset:
    if value is None:
        return frozenset()
    items = value.split(",") if isinstance(value, str) else list(value)
    known = {s.lower(): s for s in SPEEDS}
    out = set()
    for item in items:
        if not isinstance(item, str) or item.strip().lower() not in known:
            raise ValueError(f"speed must be one of {', '.join(SPEEDS)}, not {item!r}")
        out.add(known[item.strip().lower()])
    return frozenset(out)


def _text(name: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    return value


def _tag_name_ok(name) -> bool:
    return isinstance(name, str) and bool(name) and not any(c in name for c in ' \t\r\n"]')


def _tags(value) -> tuple:
    if value is None:
        return ()
    pairs = value.items() if isinstance(value, Mapping) else value
    out = []
    for pair in pairs:
        if isinstance(pair, str):
            name, eq, tag_value = pair.partition("=")
            if not eq:
                raise ValueError(f"a tag test is NAME=VALUE, not {pair!r}")
        else:
            try:
                name, tag_value = pair
            except (TypeError, ValueError):
                raise ValueError(f"a tag test is a (name, value) pair, not {pair!r}") from None
        if not _tag_name_ok(name):
            raise ValueError(f"a tag name is a word without spaces, quotes or ']', not {name!r}")
        if not isinstance(tag_value, str):
            raise ValueError(f"tag {name}'s value must be a string, not {tag_value!r}")
        out.append((name, tag_value))
    return tuple(out)


def _fold(text: str) -> bytes:
    """UTF-8, with A-Z lowered (the kernel's case-insensitive comparison: ASCII letters only)."""
    return text.encode().lower()


@dataclass(frozen=True, init=False)
class Where:
    """What a game must have to be kept; fields left at their default test nothing.

    ``min_elo``/``max_elo``: rating bounds (inclusive) for the players named by
    ``elo_of`` (``"white"``, ``"black"``, ``"both"`` (default) or
    ``"either"``); a missing or non-numeric rating fails. ``speed``: one or
    more of SPEEDS (a set, or a comma list), by lichess's rule on TimeControl
    (``speed_of``). ``time_control``: TimeControl equal to this. ``since`` /
    ``until``: UTCDate (else Date) within these days (inclusive; a date not
    written ``YYYY.MM.DD`` in full fails). ``variant``: the Variant tag,
    ``"Standard"`` when absent. ``player``: White or Black equal to this.
    ``eco``: ECO starts with this. ``termination``: Termination equal to
    this. These named text filters (and ``speed``) ignore the case of the
    letters A-Z (``"normal"``, ``"b2"``): lichess spells each value one way,
    and its user names ignore case. ``with_evals`` / ``with_clocks``: some
    ply has an ``[%eval]`` / ``[%clk]``. ``min_plies``/``max_plies``: bounds
    on the number of plies (inclusive). ``tags``: ``{name: value}`` or
    ``(name, value)`` pairs (or ``"NAME=VALUE"`` strings): each tag present
    and equal to its value, exactly (a game's id in ``Site`` is case-sensitive).

    >>> Where(min_elo="2000", speed="blitz,rapid", since="2024-01-31").since
    '2024.01.31'
    """

    min_elo: int | None
    max_elo: int | None
    elo_of: str
    speed: frozenset
    time_control: str | None
    since: str | None
    until: str | None
    variant: str | None
    player: str | None
    eco: str | None
    termination: str | None
    with_evals: bool
    with_clocks: bool
    min_plies: int | None
    max_plies: int | None
    tags: tuple

    def __init__(self, **fields: Any) -> None:
        unknown = sorted(set(fields) - set(_FIELDS))
        if unknown:
            raise TypeError(f"Where() got unknown keyword(s) {', '.join(unknown)}; valid keywords: "
                            f"{', '.join(_FIELDS)}")
        get = fields.get
        elo_of = get("elo_of", "both")
        if elo_of not in ELO_OF:
            raise ValueError(f"elo_of must be one of {', '.join(ELO_OF)}, not {elo_of!r}")
        values = {
            "min_elo": _whole("min_elo", get("min_elo")),
            "max_elo": _whole("max_elo", get("max_elo")),
            "elo_of": elo_of,
            "speed": _speeds(get("speed")),
            "time_control": _text("time_control", get("time_control")),
            "since": _date("since", get("since")),
            "until": _date("until", get("until")),
            "variant": _text("variant", get("variant")),
            "player": _text("player", get("player")),
            "eco": _text("eco", get("eco")),
            "termination": _text("termination", get("termination")),
            "with_evals": bool(get("with_evals", False)),
            "with_clocks": bool(get("with_clocks", False)),
            "min_plies": _whole("min_plies", get("min_plies")),
            "max_plies": _whole("max_plies", get("max_plies")),
            "tags": _tags(get("tags")),
        }
        for low, high in (("min_elo", "max_elo"), ("since", "until"), ("min_plies", "max_plies")):
            if values[low] is not None and values[high] is not None and values[low] > values[high]:
                word = "after" if low == "since" else "above"
                raise ValueError(f"{low} ({values[low]}) is {word} {high} ({values[high]}): no game can pass")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __bool__(self) -> bool:
        """False when it tests nothing (every game passes)."""
        return self.spec() != Where().spec()

    def as_dict(self) -> dict:
        """The fields set, JSON-ready (the converter's resume fingerprint records it)."""
        out = {}
        default = Where()
        for name in _FIELDS:
            value = getattr(self, name)
            if value != getattr(default, name):
                out[name] = sorted(value) if name == "speed" else [list(p) for p in value] if name == "tags" else value
        return out

    def spec(self) -> tuple:
        """The plain tuple the scanner kernels read (``_scan.kernel.where_plan(spec)``)."""
        elo_mode = -1
        if self.min_elo is not None or self.max_elo is not None:
            elo_mode = ELO_OF.index(self.elo_of)
        speeds = 0
        for s in self.speed:
            speeds |= 1 << SPEEDS.index(s)
        # (tag names, test, values, the value of a missing tag or None)
        tests: list[tuple[tuple[bytes, ...], int, tuple[bytes, ...], bytes | None]] = []
        if self.time_control is not None:
            tests.append(((b"TimeControl",), _TAG_FOLD, (_fold(self.time_control),), None))
        if self.variant is not None:
            tests.append(((b"Variant",), _TAG_FOLD, (_fold(self.variant),), b"Standard"))
        if self.player is not None:
            tests.append(((b"White", b"Black"), _TAG_FOLD, (_fold(self.player),), None))
        if self.eco is not None:
            tests.append(((b"ECO",), _TAG_FOLD | _TAG_PREFIX, (_fold(self.eco),), None))
        if self.termination is not None:
            tests.append(((b"Termination",), _TAG_FOLD, (_fold(self.termination),), None))
        for name, value in self.tags:
            tests.append(((name.encode(),), _TAG_EQUAL, (value.encode(),), None))
        return (
            elo_mode,
            -1 if self.min_elo is None else self.min_elo,
            -1 if self.max_elo is None else self.max_elo,
            speeds,
            None if self.since is None else self.since.encode(),
            None if self.until is None else self.until.encode(),
            tuple(tests),
            self.with_evals,
            self.with_clocks,
            -1 if self.min_plies is None else self.min_plies,
            -1 if self.max_plies is None else self.max_plies,
        )


def as_where(where) -> Where | None:
    """``where`` as a Where: a Where as it is, a dict of Where's keywords, None for no filter.

    >>> as_where({"speed": ["bullet"]}).speed
    frozenset({'bullet'})
    """
    if where is None or isinstance(where, Where):
        return where
    if isinstance(where, Mapping):
        return Where(**where)
    raise TypeError(f"where must be a fastpgn.filters.Where or a dict of its keywords, not {type(where).__name__}")


def plan(where):
    """The live kernel's compiled form of ``where`` (Where, dict or None); None when it tests nothing."""
    where = as_where(where)
    if not where:
        return None
    return _scan.kernel.where_plan(where.spec())


# ---------------------------------------------------------------- the same filter over the analysis columns

# A tag as the analysis columns keep it (docs/schema.md): the string columns hold the tag's text, the
# ratings their number; every other tag is in the ``tags`` pairs. The tags made into dates, times and
# numbers (UTCDate, UTCTime, the rating differences) keep no text a test could match.
TAG_COLUMNS = {
    "Event": "event", "Site": "site", "White": "white", "Black": "black", "WhiteTitle": "white_title",
    "BlackTitle": "black_title", "Result": "result", "Termination": "termination", "TimeControl": "time_control",
    "ECO": "eco", "Opening": "opening", "Variant": "variant", "FEN": "fen",
    "WhiteElo": "CAST(white_elo AS VARCHAR)", "BlackElo": "CAST(black_elo AS VARCHAR)",
}
_TEXTLESS_TAGS = ("UTCDate", "UTCTime", "WhiteRatingDiff", "BlackRatingDiff")


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_fold(column: str) -> str:
    """``column`` with A-Z lowered and nothing else, as the kernel folds (DuckDB's ``lower`` would fold
    every letter, É too)."""
    return f"translate({column}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


def _sql_folded(value: str) -> str:
    """A literal folded as :func:`_sql_fold` folds a column."""
    return _sql_text(_fold(value).decode())


def _elo_sql(where: Where, column: str) -> str:
    parts = [f"{column} IS NOT NULL"]
    if where.min_elo is not None:
        parts.append(f"{column} >= {int(where.min_elo)}")
    if where.max_elo is not None:
        parts.append(f"{column} <= {int(where.max_elo)}")
    return "(" + " AND ".join(parts) + ")"


def where_sql(where) -> str:
    """``where`` (a :class:`Where`, a dict of its fields, or None) as a SQL condition over the analysis
    schema's columns: the games a kernel filter keeps from a PGN, kept from its Parquet (DuckDB's SQL; the
    report and the explorer filter Parquet inputs with it). ``"TRUE"`` for no filter.

    It follows the kernel's rules: a missing rating, date or tag fails its
    test, a missing Variant is Standard, the named text filters compare
    ignoring the case of A-Z (and of no other letter) and ``tags`` exactly.
    A ``--tag`` on a tag kept as a date, time or number (UTCDate, UTCTime,
    the rating differences) is a ValueError. One difference: the ``result``
    column holds the movetext's result when a game has no Result tag, so
    ``--tag Result=1-0`` keeps such a game here that the kernel filters out.

    >>> where_sql({"min_elo": 2000, "elo_of": "white", "speed": "blitz"})
    "(white_elo IS NOT NULL AND white_elo >= 2000) AND speed IN ('blitz')"
    """
    where = as_where(where)
    if not where:
        return "TRUE"
    tests: list[str] = []
    if where.min_elo is not None or where.max_elo is not None:
        if where.elo_of in ("white", "both"):
            tests.append(_elo_sql(where, "white_elo"))
        if where.elo_of in ("black", "both"):
            tests.append(_elo_sql(where, "black_elo"))
        if where.elo_of == "either":
            tests.append(f"({_elo_sql(where, 'white_elo')} OR {_elo_sql(where, 'black_elo')})")
    if where.speed:
        tests.append(f"speed IN ({', '.join(_sql_text(s) for s in sorted(where.speed))})")
    if where.time_control is not None:
        tests.append(f"{_sql_fold('time_control')} = {_sql_folded(where.time_control)}")
    if where.since is not None:
        tests.append(f"date >= CAST({_sql_text(where.since.replace('.', '-'))} AS DATE)")
    if where.until is not None:
        tests.append(f"date <= CAST({_sql_text(where.until.replace('.', '-'))} AS DATE)")
    if where.variant is not None:
        variant = _sql_fold("coalesce(variant, 'Standard')")
        tests.append(f"{variant} = {_sql_folded(where.variant)}")
    if where.player is not None:
        player = _sql_folded(where.player)
        tests.append(f"({_sql_fold('white')} = {player} OR {_sql_fold('black')} = {player})")
    if where.eco is not None:
        tests.append(f"starts_with({_sql_fold('eco')}, {_sql_folded(where.eco)})")
    if where.termination is not None:
        tests.append(f"{_sql_fold('termination')} = {_sql_folded(where.termination)}")
    if where.with_evals:
        tests.append("eval_cp IS NOT NULL")
    if where.with_clocks:
        tests.append("clock IS NOT NULL")
    if where.min_plies is not None:
        tests.append(f"plies >= {int(where.min_plies)}")
    if where.max_plies is not None:
        tests.append(f"plies <= {int(where.max_plies)}")
    for name, value in where.tags:
        if name in _TEXTLESS_TAGS:
            raise ValueError(f"--tag {name}=...: the analysis columns keep {name} as a date, time or number, "
                             "not as text; use the matching filter flag (or a PGN input)")
        column = TAG_COLUMNS.get(name)
        tests.append(f"{column} = {_sql_text(value)}" if column else
                     f"list_contains(tags, {{'key': {_sql_text(name)}, 'value': {_sql_text(value)}}})")
    return " AND ".join(tests)


__all__ = ["ELO_OF", "SPEEDS", "SPEED_LIMITS", "TAG_COLUMNS", "Where", "as_where", "plan", "speed_of",
           "where_sql"]
