"""Infinite Chess Notation (ICN): the short string form and the long JSON form.

This module owns the conversion between the two forms of the infinite chess
project's notation (specification: ``ICN-spec-README.md``, converter
behaviour: ``FormatConverter.js``, both public domain), the single-move
converters, and replaying a game to one of its positions. It knows nothing of
PGN; the PGN bridge (:mod:`fastpgn.formats.icn_pgn`, ``python -m fastpgn
icn``) builds long-form dicts and calls :func:`long_to_short`.

Long form (a dict, as JSON would load it)::

    metadata          {"Event": "...", ...}         tags, always present
    turn              "white" | "black"             only when given
    enpassant         [x, y]                        only when given
    moveRule          "N/M"                         only when given
    fullMove          N                             only when given
    gameRules         {"promotionRanks": [8, 1], "promotionsAllowed":
                       {"white": [...], "black": [...]}, "winConditions":
                       {"white": [...], "black": [...]}, ...extra rules}
    startingPosition  {"x,y": "queensW", ...}       when a piece list is given
    specialRights     {"x,y": True, ...}            the ``+`` marks
    shortposition     "K3,4|..."                    the piece list as written
    moves             ["a,b>c,dX", ...]             compact moves, when given

Short form accepted by :func:`short_to_long` (items are separated by
whitespace and may come in any order; the first move ends the header)::

    icn        := (item | ws)* [moves]
    item       := tag | "w" | "b" | square | N "/" M | N | promotions
                | winconds | json | pieces
    tag        := "[" key ws+ '"' text '"' ws* "]" | "[" key ":" text "]"
    square     := int "," int                  (en passant square)
    promotions := "(" [side] "|" [side] ")"    side := int [";" code ("," code)*]
    winconds   := names | "(" names "|" names ")"     names := name ("," name)*
    json       := a JSON object (may contain spaces; numbers finite, nested
                  at most 63 deep)
    pieces     := code square ["+"] ("|" code square ["+"])*
    moves      := (move | N "." | "." | "|" | "{" comment "}" | ws)*
    move       := [letters] square ws* (">" | "x") ws* square
                  [letters | ws* "=" ws* letters] (ws* ("+" | "#" | [!?]+))*

Piece letters on a move are decoration and are not kept; the promotion
letters are kept as written. A letter run directly followed by a square is
always the piece of the next move. Errors are :class:`FormatError` with the
1-based line and column of the offending character. A number has at most 500
digits.

A long form handed in (a caller's dict, a JSON line) is checked field by field
before it is used: a wrong shape, a non-finite or too long number, nesting
deeper than 64 levels is a :class:`FormatError` naming the field
(``gameRules.promotionRanks[0] must be a whole number, not 'x'``). No input
makes a reader fail another way.

``lenient=True`` reads like the upstream converter: tags are cut out of the
whole string first (comments included), whitespace-separated tokens are
matched first come first served, and what matches nothing is dropped.

Upstream quirks (cases of ``icn_conformance_cases.generated.json``):

==== ============================================ ==========================
case upstream behaviour                            fastpgn (default; lenient)
==== ============================================ ==========================
31   ``1,1>2,2 k3,3>4,4``: the next move's piece   fix: ``k`` starts the next
     letter after a space becomes a promotion      move; lenient reproduces
     (unmarked in the data, yet a quirk)
55   ``{"a": [1, 2]}``: brackets inside the JSON   fix: the JSON is read
     are eaten as a tag, then the JSON fails       whole; lenient raises
56   ``w b``: a second turn becomes a win          fix: error "turn given
     condition ``b``                               twice"; lenient reproduces
57   ``(8|1) (7|2)``: the second promotion entry   fix: error; lenient drops
     is silently dropped                           it
58   ``{comment [x]}``: a bracket inside a         fix: comments are opaque;
     comment becomes the tag ``x``                 lenient reproduces
59   ``1,1>2,2.3,3>4,4``: ``.`` separates moves    reproduce (the spec says so)
60   ``zz3,3``: unknown piece raises               reproduce, with the column
61   ``P1,2+``: a one-piece list with ``+``        reproduce
62   ``[Event "A [nested] name"]``: the value is   fix: the value ends at the
     cut at the first ``]``, the rest becomes a    closing quote; lenient
     win condition                                 reproduces
63   ``""``: an empty game, default win condition  reproduce
64   long form without ``metadata``: TypeError     fix: no tag section, no
                                                   leading blank line
65   ``metadata {}`` and ``moves []`` still write  reproduce (stable output,
     their blank lines                             the parser ignores them)
==== ============================================ ==========================
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from fastpgn.errors import FormatError

__all__ = [
    "PIECE_CODES",
    "game_to_position",
    "generate_special_rights",
    "long_to_short",
    "long_to_short_compact_move",
    "long_to_short_position",
    "long_to_short_position_from_gamerules",
    "short_to_long",
    "short_to_long_compact_move",
]

#: Long piece name (family plus colour ``W``/``B``/``N``) -> ICN code.
PIECE_CODES: Mapping[str, str] = MappingProxyType({
    "kingsW": "K", "kingsB": "k",
    "pawnsW": "P", "pawnsB": "p",
    "knightsW": "N", "knightsB": "n",
    "bishopsW": "B", "bishopsB": "b",
    "rooksW": "R", "rooksB": "r",
    "queensW": "Q", "queensB": "q",
    "amazonsW": "AM", "amazonsB": "am",
    "hawksW": "HA", "hawksB": "ha",
    "chancellorsW": "CH", "chancellorsB": "ch",
    "archbishopsW": "AR", "archbishopsB": "ar",
    "guardsW": "GU", "guardsB": "gu",
    "camelsW": "CA", "camelsB": "ca",
    "giraffesW": "GI", "giraffesB": "gi",
    "zebrasW": "ZE", "zebrasB": "ze",
    "centaursW": "CE", "centaursB": "ce",
    "royalQueensW": "RQ", "royalQueensB": "rq",
    "royalCentaursW": "RC", "royalCentaursB": "rc",
    "knightridersW": "NR", "knightridersB": "nr",
    "obstaclesN": "ob",
    "voidsN": "vo",
})
_PIECE_NAMES = {code: name for name, code in PIECE_CODES.items()}

_DEFAULT_PROMOTIONS = ("queens", "rooks", "bishops", "knights")
_RESERVED_RULES = ("promotionRanks", "promotionsAllowed", "winConditions")
# Upstream writes these tags first, in this order, then the rest as given.
_METADATA_ORDER = (
    "Event", "Site", "Variant", "Round", "UTCDate", "UTCTime", "TimeControl",
    "White", "Black", "WhiteID", "BlackID", "Result", "Termination",
)
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
# Limits on what a game may hold, so that no input can make a reader fail any
# other way than with a FormatError: a number's digits (Python refuses to read
# an int of more than 4300 by default, 640 at the least), and how deep JSON
# values nest (a long form needs 4 levels; a long form counts as the first).
_MAX_DIGITS = 500
_MAX_DEPTH = 64
_TOO_BIG = 10 ** _MAX_DIGITS
_SQUARE_KEY = re.compile(rf"-?[0-9]{{1,{_MAX_DIGITS}}},-?[0-9]{{1,{_MAX_DIGITS}}}\Z")
_MOVE_RULE = re.compile(rf"[0-9]{{1,{_MAX_DIGITS}}}/[0-9]{{1,{_MAX_DIGITS}}}\Z")
# Bare compact moves with canonical numbers (``4,2>4,4|2,7>1,8Q``), as the
# PGN bridge writes them: read with one match and a split, to the same result
# as the token walk (which also reports a number that is too long).
_INT = rf"(?:0|-?[1-9][0-9]{{0,{_MAX_DIGITS - 1}}})"
_COMPACT = rf"{_INT},{_INT}>{_INT},{_INT}[A-Za-z]*"
_COMPACT_RUN = re.compile(rf"{_COMPACT}(?:\|{_COMPACT})*[ \t\r\n]*\Z")


def _default_win_conditions() -> dict:
    return {"white": ["checkmate"], "black": ["checkmate"]}


# --------------------------------------------------------------------------
# Scanning helpers: plain index arithmetic so every error knows its column.

def _error(text: str, at: int, reason: str) -> FormatError:
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return FormatError(reason, line=line, column=column)


def _describe(text: str, at: int) -> str:
    if at >= len(text):
        return "end of text"
    return "whitespace" if text[at].isspace() else f"character {text[at]!r}"


def _skip_ws(text: str, i: int, end: int) -> int:
    while i < end and text[i].isspace():
        i += 1
    return i


def _token_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and not text[i].isspace():
        i += 1
    return i


def _letters_end(text: str, i: int, end: int) -> int:
    while i < end and text[i] in _LETTERS:
        i += 1
    return i


def _int_at(text: str, i: int, end: int) -> tuple[int, int] | None:
    """``(value, next)`` for ``-?digits`` at ``i``, else None."""
    j = i + 1 if i < end and text[i] == "-" else i
    k = j
    while k < end and text[k] in _DIGITS:
        k += 1
    if k == j:
        return None
    if k - j > _MAX_DIGITS:
        raise _error(text, j, f"number of more than {_MAX_DIGITS} digits")
    return int(text[i:k]), k


def _square_at(text: str, i: int, end: int) -> tuple[int, int, int] | None:
    """``(x, y, next)`` for ``int,int`` at ``i``, else None."""
    first = _int_at(text, i, end)
    if first is None or first[1] >= end or text[first[1]] != ",":
        return None
    second = _int_at(text, first[1] + 1, end)
    if second is None:
        return None
    return first[0], second[0], second[1]


def _square_error(text: str, at: int, end: int, what: str = "a square") -> FormatError:
    """The error for a square expected at ``at``, placed where it went wrong."""
    first = _int_at(text, at, end)
    if first is None:
        return _error(text, at, f"expected {what} like 3,4, found {_describe(text, at)}")
    if first[1] >= end or text[first[1]] != ",":
        return _error(text, first[1], f"expected ',' in {what}, found {_describe(text, first[1])}")
    return _error(text, first[1] + 1, f"expected a number after ',' in {what}, found {_describe(text, first[1] + 1)}")


def _key(x: int, y: int) -> str:
    return f"{x},{y}"


def _piece_name(text: str, at: int, code: str) -> str:
    name = _PIECE_NAMES.get(code)
    if name is None:
        raise _error(text, at, f"unknown piece abbreviation {code!r}")
    return name


def _move_starts_at(text: str, i: int, end: int) -> bool:
    """Whether a move number (``12.``) or a move (``P4,2 > 4,4``) starts at ``i``."""
    j = i
    while j < end and text[j] in _DIGITS:
        j += 1
    if j > i and j < end and text[j] == ".":
        return True
    square = _square_at(text, _letters_end(text, i, end), end)
    if square is None:
        return False
    j = _skip_ws(text, square[2], end)
    if j < end and text[j] == ">":
        return True
    if j < end and text[j] == "x":
        return _square_at(text, _skip_ws(text, j + 1, end), end) is not None
    return False


# --------------------------------------------------------------------------
# JSON (the extra rules of the short form, a long form on a line): read with
# its nesting bounded before the decoder sees it, so the decoder's recursion
# stays shallow, and without the numbers JSON cannot hold.

class _BadNumber(Exception):
    """A number token the decoder must not turn into a value: ``token`` and why."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(reason)
        self.token, self.reason = token, reason


