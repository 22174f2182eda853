"""Lichess's own Parquet release read as the PGN dump it was made from.

The release is built here from the real dumps in the official layout and
column types: header columns from the tags (ratings int16, UTCDate date32,
UTCTime time32[s], the rest strings), ``movetext`` the game's movetext text,
partitioned ``year=YYYY/month=MM/train-00000-of-00001.parquet``. Reading it
must give what reading the dump gives, game for game, on both backends.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys

import pytest

from helpers import RELEASE_DUMPS, ROOT, official_schema, release_rows, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
pq = pytest.importorskip("pyarrow.parquet")

import fastpgn  # noqa: E402
from fastpgn.errors import InputError, PGNSyntaxError  # noqa: E402
from fastpgn.io import lichess_parquet, sources  # noqa: E402

#: Tags the release has no column for: reading the release cannot give them back.
NOT_IN_RELEASE = ("Date", "Round")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(the dumps' PGN text back to back, the release's root folder)."""
    root = tmp_path_factory.mktemp("release") / "data"
    texts = []
    for name in RELEASE_DUMPS:
        pgn = b"".join(sources.open_source(shared("data", "lichess-db", name)).chunks())
        texts.append(pgn)
        rows = release_rows(pgn)
        day = rows[0]["UTCDate"]
        folder = root / f"year={day.year:04}" / f"month={day.month:02}"
        folder.mkdir(parents=True)
        table = pa.Table.from_pylist(rows, schema=official_schema())
        pq.write_table(table, folder / "train-00000-of-00001.parquet", row_group_size=100)
    return b"\n".join(texts), root


def _table(source, **options):
    batches = list(fastpgn.read_arrow(source, **options))
    return pa.Table.from_batches(batches)


def _without_release_gaps(table):
    """The table without ``byte_offset`` (it counts bytes of a different text) and with the tags the
    release has no column for left out of ``tags``."""
    rows = table.drop_columns(["byte_offset"]).to_pylist()
    for row in rows:
        row["tags"] = [tag for tag in row["tags"] if tag["key"] not in NOT_IN_RELEASE]
    return rows


def test_read_arrow_gives_the_dumps_table_game_for_game(corpus, scan, monkeypatch):
    pgn, root = corpus
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    want = _table(pgn)
    got = _table(root)
    assert got.num_rows == want.num_rows == 348 + 15
    assert got.schema == want.schema
    assert _without_release_gaps(got) == _without_release_gaps(want)
    # The offsets count bytes of the PGN text built from the rows: increasing, starting at 0.
    offsets = got.column("byte_offset").to_pylist()
    assert offsets[0] == 0 and offsets == sorted(offsets)


def test_one_file_and_the_uci_column(corpus):
    pgn, root = corpus
    file = sorted(root.rglob("*.parquet"))[0]
    got = _table(file, uci=True, columns=["game_id", "uci"])
    want = _table(pgn, uci=True, columns=["game_id", "uci"]).slice(0, got.num_rows)
    assert got.to_pylist() == want.to_pylist()


def test_read_lines_and_read_games_match_the_dump(corpus, scan, monkeypatch):
    pgn, root = corpus
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    assert list(fastpgn.read_lines(root)) == list(fastpgn.read_lines(pgn))
    got = [(g.id, g.moves, g.clocks, g.evals, g.result) for g in fastpgn.read_games(root)]
    want = [(g.id, g.moves, g.clocks, g.evals, g.result) for g in fastpgn.read_games(pgn)]
    assert got == want


def test_both_backends_agree(corpus):
    from helpers import kernel_params

    _, root = corpus
    answers = []
    for param in kernel_params("scan._scan"):
        kernel = param.values[0]
        saved = fastpgn.scan.kernel
        fastpgn.scan.kernel = kernel
        try:
            answers.append((_table(root).to_pylist(), list(fastpgn.read_lines(root))))
        finally:
            fastpgn.scan.kernel = saved
    assert all(answer == answers[0] for answer in answers)


def test_converter_writes_parquet_duckdb_reads(corpus, tmp_path):
    duckdb = pytest.importorskip("duckdb", reason='duckdb is not installed: pip install -e ".[test]"')
    pgn, root = corpus
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "fastpgn", str(root), "100", "--format", "parquet", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    glob = out / "*.parquet"
    got = duckdb.sql(f"SELECT count(*), sum(plies), count(white_title) FROM read_parquet('{glob}')").fetchall()
    want = _table(pgn)
    titles = sum(v is not None for v in want.column("white_title").to_pylist())
    assert got == [(want.num_rows, sum(want.column("plies").to_pylist()), titles)]


