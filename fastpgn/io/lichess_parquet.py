"""Read lichess's own Parquet release of its database as if it were the PGN dump.

Lichess publishes its standard rated games as Parquet too: one row per
game, the header tags as columns (``Event``, ``Site``, ``White``,
``WhiteElo``, ``UTCDate``, ...) and the movetext as one string column
``movetext``, in a hive tree ``data/year=YYYY/month=MM/train-*.parquet``
(docs/schema.md, "Lichess's Parquet release"). This module turns such input
(a ``.parquet`` file, a folder of them, or the hive tree) back into PGN text,
a record batch at a time, and hands that text to the same scanner kernel
that reads the dumps, so every reader, filter and output format works on it
unchanged.

The PGN text is written by the scanner kernel's ``release_text``, never
with a Python loop over games: each tag column becomes ``[Name "value"]\n``
(a null leaves the tag out), then a blank line, the movetext and a blank
line, row by row, into one buffer: that batch's block of PGN text. This
module only picks each column's kind; the compiled kernel writes strings,
integers, dates and times straight from the Arrow buffers in one pass
without the GIL (the pure one with ``pyarrow.compute``, the same bytes), and
any other type is made text here first. A thread of its own builds the
blocks two ahead of the reader, so Parquet decoding and the writing overlap
the kernel's scan. The readers (``ParquetSource.blocks``) cut each batch's
text into blocks in place, with no copy into the cutter's buffers, where the
converter reads the texts as one stream; both cut the same games. Memory
stays bounded: a few batches of ``ROWS`` rows are in memory at a time.

Byte offsets (the ``offset`` column, ``PGN byte N`` in errors) count bytes
of this built PGN text, from the first file's first row. Game numbers
count rows from the first file's first row (1 is the first row), and the
error of a bad game names its file and row there.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> table = pa.table({"White": ["Ann"], "Black": ["Bob"], "WhiteElo": pa.array([1500], pa.int16()),
...                   "BlackElo": pa.array([None], pa.int16()), "movetext": ["1. e4 e5 1/2-1/2"]})
>>> print(pgn_text(table.to_batches()[0]).decode(), end="")
[White "Ann"]
[Black "Bob"]
[WhiteElo "1500"]
[BlackElo "?"]
<BLANKLINE>
1. e4 e5 1/2-1/2
<BLANKLINE>
"""

from __future__ import annotations

import bisect
import io
import os
from collections.abc import Iterator
from pathlib import Path

from fastpgn.errors import SEVERAL_GAMES_MARK, InputError
from fastpgn.io.ahead import chained, read_ahead
from fastpgn.io.blocks import BLOCK_SIZE, Block, _ChunkFiller, find_cut, lf_text
from fastpgn.io.source import READ_SIZE, Source

__all__ = ["MOVETEXT", "ParquetSource", "TAG_ORDER", "open_parquet", "parquet_files",
           "pgn_text", "pgn_blocks", "tag_name"]

#: The column that holds the movetext; a Parquet input without it is not lichess's release.
MOVETEXT = "movetext"

#: The header columns in the order the lichess dumps write their tags; any other column of the
#: input (a later revision's addition) follows as a tag of its own name, in the file's order.
TAG_ORDER = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "UTCDate", "UTCTime", "WhiteElo",
             "BlackElo", "WhiteRatingDiff", "BlackRatingDiff", "WhiteTitle", "BlackTitle", "ECO", "Opening",
             "TimeControl", "Termination", "Variant", "FEN")

#: Rows read at a time: a batch's built PGN text is some 2 KiB a game, so a few MiB a batch.
ROWS = 4096

_DATE_TAGS = frozenset(("UTCDate", "Date"))
_SIGNED_TAGS = frozenset(("WhiteRatingDiff", "BlackRatingDiff"))
_UNRATED_TAGS = frozenset(("WhiteElo", "BlackElo"))