def _json_constant(token: str):
    raise _BadNumber(token, f"{token} is not JSON (JSON has no NaN or Infinity)")


def _json_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):  # 1e999: JavaScript reads Infinity, which JSON cannot write back
        raise _BadNumber(token, "number too large")
    return value


def _json_int(token: str) -> int:
    if len(token) - (token[0] == "-") > _MAX_DIGITS:
        raise _BadNumber(token, f"number of more than {_MAX_DIGITS} digits")
    return int(token)


_JSON = json.JSONDecoder(parse_constant=_json_constant, parse_float=_json_float, parse_int=_json_int)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
# A string (to the end of the text when it is not closed) or a bracket.
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\[\s\S])*"?|[\[\]{}]')


def _too_deep(text: str, i: int, limit: int) -> int | None:
    """Where the JSON value at ``i`` opens its ``limit + 1``-th nested level, else None."""
    if text[i:i + 1] not in ("[", "{") or text.count("[", i) + text.count("{", i) <= limit:
        return None
    depth = 0
    for match in _JSON_NESTING.finditer(text, i):
        c = text[match.start()]
        if c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return match.start()
        elif c == "]" or c == "}":
            depth -= 1
            if depth == 0:
                return None
    return None


def _number_at(text: str, i: int, token: str) -> int:
    """Where the number ``token`` first stands outside a string from ``i`` on."""
    pattern = re.compile(r'"(?:[^"\\]|\\[\s\S])*"?|(?<![0-9A-Za-z.+-])' + re.escape(token) + r"(?![0-9A-Za-z.])")
    for match in pattern.finditer(text, i):
        if text[match.start()] != '"':
            return match.start()
    return i  # pragma: no cover - the decoder read the token from the text


def _json_at(text: str, i: int, not_json: str, limit: int) -> tuple[Any, int]:
    """``(value, end)`` of the JSON value at ``i``, nested at most ``limit`` deep.

    Errors name the character: ``not_json`` starts the reason of a syntax error.
    """
    deep = _too_deep(text, i, limit)
    if deep is not None:
        raise _error(text, deep, f"JSON nested deeper than {limit} levels")
    try:
        return _JSON.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        raise _error(text, exc.pos, f"{not_json}: {exc.msg}") from None
    except _BadNumber as exc:
        raise _error(text, _number_at(text, i, exc.token), exc.reason) from None
    except RecursionError:  # the caller itself runs deep in the stack
        raise _error(text, i, "JSON nested too deep") from None


def _read_json(text: str) -> Any:
    """The JSON value that is the whole of ``text``; FormatError with the line and column.

    >>> _read_json('{"fullMove": 1e999}')
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: number too large (line 1, column 14)
    """
    i = _JSON_SPACE.match(text).end()
    value, end = _json_at(text, i, "not JSON", _MAX_DEPTH)
    end = _JSON_SPACE.match(text, end).end()
    if end != len(text):
        raise _error(text, end, "not JSON: Extra data")
    return value


# --------------------------------------------------------------------------
# Header items, strict.

def _read_tag(text: str, i: int) -> tuple[str, str, int]:
    """``[Key "value"]`` or ``[Key: value]`` at ``i``: ``(key, value, next)``."""
    n = len(text)
    j = i + 1
    while j < n and not text[j].isspace() and text[j] not in '":[]':
        j += 1
    if j == i + 1:
        raise _error(text, j, "expected a tag name after '['")
    key = text[i + 1:j]
    if j < n and text[j] == ":":
        close = text.find("]", j)
        if close < 0:
            raise _error(text, i, "unclosed tag '['")
        return key, text[j + 1:close].strip(), close + 1
    k = _skip_ws(text, j, n)
    if k == j or k >= n or text[k] != '"':
        raise _error(text, k, f"expected '\"' or ':' after the tag name, found {_describe(text, k)}")
    # The value ends at the quote that closes the tag, so '[', ']' and even
    # '"' may appear inside it (upstream cut it at the first ']').
    q = k + 1
    while True:
        q = text.find('"', q)
        if q < 0:
            raise _error(text, k, "unclosed tag value")
        close = _skip_ws(text, q + 1, n)
        if close < n and text[close] == "]":
            return key, text[k + 1:q], close + 1
        q += 1