def test_converter_writes_the_dumps_lines(corpus, tmp_path):
    pgn, root = corpus
    done = subprocess.run([sys.executable, "-m", "fastpgn", str(root), "-o", "-", "--format", "lines"],
                          capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").splitlines() == list(fastpgn.read_lines(pgn))


def test_a_bad_game_names_its_file_and_row(tmp_path, scan, monkeypatch):
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    rows = {"Site": ["https://lichess.org/a", "https://lichess.org/b", "https://lichess.org/c"],
            "movetext": ["1. e4 e5 1-0", "1. e4 { unterminated 1-0", "1. d4 *"]}
    folder = tmp_path / "year=2024" / "month=01"
    folder.mkdir(parents=True)
    pq.write_table(pa.table(rows), folder / "train-00000-of-00001.parquet")
    games = fastpgn.read_games(tmp_path)
    assert next(games).id == "a"
    with pytest.raises(PGNSyntaxError) as caught:
        next(games)
    assert caught.value.game == 2
    assert f"file {folder / 'train-00000-of-00001.parquet'}, row 1" in str(caught.value)
    skipped = fastpgn.read_games(tmp_path, errors="skip")
    assert [g.id for g in skipped] == ["a", "c"] and len(skipped.rejected) == 1


def test_values_with_quotes_and_null_tags(tmp_path):
    rows = pa.table({"White": ['Ann "the rook"', None], "WhiteElo": pa.array([None, 1700], pa.int16()),
                     "UTCDate": pa.array(["2024-01-31", None]), "UTCTime": pa.array(["23:59:59", None]),
                     "movetext": ["1. e4 *", None]})
    path = tmp_path / "games.parquet"
    pq.write_table(rows, path)
    got = _table(path, columns=["white", "white_elo", "utc", "plies"]).to_pylist()
    utc = datetime.datetime(2024, 1, 31, 23, 59, 59, tzinfo=datetime.UTC)
    assert got == [{"white": 'Ann "the rook"', "white_elo": None, "utc": utc, "plies": 1},
                   {"white": None, "white_elo": 1700, "utc": None, "plies": 0}]


def test_parquet_without_movetext_is_not_the_release(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), path)
    with pytest.raises(InputError, match="movetext"):
        list(fastpgn.read_games(path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="folder"):
        list(fastpgn.read_games(empty))


def test_other_revisions_types_read_alike(tmp_path):
    """Ratings as text, dates and times as text or time64, dictionary and large_string columns."""
    rows = pa.table({
        "Event": pa.array(["Rated Blitz game"]).dictionary_encode(),
        "Site": ["https://lichess.org/abcdefgh"],
        "WhiteElo": ["1500"], "BlackElo": pa.array([1600], pa.int32()),
        "WhiteRatingDiff": ["+5"], "BlackRatingDiff": pa.array([-5], pa.int64()),
        "UTCDate": ["2024.02.29"], "UTCTime": pa.array([datetime.time(12, 30, 1)], pa.time64("us")),
        "TimeControl": ["180+2"],
        "movetext": pa.array(["1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 0-1"], pa.large_string()),
    })
    path = tmp_path / "games.parquet"
    pq.write_table(rows, path)
    got = _table(path, columns=["game_id", "site", "event", "utc", "white_elo", "black_elo", "white_rating_diff",
                                "black_rating_diff", "speed", "clock", "result"]).to_pylist()
    utc = datetime.datetime(2024, 2, 29, 12, 30, 1, tzinfo=datetime.UTC)
    assert got == [{"game_id": "abcdefgh", "site": "https://lichess.org/abcdefgh", "event": "Rated Blitz game",
                    "utc": utc, "white_elo": 1500,
                    "black_elo": 1600, "white_rating_diff": 5, "black_rating_diff": -5, "speed": "blitz",
                    "clock": [180.0, 180.0], "result": "0-1"}]
    line = next(fastpgn.read_lines(path)).split("\u2502")
    assert (line[12], line[13], line[16], line[17]) == ("1500", "+5", "1600", "-5")


def test_closing_early_stops_the_reading_thread(corpus):
    import threading

    _, root = corpus
    with fastpgn.read_games(root, block_size=1 << 16) as games:
        next(games)
    assert not [t for t in threading.enumerate() if t.name == "fastpgn-parquet"]


def test_filters_keep_the_same_games(corpus):
    pgn, root = corpus
    where = {"min_elo": 1800, "elo_of": "both", "speed": "blitz"}
    got = fastpgn.read_arrow(root, where=where, columns=["game_id"])
    ids = [i for batch in got for i in batch.column("game_id").to_pylist()]
    want = [i for batch in fastpgn.read_arrow(pgn, where=where, columns=["game_id"])
            for i in batch.column("game_id").to_pylist()]
    assert ids == want and ids and got.games_filtered == 348 + 15 - len(ids)


# ---------------------------------------------------------------- damaged and hostile files
#
# A file pyarrow cannot read is fastpgn's one-line error naming it, exit 2 (nothing read); damage
# after good rows is an error naming the file and row, exit 1, the games before it kept. A row is
# one game, whatever its text holds.

def _binary_movetext(path, rows: int, bad_row: int):
    """A release file whose movetext column is binary, valid UTF-8 but for row ``bad_row``."""
    moves = [b"1. e4 e5 1-0"] * rows
    moves[bad_row] = b"1. e4 \xff 1-0"
    pq.write_table(pa.table({"White": [f"w{i}" for i in range(rows)], "movetext": pa.array(moves, pa.binary())}),
                   path, row_group_size=1000)
    return path


def _unreadable(tmp_path):
    """Files pyarrow refuses, or that are not lichess's layout, by name."""
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"White": ["a"] * 10, "movetext": ["1. e4 *"] * 10}), good)
    files = {"empty": b"", "text": b'[Event "x"]\n\n1. e4 *\n', "truncated": good.read_bytes()[:-300]}
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.parquet"
        paths[name].write_bytes(data)
    for name, column in {"bool-rating-diff": ("WhiteRatingDiff", pa.array([True] * 3)),
                         "list-movetext": ("movetext", pa.array([["1. e4"]] * 3)),
                         "struct-movetext": ("movetext", pa.array([{"a": "1. e4"}] * 3))}.items():
        table = {"White": ["a"] * 3, "movetext": ["1. e4 *"] * 3}
        table[column[0]] = column[1]
        paths[name] = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(table), paths[name])
    paths["invalid-utf8-row-0"] = _binary_movetext(tmp_path / "utf8-row-0.parquet", 10, 0)
    return paths


