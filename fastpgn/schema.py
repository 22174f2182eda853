"""The analysis schema: one row per game, typed, for pandas, polars, DuckDB and Spark.

This module owns the column list (name, Arrow type, meaning, in order: a
contract that Parquet files, Arrow batches and CSV headers share) and the
small value rules that turn tag text into typed values: ratings, the UTC
start, the date, the time control, and evals split into centipawns and
mate. The column builders (``fastpgn.scan.columns`` and the compiled sink)
apply these rules; nothing here imports pyarrow until ``arrow_schema`` is
called.

>>> names()[:4]
('game_id', 'site', 'event', 'utc')
>>> int16("+5"), int16("?"), time_control("600+5"), eval_value("-1.5"), eval_value("#-7")
(5, None, (600, 5), (-150, None), (None, -7))
"""

from __future__ import annotations

import functools

from fastpgn.lichess import speed_of

ARROW_EXTRA = 'pip install "fastpgn[arrow]"'

# The scanner kernel checks its columns against COLUMNS when it is loaded (a reader's start-up:
# tests/scan/test_headers_only.py), so this module imports neither typing nor datetime at run time.
TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple

    class Column(NamedTuple):
        """One column: its name, its Arrow type (as Arrow prints it) and what it holds."""

        name: str
        type: str
        meaning: str
else:
    from collections import namedtuple

    # (the same class as above for a program that runs)
    Column = namedtuple("Column", ("name", "type", "meaning"))
    Column.__doc__ = "One column: its name, its Arrow type (as Arrow prints it) and what it holds."