def _read_rules_json(text: str, i: int, rules: dict) -> int:
    # The rules sit one level down in the long form (gameRules).
    value, end = _json_at(text, i, "extra game rules are not valid JSON", _MAX_DEPTH - 1)
    if not isinstance(value, dict):
        raise _error(text, i, "extra game rules must be a JSON object")
    rules.update(value)
    return end


def _read_promotions(text: str, i: int, end: int) -> tuple[list, dict]:
    """``(8;Q,R|1)`` between ``i`` and ``end``: ``(ranks, allowed)``."""
    ranks: list = []
    allowed: dict = {}
    j = i + 1
    for side, closer in (("white", "|"), ("black", ")")):
        rank = _int_at(text, j, end)
        if rank is None:
            ranks.append(None)
            allowed[side] = []
        else:
            ranks.append(rank[0])
            j = rank[1]
            if j < end and text[j] == ";":
                pieces = []
                while True:
                    start = j + 1
                    j = _letters_end(text, start, end)
                    if j == start:
                        raise _error(text, start, f"expected a piece letter, found {_describe(text, start)}")
                    pieces.append(_piece_name(text, start, text[start:j])[:-1])
                    if j >= end or text[j] != ",":
                        break
                allowed[side] = pieces
            else:
                allowed[side] = list(_DEFAULT_PROMOTIONS)
        if j >= end or text[j] != closer:
            raise _error(text, j, f"expected {closer!r} in the promotion ranks, found {_describe(text, j)}")
        j += 1
    if j != end:
        raise _error(text, j, f"unexpected {_describe(text, j)} after the promotion ranks")
    return ranks, allowed


def _read_win_conditions(text: str, i: int, end: int) -> dict:
    """``threecheck``, ``a,b`` or ``(a|b,c)`` between ``i`` and ``end``."""
    paren = text[i] == "("
    j = i + 1 if paren else i
    sides: list[list[str]] = [[]]
    while True:
        start = j
        while j < end and (text[j] in _LETTERS or text[j] == "_"):
            j += 1
        if j == start:
            raise _error(text, j, f"expected a win condition name, found {_describe(text, j)}")
        sides[-1].append(text[start:j])
        if j < end and text[j] == ",":
            j += 1
        elif j < end and text[j] == "|" and len(sides) == 1:
            sides.append([])
            j += 1
        else:
            break
    if paren:
        if j >= end or text[j] != ")":
            raise _error(text, j, f"expected ')' after the win conditions, found {_describe(text, j)}")
        j += 1
    if j != end:
        raise _error(text, j, f"unexpected {_describe(text, j)} in the win conditions")
    if len(sides) == 1:
        sides.append(list(sides[0]))
    return {"white": sides[0], "black": sides[1]}


def _read_pieces(text: str, i: int, end: int) -> tuple[dict, dict]:
    """``K3,4+|q-2,-9`` between ``i`` and ``end``: ``(position, special_rights)``."""
    position: dict = {}
    rights: dict = {}
    j = i
    while True:
        start = j
        j = _letters_end(text, start, end)
        if j == start:
            raise _error(text, j, f"expected a piece letter, found {_describe(text, j)}")
        name = _piece_name(text, start, text[start:j])
        square = _square_at(text, j, end)
        if square is None:
            raise _square_error(text, j, end)
        key = _key(square[0], square[1])
        if key in position:
            raise _error(text, start, f"two pieces on square {key}")
        position[key] = name
        j = square[2]
        if j < end and text[j] == "+":
            rights[key] = True
            j += 1
        if j >= end:
            return position, rights
        if text[j] != "|":
            raise _error(text, j, f"unexpected {_describe(text, j)} in the piece list")
        j += 1


@functools.lru_cache(maxsize=32)
def _read_pieces_cached(token: str) -> tuple[dict, dict] | tuple[None, None]:
    # A file of games from one start repeats the same long piece list: read
    # it once. The caller copies the dicts; errors are raised by the caller.
    try:
        return _read_pieces(token, 0, len(token))
    except FormatError:
        return None, None


def _parse_strict(text: str) -> dict:
    out: dict = {"gameRules": {}, "metadata": {}}
    rules = out["gameRules"]
    seen: dict[str, int] = {}
    n = len(text)

    def once(what: str, at: int) -> None:
        if what in seen:
            raise _error(text, at, f"{what} given twice")
        seen[what] = at

    i = 0
    while True:
        i = _skip_ws(text, i, n)
        if i >= n:
            break
        c = text[i]
        if c == "[":
            key, value, i = _read_tag(text, i)
            out["metadata"][key] = value
            continue
        if c == "{":
            i = _read_rules_json(text, i, rules)
            continue
        if _move_starts_at(text, i, n):
            moves = _read_moves(text, i, lenient=False)
            if moves:
                out["moves"] = moves
            break
        end = _token_end(text, i)
        token = text[i:end]
        if token in ("w", "b"):
            once("turn", i)
            out["turn"] = "white" if token == "w" else "black"
        elif c == "(":
            if i + 1 < end and text[i + 1] in _LETTERS:
                once("win conditions", i)
                rules["winConditions"] = _read_win_conditions(text, i, end)
            else:
                once("promotion ranks", i)
                rules["promotionRanks"], rules["promotionsAllowed"] = _read_promotions(text, i, end)
        elif c in _LETTERS:
            if _square_at(text, _letters_end(text, i, end), end) is not None:
                once("piece list", i)
                out["specialRights"] = {}  # first: upstream's key order
                position, rights = _read_pieces_cached(token) if end - i > 64 else (None, None)
                if position is None:  # short, or an error to raise with its place in ``text``
                    position, rights = _read_pieces(text, i, end)
                out["startingPosition"], out["specialRights"] = dict(position), dict(rights)
                out["shortposition"] = token
            else:
                once("win conditions", i)
                rules["winConditions"] = _read_win_conditions(text, i, end)
        elif c in _DIGITS or c == "-":
            _read_number_item(text, i, end, out, once)
        else:
            raise _error(text, i, f"unexpected {_describe(text, i)}")
        i = end
    rules.setdefault("winConditions", _default_win_conditions())
    return out


def _read_number_item(text: str, i: int, end: int, out: dict, once) -> None:
    """En passant square, move rule ``N/M`` or fullmove number, by shape."""
    square = _square_at(text, i, end)
    if square is not None:
        if square[2] != end:
            raise _error(text, square[2], f"unexpected {_describe(text, square[2])} after the en passant square")
        once("en passant square", i)
        out["enpassant"] = [square[0], square[1]]
        return
    number = _int_at(text, i, end)
    if number is None or text[i] == "-":
        raise _error(text, i, f"unexpected {_describe(text, i)}")
    j = number[1]
    if j < end and text[j] == "/":
        limit = _int_at(text, j + 1, end)
        if limit is None or text[j + 1] == "-" or limit[1] != end:
            bad = j + 1 if limit is None else limit[1]
            raise _error(text, bad, f"the move rule must be N/M, found {_describe(text, bad)}")
        once("move rule", i)
        out["moveRule"] = text[i:end]
        return
    if j != end:
        raise _error(text, j, f"unexpected {_describe(text, j)} after a number")
    once("fullmove number", i)
    out["fullMove"] = number[0]


