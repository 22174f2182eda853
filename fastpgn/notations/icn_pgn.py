"""The bridge between PGN and ICN for standard chess (the ``icn`` command is in the ``cli`` package).

This module owns moving standard games between PGN and Infinite Chess
Notation; the notation itself (parsing, writing, the long form) belongs to
:mod:`fastpgn.notations.icn`, legality to the board layer.

PGN -> ICN: files a-h become x 1-8 and ranks 1-8 become y 1-8; every move is
``x,y>x,y`` from the game's UCI moves, so castling is the king's two-square
move (``5,1>7,1``) and a promotion appends the ICN letter (``2,7>1,8Q``, black
``2,2>2,1q``). The starting position carries the special rights (``+``) that
ICN needs: kings and rooks that may still castle, pawns on their home rank.
Every tag becomes a metadata entry (``FEN`` and ``SetUp`` too). The rules are
those of chess on the infinite board's terms: ``0/100`` (the fifty-move
counter), the fullmove number, ``(8|1)`` promotion ranks. The standard start
comes out exactly as the upstream converter writes the specification's
classical position::

    [Event "x"]  w 0/100 1 (8|1) P1,2+|P2,2+|...|K5,1+|k5,8+  5,2>5,4|5,7>5,5

One game is one line: the short form is written with ``make_new_lines=False``
and compact moves, the long form (``--json``) as one JSON object per line,
the dict :func:`fastpgn.notations.icn.short_to_long` returns for the short line.

ICN -> PGN: the game must be chess: standard pieces on the 8x8 board, moves
that stay on it and are legal, ``checkmate`` as the win condition for both
sides. Anything else raises :class:`FormatError` saying what has no PGN.
Extra rules (``{"slideLimit": 100}``) and the X of the X-move rule have no
PGN form and are dropped; the counter N of ``N/M`` becomes the FEN's
halfmove clock.

Everything is a generator, so a file of any size converts in bounded memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from fastpgn.board import Board, declared_start, moves_to_pgn
from fastpgn.errors import BoardError, FormatError, IllegalMoveError, InvalidFENError, PGNError
from fastpgn.notations import icn

__all__ = [
    "game_to_long",
    "game_to_short",
    "icn_to_pgn",
    "long_to_pgn",
    "pgn_to_icn",
    "short_to_pgn",
]

_FILES = "abcdefgh"
# "e4" -> "5,4"
_SQUARES = {f"{f}{r}": f"{x},{r}" for x, f in enumerate(_FILES, 1) for r in range(1, 9)}
_FEN_NAMES = {"P": "pawns", "N": "knights", "B": "bishops", "R": "rooks", "Q": "queens", "K": "kings"}
_FEN_LETTERS = {family: letter for letter, family in _FEN_NAMES.items()}
# The upstream converter lists the classical position by family, White before
# Black, then by square: keep that order for every start.
_FAMILY_ORDER = {"pawns": 0, "rooks": 1, "knights": 2, "bishops": 3, "queens": 4, "kings": 5}
# "5,2>5,4" -> "e2e4": every move between two squares of the board that is no promotion.
_PLAIN_MOVES = {f"{a}>{b}": f"{sa}{sb}" for sa, a in _SQUARES.items() for sb, b in _SQUARES.items()}
_PROMOTIONS = {"q": "q", "r": "r", "b": "b", "n": "n"}
_TAG_NAME = re.compile(r"[A-Za-z0-9_]+\Z")
# A tag value ends at a quote followed by "]": such a value has no short form.
_UNWRITABLE_VALUE = re.compile(r'"\s*\]')
_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_CHECKMATE = ["checkmate"]


def _rules() -> dict:
    allowed = ["queens", "rooks", "bishops", "knights"]
    return {"promotionRanks": [8, 1],
            "promotionsAllowed": {"white": list(allowed), "black": list(allowed)},
            "winConditions": {"white": list(_CHECKMATE), "black": list(_CHECKMATE)}}


# --------------------------------------------------------------------------
# PGN -> ICN

def _start(board: Board) -> tuple[dict, dict, str]:
    """``(startingPosition, specialRights, shortposition)`` of a chess position."""
    pieces = []
    for square in range(64):
        letter = board.piece_at(square)
        if letter is not None:
            colour = "W" if letter.isupper() else "B"
            family = _FEN_NAMES[letter.upper()]
            x, y = square % 8 + 1, square // 8 + 1
            pieces.append((_FAMILY_ORDER[family], colour == "B", y, x, family + colour))
    pieces.sort()
    position = {f"{x},{y}": name for _, _, y, x, name in pieces}
    marked = set()
    for _, _, y, x, name in pieces:
        if name == "pawnsW" and y == 2 or name == "pawnsB" and y == 7:
            marked.add(f"{x},{y}")
    for right in board.castling_rights.replace("-", ""):
        white = right.isupper()
        y = 1 if white else 8
        side = right.upper()
        x = 8 if side == "K" else 1 if side == "Q" else ord(side) - 64
        marked.add(f"{x},{y}")
        king = next(k for k, v in position.items() if v == ("kingsW" if white else "kingsB"))
        marked.add(king)
    rights = {key: True for key in position if key in marked}
    return position, rights, icn.long_to_short_position(position, rights)


_STANDARD_START = _start(Board())


def _variant_error(headers: Mapping[str, str]) -> str | None:
    variant = headers.get("Variant", "")
    try:
        _, chess960 = declared_start(None, variant)     # the board's one rule for Variant tags
    except BoardError:
        return f"no ICN: variant {variant!r} is not standard chess"
    if chess960:
        return (f"no ICN: variant {variant!r} castles the king to the g or c file, and ICN castling "
                f"is always the king's two-square move")
    return None


def _metadata(game) -> dict:
    metadata = {}
    for key, value in game.headers.items():
        if not key or any(c.isspace() or c in '":[]' for c in key):
            raise FormatError(f"no ICN: tag name {key!r} cannot be written in ICN")
        if _UNWRITABLE_VALUE.search(value) or "\n" in value or "\r" in value:
            raise FormatError(f'no ICN: tag {key} has a value ICN cannot hold (a quote followed by "]" '
                              f"or a line break): {value!r}")
        metadata[key] = value
    if "Result" not in metadata and game.result != "*":
        metadata["Result"] = game.result  # the movetext's result, so it survives
    return metadata


def game_to_long(game) -> dict:
    """A standard game (a :class:`fastpgn.Game`) as an ICN long-form dict.

    The dict equals what :func:`fastpgn.notations.icn.short_to_long` reads from
    :func:`game_to_short` of the same game. Raises :class:`FormatError` for a
    game that is not standard chess and :class:`IllegalMoveError` for one
    that does not replay, both placed at the game.

    >>> import fastpgn
    >>> game = next(iter(fastpgn.read_games(b'[White "A"]\\n\\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *\\n')))
    >>> long = game_to_long(game)
    >>> long["metadata"], long["turn"], long["moveRule"], long["fullMove"]
    ({'White': 'A'}, 'white', '0/100', 1)
    >>> long["moves"][-1], long["shortposition"][:24]
    ('5,1>7,1', 'P1,2+|P2,2+|P3,2+|P4,2+|')
    """
    try:
        return _game_to_long(game)
    except PGNError as exc:
        raise exc.at(offset=game.offset, game=game.number) from None


def _game_to_long(game) -> dict:
    headers = game.headers
    problem = _variant_error(headers)
    if problem:
        raise FormatError(problem)
    metadata = _metadata(game)
    fen = headers.get("FEN")
    if fen is None:
        position, rights, short = _STANDARD_START
        turn, enpassant, clock, fullmove = "w", None, 0, 1
    else:
        board = Board(fen)
        position, rights, short = _start(board)
        turn, clock, fullmove = board.turn, board.halfmove_clock, board.fullmove_number
        enpassant = board.ep_square
    white = turn == "w"
    moves = []
    for ply, uci in enumerate(game.uci()):
        if uci == "0000":
            raise FormatError(f"no ICN: ply {ply + 1} ({game.moves[ply]}) is a null move, which ICN cannot write")
        move = _SQUARES[uci[:2]] + ">" + _SQUARES[uci[2:4]]
        if len(uci) == 5:
            move += uci[4].upper() if white else uci[4]
        moves.append(move)
        white = not white
    out: dict[str, Any] = {"gameRules": _rules(), "metadata": metadata,
                           "turn": "white" if turn == "w" else "black"}
    if enpassant is not None:
        out["enpassant"] = [_FILES.index(enpassant[0]) + 1, int(enpassant[1])]
    out["moveRule"] = f"{clock}/100"
    out["fullMove"] = fullmove
    out["specialRights"] = dict(rights)
    out["startingPosition"] = dict(position)
    out["shortposition"] = short
    if moves:
        out["moves"] = moves
    return out


def _long_to_line(long: Mapping) -> str:
    view = {key: value for key, value in long.items() if key not in ("startingPosition", "specialRights")}
    view["startingPosition"] = long["shortposition"]
    if not long["metadata"]:
        del view["metadata"]  # no tag section, no leading space
    return icn._write_short(view, 2, False, True)  # built here: no need to check its shape


def game_to_short(game) -> str:
    """A standard game as one line of ICN short form (the moves as ``x,y>x,y``).

    >>> import fastpgn
    >>> game = next(iter(fastpgn.read_games(b'[Event "x"]\\n\\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\\n')))
    >>> tags, position, moves = game_to_short(game).split("  ")
    >>> tags, position[:26], moves[:31]
    ('[Event "x"] [Result "1-0"]', 'w 0/100 1 (8|1) P1,2+|P2,2', '5,2>5,4|5,7>5,5|4,1>8,5|2,8>3,6')
    """
    return _long_to_line(game_to_long(game))


def pgn_to_icn(games: Iterable, *, form: str = "short",
               on_error: Callable[[PGNError], None] | None = None) -> Iterator[str]:
    """One ICN line (without ``\\n``) per game of ``games``, lazily.

    ``form`` is ``"short"`` (ICN) or ``"long"`` (the long form as compact
    JSON). A game that cannot convert raises its error, or goes to
    ``on_error`` and is skipped when that is given.

    >>> import fastpgn, json
    >>> [json.loads(line)["moves"] for line in pgn_to_icn(fastpgn.read_games(b"1. d4 d5 *"), form="long")]
    [['4,2>4,4', '4,7>4,5']]
    """
    if form not in ("short", "long"):
        raise ValueError(f"form must be 'short' or 'long', not {form!r}")
    for game in games:
        try:
            long = game_to_long(game)
        except PGNError as exc:
            if on_error is None:
                raise
            on_error(exc)
            continue
        if form == "short":
            yield _long_to_line(long)
        else:
            yield json.dumps(long, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------
# ICN -> PGN

def _square_text(x: int, y: int) -> str:
    return f"{_FILES[x - 1]}{y}"


def _on_board(x: int, y: int) -> bool:
    return 1 <= x <= 8 and 1 <= y <= 8


def _parse_key(key: str) -> tuple[int, int]:
    x, _, y = key.partition(",")
    return int(x), int(y)


def _position_of(obj: Mapping) -> tuple[Mapping, Mapping]:
    position = obj.get("startingPosition")
    rights = obj.get("specialRights") or {}
    if isinstance(position, str):
        try:
            parsed = icn.short_to_long(position)
        except FormatError as exc:  # its column counts in the piece list, not in the input
            raise FormatError(f"startingPosition: {exc}") from None
        position, rights = parsed.get("startingPosition"), parsed.get("specialRights") or {}
    if not position:
        raise FormatError("no piece list: a PGN needs the starting position")
    return position, rights


def _placement(position: Mapping, rights: Mapping) -> tuple[str, str]:
    """The FEN's piece placement and castling fields of a piece list."""
    if position == _STANDARD_START[0] and rights == _STANDARD_START[1]:
        return _STANDARD_PLACEMENT
    board = [[""] * 8 for _ in range(8)]
    for key, name in position.items():
        x, y = _parse_key(key)
        family, colour = str(name)[:-1], str(name)[-1:]
        code = icn.PIECE_CODES.get(name, name)
        if family not in _FEN_LETTERS or colour not in "WB":
            raise FormatError(f"piece {code} on {key} ({name}) is not a chess piece")
        if not _on_board(x, y):
            raise FormatError(f"piece {code} on {key} is off the 8x8 board")
        letter = _FEN_LETTERS[family]
        board[y - 1][x - 1] = letter if colour == "W" else letter.lower()
    rows = []
    for rank in reversed(board):
        row, empty = "", 0
        for cell in rank:
            if cell:
                row += (str(empty) if empty else "") + cell
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))

    def castle(king: str, rook: str, name: str, letter: str) -> str:
        ok = (position.get(king) == "kings" + name and rights.get(king)
              and position.get(rook) == "rooks" + name and rights.get(rook))
        return letter if ok else ""

    castling = (castle("5,1", "8,1", "W", "K") + castle("5,1", "1,1", "W", "Q")
                + castle("5,8", "8,8", "B", "k") + castle("5,8", "1,8", "B", "q")) or "-"
    return "/".join(rows), castling


