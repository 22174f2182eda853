"""The reader API for Python programs: ``read_games`` and ``read_lines`` (the games they hand out are
:class:`fastpgn.game.Game`, also importable from here).

Both read any source ``fastpgn.io.sources`` opens (a path, ``-``, bytes, a
binary or text file, an iterable of lines), cut it into game-aligned
blocks and hand each block to the live scanner kernel, so memory stays
bounded whatever the input size. A reader is an iterator and a context
manager: ``close()`` (or leaving the ``with`` block) closes the file it
opened itself, never a file object it was given. The error policy is the caller's:
``errors="raise"`` (default) raises the first bad game's PGNSyntaxError after
yielding every game before it; ``errors="skip"`` keeps going and collects
each bad game, with its raw text, in ``reader.rejected``. Either way
``reader.games_read == reader.games_yielded + len(reader.rejected)``.
"""

from __future__ import annotations

import os
from stat import S_ISREG

from fastpgn import scan as _scan
from fastpgn._parallel import jobs_for
from fastpgn.errors import InputError, PGNError, PGNSyntaxError, rejected_games
from fastpgn.game import Game
from fastpgn.io.sources import BLOCK_SIZE, Block, Source, check_pgn, not_utf8, open_source

# What a program that only reads games does not need is imported on first use (the
# openings map, the filters, errors.Rejected, typing): start-up is a good part of
# reading a file's headers (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from fastpgn.errors import Rejected

    # (both kernels' RecordFeed have the same attributes)
    from fastpgn.scan.records import RecordFeed as _RecordFeed
else:
    _RecordFeed = _scan.kernel.RecordFeed

_POLICIES = ("raise", "skip")


