"""ICN written: a long-form game or position as a short-form string, as the upstream converter writes it.

``long_to_short`` checks the long form it is given (``_check_long``), then
writes it (``_write_short``: the PGN bridge calls it directly on the long
forms it builds). The piece list of a position, the special rights a
starting position gives, and a single compact move are written here too.
:mod:`fastpgn.notations.icn` re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastpgn.errors import FormatError
from fastpgn.notations._icn_long_form import (
    _DEFAULT_PROMOTIONS,
    _RESERVED_RULES,
    PIECE_CODES,
    _check_long,
    _check_move,
    _check_position,
    _check_rights,
    _js_json,
    _js_text,
    _parse_key,
)

__all__ = ["generate_special_rights", "long_to_short", "long_to_short_compact_move", "long_to_short_position",
           "long_to_short_position_from_gamerules"]

# Upstream writes these tags first, in this order, then the rest as given.
_METADATA_ORDER = (
    "Event", "Site", "Variant", "Round", "UTCDate", "UTCTime", "TimeControl",
    "White", "Black", "WhiteID", "BlackID", "Result", "Termination",
)


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


def long_to_short_compact_move(move: Mapping) -> str:
    """Write one move object as ``a,b>c,dX``.

    >>> long_to_short_compact_move({"startCoords": [7, 7], "endCoords": [7, 8], "promotion": "queensW"})
    '7,7>7,8Q'
    """
    _check_move(move, "the move")
    promotion = _piece_code(move["promotion"]) if move.get("promotion") else ""
    return f"{_js_text(move['startCoords'])}>{_js_text(move['endCoords'])}{promotion}"
