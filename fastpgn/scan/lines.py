"""The 22-field line sink, pure Python: twin of fastpgn/scan/lines.pxi and scan/output.pxi.

Writes python-lichess-db-pgn-parser's line for each game the grammar
(fastpgn.scan.grammar) reads: fields from the tags, SAN moves or a moves hook's
(validation, UCI), evals and clocks, opening codes from the openings map.
fastpgn.oneliner reads the line back.
"""

from __future__ import annotations

from operator import itemgetter

from fastpgn.scan import fastpath as _fastpath_py
from fastpgn.scan.contract import ScanResult
from fastpgn.scan.fastpath import _COUNTS, _each_game, _fast_as_game
from fastpgn.scan.filters import where_plan
from fastpgn.scan.grammar import (  # noqa: F401  (SEP, LINE_TAGS: the kernel's public names)
    _RESULT_CODE,
    _SLOT,
    _TERMINATION_CODE,
    LINE_TAGS,
    S_BDIFF,
    S_BELO,
    S_BLACK,
    S_BTITLE,
    S_DATE,
    S_ECO,
    S_OPENING,
    S_RESULT,
    S_SITE,
    S_TC,
    S_TERMINATION,
    S_TIME,
    S_UTCDATE,
    S_UTCTIME,
    S_WDIFF,
    S_WELO,
    S_WHITE,
    S_WTITLE,
    SEP,
    _as_bytes,
    _first,
    _Game,
)

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from typing_extensions import Buffer

    from fastpgn.scan._kernel import MovesHook
    from fastpgn.scan.filters import Spec

_DAY_SECONDS: dict[bytes, bytes] = {}  # UTCTime value -> _seconds_of_day(value)
_LINE_PLANS: dict[bytes, itemgetter[Any]] = {}  # a _TAG_LAYOUTS key -> an itemgetter of _fast_line's tag values
_ECO_FIELDS: dict[bytes, bytes] = {}  # a code from the openings map -> _field(code)

def _line_plan(names: tuple[bytes, ...]) -> itemgetter[Any]:
    """An itemgetter of _fast_line's 16 tag values from ``pieces + [b"", movetext result]``."""
    at: dict[bytes, int] = {}
    for i, name in enumerate(names):
        at[name] = 2 * i + 1  # the last of two same names wins, as in _line
    empty = 2 * len(names) + 1
    get: Callable[..., Any] = lambda name, default=empty: at.get(name, default)  # noqa: E731
    return itemgetter(
        get(b"Site"), get(b"UTCDate", get(b"Date")), get(b"UTCTime", get(b"Time")),
        get(b"Result", empty + 1), get(b"Termination"), get(b"ECO"), get(b"Opening"),
        get(b"TimeControl"), get(b"White"), get(b"WhiteElo"), get(b"WhiteRatingDiff"),
        get(b"WhiteTitle"), get(b"Black"), get(b"BlackElo"), get(b"BlackRatingDiff"),
        get(b"BlackTitle"),
    )