class _RecordReader:
    """What GameReader and LineReader share: a source's blocks through the kernel into records,
    with the error policy and counts.

    An iterator over one pass of the source: the source is opened at the
    first ``next()`` and closed at the end, at the first error raised, or by
    ``close()``.
    """

    def __init__(self, source, errors: str, block_size: int, encoding: str | None = None, jobs: int | None = None) -> None:
        if errors not in _POLICIES:
            raise ValueError(f"errors must be one of {_POLICIES}, not {errors!r}")
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, not {block_size!r}")
        from fastpgn.io.sources import _codec_name

        _codec_name(encoding)   # an unknown encoding is the caller's error, now
        self._source_arg = source
        self.encoding = encoding
        self.errors = errors
        self.block_size = block_size
        self.jobs = jobs_for(jobs)     # worker threads (1: none, every block on the calling thread)
        self.rejected: list[Rejected] = []
        self.games_read = 0
        self.games_yielded = 0
        self.name: str | None = None   # the source's, once opened
        # Games holding bytes that are not UTF-8 (read as U+FFFD), and the first such byte's offset.
        self.games_not_utf8 = 0
        self.first_not_utf8: int | None = None
        self._buffers: list = []    # buffers of blocks already scanned, for later blocks
        self._source: Source | None = None   # the opened source (a Parquet one names a game's file and row)
        # A generator: nothing is opened before the first next(). The generators hold the reader weakly (a
        # proxy, their methods called through the class), so a reader dropped unclosed (a loop broken out of)
        # is freed at once, ending its threads and closing its input, not once the collector finds a cycle.
        import weakref

        self._records = type(self)._read(weakref.proxy(self))

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._records)
        except PGNSyntaxError as exc:   # a game built from a Parquet row: name the file and row too
            where = getattr(self._source, "describe_game", None)
            if where is None or where(exc.game) is None:
                raise self._named(exc) from None
            if f"({where(exc.game)})" in exc.reason:
                raise
            raise type(exc)(f"{exc.reason} ({where(exc.game)})", exc.offset, exc.game) from None
        except InputError as exc:       # damage the cutter found (the input ends inside a game's tags)
            raise self._named(exc) from exc.__cause__

    def _named(self, exc: PGNError) -> PGNError:
        """``exc`` with the name of the file it is in, when the source has one (not ``<bytes>``) and the
        message does not name it yet."""
        name = self.name
        if not name or name.startswith("<") or name in exc.reason:
            return exc
        return exc.__class__(f"{name}: {exc.reason}", exc.offset, exc.game)

    def close(self) -> None:
        """Stop reading: close the file the reader opened (never a file object it was given).

        >>> games = read_games(b"1. e4 *\\n\\n1. d4 *\\n")
        >>> next(games).moves, games.close(), next(games, "no more")
        (['e4'], None, 'no more')
        """
        self._records.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _read(self):
        raise NotImplementedError

    # The filter (fastpgn.filters) a reader's kernel applies, as where_plan makes it; its refusals are counted
    # in games_filtered.
    _plan: object = None
    games_filtered = 0

    def _scanned(self, scan, made=None, then=None, **options) -> Generator:
        """Each block's output through ``scan`` (a kernel entry point; ``options``: its keywords beyond what
        every reader passes), counted, its rejected games kept (and raised, if so asked) after its output
        is handed out: every reader's one loop over its source's blocks.

        ``made`` (optional, holding no reference to the reader) turns a
        block's output into what is handed out, on the thread that scanned it. With ``jobs`` above 1 the blocks are
        scanned on worker threads (``fastpgn._parallel.ordered``), their
        games numbered from 0 there (a reader whose output holds game
        numbers renumbers it in ``then``), handed out in input order.
        ``then`` (optional) finishes a block's output on the reader's own
        thread, in input order, the block's bytes still held:
        ``then(output, data, games read before the block)`` (a GameReader's
        second step, its records made from the spans its workers read).
        """
        stop = self.errors == "raise"
        plan = self._plan

        def work(block: Block, first_game: int = 0) -> tuple:
            data = block.data
            utf8 = not_utf8(data, block.offset)
            output, read, rejects, filtered = scan(
                data, 0, len(data), base_offset=block.offset, first_game=first_game,
                at_stream_start=block.at_stream_start, stop_on_error=stop, where=plan, **options)
            kept = rejected_games(rejects, data, block.offset)   # (their text copied: the buffer is reused)
            if then is None:    # (else its bytes are read again on the reader's thread)
                block.release()
            return output if made is None else made(output), read, kept, filtered, utf8

        threads = self.jobs > 1 and self._threads_scan
        if threads:
            from fastpgn._parallel import ordered
            from fastpgn.io.ahead import chained

            # The source opened here, with its first block: a reader that reads plain PGN itself does so on
            # this thread as the workers want blocks (a read and a cut a block); any other input (to
            # decompress, transcode or make from Parquet rows) is read on a thread of its own.
            blocks = _RecordReader._blocks(self)
            first = next(blocks, None)
            ahead = not (self._reads_plain_itself and self._source is not None and self._source.read_as_is)
            workers = self.jobs if self._most_workers is None else min(self.jobs, self._most_workers)
            results = ordered(chained(first, blocks), work, workers, skip=_is_truncated, ahead=ahead)
        else:
            results = _RecordReader._inline(self, work)
        try:
            for block, result in results:
                if result is None:      # the cut-short start of a game, at the damage
                    utf8 = not_utf8(block.data, block.offset)
                    if utf8 is not None:
                        self._count_not_utf8(*utf8)
                    self._truncated(block)
                    self._damage(block)
                    continue
                output, read, kept, filtered, utf8 = result
                del result
                if utf8 is not None:
                    self._count_not_utf8(*utf8)
                base = self.games_read
                if then is not None:
                    output = then(output, block.data, base if threads else 0)
                    block.release()
                if base and threads:
                    kept = _renumbered_rejects(kept, base)
                self.games_read += read
                self.games_filtered += filtered
                # (the output handed over, none of it held here: see GameReader)
                outputs = [output]
                del output
                yield outputs.pop()
                self._finish(kept)
                self._damage(block)
        finally:
            results.close()   # the source with it, now rather than when the generator is collected

    def _inline(self, work) -> Generator:
        """``(block, work(block) or None for a truncated one)`` on the calling thread, numbered as they go."""
        blocks = _RecordReader._blocks(self)
        try:
            for block in blocks:
                yield block, None if block.truncated else work(block, self.games_read)
        finally:
            blocks.close()

    # Whether worker threads scan this reader's blocks with jobs above 1: its kernel releases the GIL as it
    # scans. (A GameReader's records are Python objects, made with the GIL: its workers read spans without
    # it and the records are made from them on the reader's thread: GameReader._read.)
    _threads_scan = True

    # The most worker threads a reader uses whatever its jobs (None: jobs). Where the calling thread makes the
    # output (a GameReader's games), the workers only have to keep up with it, and more of them only hold
    # more blocks, read and waiting, in memory.
    _most_workers: int | None = None

    # Whether a plain PGN input (Source.read_as_is) is read on the reader's own thread at jobs above 1 rather
    # than on a thread of its own: where the reader's thread makes Python objects (a GameReader's games), a
    # reading thread only costs GIL hand-overs; where it hands out every line, reading there slows it
    # (measured at jobs=2: headers of 100 MB 0.068 against 0.092 s, whole games of 1 GB 2.20-2.52 against
    # 2.77-3.05 s, lines of 100 MB 0.125 against 0.115 s).
    _reads_plain_itself = False
    # The input's end is its last game's end (Source.ends_whole): PGN Crypt's game files, read by
    # fastpgn.crypt, end with a move and no result. Else such an end is a cut input's (damage).
    ends_whole = False
    # The reader makes nothing of the movetext: an input that can leave it out does (lichess's Parquet release).
    _without_movetext = False

    def _blocks(self) -> Generator[Block, None, None]:
        # (jobs threads decode a multi-frame zstd file's frames: fastpgn.io.frames)
        source = open_source(self._source_arg, threads=self.jobs, encoding=self.encoding,
                             headers_only=self._without_movetext)
        source.ends_whole = self.ends_whole
        self.name = source.name
        self._source = source
        try:
            if source.kind == "pgn" and source.size == 0:
                return
            # Binary data is not a game to reject: the input is not PGN, as the converter says. Decided
            # on the first HEAD_SIZE bytes whatever the block size.
            head = source.head()
            check_pgn(head, source.name)
            yield from source.blocks(self.block_size, pool=self._buffers, head=head)
        finally:
            source.close()

    _warn_not_utf8 = True    # (the commands say it in a line of their own)

    def _count_not_utf8(self, games: int, first: int) -> None:
        """Games with bytes that are not UTF-8: counted, and said once (a warning) when the first is met."""
        self.games_not_utf8 += games
        if self.first_not_utf8 is None:
            self.first_not_utf8 = first
            if not self._warn_not_utf8:
                return
            import warnings

            from fastpgn.errors import NotUTF8Warning

            warnings.warn(NotUTF8Warning(f"{self.name}: bytes that are not UTF-8 (first at PGN byte {first}) are "
                                         f"read as U+FFFD; name the input's encoding (encoding='cp1252', "
                                         f"'latin-1', ...) to read them as its characters"), stacklevel=3)

    def _truncated(self, block: Block) -> bool:
        """Handle a block that holds the cut-short start of a game; True if it did."""
        if not block.truncated:
            return False
        text = bytes(block.data)
        if text.strip():
            self.games_read += 1
            reason, error_offset = block.truncation()
            from fastpgn.errors import Rejected

            self.rejected.append(Rejected(block.offset, self.games_read, reason, error_offset, text))
        return True

    @staticmethod
    def _kept(rejects, block: Block) -> list[Rejected]:
        """The block's rejected games, their text copied (the block's buffer holds later blocks)."""
        return rejected_games(rejects, block.data, block.offset)

    def _finish(self, kept: list[Rejected]) -> None:
        """After the block's good games: its rejected ones join ``rejected`` (and raise, if so asked)."""
        where = getattr(self._source, "describe_game", None)
        if where is not None and kept:      # a game built from a Parquet row: its reason names the file and row
            from fastpgn.errors import Rejected

            kept = [Rejected(r.offset, r.number, f"{r.reason} ({where(r.number)})", r.error_offset, r.text)
                    if where(r.number) is not None else r for r in kept]
        self.rejected.extend(kept)
        if kept and self.errors == "raise":
            raise kept[-1].error()

    def _damage(self, block: Block) -> None:
        if block.damage is not None:
            raise block.damage


