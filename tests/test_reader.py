"""The reader API: any source, any compression, the error policy, and the 22-field lines read back."""

from __future__ import annotations

import bz2
import gzip
import io
import os
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

import fastpgn
from fastpgn import openings
from fastpgn.errors import InputError, PGNSyntaxError
from fastpgn.io.sources import blocks, detect, find_cut
from fastpgn.oneliner import format_line, iter_lines, parse_line
from fastpgn.reader import _RecordReader, read_games, read_headers, read_lines
from helpers import CASES, blocks_as_cut, decompressed, reference_cuts, shared

SAMPLE = "lichess_db_standard_rated_2021-10.head999.pgn.zst"


@pytest.fixture(scope="module")
def pgn_bytes() -> bytes:
    return decompressed(shared("data", "lichess-db", SAMPLE))


def test_every_compression_is_recognised_by_content(pgn_bytes, tmp_path):
    variants = {
        "a.zst": zstandard.ZstdCompressor().compress(pgn_bytes),
        "b.bz2": bz2.compress(pgn_bytes),
        "c.gz": gzip.compress(pgn_bytes),
        "d.pgn": pgn_bytes,
        "misleading.txt": zstandard.ZstdCompressor().compress(pgn_bytes),
    }
    expected = [g.moves for g in read_games(pgn_bytes)]
    assert len(expected) == 999
    for name, blob in variants.items():
        (tmp_path / name).write_bytes(blob)
        assert [g.moves for g in read_games(tmp_path / name)] == expected, name
        assert [g.moves for g in read_games(io.BytesIO(blob))] == expected, name


def test_multi_frame_and_multi_member_inputs_read_whole(pgn_bytes):
    half = len(pgn_bytes) // 2
    cut = pgn_bytes.index(b"\n\n[", half) + 2
    parts = [pgn_bytes[:cut], pgn_bytes[cut:]]
    zst = b"".join(zstandard.ZstdCompressor().compress(p) for p in parts)
    gz = b"".join(gzip.compress(p) for p in parts)
    bzz = b"".join(bz2.compress(p) for p in parts)
    for blob in (zst, gz, bzz):
        assert sum(1 for _ in read_games(blob)) == 999


def test_detect():
    assert detect(b"\x28\xb5\x2f\xfd") == "zst"
    assert detect(b"BZh9") == "bz2"
    assert detect(b"\x1f\x8b\x08") == "gz"
    assert detect(b"[Event") == "pgn"


def test_block_cuts_depend_only_on_the_data(pgn_bytes):
    def cuts(read_size, start=0):
        data = pgn_bytes[start:]
        chunks = (data[i:i + read_size] for i in range(0, len(data), read_size))
        return [(b.offset, len(b.data)) for b in blocks(chunks, block_size=100_000, start=start)]

    reference = cuts(1 << 20)
    assert len(reference) > 10
    assert cuts(7_777) == reference == cuts(65_536)
    # Restarting at a block start reproduces every later cut.
    restart = reference[5][0]
    assert cuts(12_345, restart) == reference[5:]
    for offset, _size in reference[1:]:
        assert pgn_bytes[offset - 2:offset + 1] == b"\n\n["


def test_find_cut_needs_a_blank_line():
    assert find_cut(b'[A "1"]\n[B "2"]\n', 1) == -1
    assert find_cut(b'1. e4 *\n\n[B "2"]\n', 1) == 9
    assert find_cut(b'1. e4 *\n \r\n[B "2"]\n', 1) == 11


def test_game_record_fields():
    path = shared("conformance", "004-lichess-db-parser", "edge_cases.pgn")
    games = list(read_games(path))
    assert [g.id for g in games] == ["mAEz2AcC", "mate0001", "nomoves1", "j1dkb5dw", "corr0001"]
    first = games[0]
    assert first.number == 1 and first.offset == 0
    assert first.headers["Opening"] == "Scotch Game: Haxo Gambit"
    assert first.moves[10] == "Bg5?" and first.plies == 36
    assert first.evals[34] == "#-9" and first.clocks[:3] == [600, 600, 598]
    assert games[1].evals[-1] is None and games[1].moves[-1] == "Qxf7#"
    assert games[2].moves == [] and games[2].evals == [] and games[2].result == "0-1"
    assert games[4].clocks == [36000, 35970]
    assert games[3].offset == path.read_bytes().index(b'[Event "Rated Classical game"]')