def _walk(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() == ".parquet" and path.is_file() and not any(
                part.startswith((".", "_")) for part in path.relative_to(folder).parts):
            yield path


def parquet_files(path: str | os.PathLike) -> list[Path]:
    """The ``.parquet`` files of ``path`` in reading order: the file itself, or a folder's files
    sorted by their path (``year=2013/month=01`` before ``year=2013/month=02``); names starting
    with ``.`` or ``_`` are skipped, as pyarrow and Spark skip them."""
    root = Path(path)
    if root.is_dir():
        return list(_walk(root))
    if not root.exists():
        raise InputError(f"{os.fspath(path)}: no such file")
    return [root]


# The types the kernels write straight from their Arrow buffers (the release's own, and the other
# integer widths); any other type becomes text with pyarrow.compute first (_as_text).
_INTS = ("int8", "int16", "int32", "int64")


def tag_name(name: str) -> str:
    """A column's name as the name of its tag: each byte the grammar ends a tag name at (space, tab,
    ``"``, ``]``) or that could end its line (a control byte) made ``_``, so that no column name
    writes a second tag, line or game.

    >>> tag_name('WhiteElo'), tag_name('x"]\\n\\n[White "Eve'), tag_name('')
    ('WhiteElo', 'x____[White__Eve', '_')
    """
    return "".join("_" if c in ' \t"]' or ord(c) < 32 or c == "\x7f" else c for c in name) or "_"


def _column(pa, name: str, column):
    """``(name, kind, signed, unrated, array)`` for the kernels' ``release_text``; None for a type no tag holds."""
    kind = column.type
    signed, unrated = name in _SIGNED_TAGS, name in _UNRATED_TAGS
    tag = tag_name(name)
    if pa.types.is_string(kind) and name not in _DATE_TAGS:
        return tag, "text", False, unrated, column
    if str(kind) in _INTS:
        return tag, "int", signed, unrated, column
    if pa.types.is_date32(kind):
        return tag, "date", False, unrated, column
    if pa.types.is_time(kind):
        return tag, "time", False, unrated, column
    text = _as_text(pa, name, column)
    return None if text is None else (tag, "text", False, unrated, text)


def _as_text(pa, name: str, column):
    """``column`` as tag value text (a string array, escapes not done), or None for a type no tag holds."""
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)   # dictionary_decode
        kind = column.type
    if pa.types.is_date(kind) or pa.types.is_timestamp(kind):
        return pc.strftime(column, format="%Y.%m.%d") if pa.types.is_timestamp(kind) else \
            pc.replace_substring(column.cast(pa.string()), "-", ".")
    if pa.types.is_time(kind):
        text = column.cast(pa.string())
        return pc.utf8_slice_codeunits(text, 0, 8) if kind.unit != "s" else text  # whole seconds, as the dumps
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        text = column.cast(pa.string())
        if name in _SIGNED_TAGS:     # the dumps write +5 and +0, and the 22-field line keeps the text
            plus = pc.binary_join_element_wise("+", text, "")
            # (an unsigned value is 0 and up: compared with 0, a uint64 past int64's range fails)
            text = plus if pa.types.is_unsigned_integer(kind) else pc.if_else(pc.greater_equal(column, 0), plus, text)
        return text
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = column.cast(pa.string())
        return pc.replace_substring(text, "-", ".") if name in _DATE_TAGS else text  # dates as ISO text
    return None


def pgn_text(batch) -> bytes:
    """The PGN text of a record batch in lichess's layout: its games, each followed by a blank line."""
    return bytes(_pgn_view(batch))


def _pgn_view(batch, movetext_read: bool = True):
    """The batch's PGN text as the live kernel writes it (a bytes-like object): one game a row.

    Without ``movetext_read`` (the column was not read) each game's movetext is its ``Result`` (``*``
    where it has none): a game of its tags alone, for readers of header columns only.
    """
    import pyarrow as pa

    names = batch.schema.names
    order = [n for n in TAG_ORDER if n in names] + [n for n in names if n not in TAG_ORDER and n != MOVETEXT]
    columns = [c for c in (_column(pa, name, batch.column(name)) for name in order) if c is not None]
    if not movetext_read:
        import pyarrow.compute as pc

        result = batch.column("Result") if "Result" in names else pa.nulls(batch.num_rows, pa.string())
        if not pa.types.is_string(result.type):
            result = result.cast(pa.string())
        movetext = pc.coalesce(result, pa.scalar("*"))
    elif MOVETEXT in names:
        movetext = batch.column(MOVETEXT)
        if pa.types.is_dictionary(movetext.type):
            movetext = movetext.cast(movetext.type.value_type)   # dictionary_decode
        if movetext.type != pa.string():
            movetext = movetext.cast(pa.string())     # (binary: checked to be UTF-8 here)
    else:
        movetext = pa.nulls(batch.num_rows, pa.string())
    columns = _tagged(pa, columns, batch.num_rows)
    text = _release_text(columns, movetext)
    suspects = _suspects(movetext)
    if suspects:
        more = [r for r in suspects if not _one_game(_release_text(
            [(n, k, sg, u, a.slice(r, 1)) for n, k, sg, u, a in columns], movetext.slice(r, 1)))]
        if more:
            text = _release_text(columns, _rejected_rows(pa, movetext, more))
    return text