COLUMNS = (
    Column("game_id", "string", "the Site tag's text after its last '/' (the lichess game id)"),
    Column("site", "string", "the Site tag as written"),
    Column("event", "string", "the Event tag"),
    Column("utc", "timestamp[s, tz=UTC]", "the start: UTCDate (else Date) and UTCTime (else Time)"),
    Column("date", "date32", "UTCDate, else Date"),
    Column("white", "string", "the White tag"),
    Column("black", "string", "the Black tag"),
    Column("white_elo", "int16", "the WhiteElo tag"),
    Column("black_elo", "int16", "the BlackElo tag"),
    Column("white_rating_diff", "int16", "the WhiteRatingDiff tag (+5 is 5)"),
    Column("black_rating_diff", "int16", "the BlackRatingDiff tag"),
    Column("white_title", "string", "the WhiteTitle tag"),
    Column("black_title", "string", "the BlackTitle tag"),
    Column("result", "string", "1-0, 0-1, 1/2-1/2 or *"),
    Column("termination", "string", "the Termination tag"),
    Column("time_control", "string", "the TimeControl tag"),
    Column("base_seconds", "int32", "the TimeControl's base time in seconds"),
    Column("increment_seconds", "int16", "the TimeControl's increment in seconds"),
    Column("speed", "string", "lichess's speed: ultraBullet, bullet, blitz, rapid, classical, correspondence"),
    Column("eco", "string", "the ECO tag"),
    Column("opening", "string", "the Opening tag"),
    Column("opening_code", "string", "ECO + the opening's number within it (field 10 of the 22-field line)"),
    Column("variant", "string", "the Variant tag"),
    Column("fen", "string", "the FEN tag: the start position when it is not the standard one"),
    Column("plies", "int16", "the number of moves (half-moves)"),
    Column("mate", "bool", "the last move gives mate (its SAN holds #)"),
    Column("moves", "list<string>", "the SAN moves as written"),
    Column("eval_cp", "list<int16>", "per ply: the eval in centipawns, White's view (null: none, or mate)"),
    Column("eval_mate", "list<int8>", "per ply: mate in N, White's view (negative: Black mates)"),
    Column("clock", "list<float32>", "per ply: seconds on the mover's clock after the move"),
    Column("nags", "list<list<int16>>", "per ply: the move's NAGs ($N, and ! ? !! ?? !? ?! as 1-6), as written"),
    # What lichess computes from the evals and clocks (fastpgn.accuracy; docs/schema.md "Accuracy, ACPL, judgements").
    Column("win_percent", "list<float32>", "per ply: White's win percent after the move (scalachess WinPercent)"),
    Column("judgement", "list<string>", "per ply: lichess's Inaccuracy, Mistake or Blunder (null: none)"),
    Column("move_seconds", "list<float32>", "per ply: seconds the mover spent (clock before + increment - after)"),
    Column("white_accuracy", "float32", "lichess's game accuracy of White, 0-100"),
    Column("black_accuracy", "float32", "lichess's game accuracy of Black, 0-100"),
    Column("white_acpl", "int16", "lichess's average centipawn loss of White"),
    Column("black_acpl", "int16", "lichess's average centipawn loss of Black"),
    Column("white_inaccuracies", "int16", "White's moves judged Inaccuracy"),
    Column("white_mistakes", "int16", "White's moves judged Mistake"),
    Column("white_blunders", "int16", "White's moves judged Blunder"),
    Column("black_inaccuracies", "int16", "Black's moves judged Inaccuracy"),
    Column("black_mistakes", "int16", "Black's moves judged Mistake"),
    Column("black_blunders", "int16", "Black's moves judged Blunder"),
    # What lichess's exporter writes and the games to flag (fastpgn.lichess; docs/schema.md "Draw offers").
    Column("white_draw_offers", "list<int16>", "the plies after which White offered a draw (null: none written)"),
    Column("black_draw_offers", "list<int16>", "the plies after which Black offered a draw (null: none written)"),
    Column("flags", "list<string>", "unterminated, abandoned, truncated, known_issue: those that hold (null: none)"),
    Column("byte_offset", "int64", "the game's first byte in the decompressed input"),
    # (a list of pairs, not a map: Hugging Face datasets and other readers take no Arrow map)
    Column("tags", "list<struct<key: string, value: string>>", "every other tag, in file order"),
)
#: Only with ``uci=True``: the moves replayed and written in UCI.
UCI_COLUMN = Column("uci", "list<string>", "the moves in UCI (e2e4), replayed on fastpgn's board")
#: Only with ``positions=True``: each ply's position as its Polyglot key (the opening books' key, its bits signed).
ZOBRIST_COLUMN = Column("zobrist", "list<int64>", "per ply: the Polyglot key of the position after the move")
#: Only with ``fens=True``: each ply's position as FEN.
FENS_COLUMN = Column("fens", "list<string>", "per ply: the FEN after the move")

#: The tags the columns are made of; every other tag goes to ``tags``.
SOURCE_TAGS = frozenset((
    "Event", "Site", "UTCDate", "UTCTime", "White", "Black", "WhiteElo", "BlackElo", "WhiteRatingDiff",
    "BlackRatingDiff", "WhiteTitle", "BlackTitle", "Result", "Termination", "TimeControl", "ECO", "Opening",
    "Variant", "FEN",
))

#: Low-cardinality string columns: always dictionary pages in Parquet (the Arrow type stays plain string);
#: the writer (fastpgn.parquet.settings.parquet_writer) asks for dictionaries on every column but game_id, site
#: and offset, and Parquet drops them where a dictionary grows too big.
DICTIONARY_COLUMNS = ("event", "white_title", "black_title", "result", "termination", "time_control", "speed",
                      "eco", "opening", "opening_code", "variant")

RESULTS = frozenset(("1-0", "0-1", "1/2-1/2", "*"))

INT16 = (-32768, 32767)
INT32 = (-(1 << 31), (1 << 31) - 1)
CP_LIMIT = 32767    # eval_cp is clamped to +-CP_LIMIT
MATE_LIMIT = 127    # eval_mate to +-MATE_LIMIT