# --------------------------------------------------------------------------
# Moves, both modes.

def _skip_comment(text: str, i: int) -> int:
    close = text.find("}", i)
    if close < 0:
        raise _error(text, i, "unclosed comment '{'")
    return close + 1


def _read_moves(text: str, i: int, *, lenient: bool) -> list[str]:
    """Compact moves from ``i`` to the end of ``text``."""
    if not lenient and _COMPACT_RUN.match(text, i):
        return text[i:].rstrip(" \t\r\n").split("|")
    moves: list[str] = []
    n = len(text)
    while True:
        i = _skip_ws(text, i, n)
        if i >= n:
            return moves
        c = text[i]
        if c in "|.":
            i += 1
        elif c == "{":
            i = _skip_comment(text, i)
        elif c in _DIGITS and (number_end := _move_number_end(text, i)) is not None:
            i = number_end
        elif c in _LETTERS or c in _DIGITS or c == "-":
            parsed = _read_move(text, i, lenient)
            if parsed is None:  # lenient only: skip what cannot start a move
                i = max(_letters_end(text, i, n), i + 1)
                continue
            move, i = parsed
            moves.append(move)
        elif c == "[" and not lenient:
            raise _error(text, i, "metadata tag after the first move")
        elif lenient or c in "!?":
            i += 1
        else:
            raise _error(text, i, f"unexpected {_describe(text, i)} in the moves")


def _move_number_end(text: str, i: int) -> int | None:
    j = i
    while j < len(text) and text[j] in _DIGITS:
        j += 1
    return j + 1 if j < len(text) and text[j] == "." else None


def _read_move(text: str, i: int, lenient: bool) -> tuple[str, int] | None:
    n = len(text)

    j = _letters_end(text, i, n)
    start = _square_at(text, j, n)
    if start is None:
        if lenient:
            return None
        raise _square_error(text, j, n)
    j = _skip_ws(text, start[2], n)
    if j >= n or text[j] not in ">x":
        if lenient:
            return None
        raise _error(text, j, f"expected '>' or 'x' after the starting square, found {_describe(text, j)}")
    j = _skip_ws(text, j + 1, n)
    dest = _square_at(text, j, n)
    if dest is None:
        if lenient:
            return None
        raise _square_error(text, j, n, "the destination square")
    j = dest[2]
    promotion, j = (_lenient_suffix if lenient else _strict_suffix)(text, j)
    return f"{start[0]},{start[1]}>{dest[0]},{dest[1]}{promotion}", j


def _strict_suffix(text: str, j: int) -> tuple[str, int]:
    """Promotion (attached, or after ``=``), then check marks and annotations."""
    n = len(text)
    promotion = ""
    k = _letters_end(text, j, n)
    if k > j and _square_at(text, k, n) is None:
        promotion, j = text[j:k], k
    else:
        k = _skip_ws(text, j, n)
        if k < n and text[k] == "=":
            k = _skip_ws(text, k + 1, n)
            m = _letters_end(text, k, n)
            if m == k:
                raise _error(text, k, f"expected a piece after '=', found {_describe(text, k)}")
            promotion, j = text[k:m], m
    while True:
        k = _skip_ws(text, j, n)
        if k < n and text[k] in "+#!?":
            j = k + 1
        else:
            return promotion, j


def _lenient_suffix(text: str, j: int) -> tuple[str, int]:
    # Upstream reads everything up to the next separator or digit as the
    # move's tail and takes its first letters as the promotion, even when
    # they are the next move's piece after a space.
    n = len(text)
    k = j
    while k < n and text[k] not in "|.{" and text[k] not in _DIGITS:
        if text[k] == "-" and k + 1 < n and text[k + 1] in _DIGITS:
            break
        k += 1
    m = j
    while m < k and text[m] not in _LETTERS:
        m += 1
    return text[m:_letters_end(text, m, k)], k


# --------------------------------------------------------------------------
# Lenient header: upstream's first-come-first-served token matching.

def _cut_tags_lenient(text: str, metadata: dict) -> str:
    # Upstream removes every [...] from the whole string before anything
    # else; blanking keeps the columns of what is left.
    while True:
        start = text.find("[")
        if start < 0:
            return text
        close = text.find("]", start)
        if close < 0:
            raise _error(text, start, "unclosed tag '['")
        content = text[start + 1:close]
        space = content.find(" ")
        if space > 0 and content[space + 1:space + 2] == '"':
            metadata[content[:space]] = content[space + 2:-1]
        elif ": " in content:
            key, _, value = content.partition(": ")
            metadata[key] = value
        else:
            metadata[content] = ""
        text = text[:start] + " " * (close + 1 - start) + text[close + 1:]


def _js_parse_int(s: str, text: str, at: int) -> int | None:
    """JavaScript's ``parseInt(s)``; ``s`` stands at ``text[at]``, for the error of a long number."""
    s = s.strip()
    j = 1 if s[:1] == "-" else 0
    k = j
    while k < len(s) and s[k] in _DIGITS:
        k += 1
    if k == j:
        return None
    if k - j > _MAX_DIGITS:
        raise _error(text, at, f"number of more than {_MAX_DIGITS} digits")
    return int(s[:k])


def _whole_square(text: str, i: int, end: int) -> tuple[int, int, int] | None:
    """The square that is all of ``text[i:end]``, else None."""
    square = _square_at(text, i, end)
    return square if square is not None and square[2] == end else None


def _parse_lenient(text: str) -> dict:
    out: dict = {"gameRules": {}, "metadata": {}}
    rules = out["gameRules"]
    text = _cut_tags_lenient(text, out["metadata"])
    n = len(text)
    i = 0
    while True:
        i = _skip_ws(text, i, n)
        if i >= n:
            break
        start = i
        if text[i] == "{":
            try:
                i = _read_rules_json(text, i, rules)
            except FormatError:
                raise _error(text, start, "extra game rules are not valid JSON") from None
            continue
        i = _token_end(text, start)
        token = text[start:i]
        if "turn" not in out and token in ("w", "b"):
            out["turn"] = "white" if token == "w" else "black"
        elif "enpassant" not in out and (square := _whole_square(text, start, i)) is not None:
            out["enpassant"] = [square[0], square[1]]
        elif "moveRule" not in out and _is_move_rule(token):
            if not _MOVE_RULE.match(token):
                left = token.index("/")
                at = start if left > _MAX_DIGITS else start + left + 1
                raise _error(text, at, f"number of more than {_MAX_DIGITS} digits")
            out["moveRule"] = token
        elif "fullMove" not in out and token.isascii() and token.isdigit():
            out["fullMove"] = _js_parse_int(token, text, start)
        elif _is_promotion_token(token):
            if "promotionRanks" not in rules:
                _promotions_lenient(text, start, token, rules)
        elif _is_win_token(token):
            if "winConditions" not in rules:
                parts = token.replace("(", "").replace(")", "").split("|")
                if len(parts) == 1:
                    parts.append(parts[0])
                rules["winConditions"] = {"white": parts[0].split(","), "black": parts[1].split(",")}
        elif _move_starts_at(text, start, i):
            moves = _read_moves(text, start, lenient=True)
            if moves:
                out["moves"] = moves
            break
        elif "startingPosition" not in out and token[:1] in _LETTERS and _square_at(
            text, _letters_end(text, start, i), i
        ):
            out["specialRights"] = {}  # first: upstream's key order
            out["startingPosition"], out["specialRights"] = _pieces_lenient(text, start, i)
            out["shortposition"] = token
        # anything else is dropped, as upstream does
    rules.setdefault("winConditions", _default_win_conditions())
    return out