def _fast_line(tags: tuple[Any, Any, Any], scan: tuple[Any, ...], openings: Mapping[bytes, bytes] | None) -> bytes:
    """_line for a game _fast_game read whose tags hold no separator (nor CR, LF)."""
    pieces, key, names = tags
    moves, evals, clocks, result, _, mixed = scan
    plan = _LINE_PLANS.get(key)
    if plan is None:
        if len(_LINE_PLANS) > _fastpath_py._CACHE_LIMIT:
            _LINE_PLANS.clear()
        plan = _LINE_PLANS[key] = _line_plan(names)
    pieces.append(b"")
    pieces.append(result)
    (site, date, time, played, termination, eco, opening, time_control, white, white_elo,
     white_diff, white_title, black, black_elo, black_diff, black_title) = plan(pieces)
    day_seconds = _DAY_SECONDS.get(time)
    if day_seconds is None:
        day_seconds = _seconds_of_day(time)
        if len(_DAY_SECONDS) > _fastpath_py._CACHE_LIMIT:
            _DAY_SECONDS.clear()
        _DAY_SECONDS[time] = day_seconds
    mate = b"#" in moves[-1] if moves else False
    if evals is None:
        evals = ()
    elif mixed:
        evals = [e for e in evals if e is not None]
    if clocks is None:
        clocks = ()
    elif mixed:
        clocks = [c for c in clocks if c is not None]
    if openings is not None:
        try:
            eco = openings[eco + SEP + opening]
        except KeyError:
            eco = b"?"
        clean = _ECO_FIELDS.get(eco)
        if clean is None:
            if len(_ECO_FIELDS) > _fastpath_py._CACHE_LIMIT:
                _ECO_FIELDS.clear()
            clean = _ECO_FIELDS[eco] = _field(eco)
        eco = clean
    plies = len(moves)
    return SEP.join((
        site[site.rfind(b"/") + 1:],
        date.replace(b".", b""),
        day_seconds,
        _RESULT_CODE.get(played, b"*"),
        _TERMINATION_CODE.get(termination, b"*"),
        b"Y" if mate else b"N",
        b"Y" if evals else b"N",
        b"Y" if clocks else b"N",
        _COUNTS[plies] if plies < 1000 else str(plies).encode(),
        eco,
        time_control,
        white,
        white_elo,
        white_diff,
        white_title,
        black,
        black_elo,
        black_diff,
        black_title,
        b" ".join(moves),
        b" ".join(evals) + b" #" if evals and mate else b" ".join(evals),
        b" ".join(clocks) + b"\n",
    ))


# ---------------------------------------------------------------- front ends

def _field(value: bytes) -> bytes:
    if SEP in value:
        value = value.replace(SEP, b"")
    if b"\n" in value or b"\r" in value:
        value = value.replace(b"\n", b"").replace(b"\r", b"")
    return value


def _seconds_of_day(value: bytes) -> bytes:
    parts = value.split(b":")
    if len(parts) != 3 or not all(p.isdigit() and 1 <= len(p) <= 2 for p in parts):
        return b""
    h, m, s = (int(p) for p in parts)
    if h > 23 or m > 59 or s > 60:
        return b""
    return str(h * 3600 + m * 60 + s).encode()


def _line(game: _Game, openings: Mapping[bytes, bytes] | None) -> bytes:
    slots: list[bytes | None] = [None] * len(LINE_TAGS)
    for name, value in game.tags:
        i = _SLOT.get(name)
        if i is not None:
            slots[i] = value
    get: Callable[[int], bytes] = lambda i: slots[i] or b""  # noqa: E731  (an empty value is b"" either way)
    site = get(S_SITE)
    gid = site[site.rfind(b"/") + 1:]
    utc_date, utc_time, played = slots[S_UTCDATE], slots[S_UTCTIME], slots[S_RESULT]
    date = utc_date if utc_date is not None else get(S_DATE)
    time = utc_time if utc_time is not None else get(S_TIME)
    result = played if played is not None else game.result
    moves = game.moves
    mate = b"Y" if moves and b"#" in moves[-1] else b"N"
    evals = [e for e in game.evals if e is not None]
    clocks = [c for c in game.clocks if c is not None]
    if evals and mate == b"Y":
        evals.append(b"#")
    if openings is None:
        eco = get(S_ECO)
    else:
        try:
            eco = openings[get(S_ECO) + SEP + get(S_OPENING)]
        except KeyError:
            eco = b"?"
    fields = [
        gid,
        _field(date).replace(b".", b""),
        _seconds_of_day(time),
        _RESULT_CODE.get(result, b"*"),
        _TERMINATION_CODE.get(get(S_TERMINATION), b"*"),
        mate,
        b"Y" if evals else b"N",
        b"Y" if clocks else b"N",
        str(len(moves)).encode(),
        eco,
        get(S_TC),
        get(S_WHITE),
        get(S_WELO),
        get(S_WDIFF),
        get(S_WTITLE),
        get(S_BLACK),
        get(S_BELO),
        get(S_BDIFF),
        get(S_BTITLE),
    ]
    fields = [_field(f) for f in fields]
    fields.append(b" ".join(moves) if game.moves_field is None else game.moves_field)
    fields.append(b" ".join(evals))
    fields.append(b" ".join(clocks))
    return SEP.join(fields) + b"\n"


