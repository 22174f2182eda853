"""PGN Crypt: movetext squeezed to ``e4,e5.Nf3,Nc6``, and back.

This module owns the crypt notation: writing it from games that fastpgn's
reader yields (so any PGN file of many games, compressed or not, line breaks
anywhere, comments, NAGs and variations skipped by the reader), reading it
back to PGN. The ``crypt`` command lives with the other commands in the
``cli`` package.

Grammar of one encoded game (one line per game)::

    line   := { tag } [ start ] [ body ]
    tag    := '[' name ' "' value '"]'     ; a PGN tag pair, \\" and \\\\ escaped (--headers)
    start  := digits ':'                   ; number of the first round, when it is not 1
    body   := round { '.' round } [ '.' result ] | result
    round  := move ',' move                ; White's move, Black's move
            | move                         ; the last round only: White's move alone
            | ',' move                     ; the first round only: Black moves first
    result := '1-0' | '0-1' | '1/2-1/2' | '*'
    move   := SAN as written: no blank, ',', '.', ':' or '['

Without a start, a result or tags this is exactly the upstream format
(``e4,e5.Nf3`` decodes to ``1. e4 e5 2. Nf3``). The result ``*`` is left out
when the line holds something else. Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fastpgn.errors import FormatError

__all__ = ["CryptGame", "decode", "decode_games", "decode_line", "encode", "encode_game",
           "encode_games"]

_RESULTS = frozenset(("1-0", "0-1", "1/2-1/2", "*"))
_NOT_IN_MOVE = frozenset(" \t\r\n,.:[]")
_NUMBERS = [f"{n}." for n in range(1024)]  # move-number tokens, made once
_DIGITS = frozenset("0123456789")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_TAG_NAMES: set[str] = set()  # tag names already found writable (bounded)


@dataclass
class CryptGame:
    """One game of the crypt notation.

    ``result`` is None when the line holds none; ``first_move`` and
    ``black_first`` place the first move (``12...`` is 12 and True).
    """

    moves: list[str] = field(default_factory=list)
    result: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    first_move: int = 1
    black_first: bool = False

    def movetext(self) -> str:
        """``1. e4 e5 2. Nf3``, ``12... Nf6 13. Bc4``, with the result when there is one.

        >>> CryptGame(["Nf6", "Bc4", "d5"], "1-0", first_move=12, black_first=True).movetext()
        '12... Nf6 13. Bc4 d5 1-0'
        """
        out = []
        number = self.first_move
        moves = self.moves
        k = 0
        if self.black_first and moves:
            out.append(f"{number}... {moves[0]}")
            number, k = number + 1, 1
        white, black = moves[k::2], moves[k + 1::2]
        rounds, full = len(white), len(black)
        numbers = _NUMBERS[number:number + rounds] if number + rounds < len(_NUMBERS) else [
            f"{n}." for n in range(number, number + rounds)]
        # Interleave number, White, Black with slice assignments (C speed).
        tokens = [""] * (3 * full)
        tokens[0::3] = numbers[:full]
        tokens[1::3] = white[:full]
        tokens[2::3] = black
        out += tokens
        if rounds > full:
            out.append(numbers[-1])
            out.append(white[-1])
        if self.result is not None:
            out.append(self.result)
        return " ".join(out)

    def to_pgn(self, *, separable: bool = False) -> str:
        """The game as PGN text (tags, a blank line, movetext on one line), no final newline.

        ``separable`` makes sure another game can follow: a game without tags
        gets a Result tag (readers start a game at its tags) and a game without
        a result gets ``*``.

        >>> print(CryptGame(["e4", "e5"], "1-0", {"Event": 'A "B"'}).to_pgn())
        [Event "A \\"B\\""]
        <BLANKLINE>
        1. e4 e5 1-0
        """
        game = self
        if separable and (self.result is None or not self.headers):
            result = self.result or self.headers.get("Result") or "*"
            game = CryptGame(self.moves, result, self.headers or {"Result": result},
                             self.first_move, self.black_first)
        text = game.movetext()
        if not game.headers:
            return text
        values = "".join(game.headers.values())
        if '"' in values or "\\" in values:
            tags = "".join([f'[{k} "{_escape(v)}"]\n' for k, v in game.headers.items()])
        else:
            tags = "".join([f'[{k} "{v}"]\n' for k, v in game.headers.items()])
        return f"{tags}\n{text}"


def _escape(value: str) -> str:
    if "\\" in value or '"' in value:
        return value.replace("\\", "\\\\").replace('"', '\\"')
    return value


def _start_of(headers: dict[str, str], first_ply: int | None = None) -> tuple[int, bool]:
    """First move number and whether Black moves first: from a FEN tag, else from the movetext's
    first move number (``12...``)."""
    fields = headers.get("FEN", "").split()
    if not fields and first_ply is not None:
        return first_ply // 2 + 1, first_ply % 2 == 1
    black = len(fields) > 1 and fields[1] == "b"
    number = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() and int(fields[5]) > 0 else 1
    return number, black


def _bad_move(move: str) -> bool:
    return not move or move in _RESULTS or any(c in _NOT_IN_MOVE for c in move)


def _check_moves(moves: list[str], game: int | None) -> None:
    # A few passes in C over the joined moves (a move that is a result holds one of those
    # four texts); the per-move search runs only to name the culprit.
    joined = "".join(moves)
    if ("" in moves or " " in joined or "," in joined or "." in joined or ":" in joined or "[" in joined
            or "]" in joined or "\t" in joined or "\r" in joined or "\n" in joined
            or (("1-0" in joined or "0-1" in joined or "1/2" in joined or "*" in joined)
                and not _RESULTS.isdisjoint(moves))):
        k = next(k for k, move in enumerate(moves) if _bad_move(move))
        raise FormatError(f"ply {k + 1} {moves[k]!r} cannot be written in crypt notation", game=game)


def encode_game(moves: list[str], *, result: str = "*", headers: dict[str, str] | None = None,
                first_move: int = 1, black_first: bool = False, number: int | None = None) -> str:
    """One game as one crypt line (no newline).

    ``headers`` (when given) are written as PGN tag pairs before the moves;
    ``number`` only places errors.

    >>> encode_game(["e4", "e5", "Nf3", "Nc6", "Bc4"])
    'e4,e5.Nf3,Nc6.Bc4'
    >>> encode_game(["Nf6", "Bc4", "d5"], result="0-1", first_move=12, black_first=True)
    '12:,Nf6.Bc4,d5.0-1'
    >>> encode_game([], result="1-0", headers={"White": "Kasparov, G."})
    '[White "Kasparov, G."]1-0'
    """
    out = []
    if headers:
        values = "".join(headers.values())
        if _TAG_NAMES.issuperset(headers) and "\n" not in values and "\r" not in values:
            if '"' in values or "\\" in values:
                out = [f'[{name} "{_escape(value)}"]' for name, value in headers.items()]
            else:
                out = [f'[{name} "{value}"]' for name, value in headers.items()]
        else:
            for name, value in headers.items():
                if not name or any(c not in _NAME_CHARS for c in name):
                    raise FormatError(f"tag name {name!r} cannot be written in crypt notation", game=number)
                if "\n" in value or "\r" in value:
                    raise FormatError(f"the value of tag {name} holds a line break", game=number)
                out.append(f'[{name} "{_escape(value)}"]')
            if len(_TAG_NAMES) > 4096:
                _TAG_NAMES.clear()
            _TAG_NAMES.update(headers)
    _check_moves(moves, number)
    body = []
    if moves:
        if first_move != 1:
            out.append(f"{first_move}:")
        k = 0
        if black_first:
            body.append("," + moves[0])
            k = 1
        white, black = moves[k::2], moves[k + 1::2]
        body.extend(map(",".join, zip(white, black)))
        if len(white) > len(black):
            body.append(white[-1])
    if result not in _RESULTS:
        raise FormatError(f"unknown result {result!r}", game=number)
    if result != "*" or not (body or headers):
        body.append(result)  # '*' only where the line would be empty without it
    out.append(".".join(body))
    return "".join(out)


def _parse_tags(s: str, line: int | None) -> tuple[dict[str, str], int]:
    if s[:1] != "[":
        return {}, 0
    # Fast path, for tags without escapes (a move cannot hold ']', so the last
    # '"]' ends the tags): split once and check the pieces; else the loop below.
    end = s.rfind('"]') + 2
    if end > 2 and "\\" not in s[:end]:
        try:
            headers = dict(part.split(' "', 1) for part in s[:end - 2].split('"]'))
        except ValueError:
            headers = None
        if (headers is not None and all(k[:1] == "[" and k.isascii() and k[1:].replace("_", "a").isalnum()
                                        for k in headers)
                and '"' not in "".join(headers.values())):
            while end < len(s) and s[end] in " \t":
                end += 1
            return {k[1:]: v for k, v in headers.items()}, end
    headers = {}
    n, i = len(s), 0
    while i < n and s[i] == "[":
        j = s.find(' "', i)
        name = s[i + 1:j] if j > 0 else ""
        if not (name and name.isascii() and name.replace("_", "a").isalnum()):
            raise FormatError('expected a tag pair [Name "value"]', line=line, column=i + 1)
        j += 2
        q = s.find('"', j)
        if s.find("\\", j, q if q >= 0 else n) < 0:
            if q < 0:
                raise FormatError("unterminated tag value", line=line, column=i + 1)
            value = s[j:q]
            j = q
        else:
            chars = []
            while True:
                if j >= n:
                    raise FormatError("unterminated tag value", line=line, column=i + 1)
                c = s[j]
                if c == "\\" and j + 1 < n:
                    chars.append(s[j + 1])
                    j += 2
                elif c == '"':
                    break
                else:
                    chars.append(c)
                    j += 1
            value = "".join(chars)
        if j + 1 >= n or s[j + 1] != "]":
            raise FormatError("expected ']' after the tag value", line=line, column=j + 2)
        headers[name] = value
        i = j + 2
        while i < n and s[i] in " \t":
            i += 1
    return headers, i


def decode_line(s: str, *, line: int | None = None) -> CryptGame:
    """Read one crypt line; FormatError names the line and column of a mistake.

    >>> g = decode_line("e4,e5.Nf3,Nc6.1-0")
    >>> g.moves, g.result
    (['e4', 'e5', 'Nf3', 'Nc6'], '1-0')
    >>> decode_line("e4.e5", line=3)
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: a round with White's move alone must be the last (line 3, column 1)
    """
    s = s.rstrip()
    headers, i = _parse_tags(s, line)
    n = len(s)
    first_move, black_first = 1, False
    j = i
    while j < n and s[j] in _DIGITS:
        j += 1
    if j > i and j < n and s[j] == ":":
        first_move = int(s[i:j])
        if first_move < 1:
            raise FormatError("the first move number must be at least 1", line=line, column=i + 1)
        i = j + 1
    moves: list[str] = []
    result = None
    if i < n:
        body = s[i:]
        # Fast path for a well-formed body: split once, then check the shape by
        # writing the moves back (the encoding is canonical) and comparing.
        # Anything odd goes to the loop below, which names the column.
        dot = body.rfind(".")
        tail: str | None = body[dot + 1:]
        head = body[:dot] if dot >= 0 else ""
        if tail not in _RESULTS:
            tail, head = None, body
        if not head:
            if dot < 0:  # the result alone
                return CryptGame(moves, tail, headers, first_move, black_first)
        elif not (" " in head or "\t" in head or ":" in head or "[" in head or "]" in head):
            flat = head.replace(".", ",").split(",")
            white, black = flat[0::2], flat[1::2]
            pairs = list(map(",".join, zip(white, black)))
            if len(white) > len(black):
                pairs.append(white[-1])
            black_first = flat[0] == "" and len(flat) > 1
            if black_first:
                del flat[0]
            # Only a result-like text ('*', '1-0', '0-1', '1/2-1/2') needs the per-move look.
            resultish = "*" in head or "-0" in head or "0-" in head or "/" in head
            if (".".join(pairs) == head and "" not in flat
                    and not (resultish and not _RESULTS.isdisjoint(flat))):
                return CryptGame(flat, tail, headers, first_move, black_first)
            black_first = False
        rounds = body.split(".")
        if rounds[-1] in _RESULTS:
            result = rounds.pop()
        last = len(rounds) - 1
        col = i + 1
        for k, part in enumerate(rounds):
            if not part:
                raise FormatError("an empty round", line=line, column=col)
            if part in _RESULTS:
                raise FormatError("only the end of the line may hold the result", line=line, column=col)
            pair = part.split(",")
            if len(pair) > 2:
                raise FormatError("a round holds more than two moves", line=line, column=col)
            if len(pair) == 1 and k != last:
                raise FormatError("a round with White's move alone must be the last", line=line, column=col)
            if pair[0] == "" and len(pair) == 2:
                if k != 0:
                    raise FormatError("only the first round may leave out White's move",
                                      line=line, column=col)
                black_first = True
                pair = pair[1:]
                col += 1
            for move in pair:
                if not move or move in _RESULTS or any(c in _NOT_IN_MOVE for c in move):
                    what = "a result" if move in _RESULTS else "an empty move" if not move else repr(move)
                    raise FormatError(f"expected a move, found {what}", line=line, column=col)
                moves.append(move)
                col += len(move) + 1
            if not pair:
                col += 1
    return CryptGame(moves, result, headers, first_move, black_first)


# What a plain body may hold besides moves: ',' and '.' taking turns. Keeping those and the
# characters that send a line to decode_line (blanks, ':', '[', ']', and '*' and '/' of a result),
# a plain body keeps ",.,.,." and nothing else.
_ALTERNATE = b",." * 1024
_NOT_KEPT = bytes(c for c in range(256) if c not in b",. \t:[]*/")


def _plain_pgn(s: str) -> str | None:
    """``decode_line(s).to_pgn(separable=True)`` for a line without a start number or a Black
    first move that reads without a word, else None (then decode_line says what it makes of it).

    >>> _plain_pgn("e4,e5.Nf3.1-0")
    '[Result "1-0"]\\n\\n1. e4 e5 2. Nf3 1-0'
    """
    s = s.rstrip()
    headers = None
    if s[:1] == "[":
        try:
            headers, i = _parse_tags(s, None)
        except FormatError:
            return None
        s = s[i:]
    if not s or s[0] in "[,0123456789":
        return None
    dot = s.rfind(".")
    result: str | None = s[dot + 1:]
    if result in _RESULTS:
        head = s[:dot]
    else:
        head, result = s, None
    # No empty move: no separator at either end or two in a row.
    if not head or head[-1] == "," or head[-1] == "." or ",." in head or ".," in head:
        return None
    kept = head.encode().translate(None, _NOT_KEPT)
    if kept != _ALTERNATE[:len(kept)]:
        return None
    if ("-0" in head or "0-" in head) and not _RESULTS.isdisjoint(head.replace(".", ",").split(",")):
        return None
    rounds = head.split(".")
    k = len(rounds)
    if k >= len(_NUMBERS) - 1:
        return None
    tokens = [""] * (2 * k)
    tokens[0::2] = _NUMBERS[1:k + 1]
    tokens[1::2] = rounds
    movetext = " ".join(tokens).replace(",", " ")
    if not headers:
        result = result or "*"
        return f'[Result "{result}"]\n\n{movetext} {result}'
    result = result or headers.get("Result") or "*"
    values = "".join(headers.values())
    if '"' in values or "\\" in values:
        tags = "".join([f'[{k} "{_escape(v)}"]\n' for k, v in headers.items()])
    else:
        tags = "".join([f'[{k} "{v}"]\n' for k, v in headers.items()])
    return f"{tags}\n{movetext} {result}"


def decode_games(lines: Iterable[str], *, on_error=None) -> Iterator[str]:
    """PGN text of each crypt line (no final newline), one game of lookahead.

    A single game is written as upstream writes it; when there are several,
    each is made ``separable`` (see ``CryptGame.to_pgn``). With ``on_error``
    set, a bad line is passed to it and skipped; otherwise it raises. When
    ``on_error`` raises, to stop, the game held back is yielded first.

    >>> list(decode_games(["e4,e5.Nf3", "d4,d5.1-0"]))
    ['[Result "*"]\\n\\n1. e4 e5 2. Nf3 *', '[Result "1-0"]\\n\\n1. d4 d5 1-0']
    """
    held = None  # the last game's PGN, separable, and its line (a lone game is written otherwise)
    held_line: tuple[str, int] | None = None
    several = False
    for number, text in enumerate(lines, 1):
        if not text or text.isspace():
            continue
        pgn = _plain_pgn(text)
        if pgn is None:
            try:
                pgn = decode_line(text, line=number).to_pgn(separable=True)
            except FormatError as exc:
                if on_error is None:
                    raise
                try:
                    on_error(exc)
                except Exception:
                    if held is not None:  # the caller stops here: every game before is its
                        yield held
                    raise
                continue
        if held is not None:
            several = True
            yield held
        held, held_line = pgn, (text, number)
    if held is not None:
        assert held_line is not None  # set with held
        yield held if several else decode_line(held_line[0], line=held_line[1]).to_pgn()


def decode(text: str) -> str:
    """Crypt text (one game a line) to PGN text; the upstream ``decrypt``.

    >>> decode("e4,e5.Nf3,Nc6.Bc4,d5")
    '1. e4 e5 2. Nf3 Nc6 3. Bc4 d5'
    """
    return "\n\n".join(decode_games(text.splitlines()))


def encode_games(source, *, headers: bool = False, errors: str = "raise", on_error=None,
                 reader=None) -> Iterator[str]:
    """One crypt line (no newline) per game of ``source`` (anything ``read_games`` reads).

    ``errors`` goes to the reader. Pass ``reader`` (any iterable of games,
    e.g. your own ``read_games(...)``, whose ``rejected`` you can inspect
    afterwards) to encode those games instead of reading ``source``. A game
    the notation cannot hold raises FormatError, or goes to ``on_error``.

    >>> list(encode_games(b"1. e4 e5 2. Nf3 Nc6 1-0"))
    ['e4,e5.Nf3,Nc6.1-0']
    """
    from fastpgn.reader import read_games

    if reader is None:
        reader = read_games(source, errors=errors)
        reader.ends_whole = True    # PGN Crypt's game files end with a move: no result, no line end
    for game in reader:
        tags = game.headers
        first_move, black_first = _start_of(tags, getattr(game, "first_ply", None))
        try:
            yield encode_game(game.moves, result=game.result, headers=tags if headers else None,
                              first_move=first_move, black_first=black_first, number=game.number)
        except FormatError as exc:
            exc = exc.at(offset=game.offset)
            if on_error is None:
                raise exc from None
            on_error(exc)


def encode(pgn: str | bytes, *, headers: bool = False) -> str:
    """PGN text (one or many games) to crypt text, one line per game; the upstream ``encrypt``.

    >>> encode("1. e4 e5\\n2. Nf3 Nc6\\n3. Bc4 d5\\n")
    'e4,e5.Nf3,Nc6.Bc4,d5'
    >>> encode('[White "A"]\\n\\n1. e4 1-0\\n\\n[White "B"]\\n\\n1. d4 d5 0-1\\n', headers=True)
    '[White "A"]e4.1-0\\n[White "B"]d4,d5.0-1'
    """
    data = pgn.encode("utf-8") if isinstance(pgn, str) else pgn
    return "\n".join(encode_games(data, headers=headers))
