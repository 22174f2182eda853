"""An input cut short at any byte: every whole game read, the cut one damage, never a game silently shortened.

``zstdcat dump | head -c N``, a download interrupted, a dump cut at a
frame boundary: whatever the source (bytes, a plain file, a pipe, a
``.zst``, ``.gz`` or ``.bz2`` of the cut text), the games read are the
whole games of the prefix, and a game the cut went through is reported:
the input is damaged (``InputDamageError``, exit 1) and the cut game is
among the rejected ones, with its offset. The prefixes are every byte of
the first three games of a real lichess dump (tags, clocks and evals in
comments, results), swept through the cutter and the kernel in-process;
the readers and the converter see a sample of them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import subprocess
import sys

import pytest
import zstandard

from fastpgn import read_games, read_headers, read_lines, scan
from fastpgn.cli import main
from fastpgn.errors import InputDamageError
from fastpgn.io.sources import blocks, cut_buffer
from helpers import ENV, game_texts, shared

DUMP = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")
RESULTS = (b"1-0", b"0-1", b"1/2-1/2", b"*")


@pytest.fixture(scope="module")
def three():
    """The first three games' text, each game's start and the end of its result token (where it is whole)."""
    texts = [t.encode() for t in game_texts(shared(*DUMP))[:3]]
    data = b"".join(texts)
    starts, whole_at, at = [], [], 0
    for text in texts:
        body = text.rstrip(b"\n")
        assert body.endswith(RESULTS)
        starts.append(at)
        whole_at.append(at + len(body))
        at += len(text)
    return data, starts, whole_at


def _expected(data, starts, whole_at, n):
    """What a prefix of ``n`` bytes holds: the count of whole games, and where the cut game starts (-1:
    none), or None for the one prefix the rule reads as a game: the first game's tags alone, each tag
    line whole (an input of tags alone is an export of games not begun, not damage)."""
    whole = sum(1 for w in whole_at if n >= w)
    if whole == len(starts) or not data[starts[whole]:n].strip():
        return whole, -1
    if whole == 0 and n <= data.index(b"\n\n") + 2 and data[:n].rstrip().endswith(b"]"):
        return None
    return whole, starts[whole]


def _prefixes(data, starts, whole_at, step=89):
    """A sample of cut points: every ``step``-th byte and the bytes around each game's start, the end of its
    tags and its result token, where the rule changes."""
    points = set(range(0, len(data) + 1, step))
    for s, w in zip(starts, whole_at):
        tags_end = data.index(b"\n\n", s) + 1
        for at in (s, tags_end, w):
            points.update(range(max(at - 3, 0), min(at + 4, len(data) + 1)))
    return sorted(points)


def test_the_cutter_and_kernel_at_every_byte(three):
    data, starts, whole_at = three
    kernel = scan.kernel
    reference = kernel.games_from_block(data, 0, len(data))[0]
    assert len(reference) == 3
    for n in range(len(data) + 1):       # (a game's number in its block left out: blocks number from 1)
        prefix = data[:n]
        expected = _expected(data, starts, whole_at, n)
        for how, cut in (("in memory", lambda p: cut_buffer(p, 1 << 10)),
                         ("read", lambda p: blocks(iter([p[i:i + 61] for i in range(0, len(p), 61)]),
                                                   block_size=1 << 10))):
            found = list(cut(prefix))
            assert b"".join(bytes(b.data) for b in found) == prefix, (how, n)
            good = [b for b in found if b.damage is None]
            games = [g for b in good for g in kernel.games_from_block(
                bytes(b.data), 0, len(b.data), base_offset=b.offset, at_stream_start=b.offset == 0)[0]]
            if expected is None:
                assert len(games) == 1 and games[0][3] == [] and len(good) == len(found), (how, n)
                continue
            whole, cut_at = expected
            assert [g[:1] + g[2:7] for g in games] == [g[:1] + g[2:7] for g in reference[:whole]], (how, n)
            if cut_at < 0:
                assert len(good) == len(found), (how, n)
            else:
                assert len(found) - len(good) == 1 and found[-1].damage is not None, (how, n)
                assert found[-1].offset == cut_at and found[-1].truncated, (how, n)


class _Pipe(io.RawIOBase):
    """A stream read as stdin is: not seekable, no size known."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._data.readinto(b)