def columns(uci: bool = False, positions: bool = False, fens: bool = False) -> tuple[Column, ...]:
    """The columns in order: then ``uci``, ``zobrist`` and ``fens``, each when asked for."""
    return (COLUMNS + ((UCI_COLUMN,) if uci else ()) + ((ZOBRIST_COLUMN,) if positions else ())
            + ((FENS_COLUMN,) if fens else ()))


def names(uci: bool = False, positions: bool = False, fens: bool = False) -> tuple[str, ...]:
    """The column names in order."""
    return tuple(c.name for c in columns(uci, positions, fens))


#: The columns only a flag adds, by name: the flag that adds each.
OPTIONAL = {"uci": "uci", "zobrist": "positions", "fens": "fens"}


#: The columns made from a game's movetext (and ``byte_offset``, which counts the bytes of its text): a reader
#: asked for none of them may leave the movetext out where the input lets it (lichess's Parquet release).
FROM_MOVETEXT = frozenset((
    "plies", "mate", "moves", "eval_cp", "eval_mate", "clock", "nags", "win_percent", "judgement",
    "move_seconds", "white_accuracy", "black_accuracy", "white_acpl", "black_acpl", "white_inaccuracies",
    "white_mistakes", "white_blunders", "black_inaccuracies", "black_mistakes", "black_blunders",
    "white_draw_offers", "black_draw_offers", "flags", "byte_offset", "uci", "zobrist", "fens"))

#: The columns made from a game's moves: those a headers-only column read of PGN leaves out (the column sinks'
#: ``headers=True``, which skips each movetext as ``read_headers`` skips it).
FROM_MOVES = FROM_MOVETEXT - {"byte_offset"}


def chosen_names(chosen, uci: bool = False, positions: bool = False, fens: bool = False) -> tuple[str, ...]:
    """The column names a reader or sink gives: all of them (``chosen`` None), or those of ``chosen``, checked
    (each a column the flags give, none twice)."""
    every = names(uci, positions, fens)
    if chosen is None:
        return every
    if isinstance(chosen, str):
        raise TypeError("columns must be a list of column names, not a string")
    chosen = tuple(chosen)
    for name in chosen:
        if name not in every:
            if name in OPTIONAL:
                raise ValueError(f"the {name} column needs {OPTIONAL[name]}=True")
            raise ValueError(f"no column {name!r}; the columns are {', '.join(every)}")
    if len(set(chosen)) != len(chosen):
        raise ValueError("a column is named twice in columns")
    return chosen


def require_pyarrow(what: str = "Arrow output"):
    """The pyarrow module, or ImportError naming the extra that installs it."""
    try:
        import pyarrow
    except ImportError as exc:
        raise ImportError(f"{what} needs pyarrow, which is not installed: {ARROW_EXTRA}") from exc
    return pyarrow


def struct_fields(spec: str) -> list[tuple[str, str]]:
    """The ``(name, type text)`` fields of a ``struct<...>`` type text (fields of scalar types).

    >>> struct_fields("struct<key: string, value: string>")
    [('key', 'string'), ('value', 'string')]
    """
    return [tuple(part.split(": ")) for part in spec[7:-1].split(", ")]     # type: ignore[misc]


