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

This module owns the conversation: the engine runs as a child process with
pipes; one reader thread per engine turns its output into lines. Commands
are sent by the caller's thread, which waits for the answer with a deadline.
Lines the protocol does not know are ignored. Every way a conversation can
end (``quit``, a crash, a deadline, Ctrl-C) leaves no process and no thread
behind: the engine runs in its own process group, which is killed when it
does not leave when asked.

Scores are kept as the engine sends them, from the side to move's view
(``Info.score``), and turned to White's view on request (``Info.white_score``);
``Score.lichess()`` writes lichess's ``%eval`` notation.
"""

from __future__ import annotations

import collections
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Sequence

from fastpgn.errors import EngineError, EngineNotFoundError, EngineTimeoutError

__all__ = ["Engine", "EngineError", "EngineNotFoundError", "EngineTimeoutError", "Info", "Option",
           "Score", "SearchResult", "find_engine"]

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
TAIL_LINES = 10          # lines of the engine's output kept for error messages
# Debian installs its engines (stockfish among them) in /usr/games, which is often not on PATH.
GAME_DIRS = ("/usr/games", "/usr/local/games")
_UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?\Z")
_EOF = object()


# ------------------------------------------------------------------ errors

# ------------------------------------------------------------------ values

@dataclass(frozen=True)
class Score:
    """An evaluation: centipawns (``cp``) or moves to mate (``mate``), from one side's view.

    ``mate`` > 0: that side mates in so many moves; < 0: it is mated; 0: it is
    checkmated now (the engine's ``score mate 0``).

    >>> Score(cp=-33).white("b").lichess(), Score(mate=3).white("b").lichess()
    ('0.33', '#-3')
    """

    cp: int | None = None
    mate: int | None = None

    def white(self, turn: str) -> Score:
        """This score, taken from the side to move ``turn`` (``"w"``/``"b"``), from White's view."""
        if turn == "w":
            return self
        if self.mate is not None:
            return Score(mate=-self.mate)
        return Score(cp=-self.cp if self.cp is not None else None)

    def lichess(self) -> str:
        """The score in lichess's ``%eval`` notation: pawns with one or two decimals, or ``#N``.

        Lichess writes ``0.3`` for 30 centipawns and ``0.0`` for 0, never
        ``0.30`` (as in its database dumps).

        >>> [Score(cp=c).lichess() for c in (33, 30, 0, -5, -250, 5465)]
        ['0.33', '0.3', '0.0', '-0.05', '-2.5', '54.65']
        >>> Score(mate=-3).lichess()
        '#-3'
        """
        if self.mate is not None:
            return f"#{self.mate}"
        cp = self.cp or 0
        whole, cents = divmod(abs(cp), 100)
        text = f"{whole}.{cents:02d}"
        if text.endswith("0"):
            text = text[:-1]
        return f"-{text}" if cp < 0 else text

    def __str__(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"


@dataclass(frozen=True)
class Option:
    """One option as the engine declared it after ``uci``.

    ``default``, ``min`` and ``max`` are ints for a ``spin``, ``default`` a bool
    for a ``check``, text otherwise (None where the engine gave none);
    ``vars`` are a ``combo``'s choices.
    """

    name: str
    type: str
    default: object = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()


_INT_FIELDS = frozenset(("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull", "tbhits",
                         "cpuload", "currmovenumber"))
_INFO_WORDS = _INT_FIELDS | {"score", "pv", "currmove", "wdl", "string", "refutation", "currline",
                             "lowerbound", "upperbound", "cp", "mate"}


class Info:
    """One ``info`` line, parsed: what the engine reported during a search.

    Missing fields are None. ``score`` is from the side to move's view
    (``turn``), ``white_score`` from White's; ``bound`` is ``"lowerbound"`` or
    ``"upperbound"`` when the score is one; ``pv`` is in UCI, ``pv_san`` in SAN
    (computed with fastpgn's board on first use; it stops at the first move
    that is not legal). ``str(info)`` is the line as the engine wrote it, so
    ``search(..., info=print)`` prints the engine's lines, as Chess.jl's
    ``infoaction=println`` does.

    >>> i = Info.parse("info depth 3 score cp 25 nodes 80 pv e2e4 e7e5", "w", STARTING_FEN)
    >>> i.depth, i.score, i.pv, i.pv_san
    (3, Score(cp=25, mate=None), ('e2e4', 'e7e5'), ('e4', 'e5'))
    """

    __slots__ = ("line", "turn", "depth", "seldepth", "multipv", "score", "bound", "nodes", "nps", "time",
                 "hashfull", "tbhits", "cpuload", "currmove", "currmovenumber", "pv", "wdl", "string",
                 "_fen", "_chess960", "_pv_san")

    def __init__(self, line: str, turn: str = "w", fen: str | None = None, chess960: bool = False) -> None:
        self.line = line
        self.turn = turn
        self.depth = self.seldepth = self.multipv = self.nodes = self.nps = self.time = None
        self.hashfull = self.tbhits = self.cpuload = self.currmovenumber = None
        self.score = self.bound = self.currmove = self.wdl = self.string = None
        self.pv: tuple[str, ...] = ()
        self._fen = fen
        self._chess960 = chess960
        self._pv_san = None

    @classmethod
    def parse(cls, line: str, turn: str = "w", fen: str | None = None, chess960: bool = False) -> Info:
        """Parse an ``info ...`` line; tokens it cannot read are skipped, never raised on."""
        info = cls(line, turn, fen, chess960)
        tokens = line.split()
        n = len(tokens)
        i = 1
        while i < n:
            word = tokens[i]
            if word in _INT_FIELDS:
                value = _int(tokens[i + 1]) if i + 1 < n else None
                if value is not None:
                    setattr(info, word, value)
                    i += 2
                else:
                    i += 1
            elif word == "score":
                kind = tokens[i + 1] if i + 1 < n else ""
                value = _int(tokens[i + 2]) if i + 2 < n else None
                if kind in ("cp", "mate") and value is not None:
                    info.score = Score(cp=value) if kind == "cp" else Score(mate=value)
                    i += 3
                    if i < n and tokens[i] in ("lowerbound", "upperbound"):
                        info.bound = tokens[i]
                        i += 1
                else:
                    i += 1
            elif word == "pv":
                j = i + 1
                while j < n and _UCI_MOVE.match(tokens[j]):
                    j += 1
                info.pv = tuple(tokens[i + 1:j])
                i = j
            elif word == "currmove":
                if i + 1 < n and _UCI_MOVE.match(tokens[i + 1]):
                    info.currmove = tokens[i + 1]
                    i += 2
                else:
                    i += 1
            elif word == "wdl":
                values = [_int(t) for t in tokens[i + 1:i + 4]]
                if len(values) == 3 and None not in values:
                    info.wdl = tuple(values)
                    i += 4
                else:
                    i += 1
            elif word == "string":
                info.string = line.split("string", 1)[1].strip()
                break
            else:
                i += 1
        return info

    @property
    def white_score(self) -> Score | None:
        """``score`` from White's view."""
        return self.score.white(self.turn) if self.score is not None else None

    @property
    def pv_san(self) -> tuple[str, ...]:
        if self._pv_san is None:
            self._pv_san = tuple(_san_line(self._fen, self._chess960, self.pv)) if self.pv else ()
        return self._pv_san

    def __str__(self) -> str:
        return self.line

    def __repr__(self) -> str:
        return f"Info({self.line!r})"


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _san_line(fen: str | None, chess960: bool, ucis: Iterable[str]) -> list[str]:
    from fastpgn.board import Board
    from fastpgn.errors import BoardError

    board = Board(fen, chess960)
    out = []
    for uci in ucis:
        try:
            move = board.parse_uci(uci)
        except BoardError:
            break
        out.append(board.san(move))
        board.push(move)
    return out


@dataclass(frozen=True)
class SearchResult:
    """What ``Engine.search`` returns: the best move, the ponder move and the last info.

    ``best`` and ``ponder`` are UCI (``best`` is None when the position has
    no legal move: the engine's ``bestmove (none)``); ``info`` is the last
    ``info`` line that carried a score for the main line (None if none did).
    """

    best: str | None
    ponder: str | None
    info: Info | None
    fen: str
    chess960: bool = False

    @property
    def score(self) -> Score | None:
        """The last score, from the side to move's view."""
        return self.info.score if self.info is not None else None

    @property
    def white_score(self) -> Score | None:
        """The last score, from White's view."""
        return self.info.white_score if self.info is not None else None

    @property
    def best_san(self) -> str | None:
        if self.best is None:
            return None
        line = _san_line(self.fen, self.chess960, [self.best])
        return line[0] if line else None

    @property
    def pv(self) -> tuple[str, ...]:
        return self.info.pv if self.info is not None else ()

    @property
    def pv_san(self) -> tuple[str, ...]:
        return self.info.pv_san if self.info is not None else ()


# ------------------------------------------------------------------ finding and starting

def find_engine(path: str = "stockfish") -> str | None:
    """The program ``path`` names: itself when it holds a ``/``, else found on PATH, then in /usr/games.

    >>> find_engine("/no/such/engine") is None
    True
    """
    if os.sep in path or (os.altsep and os.altsep in path):
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(path) or shutil.which(path, path=os.pathsep.join(GAME_DIRS))


def _argv(path) -> list[str]:
    if isinstance(path, (list, tuple)):
        if not path:
            raise EngineNotFoundError("engine not found: an empty command")
        argv = [os.fspath(p) for p in path]
    else:
        argv = [os.fspath(path)]
    found = find_engine(argv[0])
    if found is None and os.path.isfile(argv[0]):
        raise EngineError(f"cannot start engine {argv[0]}: not an executable program")
    if found is None:
        where = "" if os.sep in argv[0] else f" (not on PATH nor in {', '.join(GAME_DIRS)})"
        hint = "; Debian and Ubuntu: apt-get install stockfish" if "stockfish" in argv[0] else ""
        raise EngineNotFoundError(f"engine not found: {argv[0]}{where}{hint}")
    argv[0] = found
    return argv


def _pump(stream, lines: queue.SimpleQueue, tail: collections.deque) -> None:
    """The reader thread: the engine's output, line by line, until it closes."""
    try:
        while True:
            raw = stream.readline(1 << 16)
            if not raw:
                break
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(line)
            lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(_EOF)


def _reap(proc: subprocess.Popen, grace: float = 0.0) -> None:
    """End ``proc`` and its process group: wait up to ``grace`` seconds for it to exit, kill, reap."""
    if proc.returncode is not None:
        return
    deadline = time.monotonic() + grace
    while grace > 0 and not _exited(proc) and time.monotonic() < deadline:
        time.sleep(0.005)
    if os.name == "posix":
        # The engine runs in a session of its own: whatever it started goes with it (such a process
        # could hold the output pipe open). Until the engine is reaped, its pid names only its group.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.kill()
    except OSError:
        pass
    proc.wait()


def _exited(proc: subprocess.Popen) -> bool:
    """Whether ``proc`` has exited, without reaping it (its pid stays its own until ``wait``)."""
    if not hasattr(os, "waitid"):  # pragma: no cover
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _exit_text(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with code {code}"


# ------------------------------------------------------------------ the engine

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
        self._lines: queue.SimpleQueue = queue.SimpleQueue()
        self._tail: collections.deque = collections.deque(maxlen=TAIL_LINES)
        self._closed = False
        self._lock = threading.Lock()
        self._chess960 = False
        self._root: tuple[str | None, bool] | None = None
        self._given: list = []
        self._board = None
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
            self._proc.stdin.write(b"quit\n")
            self._proc.stdin.flush()
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
        for stream in (self._proc.stdin, self._proc.stdout):
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
            self._proc.stdin.write(command.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
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

    def _died(self, doing: str):
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
        first illegal one) and sent in the form the engine's mode expects.
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
        if bool(chess960) != self._chess960:
            if "UCI_Chess960" in self._options:
                self.setoption("UCI_Chess960", bool(chess960))
            elif chess960:
                raise EngineError(f"engine {self.name or self.path} has no UCI_Chess960 option")
        self._send(root_command + (" moves " + " ".join(sent) if sent else ""))
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
        that is not legal in the position raises EngineError.

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
        turn, fen, chess960 = board.turn, board.fen(), board.chess960
        self._send(command)
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        try:
            while True:
                line = self._receive(deadline, f"searching ({command})")
                if line is None:
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
        if best in ("(none)", "0000", "none"):
            best, ponder = None, None
        elif best is not None:
            from fastpgn.errors import BoardError

            try:
                board.parse_uci(best)
            except BoardError:
                raise EngineError(f"engine {self.name or self.path} answered bestmove {best}, which is not "
                                  f"legal in {fen}", lines=self._tail) from None
        return SearchResult(best, ponder, last, fen, chess960)

    def _stop_late(self, command: str, timeout: float):
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


def _parse_option(rest: str) -> Option | None:
    """``name Hash type spin default 16 min 1 max 33554432`` -> Option; None if unreadable."""
    tokens = rest.split()
    keys = ("name", "type", "default", "min", "max", "var")
    fields: dict[str, list[str]] = {}
    vars_: list[str] = []
    current = None
    for token in tokens:
        if token in keys and not (current == "name" and token != "type"):
            if current == "var":
                vars_.append(" ".join(fields.pop("var", [])))
            current = token
            fields.setdefault(token, [])
            if token == "var":
                fields["var"] = []
        elif current is not None:
            fields[current].append(token)
    if current == "var":
        vars_.append(" ".join(fields.pop("var", [])))
    name = " ".join(fields.get("name", []))
    kind = " ".join(fields.get("type", [])).lower()
    if not name or not kind:
        return None
    default: object = " ".join(fields["default"]) if "default" in fields else None
    low = _int(" ".join(fields.get("min", []))) if "min" in fields else None
    high = _int(" ".join(fields.get("max", []))) if "max" in fields else None
    if kind == "spin" and default is not None:
        default = _int(default)
    elif kind == "check" and default is not None:
        default = default.lower() == "true"
    return Option(name, kind, default, low, high, tuple(vars_))


def _option_value(option: Option, value: object, engine: str) -> str | None:
    where = f"option {option.name} of engine {engine}"
    if option.type == "button":
        if value not in (None, True):
            raise EngineError(f"{where} is a button: it takes no value")
        return None
    if option.type == "check":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower()
        raise EngineError(f"{where} takes true or false, not {value!r}")
    if option.type == "spin":
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise EngineError(f"{where} takes a whole number, not {value!r}") from None
        if (option.min is not None and number < option.min) or (option.max is not None and number > option.max):
            raise EngineError(f"{where} takes {option.min}..{option.max}, not {number}")
        return str(number)
    text = "" if value is None else str(value)
    if "\n" in text or "\r" in text:
        raise EngineError(f"{where}: a value cannot hold a line break")
    if option.type == "combo" and option.vars:
        for choice in option.vars:
            if choice.lower() == text.lower():
                return choice
        raise EngineError(f"{where} takes one of {', '.join(option.vars)}, not {text!r}")
    return text
