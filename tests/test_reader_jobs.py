"""``jobs=``: the readers' blocks scanned on worker threads give what one thread gives.

read_arrow, to_parquet and read_lines at jobs 1, 2 and 3 on the real corpus
and the golden cases: the same tables, lines, counts, rejected games in the
same order, the same warnings, and the same error raised after the same games
(a damaged .zst, a bad game under ``errors="raise"``, a damaged Parquet
release). A reader closed early (a caller that breaks out of its loop) leaves
no thread behind. Run on the backend FASTPGN_IMPLEMENTATION names, as the rest
of the suite (the pure kernel gets threads when asked for them, and the same
output).
"""

from __future__ import annotations

import threading
import warnings

import pytest

from helpers import CONFORMANCE, DATA, decompressed, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet")

import fastpgn  # noqa: E402
from fastpgn import _parallel  # noqa: E402
from fastpgn.errors import InputError, NotUTF8Warning, PGNError  # noqa: E402

JOBS = (1, 2, 3)
#: Small blocks: many of them in the workers' hands at once.
BLOCK = 1 << 14
DUMPS = ("lichess_db_standard_rated_2013-01.head348.pgn.zst", "lichess_db_standard_rated_2021-10.head999.pgn.zst",
         "lichess_db_standard_rated_2022-06.head50000lines.truncated.pgn.bz2")


def _corpus():
    """The real dumps and every other PGN file of the corpus and the golden cases."""
    if not DATA.exists():
        return []
    files = [DATA / "lichess-db" / name for name in DUMPS]
    files += sorted((DATA / "edge-cases-nonlichess").glob("*.pgn"))
    files += sorted(CONFORMANCE.glob("*/*.pgn")) if CONFORMANCE.exists() else []
    return [pytest.param(f, id=f.name) for f in files if f.exists()]


CORPUS = _corpus()
needs_corpus = pytest.mark.skipif(not CORPUS, reason="the shared corpus (FASTPGN_SHARED) is absent")


@pytest.fixture(autouse=True)
def no_thread_left():
    """Every test here ends with no reader's thread still running."""
    yield
    assert not _threads()


def _rejects(reader):
    return [(r.number, r.offset, r.reason, r.error_offset, r.text) for r in reader.rejected]


def _counts(reader):
    return (reader.games_read, reader.games_yielded, reader.games_filtered, reader.games_not_utf8,
            reader.first_not_utf8)


def _outcome(read):
    """What a read gives a user: its output, its counts and rejected games, its warnings, and the error it
    raised (type and message) after that output."""
    out = []
    reader = None
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            reader = read()
            for item in reader:
                out.append(item)
            error = None
        except PGNError as exc:
            error = (type(exc).__name__, str(exc))
    return out, (_counts(reader), _rejects(reader)) if reader is not None else None, error, \
        [(w.category, str(w.message)) for w in said]


def _arrow(source, jobs, **options):
    batches, rest, error, said = _outcome(lambda: fastpgn.read_arrow(source, jobs=jobs, block_size=BLOCK,
                                                                     batch_size=1000, **options))
    return [b.to_pydict() for b in batches], rest, error, said


def _games(reader):
    out, rest, error, said = _outcome(lambda: reader)
    return [(g.number, g.offset, g.headers, g.moves, g.evals, g.clocks, g.first_ply) for g in out], rest, error, said


def _every_reader(source, jobs, errors="skip"):
    return {
        "arrow": _arrow(source, jobs, errors=errors),
        "arrow uci": _arrow(source, jobs, errors=errors, uci=True),
        "arrow filtered": _arrow(source, jobs, errors=errors, where={"min_elo": 1800}, columns=["game_id", "moves"]),
        "lines": _outcome(lambda: fastpgn.read_lines(source, jobs=jobs, block_size=BLOCK, errors=errors)),
        "games": _games(fastpgn.read_games(source, jobs=jobs, block_size=BLOCK, errors=errors)),
        "headers": _games(fastpgn.read_headers(source, jobs=jobs, block_size=BLOCK, errors=errors)),
    }