# The tags a moves hook gets: where the game starts (a hook needs nothing else).
_START_TAGS = frozenset((b"FEN", b"SetUp", b"Variant"))


def opening_table(openings: Mapping[bytes, bytes] | None) -> Mapping[bytes, bytes] | None:
    """``openings`` ready for lines_from_block: here the map itself.

    The compiled kernel copies a plain map into a C table it reads without
    the GIL; call this once per run and pass its result as ``openings``.
    """
    return openings


def lines_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                     at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                     openings: Mapping[bytes, bytes] | None = None, moves_hook: MovesHook | None = None,
                     text: bool = False) -> ScanResult[bytes | list[str]]:
    """Turn the whole games in ``data[start:end]`` into 22-field lines.

    Returns a ScanResult ``(lines, games_read, rejects, filtered)``;
    ``lines`` is bytes, one ``\\n``-terminated line per good game;
    ``rejects`` lists ``(reason, error_offset, game_number, start, end)``
    with ``start``/``end`` indexing ``data``. Offsets in reasons are
    ``base_offset + index``; games are numbered from ``first_game + 1``.
    ``openings`` is the map of field 10 (opening_table's; None: the ECO
    tag as it is). ``moves_hook(moves_bytes, tags)`` returns the bytes of
    field 20 (the SAN itself after validation, or UCI moves) or raises
    PGNError to reject the game; ``tags`` is the list of ``(name, value)``
    bytes pairs of the tags that say where the game starts (FEN, SetUp,
    Variant), in file order. With ``where`` (a where_plan), games it
    refuses get no line and are counted in ``filtered`` (and in
    games_read). With ``text`` the lines come as a list of str, each
    without its ``\\n`` (UTF-8 decoded, a bad byte as U+FFFD), as
    ``read_lines`` yields them.
    """
    buf = _as_bytes(data)
    where = where_plan(where)
    out = []
    rejects = []
    number = first_game
    filtered = 0
    for pos, fast, game in _each_game(buf, _first(buf, start, end, at_stream_start), end, where, False):
        number += 1
        if game is None:
            if fast is None:
                filtered += 1
                continue
            # A separator in a tag value goes to _line, which removes it (b"\xe2" is its first byte).
            if moves_hook is None and (buf.find(b"\xe2", pos, fast[1]) < 0 or buf.find(SEP, pos, fast[1]) < 0):
                out.append(_fast_line(fast[2], fast[3], openings))
                continue
            game = _fast_as_game(pos, fast)
        if game.filtered and not game.bad:
            filtered += 1
            continue
        if not game.bad and moves_hook is not None:
            try:
                replaced = moves_hook(b" ".join(game.moves), [t for t in game.tags if t[0] in _START_TAGS])
            except ValueError as exc:
                game.bad = getattr(exc, "reason", str(exc))
                game.bad_pos = game.start
            else:
                game.moves_field = replaced
        if game.bad:
            rejects.append((game.bad, base_offset + game.bad_pos, number, game.start, game.end))
            if stop_on_error:
                break
            continue
        out.append(_line(game, openings))
    lines: Any = b"".join(out)     # (bytes; with text, its lines as str)
    if text:
        lines = lines.decode("utf-8", "replace").split("\n")
        lines.pop()
    return ScanResult(lines, number - first_game, rejects, filtered)