def _one_block(source, block_size: int) -> bool:
    """Whether ``source`` is known to hold one block at most: bytes, or a file (not a folder) that short."""
    if isinstance(source, (bytes, bytearray)):
        return len(source) <= block_size
    if isinstance(source, (str, os.PathLike)) and source != "-":
        try:
            stat = os.stat(source)
        except (OSError, ValueError):
            return False
        return S_ISREG(stat.st_mode) and stat.st_size <= block_size
    return False


def _is_truncated(block: Block) -> bool:
    return block.truncated


def _renumbered_rejects(kept: list[Rejected], base: int) -> list[Rejected]:
    """Rejected games numbered from 0 (a worker's block), numbered from ``base``."""
    if not kept:
        return kept
    from fastpgn.errors import Rejected

    return [Rejected(r.offset, r.number + base, r.reason, r.error_offset, r.text) for r in kept]


def _where(where) -> tuple:
    """``(Where or None, the kernel's plan or None)`` of a reader's ``where`` (fastpgn.filters)."""
    if where is None:
        return None, None
    from fastpgn import filters

    where = filters.as_where(where)
    return where, filters.plan(where)


class GameReader(_RecordFeed, _RecordReader):
    """Iterate ``Game`` records; see ``read_games``.

    ``games_filtered`` counts the games ``where`` dropped:
    ``games_read == games_yielded + len(rejected) + games_filtered``.
    """

    def __init__(self, source, errors, block_size, headers_only: bool = False, where=None,
                 encoding: str | None = None, jobs: int | None = None) -> None:
        self.headers_only = headers_only
        self._without_movetext = headers_only and not (where is not None and _filters_need_movetext(where))
        # Threads, but not for an input of one block (no thread would pay: their start-up would).
        self._threads_scan = not _one_block(source, block_size)
        self.where, self._plan = _where(where)
        self.games_filtered = 0
        _RecordReader.__init__(self, source, errors, block_size, encoding, jobs)

    _reads_plain_itself = True

    # This thread bounds the read: one worker scans whole games faster than it makes them (0.079 against
    # 0.113 s per 100 MB), two keep up with headers (0.048 s to scan, 0.036 to make), so four keep up with
    # margin and hold at most eight blocks and their spans (3.3 MB a 1 MiB block of whole games) in flight
    # on a machine of any size.
    _most_workers = 4

    # __next__ is the kernel's RecordFeed's: it hands out the games of the lists this returns,
    # with no Python frame per game.
    def _next_list(self) -> list[Game]:
        """The next block's games (see _read); StopIteration at the end."""
        return _RecordReader.__next__(self)

    def close(self) -> None:
        self._drop()
        _RecordReader.close(self)

    def _read(self) -> Iterator[list[Game]]:
        # the kernel makes the Game objects (record=Game), so none costs a Python __init__; each
        # block's list is handed over, not kept: RecordFeed then frees each game once its reader drops it
        kernel = _scan.kernel
        if self.jobs > 1 and self._threads_scan:
            # Two steps: the workers read each block's games as spans (without the GIL), the records are
            # made from them here, with the GIL, in input order: the same records as in one step. Making
            # a game's objects is the larger step (0.11 of 0.19 s per 100 MB), so this thread bounds a read
            # of whole games; the workers take the rest off it (docs/performance.md).
            def records(spans, data, base: int) -> list[Game]:
                return kernel.records_from_spans(data, spans, first_game=base, record=Game)

            return _RecordReader._scanned(self, kernel.spans_from_block, then=records, headers_only=self.headers_only)
        scan = kernel.headers_from_block if self.headers_only else kernel.games_from_block
        return _RecordReader._scanned(self, scan, record=Game)


