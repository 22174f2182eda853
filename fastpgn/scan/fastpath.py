"""The pure kernel's fast path: lichess-shaped games read with whole-string operations.

Pure Python only (the compiled twin needs none). It recognises a game written
the way lichess writes them, or hands it back to the byte walk of
fastpgn.scan.grammar; it never reports an error and never decides a boundary the
byte walk would not. Which path reads a game is decided here alone (_each_game), for every sink;
a sink writes what it is handed: a fast read with its own fast writer
(scan/lines.py's _fast_line, scan/records.py's _fast_record) or a _Game.
"""

from __future__ import annotations

from operator import itemgetter

from fastpgn.scan.grammar import _clock_seconds, _eval_ok, _eval_value, _first_ply, _Game, _san_ok, _scan_game

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from typing import Any

    from fastpgn.scan.filters import _Where

    #: A fast read: _fast_game's (end, blank, tags, scan), _fast_where's, or _fast_headers' (end, headers, result).
    Fast = tuple[Any, ...]

# ---------------------------------------------------------------- fast path (pure Python only)
#
# lichess writes every game alike: one [Name "value"] per line, a blank line,
# the movetext on one line, single spaces between tokens, comments only
# { [%eval x] [%clk h:mm:ss] }. Looking at that one byte at a time, as the
# functions above do, costs CPython ten times more than cutting it with
# split/join/count and looking tokens up in caches of tokens that the exact
# functions above already accepted (_learn_*). So _each_game, the one loop
# the sinks read games from, first tries _fast_game, which recognises that
# shape or returns None; on None it scans the game again from its first byte
# with _scan_game. The fast path never
# reports an error and never decides a boundary _scan_game would not: it only
# accepts text on which _scan_game's answer is certain. The Cython twin has no
# fast path and needs none; tests/scan/test_scan_py_fastpath.py compares the two
# paths on mutated real games.

