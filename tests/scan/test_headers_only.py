"""Headers-only reading: the full read's games, numbers, offsets and headers, without the moves.

``headers_from_block`` reads each game's tag section and skips its movetext
(_skip_movetext) to where the full scanner ends the game. On every file of
the real corpus it must give the full read's games exactly; on mutated
games, both backends and the pure twin's fast path must agree with its byte
walk, and wherever the full read accepts every game, with the full read.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend
from fastpgn.io.blocks import lf_text
from fastpgn.reader import read_games, read_headers
from fastpgn.scan import _scan_py, fastpath as _fastpath_py
from helpers import CASES, DATA, decompressed, shared

BACKENDS = dict(_backend.available("scan._scan"))


def corpus():
    files = []
    for folder in ("lichess-db", "lichess-other", "edge-cases-nonlichess"):
        files += sorted(p for p in (DATA / folder).glob("*.pgn*"))
    return files


@pytest.fixture(scope="module")
def corpus_data():
    shared("data", "lichess-db")
    return {p.name: decompressed(p) for p in corpus()}


def projected(full):
    """games_from_block's answer as headers_from_block gives it."""
    records, read, rejects, filtered = full
    return [(r[0], r[1], r[2], r[6], r[8], r[9]) for r in records], read, rejects, filtered


@contextlib.contextmanager
def byte_walk_only():
    """Turn the pure twin's headers fast path off: every game goes through _scan_game (the grammar's
    _each_game, which every sink reads games from, looks it up in scan/fastpath.py)."""
    fast = _fastpath_py._fast_headers
    _fastpath_py._fast_headers = lambda buf, pos, end, where: None
    try:
        yield
    finally:
        _fastpath_py._fast_headers = fast


def test_every_corpus_file_gives_the_full_reads_games(scan, corpus_data):
    games = 0
    for name, data in corpus_data.items():
        full = projected(scan.games_from_block(data, 0, len(data), base_offset=5, first_game=7))
        assert scan.headers_from_block(data, 0, len(data), base_offset=5, first_game=7) == full, name
        games += full[1]
    assert games > 10_000


def test_cut_blocks_anywhere_give_the_same_boundaries(scan, corpus_data):
    data = corpus_data["lichess_db_standard_rated_2022-06.head2499.pgn.zst"]
    for start, end in ((0, 100_000), (12_345, 400_000), (0, len(data))):
        full = projected(scan.games_from_block(data, start, end, at_stream_start=start == 0))
        assert scan.headers_from_block(data, start, end, at_stream_start=start == 0) == full


def test_the_pure_fast_path_decides_as_the_byte_walk(corpus_data):
    for name, data in corpus_data.items():
        fast = _scan_py.headers_from_block(data, 0, len(data))
        with byte_walk_only():
            assert _scan_py.headers_from_block(data, 0, len(data)) == fast, name


def test_edge_case_files_keep_the_boundaries(scan):
    """Named edge cases: every game starts and ends where the full read puts it; only bad movetext differs."""
    for path in sorted(CASES.glob("*.pgn")):
        data = lf_text(path.read_bytes())   # as the readers hand blocks to the kernel (CR-only ends, BOMs)
        records, read, rejects, _ = scan.games_from_block(data, 0, len(data))
        h_records, h_read, h_rejects, _ = scan.headers_from_block(data, 0, len(data))
        assert h_read == read, path.name
        spans = sorted([(r[1], r[8], r[9]) for r in records] + [(r[2], r[3], r[4]) for r in rejects])
        h_spans = sorted([(r[1], r[4], r[5]) for r in h_records] + [(r[2], r[3], r[4]) for r in h_rejects])
        assert h_spans == spans, path.name
        # a game the full read accepts is a record here too, with the same headers
        assert {r[1]: r[2] for r in records}.items() <= {r[1]: r[2] for r in h_records}.items(), path.name
        # a game rejected here is rejected by the full read, for the same reason
        assert set(h_rejects) <= set(rejects), path.name


GAME = (b'[Event "Rated Blitz game"]\n[Site "https://lichess.org/abcd1234"]\n[Result "1-0"]\n'
        b'[WhiteElo "1500"]\n[TimeControl "180+0"]\n\n'
        b'1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5 { [%eval 0.3] [%clk 0:02:59] } '
        b'2. Nf3 { [%clk 0:02:58] } 2... Nc6 $1 (2... d6 3. d4) 3. Bb5 1-0\n\n')
NOISE = b" \n\n{}()-/*;$%1.0[]\"e4O-1/2\t\r"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 3 * len(GAME)), st.sampled_from(sorted(set(NOISE))),
                          st.booleans()), min_size=1, max_size=6))