def _is_move_rule(token: str) -> bool:
    left, slash, right = token.partition("/")
    return bool(slash) and all(part.isascii() and part.isdigit() for part in (left, right))


def _is_promotion_token(token: str) -> bool:
    if token == "(|)":
        return True
    if len(token) < 3 or token[0] != "(" or token[-1] != ")" or "|" not in token:
        return False
    white, _, black = token[1:-1].partition("|")
    # Either side starts with an integer (checked without reading it).
    return any((part[1:2] if part[:1] == "-" else part[:1]) in _DIGITS for part in (white, black) if part)


def _is_win_token(token: str) -> bool:
    body = token[1:] if token.startswith("(") else token
    return body[:1] in _LETTERS and not any(c in _DIGITS for c in body)


def _promotions_lenient(text: str, start: int, token: str, rules: dict) -> None:
    raw_parts = token.split("|")
    ranks: list = []
    allowed: dict = {}
    offset = start
    for index, side in enumerate(("white", "black")):
        raw = raw_parts[index] if index < len(raw_parts) else ""
        part = raw.replace("(", "").replace(")", "")
        if not part:
            ranks.append(None)
            allowed[side] = []
        else:
            rank, semi, codes = part.partition(";")
            ranks.append(_js_parse_int(rank, text, offset + len(raw) - len(raw.lstrip("("))))
            allowed[side] = list(_DEFAULT_PROMOTIONS)
            if semi:
                at = offset + raw.index(";") + 1
                allowed[side] = []
                for code in codes.split(","):
                    allowed[side].append(_piece_name(text, at, code)[:-1])
                    at += len(code) + 1
        offset += len(raw) + 1
    rules["promotionRanks"] = ranks
    rules["promotionsAllowed"] = allowed


def _pieces_lenient(text: str, i: int, end: int) -> tuple[dict, dict]:
    position: dict = {}
    rights: dict = {}
    while i < end:
        stop = text.find("|", i, end)
        stop = end if stop < 0 else stop
        letters = _letters_end(text, i, stop)
        square = _square_at(text, letters, stop)
        if letters > i and square is not None:
            key = _key(square[0], square[1])
            position[key] = _piece_name(text, i, text[i:letters])
            if square[2] < stop and text[square[2]] == "+":
                rights[key] = True
        i = stop + 1
    return position, rights


# --------------------------------------------------------------------------
# Long forms handed in (a JSON line, a caller's dict): their shape is checked
# once, up front, so that the writers and the replay below can index them
# without a guard. Fields that are absent or null are left alone; a wrong one
# is a FormatError naming it (``gameRules.promotionRanks[0] must be ...``).

def _what(value: Any) -> str:
    """``value`` as an error message shows it: short, in JSON's words."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -10**20 < value < 10**20 else "a number of more than 20 digits"
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 24 else repr(value[:20]) + "..."
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _path(entry: tuple) -> str:
    steps = []
    while entry is not None:
        steps.append(entry[3] if isinstance(entry[3], str) else f"[{entry[3]}]")
        entry = entry[2]
    text = "".join(reversed(steps))
    return text if len(text) <= 60 else text[:57] + "..."


def _check_json(value: Any, where: str, level: int) -> None:
    """A JSON value: null, true, false, a finite number, text, lists and objects with text
    keys, at ``level`` (the long form is level 1) and at most ``_MAX_DEPTH`` deep."""
    todo = [(value, level, None, where)]  # (value, level, parent entry, step from the parent)
    while todo:
        entry = todo.pop()
        item, depth = entry[0], entry[1]
        if item is None or isinstance(item, (str, bool)):
            continue
        if isinstance(item, int):
            if not -_TOO_BIG < item < _TOO_BIG:
                raise FormatError(f"{_path(entry)} has more than {_MAX_DIGITS} digits")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise FormatError(f"{_path(entry)} must be a finite number, not {_what(item)}")
        elif isinstance(item, Mapping):
            if depth > _MAX_DEPTH:
                raise FormatError(f"{_path(entry)} is nested deeper than {_MAX_DEPTH} levels")
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise FormatError(f"{_path(entry)} has a key that is not text: {_what(key)}")
                todo.append((inner, depth + 1, entry, "." + key))
        elif isinstance(item, (list, tuple)):
            if depth > _MAX_DEPTH:
                raise FormatError(f"{_path(entry)} is nested deeper than {_MAX_DEPTH} levels")
            todo.extend((inner, depth + 1, entry, k) for k, inner in enumerate(item))
        else:
            raise FormatError(f"{_path(entry)} must be a JSON value, not {_what(item)}")


def _check_object(value: Any, where: str) -> Mapping:
    if type(value) is dict and all(type(key) is str for key in value):
        return value  # as JSON loads it
    if not isinstance(value, Mapping):
        raise FormatError(f"{where} must be an object, not {_what(value)}")
    for key in value:
        if not isinstance(key, str):
            raise FormatError(f"{where} has a key that is not text: {_what(key)}")
    return value


def _check_list(value: Any, where: str) -> Sequence:
    if not isinstance(value, (list, tuple)):
        raise FormatError(f"{where} must be a list, not {_what(value)}")
    return value


def _check_whole(value: Any, where: str) -> None:
    """A whole number (``3``, or ``3.0`` as JSON may write it) of at most ``_MAX_DIGITS`` digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        if -_TOO_BIG < value < _TOO_BIG:
            return
        raise FormatError(f"{where} has more than {_MAX_DIGITS} digits")
    if not (isinstance(value, float) and math.isfinite(value) and value.is_integer()):
        raise FormatError(f"{where} must be a whole number, not {_what(value)}")


def _check_coords(value: Any, where: str, text_too: bool = True) -> None:
    """``[x, y]`` of whole numbers, or (where ``text_too``) the text ``"x,y"``."""
    if text_too and isinstance(value, str):
        if not _SQUARE_KEY.match(value):
            raise FormatError(f'{where} must be a square like [3, 4] or "3,4", not {_what(value)}')
        return
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise FormatError(f"{where} must be a square like [3, 4], not {_what(value)}")
    _check_whole(value[0], f"{where}[0]")
    _check_whole(value[1], f"{where}[1]")


# Square keys already checked: games repeat the same few squares (bounded).
_GOOD_SQUARES: set[str] = set()


def _check_square_key(key: Any, where: str) -> None:
    if key in _GOOD_SQUARES:
        return
    if not isinstance(key, str) or not _SQUARE_KEY.match(key):
        raise FormatError(f'{where} has a key that is not a square like "3,4": {_what(key)}')
    if len(_GOOD_SQUARES) < 4096:
        _GOOD_SQUARES.add(key)


def _check_position(value: Any, where: str) -> None:
    """Squares (``"x,y"``) to piece names (text)."""
    if not isinstance(value, Mapping):
        raise FormatError(f"{where} must be an object, not {_what(value)}")
    good = _GOOD_SQUARES
    for key, name in value.items():
        if key not in good:
            _check_square_key(key, where)
        if type(name) is not str and not isinstance(name, str):
            raise FormatError(f"{where}.{key} must be a piece name, not {_what(name)}")


def _check_rights(value: Any, where: str) -> None:
    if not isinstance(value, Mapping):
        raise FormatError(f"{where} must be an object, not {_what(value)}")
    good = _GOOD_SQUARES
    for key, mark in value.items():
        if key not in good:
            _check_square_key(key, where)
        if mark is not True and mark is not False and mark is not None:
            _check_json(mark, f"{where}.{key}", 3)