_RESULT_TOKENS = frozenset((b"1-0", b"0-1", b"1/2-1/2", b"*"))
_CACHE_LIMIT = 200_000   # a cache that grows past this (hostile input) starts again
_SAN: set[bytes] = set()  # tokens _movetext reads as SAN moves
_NUMBERS: dict[bytes, int] = {}  # move number tokens ("12.", "12...") -> the ply _first_ply gives
_NUMBER_SET: set[bytes] = set()  # the same tokens, for set operations
_EVALS: dict[bytes, bytes] = {}  # "0.17]" (the token before "}") -> "0.17"
_CLOCKS: dict[bytes, bytes] = {}  # "0:03:00]" -> b"180"
_COUNTS = [str(n).encode() for n in range(1000)]
_WHITE_NUMBERS = [b"%d." % n for n in range(1, 1000)]                   # 1. 2. 3. ...
_PLY_NUMBERS = [b"%d%s" % (n // 2 + 1, b"..." if n % 2 else b".") for n in range(1998)]  # 1. 1... 2.
_LAYOUTS = {  # (4th token, 6th token) -> (tokens a ply, index of the eval value, of the clock value)
    (b"[%eval", b"[%clk"): (8, 4, 6),
    (b"[%clk", b"}"): (6, 0, 4),
    (b"[%eval", b"}"): (6, 4, 0),
}
_TAG_LAYOUTS: dict[bytes, tuple[bytes, ...]] = {}  # a tag section's text outside the quotes -> its names
_TAG_LAYOUTS_TEXT: dict[str, tuple[str, ...]] = {}  # the same in str (apart: b"x" and "x" hash alike)


def _learn_san(tok: bytes) -> bool:
    """Whether _movetext reads ``tok`` as a valid SAN move; remember it if so."""
    c = tok[0] if tok else 42
    if (48 <= c <= 57 and not tok.startswith(b"0-0")) or c == 42 or not _san_ok(tok):
        return False
    if len(_SAN) > _CACHE_LIMIT:
        _SAN.clear()
    _SAN.add(tok)
    return True


def _learn_number(tok: bytes) -> bool:
    """Whether _movetext reads ``tok`` whole as a move number (digits, then dots); remember it if so."""
    digits = tok.rstrip(b".")
    if not digits.isdigit() or tok.startswith(b"0-0"):
        return False
    if len(_NUMBERS) > _CACHE_LIMIT:
        _NUMBERS.clear()
        _NUMBER_SET.clear()
    _NUMBERS[tok] = _first_ply(tok, 0, len(tok))
    _NUMBER_SET.add(tok)
    return True


def _learn_eval(raw: bytes) -> bytes | None:
    """``raw`` is ``value]``: the value _comment reads for ``[%eval value]``, or None."""
    value = raw[:-1]
    if raw[-1:] != b"]" or not _eval_ok(value):
        return None
    value = _eval_value(value)
    if len(_EVALS) > _CACHE_LIMIT:
        _EVALS.clear()
    _EVALS[raw] = value
    return value


def _learn_clock(raw: bytes) -> bytes | None:
    """``raw`` is ``H:MM:SS]``: the seconds _comment reads for ``[%clk H:MM:SS]``, or None."""
    value = raw[:-1]
    seconds = _clock_seconds(value) if raw[-1:] == b"]" else None
    if seconds is None:  # (digits, ':' and '.' only, when not None)
        return None
    if len(_CLOCKS) > _CACHE_LIMIT:
        _CLOCKS.clear()
    _CLOCKS[raw] = seconds
    return seconds


def _all_known(known: set[bytes], toks: Collection[bytes], learn: Callable[[bytes], bool]) -> bool:
    """Whether every token is in ``known`` or ``learn`` accepts it."""
    if known.issuperset(toks):
        return True
    for tok in toks:
        if tok not in known and not learn(tok):
            return False
    return True


def _values(cache: dict[bytes, bytes], raws: list[bytes],
            learn: Callable[[bytes], bytes | None]) -> tuple[bytes, ...] | None:
    """The cached values of ``raws`` (a tuple; learning new ones), or None if one is not valid."""
    try:
        return itemgetter(*raws)(cache) if len(raws) > 1 else (cache[raws[0]],)
    except KeyError:
        pass
    values = []
    for raw in raws:
        value = cache.get(raw)
        if value is None:
            value = learn(raw)
            if value is None:
                return None
        values.append(value)
    return tuple(values)


def _learn_tag_layout(key: Any) -> Any:
    """The names of a tag section whose text outside the quotes is ``key``, if plain; else None.

    Plain: ``[Name "`` then ``"]\n[Name "`` per line, then ``"]``: one space
    before each value, names without spaces, tabs, CR, LF, quotes, ``]``,
    backslashes (what _tags_on_line reads as one pair per line). ``key`` and
    the names are both bytes or both str.
    """
    text = isinstance(key, str)
    parts = (key.encode() if text else key).split(b'"')
    if len(parts) < 2 or parts[-1] != b"]":
        return None
    names: Any = []     # (a list, then the tuple it caches)
    for i, part in enumerate(parts[:-1]):
        head = 1 if i == 0 else 3
        name = part[head:-1]
        if (part[:head] != (b"[" if i == 0 else b"]\n[") or part[-1:] != b" " or not name
                or name.translate(None, b' \t\r\n"]\\') != name):
            return None
        names.append(name.decode() if text else name)
    known = _TAG_LAYOUTS_TEXT if text else _TAG_LAYOUTS
    if len(known) > _CACHE_LIMIT:
        known.clear()
    names = known[key] = tuple(names)
    return names


def _fast_tags(t: bytes, text: bool) -> tuple[Any, Any, Any] | None:
    """``(pieces, key, names)`` of a tag section of one ``[Name "value"]`` per line, or None.

    ``t`` starts with ``[``. ``pieces`` is ``t`` cut at the quotes, so the
    values are ``pieces[1::2]``, and ``key`` the text outside the quotes
    (what _learn_tag_layout checks once per distinct key); with ``text``,
    all three are str (None when ``t`` is not UTF-8). Quotes, backslashes,
    CR or LF in values, several pairs on a line or any other spacing give
    None.
    """
    if b"\\" in t or b"\r" in t:
        return None
    # The same steps in str and in bytes, written out twice so each is typed.
    if text:
        try:
            doc = t.decode("utf-8")
        except UnicodeDecodeError:
            return None
        doc_pieces = doc.split('"')
        if not len(doc_pieces) & 1:
            return None
        doc_key = '"'.join(doc_pieces[::2])
        doc_names = _TAG_LAYOUTS_TEXT.get(doc_key) or _learn_tag_layout(doc_key)
        if doc_names is None or doc.count("\n") != len(doc_names) - 1:
            return None
        return doc_pieces, doc_key, doc_names
    pieces = t.split(b'"')
    if not len(pieces) & 1:
        return None
    key = b'"'.join(pieces[::2])
    names = _TAG_LAYOUTS.get(key) or _learn_tag_layout(key)
    # Each joint holds one LF: no more anywhere, so no value spans lines.
    if names is None or t.count(b"\n") != len(names) - 1:
        return None
    return pieces, key, names


def _fast_tokens(toks: list[bytes], i: int, moves: list[bytes], evals: list[bytes | None], clocks: list[bytes | None],
                 first_ply: int) -> int | None:
    """_movetext over single-spaced tokens from ``toks[i]``: numbers, SAN, eval/clock comments.

    Appends to ``moves``/``evals``/``clocks``; returns the first ply, or None
    for any other token (results included: the caller took the last one off).
    """
    n = len(toks)
    while i < n:
        tok = toks[i]
        i += 1
        if tok in _SAN:
            moves.append(tok)
            evals.append(None)
            clocks.append(None)
        elif tok in _NUMBERS:
            if not moves:
                first_ply = _NUMBERS[tok]
        elif tok == b"{":
            ply = len(moves) - 1
            while True:
                if i >= n:
                    return None
                tok = toks[i]
                if tok == b"}":
                    i += 1
                    break
                if i + 1 >= n:
                    return None
                raw = toks[i + 1]
                i += 2
                if tok == b"[%eval":
                    value = _EVALS.get(raw) or _learn_eval(raw)
                    if value is None:
                        return None
                    if ply >= 0 and evals[ply] is None:
                        evals[ply] = value
                elif tok == b"[%clk":
                    value = _CLOCKS.get(raw) or _learn_clock(raw)
                    if value is None:
                        return None
                    if ply >= 0 and clocks[ply] is None:
                        clocks[ply] = value
                else:
                    return None
        elif tok == b"":  # two spaces
            continue
        elif _learn_san(tok):
            moves.append(tok)
            evals.append(None)
            clocks.append(None)
        elif _learn_number(tok):
            if not moves:
                first_ply = _NUMBERS[tok]
        else:
            return None
    return first_ply


def _first_number(numbers: list[bytes], expected: list[bytes]) -> int | None:
    """The ply the first of ``numbers`` names if all are move numbers, else None.

    ``expected`` is lichess's own numbering from move 1 (compared, not hashed).
    """
    if numbers == expected[:len(numbers)]:
        return 0
    if _all_known(_NUMBER_SET, numbers, _learn_number):
        return _first_ply(numbers[0], 0, len(numbers[0]))
    return None


def _fast_movetext(m: bytes) -> tuple[Any, ...] | None:
    """``(moves, evals, clocks, result, first_ply, mixed)`` of one movetext line, or None.

    ``evals``/``clocks`` are None when no ply has one, else one entry per
    ply; an entry is None (a ply without one) only where ``mixed`` is true.
    The lichess layouts are cut with list slices: ``1. e4 e5 2. Nf3`` (3
    tokens a move pair), ``1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5``
    (8 a ply) and ``{ [%clk ...] }`` or ``{ [%eval ...] }`` (6); a short
    tail or any other mix goes through _fast_tokens. The last token must be
    the result, and may be the only one.
    """
    if b"--+" in m or b"+--" in m:
        return None     # ChessBase's forfeit results, not a null move with check: the byte walk reads them
    toks = m.split(b" ")
    result = toks.pop()
    count = len(toks)
    if result not in _RESULT_TOKENS:
        return None
    if not toks:  # a game lost before its first move: only the result
        return toks, None, None, result, -1, False
    if count < 3 or toks[2] != b"{":
        first_ply = _first_number(toks[::3], _WHITE_NUMBERS)
        if first_ply is None:
            return _fast_any(toks, result)
        del toks[::3]
        if _all_known(_SAN, toks, _learn_san):
            return toks, None, None, result, first_ply, False
        return _fast_any(m.split(b" ")[:-1], result)
    layout = _LAYOUTS.get((toks[3], toks[5])) if count > 5 else None
    if layout is None or count < layout[0]:
        return _fast_any(toks, result)
    period, eval_at, clock_at = layout
    plies = count // period
    body = toks if plies * period == count else toks[:plies * period]
    if not (body[2::period].count(b"{") == plies and body[period - 1::period].count(b"}") == plies
            and body[3::period].count(toks[3]) == plies
            and (period == 6 or body[5::period].count(b"[%clk") == plies)):
        return _fast_any(toks, result)
    first_ply = _first_number(body[::period], _PLY_NUMBERS)
    moves = body[1::period]
    if first_ply is None or not _all_known(_SAN, moves, _learn_san):
        return _fast_any(toks, result)
    evals: Any = _values(_EVALS, body[eval_at::period], _learn_eval) if eval_at else None     # (a tuple, then a list)
    clocks: Any = _values(_CLOCKS, body[clock_at::period], _learn_clock) if clock_at else None
    if (eval_at and evals is None) or (clock_at and clocks is None):
        return None  # a value _comment rejects: the byte walk reports it
    if plies * period == count:
        return moves, evals, clocks, result, first_ply, False
    # A short tail (a last move without its eval, say): token by token.
    evals = [None] * plies if evals is None else list(evals)
    clocks = [None] * plies if clocks is None else list(clocks)
    first_ply = _fast_tokens(toks, plies * period, moves, evals, clocks, first_ply)
    return None if first_ply is None else (moves, evals, clocks, result, first_ply, True)


def _fast_any(toks: list[bytes], result: bytes) -> tuple[Any, ...] | None:
    """_fast_movetext's answer for a token list no layout fits: _fast_tokens from the start."""
    moves: list[bytes] = []
    evals: list[bytes | None] = []
    clocks: list[bytes | None] = []
    first_ply = _fast_tokens(toks, 0, moves, evals, clocks, -1)
    return None if first_ply is None else (moves, evals, clocks, result, first_ply, True)


def _fast_shape(buf: bytes, pos: int, end: int) -> tuple[int, int, int, int] | None:
    """``(blank, start, stop, game_end)`` of the game at ``pos`` if it has _fast_game's layout, else None.

    The layout: a tag section up to the first blank line (at ``blank``), one
    movetext line ``buf[start:stop]``, then the end of the block, or
    newlines and the next game's ``[`` (at ``game_end``).
    """
    blank = buf.find(b"\n\n", pos, end)
    if blank < 0:
        return None
    start = blank + 2
    stop = buf.find(b"\n", start, end)
    if stop < 0:
        stop = game_end = end
    elif buf.startswith(b"\n\n[", stop, end):
        game_end = stop + 2
    else:
        game_end = stop
        while game_end < end and buf[game_end] == 10:
            game_end += 1
        if game_end < end and buf[game_end] != 91:
            return None
    if buf.find(b"\0", pos, game_end) >= 0:     # rejected by _scan_game
        return None
    return blank, start, stop, game_end


def _fast_game(buf: bytes, pos: int, end: int, text: bool) -> Fast | None:
    """The game at ``pos`` (a ``[``) if it has lichess's shape, else None.

    Returns ``(end, tags_end, tags, scan)``: where the game ends (as
    _scan_game's ``end``), where its tag section ends, and _fast_tags's and
    _fast_movetext's answers.

    The shape: tag lines, one blank line, one movetext line, then the end
    of the block, or newlines and the next game's ``[``.
    """
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], text)
    if tags is None:
        return None
    scan = _fast_movetext(buf[start:stop])
    if scan is None:
        return None
    return game_end, blank, tags, scan


