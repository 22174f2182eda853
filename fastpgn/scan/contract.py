"""What every scanner entry point answers, defined once for both kernels.

``lines_from_block``, ``games_from_block``, ``headers_from_block``,
``columns_from_block`` and ``csv_from_block`` (compiled or pure: the compiled kernel imports this
class) each return a ``ScanResult``: the block's output and its counts,
``games_read == written + len(rejects) + filtered``. The interface itself is
typed in ``scan/_kernel.pyi``.

>>> from fastpgn.scan import kernel
>>> pgn = b'[White "Ann"]\\n\\n1. e4 *\\n\\n[White "Bob"]\\n\\n1. e4 e5 }\\n'
>>> result = kernel.lines_from_block(pgn, 0, len(pgn))
>>> result.games_read, result.filtered, result.rejects
(2, 0, [("unexpected '}'", 48, 2, 24, 50)])
"""

from __future__ import annotations

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up: tests/test_headers_only.py)
if TYPE_CHECKING:
    from typing import Generic, NamedTuple, TypeVar

    Output = TypeVar("Output")

    #: A rejected game: ``(reason, error_offset, game_number, start, end)``; its raw text is
    #: ``data[start:end]``, ``error_offset`` is ``base_offset`` plus the index of the error.
    Reject = tuple[str, int, int, int, int]

    class ScanResult(NamedTuple, Generic[Output]):
        """One block through a kernel entry point (a tuple: ``output, read, rejects, filtered = ...``)."""

        output: Output          # the sink's: lines, records, columns
        games_read: int         # every game the block held: written, rejected or filtered out
        rejects: list[Reject]   # in game order
        filtered: int           # the games ``where`` refused (0 without a filter)
else:
    from collections import namedtuple

    # (the same class as above for a program that runs: typing's NamedTuple would import typing)
    ScanResult = namedtuple("ScanResult", ("output", "games_read", "rejects", "filtered"))
    ScanResult.__doc__ = "One block through a kernel entry point (a tuple: ``output, read, rejects, filtered = ...``)."
    Reject = tuple


class ColumnError(LookupError):
    """A sink makes no column that ``fastpgn.schema.COLUMNS`` names, or not as its type lays it out.

    A defect of the build (a column added to the schema and left out of a
    sink), never of the input: both column sinks check their columns
    against the schema when the kernel is loaded (so ``import
    fastpgn.scan`` fails with this error), again whenever ``COLUMNS`` is
    another tuple, and the compiled sinks check each
    block's buffers before anything reads them, so a column left out is
    this error naming the column and the sink, never a crash.
    """


#: ``columns_from_block(headers=True)`` with a flag that replays the moves: both kernels' one message.
HEADERS_REPLAY = "headers=True skips the movetext: it cannot be given with uci, positions or fens (they replay the moves)"

__all__ = ["HEADERS_REPLAY", "ColumnError", "Reject", "ScanResult"]


def game_text(text: bytes, result: str = "*") -> bytes:
    r"""A game's text as the kernel cut it (``data[start:end]``: its first byte to the next game's) without
    the blank lines after it: to the end of its last line, that line's end kept (the game's own, ``\n`` or
    ``\r\n``, added where the input ended without one). What ``Game.to_pgn`` and ``--format pgn`` give.

    A game of tags alone (no movetext) gets its result as movetext:
    ``result`` (the Result tag's value; ``*`` unless it is a result), so
    that python-chess and other readers do not take the next game's tags
    for its own.

    >>> game_text(b'[White "A"]\r\n\r\n1. e4 *\r\n\r\n'), game_text(b"1. d4 *")
    (b'[White "A"]\r\n\r\n1. e4 *\r\n', b'1. d4 *\n')
    >>> game_text(b'[Result "1-0"]\n\n', "1-0")
    b'[Result "1-0"]\n\n1-0\n'
    """
    body = text.rstrip(b" \t\r\n")
    if not body:
        return b""
    end = line_end(body)
    if _tags_alone(body):
        token = result.encode() if result in _RESULTS else b"*"
        return body + end + end + token + end
    tail = text[len(body):]
    nl = tail.find(b"\n")
    if nl < 0:
        return body + end
    return body + tail[:nl + 1]


def line_end(text: bytes) -> bytes:
    r"""The line end a game's text uses: ``\r\n`` when its first line ends so, else ``\n`` (what the blank
    line after it, written by ``write_pgn`` and ``--format pgn``, is).

    >>> line_end(b'[White "A"]\r\n\r\n1. e4 *\r\n'), line_end(b"1. d4 *")
    (b'\r\n', b'\n')
    """
    nl = text.find(b"\n")
    return b"\r\n" if nl > 0 and text[nl - 1] == 13 else b"\n"


_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


def _tags_alone(body: bytes) -> bool:
    """Whether a game's text (its blank lines after it stripped) is tag lines (and escape lines) only."""
    last = body[body.rfind(b"\n") + 1:].strip()
    if not (last[:1] == b"[" and last[-1:] == b"]" or last[:1] == b"%"):
        return False        # (the common case, a game whose last line is movetext, ends here)
    for line in body.split(b"\n"):
        line = line.strip().lstrip(b"\xef\xbb\xbf")
        if line and line[:1] != b"%" and not (line[:1] == b"[" and line[-1:] == b"]"):
            return False
    return True