def test_errors_raise_after_the_games_before(tmp_path):
    data = (CASES / "invalid-move-token.pgn").read_bytes()
    good = (CASES / "bom.pgn").read_bytes()[3:]
    reader = read_games(good + data)
    seen = []
    with pytest.raises(PGNSyntaxError) as info:
        for game in reader:
            seen.append(game)
    assert len(seen) == 1
    assert info.value.game == 2
    assert info.value.offset == len(good) + data.index(b"hello")
    assert str(info.value) == f"invalid move token 'hello' (PGN byte {info.value.offset}, game 2)"


def test_errors_skip_counts_reconcile_and_keep_the_text():
    data = b"".join((CASES / name).read_bytes() for name in
                    ("invalid-move-token.pgn", "unterminated-comment.pgn", "malformed-clock.pgn"))
    reader = read_games(data, errors="skip")
    games = list(reader)
    assert reader.games_read == 6 == len(games) + len(reader.rejected)
    assert [r.reason for r in reader.rejected] == [
        "invalid move token 'hello'", "unterminated comment", "malformed clock '0:3:00'"]
    for rejected in reader.rejected:
        assert data[rejected.offset:rejected.offset + len(rejected.text)] == rejected.text


def test_truncated_zst_gives_the_games_before_then_input_error(pgn_bytes):
    blob = zstandard.ZstdCompressor().compress(pgn_bytes)
    cut = blob[: len(blob) // 2]
    reader = read_games(cut, errors="skip")
    games = []
    with pytest.raises(InputError) as info:
        for game in reader:
            games.append(game)
    assert "truncated zst" in str(info.value)
    assert 0 < len(games) < 999
    assert reader.games_read == len(games) + len(reader.rejected)
    full = list(read_games(pgn_bytes))
    assert [g.moves for g in games] == [g.moves for g in full[:len(games)]]
    assert reader.rejected[-1].reason.startswith("input ends inside this game")


def test_corrupt_gzip_and_missing_file(pgn_bytes, tmp_path):
    blob = bytearray(gzip.compress(pgn_bytes))
    blob[len(blob) // 2] ^= 0xFF
    with pytest.raises(InputError):
        list(read_games(bytes(blob), errors="skip"))
    with pytest.raises(InputError, match="no such file"):
        list(read_games(tmp_path / "nope.pgn"))
    with pytest.raises(InputError, match="folder"):
        list(read_games(tmp_path))


def test_truncated_bz2_excerpt_reconciles():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2")
    reader = read_games(path, errors="skip")
    games = []
    # It ends in the four tags of a game cut off before its moves: damage, named after every whole game.
    with pytest.raises(InputError, match=r"inside the tags of its last game.*\(PGN byte 5706690\)"):
        for game in reader:
            games.append(game)
    assert reader.games_read == len(games) + len(reader.rejected) == 2500
    assert len(games) == 2499 and games[-1].plies > 0
    assert reader.rejected[0].text.endswith(b'[Round "-"]\n') and reader.rejected[0].offset == 5706592


def test_lines_round_trip_through_records(pgn_bytes):
    lines = list(read_lines(pgn_bytes))
    assert len(lines) == 999
    for line in lines:
        record = parse_line(line)
        assert format_line(record) == line
        assert len(record.move_list) == int(record.plies)
        assert len(record.clock_list) in (0, int(record.plies))


def test_chunk_files_read_back(pgn_bytes, tmp_path):
    lines = list(read_lines(pgn_bytes))
    text = ("\n".join(lines) + "\n").encode()
    (tmp_path / "x.cri.gz").write_bytes(gzip.compress(text[:1000]) + gzip.compress(text[1000:]))
    assert [format_line(r) for r in iter_lines(tmp_path / "x.cri.gz")] == lines


def test_opening_spellings_of_older_dumps_resolve_to_one_code():
    table = openings.load()
    sep = "\u2502"
    code = table[f"A09{sep}Réti Opening".encode()]
    assert code != b"?"
    assert table[f"A09{sep}Reti Opening".encode()] == code
    grun = table[f"D85{sep}Grünfeld Defense: Exchange Variation".encode()]
    assert grun != b"?"
    assert table[f"D85{sep}Gruenfeld Defense, Exchange Variation".encode()] == grun
    assert table[f"D85{sep}Grunfeld Defense: Exchange Variation".encode()] == grun
    assert table[f"B01{sep}Not A Real Opening Name".encode()] == b"?"


def test_shipped_map_is_what_the_build_command_makes():
    source = shared("data", "openings")
    shipped = (Path(openings.__file__).parent / "data" / "openings.tsv").read_text("utf-8")
    assert shipped == "\n".join(openings.build(source)) + "\n"
    codes = [line.split("\u2502")[0] for line in shipped.splitlines()]
    assert len(codes) == len(set(codes))


def test_backend_is_reported():
    assert fastpgn.BACKEND in ("cython", "python")
    assert set(fastpgn.BACKENDS) >= {"scan"}


def test_game_records_replay_on_the_board():
    import chess

    path = shared("conformance", "004-lichess-db-parser", "edge_cases.pgn")
    for game in read_games(path):
        board = chess.Board()
        expected_uci = []
        for san in game.moves:
            move = board.parse_san(san.rstrip("!?"))
            expected_uci.append(move.uci())
            board.push(move)
        assert game.uci() == expected_uci
        fens = game.fens()
        assert len(fens) == game.plies
        if fens:
            assert fens[-1].split()[:4] == board.fen().split()[:4]
        assert game.board().is_checkmate() == board.is_checkmate()


@pytest.mark.parametrize("movetext, first_ply", [
    ("1. e4 e5 *", 0),
    ("12... Nf6 13. Bc4 d5 *", 23),
    ("7.e4 *", 12),
    ("e4 e5 *", None),
    ("0. e4 *", None),
    ("1. e4 5... e5 *", 0),
    ("{ a comment } 3... Nf6 *", 5),
])
def test_first_ply_names_the_numbered_start(movetext, first_ply):
    game = next(iter(read_games(movetext.encode())))
    assert game.first_ply == first_ply


@pytest.mark.parametrize("movetext, clocks, evals", [
    ("1. e4 { [%clk 0:01:00] } e5 { [%clk 0:00:59] } *", [60, 59], [None, None]),
    ("1. e4 { [%clk 0:01:00.5] } e5 { [%clk 0:00:59] } *", [60.5, 59], [None, None]),
    ("1. e4 e5 { [%clk 0:00:59] } 2. Nf3 *", [None, 59, None], [None, None, None]),
    ("1. e4 e5 2. Nf3 *", [None, None, None], [None, None, None]),
    ("1. e4 { [%eval 0.2] } e5 *", [None, None], ["0.2", None]),
    ("1. e4 { [%eval #-3] [%clk 1:00:00] } *", [3600], ["#-3"]),
    ("*", [], []),
])
def test_clocks_and_evals_have_one_entry_per_ply(movetext, clocks, evals):
    game = next(iter(read_games(movetext.encode())))
    assert game.clocks == clocks and game.evals == evals
    assert [type(c) for c in game.clocks] == [type(c) for c in clocks]


def test_opening_map_pickles_to_workers_with_the_same_answers():
    import pickle

    sep = "\u2502"
    fresh = openings.load()
    fuzzy_key = f"A09{sep}Reti Opening".encode()
    expected = openings.load()[fuzzy_key]
    assert pickle.loads(pickle.dumps(fresh))[fuzzy_key] == expected  # index built in the worker
    assert fresh[fuzzy_key] == expected                                # built in the parent...
    assert pickle.loads(pickle.dumps(fresh))[fuzzy_key] == expected  # ...and carried over


def test_a_named_pipe_reads_every_game(tmp_path):
    import threading

    path = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            f.write(path.read_bytes())

    threading.Thread(target=feed, daemon=True).start()
    assert [g.id for g in read_games(str(fifo))] == [g.id for g in read_games(path)]


GAME_PARTS = st.sampled_from([b'[Event "x"]\n', b'[Site "y"]\r\n', b"\n", b"\n\n", b" \t\r\n", b"1. e4 e5 *\n",
                              b"\n[", b"[", b"\n \n", b"{ [ }", b"\r\n\r\n", b"e4 "])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(GAME_PARTS, max_size=80), sizes=st.lists(st.integers(1, 40), min_size=1, max_size=12),
       block_size=st.integers(1, 64))
def test_blocks_cut_where_the_rule_says_whatever_the_read_sizes(parts, sizes, block_size):
    data = b"".join(parts)
    chunks, pos, k = [], 0, 0
    while pos < len(data):
        chunks.append(data[pos:pos + sizes[k % len(sizes)]])
        pos += sizes[k % len(sizes)]
        k += 1
    want = reference_cuts(data, block_size)
    got = blocks_as_cut(list(blocks(iter(chunks), block_size=block_size)), want)
    assert got == want


@pytest.mark.parametrize("headers_only", [False, True])
def test_games_are_handed_out_one_at_a_time_counted_and_collectable(headers_only):
    """The reader hands out a block's games one by one (the kernel's RecordFeed, in C on the compiled
    backend): counted as they go, none after close(), and each one a garbage-collected object, so a
    reference cycle a program makes through a game is freed."""
    import gc

    data = b"".join(b'[White "P%d"]\n\n1. e4 { [%%clk 0:01:00] } *\n\n' % i for i in range(5))
    games = read_games(data, headers_only=headers_only)
    first = next(games)
    assert games.games_yielded == 1 and gc.is_tracked(first)
    assert [next(games).headers["White"] for _ in range(2)] == ["P1", "P2"] and games.games_yielded == 3
    games.close()
    assert next(games, None) is None and games.games_yielded == 3   # the block's other games are dropped
    games = read_games(data, headers_only=headers_only)
    assert [g.number for g in games] == [1, 2, 3, 4, 5] and games.games_yielded == games.games_read == 5
    assert list(games) == [] and next(games, None) is None
    gc.collect()
    for game in read_games(data, headers_only=headers_only):
        assert gc.is_tracked(game)
        game.headers["game"] = game          # a cycle: game -> headers -> game
    del game    # (the loop's name holds the last one; it passed before only on other garbage collected with them)
    assert gc.collect() >= 5 * 2, "the cycles through the games were not freed"


def test_a_game_read_is_freed_when_the_program_drops_it():
    """Compiled backend: the reader holds no game it has handed out, so a program that keeps none holds
    one game at a time, not a block's (the pure twin's reader frees a block's games with the block)."""
    import gc

    from fastpgn import scan as _scan
    from fastpgn.reader import Game

    if _scan.BACKEND != "cython":
        pytest.skip("the pure twin's RecordFeed frees a block's games with the block")
    data = b"".join(b'[Event "freed when dropped"]\n[White "P%d"]\n\n1. e4 *\n\n' % i for i in range(200))

    def alive():
        return [o for o in gc.get_objects() if type(o) is Game and o.headers.get("Event") == "freed when dropped"]

    for headers_only in (False, True):
        games = read_games(data, headers_only=headers_only)
        for _ in range(100):
            next(games)
        assert alive() == []
        kept = next(games)
        assert alive() == [kept]
        del kept


def test_the_feed_reads_a_list_held_elsewhere_without_changing_it():
    """RecordFeed (GameReader's __next__) gives up a list's items only when no one else holds the list."""
    from fastpgn import scan as _scan

    shared_lists = [["a", "b"], ["c"]]

    class Feed(_scan.kernel.RecordFeed):
        def __init__(self):
            self.games_yielded = 0
            self._lists = iter(shared_lists)

        def _next_list(self):
            return next(self._lists)

    feed = Feed()
    assert [next(feed) for _ in range(3)] == ["a", "b", "c"] and next(feed, None) is None
    assert shared_lists == [["a", "b"], ["c"]] and feed.games_yielded == 3


def test_every_reader_runs_the_one_block_loop(monkeypatch):
    """read_games, read_headers (in one step or, on worker threads, two), read_lines and the column readers
    scan their blocks through _RecordReader._scanned (one per-block loop), and agree on the counts it keeps."""
    pytest.importorskip("pyarrow")
    from fastpgn.arrow import ColumnReader, read_arrow

    seen = []
    loop = _RecordReader._scanned

    def scanned(self, scan, **options):
        seen.append(scan.__name__)
        return loop(self, scan, **options)

    monkeypatch.setattr(_RecordReader, "_scanned", scanned)
    data = (b'[White "Ann"]\n[WhiteElo "2100"]\n\n1. e4 *\n\n[White "Bob"]\n[WhiteElo "1500"]\n\n1. d4 }\n\n'
            b'[White "Cy"]\n[WhiteElo "1400"]\n\n1. c4 *\n')
    where = {"min_elo": 1450, "elo_of": "white"}
    options = {"errors": "skip", "where": where, "block_size": 64}
    readers = [
        ("games_from_block", lambda: read_games(data, jobs=1, **options)),
        ("spans_from_block", lambda: read_games(data, jobs=2, **options)),     # (the records made after it)
        ("headers_from_block", lambda: read_headers(data, jobs=1, **options)),
        ("spans_from_block", lambda: read_headers(data, jobs=2, **options)),    # (the records made after it)
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