class LineReader(_RecordFeed, _RecordReader):
    """Iterate 22-field lines (str, without the newline); see ``read_lines``.

    ``games_read == games_yielded + len(rejected) + games_filtered``.
    """

    def __init__(self, source, errors, block_size, openings_map, where=None, encoding: str | None = None,
                 jobs: int | None = None) -> None:
        self.where, self._plan = _where(where)
        self.games_filtered = 0
        self.openings = _scan.kernel.opening_table(openings_map)
        _RecordReader.__init__(self, source, errors, block_size, encoding, jobs)

    # __next__ is the kernel's RecordFeed's: it hands out the lines of the lists this returns (a block's),
    # with no Python frame per line.
    def _next_list(self) -> list[str]:
        """The next block's lines; StopIteration at the end."""
        return _RecordReader.__next__(self)

    def close(self) -> None:
        self._drop()
        _RecordReader.close(self)

    def _read(self) -> Iterator[list[str]]:
        # text: the kernel hands the lines over as str, decoded line by line
        return _RecordReader._scanned(self, _scan.kernel.lines_from_block, openings=self.openings, text=True)


def _filters_need_movetext(where) -> bool:
    """Whether a filter (a Where or its keywords) tests what only the movetext tells: plies, evals, clocks."""
    from fastpgn import filters

    w = filters.as_where(where)
    return w is not None and (w.with_evals or w.with_clocks or w.min_plies is not None or w.max_plies is not None)


