"""Writing games of the compact notation: as PGN, and fastpgn's games back as compact strings.

``compact_to_pgn`` writes one game as ``pgn-transform.pl`` does (tags, one move
pair a line, the comment, the result; the comment kept in a ``Comment`` tag
too, so that ``--reverse`` gets it back). ``game_to_compact`` writes a
fastpgn ``Game`` as the two compact lines, refusing what would not read back
as the same game. :mod:`fastpgn.notations.lichess_text` re-exports both.
"""

from __future__ import annotations

from itertools import chain, count, repeat

from fastpgn.errors import FormatError
from fastpgn.notations._compact_py import scan_ply
from fastpgn.notations._lichess_text_read import (
    _ROUNDS_MAX,
    CompactGame,
    _details,
    _moves_in_comment,
    _split_round,
    parse_details,
)

__all__ = ["DEFAULT_ME", "DEFAULT_OPPONENT", "game_to_compact", "compact_to_pgn"]

DEFAULT_ME = "Mike"
DEFAULT_OPPONENT = "Anon"

_COMPACT_RESULT = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": ".5-.5", "*": "*"}
_PREFIXES = [f"{k}. " for k in range(1, 1000)]  # "1. ", "2. ", ... for the PGN writer
# Plies known to be valid for White / for Black, for --reverse (bounded like the scanner's rounds).
_GOOD_PLIES: tuple[set[str], set[str]] = (set(), set())


def _tag_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def compact_to_pgn(game: CompactGame, *, me: str = DEFAULT_ME, opponent: str = DEFAULT_OPPONENT) -> str:
    """The PGN text of one game: tags, a blank line, one move pair per line, comment, result.

    The comment is also kept in a ``Comment`` tag, because PGN readers
    (fastpgn's included) skip comments and ``--reverse`` needs it back.

    >>> print(compact_to_pgn(CompactGame("2021.04.07", "W", "1-0", "pp", ["d4", "d5", "Bf4"])), end="")
    [Event "lichess.com"]
    [Site "lichess.com"]
    [Date "2021.04.07"]
    [Round "1"]
    [White "Mike"]
    [Black "Anon"]
    [Result "1-0"]
    [Comment "pp"]
    <BLANKLINE>
    1. d4 d5
    2. Bf4
    {pp}
    1-0
    <BLANKLINE>
    """
    return _pgn_text(game.date, game.colour, game.result, game.comment, game.moves, game.number, None,
                     _player_tags(me, opponent))


def _player_tags(me: str, opponent: str) -> tuple[str, str]:
    """The White and Black tags when "I" play White, and when "I" play Black."""
    me, opponent = _tag_value(me), _tag_value(opponent)
    return (f'[White "{me}"]\n[Black "{opponent}"]\n', f'[White "{opponent}"]\n[Black "{me}"]\n')


def _pgn_text(date, colour, result, comment, moves, number, movetext, players) -> str:
    """compact_to_pgn's text; ``movetext`` is the moves as :func:`_block_movetext` writes them, when known."""
    players = players[0] if colour == "W" else players[1]
    if movetext is not None and not comment:  # most games: one string built at once
        return (f'[Event "lichess.com"]\n[Site "lichess.com"]\n[Date "{date}"]\n[Round "{number}"]\n'
                f'{players}[Result "{result}"]\n{movetext}\n{result}\n\n')
    head = (f'[Event "lichess.com"]\n[Site "lichess.com"]\n[Date "{date}"]\n[Round "{number}"]\n'
            f'{players}[Result "{result}"]\n')
    if comment:
        # A brace comment cannot hold '}'; a ';' comment runs to the line end.
        tail = (f"{{{comment}}}\n" if "}" not in comment else f"; {comment}\n") + result + "\n\n"
        head += f'[Comment "{_tag_value(comment)}"]\n'
    else:
        tail = result + "\n\n"
    if movetext is not None:
        return head + movetext + "\n" + tail  # movetext starts with the blank line
    out = [head, "\n"]
    white, black = moves[0::2], moves[1::2]
    if len(white) < len(_PREFIXES):
        out.extend(chain.from_iterable(zip(_PREFIXES, white, repeat(" "), black, repeat("\n"))))
    else:
        out.extend(f"{k + 1}. {w} {b}\n" for k, (w, b) in enumerate(zip(white, black)))
    if len(white) > len(black):
        out.append(f"{len(white)}. {white[-1]}\n")
    out.append(tail)
    return "".join(out)


_NUMBER_STRINGS = [str(k) for k in range(1, 1000)]


