"""Multi-frame zstd inputs (lichess's pzstd dumps) decoded on several threads: the stream, the games, the
offsets and the errors are the single-thread decoder's, whatever the frame boundaries."""

from __future__ import annotations

import io

import pytest

zstandard = pytest.importorskip("zstandard")

import fastpgn  # noqa: E402
from fastpgn.convert.converter import Converter, Options  # noqa: E402
from fastpgn.errors import InputDamageError  # noqa: E402
from fastpgn.io import frames  # noqa: E402
from fastpgn.io.sources import open_source  # noqa: E402
from helpers import MULTIFRAME, SINGLE, TRICKY, decompressed, pzstd_layout, shared  # noqa: E402


def stream(path, threads: int) -> tuple[bytes, str | None, int | None]:
    """What a source decodes from ``path`` on ``threads`` threads: its bytes, and the damage that ends it."""
    source = open_source(str(path), threads=threads)
    out = []
    try:
        for piece in source.chunks():
            out.append(piece)
    except InputDamageError as exc:
        return b"".join(out), str(exc), exc.offset
    finally:
        source.close()
    return b"".join(out), None, None


def games(path, jobs: int) -> tuple[list[tuple], str | None]:
    """The games ``read_games`` gives (headers, moves, offset) and those it rejects (offset, reason, text),
    and the damage that ends them."""
    got: list[tuple] = []
    reader = fastpgn.read_games(str(path), jobs=jobs, errors="skip")
    damage = None
    try:
        for game in reader:
            got.append((tuple(game.headers.items()), tuple(game.moves), game.offset))
    except InputDamageError as exc:
        damage = str(exc)
    got += [(r.offset, r.reason, r.error_offset, bytes(r.text)) for r in reader.rejected]
    return got, damage


def test_the_corpus_in_lichess_framing_has_its_frames_and_decodes_on_threads_as_on_one():
    path = shared(*MULTIFRAME)
    table = frames.frame_table(path)
    assert table.pzstd and table.complete and len(table) > 2, table
    assert table.frames[0][0] == frames.PZSTD_HEADER
    whole = decompressed(shared(*SINGLE))
    assert stream(path, 2) == stream(path, 1) == (whole, None, None)
    # The frames' table from their blocks alone (no pzstd headers: zstd streams concatenated) is the same.
    data = path.read_bytes()
    bare = b"".join(data[a:b] for a, b in table.frames)
    import os
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".zst", delete=False) as f:
        f.write(bare)
    try:
        walked = frames.frame_table(f.name)
        assert not walked.pzstd and walked.complete
        assert [b - a for a, b in walked.frames] == [b - a for a, b in table.frames]
        assert stream(f.name, 2)[0] == whole
    finally:
        os.unlink(f.name)


def test_the_corpus_in_lichess_framing_reads_as_the_single_frame_file_on_threads():
    expected = games(shared(*SINGLE), 1)
    assert games(shared(*MULTIFRAME), 2) == expected
    assert expected[1] is None and len(expected[0]) == 2499
    columns = ["game_id", "white_elo", "moves", "byte_offset"]
    def table(path, jobs):
        reader = fastpgn.read_arrow(str(path), columns=columns, jobs=jobs)
        return pyarrow.Table.from_batches(list(reader), schema=reader.schema)

    pyarrow = pytest.importorskip("pyarrow")
    assert table(shared(*MULTIFRAME), 2).equals(table(shared(*SINGLE), 1))


@pytest.mark.parametrize("step", [1, 5, 17, 64, 150])
def test_frames_cut_anywhere_give_the_games_the_serial_reader_gives(tmp_path, step):
    """Frames of a few bytes: boundaries inside tags, inside the comment holding a blank line and
    ``[Event ``, between the two line ends of a blank line, inside a CRLF."""
    path = tmp_path / "cut.pgn.zst"
    path.write_bytes(pzstd_layout(TRICKY, step))
    plain = tmp_path / "cut.pgn"
    plain.write_bytes(TRICKY)
    expected = games(plain, 1)
    assert len(expected[0]) == 6 and expected[1] is None     # (four games, two rejected: the cut comment)
    assert games(path, 2) == games(path, 1) == expected
    assert stream(path, 2) == (TRICKY, None, None)