def _check_names(value: Any, where: str) -> None:
    """``{"white": [text, ...], "black": [...]}``, each side null or a list of text."""
    for side, names in _check_object(value, where).items():
        if names is not None and not (type(names) is list and all(type(name) is str for name in names)):
            for k, name in enumerate(_check_list(names, f"{where}.{side}")):
                if not isinstance(name, str):
                    raise FormatError(f"{where}.{side}[{k}] must be text, not {_what(name)}")


def _check_rules(value: Any, where: str) -> None:
    for key, item in _check_object(value, where).items():
        if item is None:
            continue
        if key == "promotionRanks":
            for k, rank in enumerate(_check_list(item, f"{where}.{key}")):
                if rank is not None:
                    _check_whole(rank, f"{where}.{key}[{k}]")
        elif key == "promotionsAllowed" or key == "winConditions":
            _check_names(item, f"{where}.{key}")
        else:
            _check_json(item, f"{where}.{key}", 3)


def _check_move(move: Any, where: str) -> None:
    """A move object: start and end squares, piece names where given, any JSON beside."""
    _check_object(move, where)
    for key in ("startCoords", "endCoords"):
        if move.get(key) is None:
            raise FormatError(f"{where} has no {key}")
    for key, item in move.items():
        if item is None:
            continue
        if key == "startCoords" or key == "endCoords":
            _check_coords(item, f"{where}.{key}")
        elif key == "type" or key == "promotion":
            if not isinstance(item, str):
                raise FormatError(f"{where}.{key} must be a piece name, not {_what(item)}")
        elif key == "castle":
            _check_object(item, f"{where}.castle")
            for part in ("dir", "coord"):
                if item.get(part) is None:
                    raise FormatError(f"{where}.castle has no {part}")
            _check_whole(item["dir"], f"{where}.castle.dir")
            _check_coords(item["coord"], f"{where}.castle.coord")
            _check_json(item, f"{where}.castle", 4)
        else:
            _check_json(item, f"{where}.{key}", 4)


def _check_moves(value: Any, where: str) -> None:
    if type(value) is list and all(type(move) is str for move in value):
        return  # compact moves: read when they are used
    for k, move in enumerate(_check_list(value, where)):
        if not isinstance(move, str):
            _check_move(move, f"{where}[{k}]")


def _check_metadata(value: Any, where: str) -> None:
    for key, item in _check_object(value, where).items():
        if type(item) is str or item is None or isinstance(item, (str, bool)):
            continue
        if isinstance(item, (int, float)):
            if isinstance(item, float) and not math.isfinite(item):
                raise FormatError(f"{where}.{key} must be a finite number, not {_what(item)}")
            if isinstance(item, int) and not -_TOO_BIG < item < _TOO_BIG:
                raise FormatError(f"{where}.{key} has more than {_MAX_DIGITS} digits")
        else:
            raise FormatError(f"{where}.{key} must be text, not {_what(item)}")


def _check_turn(value: Any, where: str) -> None:
    if value != "white" and value != "black":
        raise FormatError(f'{where} must be "white" or "black", not {_what(value)}')


def _check_move_rule(value: Any, where: str) -> None:
    if not isinstance(value, str) or not _MOVE_RULE.match(value):
        raise FormatError(f'{where} must be text like "0/100", not {_what(value)}')


def _check_fullmove(value: Any, where: str) -> None:
    _check_whole(value, where)
    if value < 0:
        raise FormatError(f"{where} must not be negative, not {_what(value)}")


def _check_start(value: Any, where: str) -> None:
    if not isinstance(value, str):
        _check_position(value, where)


def _check_text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise FormatError(f"{where} must be text, not {_what(value)}")


_FIELD_CHECKS = {
    "metadata": _check_metadata,
    "turn": _check_turn,
    "enpassant": lambda value, where: _check_coords(value, where, text_too=False),
    "moveRule": _check_move_rule,
    "fullMove": _check_fullmove,
    "gameRules": _check_rules,
    "specialRights": _check_rights,
    "startingPosition": _check_start,
    "shortposition": _check_text,
    "moves": _check_moves,
}


def _check_long(obj: Any) -> None:
    """Raise FormatError unless ``obj`` has the shape of a long form (see the module docstring).

    What :func:`short_to_long` returns always has it.
    """
    if not isinstance(obj, Mapping):
        raise FormatError(f"a long form must be an object, not {_what(obj)}")
    for key, value in obj.items():
        if value is not None:
            check = _FIELD_CHECKS.get(key)
            if check is not None:
                check(value, key)
            elif isinstance(key, str):
                _check_json(value, key, 2)
            else:
                raise FormatError(f"a long form has a key that is not text: {_what(key)}")


# --------------------------------------------------------------------------
# Public conversions.

def short_to_long(text: str, *, lenient: bool = False) -> dict:
    """Parse an ICN string into the long (JSON) form.

    Raises :class:`FormatError` naming the line and column of the first
    thing it cannot read; ``lenient=True`` reads like the upstream converter
    and drops what it cannot read instead (see the module's quirk table).

    >>> game = short_to_long("w (8|1) K5,1+|R8,1+|k5,8 5,1>7,1|5,8>5,7")
    >>> game["startingPosition"]
    {'5,1': 'kingsW', '8,1': 'rooksW', '5,8': 'kingsB'}
    >>> game["specialRights"], game["moves"]
    ({'5,1': True, '8,1': True}, ['5,1>7,1', '5,8>5,7'])
    >>> short_to_long("w K1,1|k3,3 1,1>2,2 %")
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: unexpected character '%' in the moves (line 1, column 21)
    """
    return _parse_lenient(text) if lenient else _parse_strict(text)


def long_to_short(
    obj: Mapping,
    compact_moves: int = 0,
    make_new_lines: bool = True,
    *,
    specify_position: bool = True,
) -> str:
    """Write a long-form game or position as an ICN string.

    ``compact_moves``: 0 numbers the moves and spaces them out, 1 keeps the
    piece letters, captures, ``=`` and checks but no spaces, 2 writes bare
    ``a,b>c,dX``. Moves given as strings are written as they are.
    ``make_new_lines=False`` puts everything on one line;
    ``specify_position=False`` leaves out the piece list. A value of the
    wrong shape (a list for ``gameRules``, ``1e999`` for ``fullMove``) raises
    :class:`FormatError` naming it.

    >>> game = {"metadata": {"White": "Tom"}, "turn": "white", "fullMove": 1,
    ...         "startingPosition": {"5,1": "kingsW", "5,8": "kingsB"},
    ...         "moves": [{"type": "kingsW", "startCoords": [5, 1], "endCoords": [5, 2]},
    ...                   {"type": "kingsB", "startCoords": [5, 8], "endCoords": [5, 7],
    ...                    "check": True}]}
    >>> print(long_to_short(game))
    [White "Tom"]
    <BLANKLINE>
    w 1 K5,1|k5,8
    <BLANKLINE>
    1. K5,1 > 5,2 | k5,8 > 5,7 +
    >>> long_to_short(game, compact_moves=2, make_new_lines=False)
    '[White "Tom"]  w 1 K5,1|k5,8  5,1>5,2|5,8>5,7'
    """
    if compact_moves not in (0, 1, 2):
        raise ValueError(f"compact_moves must be 0, 1 or 2, not {compact_moves!r}")
    _check_long(obj)
    return _write_short(obj, compact_moves, make_new_lines, specify_position)