def _sources(prefix, tmp_path):
    path = tmp_path / "cut.pgn"
    path.write_bytes(prefix)
    yield "bytes", prefix
    yield "file", path
    yield "pipe", io.BufferedReader(_Pipe(prefix))
    for name, data in (("zst", zstandard.ZstdCompressor().compress(prefix)), ("gz", gzip.compress(prefix)),
                       ("bz2", bz2.compress(prefix))):
        packed = tmp_path / f"cut.pgn.{name}"
        packed.write_bytes(data)
        yield name, packed


def _read(reader):
    items, error = [], None
    try:
        for item in reader:
            items.append(item)
    except InputDamageError as exc:
        error = exc
    return items, error, reader.rejected


def test_the_readers_on_every_source(three, tmp_path):
    data, starts, whole_at = three
    full = [(g.offset, g.headers, g.moves, g.clocks, g.evals) for g in read_games(data)]
    lines = list(read_lines(data))
    for n in _prefixes(data, starts, whole_at):
        expected = _expected(data, starts, whole_at, n)
        for kind, source in _sources(data[:n], tmp_path):
            games, error, rejected = _read(read_games(source, errors="skip"))
            if expected is None:
                assert len(games) == 1 and games[0].moves == [] and error is None, (kind, n)
                continue
            whole, cut_at = expected
            assert [(g.offset, g.headers, g.moves, g.clocks, g.evals) for g in games] == full[:whole], (kind, n)
            if cut_at < 0:
                assert error is None and rejected == [], (kind, n)
            else:
                assert error is not None and [r.offset for r in rejected] == [cut_at], (kind, n)
                assert rejected[0].text == data[cut_at:n] and rejected[0].number == whole + 1, (kind, n)
            if kind == "bytes":
                got, error_lines, _ = _read(read_lines(source, errors="skip"))
                assert got == lines[:whole] and (error_lines is None) == (cut_at < 0), n
                heads, error_heads, _ = _read(read_headers(source, errors="skip"))
                assert [h.headers for h in heads] == [g[1] for g in full[:whole]], n
                assert (error_heads is None) == (cut_at < 0), n


def _cut_points(data, starts, whole_at):
    """Prefixes a user's ``head -c`` may make: inside the second game's tags, inside its movetext, inside a
    comment of it, right after its result (no line end: whole), and the whole text."""
    s, w = starts[1], whole_at[1]
    tags_end = data.index(b"\n\n", s)
    comment = data.index(b"{ [%clk", tags_end) + 5
    return [(s + 40, 1), (tags_end + 30, 1), (comment, 1), (w, 0), (len(data), 0)]


def test_the_converter_on_a_cut_file_and_a_cut_pipe(three, tmp_path):
    data, starts, whole_at = three
    for i, (n, code) in enumerate(_cut_points(data, starts, whole_at)):
        src = tmp_path / f"cut{i}.pgn"
        src.write_bytes(data[:n])
        whole, cut_at = _expected(data, starts, whole_at, n)
        runs = [("file", tmp_path / f"out{i}")]
        if i % 2 == 0:
            runs.append(("pipe", tmp_path / f"piped{i}"))
        for how, out in runs:
            if how == "file":
                rc = main([str(src), "100", "-o", str(out), "-q"])
                name = src.name
            else:
                rc = subprocess.run([sys.executable, "-m", "fastpgn", "-", "100", "-o", str(out), "-q"],
                                    input=data[:n], env=ENV, capture_output=True).returncode
                name = "stdin"
            assert rc == code, (how, n)
            written = b"".join(gzip.decompress(f.read_bytes()) for f in sorted(out.glob(f"{name}.part_*")))
            assert written.count(b"\n") == whole, (how, n)
            rejects = out / f"_{name}.rejected.pgn"
            if cut_at < 0:
                assert not rejects.exists() or rejects.read_bytes() == b"", (how, n)
            else:
                text = rejects.read_bytes()
                assert text.startswith(b"% fastpgn rejected game 2 at PGN byte ") and b"input ends inside" in text
                assert text.endswith(data[cut_at:n]) or data[cut_at:n] in text, (how, n)