def test_mutated_games_decide_alike(edits):
    """Bytes inserted or replaced anywhere in three games: both backends and both pure paths agree,
    and where the full read accepts every game, so does the headers-only read, with the same boundaries."""
    data = bytearray(GAME * 3)
    for at, byte, replace in edits:
        at = min(at, len(data) - 1)
        if replace:
            data[at] = byte
        else:
            data[at:at] = bytes([byte])
    data = bytes(data)
    answer = _scan_py.headers_from_block(data, 0, len(data))
    with byte_walk_only():
        assert _scan_py.headers_from_block(data, 0, len(data)) == answer
    if "cy" in BACKENDS:
        assert BACKENDS["cy"].headers_from_block(data, 0, len(data)) == answer
    full = projected(_scan_py.games_from_block(data, 0, len(data)))
    if not full[2]:
        assert answer == full


def test_read_headers_and_headers_only(tmp_path):
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2021-10.head999.pgn.zst")
    full = list(read_games(path))
    for reader in (read_headers(path), read_games(path, headers_only=True)):
        games = list(reader)
        assert [(g.number, g.offset, g.headers, g.result, g.id) for g in games] == \
               [(g.number, g.offset, g.headers, g.result, g.id) for g in full]
        assert all(g.moves == [] and g.evals == [] and g.clocks == [] and g.first_ply is None for g in games)
        assert reader.games_read == reader.games_yielded == 999


def test_bad_tags_still_reject_bad_moves_do_not():
    data = (b'[White "A"]\n\n1. e4 Zz9 *\n\n'          # a bad move: not checked
            b'[White B]\n\n1. e4 *\n\n'                # a bad tag: rejected as in the full read
            b'[White "C"]\n\n1. e4 { open *\n\n'       # an unterminated comment: the boundary rule rejects it
            b'[White "D"]\n\n1. d4 *\n')
    reader = read_headers(data, errors="skip")
    assert [g.headers["White"] for g in reader] == ["A", "D"]
    assert [r.reason for r in reader.rejected] == ["malformed tag", "unterminated comment"]
    full = read_games(data, errors="skip")
    assert [g.headers["White"] for g in full] == ["D"]
    assert [r.number for r in full.rejected] == [1, 2, 3]


def test_tagless_games_split_as_in_the_full_read(scan):
    data = b"1. e4 e5 1-0 1. d4 d5 0-1\n\n1. c4 *\n1. Nf3 *"
    full = projected(scan.games_from_block(data, 0, len(data)))
    assert scan.headers_from_block(data, 0, len(data)) == full
    assert [r[3] for r in full[0]] == ["1-0", "0-1", "*", "*"]


@pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here")
def test_reading_headers_of_a_pgn_file_imports_only_what_it_uses(tmp_path):
    """Python's start-up and imports are a good part of reading a dump's headers (docs/performance.md):
    with the compiled kernels, a plain .pgn read headers only imports no decoder, filter, openings map,
    Parquet reader, regular expressions, typing, dataclasses or pathlib. (The pure kernels import more: they are slower
    by far anyway.)"""
    import subprocess
    import sys

    path = tmp_path / "games.pgn"
    path.write_bytes(b'[White "A"]\n\n1. e4 *\n\n[White "B"]\n\n1. d4 *\n')
    script = ("import sys\n"
              "from fastpgn import read_headers\n"
              f"assert [g.headers['White'] for g in read_headers({str(path)!r})] == ['A', 'B']\n"
              "print(sorted(m for m in sys.modules if m in sys.argv[1:]))\n")
    unwanted = ["bz2", "dataclasses", "datetime", "fastpgn.io.bzip2", "fastpgn.io.zstd",
                "fastpgn.board.face", "fastpgn.filters", "fastpgn.io.lichess_parquet", "fastpgn.openings",
                "indexed_bzip2",
                "inspect", "isal", "pathlib", "re", "typing", "zstandard"]
    # -S: no site-packages hook (an editable install's finder imports pathlib itself)
    done = subprocess.run([sys.executable, "-S", "-c", script, *unwanted], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
                               "FASTPGN_IMPLEMENTATION": "cython"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n", f"reading headers imported {done.stdout.strip()}"


def _fields(game):
    """A Game's user-visible fields (a Game compares by identity)."""
    return (game.offset, game.number, game.headers, game.moves, game.evals, game.clocks, game._result_token,
            game.first_ply)


def test_the_kernel_makes_the_games_the_tuples_describe(scan, corpus_data):
    """``record=Game``: each game is the Game the record tuple describes (what the reader made of the
    tuples before), read in full or headers only, with a filter, and with rejected games between."""
    from fastpgn import filters
    from fastpgn.reader import Game

    bad = b'[White "X"]\n\n1. e4 { open *\n\n[White "Y]\n\n1. d4 *\n\n'
    plan = scan.where_plan(filters.Where(min_elo=1900).spec())   # (the tested kernel's plan)
    for name, data in sorted(corpus_data.items())[:6]:
        data = bad + data
        for where in (None, plan):
            full = scan.games_from_block(data, 0, len(data), base_offset=5, first_game=7, where=where)
            made = scan.games_from_block(data, 0, len(data), base_offset=5, first_game=7, where=where, record=Game)
            assert made[1:] == full[1:], name
            assert all(type(g) is Game for g in made[0])
            assert [_fields(g) for g in made[0]] == [_fields(Game(*r[:8])) for r in full[0]], name
            heads = scan.headers_from_block(data, 0, len(data), base_offset=5, first_game=7, where=where)
            made = scan.headers_from_block(data, 0, len(data), base_offset=5, first_game=7, where=where, record=Game)
            assert made[1:] == heads[1:], name
            assert [_fields(g) for g in made[0]] == [(o, n, h, [], [], [], r, None) for o, n, h, r, _, _ in heads[0]]
    with pytest.raises(TypeError, match="record must be None or a subclass of GameCore"):
        scan.headers_from_block(bad, 0, len(bad), record=dict)


def test_games_read_headers_only_are_whole_games():
    """Their per-ply lists, made when asked for, are each game's own; a Game copies, pickles and takes
    new attribute values as any object does."""
    import copy
    import pickle

    games = list(read_headers(b'[White "A"]\n\n1. e4 *\n\n[White "B"]\n\n1. d4 *\n'))
    games[0].moves.append("e4")
    games[0].clocks.append(None)
    assert [g.moves for g in games] == [["e4"], []] and [g.clocks for g in games] == [[None], []]
    assert games[1].evals == [] and games[1].plies == 0 and games[1].first_ply is None
    for again in (pickle.loads(pickle.dumps(games[0])), copy.copy(games[0]), copy.deepcopy(games[0])):
        assert type(again) is type(games[0]) and _fields(again) == _fields(games[0])
        assert repr(again) == "<Game 1 at byte 0: A - ?, 1 plies>"
    games[1].headers = {"White": "C"}
    games[1].offset = None
    assert repr(games[1]) == "<Game 2 at byte None: C - ?, 0 plies>"
    with pytest.raises(AttributeError):
        games[1].no_such_field = 1       # a Game has no __dict__: its fields are all there is


def test_tag_values_of_every_shape_read_alike():
    """Values the compiled kernel takes from its caches (short ones by their bytes, as moves are) read as
    the pure twin reads them: empty, 1 to 9 bytes, escaped, non-ASCII, invalid UTF-8, a repeated tag, and
    a value whose line ends the data (nothing after it to read ahead into)."""
    values = ["", "-", "1-0", "B06", "1811", "+9", "300+8", "Normal", "1234567", "12345678", "123456789",
              'a "q"', "\\\\", "é", "éé", "ÿ♞", "Zoë"]
    tags = b"".join(b'[%s "%s"]\n' % (name.encode(), value.encode().replace(b"\\", b"\\\\").replace(b'"', b'\\"'))
                    for name in ("Result", "WhiteElo", "ECO", "TimeControl", "Event", "Custom")
                    for value in values[:1] + values)
    games = [tags + b"\n1. e4 *\n",
             b'[Result "1-0"]\n[Result "0-1"]\n[ECO "\xff\xfe"]\n[Round "\xe2\x94"]\n\n*\n',
             b'[Result "1-0"]\n[ECO "A00"]']               # (tags alone: the data ends in a value)
    for data in games:
        answers = {name: mod.headers_from_block(data, 0, len(data))
                   for name, mod in BACKENDS.items()}
        full = _scan_py.games_from_block(data, 0, len(data))
        assert answers["py"][0][0][2] == full[0][0][2]
        if "cy" in answers:
            assert answers["cy"] == answers["py"]
            assert BACKENDS["cy"].games_from_block(data, 0, len(data))[0][0][2] == full[0][0][2]
    assert answers["py"][0][0][2] == {"Result": "1-0", "ECO": "A00"}


def test_comments_of_every_shape_and_offset_skip_alike():
    """The compiled skip runs over a line's closed comments sixteen bytes at a time: wherever they fall in
    those sixteen bytes, whatever they hold (result-like text, a '{', nothing), however they end (closed on
    their line, on a later line, never), the headers-only read ends each game where the pure twin and the
    full read end it, and rejects the same games."""
    comments = [b"{}", b"{ [%clk 0:03:00] }", b"{ [%eval -0.3] [%clk 0:00:59.5] }", b"{1-0 0-1 1/2-1/2 *}",
                b"{ a { b }", b"{" + b"x" * 40 + b"}", b"{-}{/}{*}"]
    tails = [b" 1-0\n\n", b"1-0\n\n", b" { open\nstill open } 0-1\n\n", b" {\n\n[Event \"x\"]\n\n1. d4 *\n\n",
             b" { never closed", b" 1/2-1/2 { after the result } *\n\n"]
    head = b'[White "A"]\n\n'
    for shift in range(33):
        for k in range(len(comments)):
            for tail in tails:
                moves = b" " * shift + b"1. e4 " + b" e5 ".join(comments[k:] + comments[:k]) + b" Nf3" + tail
                data = head + moves + head + b"1. c4 " + comments[k] + b" *\n"
                answer = _scan_py.headers_from_block(data, 0, len(data))
                if "cy" in BACKENDS:
                    assert BACKENDS["cy"].headers_from_block(data, 0, len(data)) == answer, data
                full = projected(_scan_py.games_from_block(data, 0, len(data)))
                if not full[2]:
                    assert answer == full, data
