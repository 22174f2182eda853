"""``fastpgn.errors.Rejected``, apart so that importing the errors costs nothing.

Rejected is a dataclass, and ``dataclasses`` imports ``inspect`` (with
``ast``, ``dis``, ``tokenize``): about half of what ``import fastpgn`` cost
(docs/performance.md, 2026-11-25, session 13). ``fastpgn.errors`` hands this class out on first use, so a program
that reads games without a reject never imports them. The class names
``fastpgn.errors`` as its module: pickles and reprs say ``errors.Rejected``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastpgn.errors import PGNError, PGNSyntaxError


@dataclass(frozen=True)
class Rejected:
    """A game that was not read: where, why, and its raw text (bytes).

    ``offset`` is where the game starts and ``error_offset`` where it goes
    wrong, both in bytes of the decompressed PGN; ``number`` counts games
    from 1, rejected ones included.

    >>> r = Rejected(0, 3, "unterminated comment", 42, b"1. e4 { *")
    >>> r.error()
    PGNSyntaxError('unterminated comment (PGN byte 42, game 3)')
    """

    offset: int
    number: int
    reason: str
    error_offset: int
    text: bytes

    def error(self) -> PGNError:
        return PGNSyntaxError(self.reason, self.error_offset, self.number)


Rejected.__module__ = "fastpgn.errors"
