"""ICN's short form read as FormatConverter.js reads it: ``short_to_long(text, lenient=True)``.

Tags are cut out of the whole string first (comments included),
whitespace-separated tokens are matched first come first served, and what
matches nothing is dropped. The quirks this reproduces, and those the strict
reader fixes, are tabled in :mod:`fastpgn.notations.icn`'s docstring.
"""

from __future__ import annotations

from fastpgn.errors import FormatError
from fastpgn.notations._icn_long_form import _DEFAULT_PROMOTIONS, _MAX_DIGITS, _MOVE_RULE, _default_win_conditions, _key
from fastpgn.notations._icn_parse import (
    _DIGITS,
    _LETTERS,
    _error,
    _letters_end,
    _move_starts_at,
    _piece_name,
    _read_moves,
    _read_rules_json,
    _skip_ws,
    _square_at,
    _token_end,
)


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
