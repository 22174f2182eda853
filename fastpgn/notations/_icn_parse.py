"""ICN's short form read strictly: the grammar given in :mod:`fastpgn.notations.icn`, every error placed.

The header items (tags, turn, en passant square, move rule, fullmove number,
promotions, win conditions, extra rules as JSON, the piece list) come in any
order, each at most once; the first move ends the header. Moves are read
here in both modes: strictly, and as the upstream converter reads them
(``lenient=True``, for :mod:`fastpgn.notations._icn_lenient`). Scanning is
plain index arithmetic, so every :class:`FormatError` names the line and
column of the offending character. JSON (extra rules, a long form on a
line: ``_read_json``) is read with its nesting bounded and without the
numbers JSON cannot hold.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from fastpgn.errors import FormatError
from fastpgn.notations._icn_long_form import (
    _DEFAULT_PROMOTIONS,
    _MAX_DEPTH,
    _MAX_DIGITS,
    _PIECE_NAMES,
    _default_win_conditions,
    _key,
)

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
# Bare compact moves with canonical numbers (``4,2>4,4|2,7>1,8Q``), as the
# PGN bridge writes them: read with one match and a split, to the same result
# as the token walk (which also reports a number that is too long).
_INT = rf"(?:0|-?[1-9][0-9]{{0,{_MAX_DIGITS - 1}}})"
_COMPACT = rf"{_INT},{_INT}>{_INT},{_INT}[A-Za-z]*"
_COMPACT_RUN = re.compile(rf"{_COMPACT}(?:\|{_COMPACT})*[ \t\r\n]*\Z")


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
    # _JSON_SPACE matches anywhere (the empty string at worst): its matches are never None.
    lead = _JSON_SPACE.match(text)
    assert lead is not None
    value, end = _json_at(text, lead.end(), "not JSON", _MAX_DEPTH)
    trail = _JSON_SPACE.match(text, end)
    assert trail is not None
    end = trail.end()
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
def _read_pieces_cached(token: str) -> tuple[dict, dict] | None:
    # A file of games from one start repeats the same long piece list: read
    # it once. The caller copies the dicts; errors are raised by the caller.
    try:
        return _read_pieces(token, 0, len(token))
    except FormatError:
        return None


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
                pieces = _read_pieces_cached(token) if end - i > 64 else None
                if pieces is None:  # short, or an error to raise with its place in ``text``
                    pieces = _read_pieces(text, i, end)
                position, rights = pieces
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