@needs_corpus
@pytest.mark.parametrize("path", CORPUS)
def test_every_reader_gives_the_same_at_any_jobs(path):
    one = _every_reader(path, 1)
    assert one["arrow"][0] or one["arrow"][1][1], "nothing read: the test would hold nothing"
    for jobs in JOBS[1:]:
        assert _every_reader(path, jobs) == one, jobs


@needs_corpus
@pytest.mark.parametrize("jobs", JOBS[1:])
@pytest.mark.parametrize("headers_only", [True, False], ids=["headers", "whole games"])
def test_games_on_worker_threads_are_read_there_and_numbered_as_on_one(monkeypatch, jobs, headers_only):
    """read_games (and read_headers) at jobs above 1 scans its blocks on the workers (the spans, without the
    GIL) and makes the games on the calling thread: numbers past the first block's, offsets, moves, evals,
    clocks, filtered games and a rejected game as on one thread."""
    path = DATA / "lichess-db" / DUMPS[2]
    where = {"min_elo": 1800}

    def read(jobs):
        return _games(fastpgn.read_games(path, block_size=BLOCK, errors="skip", jobs=jobs, where=where,
                                         headers_only=headers_only))

    one = read(1)
    threads, made = [], []
    scan, make = fastpgn.scan.kernel.spans_from_block, fastpgn.scan.kernel.records_from_spans
    monkeypatch.setattr(fastpgn.scan.kernel, "spans_from_block",
                        lambda *a, **k: threads.append(threading.current_thread().name) or scan(*a, **k))
    monkeypatch.setattr(fastpgn.scan.kernel, "records_from_spans",
                        lambda *a, **k: made.append(threading.current_thread().name) or make(*a, **k))
    assert read(jobs) == one
    assert one[0][-1][0] > 1000 and one[1][1]    # (numbers past the first block's, and a rejected game)
    assert one[1][0][2] > 0                      # (and games the filter dropped)
    assert headers_only or any(game[3] and any(game[5]) for game in one[0])    # (moves and clocks)
    # games with evals and games without, so spans that copy no evals for the latter are held to them
    assert headers_only or (any(any(game[4]) for game in one[0])
                            and any(game[3] and not any(game[4]) for game in one[0]))
    assert len(threads) > 10 and all(name.startswith("fastpgn-worker") for name in threads)
    assert len(made) == len(threads) and set(made) == {threading.current_thread().name}


@needs_corpus
def test_to_parquet_writes_the_same_file_at_any_jobs(tmp_path):
    path = DATA / "lichess-db" / DUMPS[1]
    tables = []
    for jobs in JOBS:
        out = tmp_path / f"j{jobs}.parquet"
        reader = fastpgn.to_parquet(path, out, jobs=jobs, block_size=BLOCK, uci=True)
        tables.append((pq.read_table(out), reader.games_yielded))
    assert tables[0][1] == 999
    for table, yielded in tables[1:]:
        assert table.equals(tables[0][0]) and yielded == tables[0][1]


