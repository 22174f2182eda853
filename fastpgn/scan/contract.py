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


__all__ = ["Reject", "ScanResult"]


def game_text(text: bytes) -> bytes:
    r"""A game's text as the kernel cut it (``data[start:end]``: its first byte to the next game's) without
    the blank lines after it: to the end of its last line, that line's end kept (``\n`` added where the
    input ended without one). What ``Game.to_pgn`` and ``--format pgn`` give.

    >>> game_text(b'[White "A"]\r\n\r\n1. e4 *\r\n\r\n'), game_text(b"1. d4 *")
    (b'[White "A"]\r\n\r\n1. e4 *\r\n', b'1. d4 *\n')
    """
    body = text.rstrip(b" \t\r\n")
    if not body:
        return b""
    tail = text[len(body):]
    nl = tail.find(b"\n")
    if nl < 0:
        return body + b"\n"
    return body + tail[:nl + 1]
