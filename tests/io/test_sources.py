"""Inputs read straight into block buffers: zstd damage found by following the frames, buffers reused safely."""

from __future__ import annotations

import os
import random

import pytest
import zstandard

from fastpgn import openings, scan as _scan
from fastpgn.errors import InputError
from fastpgn.io.blocks import lf_text
from fastpgn.io.sources import blocks, cut_blocks, cut_buffer, detect, open_source
from helpers import decompressed, reference_cuts, shared

SAMPLE = "lichess_db_standard_rated_2021-10.head999.pgn.zst"


def _read_all(blob: bytes, view_size: int = 1000) -> bytes:
    source = open_source(blob)
    out = bytearray()
    buf = memoryview(bytearray(view_size))
    while True:
        n = source.readinto(buf)
        if not n:
            return bytes(out)
        out += buf[:n]


def _frames() -> list[tuple[bytes, bytes]]:
    """(compressed, content) of zstd frames of every layout the walker must follow."""
    game = b'[Event "x"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    return [
        (zstandard.ZstdCompressor(write_checksum=True).compress(game * 3), game * 3),
        (skippable, b""),
        (zstandard.ZstdCompressor(write_content_size=False).compress(game), game),
        (zstandard.ZstdCompressor().compress(b"\n" * 3000), b"\n" * 3000),   # an RLE block
        (zstandard.ZstdCompressor().compress(b""), b""),
        (zstandard.ZstdCompressor(write_checksum=True, write_dict_id=True).compress(game * 2), game * 2),
    ]


def test_zstd_cut_anywhere_but_between_frames_is_reported():
    frames = _frames()
    blob = b"".join(f for f, _ in frames)
    content = b"".join(c for _, c in frames)
    boundaries = {}
    pos, text = 0, b""
    for frame, part in frames:
        pos += len(frame)
        text += part
        boundaries[pos] = text
    assert _read_all(blob) == content
    for cut in range(4, len(blob)):     # (fewer than 4 bytes are no zstd magic: plain text)
        damaged = blob[:cut]
        if cut in boundaries:
            assert _read_all(damaged) == boundaries[cut], cut
            continue
        with pytest.raises(InputError, match="truncated zst|corrupt zst") as info:
            _read_all(damaged)
        assert 0 <= info.value.offset <= len(content), cut


def test_zstd_cut_inside_a_multi_block_frame_hands_out_a_prefix():
    # Incompressible bytes make raw blocks, text compressed ones; the frame has several.
    rng = random.Random(7)
    data = os.urandom(200_000) + bytes(rng.choice(b"abcdefgh \n") for _ in range(300_000))
    blob = zstandard.ZstdCompressor(write_checksum=True).compress(data)
    for cut in sorted(rng.sample(range(1, len(blob)), 40)) + [len(blob) - 1, len(blob) - 4]:
        source = open_source(blob[:cut])
        got = bytearray()
        buf = memoryview(bytearray(1 << 16))
        with pytest.raises(InputError, match="truncated zst|corrupt zst") as info:
            while True:
                n = source.readinto(buf)
                if not n:
                    break
                got += buf[:n]
        assert data.startswith(got), cut
        assert info.value.offset == len(got), cut


def test_a_stream_may_start_with_a_skippable_frame():
    blob = _frames()[1][0] + zstandard.ZstdCompressor().compress(b"1. e4 *\n")
    assert detect(blob[:4]) == "zst"
    assert _read_all(blob) == b"1. e4 *\n"


@pytest.mark.parametrize("block_size", [3_000, 65_536, 1 << 20])
def test_reused_buffers_give_the_blocks_the_cut_rule_gives(block_size):
    """Each block's buffer is handed back (release) before the next is cut: later blocks are still right."""
    path = shared("data", "lichess-db", SAMPLE)
    data = decompressed(path)
    pool: list = []
    got = []
    for block in cut_blocks(open_source(path).readinto, block_size, pool=pool):
        got.append((block.offset, bytes(block.data)))
        block.release()
    assert got == reference_cuts(data, block_size)
    assert len(pool) <= 2                 # two buffers served every block


def _block_tuples(cut) -> list:
    return [(bytes(b.data), b.offset, b.at_stream_start, b.truncated, None if b.damage is None else str(b.damage))
            for b in cut]


def test_bytes_are_cut_in_place_into_the_blocks_the_stream_cutter_gives():
    """cut_buffer (bytes given to a reader: its blocks are views of them) against cut_blocks on the same stream."""
    from helpers import CASES

    sources = [decompressed(shared("data", "lichess-db", SAMPLE))]
    sources += [path.read_bytes() for path in sorted(CASES.glob("*.pgn"))]
    game = b'[Event "x"]\n[Site "y"]\n\n1. e4 e5 *\n\n'
    sources += [b"", b"\n\n", game, game * 3 + b'[Event "cut', game * 2 + b'[Event "tags"]\n[Site "z"]\n',
                b'[Event "tags only"]\n\n[Event "more"]\n', b"  \n[Event", b"\n[Event \"a\"]\n\n*\n" * 5]
    rng = random.Random(7)
    whole = sources[0]
    sources += [whole[:rng.randrange(len(whole))] for _ in range(20)]
    for data in sources:
        for block_size in (1, 7, 300, 3_000, 65_536, 4 << 20):
            in_place = list(cut_buffer(data, block_size))
            assert _block_tuples(in_place) == _block_tuples(blocks(iter([data]), block_size)), block_size
            if lf_text(data) is data:   # (a stream with dialects to rewrite is cut in a copy: see lf_text)
                assert all(b.data.obj is data for b in in_place)   # views of the bytes given, no copy
    assert list(open_source(whole).blocks(65_536))[1].data.obj is whole


def test_kernels_read_any_bytes_like_block():
    data = decompressed(shared("data", "lichess-db", SAMPLE))
    table = _scan.kernel.opening_table(openings.load())
    expected = _scan.kernel.lines_from_block(data, 0, len(data), openings=table)
    games = _scan.kernel.games_from_block(data, 0, len(data))
    for form in (bytearray(data), memoryview(data), memoryview(bytearray(data)).toreadonly()):
        assert _scan.kernel.lines_from_block(form, 0, len(data), openings=table) == expected
        assert _scan.kernel.games_from_block(form, 0, len(data)) == games


def test_a_path_names_the_file_pathlib_names(tmp_path, monkeypatch):
    """A name is opened as pathlib reads it (open_source passes it to open() straight where that is the same)."""
    game = b'[White "A"]\n\n1. e4 *\n'
    (tmp_path / "a.pgn").write_bytes(game)
    monkeypatch.chdir(tmp_path)
    for name in ("a.pgn", "a.pgn/", "a.pgn/.", "./a.pgn", ".//a.pgn", str(tmp_path / "a.pgn/"), tmp_path / "a.pgn"):
        assert b"".join(open_source(name).chunks()) == game, name
    for name in ("", ".", "./", str(tmp_path) + "/", tmp_path):
        with pytest.raises(InputError, match="is a folder, not a PGN file"):
            open_source(name)
    with pytest.raises(InputError, match="b.pgn/: no such file"):
        open_source("b.pgn/")