_STANDARD_PLACEMENT = ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "KQkq")


def _fen(obj: Mapping, position: Mapping, rights: Mapping) -> str:
    placement, castling = _placement(position, rights)
    turn = obj.get("turn") or "white"
    if turn not in ("white", "black"):
        raise FormatError(f"turn must be white or black, not {turn!r}")
    ep = "-"
    if obj.get("enpassant"):
        x, y = (int(v) for v in obj["enpassant"])
        if not _on_board(x, y):
            raise FormatError(f"the en passant square {x},{y} is off the 8x8 board")
        ep = _square_text(x, y)
    clock = 0
    if obj.get("moveRule"):
        done = str(obj["moveRule"]).partition("/")[0]
        if not done.isdigit():
            raise FormatError(f"the move rule must be N/M, not {obj['moveRule']!r}")
        clock = int(done)
    fullmove = int(obj.get("fullMove") or 1)
    return f"{placement} {'w' if turn == 'white' else 'b'} {castling} {ep} {clock} {fullmove}"


def _win_conditions_error(rules: Mapping) -> str | None:
    wins = rules.get("winConditions")
    if not wins:
        return None
    for side in ("white", "black"):
        if list(wins.get(side) or _CHECKMATE) != _CHECKMATE:
            return f"{side} wins by {','.join(map(str, wins[side]))}, not by checkmate alone"
    return None


