"""What the commands share: for the format commands (``lichess-text``, ``crypt``, ``icn``) the
exit rule and its help text, the ``--errors`` option, opening INPUT and OUT, reporting bad
games and the summary line; for every command, ``plural``, and for those with workers the
``-j`` option and its one-line usage error (``Parser``).

A command builds a :class:`Run` and hands it the work as a function; the run turns
how the work ended into one line on stderr and the exit status. Data goes to OUT or
stdout; every bad game, warning, failure and the summary is one line on stderr.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO, cast

from fastpgn.errors import InputError, OutputError, PGNError, Rejected, not_utf8_note, plural  # noqa: F401

EXIT_RULE = """\
exit status:
  0    the run finished; each bad game it skipped is reported on stderr (what
       is wrong and where) and counted in the summary line
  1    the input is damaged (a truncated or corrupt compressed stream: the
       games after the damage are lost), or --errors raise stopped the run at
       the first bad game
  2    usage error; input that is missing, unreadable, empty, not PGN or
       not UTF-8 text; output that cannot be written
  130  interrupted (Ctrl-C); a closed stdout (| head) ends the run quietly
       with 0
"""


class Parser(argparse.ArgumentParser):
    """An argument parser that words a bad ``-j`` as one line, ``NAME: -j ...`` (NAME: ``name``, else the prog),
    where argparse would print its usage too."""

    ONE_LINE = ("-j/--jobs",)

    def __init__(self, *args, name: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.name = name or self.prog

    def error(self, message: str):
        for flag in self.ONE_LINE:
            head = f"argument {flag}: "
            if message.startswith(head):
                self.exit(2, f"{self.name}: {message[len(head):]}\n")
        super().error(message)


def at_least_one(text: str) -> int:
    """An option's whole number of at least 1 (argparse's ``type``): anything else is a usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def add_jobs_option(parser, default: int | None, default_text: str, help_text: str) -> None:
    """``-j N``: N at least 1; left out, ``default`` (``default_text``); ``-j 0`` or ``-j -3`` is a usage error."""
    def jobs(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"-j takes a whole number of workers, not {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"-j must be at least 1, not {value} (without -j: {default_text})")
        return value

    parser.add_argument("-j", "--jobs", type=jobs, default=default, metavar="N", help=help_text)


def add_parquet_writer_option(parser) -> None:
    """``--parquet-writer {fastpgn,pyarrow}``: who writes the per-ply lists' pages of ``--format parquet``."""
    parser.add_argument("--parquet-writer", choices=("fastpgn", "pyarrow"), default="fastpgn",
                        help="who writes the per-ply lists' pages (moves, clock, evals, ...) of --format parquet: "
                             "fastpgn (default; faster) or pyarrow, which then writes every column (the bytes "
                             "pyarrow's own ParquetWriter writes); the files read back the same either way")


def add_error_options(parser) -> None:
    """``--errors {skip,raise}`` (the dump converter's spelling) and ``--strict``, its old name."""
    parser.add_argument("--errors", choices=("skip", "raise"), default="skip",
                        help="skip (default): report each bad game on stderr, count it and go on; "
                             "raise: stop at the first one (exit 1)")
    parser.add_argument("--strict", dest="errors", action="store_const", const="raise",
                        help="deprecated: the same as --errors raise")


def parse_args(parser, argv):
    """The parsed arguments, or the exit status argparse asked for (0 after --help, 2 on a usage error)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2


def progress_bar(prog: str, total: int | None, desc: str):
    """A tqdm bar on stderr for a command's progress: ``prog: 42%|####  | DESC [elapsed<remaining]`` (the
    ETA) when ``total`` is known, ``prog: DESC [elapsed]`` until then (:func:`set_progress_total`). The
    figures go in ``desc``: tqdm's postfix field comes with a leading comma."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, bar_format=_bar_format(prog, total), dynamic_ncols=True, mininterval=0.25,
               file=sys.stderr)
    bar.fastpgn_prog = prog
    return bar


