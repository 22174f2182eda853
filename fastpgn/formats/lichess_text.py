"""Compact lichess game strings (the notation of ``pgn-transform.pl``) to PGN, statistics and back.

This module owns the compact notation: its hand-written move scanner, the
PGN and statistics (CSV and table) it writes, the reverse direction (any PGN
fastpgn reads back to compact strings), and the ``lichess-text`` command.

Grammar accepted (one game is a details line and an optional moves line)::

    file     := { blank | note | details [moves { moves }] }
    note     := '#' text                       ; a title line, skipped
    details  := YY '.' MM '.' DD colour result comment
    colour   := 'W' | 'B'                      ; the side "I" played
    result   := '1-0' | '0-1' | '.5-.5' | '1/2-1/2' | '*'
    comment  := any text to the end of the line (may be empty)
    moves    := [number] ply [ply] { number ply [ply] }
    number   := the next move number in decimal (the very first may be left out)
    ply      := castle | piece | pawn, then any of '+' '#' '!' '?'
    castle   := 'O-O-O' | 'O-O'
    piece    := [KQRBN] [file | rank | file rank] ['x'] file rank
    pawn     := file (rank | 'x' file rank) [['='] [QRBN]]  ; promotion exactly on rank 1 or 8

Lines are stripped first; whitespace between moves is allowed. Moves are
glued together, so the scanner tries the readings of each ply shortest first
and keeps the one after which the next move number (or the end of the line)
follows; a move number that is not the next one is an error naming the line
and the column. A moves line that follows another moves line continues the
same game. A details line with no moves line is a game without moves, unless
its comment ends in a complete moves string (``...pawns1g4d52Bg2...``): then
the moves are taken from the comment, with a warning.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, count, islice, repeat
from pathlib import Path
from typing import Callable, Iterable, Iterator

from fastpgn.errors import FormatError, InputError
from fastpgn._command import EXIT_RULE, Output, Run, add_error_options, guarded
from fastpgn.formats._compact import kernel as _compact
from fastpgn.formats._compact_py import scan_ply
from fastpgn.sources import line_blocks

__all__ = [
    "CompactGame",
    "Stats",
    "game_to_compact",
    "game_to_pgn",
    "main",
    "parse_details",
    "read_compact",
    "scan_moves",
    "scan_ply",
]

DEFAULT_ME = "Mike"
DEFAULT_OPPONENT = "Anon"

_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t")
# Compact result -> PGN result; '1/2-1/2' is accepted too, written back as '.5-.5'.
_RESULTS = (("1/2-1/2", "1/2-1/2"), (".5-.5", "1/2-1/2"), ("1-0", "1-0"), ("0-1", "0-1"), ("*", "*"))
_COMPACT_RESULT = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": ".5-.5", "*": "*"}


# ---------------------------------------------------------------- the scanner


def _skip_space(s: str, i: int, n: int) -> int:
    while i < n and s[i] in _SPACE:
        i += 1
    return i


def _digits_end(s: str, i: int, n: int) -> int:
    while i < n and s[i] in _DIGITS:
        i += 1
    return i


def _shown(s: str, i: int) -> str:
    j = i
    while j < len(s) and j - i < 12 and s[j] not in _SPACE:
        j += 1
    return repr(s[i:j]) if j > i else "the end of the line"


# Characters that can end a ply / start one: a move number sits between them.
_PLY_END = frozenset("12345678+#!?QRBNO")
_PLY_START = frozenset("abcdefghKQRBNO")
_PREFIXES = [f"{k}. " for k in range(1, 1000)]  # "1. ", "2. ", ... for the PGN writer
_NUMBER_SIZES = [(str(k), len(str(k))) for k in range(2, 1000)]
# Round text ('Nf3Nc6') -> its two plies; the set of distinct rounds in real
# games is small, so this turns most rounds into one dict lookup. Bounded.
_ROUNDS: dict[str, tuple[str, str]] = {}
_LAST_ROUNDS: dict[str, tuple[str, ...]] = {}
_ROUNDS_MAX = 1 << 17


def _split_round(chunk: str) -> tuple[str, str] | None:
    """The two plies that make up ``chunk`` exactly, or None."""
    n = len(chunk)
    for end in scan_ply(chunk, 0, "w"):
        if end < n and n in scan_ply(chunk, end, "b"):
            return chunk[:end], chunk[end:]
    return None


def _fast_scan(s: str) -> list[str] | None:
    """The plies of a well-formed moves string without blanks, or None to use the careful scanner.

    Move numbers are found with str.find and checked against their
    neighbours; every round between two numbers must split into exactly two
    plies (mid-line that split is unique), so a wrong guess shows up as None.
    """
    n = len(s)
    pos = 1 if s.startswith("1") else 0
    num_at = 0  # where the current round's number starts
    moves: list[str] = []
    rounds = _ROUNDS
    get = rounds.get
    find = s.find
    ends, starts = _PLY_END, _PLY_START
    for number, size in _NUMBER_SIZES:
        p = find(number, pos + 4)  # two plies take at least four characters
        if p < 0:
            break
        q = p + size
        while not (s[p - 1] in ends and q < n and s[q] in starts):
            p = find(number, p + 1)
            if p < 0:
                break
            q = p + size
        if p < 0:
            break
        pair = get(s[pos:p])
        if pair is None:
            pair = _split_round_cached(s[pos:p])
            if pair is None:
                return None
        moves += pair
        num_at, pos = p, q
    else:
        return None  # more moves than _NUMBER_SIZES holds: the careful scanner copes
    # The last round may hold White's move alone. Two plies win where both
    # readings fit, as in the careful scanner (which tries short plies first).
    if num_at == 0 and pos == 0:
        return None  # no move number at all: leave the odd cases to the careful scanner
    last = _LAST_ROUNDS.get(s[pos:])
    if last is None:
        last = _last_round(s[pos:])
    if not last:
        return None
    moves += last
    return moves


def _last_round(chunk: str) -> tuple[str, ...]:
    """The plies of a line's last round: two where they fit, else White's alone, else none. Cached."""
    plies = _split_round(chunk) or ((chunk,) if len(chunk) in scan_ply(chunk, 0, "w") else ())
    if len(_LAST_ROUNDS) >= _ROUNDS_MAX:
        _LAST_ROUNDS.clear()
    _LAST_ROUNDS[chunk] = plies
    return plies


def _split_round_cached(chunk: str) -> tuple[str, str] | None:
    pair = _split_round(chunk)
    if pair is not None:
        if len(_ROUNDS) >= _ROUNDS_MAX:
            _ROUNDS.clear()
        _ROUNDS[chunk] = pair
    return pair


def scan_moves(s: str, *, start_ply: int = 0, line: int | None = None, column: int = 1,
               _careful: bool = False) -> list[str]:
    """Split a compact moves string into SAN plies, checking every move number.

    ``start_ply`` is the number of plies already read (for a moves line that
    continues a game); ``line`` and ``column`` (of ``s[0]``) place errors.
    The first move number of a game may be left out.

    >>> scan_moves("1d4d52Bf4c63O-O-O+Qh4e14gxf8=Q+")
    ['d4', 'd5', 'Bf4', 'c6', 'O-O-O+', 'Qh4e1', 'gxf8=Q+']
    >>> scan_moves("1e4e53Nf3", line=7)
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: expected move number 2, found '3' (line 7, column 6)
    """
    if not _careful and start_ply == 0 and " " not in s and "\t" not in s:
        fast = _fast_scan(s)
        if fast is not None:
            return fast
    n = len(s)
    # Depth-first search over the readings of each ply. A state is (position,
    # ply); the expected move number follows from the ply, so a state that
    # failed once fails always and is remembered (linear time).
    failed: set[tuple[int, int]] = set()
    frames: list[list] = []  # [state, move_start, ply, ends, choice]
    best = (-1, "")

    def fail(pos: int, reason: str) -> None:
        nonlocal best
        if pos > best[0]:
            best = (pos, reason)

    pos, ply = 0, start_ply
    while True:
        ok = False
        state = (pos, ply)
        p = _skip_space(s, pos, n)
        if p == n:
            if ply % 2 == 1 or ply > start_ply or n == 0:
                break  # done: the last round may hold White's move alone
            fail(p, "no moves")
        elif state not in failed:
            if ply % 2 == 0:
                expected = ply // 2 + 1
                q = _digits_end(s, p, n)
                if q == p:
                    if ply == 0 and p == _skip_space(s, 0, n):
                        ok = True  # the first move number may be left out
                    else:
                        fail(p, f"expected move number {expected}, found {_shown(s, p)}")
                elif s[p] == "0" or int(s[p:q]) != expected:
                    fail(p, f"expected move number {expected}, found {s[p:q]!r}")
                else:
                    p = _skip_space(s, q, n)
                    ok = True
                    if p == n:
                        ok = False
                        fail(p, f"move number {expected} has no move")
            else:
                ok = True
            if ok:
                ends = scan_ply(s, p, "w" if ply % 2 == 0 else "b")
                if ends:
                    frames.append([state, p, ply, ends, 0])
                    pos, ply = ends[0], ply + 1
                    continue
                side = "White" if ply % 2 == 0 else "Black"
                if ply % 2 == 1 and s[p] in _DIGITS:
                    fail(p, f"expected Black's move {ply // 2 + 1}..., found {_shown(s, p)}")
                else:
                    fail(p, f"expected {side}'s move {ply // 2 + 1}, found {_shown(s, p)}")
        # Backtrack to the latest ply with another reading.
        failed.add(state)
        while frames:
            frame = frames[-1]
            frame[4] += 1
            if frame[4] < len(frame[3]):
                pos, ply = frame[3][frame[4]], frame[2] + 1
                break
            failed.add(frame[0])
            frames.pop()
        else:
            where, reason = best
            raise FormatError(reason, line=line, column=column + where)
    return [s[f[1]:f[3][f[4]]] for f in frames]


# ---------------------------------------------------------------- many lines at once
#
# scan_moves walks a line round by round in Python, about a microsecond a
# round. The converter instead hands whole blocks of lines to the compact
# kernel (fastpgn.formats._compact: _compact_cy, or its twin _compact_py,
# whose comments say why its reading is the one scan_moves gives), which
# vouches for the moves lines whose reading is sure and writes their PGN
# movetext; a line it declines goes to scan_moves.
_block_movetext = _compact.block_movetext


def _movetext_plies(movetext: str) -> list[str]:
    """The plies of a movetext that :func:`_block_movetext` wrote."""
    tokens = movetext.split()
    del tokens[0::3]  # the move numbers
    return tokens


# Plies known to be valid for White / for Black, for --reverse (bounded like _ROUNDS).
_GOOD_PLIES: tuple[set[str], set[str]] = (set(), set())


# ---------------------------------------------------------------- records

@dataclass
class CompactGame:
    """One game of the compact notation.

    ``date`` is ``YYYY.MM.DD``; ``colour`` the side "I" played (``W``/``B``);
    ``result`` a PGN result; ``number`` the game's place in the file (the
    Round tag); ``line`` the line of its details.
    """

    date: str
    colour: str
    result: str
    comment: str = ""
    moves: list[str] = field(default_factory=list)
    number: int = 1
    line: int | None = None

    def outcome(self) -> str:
        """``won``, ``lost``, ``drawn`` or ``open`` from "my" point of view."""
        if self.result == "1/2-1/2":
            return "drawn"
        if self.result == "*":
            return "open"
        return "won" if (self.result == "1-0") == (self.colour == "W") else "lost"


def _result_at(s: str, i: int):
    for token, pgn in _RESULTS:
        if s.startswith(token, i):
            return token, pgn
    return None


def _is_details(s: str) -> bool:
    return len(s) > 5 and s[2] == "." and s[5] == "."


def parse_details(s: str, *, line: int | None = None, column: int = 1,
                  warn: Callable[[str], None] | None = None) -> CompactGame:
    """Read a details line ``YY.MM.DD<W|B><result>[comment]`` (already stripped).

    Text between the date and the colour (an opponent's name pasted there)
    is moved to the front of the comment, with a warning through ``warn``.

    >>> g = parse_details("21.04.07W1-0pp")
    >>> g.date, g.colour, g.result, g.comment
    ('2021.04.07', 'W', '1-0', 'pp')
    >>> parse_details("21.04.25Venroy - 1480B0-1").comment
    'Venroy - 1480'
    """
    digits = s[0:2] + s[3:5] + s[6:8]
    if not (len(s) >= 8 and s[2] == "." and s[5] == "." and digits.isascii() and digits.isdigit()):
        k = next(k for k in range(8) if k >= len(s) or (s[k] != "." if k in (2, 5) else s[k] not in _DIGITS))
        raise FormatError("expected a date YY.MM.DD", line=line, column=column + k)
    month, day = int(s[3:5]), int(s[6:8])
    if not 1 <= month <= 12:
        raise FormatError(f"no month {s[3:5]!r}", line=line, column=column + 3)
    if not 1 <= day <= 31:
        raise FormatError(f"no day {s[6:8]!r}", line=line, column=column + 6)
    date = "20" + s[:8]
    displaced = ""
    at = 8
    if at >= len(s) or s[at] not in "WB" or _result_at(s, at + 1) is None:
        # The original reads whatever stands at the colour's place. We look for
        # the first "W"/"B" that a result follows and keep the text before it.
        for k in range(at + 1, len(s)):
            if s[k] in "WB" and _result_at(s, k + 1) is not None:
                displaced, at = s[8:k].strip(), k
                break
        else:
            if at < len(s) and s[at] in "WB":
                raise FormatError(f"expected a result (1-0, 0-1, .5-.5 or *), found {_shown(s, at + 1)}",
                                  line=line, column=column + at + 1)
            raise FormatError(f"expected my colour W or B, found {_shown(s, at)}",
                              line=line, column=column + at)
        if warn is not None:
            where = f"line {line}, " if line is not None else ""
            warn(f"text {displaced!r} stands where the colour should be; moved to the comment "
                 f"({where}column {column + 8})")
    token, result = _result_at(s, at + 1)
    comment = s[at + 1 + len(token):]
    if displaced:
        comment = displaced + (" " + comment.strip() if comment.strip() else "")
    return CompactGame(date, s[at], result, comment, [], 1, line)


# The start of each result token ('1/2' and '.5-' still need the rest checked).
_RESULT_HEADS = {"1-0": ("1-0", "1-0"), "0-1": ("0-1", "0-1"), "1/2": ("1/2-1/2", "1/2-1/2"),
                 ".5-": (".5-.5", "1/2-1/2"), "*": ("*", "*")}


_DETAILS: dict[str, tuple[str, str, str, str]] = {}  # details line -> _details of it, bounded


def _details(s: str) -> tuple[str, str, str, str] | None:
    """parse_details of a details line it reads without a word: (date, colour, result, comment), else None."""
    colour = s[8:9]
    if colour != "W" and colour != "B":
        return None
    head = _RESULT_HEADS.get(s[9:12]) or _RESULT_HEADS.get(s[9:10])
    if head is None or not s.startswith(head[0], 9):
        return None
    month, day = s[3:5], s[6:8]
    if not (s[:8].isascii() and s[:2].isdigit() and month.isdigit() and day.isdigit()
            and "01" <= month <= "12" and "01" <= day <= "31"):
        return None
    return "20" + s[:8], colour, head[1], s[9 + len(head[0]):]


def _moves_in_comment(comment: str) -> tuple[str, list[str]] | None:
    """Split ``"White resigned 1e4c5..."`` into the comment and its moves, if it holds them."""
    for k, ch in enumerate(comment):
        if ch == "1" and (k == 0 or comment[k - 1] not in _DIGITS):
            try:
                moves = scan_moves(comment[k:])
            except FormatError:
                continue
            if moves:
                return comment[:k].rstrip(), moves
    return None


def read_compact(lines: Iterable[str], *, on_error: Callable[[FormatError], None] | None = None,
                 on_warning: Callable[[str], None] | None = None) -> Iterator[CompactGame]:
    """Iterate the games of compact-notation text, one game of lookahead (streaming).

    With ``on_error`` unset the first malformed game raises FormatError;
    otherwise the error is passed to ``on_error`` and the next game is read.
    Games are numbered in file order, rejected ones included, as the
    original numbers its Round tags.

    >>> [(g.number, g.result, g.moves) for g in read_compact(["21.04.07W1-0", "1e4e52Qh5"])]
    [(1, '1-0', ['e4', 'e5', 'Qh5'])]
    """
    for fields, movetext in _read(_batches(lines), on_error, on_warning):
        if movetext is not None:
            fields[4] = _movetext_plies(movetext)
        yield CompactGame(*fields)


_BATCH_LINES = 2048


def _batches(lines: Iterable[str]) -> Iterator[tuple[int, list[str], list[str] | None]]:
    """Batches for :func:`_read` from lines of text (a line may keep its line break)."""
    it = iter(lines)
    number = 1
    while True:
        chunk = list(islice(it, _BATCH_LINES))
        if not chunk:
            return
        try:
            glued = _block_movetext("\n".join([line.rstrip("\r\n") for line in chunk]).encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate
            glued = None
        yield number, chunk, glued if glued is not None and len(glued) == len(chunk) else None
        number += len(chunk)


def _read(batches, on_error, on_warning) -> Iterator[tuple[list, str | None]]:
    """read_compact's reader: the fields of each game (CompactGame's, in order) and its PGN
    movetext when :func:`_block_movetext` gave it, else None. Where the movetext is given, the
    moves field is left empty (:func:`_movetext_plies` makes it): the PGN writer needs no list.

    ``batches`` yields (number of the first line, lines, :func:`_block_movetext` of those lines
    or None).
    """
    pending: list | None = None  # date, colour, result, comment, moves, number, line
    movetext: str | None = None
    rejected = False  # the current game's details were bad: skip its moves lines
    count = 0

    def finish(game: list, movetext: str | None) -> list:
        if not game[4] and game[3] and movetext is None:
            split = _moves_in_comment(game[3])
            if split is not None:
                game[3], game[4] = split
                if on_warning is not None:
                    on_warning(f"the comment holds the game's moves; read them from there "
                               f"(line {game[6]}, game {game[5]})")
        return game

    for first, lines, glued in batches:
        number = first - 1
        for raw, text in zip(lines, glued if glued is not None else repeat(None)):
            number += 1
            stripped = raw.strip()
            if not stripped or stripped[0] == "#":
                continue
            if len(stripped) > 5 and stripped[2] == "." and stripped[5] == ".":  # _is_details
                if pending is not None:
                    yield finish(pending, movetext), movetext
                    pending = None
                count += 1
                details = _DETAILS.get(stripped)
                if details is None:
                    details = _details(stripped)
                    if details is not None and not details[3]:  # no comment: lines repeat
                        if len(_DETAILS) >= 4096:
                            _DETAILS.clear()
                        _DETAILS[stripped] = details
                if details is None:
                    try:
                        g = parse_details(stripped, line=number, column=raw.index(stripped[0]) + 1,
                                          warn=on_warning)
                    except FormatError as exc:
                        if on_error is None:
                            raise
                        on_error(exc)
                        rejected = True
                        continue
                    details = g.date, g.colour, g.result, g.comment
                pending = [*details, [], count, number]
                rejected = False
                movetext = None
            elif rejected:
                continue
            elif pending is None:
                error = FormatError("moves without a details line before them", line=number,
                                    column=raw.index(stripped[0]) + 1)
                if on_error is None:
                    raise error
                on_error(error)
            else:
                moves = pending[4]
                if movetext is not None:  # a second moves line: the game goes on
                    moves[:] = _movetext_plies(movetext)
                    movetext = None
                elif text is not None and not moves:
                    movetext = text
                    continue
                try:
                    moves.extend(scan_moves(stripped, start_ply=len(moves), line=number,
                                            column=raw.index(stripped[0]) + 1))
                except FormatError as exc:
                    if on_error is None:
                        raise
                    on_error(exc)
                    pending, rejected = None, True
    if pending is not None:
        yield finish(pending, movetext), movetext


# ---------------------------------------------------------------- writers

def _tag_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def game_to_pgn(game: CompactGame, *, me: str = DEFAULT_ME, opponent: str = DEFAULT_OPPONENT) -> str:
    """The PGN text of one game: tags, a blank line, one move pair per line, comment, result.

    The comment is also kept in a ``Comment`` tag, because PGN readers
    (fastpgn's included) skip comments and ``--reverse`` needs it back.

    >>> print(game_to_pgn(CompactGame("2021.04.07", "W", "1-0", "pp", ["d4", "d5", "Bf4"])), end="")
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
    """game_to_pgn's text; ``movetext`` is the moves as :func:`_block_movetext` writes them, when known."""
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
    if white == me and black != me:
        colour = "W"
    elif black == me and white != me:
        colour = "B"
    else:
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


# ---------------------------------------------------------------- statistics

_COLUMNS = ("Played", "Won", "Won as White", "Won as Black", "Drawn", "Lost", "Open")
# (result, my colour) -> the Stats row column it counts in (what CompactGame.outcome() says).
_STATS_COLUMN = {("1-0", "W"): 1, ("0-1", "B"): 2, ("1-0", "B"): 4, ("0-1", "W"): 4,
                 ("1/2-1/2", "W"): 3, ("1/2-1/2", "B"): 3, ("*", "W"): 5, ("*", "B"): 5}


class Stats:
    """Games per date: played, won (as White, as Black), drawn, lost, open.

    The first five columns are the original's; Lost and Open are ours, so
    that Played = Won + Drawn + Lost + Open and every game is counted.

    >>> s = Stats(); s.add(CompactGame("2021.04.07", "W", "1-0")); s.add(CompactGame("2021.04.07", "B", "1-0"))
    >>> print(s.summary())
    2 played, 1 won (50.0%), 1 won as white (50.0%), 0 won as black (0.0%), 0 draws (0.0%), 1 lost (50.0%), 0 open (0.0%)
    """

    def __init__(self) -> None:
        self.days: dict[str, list[int]] = {}

    def add(self, game: CompactGame) -> None:
        self._add(game.date, game.colour, game.result)

    def _add(self, date: str, colour: str, result: str, games: int = 1) -> None:
        row = self.days.get(date)
        if row is None:
            row = self.days[date] = [0, 0, 0, 0, 0, 0]  # played, ww, wb, drawn, lost, open
        row[0] += games
        column = _STATS_COLUMN.get((result, colour))
        if column is None:  # a record built by hand
            outcome = CompactGame(date, colour, result).outcome()
            column = ((1 if colour == "W" else 2) if outcome == "won"
                      else {"drawn": 3, "lost": 4, "open": 5}[outcome])
        row[column] += games

    def rows(self) -> list[tuple[str, int, int, int, int, int, int, int]]:
        """``(date, played, won, won as white, won as black, drawn, lost, open)`` by date."""
        return [(d, r[0], r[1] + r[2], r[1], r[2], r[3], r[4], r[5])
                for d, r in sorted(self.days.items())]

    def totals(self) -> tuple[int, int, int, int, int, int, int]:
        sums = [0] * 7
        for row in self.rows():
            for k in range(7):
                sums[k] += row[k + 1]
        return tuple(sums)

    def summary(self) -> str:
        played, won, ww, wb, drawn, lost, open_ = self.totals()

        def pc(x: int) -> str:
            # The original divides by the count of wins and draws, and by zero without any.
            return f"{x * 100 / played:.1f}" if played else "0.0"

        return (f"{played} played, {won} won ({pc(won)}%), {ww} won as white ({pc(ww)}%), "
                f"{wb} won as black ({pc(wb)}%), {drawn} draws ({pc(drawn)}%), "
                f"{lost} lost ({pc(lost)}%), {open_} open ({pc(open_)}%)")

    def table(self) -> str:
        """The stdout table of ``pgn-transform.pl`` with Lost and Open columns, then the summary line."""
        out = ["Date        Played  Won  As White  As Black  Draws  Lost  Open",
               "==========  ======  ===  ========  ========  =====  ====  ===="]
        for d, played, won, ww, wb, drawn, lost, open_ in self.rows():
            out.append(f"{d}  {played:4}{won:6}{ww:8}{wb:10}{drawn:8}{lost:7}{open_:6}")
        out.append(self.summary())
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """The CSV: header row, a row per date, then the summary row as the original writes it."""
        out = ["Date, " + ", ".join(_COLUMNS)]
        for row in self.rows():
            out.append(", ".join(str(v) for v in row))
        out.append(", " + self.summary())
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------- command line

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fastpgn lichess-text",
        description="Convert compact lichess game strings (the notation of pgn-transform) to PGN plus "
                    "statistics, or PGN back to compact strings (--reverse).",
        epilog=EXIT_RULE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="compact strings (PGN with --reverse); '-' for stdin")
    p.add_argument("-o", "--output-dir", metavar="DIR",
                   help="where to write STEM.pgn and STEM.csv (default: beside INPUT); with --reverse, "
                        "write DIR/STEM.txt instead of stdout; DIR is made if missing")
    p.add_argument("--me", default=DEFAULT_ME, metavar="NAME", help=f"my name (default {DEFAULT_ME})")
    p.add_argument("--opponent", default=DEFAULT_OPPONENT, metavar="NAME",
                   help=f"the opponent's name (default {DEFAULT_OPPONENT})")
    p.add_argument("--reverse", action="store_true", help="PGN (any file fastpgn reads) to compact strings")
    add_error_options(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    return p


def _stem(path: str) -> str:
    if path == "-":
        return "games"
    name = Path(path).name
    for ext in (".zst", ".bz2", ".gz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return Path(name).stem


_BLOCK = 1 << 20  # bytes of whole lines read at a time


def _file_batches(data) -> Iterator[tuple[int, list[str], list[str] | None]]:
    """Batches for :func:`_read` from a binary file: UTF-8, a BOM at the very start skipped,
    CRLF or LF; bytes that are not UTF-8 are an InputError naming their line, raised after
    the lines before it."""
    number = 1
    for block in line_blocks(data, _BLOCK):
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            lines = []
            for k, raw in enumerate(block.split(b"\n"), number):
                try:
                    lines.append(raw.decode("utf-8-sig" if k == 1 else "utf-8"))
                except UnicodeDecodeError as exc:
                    if lines:
                        yield number, lines, None
                    raise InputError("not UTF-8 text", line=k, column=exc.start + 1) from None
            raise AssertionError("unreachable")  # pragma: no cover
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        lines = text.split("\n")
        yield number, lines, _block_movetext(block)
        number += len(lines)


def _forward(args, run: Run) -> None:
    source = args.input
    out_dir = Path(args.output_dir) if args.output_dir else (Path(source).parent if source != "-" else Path("."))
    stem = _stem(source)
    pgn_path, csv_path = str(out_dir / f"{stem}.pgn"), str(out_dir / f"{stem}.csv")
    run.refuse_to_overwrite(pgn_path, csv_path)
    stats = Stats()
    players = _player_tags(args.me, args.opponent)
    with run.open_binary() as data:
        run.out = pgn = Output(pgn_path)  # DIR is made with the first game
        texts: list[str] = []
        # (date, colour, result) of each game, counted in C a few hundred games at a time.
        outcomes: list[tuple[str, str, str]] = []
        tally: Counter = Counter()
        try:
            for (date, colour, result, comment, moves, number, _), movetext in _read(
                    _file_batches(data), run.bad, run.warn):
                texts.append(_pgn_text(date, colour, result, comment, moves, number, movetext, players))
                outcomes.append((date, colour, result))
                if len(texts) == 256:
                    pgn.write("".join(texts))
                    texts.clear()
                    tally.update(outcomes)
                    outcomes.clear()
        finally:
            if texts:
                pgn.write("".join(texts))
            tally.update(outcomes)
            run.written = tally.total()
    if run.written + run.rejected == 0:
        return  # no games: no statistics either (the run says so)
    for (date, colour, result), games in tally.items():
        stats._add(date, colour, result, games)
    csv = Output(csv_path)
    csv.write(stats.csv())
    csv.close(create=True)
    table = Output(None)
    table.write(stats.table())
    table.close(create=False)
    run.note = f"wrote {pgn_path} and {csv_path}"


def _reverse(args, run: Run) -> None:
    if args.output_dir:
        out_path = str(Path(args.output_dir) / f"{_stem(args.input)}.txt")
        run.refuse_to_overwrite(out_path)
        run.out = Output(out_path)
    texts: list[str] = []  # written a few hundred games at a time, and before any return
    with run.open_pgn() as stream:
        try:
            for game in run.pgn_games(stream):
                try:
                    texts.append(game_to_compact(game, me=args.me))
                except FormatError as exc:
                    run.bad(exc.at(offset=game.offset))
                    continue
                run.written += 1
                if len(texts) == 256:
                    run.out.write(("\n" if run.written > 256 else "") + "\n\n".join(texts) + "\n")
                    texts.clear()
        finally:
            if texts:
                run.out.write(("\n" if run.written > len(texts) else "") + "\n\n".join(texts) + "\n")


def main(argv: list[str] | None = None) -> int:
    """The ``lichess-text`` command: ``main(["games.txt", "-o", "out"])`` returns the exit status.

    0: the run finished, bad games skipped (each reported on stderr with its
    line and column, or byte offset and game number for PGN, and counted in
    the summary line); 1: the input is damaged, or ``--errors raise``
    stopped at the first bad game; 2: usage error, input missing, unreadable,
    empty, not PGN or not UTF-8 text, output that cannot be written; 130:
    interrupted (a closed stdout exits 0). The ``--help`` text says the same.
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.reverse:
        run = Run("lichess-text --reverse", args, nothing="empty or not PGN")
        return guarded(lambda: run.execute(lambda: _reverse(args, run)))
    run = Run("lichess-text", args, nothing="empty, or no details line such as 21.04.07W1-0")
    return guarded(lambda: run.execute(lambda: _forward(args, run)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
