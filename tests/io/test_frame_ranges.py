"""A zstd input read in frame ranges (a cluster's tasks): the ranges, one after the other, give the serial read's
games, offsets, rejects and damage, whatever the frame boundaries and wherever the ranges are cut."""

from __future__ import annotations

import itertools

import pytest

zstandard = pytest.importorskip("zstandard")

import fastpgn  # noqa: E402
from fastpgn.errors import InputDamageError, InputError  # noqa: E402
from fastpgn.io import frames  # noqa: E402
from fastpgn.io.frame_ranges import FrameRange, frame_ranges  # noqa: E402
from helpers import MULTIFRAME, SINGLE, TRICKY, pzstd_layout, shared  # noqa: E402


def read(source) -> tuple[list[tuple], list[tuple], list[str]]:
    """The games ``read_games`` gives of ``source`` (headers, moves, offset), those it rejects (offset, reason,
    error offset, text: not their number, which counts from a range's first game) and the damage it names."""
    reader = fastpgn.read_games(source, errors="skip")
    got, damage = [], []
    try:
        for game in reader:
            got.append((tuple(game.headers.items()), tuple(game.moves), game.offset))
    except InputDamageError as exc:
        damage.append(str(exc))
    return got, [(r.offset, r.reason, r.error_offset, bytes(r.text)) for r in reader.rejected], damage


def in_ranges(path, cuts) -> tuple[list, list, list]:
    """What the frame ranges that start at ``cuts`` give, one after the other."""
    games, rejects, damage = [], [], []
    for a, b in zip(cuts, [*cuts[1:], None]):
        g, r, d = read(FrameRange(path, a, b))
        games += g
        rejects += r
        damage += d
    return games, rejects, damage


def splits(n: int, parts: int):
    """Every way to cut frames ``0..n-1`` into ``parts`` ranges: the first frame of each."""
    for rest in itertools.combinations(range(1, n), parts - 1):
        yield [0, *rest]


def test_the_corpus_in_lichess_framing_in_any_frame_ranges_is_the_single_frame_files_table():
    pa = pytest.importorskip("pyarrow")
    path = shared(*MULTIFRAME)
    n = len(frames.frame_table(path))
    assert n == 11

    def table(source):
        reader = fastpgn.read_arrow(source)
        return pa.Table.from_batches(list(reader), schema=reader.schema)

    expected = table(str(shared(*SINGLE)))
    assert expected.num_rows == 2499
    tables = {}     # each range read once: a split's tables are some of them
    for a in range(n):
        for b in [*range(a + 1, n), None]:
            tables[a, b] = table(FrameRange(path, a, b))
    assert tables[0, None].equals(expected)
    for parts in (2, 3, 11):
        for cuts in splits(n, parts):
            got = pa.concat_tables([tables[a, b] for a, b in zip(cuts, [*cuts[1:], None])])
            assert got.equals(expected), cuts     # every column, byte_offset with them
    assert all(tables[k, k + 1].num_rows > 100 for k in range(n - 1))     # (each range has its own games)


def test_frame_ranges_of_the_corpus_are_ranges_of_about_the_size_asked_for():
    path = shared(*MULTIFRAME)
    ranges = frame_ranges(path, 1 << 20)        # (frames of 512 KiB: two a range)
    assert [(r.first, r.stop) for r in ranges] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, None)]
    assert frame_ranges(path, 1 << 40) == [FrameRange(path)]
    assert frame_ranges(shared(*SINGLE), 1) == [FrameRange(shared(*SINGLE))]     # one frame: one range


@pytest.mark.parametrize("step", [1, 2, 5, 17, 64, 150])
def test_pzstd_frames_cut_anywhere_read_in_any_ranges_give_the_serial_read(tmp_path, step):
    """Frames of a few bytes: range boundaries inside a tag, inside the comment that holds a blank line and
    ``[Event ``, between the two line ends of a blank line, inside a CRLF, after an escape line."""
    path = tmp_path / "t.pgn.zst"
    path.write_bytes(pzstd_layout(TRICKY, step))
    expected = read(TRICKY)
    assert len(expected[0]) == 4 and len(expected[1]) == 2 and not expected[2]
    n = len(frames.frame_table(path))
    assert in_ranges(path, list(range(n))) == expected         # each frame a range
    for cuts in itertools.islice(splits(n, 2), 0, None, max(1, n // 60)):     # (every one, up to 60 frames)
        assert in_ranges(path, cuts) == expected, cuts
    for cuts in itertools.islice(splits(n, 3), 0, None, max(1, n * n // 60)):
        assert in_ranges(path, cuts) == expected, cuts


def test_frames_that_state_their_sizes_read_in_ranges_give_the_serial_read(tmp_path):
    """zstd streams concatenated (each frame states its size): every two-range cut, at every byte."""
    expected = read(TRICKY)
    path = tmp_path / "t.pgn.zst"
    cctx = zstandard.ZstdCompressor()
    for cut in range(1, len(TRICKY), 3):
        pieces = [TRICKY[:cut // 2], TRICKY[cut // 2:cut], TRICKY[cut:]]
        path.write_bytes(b"".join(cctx.compress(p) for p in pieces))
        for cuts in ([0, 1], [0, 2], [0, 1, 2]):
            assert in_ranges(path, cuts) == expected, (cut, cuts)


@pytest.mark.parametrize("cut", [5, 40, 97, 160])
def test_a_cut_input_read_in_ranges_ends_with_the_serial_reads_damage(tmp_path, cut):
    """A download cut short inside a game (and inside a frame): the last ranges name the damage where the
    serial read names it, and keep the games it keeps."""
    text = TRICKY * 3
    data = pzstd_layout(text, 64)
    path = tmp_path / "cut.pgn.zst"
    path.write_bytes(data[:len(data) - cut])
    expected = read(str(path))
    assert expected[2], "the cut went unnoticed"
    n = len(frames.frame_table(path))
    for cuts in splits(n, 2):
        got = in_ranges(path, cuts)
        assert got[:2] == expected[:2] and got[2][-1:] == expected[2], cuts


def test_a_file_whose_frames_pzstd_could_not_have_cut_is_an_error_naming_it_and_the_frame(tmp_path):
    path = tmp_path / "odd.pgn.zst"
    text = TRICKY * 2
    step = [64, 64, 80, 64, 64, 64, 64, 64, 64]
    pieces, at = [], 0
    for size in step:
        pieces.append(pzstd_layout(text[at:at + size], size))
        at += size
    pieces.append(pzstd_layout(text[at:], len(text)))
    path.write_bytes(b"".join(pieces))
    assert frames.frame_table(path).pzstd
    with pytest.raises(InputError, match=r"odd\.pgn\.zst: zstd frame 2 holds 80 bytes of PGN where pzstd's"):
        in_ranges(path, [0, 3])