def _write_short(obj: Mapping, compact_moves: int, make_new_lines: bool, specify_position: bool) -> str:
    """:func:`long_to_short` of a long form that has the shape (checked, or built by fastpgn)."""
    gap = "\n" if make_new_lines else " "
    out: list[str] = []
    metadata = obj.get("metadata")
    if metadata is not None:
        ordered = [k for k in _METADATA_ORDER if k in metadata]
        ordered += [k for k in metadata if k not in _METADATA_ORDER]
        for key in ordered:
            if metadata[key] is not None:
                out.append(f'[{key} "{_js_text(metadata[key])}"]{gap}')
        out.append(gap)

    turn = obj.get("turn")
    if turn in ("white", "black"):
        out.append("w " if turn == "white" else "b ")
    for field in ("enpassant", "moveRule", "fullMove"):
        if obj.get(field):
            out.append(_js_text(obj[field]) + " ")
    rules = obj.get("gameRules") or {}
    out.append(_promotions_text(rules))
    out.append(_win_conditions_text(rules.get("winConditions")))
    extras = {k: v for k, v in rules.items() if k not in _RESERVED_RULES}
    if extras:
        out.append(_js_json(extras) + " ")

    moves = obj.get("moves")
    if specify_position:
        position = obj.get("startingPosition")
        if isinstance(position, Mapping):
            position = long_to_short_position(position, obj.get("specialRights"))
        if position:
            out.append(str(position))
            if moves is not None:
                out.append(gap + gap)
    if moves:
        fullmove = int(obj.get("fullMove") or 1)
        out.append(_moves_text(moves, compact_moves, make_new_lines, turn == "black", fullmove))
    return "".join(out)


def _promotions_text(rules: Mapping) -> str:
    ranks = rules.get("promotionRanks")
    if not ranks:
        return ""
    allowed = rules.get("promotionsAllowed") or {}
    sides = []
    for index, (side, colour) in enumerate((("white", "W"), ("black", "B"))):
        rank = ranks[index] if index < len(ranks) else None
        if rank is None:
            sides.append("")
            continue
        text = _js_text(rank)
        pieces = allowed.get(side)
        # An empty list cannot be written (upstream writes the bare rank too).
        if pieces and sorted(pieces) != sorted(_DEFAULT_PROMOTIONS):
            text += ";" + ",".join(_piece_code(piece + colour) for piece in pieces)
        sides.append(text)
    return f"({sides[0]}|{sides[1]}) "


def _win_conditions_text(wins: Any) -> str:
    if not wins or not wins.get("white") or not wins.get("black"):
        return ""
    white, black = list(wins["white"]), list(wins["black"])
    if white == black:
        return "" if white == ["checkmate"] else ",".join(white) + " "
    return f"({','.join(white)}|{','.join(black)}) "


def _moves_text(moves: Sequence, compact: int, new_lines: bool, black_first: bool, number: int) -> str:
    if all(isinstance(move, str) for move in moves):
        return "|".join(moves)
    if not all(isinstance(move, Mapping) for move in moves):
        raise FormatError("moves mix compact strings and move objects")
    parts: list[str] = []
    white_to_move = not black_first
    last = len(moves) - 1
    for index, move in enumerate(moves):
        if compact == 0:
            if white_to_move:
                parts.append(("" if new_lines or index == 0 else " ") + f"{number}. ")
            else:
                parts.append(f"{number}.   ...   | " if index == 0 else " | ")
        elif index:
            parts.append("|")
        parts.append(_move_text(move, compact))
        white_to_move = not white_to_move
        if white_to_move:
            number += 1
            if compact == 0 and index != last:
                parts.append("\n" if new_lines else " |")
    return "".join(parts).rstrip()


def _move_text(move: Mapping, compact: int) -> str:
    start = _js_text(move["startCoords"])
    end = _js_text(move["endCoords"])
    promotion = _piece_code(move["promotion"]) if move.get("promotion") else ""
    if compact == 2:
        return f"{start}>{end}{promotion}"
    piece = _piece_code(move["type"]) if move.get("type") else ""
    arrow = "x" if move.get("captured") else ">"
    mark = "#" if move.get("mate") else "+" if move.get("check") else ""
    promotion = "=" + promotion if promotion else ""
    if compact == 1:
        return f"{piece}{start}{arrow}{end}{promotion}{mark}"
    return f"{piece}{start} {arrow} {end} {promotion}{mark}".rstrip()


def _piece_code(name: str) -> str:
    code = PIECE_CODES.get(name)
    if code is None:
        raise FormatError(f"unknown piece type {name!r}")
    return code


def long_to_short_position(position: Mapping[str, str], special_rights: Mapping | None = None) -> str:
    """The piece list of a long-form position, ``+`` where a special right is set.

    >>> long_to_short_position({"5,1": "kingsW", "-3,8": "hawksB"}, {"5,1": True})
    'K5,1+|ha-3,8'
    """
    _check_position(position, "position")
    if special_rights is not None:
        _check_rights(special_rights, "special_rights")
    rights = special_rights or {}
    return "|".join(
        f"{_piece_code(name)}{key}{'+' if rights.get(key) else ''}" for key, name in position.items()
    )


def generate_special_rights(
    position: Mapping[str, str], pawn_double_push: bool, castle_with: str | None
) -> dict:
    """Special rights for a starting position: pawns may double-push, kings
    castle with the ``castle_with`` pieces (e.g. ``"rooks"``) of their colour
    on their rank that stand at least three squares away.

    >>> generate_special_rights({"1,1": "rooksW", "5,1": "kingsW", "7,1": "rooksW",
    ...                          "1,2": "pawnsW"}, True, "rooks")
    {'5,1': True, '1,2': True, '1,1': True}
    """
    _check_position(position, "position")
    rights: dict = {}
    kings: list[tuple[int, int, str]] = []
    partners: list[tuple[str, int, int, str]] = []
    for key, name in position.items():
        family, colour = name[:-1], name[-1:]
        if pawn_double_push and family == "pawns":
            rights[key] = True
        elif castle_with and family == "kings":
            rights[key] = True
            kings.append((*_parse_key(key), colour))
        elif castle_with and family == castle_with:
            partners.append((key, *_parse_key(key), colour))
    for key, x, y, colour in partners:
        if any(ky == y and kc == colour and abs(kx - x) >= 3 for kx, ky, kc in kings):
            rights[key] = True
    return rights


def long_to_short_position_from_gamerules(
    position: Mapping[str, str], pawn_double_push: bool, castle_with: str | None
) -> str:
    """The piece list of ``position`` with the special rights that
    :func:`generate_special_rights` gives it.

    >>> long_to_short_position_from_gamerules({"5,1": "kingsW", "1,1": "rooksW"}, True, "rooks")
    'K5,1+|R1,1+'
    """
    return long_to_short_position(position, generate_special_rights(position, pawn_double_push, castle_with))


def _parse_key(key: str) -> tuple[int, int]:
    if not isinstance(key, str) or not _SQUARE_KEY.match(key):
        raise FormatError(f"not a square: {_what(key)}")
    x, _, y = key.partition(",")
    return int(x), int(y)