def read_games(source, *, errors: str = "raise", block_size: int = 1 << 20, headers_only: bool = False,
               where=None, encoding: str | None = None, jobs: int | None = None) -> GameReader:
    """Iterate the games of ``source``: a path (str or ``os.PathLike``), ``-`` (stdin), bytes, a
    binary or text file object, or an iterable of lines (str or bytes; one without its line break
    gets one); compressed or not, told by the first bytes.

    Text is read as UTF-8 as it goes (byte offsets count its UTF-8 bytes).
    The reader is an iterator and a context manager that closes the file
    it opened (a path's), never a file object it was given. An error of the
    source (a damaged file, an iterable that raises) comes after every game
    before it, as an InputError naming the source and the byte offset.

    ``encoding`` names the encoding of the input's bytes (``"cp1252"``,
    ``"latin-1"``): they are read as that and handed out as str. By default
    they are UTF-8, and bytes that are not are read as U+FFFD, never
    silently: ``reader.games_not_utf8`` counts the games holding them,
    ``reader.first_not_utf8`` is the first one's byte offset, and a
    ``fastpgn.errors.NotUTF8Warning`` says so when the first is met
    (docs/encoding.md).

    >>> [g.headers["White"] for g in read_games('[White "J\\u00e9r\\u00f4me"]\\n\\n1. e4 *'.encode("cp1252"),
    ...                                          encoding="cp1252")]
    ['J\\xe9r\\xf4me']

    >>> [g.moves for g in read_games(b"1. e4 e5 2. Nf3 *")]
    [['e4', 'e5', 'Nf3']]
    >>> import io
    >>> games = read_games(io.StringIO('[White "Ann"]\\n\\n1. e4 e5 *\\n\\n[White "Bob"]\\n\\n1. d4 *\\n'))
    >>> next(games).headers["White"], [g.moves for g in games]
    ('Ann', [['d4']])
    >>> with read_games(['[White "Cy"]', '', '1. c4 *']) as games:
    ...     [(g.headers["White"], g.moves, g.offset) for g in games]
    [('Cy', ['c4'], 0)]

    ``headers_only=True`` (or ``read_headers``) reads each game's tags and
    skips its movetext: ``moves``, ``evals`` and ``clocks`` are empty lists
    and ``first_ply`` is None; the games, numbers and offsets are the full
    read's. Movetext is not checked then: a game the full read rejects for a
    bad move, clock or eval is yielded (docs/filters.md).

    ``where`` (a ``fastpgn.filters.Where`` or a dict of its keywords) keeps
    only the games it passes; the others are counted in
    ``reader.games_filtered``, so ``games_read == games_yielded +
    len(rejected) + games_filtered``.

    >>> pgn = b'[White "Ann"]\\n[WhiteElo "2100"]\\n\\n1. e4 *\\n\\n[White "Bob"]\\n[WhiteElo "1500"]\\n\\n1. d4 *\\n'
    >>> [(g.headers["White"], g.moves) for g in read_games(pgn, headers_only=True)]
    [('Ann', []), ('Bob', [])]
    >>> games = read_games(pgn, where={"min_elo": 2000, "elo_of": "white"})
    >>> [g.moves for g in games], games.games_read, games.games_filtered
    ([['e4']], 2, 1)

    ``jobs`` is the readers' number of worker threads (docs/api.md, "Every
    core"; checked: None or at least 1): they scan the blocks without the
    GIL, and the games are made from what they read on the calling thread,
    in input order (making a game's Python objects needs the GIL, so that
    thread bounds the read, and at most four workers are used).
    """
    return GameReader(source, errors, block_size, headers_only, where, encoding, jobs)


