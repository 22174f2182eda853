"""Infinite Chess Notation (ICN): the short string form and the long JSON form.

This module is the face of the conversion between the two forms of the
infinite chess project's notation (specification: ``ICN-spec-README.md``,
converter behaviour: ``FormatConverter.js``, both public domain), the
single-move converters, and replaying a game to one of its positions; it
owns the grammar and the quirk table below. The work is done by
``_icn_parse`` (the strict reader), ``_icn_lenient`` (the upstream way of
reading), ``_icn_write`` (long to short), ``_icn_replay`` (positions) and
``_icn_long_form`` (the long form's vocabulary and checks), all in
:mod:`fastpgn.notations`. It knows nothing of PGN; the PGN bridge
(:mod:`fastpgn.notations.icn_pgn`, ``python -m fastpgn icn``) builds
long-form dicts and calls :func:`long_to_short`.

Long form (a dict, as JSON would load it)::

    metadata          {"Event": "...", ...}         tags, always present
    turn              "white" | "black"             only when given
    enpassant         [x, y]                        only when given
    moveRule          "N/M"                         only when given
    fullMove          N                             only when given
    gameRules         {"promotionRanks": [8, 1], "promotionsAllowed":
                       {"white": [...], "black": [...]}, "winConditions":
                       {"white": [...], "black": [...]}, ...extra rules}
    startingPosition  {"x,y": "queensW", ...}       when a piece list is given
    specialRights     {"x,y": True, ...}            the ``+`` marks
    shortposition     "K3,4|..."                    the piece list as written
    moves             ["a,b>c,dX", ...]             compact moves, when given

Short form accepted by :func:`short_to_long` (items are separated by
whitespace and may come in any order; the first move ends the header)::

    icn        := (item | ws)* [moves]
    item       := tag | "w" | "b" | square | N "/" M | N | promotions
                | winconds | json | pieces
    tag        := "[" key ws+ '"' text '"' ws* "]" | "[" key ":" text "]"
    square     := int "," int                  (en passant square)
    promotions := "(" [side] "|" [side] ")"    side := int [";" code ("," code)*]
    winconds   := names | "(" names "|" names ")"     names := name ("," name)*
    json       := a JSON object (may contain spaces; numbers finite, nested
                  at most 63 deep)
    pieces     := code square ["+"] ("|" code square ["+"])*
    moves      := (move | N "." | "." | "|" | "{" comment "}" | ws)*
    move       := [letters] square ws* (">" | "x") ws* square
                  [letters | ws* "=" ws* letters] (ws* ("+" | "#" | [!?]+))*

Piece letters on a move are decoration and are not kept; the promotion
letters are kept as written. A letter run directly followed by a square is
always the piece of the next move. Errors are :class:`FormatError` with the
1-based line and column of the offending character. A number has at most 500
digits.

A long form handed in (a caller's dict, a JSON line) is checked field by field
before it is used: a wrong shape, a non-finite or too long number, nesting
deeper than 64 levels is a :class:`FormatError` naming the field
(``gameRules.promotionRanks[0] must be a whole number, not 'x'``). No input
makes a reader fail another way.

``lenient=True`` reads like the upstream converter: tags are cut out of the
whole string first (comments included), whitespace-separated tokens are
matched first come first served, and what matches nothing is dropped.

Upstream quirks (cases of ``icn_conformance_cases.generated.json``):

==== ============================================ ==========================
case upstream behaviour                            fastpgn (default; lenient)
==== ============================================ ==========================
31   ``1,1>2,2 k3,3>4,4``: the next move's piece   fix: ``k`` starts the next
     letter after a space becomes a promotion      move; lenient reproduces
     (unmarked in the data, yet a quirk)
55   ``{"a": [1, 2]}``: brackets inside the JSON   fix: the JSON is read
     are eaten as a tag, then the JSON fails       whole; lenient raises
56   ``w b``: a second turn becomes a win          fix: error "turn given
     condition ``b``                               twice"; lenient reproduces
57   ``(8|1) (7|2)``: the second promotion entry   fix: error; lenient drops
     is silently dropped                           it
58   ``{comment [x]}``: a bracket inside a         fix: comments are opaque;
     comment becomes the tag ``x``                 lenient reproduces
59   ``1,1>2,2.3,3>4,4``: ``.`` separates moves    reproduce (the spec says so)
60   ``zz3,3``: unknown piece raises               reproduce, with the column
61   ``P1,2+``: a one-piece list with ``+``        reproduce
62   ``[Event "A [nested] name"]``: the value is   fix: the value ends at the
     cut at the first ``]``, the rest becomes a    closing quote; lenient
     win condition                                 reproduces
63   ``""``: an empty game, default win condition  reproduce
64   long form without ``metadata``: TypeError     fix: no tag section, no
                                                   leading blank line
65   ``metadata {}`` and ``moves []`` still write  reproduce (stable output,
     their blank lines                             the parser ignores them)
==== ============================================ ==========================
"""

from __future__ import annotations

from fastpgn.notations._icn_lenient import _parse_lenient
from fastpgn.notations._icn_long_form import PIECE_CODES
from fastpgn.notations._icn_parse import _parse_strict, short_to_long_compact_move
from fastpgn.notations._icn_replay import game_to_position
from fastpgn.notations._icn_write import (
    generate_special_rights,
    long_to_short,
    long_to_short_compact_move,
    long_to_short_position,
    long_to_short_position_from_gamerules,
)

# isort: split
# Re-exported: they were defined here, and the PGN bridge and the tests reach them through this module.
from fastpgn.notations._icn_long_form import _DEFAULT_PROMOTIONS, _RESERVED_RULES, _check_long  # noqa: F401
from fastpgn.notations._icn_parse import _read_json  # noqa: F401
from fastpgn.notations._icn_write import _write_short  # noqa: F401

__all__ = [
    "PIECE_CODES",
    "game_to_position",
    "generate_special_rights",
    "long_to_short",
    "long_to_short_compact_move",
    "long_to_short_position",
    "long_to_short_position_from_gamerules",
    "short_to_long",
    "short_to_long_compact_move",
]

# The examples of the parts run with this module's (``doctest.testmod(icn)``), in its namespace.
__test__ = {"_read_json": _read_json, "short_to_long_compact_move": short_to_long_compact_move,
            "long_to_short": long_to_short, "long_to_short_compact_move": long_to_short_compact_move,
            "long_to_short_position": long_to_short_position, "generate_special_rights": generate_special_rights,
            "long_to_short_position_from_gamerules": long_to_short_position_from_gamerules,
            "game_to_position": game_to_position}


def short_to_long(text: str, *, lenient: bool = False) -> dict:
    """Parse an ICN string into the long (JSON) form.

    Raises :class:`FormatError` naming the line and column of the first
    thing it cannot read; ``lenient=True`` reads like the upstream converter
    and drops what it cannot read instead (see the module's quirk table).

    >>> game = short_to_long("w (8|1) K5,1+|R8,1+|k5,8 5,1>7,1|5,8>5,7")
    >>> game["startingPosition"]
    {'5,1': 'kingsW', '8,1': 'rooksW', '5,8': 'kingsB'}
    >>> game["specialRights"], game["moves"]
    ({'5,1': True, '8,1': True}, ['5,1>7,1', '5,8>5,7'])
    >>> short_to_long("w K1,1|k3,3 1,1>2,2 %")
    Traceback (most recent call last):
    ...
    fastpgn.errors.FormatError: unexpected character '%' in the moves (line 1, column 21)
    """
    return _parse_lenient(text) if lenient else _parse_strict(text)