def _coords_of(index: int, raw: Any) -> tuple[int, int, int, int, str]:
    """``(sx, sy, ex, ey, promotion code)`` of a compact string or a move object."""
    if isinstance(raw, Mapping):
        start, end = raw["startCoords"], raw["endCoords"]
        if isinstance(start, str):
            start = _parse_key(start)
        if isinstance(end, str):
            end = _parse_key(end)
        (sx, sy), (ex, ey) = (int(v) for v in start), (int(v) for v in end)
        name = raw.get("promotion") or ""
        return sx, sy, ex, ey, icn.PIECE_CODES.get(name, name)
    try:
        move = icn.short_to_long_compact_move(str(raw))
    except FormatError as exc:
        raise FormatError(f"move {index} ({raw}): {exc.reason}") from None
    (sx, sy), (ex, ey) = move["startCoords"], move["endCoords"]
    return sx, sy, ex, ey, icn.PIECE_CODES[move["promotion"]] if move.get("promotion") else ""


def _move_text(index: int, raw: Any) -> str:
    sx, sy, ex, ey, promotion = _coords_of(index, raw)
    return f"{sx},{sy}>{ex},{ey}{promotion}"


def _moves_of(moves: list, white: bool) -> list[str]:
    """The UCI of each move, checked to stay on the 8x8 board and to promote to a chess piece."""
    ucis = []
    for index, raw in enumerate(moves, 1):
        uci = _PLAIN_MOVES.get(raw) if isinstance(raw, str) else None
        if uci is None:
            sx, sy, ex, ey, promotion = _coords_of(index, raw)
            text = f"{sx},{sy}>{ex},{ey}{promotion}"
            if not (_on_board(sx, sy) and _on_board(ex, ey)):
                raise FormatError(f"move {index} ({text}) leaves the 8x8 board")
            uci = _square_text(sx, sy) + _square_text(ex, ey)
            if promotion:
                letter = _PROMOTIONS.get(promotion.lower())
                if letter is None:
                    raise FormatError(f"move {index} ({text}) promotes to {promotion}, not a chess piece")
                if promotion.isupper() != white:
                    raise FormatError(f"move {index} ({text}) promotes to a {'black' if white else 'white'} "
                                      f"piece on {'White' if white else 'Black'}'s move")
                uci += letter
        ucis.append(uci)
        white = not white
    return ucis