_NOT_BRACES = bytes(c for c in range(256) if c not in b"{}")
_BRACE_PAIRS = b"{}" * 4096


def _fast_skips(buf: bytes, start: int, stop: int) -> bytes | None:
    """The result token _skip_movetext reads on movetext line ``buf[start:stop]`` of _fast_shape's layout
    (``b""`` for none), if it reads the line to its end without error; else None.

    Certain when: the line does not start a tag line or an escape, its braces
    pair up in order (no comment spans lines, no stray ``}``), it has no
    variation or ``;`` comment, no result other tools write (dashes, ``½``,
    ``+--``) or forum wrapper, and no result token can stand before its last
    token (no ``1-0``, ``0-1``, ``1/2``, ``*`` there).
    """
    m = buf[start:stop]
    if not m or m[0] in b" \t[%\r" or b"(" in m or b")" in m or b";" in m:
        return None
    if b"\xe2" in m or b"\xc2" in m or b"--" in m or b"n]" in m or b"N]" in m:
        return None     # a result another tool writes (1\u20130, \u00bd-\u00bd, +--) or a forum's [/pgn]: the byte walk
    if b"{" in m or b"}" in m:
        braces = m.translate(None, _NOT_BRACES)
        if len(braces) & 1 or len(braces) > len(_BRACE_PAIRS) or braces != _BRACE_PAIRS[:len(braces)]:
            return None
    space = m.rfind(b" ")
    last = m[space + 1:]
    result = last in _RESULT_TOKENS
    head = m[:max(space, 0)] if result else m
    if b"1-0" in head or b"0-1" in head or b"1/2" in head or b"*" in head:
        return None
    return last if result else b""


