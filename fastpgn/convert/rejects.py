"""The dump converter's rejected games: ``_<input>.rejected.pgn``, itself a PGN file.

Each rejected game is written raw after a comment line that names it::

    % fastpgn rejected game 4211 at PGN byte 1048576: unterminated comment
    [Event "..."]
    ...

The file appears with the first rejected game, so a run without one leaves
none. Its size goes into the resume state with each checkpoint; a resumed
run cuts the file back to that size and appends after it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from fastpgn.errors import Rejected
from fastpgn.io import output as _output


def mark(number: int) -> bytes:
    """The start of a rejected game's ``%`` line, up to its number and the space after it.

    >>> mark(4211)
    b'% fastpgn rejected game 4211 '
    """
    return f"% fastpgn rejected game {number} ".encode()


class RejectsFile:
    """``path``, opened at the first rejected game; ``keep`` bytes of an interrupted run's file kept (0: none).

    Never through a link at ``path`` (``fastpgn.io.output``): a link there is refused.
    """

    def __init__(self, path: Path, keep: int = 0) -> None:
        self.path = path
        self._file: IO[bytes] | None = None
        if keep:
            fd = _output.open_own(path, os.O_WRONLY | os.O_APPEND)
            os.ftruncate(fd, keep)
            self._file = os.fdopen(fd, "ab")
        else:
            path.unlink(missing_ok=True)   # a file appears with the first rejected game

    def add(self, game: Rejected) -> None:
        """Write ``game`` (numbered in the whole input) after its ``%`` line."""
        if self._file is None:
            self._file = _output.create(self.path)
        self._file.write(mark(game.number) + f"at PGN byte {game.error_offset}: {game.reason}\n".encode()
                         + game.text.rstrip(b"\r\n") + b"\n\n")

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def size(self) -> int:
        """Bytes written so far (for the resume state)."""
        return self._file.tell() if self._file is not None else 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
