"""UCI chess engines driven from Python: start one, set options and a position, search, quit.

The Python counterpart of the UCI part of Chess.jl's tutorial (``runengine``,
``setoption``, ``setboard``, ``search``, ``quit``)::

    from fastpgn import Board
    from fastpgn.engine import Engine

    with Engine.run("stockfish", {"Threads": 1}) as sf:      # uci/uciok, isready/readyok
        sf.setoption("Hash", 64)
        sf.set_board(Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"))
        result = sf.search("go depth 12", info=print)        # prints every info line
        result.best, result.best_san, result.white_score.lichess()   # ('a1a8', 'Ra8#', '#1')

This module owns the conversation (``Engine``): commands are sent by the
caller's thread, which waits for the answer with a deadline. Lines the
protocol does not know are ignored. Every way a conversation can end
(``quit``, a crash, a deadline, Ctrl-C) leaves no process and no thread
behind. The parts it is made of each have a module: the process and its
reader thread (``fastpgn.engine.process``), options (``fastpgn.engine.options``),
what a search reports (``fastpgn.engine.info``: ``Info``, ``Score``,
``SearchResult``); their public names are importable from here.
"""

from __future__ import annotations

import collections
import os
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, NoReturn

from fastpgn.engine.info import STARTING_FEN, Info, Score, SearchResult
from fastpgn.engine.options import Option, _option_value, _parse_option
from fastpgn.engine.process import (
    _EOF,
    GAME_DIRS,  # noqa: F401 - re-exported: it was defined here
    _argv,
    _exit_text,
    _pump,
    _reap,
    find_engine,
)
from fastpgn.errors import EngineError, EngineNotFoundError, EngineTimeoutError

if TYPE_CHECKING:
    from fastpgn.board import Board

__all__ = ["Engine", "EngineError", "EngineNotFoundError", "EngineTimeoutError", "Info", "Option",
           "Score", "SearchResult", "find_engine"]

TAIL_LINES = 10          # lines of the engine's output kept for error messages

# The examples of the parts run with this module's (``doctest.testmod(fastpgn.engine)``).
__test__ = {"Score": Score, "Score.lichess": Score.lichess, "Info": Info, "find_engine": find_engine}