def _any_value(values: list[Any] | None, mixed: bool) -> bool:
    """Whether a _fast_movetext eval or clock list holds a value for some ply."""
    if values is None:
        return False
    return values.count(None) < len(values) if mixed else len(values) > 0


def _fast_where(buf: bytes, pos: int, end: int, text: bool, where: _Where) -> Fast | None:
    """_fast_game with a filter: its answer for a game ``where`` keeps, ``(end, tags_end, None, None)``
    for one it drops, None where the byte walk must decide."""
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], text)
    if tags is None:
        return None
    pieces, _, names = tags
    if not where.keep_tags(zip(names, pieces[1::2]), text):
        return None if _fast_skips(buf, start, stop) is None else (game_end, blank, None, None)
    scan = _fast_movetext(buf[start:stop])
    if scan is None:
        return None
    if where.needs_moves and not where.keep_moves(len(scan[0]), _any_value(scan[1], scan[5]),
                                                  _any_value(scan[2], scan[5])):
        return game_end, blank, None, None
    return game_end, blank, tags, scan


def _fast_headers(buf: bytes, pos: int, end: int, where: _Where | None) -> Fast | None:
    """headers_from_block's ``(end, headers, result)`` of the game at ``pos`` (a ``[``), ``(end, None, None)``
    if ``where`` drops it, or None where the byte walk must decide."""
    if where is not None and where.needs_moves:
        return None
    shape = _fast_shape(buf, pos, end)
    if shape is None:
        return None
    blank, start, stop, game_end = shape
    tags = _fast_tags(buf[pos:blank], True)
    if tags is None:
        return None
    result = _fast_skips(buf, start, stop)
    if result is None:
        return None
    pieces, _, names = tags
    if where is not None and not where.keep_tags(zip(names, pieces[1::2]), True):
        return game_end, None, None
    return game_end, dict(zip(names, pieces[1::2])), result.decode("ascii")