def _compact_moves(moves: list[str]) -> str:
    rounds = (len(moves) + 1) // 2
    if rounds > len(_NUMBER_STRINGS):
        white, black = moves[0::2], moves[1::2]
        text = "".join(chain.from_iterable(zip(map(str, count(1)), white, black)))
        return text + f"{len(white)}{white[-1]}" if len(white) > len(black) else text
    # number, White's move, Black's move, ... by slice assignment (C speed)
    tokens = [""] * (len(moves) + rounds)
    tokens[0::3] = _NUMBER_STRINGS[:rounds]
    tokens[1::3] = moves[0::2]
    tokens[2::3] = moves[1::2]
    return "".join(tokens)


def my_colour(headers, me: str) -> str | None:
    """``"W"`` or ``"B"``: the side whose player is ``me``; None unless ``me`` is exactly one of them.

    >>> my_colour({"White": "Mike", "Black": "Anon"}, "Mike"), my_colour({"White": "Ann", "Black": "Bo"}, "Mike")
    ('W', None)
    """
    white, black = headers.get("White"), headers.get("Black")
    if white == me and black != me:
        return "W"
    if black == me and white != me:
        return "B"
    return None


def game_to_compact(game, *, me: str = DEFAULT_ME) -> str:
    """The two compact lines (details, moves) of a fastpgn ``Game``, without a final newline.

    "My" colour is the side whose player is ``me``; the details comment comes
    from a ``Comment`` tag. Raises FormatError when the game cannot be written
    so that reading it back gives the same game.

    >>> from fastpgn.reader import read_games
    >>> pgn = b'[Date "2021.04.07"][White "Mike"][Black "Anon"][Result "1-0"]\\n\\n1. d4 d5 2. Bf4 1-0\\n'
    >>> print(game_to_compact(next(iter(read_games(pgn)))))
    21.04.07W1-0
    1d4d52Bf4
    """
    headers = game.headers
    where = {"game": getattr(game, "number", None)}
    white, black = headers.get("White"), headers.get("Black")
    colour = my_colour(headers, me)
    if colour is None:
        raise FormatError(f"the player {me!r} is not exactly one of White {white!r} and Black "
                          f"{black!r} (see --me)", **where)
    if headers.get("FEN") or headers.get("SetUp") == "1":
        raise FormatError("the game starts from a set-up position (FEN), which compact strings cannot hold",
                          **where)
    date = headers.get("Date") or headers.get("UTCDate") or ""
    if not (len(date) == 10 and date.startswith("20") and date[4] == "." and date[7] == "."
            and (date[2:4] + date[5:7] + date[8:10]).isdigit()):
        raise FormatError(f"no usable Date tag (need 20YY.MM.DD, found {date!r})", **where)
    result = _COMPACT_RESULT.get(game.result)
    if result is None:
        raise FormatError(f"unknown result {game.result!r}", **where)
    # Lines are stripped when read, so trailing blanks could not come back.
    comment = headers.get("Comment", "").rstrip()
    if "\n" in comment or "\r" in comment:
        raise FormatError("the Comment tag holds a line break", **where)
    moves = game.moves
    details = date[2:] + colour + result + comment
    back = _details(details)
    if back is None:
        try:
            g = parse_details(details)
        except FormatError as exc:
            raise FormatError(f"the details line {details!r} does not read back ({exc.reason})",
                              **where) from None
        back = g.date, g.colour, g.result, g.comment
    if back[3] != comment or back[1] != colour or back[2] != game.result:
        raise FormatError(f"the details line {details!r} reads back differently", **where)
    if not moves:
        if comment and _moves_in_comment(comment) is not None:
            raise FormatError("the comment would be read as the game's moves", **where)
        return details
    bad = _first_bad_ply(moves)
    if bad is not None:
        raise FormatError(f"ply {bad + 1} {moves[bad]!r} is not a move the compact notation can hold",
                          **where)
    # Glued valid plies read back as written, with one exception. The scanner
    # only strays by taking a shorter reading of some ply, whose leftover is a
    # bare square ('Qh4' + 'e1'); that square can be a ply of its own but is
    # never followed by a move number or by another ply. So only a last move
    # of White's that splits into two plies ('Rf1f6#') reads back otherwise
    # (the property tests check this on real and generated games).
    if len(moves) % 2 and _split_round(moves[-1]) is not None:
        raise FormatError(f"the compact form reads back as different moves: the last move "
                          f"{moves[-1]!r} also reads as two", **where)
    return details + "\n" + _compact_moves(moves)


def _first_bad_ply(moves: list[str]) -> int | None:
    """Index of the first ply that is not one valid ply for its side, or None."""
    white_ok, black_ok = _GOOD_PLIES
    if white_ok.issuperset(moves[0::2]) and black_ok.issuperset(moves[1::2]):
        return None
    for k, move in enumerate(moves):
        known = _GOOD_PLIES[k % 2]
        if move not in known:
            if len(move) not in scan_ply(move, 0, "wb"[k % 2]):
                return k
            if len(known) >= _ROUNDS_MAX:
                known.clear()
            known.add(move)
    return None