def _headers(obj: Mapping, fen: str) -> list[tuple[str, str]]:
    headers = []
    kept_fen = False
    for key, value in (obj.get("metadata") or {}).items():
        key, value = str(key), "" if value is None else str(value)
        if not _TAG_NAME.match(key):
            raise FormatError(f"metadata {key!r} cannot be a PGN tag name (letters, digits and _ only)")
        if "\n" in value or "\r" in value:
            raise FormatError(f"metadata {key} has a line break, which a PGN tag cannot hold")
        if key == "Result" and value not in _RESULTS:
            raise FormatError(f"Result {value!r} is not a PGN result (1-0, 0-1, 1/2-1/2 or *)")
        if key == "FEN":
            # Kept as written when it is the piece list's position, else rewritten.
            try:
                same = Board(value).fen() == Board(fen).fen()
            except InvalidFENError:
                same = False
            if not same:
                continue
            kept_fen = True
        headers.append((key, value))
    if not kept_fen:
        headers = [(k, v) for k, v in headers if k != "SetUp"]
    return headers


def long_to_pgn(obj: Mapping) -> str:
    """A long-form ICN game of standard chess as PGN text (one game, ending ``\\n``).

    Metadata becomes tags; the piece list becomes ``SetUp``/``FEN`` when it
    is not the standard start. Raises :class:`FormatError` saying why a game
    has no PGN (``no PGN: `` a fairy piece, a square off the 8x8 board, a
    move that is not legal chess, a win condition other than checkmate) or
    which field is not what a long form holds (``not an ICN long form: ``).

    >>> print(long_to_pgn(icn.short_to_long('[White "Tom"] w K5,1|k5,8|Q4,1 4,1>4,7|5,8>6,8')), end="")
    [Event "?"]
    [Site "?"]
    [Date "?"]
    [Round "?"]
    [White "Tom"]
    [Black "?"]
    [Result "*"]
    [SetUp "1"]
    [FEN "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"]
    <BLANKLINE>
    1. Qd7+ Kf8 *
    """
    try:
        icn._check_long(obj)
    except FormatError as exc:
        raise FormatError(f"not an ICN long form: {exc.reason}") from None
    return _checked_to_pgn(obj)