def _coords(value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        return _parse_key(value)
    x, y = value
    return int(x), int(y)


# --------------------------------------------------------------------------
# Single moves.

def short_to_long_compact_move(move: str) -> dict:
    """Parse one compact move ``a,b>c,dX`` (nothing else is accepted).

    >>> short_to_long_compact_move("2,-3>2,-4ha")
    {'compact': '2,-3>2,-4ha', 'startCoords': [2, -3], 'endCoords': [2, -4], 'promotion': 'hawksB'}
    """
    n = len(move)
    start = _square_at(move, 0, n)
    if start is None:
        raise _square_error(move, 0, n)
    if start[2] >= n or move[start[2]] != ">":
        raise _error(move, start[2], f"expected '>', found {_describe(move, start[2])}")
    end = _square_at(move, start[2] + 1, n)
    if end is None:
        raise _square_error(move, start[2] + 1, n, "the destination square")
    j = _letters_end(move, end[2], n)
    if j != n:
        raise _error(move, j, f"unexpected {_describe(move, j)} in a compact move")
    code = move[end[2]:j]
    out = {
        "compact": f"{start[0]},{start[1]}>{end[0]},{end[1]}{code}",
        "startCoords": [start[0], start[1]],
        "endCoords": [end[0], end[1]],
    }
    if code:
        out["promotion"] = _piece_name(move, end[2], code)
    return out


def long_to_short_compact_move(move: Mapping) -> str:
    """Write one move object as ``a,b>c,dX``.

    >>> long_to_short_compact_move({"startCoords": [7, 7], "endCoords": [7, 8], "promotion": "queensW"})
    '7,7>7,8Q'
    """
    _check_move(move, "the move")
    promotion = _piece_code(move["promotion"]) if move.get("promotion") else ""
    return f"{_js_text(move['startCoords'])}>{_js_text(move['endCoords'])}{promotion}"


# --------------------------------------------------------------------------
# Replaying a game.

def game_to_position(obj: Mapping, halfmoves: int | float = 0) -> dict:
    """The position ``halfmoves`` half-moves into a game (``math.inf``: the end).

    Moves may be move objects (the legacy form, which carries captures and
    castling) or compact strings, whose captures, en passant and castling
    are worked out from the position. The result has ``"moves": []``; the
    input is not modified.

    >>> game = short_to_long("w 0/100 1 P5,2+|K5,1|k5,8 5,2>5,4|5,8>5,7")
    >>> after = game_to_position(game, 1)
    >>> after["turn"], after["enpassant"], after["moveRule"], after["startingPosition"]
    ('black', [5, 3], '0/100', {'5,1': 'kingsW', '5,8': 'kingsB', '5,4': 'pawnsW'})
    >>> game_to_position(game, math.inf)["fullMove"]
    2
    """
    _check_long(obj)
    result = copy.deepcopy(dict(obj))
    moves = result.get("moves")
    if moves is None:
        return result
    position = result.get("startingPosition")
    if isinstance(position, str):
        position, marks = _read_pieces(position, 0, len(position)) if position else ({}, {})
        result.setdefault("specialRights", marks)
    elif position is None:
        position = {}
    result["startingPosition"] = position
    rights = result.get("specialRights")
    for index, raw in enumerate(moves):
        if index >= halfmoves:
            break
        move = _replay_move(result, position, rights, raw, index)
        _apply(result, position, rights, move)
    del result["moves"]
    result["moves"] = []
    return result


def _replay_move(game: dict, position: dict, rights: Mapping | None, raw: Any, index: int) -> dict:
    """A move object with type, captures and castling filled in."""
    if isinstance(raw, Mapping):
        move = dict(raw)
        move["startCoords"] = list(_coords(raw["startCoords"]))
        move["endCoords"] = list(_coords(raw["endCoords"]))
        if not move.get("type"):
            move["type"] = position.get(_key(*move["startCoords"]))
        if move["type"] is None:
            raise FormatError(f"move {index + 1}: no piece on {_key(*move['startCoords'])}")
        return move
    if not isinstance(raw, str):
        raise FormatError(f"move {index + 1} is neither a string nor a move object")
    move = short_to_long_compact_move(raw)
    (sx, sy), (ex, ey) = move["startCoords"], move["endCoords"]
    piece = position.get(_key(sx, sy))
    if piece is None:
        raise FormatError(f"move {index + 1} ({raw}): no piece on {_key(sx, sy)}")
    move["type"] = piece
    family = piece[:-1]
    target = position.get(_key(ex, ey))
    if target is not None:
        move["captured"] = target
    elif family == "pawns" and sx != ex and game.get("enpassant") == [ex, ey]:
        move["captured"] = position.get(_key(ex, sy))
        move["enpassant"] = sy - ey
    if family == "kings" and abs(ex - sx) > 1:
        move["castle"] = _castling_partner(position, rights or {}, sx, sy, ex, index, raw)
    return move


def _castling_partner(position: Mapping, rights: Mapping, sx: int, sy: int, ex: int, index: int, raw: str) -> dict:
    direction = 1 if ex > sx else -1
    best = None
    for key in rights:
        if not rights[key] or key not in position or position[key][:-1] in ("pawns", "kings"):
            continue
        x, y = _parse_key(key)
        if y == sy and (x - sx) * direction > 0 and (best is None or abs(x - sx) < abs(best - sx)):
            best = x
    if best is None:
        raise FormatError(f"move {index + 1} ({raw}): the king moves two squares but has no castling partner")
    return {"dir": direction, "coord": [best, sy]}


def _apply(game: dict, position: dict, rights: dict | None, move: Mapping) -> None:
    (sx, sy), (ex, ey) = move["startCoords"], move["endCoords"]
    start, end = _key(sx, sy), _key(ex, ey)
    kind = move["type"]
    if game.get("turn") in ("white", "black"):
        if game["turn"] == "black" and game.get("fullMove"):
            game["fullMove"] += 1
        game["turn"] = "white" if game["turn"] == "black" else "black"
    elif kind.endswith("B") and game.get("fullMove"):
        game["fullMove"] += 1

    # Assign before deleting, as upstream does, so the piece order of the
    # written position matches the upstream converter's.
    position[end] = move["promotion"] if move.get("promotion") else position.get(start, kind)
    position.pop(start, None)
    if rights is not None:
        rights.pop(start, None)
        rights.pop(end, None)

    if game.get("moveRule"):
        done, _, limit = str(game["moveRule"]).partition("/")
        reset = move.get("captured") or kind[:-1] == "pawns"
        game["moveRule"] = f"{0 if reset else int(done) + 1}/{limit}"

    if move.get("enpassant"):
        # The pawn taken en passant stands beside the capturing pawn's start.
        victim = _key(ex, sy)
        position.pop(victim, None)
        if rights is not None:
            rights.pop(victim, None)

    if kind[:-1] == "pawns" and abs(sy - ey) > 1:
        game["enpassant"] = [ex, (sy + ey + 1) // 2]  # Math.round of the middle, in integers
    else:
        game.pop("enpassant", None)

    castle = move.get("castle")
    if castle:
        partner = _key(*_coords(castle["coord"]))
        position[_key(ex - castle["dir"], ey)] = position.get(partner)
        position.pop(partner, None)
        if rights is not None:
            rights.pop(partner, None)


# --------------------------------------------------------------------------
# JavaScript's way of turning values into text, so output matches upstream.

def _js_text(value: Any) -> str:
    """``String(value)`` as JavaScript writes it (arrays join with commas)."""
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join(_js_text(item) for item in value)
    return str(value)


def _js_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    k = len(mantissa)
    point = exponent + k  # the decimal point sits after this many digits
    if k <= point <= 21:
        return sign + mantissa + "0" * (point - k)
    if 0 < point <= 21:
        return sign + mantissa[:point] + "." + mantissa[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + mantissa
    e = point - 1
    rest = "." + mantissa[1:] if k > 1 else ""
    return f"{sign}{mantissa[0]}{rest}e{'+' if e > 0 else '-'}{abs(e)}"


def _js_json(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-finite numbers as null."""
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k), ensure_ascii=False)}:{_js_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_js_json(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