def arrow_type(pa, spec: str):
    """The pyarrow type a Column's ``type`` text names."""
    if spec.startswith("list<"):
        return pa.list_(arrow_type(pa, spec[5:-1]))
    if spec.startswith("struct<"):
        return pa.struct([(name, arrow_type(pa, kind)) for name, kind in struct_fields(spec)])
    if spec == "timestamp[s, tz=UTC]":
        return pa.timestamp("s", tz="UTC")
    return {"string": pa.string(), "date32": pa.date32(), "bool": pa.bool_(), "int8": pa.int8(),
            "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "float32": pa.float32()}[spec]


def arrow_schema(uci: bool = False, positions: bool = False, fens: bool = False):
    """The schema as a ``pyarrow.Schema`` (ImportError naming ``fastpgn[arrow]`` without pyarrow).

    >>> schema = arrow_schema()
    >>> schema.field("utc").type, schema.field("eval_cp").type
    (TimestampType(timestamp[s, tz=UTC]), ListType(list<item: int16>))
    """
    require_pyarrow("fastpgn.schema.arrow_schema()")
    return _arrow_schema(uci, positions, fens)


@functools.cache
def _arrow_schema(uci: bool, positions: bool, fens: bool):
    """arrow_schema's, made once per set of flags (a reader asks for it at every block)."""
    import pyarrow as pa

    fields = [pa.field(c.name, arrow_type(pa, c.type)) for c in columns(uci, positions, fens)]
    return pa.schema(fields, metadata={b"fastpgn.schema": b"one row per game; docs/schema.md"})


# ---------------------------------------------------------------- value rules

def game_id(site: str | None) -> str | None:
    """The text after the Site tag's last ``/`` (field 1 of the line); None without a Site tag.

    >>> game_id("https://lichess.org/xBJXQouK"), game_id(None)
    ('xBJXQouK', None)
    """
    return None if site is None else site[site.rfind("/") + 1:]


def integer(text: str | None, bounds: tuple[int, int]) -> int | None:
    """An optionally signed ASCII integer within ``bounds``; None for anything else (``?``, ``1500?``, absent)."""
    if not text:
        return None
    digits = text[1:] if text[0] in "+-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 10:
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


def int16(text: str | None) -> int | None:
    """A rating or rating change: ``"1500"``, ``"+5"``, ``"-12"``; None if absent, ``?`` or outside int16.

    >>> int16("2479"), int16("-11"), int16("?"), int16("40000"), int16(None)
    (2479, -11, None, None, None)
    """
    return None if text is None else _cached(_INT16, text, _int16)


def _int16(text: str) -> int | None:
    return integer(text, INT16)


_EPOCH_ORDINAL = 719163   # datetime.date(1970, 1, 1).toordinal() (the pure column sink's dates: tests/test_schema.py)
_CACHE_LIMIT = 100_000   # a cache that grows past this (hostile input) starts again
_INT16: dict = {}
_DAYS: dict = {}
_SECONDS: dict = {}
_EVALS: dict = {}


def _cached(cache: dict, key, rule):
    value = cache.get(key, cache)
    if value is cache:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        value = cache[key] = rule(key)
    return value


def _date_days(text: str) -> int | None:
    if len(text) != 10 or text[4] != "." or text[7] != ".":
        return None
    y, m, d = text[:4], text[5:7], text[8:]
    if not all(p.isascii() and p.isdigit() for p in (y, m, d)):
        return None
    import datetime  # (here, not at the top: see TYPE_CHECKING above)

    try:
        return datetime.date(int(y), int(m), int(d)).toordinal() - _EPOCH_ORDINAL
    except ValueError:      # 2021.02.30, month 13, year 0
        return None


def date_days(text: str | None) -> int | None:
    """A ``YYYY.MM.DD`` date as days since 1970-01-01 (date32); None if absent, partial (``????.??.??``) or no date.

    >>> date_days("1970.01.02"), date_days("2024.??.??"), date_days("2021.02.30")
    (1, None, None)
    """
    return None if text is None else _cached(_DAYS, text, _date_days)


def _seconds(text: str) -> int | None:
    parts = text.split(":")
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() and 1 <= len(p) <= 2 for p in parts):
        return None
    h, m, s = (int(p) for p in parts)
    if h > 23 or m > 59 or s > 60:
        return None
    return h * 3600 + m * 60 + s


def seconds_of_day(text: str | None) -> int | None:
    """``HH:MM:SS`` as seconds after midnight (field 3 of the line: one or two digits each, a leap second allowed).

    >>> seconds_of_day("18:08:33"), seconds_of_day("25:00:00"), seconds_of_day(None)
    (65313, None, None)
    """
    return None if text is None else _cached(_SECONDS, text, _seconds)