@pytest.mark.parametrize("name", ["empty", "text", "truncated", "bool-rating-diff", "list-movetext",
                                  "struct-movetext", "invalid-utf8-row-0"])
def test_unreadable_files_are_one_line_errors(name, tmp_path, scan, monkeypatch, capsys):
    from fastpgn.cli import main

    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = _unreadable(tmp_path)[name]
    with pytest.raises(InputError) as caught:
        list(fastpgn.read_games(path))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    if name == "invalid-utf8-row-0":
        assert "row 0" in str(caught.value)
    with pytest.raises(InputError):
        list(fastpgn.read_arrow(path))
    other = tmp_path / "other.pgn"
    other.write_bytes(b'[White "x"]\n\n1. e4 *\n\n')
    for argv in ([str(path), "100", "-o", str(tmp_path / "out")],
                 [str(path), str(other), "100", "-o", str(tmp_path / "many")],
                 ["icn", str(path), "-o", str(tmp_path / "x.icn")],
                 ["crypt", "encode", str(path), "-o", str(tmp_path / "x.crypt")],
                 ["analyse", str(path), "--engine", sys.executable, "-o", str(tmp_path / "x.pgn")]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert "Traceback" not in err and str(path) in err and "no PGN games found" not in err, (argv, err)


def test_damage_after_good_rows_keeps_them(tmp_path, scan, monkeypatch, capsys):
    from fastpgn.cli import main

    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = _binary_movetext(tmp_path / "late.parquet", 5000, 4500)
    games = fastpgn.read_games(path)
    read = []
    with pytest.raises(InputError) as caught:
        for game in games:
            read.append(game.headers["White"])
    assert read == [f"w{i}" for i in range(4500)]
    assert f"{path}: cannot read row 4500" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InputError, match="row 4500"):
        sum(batch.num_rows for batch in fastpgn.read_arrow(path))
    out = tmp_path / "out"
    assert main([str(path), "10000", "-o", str(out), "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert "4,500 games written" in err and "row 4500" in err and "Traceback" not in err
    assert main(["icn", str(path), "-o", str(tmp_path / "x.icn")]) == 1
    err = capsys.readouterr().err
    assert "4,500 written" in err and "row 4500" in err and "Traceback" not in err


def test_a_first_batch_that_cannot_be_converted_is_not_an_empty_input(tmp_path, scan, monkeypatch, capsys):
    # a uint64 rating change past int64's range once failed in the first batch, read as "no PGN games"
    from fastpgn.cli import main

    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = tmp_path / "u64.parquet"
    pq.write_table(pa.table({"WhiteRatingDiff": pa.array([2 ** 64 - 1, 3], pa.uint64()), "movetext": ["*", "*"]}),
                   path)
    assert [g.headers["WhiteRatingDiff"] for g in fastpgn.read_games(path)] == ["+18446744073709551615", "+3"]
    # and a first batch pyarrow cannot convert is an error naming the file and row, not an empty input
    path = _binary_movetext(tmp_path / "first.parquet", 10, 0)
    assert main([str(path), "100", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cannot read row 0" in err and "no PGN games found" not in err


def _phantoms(tmp_path):
    rows = {"White": ["a", "b", "c", "d"],
            "movetext": ["1. e4 *", '1. d4 *\n\n[White "Mallory"]\n\n1. c4 *', "1. Nf3 { unterminated 1-0",
                         "1. e4 e5 1-0 2. Nf3 *"]}
    path = tmp_path / "phantom.parquet"
    pq.write_table(pa.table(rows), path)
    return path


def test_a_row_is_one_game_whatever_its_movetext_holds(tmp_path, scan, monkeypatch):
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = _phantoms(tmp_path)
    games = fastpgn.read_games(path, errors="skip")
    assert [g.headers["White"] for g in games] == ["a"]
    assert games.games_read == 4 and len(games.rejected) == 3
    assert [r.number for r in games.rejected] == [2, 3, 4]
    assert [f"file {path}, row {n}" in r.reason for r, n in zip(games.rejected, (1, 2, 3))] == [True] * 3
    # a row that would read as two games says so; the others keep the grammar's reasons
    assert [r.reason.split(" (")[0] for r in games.rejected] == [
        "this row's movetext reads as more than one game", "unterminated comment",
        "this row's movetext reads as more than one game"]
    assert not any(b"Mallory" in g.text for g in games.rejected[1:])    # the rows after: their own text
    with pytest.raises(PGNSyntaxError, match=f"file {path}, row 1"):
        list(fastpgn.read_games(path))
    # A reader of the headers alone does not read the movetext column: each row is the game of its tags.
    headers = fastpgn.read_headers(path, errors="skip")
    assert [h.headers.get("White") for h in headers] == ["a", "b", "c", "d"] and not headers.rejected
    table = _table(path, errors="skip")
    assert table.num_rows == 1
    lines = list(fastpgn.read_lines(path, errors="skip"))
    assert len(lines) == 1


def test_a_column_name_writes_one_tag(tmp_path, scan, monkeypatch):
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = tmp_path / "names.parquet"
    name = 'X"]\n\n[White "Eve"]\n\n1. e4 *\n\n[Y'
    pq.write_table(pa.table({name: ["v", "w", "x"], "White Player": ["a", "b", "c"],
                             "movetext": ["1. d4 *"] * 3}), path)
    games = fastpgn.read_games(path, errors="skip")
    got = [g.headers for g in games]
    assert games.games_read == 3 and len(got) == 3
    assert [h["White_Player"] for h in got] == ["a", "b", "c"] and "White" not in got[0]


def test_rows_without_tags_stay_apart(tmp_path, scan, monkeypatch):
    # no tag, no rating: a row read as the moves of the game before, unless it gets a tag of its own
    monkeypatch.setattr(fastpgn.scan, "kernel", scan)
    path = tmp_path / "bare.parquet"
    pq.write_table(pa.table({"White": [None, "b", None, None], "movetext": ["e4 e5", "d4", None, None]}), path)
    games = list(fastpgn.read_games(path))
    assert [g.moves for g in games] == [["e4", "e5"], ["d4"], [], []]
    assert [g.headers.get("Event") for g in games] == ["?", None, "?", "?"]


def _read_all(path, block_size):
    """Every reader's output on ``path`` (offsets, numbers, rejects, the error after them)."""
    out = {}
    for name, read in (("games", lambda: fastpgn.read_games(path, errors="skip", block_size=block_size)),
                       ("arrow", lambda: fastpgn.read_arrow(path, errors="skip", block_size=block_size, uci=True))):
        items, error = [], None
        reader = read()
        try:
            for item in reader:
                items.append((item.number, item.offset, item.headers, item.moves) if name == "games"
                             else item.to_pydict())
        except InputError as exc:
            error = (type(exc).__name__, str(exc), exc.offset)
        out[name] = (items, error, [(r.number, r.offset, r.reason, r.text) for r in reader.rejected],
                     reader.games_read)
    return out


@pytest.mark.parametrize("shape", ["whole", "last-row-without-moves", "damaged", "small-batches"])
def test_the_batches_blocks_are_the_streams(tmp_path, corpus, monkeypatch, shape):
    """The readers cut each batch's text in place (``ParquetSource.blocks``): they read what the cutter
    makes of the stream of those texts (``Source.blocks``), offsets, numbers, rejects and damage alike."""
    _, root = corpus
    path = root
    if shape == "last-row-without-moves":
        path = tmp_path / "last.parquet"
        # (a blank movetext, mid-file and last: the text ends with the last game's tags, yet a row is a
        # whole game, never one the input cut short)
        pq.write_table(pa.table({"White": ["a", "b", "c", "d"], "movetext": ["1. e4 *", " ", "1. d4 *", " "]}),
                       path)
    elif shape == "damaged":
        path = _binary_movetext(tmp_path / "late.parquet", 5000, 4500)
    elif shape == "small-batches":
        path = tmp_path / "small.parquet"
        rows = 300
        table = pa.table({"White": [f"w{i}" for i in range(rows)],
                          "movetext": ["1. e4 { [%clk 0:01:00] } e5 2. Qh5 1-0"] * rows})
        pq.write_table(table, path, row_group_size=7)
    for block_size in (1, 1000, 1 << 20):
        ours = _read_all(path, block_size)
        with monkeypatch.context() as patched:
            patched.setattr(lichess_parquet.ParquetSource, "blocks", sources.Source.blocks)
            assert _read_all(path, block_size) == ours, block_size
    if shape == "last-row-without-moves":
        games, error, rejects, read = ours["games"]
        assert error is None and rejects == [] and read == 4
        assert [(g[2]["White"], g[3]) for g in games] == [("a", ["e4"]), ("b", []), ("c", ["d4"]), ("d", [])]
    if shape == "damaged":
        assert ours["games"][1] and "row 4500" in ours["games"][1][1] and len(ours["games"][0]) == 4500


HEADER_COLUMNS = ["game_id", "event", "utc", "date", "white", "black", "white_elo", "black_elo", "result",
                  "termination", "time_control", "speed", "eco", "opening", "tags"]


def test_header_columns_of_the_release_are_read_without_its_movetext(corpus, tmp_path):
    """Counting before downloading: a reader of header columns never decodes the movetext column (most of
    a release file's bytes): the same rows and values as a read of every column."""
    _, root = corpus
    headers = _table(root, columns=HEADER_COLUMNS, jobs=2)
    full = _table(root, jobs=2).select(HEADER_COLUMNS)
    assert headers.num_rows == 348 + 15 and headers.equals(full)
    assert ([g.headers for g in fastpgn.read_headers(root)] == [g.headers for g in fastpgn.read_games(root)])
    # A filter on the header columns keeps the same games either way.
    where = {"min_elo": 1500, "speed": "blitz"}
    assert _table(root, columns=["game_id"], where=where).equals(_table(root, where=where).select(["game_id"]))
    # The movetext is not read: a row whose movetext is bad is a rejected game for a reader of the moves,
    # and a game for a reader of its headers.
    rows = pa.table({"White": ["Ann", "Bob"], "Result": ["1-0", "0-1"],
                     "movetext": ["1. e4 { cut", "1. d4 d5 0-1"]})
    path = tmp_path / "one.parquet"
    pq.write_table(rows, path)
    moves = fastpgn.read_arrow(path, columns=["white", "plies"], errors="skip")
    assert moves.read_all().column("white").to_pylist() == ["Bob"] and len(moves.rejected) == 1
    assert _table(path, columns=["white", "result"]).to_pylist() == [{"white": "Ann", "result": "1-0"},
                                                                      {"white": "Bob", "result": "0-1"}]
