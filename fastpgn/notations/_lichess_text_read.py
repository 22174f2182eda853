"""Reading the compact notation: the move scanner, details lines, and the games of a file.

The grammar is given in :mod:`fastpgn.notations.lichess_text`, which
re-exports the public names of this module. ``scan_moves`` splits a glued
moves string into plies (shortest readings first, with backtracking, every
move number checked); ``parse_details`` reads a details line;
``read_compact`` and ``_read`` stream the games of a file, handing whole
blocks of moves lines to the compact kernel first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice, repeat

from fastpgn.errors import FormatError
from fastpgn.notations._compact import kernel as _compact
from fastpgn.notations._compact_py import scan_ply

__all__ = ["CompactGame", "parse_details", "read_compact", "scan_moves", "scan_ply"]

_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t")
# Compact result -> PGN result; '1/2-1/2' is accepted too, written back as '.5-.5'.
_RESULTS = (("1/2-1/2", "1/2-1/2"), (".5-.5", "1/2-1/2"), ("1-0", "1-0"), ("0-1", "0-1"), ("*", "*"))


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
# kernel (fastpgn.notations._compact: _compact_cy, or its twin _compact_py,
# whose comments say why its reading is the one scan_moves gives), which
# vouches for the moves lines whose reading is sure and writes their PGN
# movetext; a line it declines goes to scan_moves.
_block_movetext = _compact.block_movetext


def _movetext_plies(movetext: str) -> list[str]:
    """The plies of a movetext that :func:`_block_movetext` wrote."""
    tokens = movetext.split()
    del tokens[0::3]  # the move numbers
    return tokens



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