def read_headers(source, *, errors: str = "raise", block_size: int = 1 << 20, where=None,
                 encoding: str | None = None, jobs: int | None = None) -> GameReader:
    """``read_games(source, headers_only=True)``: each game's headers, offset and number, its movetext skipped.

    >>> [g.headers for g in read_headers(b'[Event "A"]\\n\\n1. e4 { [%clk 0:01:00] } *\\n\\n[Event "B"]\\n\\n*\\n')]
    [{'Event': 'A'}, {'Event': 'B'}]
    """
    return GameReader(source, errors, block_size, True, where, encoding, jobs)


def read_lines(source, *, errors: str = "raise", openings=None, block_size: int = BLOCK_SIZE,
               where=None, encoding: str | None = None, jobs: int | None = None) -> LineReader:
    """Iterate the 22-field lines (python-lichess-db-pgn-parser's format, without ``\\n``) of ``source``.

    ``openings`` is an ``fastpgn.openings.OpeningMap`` (default: the shipped
    map) or a path to a map in the original ``CCCNNN│CCC│Name`` format.

    ``source`` is anything ``read_games`` reads; the reader is an iterator
    and a context manager in the same way.

    >>> line = next(read_lines(b'[Result "1-0"]\\n\\n1. e4 1-0\\n'))
    >>> line.split("\\u2502")[3], line.split("\\u2502")[19]
    ('W', 'e4')
    >>> with read_lines(['[Result "0-1"]', '', '1. f3 e5 2. g4 Qh4# 0-1']) as lines:
    ...     [line.split("\\u2502")[19] for line in lines]
    ['f3 e5 g4 Qh4#']

    ``where`` filters as in ``read_games`` (``reader.games_filtered``);
    ``encoding`` and the count of games that are not UTF-8 are read_games'.

    ``jobs`` worker threads scan the blocks (None, the default: every core
    on the compiled backend, one on the pure one; 1: the calling thread
    alone), the input read on a thread of its own, the lines handed out in
    input order: the same lines, rejected games and errors for any
    ``jobs``. At most ``2 * jobs`` blocks of ``block_size`` bytes are in the
    workers' hands or waiting, and two more are read ahead.

    >>> pgn = b'[Result "1-0"]\\n\\n1. e4 1-0\\n\\n[Result "0-1"]\\n\\n1. f3 e5 2. g4 Qh4# 0-1\\n'
    >>> list(read_lines(pgn, jobs=2, block_size=1)) == list(read_lines(pgn, jobs=1))
    True
    """
    if openings is None or not isinstance(openings, dict):
        from fastpgn import openings as _openings

        openings = _openings.load(openings)
    return LineReader(source, errors, block_size, openings, where, encoding, jobs)


def __getattr__(name: str):
    if name == "Rejected":   # (one of this module's names: see fastpgn.errors)
        from fastpgn.errors import Rejected

        return Rejected
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Game", "GameReader", "InputError", "LineReader", "Rejected", "read_games", "read_headers", "read_lines"]
