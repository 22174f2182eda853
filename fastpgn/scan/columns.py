"""Pure-Python column sink: a block of games -> the analysis schema's columns as Python lists.

The twin and reference of the compiled column sink: both give equal tables.
It reads the live scanner kernel's ``games_from_block`` records and applies
the value rules of ``fastpgn.schema`` column by column. Values are what
Arrow stores: ``utc`` in seconds since 1970-01-01 UTC, ``date`` in days
since then, ``tags`` as a list of ``(name, value)`` pairs, ``None`` for null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastpgn import scan as _scan, schema
from fastpgn.lichess import game_flags
from fastpgn.scan.analysis import analysis_columns
from fastpgn.scan.contract import HEADERS_REPLAY, ColumnError, ScanResult
from fastpgn.scan.grammar import _GLYPH_NAGS, game_nags, game_offers

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from typing_extensions import Buffer

    from fastpgn.openings import OpeningMap
    from fastpgn.scan._kernel import GameRecord
    from fastpgn.scan.contract import Reject
    from fastpgn.scan.filters import Spec

    Columns = dict[str, list[Any]]

_SEP = "\u2502"
_DEFAULT_OPENINGS: list[OpeningMap] = []  # the shipped map, loaded on first use


def default_openings() -> OpeningMap:
    """The shipped openings map, loaded once a process."""
    if not _DEFAULT_OPENINGS:
        from fastpgn import openings

        _DEFAULT_OPENINGS.append(openings.load())
    return _DEFAULT_OPENINGS[0]


def _opening_codes(headers: list[dict[str, str]], openings: Mapping[bytes, bytes]) -> list[str | None]:
    """Field 10 of the line per game: the map's code for ``ECO│Opening``, None where it gives ``?``."""
    codes = []
    known: dict[str, Any] = {}
    for h in headers:
        key = f"{h.get('ECO', '')}{_SEP}{h.get('Opening', '')}"
        code = known.get(key, known)
        if code is known:
            try:
                code = openings[key.encode()]
            except KeyError:        # a plain dict given as the map
                code = b"?"
            code = known[key] = None if code == b"?" else code.decode("utf-8", "replace")
        codes.append(code)
    return codes


def _replayed(records: list[GameRecord], positions: bool = False, fens: bool = False
              ) -> tuple[list[GameRecord], list[list[str]], list[Reject], list[Any]]:
    """``(records, uci lists, rejects, positions)``: the games whose moves replay, and the others as the converter's
    --uci rejects them; with ``positions`` or ``fens``, each kept game's ``(keys, fens)`` (board.positions)."""
    from fastpgn.board import declared_start, positions as replay_positions, san_to_uci

    kept, uci, rejects, places = [], [], [], []
    for record in records:
        headers, moves = record[2], record[3]
        try:
            fen, chess960 = declared_start(headers.get("FEN"), headers.get("Variant"))
            # What the converter's moves hook replays, a game without moves included (its FEN and Variant checked).
            text = san_to_uci(" ".join(moves), fen, chess960)
            if positions or fens:
                places.append(replay_positions(" ".join(moves), fen, chess960, fens))
        except ValueError as exc:
            rejects.append((getattr(exc, "reason", str(exc)), record[0], record[1], record[8], record[9]))
            continue
        kept.append(record)
        uci.append(text.split(" ") if text else [])
    return kept, uci, rejects, places