def utc_seconds(date: str | None, time: str | None) -> int | None:
    """Seconds since 1970-01-01 00:00 UTC of a date and time of day; None unless both are well-formed.

    >>> utc_seconds("1970.01.02", "00:01:00"), utc_seconds("2024.01.02", None)
    (86460, None)
    """
    days = date_days(date)
    if days is None:
        return None
    seconds = seconds_of_day(time)
    return None if seconds is None else days * 86400 + seconds


def time_control(text: str | None) -> tuple[int | None, int | None]:
    """``(base_seconds, increment_seconds)`` of a TimeControl value; Nones for ``-``, absent or malformed.

    Each part is one to nine ASCII digits (the rule ``speed`` reads); a part
    outside its column's type (int32, int16) is None alone.

    >>> time_control("600+5"), time_control("-"), time_control("1/259200"), time_control(None)
    ((600, 5), (None, None), (None, None), (None, None))
    """
    if text is None:
        return None, None
    base, plus, increment = text.partition("+")
    if not plus or not _nine_digits(base) or not _nine_digits(increment):
        return None, None
    b, i = int(base), int(increment)
    return b, (i if i <= INT16[1] else None)


def _nine_digits(text: str) -> bool:
    return 0 < len(text) <= 9 and text.isascii() and text.isdigit()


def speed(text: str | None) -> str | None:
    """lichess's speed of a TimeControl value (``fastpgn.lichess.speed_of``); None if absent or it names none.

    >>> speed("180+2"), speed("-"), speed(None)
    ('blitz', 'correspondence', None)
    """
    return None if text is None else speed_of(text)


def result(tag: str | None, token: str) -> str:
    """The Result tag if it is a result, else (no Result tag) the movetext's result token, else ``*`` (field 4).

    >>> result("1-0", "0-1"), result(None, "0-1"), result("?", "1-0"), result(None, "")
    ('1-0', '0-1', '*', '*')
    """
    value = token if tag is None else tag
    return value if value in RESULTS else "*"


def _eval(text: str) -> tuple[int | None, int | None]:
    if text.startswith("#"):
        mate = integer(text[1:], (-(1 << 40), 1 << 40))
        return (None, None) if mate is None else (None, max(-MATE_LIMIT, min(MATE_LIMIT, mate)))
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    whole, dot, fraction = text.partition(".")
    if not (whole.isascii() and whole.isdigit()) or (dot and not (fraction.isascii() and fraction.isdigit())):
        return None, None
    if len(whole) > 12:
        return sign * CP_LIMIT, None
    # Exact decimal: the pawns' text shifted two places, half a centipawn rounded away from zero.
    cp = int(whole + (fraction + "00")[:2])
    if fraction[2:3] >= "5":
        cp += 1
    return sign * min(CP_LIMIT, cp), None


def eval_value(text: str | None) -> tuple[int | None, int | None]:
    """One ply's ``%eval`` text as ``(centipawns, mate)``: one of them set, or both None (no eval, malformed).

    Pawns become centipawns exactly (``0.33`` is 33, never 32.99...), clamped
    to int16; ``#N`` is mate in N (negative: Black mates), clamped to int8.

    >>> eval_value("0.33"), eval_value("-1.5"), eval_value("#3"), eval_value("1,5"), eval_value(None)
    ((33, None), (-150, None), (None, 3), (None, None), (None, None))
    >>> eval_value("-400"), eval_value("#-200"), eval_value("0.335"), eval_value("+0.3")
    ((-32767, None), (None, -127), (34, None), (30, None))
    """
    if text is None:
        return None, None
    return _cached(_EVALS, text, _eval)


def eval_columns(evals: list) -> tuple[list | None, list | None]:
    """A game's per-ply eval texts as ``(eval_cp, eval_mate)`` lists; ``(None, None)`` when it has no eval.

    >>> eval_columns(["0.33", None, "#-7"])
    ([33, None, None], [None, None, -7])
    >>> eval_columns([None, None])
    (None, None)
    """
    if evals.count(None) == len(evals):
        return None, None
    pairs = [eval_value(e) for e in evals]
    return [p[0] for p in pairs], [p[1] for p in pairs]