def _damaged_zst(tmp_path):
    """A real dump's .zst cut short in its middle."""
    raw = shared("data", "lichess-db", DUMPS[1]).read_bytes()
    path = tmp_path / "cut.pgn.zst"
    path.write_bytes(raw[:len(raw) // 2])
    return path


@needs_corpus
@pytest.mark.parametrize("errors", ["raise", "skip"])
def test_a_damaged_zst_raises_after_the_same_games(tmp_path, errors):
    path = _damaged_zst(tmp_path)
    one = _every_reader(path, 1, errors)
    assert one["arrow"][2][0] == "InputDamageError" and one["lines"][0]
    for jobs in JOBS[1:]:
        assert _every_reader(path, jobs, errors) == one, jobs


def _bz2_spy(monkeypatch):
    """The thread counts the parallel bzip2 decoder was started with, one a read that used it."""
    from fastpgn.io import bzip2

    started = []
    decode = bzip2.parallel_decode
    monkeypatch.setattr(bzip2, "parallel_decode",
                        lambda path, threads: started.append(threads) or decode(path, threads))
    return started


def _bz2_inputs(tmp_path):
    """A .pgn.bz2 dump of the corpus, 2 MB of another as 100 kB bzip2 blocks in several streams, and those
    damaged: a byte flipped inside a middle block, and cut short in their middle. (The corpus's other
    .pgn.bz2 is read at every jobs by test_every_reader_gives_the_same_at_any_jobs.)"""
    import bz2

    whole = [shared("data", "lichess-db", "lichess_db_standard_rated_2013-01.head348.pgn.bz2")]
    pgn = bz2.decompress(shared("data", "lichess-db", DUMPS[2]).read_bytes())
    pgn = pgn[:pgn.index(b"\n\n[Event ", 2_000_000) + 2]
    streams = b"".join(bz2.compress(pgn[i:i + 700_000], 1) for i in range(0, len(pgn), 700_000))
    several = tmp_path / "several.pgn.bz2"
    several.write_bytes(streams)
    flipped = bytearray(streams)
    flipped[len(streams) // 2] ^= 0x10
    damaged = {"flipped.pgn.bz2": bytes(flipped), "cut.pgn.bz2": streams[:len(streams) // 2]}
    for name, data in damaged.items():
        (tmp_path / name).write_bytes(data)
    return whole + [several], [tmp_path / name for name in damaged], pgn


@needs_corpus
def test_a_bz2_path_is_decoded_on_the_readers_jobs(tmp_path, monkeypatch):
    """jobs=2 decodes a .pgn.bz2 on two threads (indexed_bzip2), every reader giving what the stream decoder
    gives at jobs=1; a damaged one raises the stream decoder's error, at the same offset, after the same games."""
    pytest.importorskip("indexed_bzip2", reason='the parallel bzip2 decoder is not installed: pip install -e ".[fast]"')
    whole, damaged, pgn = _bz2_inputs(tmp_path)
    started = _bz2_spy(monkeypatch)
    for path in whole + damaged:
        one = _every_reader(path, 1)
        assert not started, path      # (jobs=1: the standard library's stream decoder)
        two = _every_reader(path, 2)
        assert started and set(started) == {2}, path
        started.clear()
        assert two == one, path.name
        if path in damaged:
            kind, message = one["lines"][2]
            assert kind == "InputDamageError" and "bz2 data in" in message, message
            # every whole game before the damage, and only those
            lines = one["lines"][0]
            assert 100 < len(lines) < len(list(fastpgn.read_lines(pgn))), path.name
        else:
            assert one["lines"][2] is None and len(one["lines"][0]) > 300, path.name


@needs_corpus
def test_a_bad_game_raises_after_the_games_before_it():
    """errors="raise": every game before the first bad one comes out, then its error, at any jobs."""
    data = decompressed(shared("data", "lichess-db", DUMPS[1]))
    cut = data.index(b"\n\n[Event", len(data) // 2) + 2
    bad = data[:cut] + b'[Event "bad"]\n\n1. e4 { never closed\n\n' + data[cut:]
    one = _every_reader(bad, 1, "raise")
    assert one["lines"][2][1].startswith("unterminated comment") and len(one["lines"][0]) > 400
    assert one["arrow"][2] == one["lines"][2]
    assert sum(len(b["byte_offset"]) for b in one["arrow"][0]) == len(one["lines"][0])
    for jobs in JOBS[1:]:
        assert _every_reader(bad, jobs, "raise") == one, jobs


@needs_corpus
def test_bytes_that_are_not_utf8_are_counted_and_said_alike():
    data = decompressed(shared("data", "lichess-db", DUMPS[0]))
    games = data.split(b"\n\n[Event")
    games[100] = games[100].replace(b"Rated", b"R\xe9t\xe9d", 1)
    games[300] = games[300].replace(b"Rated", b"R\xe9ted", 1)
    latin = b"\n\n[Event".join(games)
    one = _every_reader(latin, 1)
    counts = one["arrow"][1][0]
    assert counts[3] == 2 and counts[4] > 0 and [c for c, _ in one["arrow"][3]] == [NotUTF8Warning]
    for jobs in JOBS[1:]:
        assert _every_reader(latin, jobs) == one, jobs
    # named, the encoding reads them as their characters, at any jobs alike
    named = [_arrow(latin, jobs, encoding="latin-1", columns=["event"]) for jobs in JOBS]
    assert named[0] == named[1] == named[2]
    assert sum(e.startswith(("Rétéd ", "Réted ")) for batch in named[0][0] for e in batch["event"]) == 2


def _release(tmp_path, rows: int, bad_row: int | None = None):
    """A release file of ``rows`` real-looking games (binary movetext, valid UTF-8 but for ``bad_row``)."""
    moves = [b"1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0"] * rows
    if bad_row is not None:
        moves[bad_row] = b"1. e4 \xff 1-0"
    path = tmp_path / "release.parquet"
    pq.write_table(pa.table({"White": [f"w{i}" for i in range(rows)], "WhiteElo": pa.array(range(rows), pa.int16()),
                             "movetext": pa.array(moves, pa.binary())}), path, row_group_size=700)
    return path


@pytest.mark.parametrize("bad_row", [None, 4321])
def test_a_release_reads_alike_at_any_jobs(tmp_path, bad_row):
    """Lichess's Parquet release: the same games at any jobs; a row that cannot be read, the same InputError
    (naming file and row) after the same games."""
    path = _release(tmp_path, 6000, bad_row)
    one = _every_reader(path, 1, "raise")
    if bad_row is None:
        assert one["games"][2] is None and len(one["games"][0]) == 6000
    else:
        assert one["arrow"][2] == ("InputError", f"{path}: cannot read row 4321 (Invalid UTF8 payload)") \
            or (one["arrow"][2][0] == "InputError" and "row 4321" in one["arrow"][2][1])
        assert len(one["games"][0]) == 4321 == sum(len(b["byte_offset"]) for b in one["arrow"][0])
    for jobs in JOBS[1:]:
        assert _every_reader(path, jobs, "raise") == one, jobs


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("fastpgn")]


@needs_corpus
@pytest.mark.parametrize("read", ["arrow", "lines", "games", "release", "positions"])
def test_breaking_out_early_leaves_no_thread(tmp_path, read):
    path = DATA / "lichess-db" / DUMPS[1]
    if read == "release":
        path = _release(tmp_path, 6000)
    assert not _threads()
    opened = {"arrow": lambda: fastpgn.read_arrow(path, jobs=3, block_size=BLOCK, batch_size=10),
              "release": lambda: fastpgn.read_arrow(path, jobs=3, block_size=BLOCK, batch_size=10),
              "lines": lambda: fastpgn.read_lines(path, jobs=3, block_size=BLOCK),
              "games": lambda: fastpgn.read_games(path, jobs=3, block_size=BLOCK),
              "positions": lambda: fastpgn.read_positions(path, jobs=3, block_size=BLOCK, batch_size=10)}[read]
    with opened() as reader:
        for _ in reader:
            break
    assert not _threads()
    reader = opened()
    first = next(iter(reader))
    assert first is not None and _threads()
    del reader          # dropped unclosed: collected, the generator closes as it goes
    assert not _threads()


@pytest.mark.parametrize("ahead", [True, False])
def test_at_most_a_bounded_number_of_blocks_are_read_ahead(ahead):
    """``ordered``: a consumer that holds the first result has at most 2 * jobs + AHEAD items taken from
    the input (and one in the making); with ``ahead`` false the items are taken on the calling thread, at
    most 2 * jobs of them."""
    taken = []
    where = set()

    def items():
        for i in range(1000):
            taken.append(i)
            where.add(threading.current_thread().name)
            yield i

    for jobs in (1, 2, 4):
        taken.clear()
        where.clear()
        results = _parallel.ordered(items(), lambda i: i * i, jobs, ahead=ahead)
        assert next(results) == (0, 0)
        threading.Event().wait(0.2)      # time for the threads to run ahead as far as they may
        assert len(taken) <= (2 * jobs + _parallel.AHEAD + 2 if ahead else 2 * jobs)
        assert list(results) == [(i, i * i) for i in range(1, 1000)]
        assert (where == {threading.current_thread().name}) is not ahead


@pytest.mark.parametrize("ahead", [True, False])
def test_an_error_of_the_input_comes_after_the_results_before_it(ahead):
    def items():
        yield from range(10)
        raise InputError("broken at 10", 10)

    out = []
    with pytest.raises(InputError, match="broken at 10"):
        for _item, result in _parallel.ordered(items(), lambda i: -i, 3, ahead=ahead):
            out.append(result)
    assert out == [-i for i in range(10)]


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_jobs_is_a_whole_number_of_workers(jobs):
    with pytest.raises(ValueError, match="jobs must be a whole number of workers"):
        fastpgn.read_games(b"1. e4 *", jobs=jobs)
    with pytest.raises(ValueError, match="jobs must be a whole number of workers"):
        fastpgn.read_arrow(b"1. e4 *", jobs=jobs)


def test_the_default_is_the_converters_every_core_where_threads_pay():
    from fastpgn.convert.converter import workers_for

    reader = fastpgn.read_lines(b"1. e4 *")
    if getattr(fastpgn.scan.kernel, "RELEASES_GIL", False):
        assert reader.jobs == workers_for(0) == _parallel.default_jobs()
    else:
        assert reader.jobs == 1
    assert fastpgn.read_lines(b"1. e4 *", jobs=5).jobs == 5


@needs_corpus
@pytest.mark.parametrize("headers_only", [True, False], ids=["headers", "whole games"])
def test_games_use_at_most_four_workers_whatever_jobs(monkeypatch, headers_only):
    """The calling thread makes the games, so more workers than keep up with it would only hold blocks in
    memory: at jobs=8 the games come from four worker threads, the same games as on one."""
    path = DATA / "lichess-db" / DUMPS[2]
    threads = []
    scan = fastpgn.scan.kernel.spans_from_block
    monkeypatch.setattr(fastpgn.scan.kernel, "spans_from_block",
                        lambda *a, **k: threads.append(threading.current_thread().name) or scan(*a, **k))

    def read(jobs):
        return _games(fastpgn.read_games(path, block_size=BLOCK // 4, errors="skip", jobs=jobs,
                                         headers_only=headers_only))

    one = read(1)
    assert not threads
    assert read(8) == one
    assert len(threads) > 100 and 1 < len(set(threads)) <= 4, set(threads)


def test_ctrl_c_while_the_items_are_read_is_raised_at_once():
    """The one ordered pool (readers, converter, analyse): Ctrl-C while it reads the next item stops the caller
    now, not once the workers hand back what they hold (an engine searching until told to stop: never)."""
    import threading
    from concurrent.futures import Future

    from fastpgn.io.ordered import InOrder

    late: Future = Future()
    timer = threading.Timer(2.0, late.set_result, ("late",))
    timer.start()

    def items():
        yield 1
        raise KeyboardInterrupt

    order = InOrder(items(), lambda item: (item, late), 4)
    try:
        with pytest.raises(KeyboardInterrupt):
            next(iter(order))
        assert not late.done()
    finally:
        timer.cancel()
