"""Output files opened so that no symbolic link is ever followed at a name fastpgn makes.

A folder that others can write into (a shared output folder) may hold, at a
name fastpgn is about to write (``.NAME.fastpgn-lock``, a chunk's ``.tmp``,
a month folder, the rejected games), a link to any file the user can write:
opened as ``open()`` opens, a run would write through it into that file.
Every file and folder fastpgn names is opened here, and a link at one of
those names is refused in one line (:class:`OutputError`), never followed:

- :func:`create`: a new file at a name fastpgn makes (a chunk's ``.tmp``,
  the probe, a file in a staging folder); a regular file an earlier run left
  there is replaced. It is made with ``O_CREAT | O_EXCL | O_NOFOLLOW``, so a
  link planted there meanwhile is refused too;
- :func:`open_own`: a file of fastpgn's name that a run goes on with (the
  lock, the rejected games on ``--resume``): ``O_NOFOLLOW``, and a regular
  file of no other name (a hard link would be written through as well);
- :func:`read_own`: such a file's bytes (the resume state), None when absent;
- :func:`replace`: a small file written whole: its ``.tmp`` made by
  :func:`create`, then renamed over it (a rename replaces a link at the
  name, it never writes through it);
- :func:`folders`: folders fastpgn names (``year=YYYY/month=MM``, Spark's
  staging), made one by one, each refused when it is a link;
- :func:`refuse_links`: the names a run owns, checked before it writes;
- :func:`visible_name`: the name an input's output files start with.

A path the user names as the output (``to_parquet``'s path, ``analyse -o``,
a report, an explorer tree) is never written through a link either: a file
written as it goes (:func:`open_named`, ``analyse -o``) refuses a link there in
one line (:func:`named`); a file written whole (:func:`staged`: in a private
folder beside it, renamed onto it at the end, removed on an error) replaces
the link with the file. Links of ``/dev`` and ``/proc`` (``/dev/stdout``) are
the system's, followed as the user means them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from fastpgn.errors import OutputError

__all__ = ["OutputError", "create", "folders", "named", "open_named", "open_own", "read_own", "refuse_links",
           "replace", "staged", "visible_name"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FLAGS = _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
# What open() with O_NOFOLLOW says at a link: ELOOP (Linux, macOS), EMLINK (FreeBSD).
_AT_LINK = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)}
_MODES = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
          "r+": os.O_RDWR}


def link_error(path) -> OutputError:
    """The one line that refuses a link at a name fastpgn writes."""
    return OutputError(f"{os.fspath(path)} is a symbolic link: fastpgn never writes through a link at a name "
                       "it makes (remove the link, or give another output folder)")


def _kind_error(path, what: str) -> OutputError:
    return OutputError(f"{os.fspath(path)} is {what}, where fastpgn writes a file of its own: remove it, or "
                       "give another output folder")


def _open(path, flags: int) -> int:
    """``os.open`` without following a link at ``path``; a link there is :func:`link_error`."""
    try:
        return os.open(path, flags | _FLAGS, 0o666)
    except OSError as exc:
        if exc.errno in _AT_LINK or exc.errno == errno.EEXIST:
            if os.path.islink(path):
                raise link_error(path) from None
            if exc.errno == errno.EEXIST:
                raise OutputError(f"{os.fspath(path)} appeared while fastpgn was making it: another program "
                                  "writes into this folder") from None
        raise


def _check_regular(fd: int, path) -> None:
    """Close ``fd`` and refuse it unless it is a regular file of one name."""
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_nlink <= 1:
        return
    os.close(fd)
    raise _kind_error(path, "not a regular file" if not stat.S_ISREG(st.st_mode)
                      else f"a file of {st.st_nlink} names (a hard link)")


def create(path) -> IO[bytes]:
    """A new empty file at ``path``, a name fastpgn makes, open for writing (binary).

    A regular file already there (an interrupted run's ``.tmp``) is replaced;
    a link, or anything but a regular file, is refused, whether it was there
    before or appears while the file is made.

    >>> folder = tempfile.mkdtemp()
    >>> with create(os.path.join(folder, ".x.tmp")) as f:
    ...     f.write(b"games")
    5
    >>> os.symlink(os.path.join(folder, ".x.tmp"), os.path.join(folder, ".y.tmp"))
    >>> create(os.path.join(folder, ".y.tmp"))
    Traceback (most recent call last):
    fastpgn.errors.OutputError: ....y.tmp is a symbolic link: fastpgn never writes through a link at a name it makes ...
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(st.st_mode):
            raise link_error(path)
        if not stat.S_ISREG(st.st_mode):
            raise _kind_error(path, "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file")
        os.unlink(path)     # (unlink removes a name: whatever it is, nothing it points to)
    return os.fdopen(_open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb")


def open_own(path, flags: int) -> int:
    """A file descriptor of ``path``, a file of fastpgn's name that a run goes on with, opened with
    ``os.open`` ``flags`` (``os.O_CREAT`` makes it): never through a link, and only a regular file of
    one name (a FIFO, a device or a hard link to another file refused)."""
    fd = _open(path, flags | _NONBLOCK)   # (O_NONBLOCK: a FIFO planted there cannot hang the open)
    _check_regular(fd, path)
    if _NONBLOCK:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    return fd


def read_own(path) -> bytes | None:
    """The bytes of ``path``, a file fastpgn wrote (a resume state, a record); None when there is none.

    >>> read_own(os.path.join(tempfile.mkdtemp(), "absent")) is None
    True
    """
    try:
        fd = open_own(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def replace(path, data: bytes) -> None:
    """``data`` at ``path``, a name fastpgn makes, whole or not at all: its ``.tmp`` made, then renamed.

    >>> state = Path(tempfile.mkdtemp()) / ".x.fastpgn-state.json"
    >>> replace(state, b"{}"); read_own(state)
    b'{}'
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    f = create(tmp)
    try:
        with f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)     # a full disk: no half-written file left behind
        raise


def folders(root, relative: str) -> Path:
    """The folders ``relative`` names under ``root`` (``year=2024/month=01``), made where missing; each
    one a link (or a file) is refused. ``root`` itself is the caller's (the user's output folder).

    >>> root = Path(tempfile.mkdtemp())
    >>> folders(root, "year=2024/month=01").relative_to(root).as_posix()
    'year=2024/month=01'
    """
    path = Path(root)
    for part in Path(relative).parts:
        path = path / part
        try:
            os.mkdir(path)      # (mkdir never follows a link at its name: it is there already)
        except FileExistsError:
            pass
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise link_error(path)
        if not stat.S_ISDIR(st.st_mode):
            raise OutputError(f"{path} is a file, where fastpgn makes a folder: remove it, or give another "
                              "output folder")
    return path


def refuse_links(paths: Iterable) -> None:
    """Refuse, in one line, the first of ``paths`` (names a run is about to write) that is a link."""
    for path in paths:
        if os.path.islink(path):
            raise link_error(path)


def visible_name(path: str, fallback: str = "games") -> str:
    """The name an input's output files start with: its own name (``.``, ``..`` and a trailing ``/`` read
    as the folder they name; a link keeps its own name) without the leading ``.`` and ``_`` that would hide
    the files from pandas, pyarrow's datasets, Spark and fastpgn's report.

    >>> visible_name("dumps/2024-01.pgn.zst"), visible_name(".hidden.pgn"), visible_name("/")
    ('2024-01.pgn.zst', 'hidden.pgn', 'games')
    >>> visible_name(".") == os.path.basename(os.getcwd())
    True
    """
    return os.path.basename(os.path.abspath(path)).lstrip("._") or fallback


# -- outputs the user names ----------------------------------------------------------------------------

def _system(path) -> bool:
    """A link of the system's device folders (``/dev/stdout``, ``/dev/fd/1``): followed, as the user means."""
    return os.path.abspath(path).startswith(("/dev/", "/proc/"))


def named(path) -> str:
    """``path``, an output the user named, checked: a symbolic link there is refused in one line (one in
    ``/dev`` or ``/proc``, ``/dev/stdout``, excepted). Returns the path as given.

    >>> named("games.parquet")
    'games.parquet'
    """
    path = os.fspath(path)
    if os.path.islink(path) and not _system(path):
        raise OutputError(f"{path} is a symbolic link: fastpgn never writes through a link at its output "
                          f"(remove it, or name its target: {os.path.realpath(path)})")
    return path


def open_named(path, mode: str = "wb", **text) -> IO:
    """``path``, an output the user named, opened as ``open(path, mode, **text)`` would (``w``, ``a`` or
    ``r+``, binary or text), after :func:`named`: a link there is refused, whether it was there when
    checked or planted meanwhile (``/dev/stdout`` and its kin followed).

    >>> with open_named(os.path.join(tempfile.mkdtemp(), "games.pgn"), "w", encoding="utf-8") as f:
    ...     f.write("1. e4 *")
    7
    """
    path = named(path)
    flags = _MODES[mode.replace("b", "")]
    if _system(path):
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    else:
        fd = _open(path, flags)
    return os.fdopen(fd, mode, **text)


@contextlib.contextmanager
def staged(path) -> Iterator[str]:
    """A path to write ``path`` at, whole or not at all: an output the user named.

    The path yielded is in a folder of its own (mode 0700, so no one else can
    put anything in it) beside ``path``; when the ``with`` block ends well, the
    file written there is renamed onto ``path``, else it is removed with its
    folder, and a file already at ``path`` stays as it was. A symbolic link at
    ``path`` is never written through: the rename replaces the link with the
    file. A device or a FIFO (``/dev/null``, ``/dev/stdout``) is written directly.

    >>> out = os.path.join(tempfile.mkdtemp(), "games.parquet")
    >>> with staged(out) as tmp:
    ...     _ = Path(tmp).write_bytes(b"PAR1")
    >>> Path(out).read_bytes()
    b'PAR1'
    """
    path = os.fspath(path)
    if not os.path.islink(path) and os.path.isdir(path):
        raise OutputError(f"cannot write {path}: it is a folder (name a file to write)")
    if _system(path) or (os.path.exists(path) and not os.path.islink(path) and not os.path.isfile(path)):
        yield path
        return
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        tmp = os.path.join(work, name)
        yield tmp
        fd = os.open(tmp, os.O_RDONLY | _FLAGS)
        try:
            os.fsync(fd)        # on disk before it takes the name: a crash leaves the old file or the new
        finally:
            os.close(fd)
        os.replace(tmp, path)   # (a rename replaces a link at the name, never writes through it)
    finally:
        shutil.rmtree(work, ignore_errors=True)