# -- the month partition: one rule for the converter's --partition month and fastpgn.spark --------------------

#: The folder of the games without a date: year 0, month 0, a month no date has (the schema's dates start in
#: year 1). A number, not hive's null folder (``__HIVE_DEFAULT_PARTITION__``): pandas and pyarrow's datasets
#: cannot read a tree that mixes that null with months ("Cannot yet unify dictionaries with nulls"), while
#: ``year=0`` reads as a number in pandas, pyarrow, polars, DuckDB and Spark alike. (Not ``year=0000``:
#: DuckDB would read every year as text.)
UNDATED_FOLDER = "year=0/month=00"


def month_folder(month: int | None) -> str:
    """The hive folder of a month given as ``year * 100 + month`` (None: no date), zero-padded as lichess's release.

    >>> month_folder(202401), month_folder(None)
    ('year=2024/month=01', 'year=0/month=00')
    """
    if month is None:
        return UNDATED_FOLDER
    return f"year={month // 100:04d}/month={month % 100:02d}"


def by_month(batch) -> list:
    """A record batch of this schema split by month of play: ``[(hive folder, its rows in input order), ...]``,
    months in the order of their first row (``month_folder`` names them).

    The month of play is ``utc``'s month, else (a date and no time of day)
    ``date``'s; since ``utc`` is that date's day plus the time, both are the
    month of ``date``, which is what is read. A game without a date goes to
    ``UNDATED_FOLDER``. The converter (``--partition month``) and
    ``fastpgn.spark`` both partition with this.

    >>> import fastpgn
    >>> pgn = (b'[UTCDate "2024.01.31"]\\n[UTCTime "23:59:59"]\\n\\n1. e4 *\\n\\n[Date "2023.12.01"]\\n\\n1. d4 *\\n\\n'
    ...        b'[White "x"]\\n\\n1. c4 *\\n\\n[UTCDate "2024.01.02"]\\n\\n1. f4 *\\n\\n')
    >>> batch = next(iter(fastpgn.read_arrow(pgn)))
    >>> [(folder, rows.column(0).to_pylist()) for folder, rows in by_month(batch.select(["plies", "date"]))]
    [('year=2024/month=01', [1, 1]), ('year=2023/month=12', [1]), ('year=0/month=00', [1])]
    """
    pa = require_pyarrow("--partition month")
    import pyarrow.compute as pc

    date = batch.column(batch.schema.get_field_index("date"))
    if len(date) == 0:
        return []
    if date.null_count == 0:
        # A monthly dump's batches nearly always hold one month: the first and last date say so at a
        # fraction of the cost of a month per row.
        low, high = (d.as_py() for d in pc.min_max(date).values())
        if (low.year, low.month) == (high.year, high.month):
            return [(month_folder(low.year * 100 + low.month), batch)]
    keys = pc.add(pc.multiply(pc.year(date), 100), pc.month(date))     # null where date is
    months = pc.unique(keys).to_pylist()
    if len(months) == 1:
        return [(month_folder(months[0]), batch)]
    parts = []
    for month in months:
        mask = pc.is_null(keys) if month is None else pc.fill_null(pc.equal(keys, pa.scalar(month, keys.type)), False)
        parts.append((month_folder(month), batch.filter(mask)))
    return parts


__all__ = ["COLUMNS", "Column", "DICTIONARY_COLUMNS", "SOURCE_TAGS", "UCI_COLUMN", "UNDATED_FOLDER", "arrow_schema",
           "by_month", "chosen_names", "columns", "date_days", "eval_columns", "eval_value", "game_id", "int16",
           "month_folder", "names", "result", "seconds_of_day", "speed", "time_control", "utc_seconds"]