def _release_text(columns, movetext):
    """The live kernel's ``release_text``, dates and times it does not write handed over as text."""
    import pyarrow as pa

    from fastpgn import scan as _scan

    text = _scan.kernel.release_text(columns, movetext)
    if text is None:        # a date or a time the kernels do not write (a year before 1, a time past the day)
        columns = [(name, "text", False, unrated, _as_text(pa, name, array)) if kind in ("date", "time")
                   else (name, kind, signed, unrated, array) for name, kind, signed, unrated, array in columns]
        text = _scan.kernel.release_text(columns, movetext)
    return text


# A row is one game. The kernels write each row as its tags, a blank line, its movetext and a blank
# line, and a tag line after a blank line always starts a game; what follows makes sure every row
# has a tag line, and that no movetext holds the start of another game.

def _tagged(pa, columns, rows: int):
    """``columns`` such that every row writes a tag: a row whose tags are all null (and none is a
    rating, written ``?`` when null) gets ``[Event "?"]``, or it would read as the moves of the game before."""
    if any(unrated for _, _, _, unrated, _ in columns):
        return columns
    import pyarrow.compute as pc

    untagged = pa.array([True] * rows)
    for _, _, _, _, array in columns:
        untagged = pc.and_(untagged, pc.is_null(array))
    if not pc.any(untagged).as_py():
        return columns
    event = pc.if_else(untagged, pa.scalar("?"), pa.scalar(None, pa.string()))
    for i, (name, kind, signed, unrated, array) in enumerate(columns):
        if name == "Event" and kind == "text":
            columns = list(columns)
            columns[i] = (name, kind, signed, unrated, pc.coalesce(array, event))
            return columns
    return [("Event", "text", False, False, event)] + list(columns)


def _suspects(movetext) -> list[int]:
    """The rows of ``movetext`` that may read as more than one game: the kernels' cheap test
    (``release_suspects``: a line break, a ``[`` first, a result with text after it). Lichess's own
    movetext is one line ending with its result; the rows that are not are scanned alone (_one_game)."""
    from fastpgn import scan as _scan

    return _scan.kernel.release_suspects(movetext)


def _one_game(text) -> bool:
    """Whether the live kernel reads ``text`` (one row's) as one game, reading the moves and skipping them."""
    from fastpgn import scan as _scan

    data = bytes(text)
    return all(kernel(data, 0, len(data), first_game=1).games_read == 1
               for kernel in (_scan.kernel.games_from_block, _scan.kernel.headers_from_block))


#: Put before the movetext of a row that would read as more than one game: the grammar rejects
#: the row at its first byte (a stray ``}`` rejects a game whether its moves are read or skipped),
#: and the rest of the row, line breaks made spaces, stays in that one rejected game, whose reason
#: errors.row_reason names.
REJECTED_ROW = SEVERAL_GAMES_MARK


def _rejected_rows(pa, movetext, rows: list[int]):
    """``movetext`` with the rows ``rows`` made one rejected game each (REJECTED_ROW)."""
    import pyarrow.compute as pc

    mask = pa.array([False] * len(movetext)).to_pylist()
    for r in rows:
        mask[r] = True
    flat = pc.replace_substring_regex(pc.fill_null(movetext, ""), r"[\r\n]", " ")
    marked = pc.binary_join_element_wise(pa.scalar(REJECTED_ROW), flat, pa.scalar(""))
    return pc.if_else(pa.array(mask), marked, movetext)


