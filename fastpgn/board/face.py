"""The board layer's public face: Board, written here once over the live kernel; game outcomes; PGN writing.

``Board`` is the live board kernel's ``BoardCore`` (fastpgn.board._kernel picks the
Cython kernel or its pure-Python twin by FASTPGN_IMPLEMENTATION), which owns
what is hot: FEN in and out, legal moves, make/unmake, SAN and UCI, keys,
perft. What is not hot is written here, once for both kernels: game end
(the Outcome of a finished game and the draw rules), copies, pickling,
printing and the docs. ``Move`` and the per-game replay functions
(``validate_san``, ``replay``, ``replay_fens``, ``canonical_san``) are the
kernel's; ``san_to_uci`` is the kernel's, taking a list of moves too. And
this module writes a game as PGN the way Chess.jl's ``gametopgn`` does
(seven-tag roster first with ``?`` defaults, ``SetUp``/``FEN`` next when
the game does not start from the standard position, the other tags in
their order, ``\\"`` and ``\\\\`` escapes, one line of movetext with move
numbers, the result).

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, Self, TypeVar, cast, overload

from fastpgn.board._kernel import BACKEND, kernel
from fastpgn.errors import BoardError, IllegalMoveError

if TYPE_CHECKING:
    from fastpgn.board._board_py import BoardCore as _Core
else:
    _Core = object


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


class _BoardFace(_Core):
    """What Board adds to a board kernel's BoardCore, once for both kernels.

    Rules over the kernel's primitives (``_has_legal_move``,
    ``_lacks_mating_material``, ``_repetition_count``, the draw claims),
    copies of the board's own class, pickling, printing. It names no
    kernel, so the same face stands over either (see _face_over).
    """

    __slots__ = ()

    # -- game end --------------------------------------------------------
    def is_checkmate(self) -> bool:
        return self.is_check() and not self._has_legal_move()

    def is_stalemate(self) -> bool:
        return not self.is_check() and not self._has_legal_move()

    def is_insufficient_material(self) -> bool:
        """Neither side can mate (python-chess's rule: lone king, or one minor piece that cannot help)."""
        return self._lacks_mating_material(0) and self._lacks_mating_material(1)

    def has_insufficient_material(self, colour: str) -> bool:
        """Whether ``colour`` (``"w"``/``"b"``) cannot mate by any sequence of moves."""
        if colour not in ("w", "b"):
            raise BoardError(f"bad colour {colour!r}: use 'w' or 'b'")
        return self._lacks_mating_material(1 if colour == "b" else 0)

    def is_fifty_moves(self) -> bool:
        """Fifty moves by each side without capture or pawn move (a draw to claim)."""
        return self.halfmove_clock >= 100 and self._has_legal_move()

    def is_seventyfive_moves(self) -> bool:
        """Seventy-five moves by each side without capture or pawn move (an automatic draw)."""
        return self.halfmove_clock >= 150 and self._has_legal_move()

    def can_claim_fifty_moves(self) -> bool:
        """The fifty-move rule holds now, or after some legal move that is not a capture or pawn move."""
        return self._fifty_claimable()

    def is_repetition(self, count: int = 3) -> bool:
        """The current position has occurred at least ``count`` times in the history."""
        return self._repetition_count() >= count

    def is_fivefold_repetition(self) -> bool:
        return self._repetition_count() >= 5

    def can_claim_threefold_repetition(self) -> bool:
        """The position occurred three times, or will after some legal move."""
        return self._threefold_claimable()

    def outcome(self, claim_draw: bool = False) -> Outcome | None:
        """The game's end as an Outcome, or None while it goes on.

        Checkmate, stalemate, insufficient material, the seventy-five-move
        rule and fivefold repetition end a game; with ``claim_draw`` the
        fifty-move rule and threefold repetition (python-chess's semantics).

        >>> Board("6k1/8/8/8/8/8/8/7K w - - 0 1").outcome().result()
        '1/2-1/2'
        """
        movable = self._has_legal_move()
        if not movable and self.is_check():
            return Outcome(Termination.CHECKMATE, "b" if self.turn == "w" else "w")
        if self.is_insufficient_material():
            return Outcome(Termination.INSUFFICIENT_MATERIAL, None)
        if not movable:
            return Outcome(Termination.STALEMATE, None)
        if self.halfmove_clock >= 150:
            return Outcome(Termination.SEVENTYFIVE_MOVES, None)
        if self._repetition_count() >= 5:
            return Outcome(Termination.FIVEFOLD_REPETITION, None)
        if claim_draw:
            if self._fifty_claimable():
                return Outcome(Termination.FIFTY_MOVES, None)
            if self._threefold_claimable():
                return Outcome(Termination.THREEFOLD_REPETITION, None)
        return None

    def is_game_over(self, claim_draw: bool = False) -> bool:
        return self.outcome(claim_draw) is not None

    def result(self, claim_draw: bool = False) -> str:
        """``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while the game goes on."""
        outcome = self.outcome(claim_draw)
        return outcome.result() if outcome is not None else "*"

    # -- utilities -------------------------------------------------------
    def perft(self, depth: int, bulk: bool = True) -> int:
        """Leaf nodes of the legal move tree ``depth`` plies deep.

        ``bulk`` counts the last ply's moves without playing them; with
        ``bulk=False`` every leaf is made and unmade (the classic definition,
        slower, same count).

        >>> Board().perft(3), Board().perft(3, bulk=False)
        (8902, 8902)
        """
        if not isinstance(depth, int) or depth < 0:
            raise BoardError(f"bad perft depth {depth!r}")
        return self._count_leaves(depth, bool(bulk))

    def copy(self) -> Self:
        """An independent copy, history included."""
        return self._copy()

    def __copy__(self) -> Self:
        return self._copy()

    def __deepcopy__(self, memo: object) -> Self:
        return self._copy()

    def __reduce__(self) -> tuple[Callable[..., _BoardFace], tuple[type[Self], str, bool, list[str]]]:
        # Root position and moves, so a board crosses the worker pool whole.
        return (_rebuild, (type(self), self.root().fen(), self.chess960, [m.uci() for m in self.move_stack]))

    def root(self) -> Self:
        """A copy of the board as it was set up, before any pushed move."""
        board = self._copy()
        board._unwind()
        return board

    def __str__(self) -> str:
        # The board field of the FEN, a rank a line, a dot for an empty square.
        ranks = self.fen().split(" ", 1)[0].split("/")
        return "\n".join(" ".join("".join("." * int(c) if c.isdigit() else c for c in rank)) for rank in ranks)

    def __repr__(self) -> str:
        return f"Board({self.fen()!r}{', chess960=True' if self.chess960 else ''})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _BoardFace):
            return NotImplemented
        return self.chess960 == other.chess960 and self.fen() == other.fen()

    __hash__ = None  # type: ignore[assignment]  # a board changes as moves are pushed


_F = TypeVar("_F", bound=_BoardFace)


def _rebuild(cls: type[_F], fen: str, chess960: bool, ucis: list[str]) -> _F:
    """A board of class ``cls`` set up from ``fen`` with the UCI moves ``ucis`` pushed (unpickling)."""
    board = cls(fen, chess960)
    for uci in ucis:
        board.push_uci(uci)
    return board


class Board(_BoardFace, kernel.BoardCore):
    """A chess position with its move history.

    ``Board()`` is the standard start; ``Board(fen)`` reads six-field or
    four-field FEN; ``chess960=True`` allows any castling setup and writes
    castling in UCI as king takes rook.

    >>> b = Board()
    >>> b.push_san("e4").uci()
    'e2e4'
    >>> b.push_san("e5?!").uci(), b.fen()
    ('e7e5', 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2')
    >>> Board("4q1k1/8/8/8/8/8/5PPP/4r2K w - - 0 1").is_checkmate()
    True
    >>> Board("4k3/8/8/8/8/8/8/4K3 w - e6 0 1").fen()   # an en passant square no capture explains
    '4k3/8/8/8/8/8/8/4K3 w - - 0 1'

    Squares are 0..63 (a1 = 0) or names; a move is a ``Move`` (squares and
    a promotion letter), SAN (annotations and check marks allowed) or UCI:

    >>> Board().piece_at("d8"), Board().piece_at(4), Board().piece_at("b5")
    ('q', 'K', None)
    >>> len(Board().legal_moves()), Board().parse_san("Nf3!?"), Board().san(Move.from_uci("g1f3"))
    (20, Move.from_uci('g1f3'), 'Nf3')
    >>> Move.from_uci("e7e8q"), Move.from_uci("g1f3").to_square
    (Move.from_uci('e7e8q'), 21)

    A board hands out castling as its ``uci`` writes it: the king to the g or
    c file on a standard board, the king taking its own rook on a Chess960
    board, as python-chess does; it takes either form back.

    >>> b = Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    >>> b.parse_san("O-O").uci(), b.uci(b.parse_san("O-O")), Board(b.fen(), chess960=True).parse_san("O-O").uci()
    ('e1g1', 'e1g1', 'e1h1')
    >>> b.push_san("O-O"), b.move_stack
    (Move.from_uci('e1g1'), [Move.from_uci('e1g1')])

    A null move (``--`` or ``Z0`` in SAN, ``0000`` in UCI, ``Move.null()``)
    passes, as python-chess plays it: the en passant square goes, the
    halfmove clock counts on. It is not among the legal moves, and a side in
    check cannot pass (python-chess lets it, leaving no valid position).

    >>> b = Board()
    >>> b.push_san("e4"), b.push_san("--"), b.fen()
    (Move.from_uci('e2e4'), Move.from_uci('0000'), 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1 2')
    >>> b.san(Move.null()), b.is_legal(Move.null()), Move.null() in b.legal_moves()
    ('--', False, False)
    """

    __slots__ = ()


_FACES: dict[str, type[Board]] = {}


def _face_over(core: ModuleType) -> type[Board]:
    """Board over the board kernel ``core``: Board itself over the live kernel.

    Over the other kernel (tests and benchmarks run both in one process) it
    is the same face over that kernel's BoardCore, made once; the kernel
    hands it out as its ``Board``.
    """
    if core is kernel:
        return Board
    face = _FACES.get(core.__name__)
    if face is None:
        # Not a subclass of Board (whose core is the other kernel's) but its twin: same methods.
        doc = f"fastpgn.board.Board over {core.__name__}: the same methods, documented there."
        face = cast("type[Board]", type("Board", (_BoardFace, core.BoardCore),
                                        {"__slots__": (), "__doc__": doc, "__module__": core.__name__}))
        _FACES[core.__name__] = face
    return face


Move = kernel.Move
validate_san = kernel.validate_san
replay = kernel.replay
replay_fens = kernel.replay_fens
positions = kernel.positions
canonical_san = kernel.canonical_san

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


@overload
def san_to_uci(sans: str, fen: str | None = None, chess960: bool = False) -> str: ...
@overload
def san_to_uci(sans: bytes, fen: str | None = None, chess960: bool = False) -> bytes: ...
@overload
def san_to_uci(sans: list[str] | tuple[str, ...], fen: str | None = None, chess960: bool = False) -> list[str]: ...
@overload
def san_to_uci(sans: list[bytes] | tuple[bytes, ...], fen: str | None = None,
               chess960: bool = False) -> list[bytes]: ...
def san_to_uci(sans: str | bytes | list[str] | tuple[str, ...] | list[bytes] | tuple[bytes, ...],
               fen: str | None = None, chess960: bool = False) -> str | bytes | list[str] | list[bytes]:
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
    # The items' type follows the first's; _uci_list checks every item against it.
    if isinstance(sans[0], bytes):
        return _uci_list(cast("Sequence[bytes]", sans), b" ", fen, chess960)
    return _uci_list(cast("Sequence[str]", sans), " ", fen, chess960)


_Text = TypeVar("_Text", str, bytes)


def _uci_list(sans: Sequence[_Text], sep: _Text, fen: str | None, chess960: bool) -> list[_Text]:
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


def _text(san: str | bytes) -> str:
    return san.decode("utf-8", "replace") if isinstance(san, bytes) else san


def escape_tag_value(value: str) -> str:
    """A tag value with ``\\`` and ``"`` escaped, as PGN and Chess.jl write it.

    >>> print(escape_tag_value('MoveBot(["e2e4"])'))
    MoveBot([\\"e2e4\\"])
    """
    return value.replace("\\", "\\\\").replace('"', '\\"')


_Headers = Mapping[str, str] | Iterable[tuple[str, str]] | None


class _ReadGame(Protocol):
    """What ``game_to_pgn`` reads of a ``fastpgn.Game`` (``read_games``' records)."""

    moves: list[str]
    headers: Mapping[str, str]
    result: str

    def _start(self) -> tuple[str | None, bool]: ...


def game_to_pgn(board: Board | _ReadGame, headers: _Headers = None, *, result: str | None = None) -> str:
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
    if not isinstance(board, _BoardFace):
        if hasattr(board, "_start"):   # a Game of fastpgn.game (not imported: the game imports the board)
            fen, chess960 = board._start()
            return moves_to_pgn(board.moves, board.headers if headers is None else headers,
                                fen=fen, chess960=chess960, result=result or board.result)
        raise TypeError(f"game_to_pgn writes a Board or a Game from read_games, not {type(board).__name__}")
    root = board.root()
    sans: list[str] = []
    for move in board.move_stack:
        sans.append(root.san(move))
        root.push(move)
    return _layout(headers, board.root(), sans, result)


def moves_to_pgn(sans: str | Iterable[str], headers: _Headers = None, *, fen: str | None = None,
                 chess960: bool | None = None, result: str | None = None) -> str:
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


def _pairs(headers: _Headers) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return [(str(k), str(v)) for k, v in headers.items()]
    return [(str(k), str(v)) for k, v in headers]


def _tag(name: str, value: str) -> str:
    return f'[{name} "{escape_tag_value(value)}"]\n'


def _layout(headers: _Headers, root: Board, sans: list[str], result: str | None) -> str:
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
    "game_positions",
    "game_to_pgn",
    "moves_to_pgn",
    "positions",
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


class _Replayer(Protocol):
    """What moves_hook replays on: a board kernel module, or anything with its two replay functions."""

    def san_to_uci(self, sans: bytes, fen: str | None, chess960: bool, /) -> bytes: ...

    def validate_san(self, sans: bytes, fen: str | None, chess960: bool, /) -> int: ...


class _MovesHook(Protocol):
    """What moves_hook returns: the hook, and what it tells the compiled scanner it does."""

    validates_san: bool
    writes_uci: bool
    reads_start_tags: bool

    def __call__(self, moves: bytes, tags: Iterable[tuple[bytes, bytes]], /) -> bytes: ...


def moves_hook(uci: bool = False, *, board_kernel: _Replayer | None = None) -> _MovesHook:
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
    (``fastpgn.board._board_py`` or ``_board_cy``: benchmarks compare the two).

    >>> moves_hook(uci=True)(b"e4 e5 Nf3", [(b"Event", b"x")])
    b'e2e4 e7e5 g1f3'
    >>> moves_hook()(b"e4 e5 Nf3", [])
    b'e4 e5 Nf3'
    """
    replayer: _Replayer = kernel if board_kernel is None else board_kernel
    to_uci, validate = replayer.san_to_uci, replayer.validate_san

    def hook(moves: bytes, tags: Iterable[tuple[bytes, bytes]]) -> bytes:
        fen, chess960 = _tags_start(tags)
        if uci:
            return to_uci(moves, fen, chess960)
        validate(moves, fen, chess960)
        return moves

    made = cast(_MovesHook, hook)  # the function, with the attributes below set on it

    # The compiled scanner may do what this hook does itself, on the moves where
    # they lie, for games without start tags: validate_spans (it validates as
    # validate_san and returns the SAN) or uci_spans (it returns san_to_uci's UCI).
    made.validates_san = not uci
    made.writes_uci = uci  # ... and with uci=True, writes the UCI moves there (uci_spans)
    # ... and reads FEN and Variant as above, so games with those tags may be replayed there too
    made.reads_start_tags = True
    return made


def game_positions(moves: bytes, tags: Iterable[tuple[bytes, bytes]], fens: bool = False
                   ) -> tuple[list[int], list[str] | None]:
    """A game's ``positions`` from its SAN moves and start tags, as ``moves_hook`` reads them: the column sinks'
    ``zobrist`` and ``fens`` for a game the compiled replay leaves to Python.

    >>> game_positions(b"e4", [(b"Variant", b"Standard")])
    ([-9062197578030825066], None)
    """
    fen, chess960 = _tags_start(tags)
    return kernel.positions(moves, fen, chess960, fens)


def _tags_start(tags: Iterable[tuple[bytes, bytes]]) -> tuple[str | None, bool]:
    """``declared_start`` of a game's FEN and Variant tags, given as the scanner hands them (bytes pairs)."""
    fen: str | None = None
    variant: bytes | None = None
    for name, value in tags:
        if name == b"FEN":
            fen = value.decode("utf-8", "replace")
        elif name == b"Variant":
            variant = value
    return declared_start(fen, variant)
