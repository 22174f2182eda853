"""Every reader runs one loop over its source's blocks (``reader._RecordReader._scanned``).

read_games, read_headers, read_lines and the column readers (read_arrow,
CSV) call the kernel through it and keep its counts alike.
"""

from __future__ import annotations

import pytest

from fastpgn.errors import PGNSyntaxError
from fastpgn.reader import _RecordReader, read_games, read_headers, read_lines


def _pgn() -> bytes:
    return (b'[White "Ann"]\n[WhiteElo "2100"]\n\n1. e4 *\n\n[White "Bob"]\n[WhiteElo "1500"]\n\n1. d4 }\n\n'
            + b'[White "Cy"]\n[WhiteElo "1400"]\n\n1. c4 *\n')


def test_every_reader_runs_the_one_block_loop(monkeypatch):
    """read_games, read_headers, read_lines and the column readers scan their blocks through
    _RecordReader._scanned, and agree on the counts it keeps."""
    pytest.importorskip("pyarrow")
    from fastpgn.arrow import ColumnReader, read_arrow

    seen = []
    loop = _RecordReader._scanned

    def scanned(self, scan, **options):
        seen.append(scan.__name__)
        return loop(self, scan, **options)

    monkeypatch.setattr(_RecordReader, "_scanned", scanned)
    data = _pgn()
    where = {"min_elo": 1450, "elo_of": "white"}
    options = {"errors": "skip", "where": where, "block_size": 64}
    readers = [
        ("games_from_block", lambda: read_games(data, **options)),
        ("headers_from_block", lambda: read_headers(data, **options)),
        ("lines_from_block", lambda: read_lines(data, **options)),
        ("columns_from_block", lambda: ColumnReader(data, **options)),
        ("columns_from_block", lambda: ColumnReader(data, lists=True, **options)),
        ("columns_from_block", lambda: read_arrow(data, **options)),
    ]
    counts = set()
    for name, make in readers:
        with make() as reader:
            items = list(reader)
        assert seen == [name], name
        seen.clear()
        assert items
        counts.add((reader.games_read, reader.games_yielded, reader.games_filtered,
                    tuple((r.number, r.reason) for r in reader.rejected)))
    assert len(counts) == 1
    read, yielded, filtered, rejected = counts.pop()
    assert read == yielded + len(rejected) + filtered and filtered >= 1 and rejected
    # the raise policy: the same error from every reader, after the games before it
    for reader in (read_games(data), read_lines(data), ColumnReader(data, lists=True)):
        with pytest.raises(PGNSyntaxError, match="unexpected '}'"):
            list(reader)