class _Located:
    """Where each file's rows start in the game count: ``(first game number, path)`` per file."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.paths: list[str] = []

    def add(self, first_game: int, path: str) -> None:
        self.paths.append(path)          # first: the reading thread may look while the other adds
        self.starts.append(first_game)

    def describe(self, game: int | None) -> str | None:
        """``"file F, row R"`` (R counts from 0, as Parquet readers do) for game number ``game``."""
        if game is None or not self.starts or game < 1:
            return None
        i = bisect.bisect_right(self.starts, game) - 1
        if i < 0:
            return None
        return f"file {self.paths[i]}, row {game - self.starts[i]}"


def pgn_blocks(path: str | os.PathLike, rows: int = ROWS, located: _Located | None = None,
               movetext: bool = True) -> Iterator[memoryview]:
    """The built PGN text of every file of ``path``, one record batch at a time (without ``movetext``, the
    column is not read: each game's movetext is its result; see _pgn_view).

    InputError for a file that is not Parquet or lacks the ``movetext`` column.
    """
    from fastpgn.schema import require_pyarrow

    require_pyarrow("reading lichess's Parquet release")
    import pyarrow.parquet as pq

    files = parquet_files(path)
    if not files:
        raise InputError(f"{os.fspath(path)}: a folder without .parquet files")
    for file in files:    # every file's footer before the first row: a wrong file is an InputError now
        _open(pq, file).close()
    # Parquet decoding and the joins (pyarrow's C++, without the GIL) overlap the kernel's scan of the block
    # before: the blocks are made on a thread of their own, two ahead.
    return read_ahead(_batches(pq, files, rows, located, movetext), 2, "fastpgn-parquet")


def _arrow_errors():
    """The exceptions pyarrow raises for a file it cannot read or a value it cannot convert."""
    import pyarrow as pa

    return pa.ArrowException, OSError, ValueError, TypeError, EOFError


def _said(exc: BaseException) -> str:
    """pyarrow's message, one line and short (its messages can run to several lines of context)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _is_text(pa, kind) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind) or pa.types.is_null(kind))


def _open(pq, file):
    """``file`` opened, its footer read and its columns checked; InputError for what is not lichess's release."""
    import pyarrow as pa

    try:
        reader = pq.ParquetFile(file)
        schema = reader.schema_arrow
    except _arrow_errors() as exc:
        raise InputError(f"{file}: cannot read as Parquet ({_said(exc)})") from None
    if MOVETEXT not in schema.names:
        reader.close()
        raise InputError(f"{file}: a Parquet file without the {MOVETEXT!r} column of lichess's "
                         f"Parquet release (its columns: {', '.join(schema.names)})")
    wrong = [(f.name, f.type) for f in schema if (f.name == MOVETEXT and not _is_text(pa, f.type)) or (
        f.name in _SIGNED_TAGS | _UNRATED_TAGS and not (_is_text(pa, f.type) or pa.types.is_integer(f.type)
                                                       or pa.types.is_floating(f.type)))]
    if wrong:
        reader.close()
        name, kind = wrong[0]
        raise InputError(f"{file}: its {name!r} column holds {kind}, not the "
                         f"{'text' if name == MOVETEXT else 'numbers'} of lichess's Parquet release")
    return reader


def _batches(pq, files, rows, located, movetext: bool = True) -> Iterator[memoryview]:
    """Each batch's PGN text; a batch pyarrow cannot read or convert is an InputError naming the file and
    row, raised once the text of every row before it was handed out."""
    errors = _arrow_errors()
    game = 1
    built = 0           # bytes of PGN text handed out: the offset of the damage
    for file in files:
        reader = _open(pq, file)
        if located is not None:
            located.add(game, str(file))
        row = 0
        try:
            # Header columns only: the movetext column, most of a file's bytes, is never decoded.
            wanted = None if movetext else [n for n in reader.schema_arrow.names if n != MOVETEXT]
            batches = reader.iter_batches(batch_size=rows, columns=wanted)
            while True:
                try:
                    batch = next(batches, None)
                except errors as exc:
                    raise InputError(f"{file}: damaged Parquet data at row {row} or after ({_said(exc)})",
                                     built) from None
                if batch is None:
                    break
                if batch.num_rows:
                    try:
                        text = _pgn_view(batch, movetext)
                    except errors as exc:
                        good, exc = _good_rows(batch, exc, movetext)
                        if good:
                            text = _pgn_view(batch.slice(0, good), movetext)
                            built += len(text)
                            yield text
                        raise InputError(f"{file}: cannot read row {row + good} ({_said(exc)})", built) from None
                    built += len(text)
                    yield text
                row += batch.num_rows
                game += batch.num_rows
        finally:
            reader.close()


def _good_rows(batch, error: BaseException, movetext: bool = True) -> tuple[int, BaseException]:
    """How many rows at the start of ``batch`` convert, and the error of the first that does not
    (halving: a value pyarrow cannot convert fails every slice that holds it)."""
    errors = _arrow_errors()
    good, bad = 0, batch.num_rows        # _pgn_view(batch.slice(0, good)) converts; (0, bad) does not
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            _pgn_view(batch.slice(0, middle), movetext)
            good = middle
        except errors:
            bad = middle
    try:
        _pgn_view(batch.slice(good, 1), movetext)
    except errors as exc:
        error = exc
    return good, error


def _text_blocks(texts: Iterator, block_size: int) -> Iterator[Block]:
    """``cut_blocks`` over the stream of ``texts`` (whole games each; their dialects settled one text at a
    time, as they hold whole lines): the same blocks, game for game, views of each text.

    Cuts fall at the first game boundary at or after each multiple of
    ``block_size`` of a text, and at its end. A row is one game, whole
    whatever its movetext (``cut_blocks(whole_games=True)``): no last game
    is taken for one the input cut short. An error of ``texts`` is raised
    after the blocks of every text before it.
    """
    try:
        yield from _cut_texts(texts, block_size)
    finally:
        close = getattr(texts, "close", None)
        if close is not None:
            close()     # (the thread that builds the texts with it)


def _cut_texts(texts: Iterator, block_size: int) -> Iterator[Block]:
    base = 0
    for text in texts:      # (damage: raised by the next text, once the blocks of the one before are out)
        data = lf_text(bytes(text))
        view = memoryview(data)
        n = len(data)
        at = 0
        while True:
            target = (at // block_size + 1) * block_size
            q = find_cut(data, max(target, at + 1), n) if target < n else -1
            if q < 0:
                break
            yield Block(view[at:q], base + at, base + at == 0)
            at = q
        if n > at:
            yield Block(view[at:n], base + at, base + at == 0)
        base += n


class _Stream(io.RawIOBase):
    def __init__(self, chunks: Iterator) -> None:
        self._chunks = chunks
        self._filler = _ChunkFiller(chunks)

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        return self._filler.readinto(view)

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        super().close()


class ParquetSource(Source):
    """A ``Source`` whose decompressed bytes are the PGN text built from lichess's Parquet release.

    The first batch is built here: a release whose first row cannot be read is an InputError now
    (nothing read: the input is unusable); damage after it is an InputError at its offset once
    every game before it was read.
    """

    def __init__(self, path: str | os.PathLike, threads: int = 1, rows: int = ROWS, movetext: bool = True) -> None:
        self.located = _Located()
        blocks = pgn_blocks(path, rows, self.located, movetext)
        first = next(blocks, None)      # (a generator that raised has closed itself)
        chunks = chained(first, blocks)
        self._stream = _Stream(chunks)
        super().__init__(self._stream, os.fspath(path), None, None, True, threads)

    # A row is one game: the text never ends inside a game (cut_blocks's whole_games).
    whole_games = True

    def _peek(self, n: int) -> bytes:
        return b""          # PGN text, never compressed: nothing to look at

    @property
    def read_as_is(self) -> bool:
        return False        # (its PGN text is written from the rows as it is read)

    def readinto(self, view) -> int:
        n = self._stream.readinto(view)
        self.offset += n
        return n

    def chunks(self) -> Iterator[bytes]:
        while True:
            piece = bytearray(READ_SIZE)
            n = self.readinto(memoryview(piece))
            if not n:
                return
            del piece[n:]
            yield bytes(piece)

    def blocks(self, block_size: int = BLOCK_SIZE, pool: list | None = None, head: bytes = b"") -> Iterator[Block]:
        """The built text in game-aligned blocks, cut where ``cut_blocks`` would cut the stream of it, but
        straight from each batch's text (views of it: no copy into the cutter's buffers). ``head`` is what
        ``head()`` read of the stream already."""
        filler = self._stream._filler
        first = head + bytes(filler._piece) if head else None   # (the texts head() took, whole)
        filler._piece = memoryview(b"")
        return _text_blocks(chained(first, self._stream._chunks) if first else self._stream._chunks, block_size)

    def describe_game(self, game: int | None) -> str | None:
        """The Parquet file and row game number ``game`` was built from (``file F, row R``)."""
        return self.located.describe(game)


def open_parquet(path: str | os.PathLike, threads: int = 1, movetext: bool = True) -> ParquetSource:
    """Open lichess's Parquet release at ``path`` (a file, a folder, a hive tree) as a PGN ``Source``;
    without ``movetext``, its movetext column is not read (each game's movetext is its result)."""
    return ParquetSource(path, threads, movetext=movetext)