def _checked_to_pgn(obj: Mapping) -> str:
    """:func:`long_to_pgn` of a long form that has the shape (checked, or read by ``short_to_long``)."""
    try:
        return _long_to_pgn(obj)
    except FormatError as exc:
        raise FormatError(f"no PGN: {exc.reason}") from None


def _long_to_pgn(obj: Mapping) -> str:
    problem = _win_conditions_error(obj.get("gameRules") or {})
    if problem:
        raise FormatError(problem)
    position, rights = _position_of(obj)
    fen = _fen(obj, position, rights)
    try:
        Board(fen)
    except InvalidFENError as exc:
        raise FormatError(f"the piece list is not a legal chess position: {exc.reason}") from None
    moves = obj.get("moves") or []
    if not isinstance(moves, list):
        raise FormatError("moves must be a list")
    ucis = _moves_of(moves, fen.split(" ")[1] == "w")
    headers = _headers(obj, fen)
    result = dict(headers).get("Result")
    try:
        return moves_to_pgn(" ".join(ucis), headers, fen=fen, chess960=False, result=result)
    except IllegalMoveError:
        pass
    board = Board(fen)  # find the move, to name it in ICN
    for index, uci in enumerate(ucis, 1):
        try:
            board.push_uci(uci)
        except IllegalMoveError as exc:
            raise FormatError(f"move {index} ({_move_text(index, moves[index - 1])}) is not a legal "
                              f"chess move: {exc.reason}") from None
    raise AssertionError("moves_to_pgn refused moves that replay")  # pragma: no cover


def short_to_pgn(text: str, *, lenient: bool = False) -> str:
    """An ICN short-form game of standard chess as PGN text (see :func:`long_to_pgn`).

    >>> short_to_pgn("w K5,1|k5,8|P1,7 1,7>1,8Q").splitlines()[-1]
    '1. a8=Q+ *'
    >>> short_to_pgn("w K5,1|k5,8|HA1,7 1,7>1,8")
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: no PGN: piece HA on 1,7 (hawksW) is not a chess piece
    """
    return long_to_pgn(icn.short_to_long(text, lenient=lenient))


def icn_to_pgn(lines: Iterable[str], *, form: str = "short", lenient: bool = False,
               on_error: Callable[[PGNError], None] | None = None) -> Iterator[str]:
    """PGN text for each game of ``lines`` (one game a line; blank lines skipped), lazily.

    ``form`` is ``"short"`` (ICN strings) or ``"long"`` (JSON objects). Errors
    carry the game number, the line number in ``lines`` and, for malformed
    ICN or JSON, its column (an item of ``lines`` that holds several lines is
    one game, and its errors count lines from its first); they are raised, or
    go to ``on_error`` when given.

    >>> list(icn_to_pgn(["", "w K5,1|k5,8 5,1>5,2"]))[0].splitlines()[-1]
    '1. Ke2 *'
    >>> list(icn_to_pgn(["w K5,1|k5,8 5,1>5,2", "w K5,1|k5,8 5,1>5,2 %"]))
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: unexpected character '%' in the moves (game 2, line 2, column 21)
    """
    if form not in ("short", "long"):
        raise ValueError(f"form must be 'short' or 'long', not {form!r}")
    number = 0
    for line_number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        number += 1
        try:
            if form == "short":
                pgn = _checked_to_pgn(icn.short_to_long(line, lenient=lenient))
            else:
                pgn = long_to_pgn(icn._read_json(line))
        except PGNError as exc:
            at = line_number if exc.line is None else line_number + exc.line - 1
            error = FormatError(exc.reason, game=number, line=at, column=exc.column)
            if on_error is None:
                raise error from None
            on_error(error)
            continue
        yield pgn
