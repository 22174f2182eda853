"""``to_csv`` (``fastpgn.to_csv``), the face over ``fastpgn.csv_text``'s rule, and its reader
(:class:`CsvReader`): the games of a source as CSV rows, a block at a time, written by the live kernel's
CSV sink, the converter's (the compiled one in C, without the GIL, on the reader's worker threads; the
pure one by ``csv_text.write_csv``, the rule both follow)."""

from __future__ import annotations

import os

from fastpgn import scan as _scan
from fastpgn.arrow import ColumnReader
from fastpgn.reader import _RecordReader

__all__ = ["CsvReader", "to_csv"]


class CsvReader(ColumnReader):
    """Iterate the CSV rows of each block with games (bytes, lines ending ``\\r\\n``, no row of names:
    ``header`` holds it); ``ColumnReader``'s options, error policy and counts (``games_yielded`` is
    counted once the iteration ends).

    >>> rows = CsvReader(b'[White "Ann"]\\n\\n1. e4 *\\n', columns=["white", "moves"])
    >>> rows.header + b"".join(rows), rows.games_yielded
    (b'white,moves\\r\\nAnn,e4\\r\\n', 1)
    """

    @property
    def header(self) -> bytes:
        """The row of the column names."""
        return (",".join(self.columns) + "\r\n").encode()

    def _read(self):
        extra = {"positions": True} if self.positions else {}
        if self.fens:
            extra["fens"] = True
        scanned = _RecordReader._scanned(self, _scan.kernel.csv_from_block, openings=self._table, uci=self.uci,
                                         columns=self.columns, **extra)
        try:
            for text in scanned:
                if text:
                    yield text
        finally:
            scanned.close()     # the source with it, now
            self.games_yielded = self.games_read - len(self.rejected) - self.games_filtered


def to_csv(source, path, **options):
    """Write the games of ``source`` to one CSV file at ``path`` (a path or a binary file object).

    Takes ``read_arrow``'s options but ``batch_size`` (``columns``, ``errors``,
    ``where``, ``uci``, ``openings``, ``block_size``), needs no pyarrow, and
    returns the finished reader for its counts. A path is written in full or
    not at all: on an error the unfinished file is removed.

    >>> import io
    >>> out = io.BytesIO()
    >>> to_csv(b'[White "Ann"]\\n[UTCDate "2024.01.02"]\\n[UTCTime "18:08:33"]\\n\\n1. e4 *\\n', out,
    ...        columns=["white", "utc", "moves"]).games_yielded
    1
    >>> out.getvalue()
    b'white,utc,moves\\r\\nAnn,2024-01-02 18:08:33Z,e4\\r\\n'
    """
    reader = CsvReader(source, **options)
    is_path = isinstance(path, (str, os.PathLike))
    if is_path:
        from fastpgn.io.output import open_named

        stream = open_named(path, "wb")     # a symbolic link at the path is refused, never written through
    else:
        stream = path
    try:
        with reader:
            header = reader.header
            for text in reader:
                stream.write(header + text if header else text)
                header = b""
            if header:
                stream.write(header)        # (no games: the row of names alone)
    except BaseException:
        if is_path:
            stream.close()
            try:
                os.remove(path)
            except OSError:
                pass
        raise
    if is_path:
        stream.close()
    return reader
