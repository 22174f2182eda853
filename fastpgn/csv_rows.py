"""``to_csv``'s reader (:class:`CsvReader`): the games of a source as CSV rows, a block at a time, written
by the live kernel's CSV sink, the converter's (the compiled one in C, without the GIL, on the reader's
worker threads; the pure one by ``csv_text.write_csv``, the rule both follow)."""

from __future__ import annotations

from fastpgn import scan as _scan
from fastpgn.arrow import ColumnReader
from fastpgn.reader import _RecordReader

__all__ = ["CsvReader"]


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
