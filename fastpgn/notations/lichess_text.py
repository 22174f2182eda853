"""Compact lichess game strings (the notation of ``pgn-transform.pl``) to PGN, statistics and back.

This module owns the compact notation's grammar (below); the
``lichess-text`` command lives with the other commands in the ``cli``
package. Its public names come from the modules that do the work: the move
scanner and the reader (``_lichess_text_read``), the PGN written and the
reverse direction, any PGN fastpgn reads back to compact strings
(``_lichess_text_write``), the statistics, CSV and table
(``_lichess_text_stats``).

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

from fastpgn.notations._lichess_text_read import CompactGame, parse_details, read_compact, scan_moves, scan_ply
from fastpgn.notations._lichess_text_stats import Stats
from fastpgn.notations._lichess_text_write import DEFAULT_ME, DEFAULT_OPPONENT, compact_to_pgn, game_to_compact  # noqa: F401

# isort: split
# Re-exported: they were defined here, and tests reach them through this module.
from fastpgn.notations._lichess_text_read import _block_movetext, _is_details, _movetext_plies, _split_round  # noqa: F401
from fastpgn.notations._lichess_text_write import _compact_moves  # noqa: F401

# the name before 0.2 (fastpgn.board.game_to_pgn writes a Board or a read Game; this one a compact game)
game_to_pgn = compact_to_pgn

__all__ = [
    "CompactGame",
    "Stats",
    "game_to_compact",
    "compact_to_pgn",
    "game_to_pgn",
    "parse_details",
    "read_compact",
    "scan_moves",
    "scan_ply",
]

# The examples of the parts run with this module's (``doctest.testmod(lichess_text)``).
__test__ = {"scan_moves": scan_moves, "parse_details": parse_details, "read_compact": read_compact,
            "compact_to_pgn": compact_to_pgn, "game_to_compact": game_to_compact, "Stats": Stats}