class Engine:
    """A running UCI engine. Start one with ``Engine.run``; end it with ``quit()`` or ``with``.

    >>> with Engine.run("stockfish") as sf:                       # doctest: +SKIP
    ...     sf.position(moves=["e2e4", "e7e5"])
    ...     sf.search("go nodes 10000").best is not None
    True

    One thread drives an engine; ``kill()`` may come from another (to abort).
    ``grace`` is how long the engine gets to obey ``stop`` or ``quit`` before
    it is killed; ``ready_timeout`` how long ``isready`` may take (a large
    ``Hash`` is cleared then).
    """

    grace = 2.0
    ready_timeout = 60.0

    def __init__(self, argv: list[str], proc: subprocess.Popen) -> None:
        self.argv = argv
        self.path = argv[0]
        self.name: str | None = None
        self.author: str | None = None
        self._options: dict[str, Option] = {}
        self._lower: dict[str, str] = {}
        self.options: Mapping[str, Option] = MappingProxyType(self._options)
        self.config: dict[str, object] = {}
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None  # run() starts it with both as pipes
        self._stdin: IO[bytes] = proc.stdin
        self._stdout: IO[bytes] = proc.stdout
        self._lines: queue.SimpleQueue = queue.SimpleQueue()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._closed = False
        self._lock = threading.Lock()
        self._chess960 = False
        self._root: tuple[str | None, bool] | None = None
        self._given: list = []
        self._board: Board | None = None
        self._sent: list[str] = []
        self._root_command = "position startpos"
        self._reader = threading.Thread(target=_pump, args=(proc.stdout, self._lines, self._tail),
                                        name=f"fastpgn-engine-reader-{proc.pid}", daemon=True)
        self._reader.start()
        # A forgotten engine is killed when the Engine is collected or Python exits.
        self._finalizer = weakref.finalize(self, _reap, proc)

    # -- start and stop ------------------------------------------------------------
    @classmethod
    def run(cls, path: str | Sequence[str] = "stockfish", options: Mapping[str, object] | None = None, *,
            timeout: float = 10.0) -> Engine:
        """Start the engine ``path`` (a program, or a command as a list), say ``uci`` and ``isready``.

        ``path`` without a ``/`` is looked up on PATH, then in /usr/games
        (where Debian installs stockfish). ``options`` are set before
        ``isready``. A missing program raises EngineNotFoundError naming it;
        a program that does not answer ``uci`` with ``uciok`` within
        ``timeout`` seconds, or exits, raises EngineError with its last lines.

        >>> Engine.run("/no/such/engine")
        Traceback (most recent call last):
        ...
        fastpgn.errors.EngineNotFoundError: engine not found: /no/such/engine
        """
        argv = _argv(path)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=os.name == "posix")
        except FileNotFoundError:
            raise EngineNotFoundError(f"engine not found: {argv[0]}") from None
        except OSError as exc:
            raise EngineError(f"cannot start engine {argv[0]}: {exc.strerror or exc}") from None
        engine = cls(argv, proc)
        try:
            engine._handshake(timeout)
            for name, value in (options or {}).items():
                engine.setoption(name, value)
            engine.isready(max(timeout, engine.ready_timeout) if options else timeout)
        except BaseException:
            engine.kill()
            raise
        return engine

    def _handshake(self, timeout: float) -> None:
        self._send("uci")
        deadline = time.monotonic() + timeout
        while True:
            line = self._receive(deadline, "uci")
            if line is None:
                self.kill()
                raise EngineError(f"engine {self.path} did not answer uci with uciok within {timeout:g} s"
                                  f"{self._tail_text()} (is it a UCI engine?)", lines=self._tail)
            word, _, rest = line.partition(" ")
            if word == "uciok":
                return
            if word == "id":
                key, _, value = rest.strip().partition(" ")
                if key == "name":
                    self.name = value.strip()
                elif key == "author":
                    self.author = value.strip()
            elif word == "option":
                option = _parse_option(rest)
                if option is not None:
                    self._options[option.name] = option
                    self._lower[option.name.lower()] = option.name

    def quit(self) -> int | None:
        """Say ``quit``; kill the engine if it has not left after ``grace`` seconds. Returns its exit code."""
        with self._lock:
            if self._closed:
                return self._proc.returncode
            self._closed = True
        try:
            self._stdin.write(b"quit\n")
            self._stdin.flush()
        except (OSError, ValueError):
            pass
        self._cleanup(self.grace)
        return self._proc.returncode

    close = quit

    def kill(self) -> None:
        """End the engine now (its process group is killed); safe from any thread, and twice."""
        with self._lock:
            self._closed = True
        self._cleanup(0.0)

    def _cleanup(self, grace: float) -> None:
        _reap(self._proc, grace)
        if threading.current_thread() is not self._reader:
            self._reader.join(5.0)
        for stream in (self._stdin, self._stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        self._finalizer.detach()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.quit()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The engine's exit code once it has ended and been reaped (by quit, kill or a failure), else None."""
        return self._proc.returncode

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"pid {self._proc.pid}"
        return f"<Engine {self.name or self.path} ({state})>"

    # -- the conversation ------------------------------------------------------------
    def send(self, command: str) -> None:
        """Send one raw command line (for what this class has no method for)."""
        self._check_open()
        self._send(command)

    def _check_open(self) -> None:
        if self._closed:
            raise EngineError(f"engine {self.name or self.path} is closed")

    def _send(self, command: str) -> None:
        try:
            self._stdin.write(command.encode("utf-8") + b"\n")
            self._stdin.flush()
        except (OSError, ValueError):
            self._died(f"sending {command.split(' ', 1)[0]}")

    def _receive(self, deadline: float | None, doing: str) -> str | None:
        """The engine's next line, or None once ``deadline`` (monotonic) has passed; EngineError if it ends."""
        try:
            if deadline is None:
                line = self._lines.get()
            else:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is _EOF:
            self._died(doing)
        return line

    def _tail_text(self) -> str:
        lines = [line for line in self._tail if line.strip()]
        if not lines:
            return "; it wrote nothing"
        shown = " | ".join(line if len(line) <= 200 else line[:200] + "..." for line in lines[-5:])
        return f"; its last lines: {shown}"

    def _died(self, doing: str) -> NoReturn:
        """The engine closed its output: reap it and raise EngineError with its last lines."""
        with self._lock:
            self._closed = True
        self._cleanup(self.grace)
        raise EngineError(f"engine {self.name or self.path} {_exit_text(self._proc.returncode)} while "
                          f"{doing}{self._tail_text()}", lines=self._tail)

    def isready(self, timeout: float | None = None) -> None:
        """Say ``isready`` and wait for ``readyok`` (``timeout`` seconds; default ``ready_timeout``)."""
        self._check_open()
        timeout = self.ready_timeout if timeout is None else timeout
        self._send("isready")
        deadline = time.monotonic() + timeout
        while True:
            line = self._receive(deadline, "waiting for readyok")
            if line is None:
                self.kill()
                raise EngineTimeoutError(f"engine {self.name or self.path} did not answer isready within "
                                         f"{timeout:g} s and was killed{self._tail_text()}", lines=self._tail)
            if line.strip() == "readyok":
                return

    def setoption(self, name: str, value: object = None) -> None:
        """Set an option the engine declared (names match whatever their case; ``options`` lists them).

        Spin values are checked against the engine's min and max, combo
        values against its choices; a check takes a bool; a button takes no
        value. ``UCI_Chess960`` is also set by ``position`` as the board needs.

        >>> sf.setoption("UCI_Elo", 1500)                        # doctest: +SKIP
        """
        self._check_open()
        declared = self._lower.get(str(name).lower())
        if declared is None:
            known = ", ".join(self._options) or "none"
            raise EngineError(f"engine {self.name or self.path} has no option {name!r} (it has: {known})")
        option = self._options[declared]
        text = _option_value(option, value, self.name or self.path)
        self._send(f"setoption name {declared}" + ("" if text is None else f" value {text}"))
        self.config[declared] = value
        if declared == "UCI_Chess960":
            self._chess960 = text == "true"

    def newgame(self) -> None:
        """``ucinewgame`` then ``isready``: the next search starts with clear tables."""
        self._check_open()
        self._send("ucinewgame")
        self.isready()

    # -- positions ----------------------------------------------------------------
    def set_board(self, board) -> None:
        """Send the position of a fastpgn ``Board`` with the moves that led to it (for repetitions).

        A Chess960 board sets ``UCI_Chess960`` first (castling goes as king takes rook).
        """
        root = board.root()
        fen = root.fen()
        moves = []
        for move in board.move_stack:
            moves.append(root.uci(move))
            root.push(move)
        self.position(fen, moves, chess960=board.chess960)

    def position(self, fen: str | None = None, moves: Iterable = (), *, chess960: bool = False) -> None:
        """Send ``position startpos|fen FEN moves ...``; ``moves`` are UCI strings or fastpgn Moves.

        The moves are checked on fastpgn's board (IllegalMoveError names the
        first illegal one) and sent in the form the engine's mode expects. A
        null move among them (``0000``), which engines do not read, sends the
        position after the moves as a FEN instead, without their history.
        """
        self._check_open()
        from fastpgn.board import Board

        given = list(moves)
        root = (fen, bool(chess960))
        n = len(self._given)
        if self._board is not None and self._root == root and given[:n] == self._given:
            board, sent, start = self._board, list(self._sent), n   # a longer game: push just the new moves
            root_command = self._root_command
        else:
            board = Board(fen, chess960)
            sent, start = [], 0
            if fen is None or (not chess960 and board.fen() == STARTING_FEN):
                root_command = "position startpos"
            else:
                root_command = f"position fen {board.fen(shredder=bool(chess960))}"
        try:
            for move in given[start:]:
                parsed = board.parse_uci(move) if isinstance(move, str) else move
                sent.append(board.uci(parsed))
                board.push(parsed)
        except BaseException:
            self._board = None      # pushed in part: set up afresh next time
            raise
        command = root_command + (" moves " + " ".join(sent) if sent else "")
        if "0000" in sent:
            # UCI engines stop reading moves at a null move (0000): the position after the moves
            # goes as a FEN instead, without the history before it (python-chess does the same).
            command = f"position fen {board.fen(shredder=bool(chess960))}"
        if bool(chess960) != self._chess960:
            if "UCI_Chess960" in self._options:
                self.setoption("UCI_Chess960", bool(chess960))
            elif chess960:
                raise EngineError(f"engine {self.name or self.path} has no UCI_Chess960 option")
        self._send(command)
        self._root, self._given, self._sent, self._board = root, given, sent, board
        self._root_command = root_command

    @property
    def board(self):
        """A copy of the position last sent (a fastpgn Board; the start position before any)."""
        from fastpgn.board import Board

        return self._board.copy() if self._board is not None else Board()

    # -- searching ----------------------------------------------------------------
    def search(self, command: str | None = None, *, info: Callable[[Info], object] | None = None,
               timeout: float | None = None, depth: int | None = None, nodes: int | None = None,
               movetime: int | None = None) -> SearchResult:
        """Send a ``go`` command and wait for ``bestmove``; returns a SearchResult.

        ``command`` is the whole line (``"go depth 20"``), or give ``depth``,
        ``nodes`` and/or ``movetime`` (ms). ``info`` is called with every
        ``info`` line as an Info. Past ``timeout`` seconds the search is
        stopped (``stop``) and EngineTimeoutError raised; an engine that does
        not obey ``stop`` within ``grace`` seconds is killed. A ``bestmove``
        that is not legal in the position raises EngineError, and so does
        ``bestmove (none)`` (or ``0000``) where the position has a legal move;
        in a mate or stalemate it gives ``best`` None.

        >>> sf.search("go depth 20", info=print).best            # doctest: +SKIP
        'e2e4'
        """
        self._check_open()
        if command is None:
            parts = ["go"]
            for key, value in (("depth", depth), ("nodes", nodes), ("movetime", movetime)):
                if value is not None:
                    parts.append(f"{key} {int(value)}")
            if len(parts) == 1:
                raise EngineError("search needs a limit: a command such as 'go depth 20', or depth=, "
                                  "nodes= or movetime=")
            command = " ".join(parts)
        words = command.split()
        if not words or words[0] != "go":
            raise EngineError(f"search sends a go command, not {command!r}")
        if ("infinite" in words or "ponder" in words) and timeout is None:
            raise EngineError(f"{command!r} never ends by itself: give a timeout, or a depth, nodes or "
                              "movetime limit")
        if self._board is None:
            self.position()
        board = self._board
        assert board is not None  # position() set it (or raised)
        turn, fen, chess960 = board.turn, board.fen(), board.chess960
        self._send(command)
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        try:
            while True:
                line = self._receive(deadline, f"searching ({command})")
                if line is None:  # the deadline passed: there is one only with a timeout
                    assert timeout is not None
                    self._stop_late(command, timeout)
                word = line.split(" ", 1)[0]
                if word == "info":
                    # Without a callback only the lines with a score need reading.
                    if info is not None or " score " in line:
                        parsed = Info.parse(line, turn, fen, chess960)
                        if parsed.score is not None and parsed.multipv in (None, 1):
                            last = parsed
                        if info is not None:
                            info(parsed)
                elif word == "bestmove":
                    break
        except EngineError:
            raise
        except BaseException:
            # The caller's info callback raised, or Ctrl-C: end the search, keep the engine in step.
            self._abandon()
            raise
        parts = line.split()
        best = parts[1] if len(parts) > 1 else None
        ponder = parts[3] if len(parts) > 3 and parts[2] == "ponder" else None
        if best in (None, "(none)", "0000", "none"):
            # No move is the answer only where there is none to make (mate, stalemate).
            if board.legal_moves():
                said = f"bestmove {best}" if best is not None else "bestmove without a move"
                raise EngineError(f"engine {self.name or self.path} answered {said} in {fen}, a position with "
                                  "legal moves", lines=self._tail)
            best, ponder = None, None
        else:
            from fastpgn.errors import BoardError

            try:
                board.parse_uci(best)
            except BoardError:
                raise EngineError(f"engine {self.name or self.path} answered bestmove {best}, which is not "
                                  f"legal in {fen}", lines=self._tail) from None
        return SearchResult(best, ponder, last, fen, chess960)

    def _stop_late(self, command: str, timeout: float) -> NoReturn:
        """The deadline passed: ``stop``, wait ``grace`` for bestmove, else kill; raise either way."""
        self._send("stop")
        deadline = time.monotonic() + self.grace
        while True:
            line = self._receive(deadline, f"stopping ({command})")
            if line is None:
                self.kill()
                raise EngineTimeoutError(
                    f"engine {self.name or self.path} passed the search's {timeout:g} s deadline "
                    f"({command}) and did not obey stop within {self.grace:g} s: killed{self._tail_text()}",
                    lines=self._tail)
            if line.split(" ", 1)[0] == "bestmove":
                raise EngineTimeoutError(f"engine {self.name or self.path} passed the search's {timeout:g} s "
                                         f"deadline ({command}): stopped", lines=self._tail)

    def _abandon(self) -> None:
        if self._closed:
            return
        try:
            self._send("stop")
            deadline = time.monotonic() + self.grace
            while True:
                line = self._receive(deadline, "stopping")
                if line is None:
                    self.kill()
                    return
                if line.split(" ", 1)[0] == "bestmove":
                    return
        except EngineError:
            pass