def _fast_as_game(start: int, fast: Fast) -> _Game:
    """A _Game holding what _fast_game read, for the general code of the front ends."""
    end, _, (pieces, _, names), (moves, evals, clocks, result, first_ply, _) = fast
    game = _Game(start)
    game.end = end
    game.tags = list(zip(names, pieces[1::2]))
    game.moves = moves
    game.evals = [None] * len(moves) if evals is None else evals
    game.clocks = [None] * len(moves) if clocks is None else clocks
    game.result = result
    game.first_ply = first_ply
    return game


def _each_game(buf: bytes, pos: int, end: int, where: _Where | None, text: bool, headers: bool = False
               ) -> Iterator[tuple[int, Fast | None, _Game | None]]:
    """The games of ``buf[pos:end]`` as the grammar reads them, each as ``(start, fast, game)``: the one
    place the pure twin chooses between its fast path and the byte walk.

    - ``(start, fast, None)``: a game the fast path read and ``where`` keeps;
      ``fast`` is _fast_game's answer (or with ``headers``, _fast_headers')
      for ``text`` tags, or _fast_as_game(start, fast) as a _Game;
    - ``(start, None, None)``: a game the fast path read and ``where`` refused;
    - ``(start, None, game)``: a _Game read by _scan_game (``game.bad``,
      ``game.filtered`` say whether it is rejected or refused).

    ``headers`` skips each game's movetext (headers_from_block).
    """
    while True:
        if pos < end and buf[pos] == 91:
            if headers:
                fast = _fast_headers(buf, pos, end, where)
                if fast is not None:
                    yield pos, (fast if fast[1] is not None else None), None
                    pos = fast[0]
                    continue
            else:
                fast = _fast_game(buf, pos, end, text) if where is None else _fast_where(buf, pos, end, text, where)
                if fast is not None:
                    yield pos, (fast if fast[2] is not None else None), None
                    pos = fast[0]
                    continue
        game = _scan_game(buf, pos, end, where, headers)
        if game is None:
            return
        yield game.start, None, game
        pos = game.end
