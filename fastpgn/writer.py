"""``write_pgn``: games written back as PGN, each as it was read.

A game from a reader is written byte for byte as its input held it (tags,
comments, NAGs, variations, layout; ``Game.to_pgn_bytes``); a game made by
hand as ``fastpgn.game_to_pgn`` writes it. Games are separated by one blank
line (in the line end of the game before it), so the file reads back as the
same games, in any PGN reader.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO, Any

from fastpgn.game import Game
from fastpgn.scan.contract import line_end


def write_pgn(games: Iterable[Game], path: str | os.PathLike | IO[bytes]) -> int:
    """Write ``games`` to ``path`` (a file name, ``-`` for stdout, or a binary file object); returns how many.

    A name ending ``.gz`` is written gzip-compressed. A file object is
    written to and left open.

    >>> import io
    >>> out = io.BytesIO()
    >>> from fastpgn import read_games
    >>> games = read_games(b'[White "A"]\\n\\n1. e4 {good} e5 *\\n\\n[White "B"]\\n\\n1. d4 $1 *\\n')
    >>> write_pgn((g for g in games if g.headers["White"] == "B"), out)
    1
    >>> out.getvalue()
    b'[White "B"]\\n\\n1. d4 $1 *\\n'
    """
    if hasattr(path, "write"):
        return _write_all(games, path)
    name = os.fspath(path)
    if name == "-":
        import sys

        count = _write_all(games, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return count
    from fastpgn.io.output import open_named

    with open_named(name, "wb") as raw:     # a symbolic link at the path is refused, never written through
        if str(name).endswith(".gz"):
            import gzip

            with gzip.GzipFile(fileobj=raw, mode="wb") as f:
                return _write_all(games, f)
        return _write_all(games, raw)


def _write_all(games: Iterable[Game], out: Any) -> int:
    count = 0
    blank = b""
    for game in games:
        if not isinstance(game, Game):
            raise TypeError(f"write_pgn writes fastpgn.Game objects, not {type(game).__name__}")
        text = game.to_pgn_bytes()
        out.write(blank + text)
        blank = line_end(text)      # (the blank line after a game in its own line end: CRLF stays CRLF)
        count += 1
    return count


