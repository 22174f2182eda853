"""Replaying an ICN game to one of its positions: ``game_to_position``.

Moves may be move objects (the legacy form, which carries captures and
castling) or compact strings, whose captures, en passant and castling are
worked out from the position, as the upstream converter does.
:mod:`fastpgn.notations.icn` re-exports ``game_to_position``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fastpgn.errors import FormatError
from fastpgn.notations._icn_long_form import _check_long, _coords, _key, _parse_key
from fastpgn.notations._icn_parse import _read_pieces, short_to_long_compact_move

__all__ = ["game_to_position"]


def game_to_position(obj: Mapping, halfmoves: int | float = 0) -> dict:
    """The position ``halfmoves`` half-moves into a game (``math.inf``: the end).

    Moves may be move objects (the legacy form, which carries captures and
    castling) or compact strings, whose captures, en passant and castling
    are worked out from the position. The result has ``"moves": []``; the
    input is not modified.

    >>> from fastpgn.notations.icn import short_to_long
    >>> game = short_to_long("w 0/100 1 P5,2+|K5,1|k5,8 5,2>5,4|5,8>5,7")
    >>> after = game_to_position(game, 1)
    >>> after["turn"], after["enpassant"], after["moveRule"], after["startingPosition"]
    ('black', [5, 3], '0/100', {'5,1': 'kingsW', '5,8': 'kingsB', '5,4': 'pawnsW'})
    >>> import math
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
