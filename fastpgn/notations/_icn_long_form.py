"""ICN's long form: its vocabulary, the limits on a game, the check of a long form handed in, its values as text.

The long form is described in :mod:`fastpgn.notations.icn`. This module owns
what every other part of ICN refers to: the piece codes and names, the
default promotions and win conditions, the limits that keep any input from
failing other than with a :class:`FormatError` (500 digits a number, 64
levels of JSON), square keys (``"x,y"``), the field-by-field check of a
long form that a caller or a JSON line hands in (``_check_long``), and
JavaScript's way of turning values into text, so that output matches the
upstream converter (``_js_text``, ``_js_json``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from fastpgn.errors import FormatError

__all__ = ["PIECE_CODES"]

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
# Limits on what a game may hold, so that no input can make a reader fail any
# other way than with a FormatError: a number's digits (Python refuses to read
# an int of more than 4300 by default, 640 at the least), and how deep JSON
# values nest (a long form needs 4 levels; a long form counts as the first).
_MAX_DIGITS = 500
_MAX_DEPTH = 64
_TOO_BIG = 10 ** _MAX_DIGITS
_SQUARE_KEY = re.compile(rf"-?[0-9]{{1,{_MAX_DIGITS}}},-?[0-9]{{1,{_MAX_DIGITS}}}\Z")
_MOVE_RULE = re.compile(rf"[0-9]{{1,{_MAX_DIGITS}}}/[0-9]{{1,{_MAX_DIGITS}}}\Z")


def _default_win_conditions() -> dict:
    return {"white": ["checkmate"], "black": ["checkmate"]}


def _key(x: int, y: int) -> str:
    return f"{x},{y}"


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
# Long forms handed in (a JSON line, a caller's dict): their shape is checked
# once, up front, so that the writers and the replay can index them without
# a guard. Fields that are absent or null are left alone; a wrong one
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
    # (value, level, parent entry, step from the parent: a key or an index)
    todo: list[tuple[Any, int, tuple | None, str | int]] = [(value, level, None, where)]
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
    assert isinstance(exponent, int)  # a finite number's ("n", "N", "F" mark NaN and infinities, gone above)
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
