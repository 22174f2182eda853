"""The board layer's public face: Board and Move from the live kernel, game outcomes, PGN writing.

``Board``, ``Move`` and the per-game replay functions (``validate_san``,
``replay``, ``replay_fens``) come from whichever board kernel is live
(fastpgn._board picks the Cython kernel or its pure-Python twin by
FASTPGN_IMPLEMENTATION); ``san_to_uci`` is the kernel's, taking a list of
moves too. This module adds what both kernels share and what is
not hot: the Outcome of a finished game and writing a game as PGN the way
Chess.jl's ``gametopgn`` does (seven-tag roster first with ``?`` defaults,
``SetUp``/``FEN`` next when the game does not start from the standard
position, the other tags in their order, ``\\"`` and ``\\\\`` escapes, one
line of movetext with move numbers, the result).

>>> from fastpgn.board import Board, game_to_pgn
>>> b = Board()
>>> for san in ("e4", "e5"):
...     _ = b.push_san(san)
>>> print(game_to_pgn(b), end="")
[Event "?"]
[Site "?"]
[Date "?"]
[Round "?"]
[White "?"]
[Black "?"]
[Result "*"]
<BLANKLINE>
1. e4 e5 *
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fastpgn.errors import BoardError, IllegalMoveError


class Termination(enum.Enum):
    """How a game ended by the rules (resignation and time are the players' business, not the board's)."""

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    INSUFFICIENT_MATERIAL = "insufficient material"
    SEVENTYFIVE_MOVES = "seventy-five-move rule"
    FIVEFOLD_REPETITION = "fivefold repetition"
    FIFTY_MOVES = "fifty-move rule"
    THREEFOLD_REPETITION = "threefold repetition"


@dataclass(frozen=True)
class Outcome:
    """A finished game: why, and who won (``"w"``, ``"b"``, or None for a draw).

    >>> Outcome(Termination.CHECKMATE, "b").result()
    '0-1'
    """

    termination: Termination
    winner: str | None

    def result(self) -> str:
        return "1-0" if self.winner == "w" else "0-1" if self.winner == "b" else "1/2-1/2"


# Imported after Outcome: the kernels import it lazily from here.
from fastpgn._board import BACKEND, kernel  # noqa: E402

Board = kernel.Board
Move = kernel.Move
validate_san = kernel.validate_san
replay = kernel.replay
replay_fens = kernel.replay_fens
canonical_san = kernel.canonical_san

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


def san_to_uci(sans, fen: str | None = None, chess960: bool = False):
    """Validate a game's SAN moves and return them as UCI.

    ``sans`` is one string of moves separated by whitespace (str, or UTF-8
    bytes), as the movetext has them, check marks and annotations allowed:
    the UCI comes back as one string of the same type. Or it is a list or
    tuple of moves, one an item (``game.moves``): a list of UCI comes back.
    ``fen`` is the starting position (standard start when None); with
    ``chess960`` castling is written as king takes rook. An illegal or
    ambiguous move raises IllegalMoveError or AmbiguousMoveError naming the
    move number and the SAN.

    >>> san_to_uci("e4 e5 Nf3 Nc6 Bc4 Nf6?? O-O")
    'e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1'
    >>> san_to_uci(["e4", "e5", "Nf3"])
    ['e2e4', 'e7e5', 'g1f3']
    >>> san_to_uci((b"e4", b"e5")), san_to_uci(b"e4 e5")
    ([b'e2e4', b'e7e5'], b'e2e4 e7e5')
    >>> san_to_uci("O-O", fen="4k3/8/8/8/8/8/8/4K2R w K - 0 1", chess960=True)
    'e1h1'
    >>> san_to_uci(["e4", "e5 Nf3"])
    Traceback (most recent call last):
    ...
    fastpgn.errors.IllegalMoveError: illegal move 1... 'e5 Nf3': a list item must be one move
    """
    if not isinstance(sans, (list, tuple)):
        return kernel.san_to_uci(sans, fen, chess960)
    if not sans:
        return []
    sep = b" " if isinstance(sans[0], bytes) else " "
    for i, san in enumerate(sans):
        if not isinstance(san, type(sep)):
            kinds = " and ".join(sorted({type(item).__name__ for item in sans}))
            raise IllegalMoveError(f"moves must be a string of SAN or a list of SAN strings, "
                                   f"not a list holding {kinds}")
        if len(san.split()) != 1:   # the answer is a list of as many moves
            # The moves before it first: an illegal one among them is the error to name.
            before = replay(" ".join(_text(item) for item in sans[:i]), fen, chess960)
            label = f"{before.fullmove_number}{'.' if before.turn == 'w' else '...'}"
            raise IllegalMoveError(f"illegal move {label} {_text(san)!r}: a list item must be one move")
    return kernel.san_to_uci(sep.join(sans), fen, chess960).split(sep)


def _text(san) -> str:
    return san.decode("utf-8", "replace") if isinstance(san, bytes) else san


def escape_tag_value(value: str) -> str:
    """A tag value with ``\\`` and ``"`` escaped, as PGN and Chess.jl write it.

    >>> print(escape_tag_value('MoveBot(["e2e4"])'))
    MoveBot([\\"e2e4\\"])
    """
    return value.replace("\\", "\\\\").replace('"', '\\"')


def game_to_pgn(board, headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
                *, result: str | None = None) -> str:
    """A game as PGN text: the game that led to ``board`` (its moves since set-up), or a ``Game`` from ``read_games``.

    ``headers`` is a mapping or ``(name, value)`` pairs; the seven-tag roster
    comes first (``?`` where missing), ``Result`` is ``result`` if given,
    else the header's, else ``*`` (Chess.jl writes ``*`` even after mate).
    A game that does not start from the standard position gets ``SetUp`` and
    ``FEN`` (the header's FEN verbatim when there is one); a Chess960 board
    without a ``Variant`` tag gets ``[Variant "Chess960"]``.

    >>> b = Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 7")
    >>> _ = b.push_san("Kd7"); _ = b.push_san("e4")
    >>> print(game_to_pgn(b, {"White": 'a "quoted" name'}).splitlines()[4])
    [White "a \\"quoted\\" name"]
    >>> game_to_pgn(b).splitlines()[-1]
    '7... Kd7 8. e4 *'

    A ``Game`` is written as ``moves_to_pgn`` writes its moves: its headers
    (unless ``headers`` is given), its moves replayed from its start (its
    ``FEN`` and ``Variant`` tags) in canonical SAN, and its result; evals,
    clocks and comments are not written (``game.to_python_chess()`` keeps
    evals and clocks). ``game.to_pgn()`` says the same.

    >>> from fastpgn import read_games
    >>> game = next(read_games(b'[White "A"]\\n\\n1. e4 e5?! 2. Qh5 { [%clk 0:01:00] } Nc6 3. Bc4 Nf6?? 4. Qf7 1-0\\n'))
    >>> print(game_to_pgn(game), end="")
    [Event "?"]
    [Site "?"]
    [Date "?"]
    [Round "?"]
    [White "A"]
    [Black "?"]
    [Result "1-0"]
    <BLANKLINE>
    1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0
    """
    from fastpgn.reader import Game

    if isinstance(board, Game):
        fen, chess960 = board._start()
        return moves_to_pgn(board.moves, board.headers if headers is None else headers,
                            fen=fen, chess960=chess960, result=result or board.result)
    if not hasattr(board, "move_stack"):
        raise TypeError(f"game_to_pgn writes a Board or a Game from read_games, not {type(board).__name__}")
    root = board.root()
    sans = []
    for move in board.move_stack:
        sans.append(root.san(move))
        root.push(move)
    return _layout(headers, board.root(), sans, result)


def moves_to_pgn(sans: str | Iterable[str], headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
                 *, fen: str | None = None, chess960: bool | None = None,
                 result: str | None = None) -> str:
    """Validate a game's SAN moves and write the game as PGN with canonical SAN.

    ``fen`` defaults to the headers' ``FEN``; ``chess960`` to whether the
    headers' ``Variant`` names Chess960. Illegal moves raise IllegalMoveError.

    >>> moves_to_pgn("e4 e5?! Qh5 Nc6 Bc4 Nf6?? Qxf7", {"Result": "1-0"}).splitlines()[-1]
    '1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0'
    """
    pairs = _pairs(headers)
    values = dict(pairs)
    if fen is None:
        fen = values.get("FEN")
    if chess960 is None:
        chess960 = declared_start(fen, values.get("Variant"))[1]
    text = sans if isinstance(sans, str) else " ".join(sans)
    canonical = canonical_san(text, fen, chess960).split()
    return _layout(pairs, Board(fen, chess960), canonical, result)


def _pairs(headers) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return [(str(k), str(v)) for k, v in headers.items()]
    return [(str(k), str(v)) for k, v in headers]


def _tag(name: str, value: str) -> str:
    return f'[{name} "{escape_tag_value(value)}"]\n'


def _layout(headers, root, sans: list[str], result: str | None) -> str:
    pairs = _pairs(headers)
    values = dict(pairs)
    result = result or values.get("Result") or "*"
    out = [_tag(name, result if name == "Result" else values.get(name, "?"))
           for name in SEVEN_TAG_ROSTER]
    fen = values.get("FEN")
    if fen is None and (root.fen() != STARTING_FEN or root.chess960):
        fen = root.fen()
    if fen is not None:
        out.append(_tag("SetUp", "1"))
        out.append(_tag("FEN", fen))
    if root.chess960 and "Variant" not in values:
        out.append(_tag("Variant", "Chess960"))
    for name, value in pairs:
        if name not in SEVEN_TAG_ROSTER and name not in ("SetUp", "FEN"):
            out.append(_tag(name, value))
    number = root.fullmove_number
    black = root.turn == "b"
    moves = []
    for i, san in enumerate(sans):
        if not black:
            moves.append(f"{number}. {san}")
        elif i == 0:
            moves.append(f"{number}... {san}")
        else:
            moves.append(san)
        if black:
            number += 1
        black = not black
    moves.append(result)
    out.append("\n")
    out.append(" ".join(moves))
    out.append("\n")
    return "".join(out)


__all__ = [
    "BACKEND",
    "Board",
    "Move",
    "Outcome",
    "SEVEN_TAG_ROSTER",
    "STARTING_FEN",
    "Termination",
    "canonical_san",
    "declared_start",
    "escape_tag_value",
    "game_to_pgn",
    "moves_to_pgn",
    "replay",
    "replay_fens",
    "san_to_uci",
    "validate_san",
]


# Variant tag values of games fastpgn's board plays as standard chess (keys: see variant_key).
STANDARD_VARIANTS = frozenset({"", "standard", "chess", "normal", "classical", "fromposition"})


def variant_key(variant: str | bytes | None) -> str:
    """A Variant tag's value as the rules compare it: lower case, no spaces, ``-`` or ``_``.

    >>> variant_key("Fischer-Random"), variant_key(b"From Position")
    ('fischerrandom', 'fromposition')
    """
    if variant is None:
        return ""
    if isinstance(variant, bytes):
        variant = variant.decode("utf-8", "replace")
    return variant.lower().replace(" ", "").replace("-", "").replace("_", "")


def declared_start(fen: str | None, variant: str | bytes | None) -> tuple[str | None, bool]:
    """The start a game's ``FEN`` and ``Variant`` tags declare: ``(fen, chess960)``; the one owner of that rule.

    A Variant holding "960" or starting "fischerandom"/"fischerrandom" (any
    case, spaces, ``-``, ``_``) is Chess960; Standard, Chess, Normal,
    Classical, From Position or none is standard chess; any other (Atomic,
    Crazyhouse, Antichess, ...) raises BoardError naming it: fastpgn's board
    plays neither, so no move of such a game is replayed.

    >>> declared_start(None, "Fischer-Random"), declared_start("8/8/8/8/8/8/8/K1k5 w - - 0 1", "From Position")
    ((None, True), ('8/8/8/8/8/8/8/K1k5 w - - 0 1', False))
    >>> declared_start(None, "Atomic")
    Traceback (most recent call last):
    ...
    fastpgn.errors.BoardError: unsupported variant: Atomic (fastpgn's board plays standard chess and Chess960)
    """
    key = variant_key(variant)
    if "960" in key or key.startswith(("fischerandom", "fischerrandom")):
        return fen, True
    if key in STANDARD_VARIANTS:
        return fen, False
    name = variant.decode("utf-8", "replace") if isinstance(variant, bytes) else variant
    raise BoardError(f"unsupported variant: {name} (fastpgn's board plays standard chess and Chess960)")


def moves_hook(uci: bool = False, *, board_kernel=None):
    """A ``moves_hook`` for the scanner's line writer: replay each game, reject illegal ones.

    The hook gets field 20 (the SAN moves, bytes) and the game's start tags;
    it returns the SAN unchanged (validation, through ``validate_san``: no
    text is built) or the UCI moves (``uci=True``), and raises
    IllegalMoveError naming the move number and SAN otherwise. A ``FEN`` tag
    sets the start; a ``Variant`` naming Chess960 turns on 960 castling, and
    one naming a variant the board does not play rejects the game (both by
    ``declared_start``). The
    kernel reads the bytes in place: nothing is decoded per game.
    ``board_kernel`` replays on another board kernel module than the live one
    (``fastpgn._board_py`` or ``_board_cy``: benchmarks compare the two).

    >>> moves_hook(uci=True)(b"e4 e5 Nf3", [(b"Event", b"x")])
    b'e2e4 e7e5 g1f3'
    >>> moves_hook()(b"e4 e5 Nf3", [])
    b'e4 e5 Nf3'
    """
    board_kernel = kernel if board_kernel is None else board_kernel
    replay = board_kernel.san_to_uci if uci else board_kernel.validate_san

    def hook(moves: bytes, tags) -> bytes:
        fen = variant = None
        for name, value in tags:
            if name == b"FEN":
                fen = value.decode("utf-8", "replace")
            elif name == b"Variant":
                variant = value
        fen, chess960 = declared_start(fen, variant)
        out = replay(moves, fen, chess960)
        return out if uci else moves

    # The compiled scanner may do what this hook does itself, on the moves where
    # they lie, for games without start tags: validate_spans (it validates as
    # validate_san and returns the SAN) or uci_spans (it returns san_to_uci's UCI).
    hook.validates_san = not uci
    hook.writes_uci = uci  # ... and with uci=True, writes the UCI moves there (uci_spans)
    # ... and reads FEN and Variant as above, so games with those tags may be replayed there too
    hook.reads_start_tags = True
    return hook