def set_progress_total(bar, total: int) -> None:
    """Give a :func:`progress_bar` the total it lacked (known later on): its percentage and ETA from now."""
    if bar.total != total:
        bar.total = total
        bar.bar_format = _bar_format(bar.fastpgn_prog, total)


def _bar_format(prog: str, total: int | None) -> str:
    return (f"{prog}: {{percentage:3.0f}}%|{{bar}}| {{desc}} [{{elapsed}}<{{remaining}}]" if total
            else f"{prog}: {{desc}} [{{elapsed}}]")


def _say(message: str) -> None:
    print(message, file=sys.stderr)


class Stop(Exception):
    """``--errors raise``: the first bad game ends the run."""


class Unusable(Exception):
    """INPUT or OUT cannot be used (exit 2); the message names the file."""


class Output:
    """OUT (a file; its missing folders are made) or stdout, opened at the first write.

    A run that fails before its first game leaves OUT as it was. Errors
    other than a closed pipe are :class:`Unusable`, naming OUT.
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._fh: TextIO | None = None

    def write(self, text: str) -> None:
        try:
            if self._fh is None:
                self._fh = self._open()
            self._fh.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._error(exc) from None
        except OutputError as exc:     # a symbolic link at OUT
            raise Unusable(str(exc)) from None

    def _open(self) -> TextIO:
        if self.path is None:
            return sys.stdout
        folder = os.path.dirname(self.path)
        if folder:
            make_folder(folder, f"cannot write {self.path}")
        from fastpgn.io.output import open_named

        return cast(TextIO, open_named(self.path, "w", encoding="utf-8", newline="\n"))

    def _error(self, exc: OSError) -> Unusable:
        name = self.path if self.path is not None else "stdout"
        return Unusable(f"cannot write {name}: {exc.strerror or exc}")

    def close(self, *, create: bool) -> None:
        """Close OUT; ``create``: make it, empty, if nothing was written (the run found no game)."""
        try:
            if self._fh is None and create:
                self._fh = self._open()
            if self._fh is sys.stdout:
                self._fh.flush()
            elif self._fh is not None:
                self._fh.close()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._error(exc) from None
        except OutputError as exc:     # a symbolic link at OUT
            raise Unusable(str(exc)) from None


def make_folder(path: str, failure: str | None = None) -> None:
    """Make the folder ``path`` and its parents where they are missing; Unusable if that fails."""
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise Unusable(f"{failure or 'cannot make the folder ' + path}: {path} is a file, not a folder") from None
    except OSError as exc:
        raise Unusable(f"{failure or 'cannot make the folder ' + path}: {exc.strerror or exc}") from None


def _pieces(source) -> Iterator[bytes]:
    """What is left of an open source (after ``head()``), read as the blocks read it (damage after the bytes before)."""
    from fastpgn.io.sources import READ_SIZE

    buf = bytearray(READ_SIZE)
    while True:
        n = source.readinto(buf)
        if not n:
            return
        yield bytes(buf[:n])


class _Decompressed(io.RawIOBase):
    """The decompressed bytes of an open source as a binary file, its first chunk already read.

    A read returns at most what one chunk holds, so the bytes before damage
    are all handed out before the read that meets the damage raises.
    """

    def __init__(self, head: bytes, chunks: Iterator[bytes], source) -> None:
        self._chunk = head
        self._at = 0
        self._chunks = chunks
        self._source = source

    def readable(self) -> bool:
        return True

    def _next(self) -> bool:
        while self._at >= len(self._chunk):
            chunk = next(self._chunks, None)
            if chunk is None:
                return False
            self._chunk, self._at = chunk, 0
        return True

    def read(self, n: int = -1) -> bytes:
        if not self._next():
            return b""
        chunk, at = self._chunk, self._at
        if at == 0 and (n < 0 or n >= len(chunk)):
            self._at = len(chunk)
            return chunk
        end = len(chunk) if n < 0 else min(len(chunk), at + n)
        self._at = end
        return chunk[at:end]

    def readinto(self, view) -> int:
        data = self.read(len(view))
        view[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._source.close()
        super().close()


class Run:
    """One run of a format command: INPUT and OUT, the error policy, the counts, the exit status.

    ``prog`` starts the summary line (``icn --to-pgn``); ``nothing`` says,
    for the message about an input without games, what such an input is
    (``empty or not PGN``).
    """

    def __init__(self, prog: str, args, *, nothing: str, output: str | None = None) -> None:
        self.prog = prog
        self.input = args.input
        self.name = "<stdin>" if args.input == "-" else args.input
        self.errors = args.errors
        self.quiet = args.quiet
        self.encoding = getattr(args, "encoding", None)   # --encoding: INPUT's, transcoded to UTF-8
        self.nothing = nothing
        self.out = Output(output)
        self.written = 0
        self.rejected = 0
        self.note = ""  # added to the summary line

    def bad(self, game: Rejected | PGNError) -> None:
        """A bad game (one the reader rejected, or the error a notation raised for one): one line on
        stderr and counted; with ``--errors raise``, the end of the run."""
        self.rejected += 1
        _say(f"{self.name}: {game.error() if isinstance(game, Rejected) else game}")
        if self.errors == "raise":
            raise Stop

    def warn(self, message: str) -> None:
        _say(f"{self.name}: {message}")

    def _named(self, exc: Exception) -> str:
        text = str(exc)
        return text if self.name in text else f"{self.name}: {text}"

    def refuse_to_overwrite(self, *paths: str) -> None:
        """Unusable if one of ``paths`` is INPUT (which writing it would empty before it is read)."""
        if self.input == "-":
            return
        for path in paths:
            if os.path.exists(path) and os.path.exists(self.input) and os.path.samefile(path, self.input):
                raise Unusable(f"refusing to overwrite the input {self.input}")

    def open_binary(self):
        """INPUT as a binary file, as it is (stdin stays open: it belongs to the caller); with
        ``--encoding``, decompressed and transcoded to UTF-8."""
        if self.encoding is not None:
            source = self.open_source()
            return _Decompressed(b"", _pieces(source), source)
        if self.input == "-":
            return _Unclosed(sys.stdin.buffer)
        try:
            return open(self.input, "rb")
        except FileNotFoundError:
            raise Unusable(f"{self.input}: no such file") from None
        except IsADirectoryError:
            raise Unusable(f"{self.input} is a folder, not a file") from None
        except OSError as exc:
            raise Unusable(f"cannot read {self.input}: {exc.strerror or exc}") from None

    def open_source(self):
        """INPUT opened by :func:`fastpgn.io.sources.open_source` (any compression)."""
        from fastpgn.io.sources import open_source

        try:
            return open_source(sys.stdin.buffer if self.input == "-" else self.input, encoding=self.encoding)
        except InputError as exc:
            raise Unusable(self._named(exc)) from None

    def open_pgn(self, other_notation: Callable[[bytes], str | None] | None = None):
        """INPUT for ``read_games`` (in a ``with``); Unusable when its first bytes cannot start PGN, or
        when ``other_notation`` (given the first bytes) says what else they are.

        A file is looked at and then read again from its start; a pipe or
        stdin is read once, its first bytes kept for the reader. Damage
        among the first bytes comes after them, as damage (exit 1).
        """
        from fastpgn.io.sources import check_pgn

        source = self.open_source()
        try:
            head = source.head()
            try:
                check_pgn(head, self.name)
            except InputError as exc:
                raise Unusable(self._named(exc)) from None
            why = other_notation(head) if other_notation is not None else None
            if why:
                raise Unusable(f"{self.name}: {why}")
        except BaseException:
            source.close()
            raise
        if source.path is not None:
            source.close()
            return _Unclosed(source.path)
        return _Decompressed(head, _pieces(source), source)

    def pgn_games(self, stream, ends_whole: bool = False) -> Iterator:
        """The games of ``stream`` (see :meth:`open_pgn`); the ones the reader rejects go to :meth:`bad`.
        ``ends_whole``: the input's end ends its last game (PGN Crypt's game files: no result)."""
        from fastpgn.reader import read_games

        # (a path is read again from its start, so it is transcoded again; an open stream already was)
        reader = read_games(stream, errors=self.errors, encoding=self.encoding if isinstance(stream, str) else None)
        reader.ends_whole = ends_whole
        reader._warn_not_utf8 = False   # said here, in one line, once the games are read
        games = iter(reader)
        reported = 0
        while True:
            try:
                game = next(games)
            except StopIteration:
                break
            except InputError:
                # Damage: the game it cut short was rejected just before.
                for rejected in reader.rejected[reported:]:
                    self.bad(rejected)
                raise
            except PGNError as exc:  # --errors raise: the reader stops at the first bad game
                self.bad(exc)
                raise  # pragma: no cover - bad() stops the run
            while reported < len(reader.rejected):
                self.bad(reader.rejected[reported])
                reported += 1
            yield game
        for rejected in reader.rejected[reported:]:
            self.bad(rejected)
        if reader.games_not_utf8:
            self.warn(not_utf8_note(reader.games_not_utf8, reader.first_not_utf8))

    def execute(self, work: Callable[[], None]) -> int:
        """Do ``work``; report how it ended on stderr and return the exit status (see EXIT_RULE)."""
        status = 0
        try:
            try:
                work()
            except Stop:
                status, self.note = 1, "stopped at the first bad game (--errors raise)"
            except InputError as exc:
                if exc.line is not None:  # text that is not UTF-8: not the notation at all
                    hint = "" if self.encoding else "; --encoding NAME reads text of another encoding (cp1252...)"
                    raise Unusable(self._named(exc) + hint) from None
                _say(f"{self._named(exc)}; the games after the damage are lost")
                status = 1
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise Unusable(f"cannot read {self.name}: {exc.strerror or exc}") from None
            if status == 0 and self.written + self.rejected == 0:
                raise Unusable(f"{self.name}: no games found ({self.nothing})")
            self.out.close(create=True)
        except Unusable as exc:
            _say(str(exc))
            try:
                self.out.close(create=False)
            except Unusable:
                pass  # the one line on stderr is the first failure
            return 2
        if not self.quiet:
            _say(self.summary())
        return status

    def summary(self) -> str:
        line = (f"{self.prog}: {plural(self.written + self.rejected, 'game')} read, "
                f"{self.written:,} written, {self.rejected:,} rejected")
        return f"{line}; {self.note}" if self.note else line


def _encoding(text: str) -> str:
    """``--encoding``'s value: a codec Python knows (a usage error otherwise)."""
    import argparse

    from fastpgn.io.sources import _codec_name

    try:
        _codec_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_encoding_argument(parser) -> None:
    """``--encoding NAME``: the input's encoding, transcoded to UTF-8 as it is read (docs/encoding.md)."""
    parser.add_argument("--encoding", type=_encoding, default=None, metavar="NAME",
                        help="the input's text encoding, e.g. cp1252 (Windows), latin-1 (ISO 8859-1); it is "
                             "read as that and written as UTF-8 (default: UTF-8; bytes that are not UTF-8 are "
                             "read as U+FFFD, and the games holding them counted on stderr)")


class _Unclosed:
    """A file (or a path) that a ``with`` block leaves open."""

    def __init__(self, fh) -> None:
        self.fh = fh

    def __enter__(self):
        return self.fh

    def __exit__(self, *exc) -> None:
        return None


def guarded(command) -> int:
    """Run ``command()`` for a command line: quiet exit on a closed stdout (0) and on Ctrl-C (130)."""
    try:
        return command()
    except BrokenPipeError:
        # The reader of stdout left early (``| head``): drop what is unsent, quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