def test_every_two_frame_cut_of_the_tricky_games_reads_as_the_serial_reader(tmp_path):
    plain = tmp_path / "t.pgn"
    plain.write_bytes(TRICKY)
    expected = games(plain, 1)
    path = tmp_path / "t.pgn.zst"
    cctx = zstandard.ZstdCompressor(write_content_size=False)
    for cut in range(1, len(TRICKY)):
        path.write_bytes(cctx.compress(TRICKY[:cut]) + cctx.compress(TRICKY[cut:]))
        assert games(path, 2) == expected, cut


def _frame_spans(data: bytes) -> list[tuple[int, int]]:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".zst") as f:
        f.write(data)
        f.flush()
        return frames.frame_table(f.name).frames


@pytest.mark.parametrize("damage", ["checksum", "corrupt block", "zeroed run", "truncated", "junk after",
                                    "cut header"])
def test_damage_in_one_frame_keeps_every_block_before_it_and_is_named_as_the_single_thread_decoder_names_it(
        tmp_path, damage):
    """One thread and several decode a damaged frame block by block: every whole block before the damage is
    kept, the same bytes, the same games and the same error at the same offset, whatever the threads."""
    text = decompressed(shared(*SINGLE))[:600_000]
    data = bytearray(pzstd_layout(text, 100_000))
    spans = _frame_spans(bytes(data))
    start, end = spans[3]
    if damage == "checksum":
        data[end - 1] ^= 0xFF
    elif damage == "corrupt block":
        data[(start + end) // 2] ^= 0x55
    elif damage == "zeroed run":
        data[(start + end) // 2:(start + end) // 2 + 64] = bytes(64)
    elif damage == "truncated":
        del data[(start + end) // 2:]
    elif damage == "junk after":
        data += b"this is not zstd"
    else:
        del data[start + 3:]
    path = tmp_path / "damaged.pgn.zst"
    path.write_bytes(bytes(data))
    serial = stream(path, 1)
    assert serial[1] is not None, "the damage went unnoticed"
    assert stream(path, 2) == stream(path, 3) == serial
    assert serial[2] == len(serial[0]) and serial[0] == text[:serial[2]]
    before_frame = 300_000 if damage != "junk after" else 600_000
    assert len(serial[0]) >= before_frame      # (every frame before the damaged one, at least)
    read, reason = games(path, 1)
    assert reason == serial[1] and games(path, 2) == games(path, 3) == (read, reason)
    assert [g for g in read if len(g) == 3], "no whole game before the damage"


def test_a_zeroed_run_in_a_middle_frame_of_the_lichess_framed_corpus_loses_no_game_before_it(tmp_path):
    """A dump with 64 zero bytes in its seventh frame: the games before the damage all come out, on one
    thread, on several, from a pipe, and the damage is named inside that frame."""
    text = decompressed(shared(*SINGLE))
    data = bytearray(pzstd_layout(text, 512 << 10))
    start, end = _frame_spans(bytes(data))[6]
    data[(start + end) // 2:(start + end) // 2 + 64] = bytes(64)
    path = tmp_path / "damaged.pgn.zst"
    path.write_bytes(bytes(data))
    expected = games(path, 2)
    got = fastpgn.read_games(io.BytesIO(bytes(data)), errors="skip")
    piped = []
    with pytest.raises(InputDamageError) as info:
        for game in got:
            piped.append((tuple(game.headers.items()), tuple(game.moves), game.offset))
    piped += [(r.offset, r.reason.replace("<stream>", str(path)), r.error_offset, bytes(r.text))
              for r in got.rejected]
    assert games(path, 1) == expected
    assert (piped, str(info.value).replace("<stream>", str(path))) == expected
    assert 6 * (512 << 10) <= info.value.offset < 7 * (512 << 10)     # (inside the seventh frame)
    whole = text[:info.value.offset]
    assert len([g for g in expected[0] if len(g) == 3]) == whole.count(b"\n[Event ") + whole.startswith(b"[Event ") - 1
    pyarrow = pytest.importorskip("pyarrow")
    rows = []
    for jobs in (1, 2):
        reader = fastpgn.read_arrow(str(path), columns=["game_id", "byte_offset"], jobs=jobs, errors="skip")
        batches = []
        with pytest.raises(InputDamageError, match="corrupt zst data"):
            for batch in reader:
                batches.append(batch)
        rows.append(pyarrow.Table.from_batches(batches, schema=reader.schema))
    assert rows[0].equals(rows[1]) and rows[0].num_rows == len([g for g in expected[0] if len(g) == 3])


def _convert(path, out, jobs: int):
    return Converter(Options(input=str(path), output_dir=str(out), chunk_size=1000, jobs=jobs)).run()


def test_the_converter_says_when_a_zstd_input_is_one_frame_and_how_to_recompress_it(tmp_path):
    single = _convert(shared(*SINGLE), tmp_path / "a", 2)
    assert single.split_note is not None and "pzstd" in single.split_note and SINGLE[-1] in single.split_note
    assert _convert(shared(*MULTIFRAME), tmp_path / "b", 2).split_note is None
    assert _convert(shared(*SINGLE), tmp_path / "c", 1).split_note is None     # (one thread asked for)


@pytest.mark.parametrize("chunks_done", [2, 4])
def test_an_interrupted_run_resumes_at_the_frame_that_holds_its_last_checkpoint(tmp_path, monkeypatch, chunks_done):
    """The resume state names the frame (file byte, decompressed offset): a resumed run decodes from there, not
    from the file's start, and its chunks are the uninterrupted run's, byte for byte."""
    import json

    from fastpgn.convert import converter as pipeline
    from fastpgn.io.source import Source

    src = shared(*MULTIFRAME)
    reference = tmp_path / "reference"
    full = Converter(Options(input=str(src), chunk_size=300, output_dir=str(reference), jobs=2,
                             block_size=100_000)).run()
    out = tmp_path / "resumed"
    original = pipeline.ChunkFiles.close
    calls = {"n": 0}

    def close_then_die(self):
        original(self)
        calls["n"] += 1
        if calls["n"] == chunks_done:
            raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ChunkFiles, "close", close_then_die)
    opts = Options(input=str(src), chunk_size=300, output_dir=str(out), jobs=2, block_size=100_000)
    with pytest.raises(KeyboardInterrupt):
        Converter(opts).run()
    monkeypatch.setattr(pipeline.ChunkFiles, "close", original)
    state = json.loads(next(out.glob(".*.fastpgn-state.json")).read_text())["progress"]
    table = frames.frame_table(src)
    assert state["frame_raw"] in [a for a, _ in table.frames[1:]]        # a frame past the first
    assert 0 < state["frame_offset"] <= state["block_offset"] and state["moves_seen"] is True
    begun = []
    resume_at_frame = Source.resume_at_frame

    def spy(self, raw, offset):
        begun.append(resume_at_frame(self, raw, offset))
        return begun[-1]

    monkeypatch.setattr(Source, "resume_at_frame", spy)
    opts.resume = True
    summary = Converter(opts).run()
    assert begun == [True]
    assert summary.games_written == full.games_written == 2499
    files = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert files == sorted(p.name for p in reference.iterdir() if not p.name.startswith("."))
    assert [(out / f).read_bytes() for f in files] == [(reference / f).read_bytes() for f in files]


def test_every_reader_on_threads_reads_the_multi_frame_corpus_as_the_single_frame_one(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    multi, single = str(shared(*MULTIFRAME)), str(shared(*SINGLE))
    assert list(fastpgn.read_lines(multi, jobs=2)) == list(fastpgn.read_lines(single, jobs=1))
    assert ([dict(g.headers) for g in fastpgn.read_headers(multi, jobs=2)]
            == [dict(g.headers) for g in fastpgn.read_headers(single, jobs=1)])
    fastpgn.to_parquet(multi, tmp_path / "multi.parquet", jobs=2)
    fastpgn.to_parquet(single, tmp_path / "single.parquet", jobs=1)
    assert pq.read_table(tmp_path / "multi.parquet").equals(pq.read_table(tmp_path / "single.parquet"))
