"""The engine's process: finding the program, reading its output on a thread, ending it and what it started.

The engine runs as a child process with pipes, in a process group of its
own (on POSIX), so that ending it also ends whatever it started. One reader
thread per engine (``_pump``) turns its output into lines on a queue, ending
with ``_EOF``; ``_reap`` kills the group and waits for the engine, so no
process is left behind. ``fastpgn.engine`` re-exports ``find_engine``.
"""

from __future__ import annotations

import collections
import os
import queue
import shutil
import signal
import subprocess
import time

from fastpgn.errors import EngineError, EngineNotFoundError

__all__ = ["GAME_DIRS", "find_engine"]

# Debian installs its engines (stockfish among them) in /usr/games, which is often not on PATH.
GAME_DIRS = ("/usr/games", "/usr/local/games")
_EOF = object()


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