def columns_from_block(data: Buffer, start: int, end: int, *, base_offset: int = 0, first_game: int = 0,
                       at_stream_start: bool = True, stop_on_error: bool = False, where: Spec | None = None,
                       openings: Mapping[bytes, bytes] | None = None, uci: bool = False,
                       scan: Callable[..., ScanResult[list[GameRecord]]] | None = None, positions: bool = False,
                       fens: bool = False, headers: bool = False,
                       scan_headers: Callable[..., ScanResult[list[Any]]] | None = None) -> ScanResult[Columns]:
    """The columns of the whole games in ``data[start:end]``: a ScanResult ``(columns, games_read, rejects, filtered)``.

    ``columns`` maps each column name of ``fastpgn.schema.names(uci)`` to a
    list with one value per good game, in schema order; the rest is what
    ``games_from_block(..., where=where)`` answers (a reject is ``(reason,
    error_offset, game_number, start, end)``; ``filtered`` is 0 without
    ``where``, a where_plan). ``openings`` is the map of ``opening_code``
    (None: the column is null; ``default_openings()`` is the shipped map).
    ``scan`` is the ``games_from_block`` to read records with (default: the
    live kernel's; the pure kernel passes its own). With ``uci``, a game whose moves do not
    replay is rejected, as the converter's ``--uci`` rejects it, and with
    ``stop_on_error`` reading stops there; ``positions`` adds the ``zobrist``
    column and ``fens`` the ``fens`` column (each ply's Polyglot key, signed,
    and FEN: ``fastpgn.board.positions``), from the same replay and rejects.
    ``headers`` skips each movetext as ``headers_from_block`` does (``scan_headers``,
    default the live kernel's): the games and rejects are its, and the columns
    made from the moves (``fastpgn.schema.FROM_MOVES``) are left out; it
    cannot be given with ``uci``, ``positions`` or ``fens``.

    >>> pgn = b'[WhiteElo "1500"]\\n\\n1. e4 { [%eval 0.2] } *\\n'
    >>> cols, read, rejects, filtered = columns_from_block(pgn, 0, len(pgn))
    >>> cols["white_elo"], cols["moves"], cols["eval_cp"], cols["tags"], read
    ([1500], [['e4']], [[20]], [[]], 1)
    """
    if headers:
        if uci or positions or fens:
            raise ValueError(HEADERS_REPLAY)
        return _headers_columns(data, start, end, base_offset, first_game, at_stream_start, stop_on_error, where,
                                openings, scan_headers)
    games: Callable[..., ScanResult[list[GameRecord]]] = _scan.kernel.games_from_block if scan is None else scan
    records, read, rejects, filtered = games(data, start, end, base_offset=base_offset, first_game=first_game,
                                             at_stream_start=at_stream_start, stop_on_error=stop_on_error,
                                             where=where)
    uci_lists: list[list[str]] = []
    places: list[Any] = []
    replays = uci or positions or fens
    if replays:
        scanned = records
        records, uci_lists, bad, places = _replayed(records, positions, fens)
        if bad:
            if stop_on_error:
                # Reading stops at the first bad game: the games after it were never read.
                last = bad[0][2]
                after = first_game + read - last
                records_after = sum(1 for r in scanned if r[1] > last)
                rejects_after = sum(1 for r in rejects if r[2] > last)
                records = [r for r in records if r[1] < last]
                uci_lists = uci_lists[:len(records)]
                places = places[:len(records)]
                rejects = [r for r in rejects if r[2] < last] + bad[:1]
                filtered -= after - records_after - rejects_after
                read = last - first_game
            else:
                rejects = sorted(rejects + bad, key=lambda r: r[2])
    columns = _columns(data, records, openings)
    if uci:
        columns["uci"] = uci_lists
    if positions:
        columns["zobrist"] = [p[0] for p in places]
    if fens:
        columns["fens"] = [p[1] for p in places]
    return ScanResult(in_schema_order(columns, schema.names(uci, positions, fens), _SINK), read, rejects, filtered)


def _headers_columns(data: Buffer, start: int, end: int, base_offset: int, first_game: int, at_stream_start: bool,
                     stop_on_error: bool, where: Spec | None, openings: Mapping[bytes, bytes] | None,
                     scan: Callable[..., ScanResult[list[Any]]] | None) -> ScanResult[Columns]:
    """columns_from_block with ``headers``: headers_from_block's games, without the columns made from moves."""
    games: Callable[..., ScanResult[list[Any]]] = _scan.kernel.headers_from_block if scan is None else scan
    found, read, rejects, filtered = games(data, start, end, base_offset=base_offset, first_game=first_game,
                                           at_stream_start=at_stream_start, stop_on_error=stop_on_error, where=where)
    # (each as games_from_block's record of a game without moves: what the columns read)
    records: list[Any] = [(offset, number, tags, [], [], [], result, 0, first, first)
                          for offset, number, tags, result, first, _ in found]
    columns = _columns(data, records, openings)
    names = tuple(name for name in schema.names() if name not in schema.FROM_MOVES)
    for name in schema.FROM_MOVES:
        columns.pop(name, None)
    return ScanResult(in_schema_order(columns, names, _SINK), read, rejects, filtered)


_SINK = "the pure column sink (fastpgn/scan/columns.py)"


def check_columns() -> None:
    """That this sink makes every column of ``fastpgn.schema.COLUMNS`` and no other: a ColumnError naming the
    first that differs and the sink. Run when the pure kernel is loaded (the end of scan/_scan_py.py); every
    block checks its own columns too (``in_schema_order``).

    >>> check_columns()
    """
    made = _columns(b"", [], None)
    made.update({name: [] for name in schema.OPTIONAL})     # (columns_from_block adds them when asked)
    in_schema_order(made, schema.names(uci=True, positions=True, fens=True), _SINK)


def in_schema_order(columns: Columns, names: tuple[str, ...], sink: str) -> Columns:
    """``columns`` in the order of ``names`` (the schema's); ColumnError naming ``sink`` and the first column
    it lacks, one it makes that the schema does not name, or two it makes from one list (the compiled sink's
    two rows of ``_FILLS`` naming one buffer).

    >>> in_schema_order({"b": [1], "a": [2]}, ("a", "b"), "this sink")
    {'a': [2], 'b': [1]}
    >>> in_schema_order({"a": [2]}, ("a", "b"), "this sink")
    Traceback (most recent call last):
    fastpgn.scan.contract.ColumnError: this sink makes no column 'b' of fastpgn.schema.COLUMNS
    """
    for name in names:
        if name not in columns:
            raise ColumnError(f"{sink} makes no column {name!r} of fastpgn.schema.COLUMNS")
    for name in columns:
        if name not in names:
            raise ColumnError(f"{sink} makes a column {name!r} that fastpgn.schema.COLUMNS does not name")
    if len({id(values) for values in columns.values()}) < len(columns):
        owners: dict[int, str] = {}
        for name in names:
            first = owners.setdefault(id(columns[name]), name)
            if first != name:
                raise ColumnError(f"{sink} makes the columns {first!r} and {name!r} from one list")
    return {name: columns[name] for name in names}


