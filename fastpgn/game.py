"""One game as the readers hand it out (:class:`Game`): its headers, SAN moves, evals and clocks, and what
a program asks of it (accuracy, ACPL, UCI moves, the Zobrist keys, the PGN text).

The attributes the scanner kernel fills as it reads a game live in its
``GameCore``; ``Game`` adds the methods, once for both kernels.
"""

from __future__ import annotations

from fastpgn import accuracy as _accuracy, scan as _scan
from fastpgn.scan.contract import game_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    # (both kernels' GameCore have the same attributes)
    from fastpgn.scan.records import GameCore as _GameCore
else:
    _GameCore = _scan.kernel.GameCore

__all__ = ["Game"]


class Game(_GameCore):
    """One game: all headers, SAN moves as written, per-ply evals and clocks.

    ``Game(offset, number, headers, moves, evals, clocks, result_token,
    first_ply=-1)``; the attributes ``offset``, ``number``, ``headers`` and
    ``first_ply`` (the ply the move number before the first move names:
    ``1.`` is 0, ``12...`` is 23; None without one) live in the scanner
    kernel's ``GameCore``, which the kernel fills as it reads the game.
    The kernel builds the three per-ply lists with the game; their short
    tokens and clock values come from its caches, so a ply costs little
    more than a pointer. As made they hold only str, int, float and None,
    so the compiled kernel leaves them out of Python's cycle collector
    (which would walk every ply of every game kept): a list that a program
    makes part of a reference cycle (``game.moves.append(game)``) is freed
    only once the cycle is broken.

    >>> from fastpgn import read_games
    >>> g = next(read_games(b'[Site "https://lichess.org/abc"]\\n\\n1. e4 { [%clk 0:01:00] } e5 *\\n'))
    >>> g.id, g.moves, g.clocks, g.evals, g.result
    ('abc', ['e4', 'e5'], [60, None], [None, None], '*')
    """

    __slots__ = ()

    # A game read headers only has no per-ply lists (None) until they are asked for: three
    # empty lists a game would cost more than its Game object.

    @property
    def moves(self) -> list[str]:
        """SAN moves as written (lichess annotations such as ``?!``, ``+``, ``#`` kept)."""
        moves = self._moves
        if moves is None:
            moves = self._moves = []
        return moves

    @property
    def evals(self) -> list[str | None]:
        """Per ply: the raw ``%eval`` value (``"0.12"``, ``"#-9"``) or None."""
        evals = self._evals
        if evals is None:
            evals = self._evals = []
        return evals

    @property
    def clocks(self) -> list[int | float | None]:
        """Per ply: the ``%clk`` value in seconds (int; float when the source has tenths) or None."""
        clocks = self._clocks
        if clocks is None:
            clocks = self._clocks = []
        return clocks

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def result(self) -> str:
        """The Result tag; else the movetext's result token; else ``*``."""
        return self.headers.get("Result") or self._result_token or "*"

    @property
    def id(self) -> str:
        """The lichess game id: the last path part of the Site tag (``""`` when absent)."""
        site = self.headers.get("Site", "")
        return site[site.rfind("/") + 1:]

    # -- what lichess computes from the evals and clocks (fastpgn.accuracy, docs/schema.md) --------------------

    @property
    def start_white(self) -> bool:
        """White moves first: no FEN tag, or one whose second field (the side to move) is not ``b``."""
        return _accuracy.starts_white(self.headers.get("FEN"))

    def _analysed(self) -> list | None:
        """The evals of lichess's analysis: every ply's, a mating last move's left out (it has none); else None."""
        return _accuracy.analysed(self.evals, self.moves[-1] if self.moves else None)

    def _per_side(self, compute) -> tuple:
        evals = self._analysed()
        return (None, None) if evals is None else compute(evals, self.start_white)

    @property
    def white_accuracy(self) -> float | None:
        """lichess's game accuracy of White (0-100); None unless every ply has an eval (a mating last may not).

        >>> from fastpgn import read_games
        >>> g = next(read_games(b"1. e4 { [%eval 0.2] } e5 { [%eval 0.3] } 2. Qh5 { [%eval -1.5] } Nc6 { [%eval -1.4] } *"))
        >>> round(g.white_accuracy, 1), round(g.black_accuracy, 1), g.white_acpl, g.black_acpl
        (58.6, 97.1, 90, 10)
        >>> g.judgements, g.white_blunders, g.black_inaccuracies, [round(w) for w in g.win_percents]
        ([None, None, 'Blunder', None], 1, 0, [52, 53, 37, 37])
        """
        return self._per_side(_accuracy.game_accuracy)[0]

    @property
    def black_accuracy(self) -> float | None:
        """lichess's game accuracy of Black (0-100); None unless every ply has an eval (a mating last may not)."""
        return self._per_side(_accuracy.game_accuracy)[1]

    @property
    def white_acpl(self) -> int | None:
        """lichess's average centipawn loss of White; None unless every ply has an eval (a mating last may not)."""
        return self._per_side(_accuracy.acpl)[0]

    @property
    def black_acpl(self) -> int | None:
        """lichess's average centipawn loss of Black; None unless every ply has an eval (a mating last may not)."""
        return self._per_side(_accuracy.acpl)[1]

    @property
    def judgements(self) -> list[str | None]:
        """Per ply, lichess's judgement: ``"Inaccuracy"``, ``"Mistake"``, ``"Blunder"``, or None (also without evals)."""
        return _accuracy.judgements(self.evals, self.start_white)

    @property
    def win_percents(self) -> list[float | None]:
        """Per ply, White's win percent after it (scalachess ``WinPercent``); None where the ply has no eval."""
        from fastpgn.schema import eval_value

        return [None if e is None else _accuracy.win_percent(*eval_value(e)) for e in self.evals]

    @property
    def move_seconds(self) -> list[float | int | None]:
        """Per ply, the seconds the mover spent (``fastpgn.accuracy.move_seconds`` from the clocks and TimeControl)."""
        return _accuracy.move_seconds(self.clocks, self.headers.get("TimeControl"), self.start_white)

    def _count(self, white: bool, name: str) -> int | None:
        evals = self._analysed()
        if evals is None:
            return None
        return _accuracy.judgement_counts(evals, self.start_white)["white" if white else "black"][name]

    white_inaccuracies = property(lambda self: self._count(True, "Inaccuracy"),
                                  doc="White's Inaccuracies; None unless every ply has an eval (a mating last may not).")
    white_mistakes = property(lambda self: self._count(True, "Mistake"), doc="White's Mistakes; as white_inaccuracies.")
    white_blunders = property(lambda self: self._count(True, "Blunder"), doc="White's Blunders; as white_inaccuracies.")
    black_inaccuracies = property(lambda self: self._count(False, "Inaccuracy"),
                                  doc="Black's Inaccuracies; as white_inaccuracies.")
    black_mistakes = property(lambda self: self._count(False, "Mistake"), doc="Black's Mistakes; as white_inaccuracies.")
    black_blunders = property(lambda self: self._count(False, "Blunder"), doc="Black's Blunders; as white_inaccuracies.")

    def _start(self):
        """``(fen, chess960)`` from the game's tags; BoardError for a variant the board does not play."""
        from fastpgn.board import declared_start

        return declared_start(self.headers.get("FEN"), self.headers.get("Variant"))

    def uci(self) -> list[str]:
        """The moves in UCI (``e2e4``), replayed and validated on a board (IllegalMoveError if not legal).

        >>> from fastpgn import read_games
        >>> next(read_games(b"1. e4 e5 2. Qh5 *")).uci()
        ['e2e4', 'e7e5', 'd1h5']
        """
        from fastpgn.board import san_to_uci

        fen, chess960 = self._start()
        # One string, not the list: the scanner's moves hold no whitespace, so nothing needs checking.
        text = san_to_uci(" ".join(self._moves), fen, chess960) if self.moves else ""
        return text.split(" ") if text else []

    def fens(self) -> list[str]:
        """The FEN after every ply (``fens()[-1]`` is the final position)."""
        from fastpgn.board import replay_fens

        fen, chess960 = self._start()
        return list(replay_fens(" ".join(self._moves), fen, chess960)) if self.moves else []

    def zobrist(self) -> list[int]:
        """The Polyglot key after every ply, signed (the ``zobrist`` column's; ``fastpgn.position_key``).

        >>> from fastpgn import read_games
        >>> next(read_games(b"1. e4 *")).zobrist()
        [-9062197578030825066]
        """
        from fastpgn.board import positions

        fen, chess960 = self._start()
        return positions(" ".join(self._moves), fen, chess960)[0] if self.moves else []

    def board(self):
        """The final position as a ``fastpgn.Board`` (outcome, checkmate, draws...)."""
        from fastpgn.board import replay

        fen, chess960 = self._start()
        return replay(" ".join(self.moves), fen, chess960)

    def to_pgn(self) -> str:
        """The game as PGN text: as read, byte for byte, for a game from a reader.

        Tags, comments (``[%eval ...]``, ``[%clk ...]`` and any other), NAGs,
        variations and the layout are the input's, from the game's first byte
        to the end of its last line (its line end kept: ``\n``, or ``\r\n`` in
        a CRLF file; one added where the input ended without it); the blank
        lines after it are not. A game of tags alone gets its result (the
        Result tag, else ``*``) as movetext, so that other readers do not
        take the next game's tags for its own. Bytes that are not UTF-8 come back as surrogate
        escapes, so ``to_pgn().encode("utf-8", "surrogateescape")`` is the
        input's bytes (``to_pgn_bytes()`` gives them directly). A game made by
        hand (``Game(offset, number, headers, moves, ...)``, no text read) is
        written as ``fastpgn.game_to_pgn`` writes it: the seven-tag roster and
        the other headers, canonical SAN replayed from its ``FEN``/``Variant``,
        the result; no evals, clocks or comments. A game read headers only
        (``read_headers``) keeps no text: ValueError.

        >>> text = b'[White "A"]\\n\\n1. e4 { [%clk 0:01:00] } e5?! $2 (1... c5) 2. Qh5 *\\n\\n[White "B"]\\n\\n1. d4 *\\n'
        >>> from fastpgn import read_games
        >>> print(next(read_games(text)).to_pgn(), end="")
        [White "A"]
        <BLANKLINE>
        1. e4 { [%clk 0:01:00] } e5?! $2 (1... c5) 2. Qh5 *
        """
        return self.to_pgn_bytes().decode("utf-8", "surrogateescape")

    def to_pgn_bytes(self) -> bytes:
        """``to_pgn()`` as bytes: the game's bytes as read (what ``fastpgn.write_pgn`` writes)."""
        text = self._text
        if text == b"":
            raise ValueError("a game read headers only has no text kept: read it with read_games to write it back")
        if text is None:
            from fastpgn.board import moves_to_pgn

            fen, chess960 = self._start()
            pgn = moves_to_pgn(self.moves, self.headers, fen=fen, chess960=chess960, result=self.result)
            return pgn.encode("utf-8", "surrogateescape")
        return game_text(text, self.result)

    def to_python_chess(self):
        """The game as python-chess's ``chess.pgn.Game`` (``pip install chess``).

        It holds what python-chess makes of the same PGN text: the headers
        (python-chess's seven-tag roster defaults where missing; ``Result``
        from the movetext when the tag is absent or ``*``), the mainline
        moves, each move's annotation (``?!``) as its NAG, and each ply's
        eval and clock as the comment ``[%eval ...] [%clk ...]``, so
        ``node.eval()`` and ``node.clock()`` work. Other comments, NAGs
        written as ``$2`` and variations are not kept by fastpgn's reader,
        so they are not there. The moves
        are replayed on fastpgn's board (IllegalMoveError if one is not
        legal); a variant fastpgn's board does not play (the ``Variant`` tag
        names neither standard chess nor Chess960) is replayed on
        python-chess's board for it.

        >>> from fastpgn import read_games
        >>> game = next(read_games(b'[White "A"]\\n\\n1. e4 { [%eval 0.2] [%clk 0:01:00] } e5?! { [%clk 0:00:59.5] } *'))
        >>> pc = game.to_python_chess()
        >>> pc.headers["White"], [m.uci() for m in pc.mainline_moves()]
        ('A', ['e2e4', 'e7e5'])
        >>> [(n.eval() and str(n.eval().white()), n.clock(), n.nags) for n in pc.mainline()]
        [('+20', 60.0, set()), (None, 59.5, {6})]
        """
        try:
            import chess
            import chess.pgn
        except ImportError as exc:
            raise ImportError("Game.to_python_chess() needs python-chess, which is not installed: "
                              "pip install chess") from exc
        game = chess.pgn.Game()
        for name, value in self.headers.items():
            game.headers[name] = value
        if game.headers.get("Result", "*") == "*" and self._result_token:
            game.headers["Result"] = self._result_token   # as python-chess's reader does
        board = game.board()
        if type(board) is chess.Board:
            # Standard chess or Chess960 (as python-chess reads the Variant tag, so that castling
            # is written the way its board takes it): fastpgn's board replays the moves.
            from fastpgn.board import san_to_uci

            text = san_to_uci(" ".join(self.moves), self.headers.get("FEN"), board.chess960)
            moves = [chess.Move.from_uci(uci) for uci in text.split()]
        else:
            moves = []
            for san in self.moves:
                moves.append(board.parse_san(san.rstrip("!?")))
                board.push(moves[-1])
        node = game
        for move, san, value, clock in zip(moves, self.moves, self.evals, self.clocks):
            node = node.add_variation(move)
            nag = _NAGS.get(san[len(san.rstrip("!?")):])
            if nag:
                node.nags.add(nag)
            if value is not None or clock is not None:
                node.comment = " ".join(
                    ([f"[%eval {value}]"] if value is not None else [])
                    + ([f"[%clk {_clock_text(clock)}]"] if clock is not None else []))
        return game

    def __repr__(self) -> str:
        white = self.headers.get("White", "?")
        black = self.headers.get("Black", "?")
        return f"<Game {self.number} at byte {self.offset}: {white} - {black}, {self.plies} plies>"


# The NAG each SAN suffix annotation stands for (PGN standard, section 10).
_NAGS = {"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}


def _clock_text(seconds) -> str:
    """``%clk``'s ``H:MM:SS`` for a clock in seconds, with the fraction a float clock has (``0:00:59.5``)."""
    whole, _, fraction = f"{seconds:.6f}".partition(".")
    hours, rest = divmod(int(whole), 3600)
    fraction = fraction.rstrip("0")
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" + (f".{fraction}" if fraction else "")