def _nags(text: bytes, moves: list[str]) -> list[list[int | None]] | None:
    """The nags column's value of a game: per ply, its NAGs in the order written; None when it has none.

    When the game's text has no ``$`` and each of its ``!`` and ``?`` is in a
    main-line move (no glyph apart, in a tag, comment or variation), the
    glyphs of the moves are all its NAGs; else the grammar reads them again
    from the text (``game_nags``).
    """
    if b"$" not in text:
        marks = text.count(b"!") + text.count(b"?")
        if not marks:
            return None
        glyphs = [_GLYPH_NAGS.get(m[len(m.rstrip("!?")):].encode(), 0) if m[-1] in "!?" else 0 for m in moves]
        if marks == sum(len(m) - len(m.rstrip("!?")) for m in moves):
            return [[g] if g else [] for g in glyphs]
    pairs = game_nags(text)
    if not pairs:
        return None
    per_ply: list[list[int | None]] = [[] for _ in moves]
    for ply, nag in pairs:
        per_ply[ply].append(nag)
    return per_ply


def _offers(text: bytes) -> tuple[list[int | None] | None, list[int | None] | None]:
    """The white_draw_offers and black_draw_offers values of a game: the plies (1 the first move) after which
    each side's offer is written, in order (None over int16); None for a side with none."""
    pairs = game_offers(text)
    sides: tuple[list[int | None], list[int | None]] = ([], [])
    for ply, side in pairs:
        sides[side].append(ply + 1 if ply + 1 <= schema.INT16[1] else None)
    return sides[0] or None, sides[1] or None


def _columns(data: Any, records: list[GameRecord], openings: Mapping[bytes, bytes] | None) -> Columns:
    headers = [r[2] for r in records]
    moves = [r[3] for r in records]

    def tag(name: str) -> list[str | None]:
        return [h.get(name) for h in headers]

    def number(name: str) -> list[int | None]:
        return [schema.int16(h.get(name)) for h in headers]

    dates = [h.get("UTCDate", h.get("Date")) for h in headers]
    times = [h.get("UTCTime", h.get("Time")) for h in headers]
    time_controls = tag("TimeControl")
    clocks = [schema.time_control(tc) for tc in time_controls]
    evals = [schema.eval_columns(r[4]) for r in records]
    texts = [bytes(data[r[8]:r[9]]) for r in records]     # each game's text (its NAGs and offers read again)
    source = schema.SOURCE_TAGS
    columns: Columns = {
        "game_id": [schema.game_id(h.get("Site")) for h in headers],
        "site": tag("Site"),
        "event": tag("Event"),
        "utc": list(map(schema.utc_seconds, dates, times)),
        "date": list(map(schema.date_days, dates)),
        "white": tag("White"),
        "black": tag("Black"),
        "white_elo": number("WhiteElo"),
        "black_elo": number("BlackElo"),
        "white_rating_diff": number("WhiteRatingDiff"),
        "black_rating_diff": number("BlackRatingDiff"),
        "white_title": tag("WhiteTitle"),
        "black_title": tag("BlackTitle"),
        "result": [schema.result(h.get("Result"), r[6]) for h, r in zip(headers, records)],
        "termination": tag("Termination"),
        "time_control": time_controls,
        "base_seconds": [c[0] for c in clocks],
        "increment_seconds": [c[1] for c in clocks],
        "speed": list(map(schema.speed, time_controls)),
        "eco": tag("ECO"),
        "opening": tag("Opening"),
        "opening_code": _opening_codes(headers, openings) if openings is not None else [None] * len(headers),
        "variant": tag("Variant"),
        "fen": tag("FEN"),
        "plies": [len(m) if len(m) <= schema.INT16[1] else None for m in moves],
        "mate": [bool(m) and "#" in m[-1] for m in moves],
        "moves": moves,
        "eval_cp": [e[0] for e in evals],
        "eval_mate": [e[1] for e in evals],
        "clock": [c if c.count(None) != len(c) else None for c in (r[5] for r in records)],
        "nags": [_nags(text, r[3]) for text, r in zip(texts, records)],
    }
    columns.update(analysis_columns(headers, moves, evals, columns["clock"], clocks))
    offers = [_offers(text) for text in texts]
    columns["white_draw_offers"] = [o[0] for o in offers]
    columns["black_draw_offers"] = [o[1] for o in offers]
    columns["flags"] = [list(game_flags(h, len(m))) or None for h, m in zip(headers, moves)]
    columns["byte_offset"] = [r[0] for r in records]
    columns["tags"] = [[(k, v) for k, v in h.items() if k not in source] for h in headers]
    return columns


__all__ = ["check_columns", "columns_from_block", "default_openings", "in_schema_order"]
