"""What more than one test module uses: paths, the shared corpus, backend params, and small builders.

The one module tests share (``from helpers import ...``; pyproject's pytest
``pythonpath`` puts ``tests/`` on the path). No test module imports another
test module: a helper two of them need lives here.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard
from hypothesis import strategies as st

from fastpgn import _backend

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
CONFORMANCE = SHARED / "conformance"
CASES = Path(__file__).resolve().parent / "cases"
#: A scripted UCI engine (``--mode ok|die|hang|...``) for the engine and analysis tests.
FAKE_ENGINE = str(Path(__file__).resolve().parent / "engine" / "fake_engine.py")
#: The environment of a ``python -m fastpgn`` child process: the checkout's package first, then what this
#: process was given (a pyarrow of another version under test: tests/test_pyarrow_floor.py).
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))


# -- the shared corpus and system packages ---------------------------------------------------------

def shared(*parts: str) -> Path:
    """A path under ../shared, or skip the test when the folder is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpus is read in place)")
    return path


def missing_system_package(install: str):
    """Skip a test whose system package is absent, naming the install line; on CI, fail instead.

    The test command installs the system packages the tests need, so on CI
    (``CI`` set, as ``.ci/run`` runs) an absent one is a broken setup, not a
    reason to skip.
    """
    if os.environ.get("CI"):
        pytest.fail(f"{install} (the test command installs it; CI must not skip these tests)")
    pytest.skip(install)


def child_pytest(*args: str, pythonpath: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in a child process at the checkout's root, as the README runs it, with
    ``env`` set and ``pythonpath`` before the environment's packages (none of this run's pytest or
    Hypothesis settings, nor its xdist worker's)."""
    child = {k: v for k, v in ENV.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    child["PYTHONPATH"] = os.pathsep.join([str(ROOT), *pythonpath])
    child.update(env)
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=child, capture_output=True,
                          text=True)


def decompressed(path: Path) -> bytes:
    """The bytes of a corpus file, a ``.zst`` or ``.bz2`` one decompressed."""
    raw = path.read_bytes()
    if path.suffix == ".zst":   # every frame: lichess's dumps are many (pzstd), a decompressobj stops after one
        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
            return reader.read()
    if path.suffix == ".bz2":
        import bz2

        return bz2.decompress(raw)
    return raw


# -- the backends ----------------------------------------------------------------------------------

def kernel_params(name: str):
    """Every backend of kernel ``name`` as pytest params (ids ``py``/``cy``): for tests that compare them."""
    return [pytest.param(mod, id=ident) for ident, mod in _backend.available(name)]


#: For a module whose every test compares the two kernels side by side (each loaded by name, whatever
#: FASTPGN_IMPLEMENTATION says): the same work in both passes of the test command, so it runs in the
#: compiled pass alone, where CI requires the compiled kernels. A plain ``pytest`` runs it.
COMPARES_BOTH_KERNELS = pytest.mark.skipif(
    os.environ.get("FASTPGN_IMPLEMENTATION") == "python",
    reason="compares both kernels itself: the FASTPGN_IMPLEMENTATION=cython pass of the test command runs it")


#: For a test of pure Python that no kernel runs under (the infinite chess project's notation): its
#: outcome cannot differ between the two passes of the test command, so the compiled pass alone runs it.
NO_KERNEL = pytest.mark.skipif(
    os.environ.get("FASTPGN_IMPLEMENTATION") == "python",
    reason="runs no kernel: the FASTPGN_IMPLEMENTATION=cython pass of the test command runs it")


def backend_params(name: str):
    """The backends a kernel test runs on, one at a time: the one ``FASTPGN_IMPLEMENTATION`` names.

    The test command runs the suite twice, under ``cython`` then ``python``,
    so each such test runs once on each backend; a plain ``pytest`` (``auto``)
    runs it on both. Tests that compare the backends take ``kernel_params``.
    """
    wanted = {"cython": "cy", "python": "py"}.get(_backend.requested())
    return [p for p in kernel_params(name) if wanted in (None, p.id)]


def typed(games):
    """games_from_block's answer with each per-ply value's type beside it (60 == 60.0, but a clock changed type)."""
    records, read, rejects, filtered = games
    return ([r[:3] + tuple([(type(v).__name__, v) for v in r[k]] for k in (3, 4, 5)) + r[6:] for r in records],
            read, rejects, filtered)


# -- the scanner's differential inputs: the corpus, real games and their Hypothesis mutations ---------

def corpus_files() -> list[Path]:
    """Every PGN file of the shared corpus (plain, .zst, .bz2); none when it is absent."""
    if not DATA.exists():
        return []
    return sorted(p for p in DATA.rglob("*") if p.suffix in (".pgn", ".zst", ".bz2"))


def _real_games() -> list[bytes]:
    data = decompressed(shared("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst"))
    games = data.split(b"\n\n[")
    return [games[0] + b"\n\n"] + [b"[" + g + b"\n\n" for g in games[1:200]]


_GAMES: list[bytes] = []


def real_game(i: int) -> bytes:
    """One of 200 real lichess games (with clocks and evals), ``i`` taken modulo 200."""
    if not _GAMES:
        _GAMES.extend(_real_games())
    return _GAMES[i % len(_GAMES)]


MUTATION = st.sampled_from(["cut", "double_brace", "drop", "crlf", "insert", "swap"])
NOISE = st.sampled_from([b"{", b"}", b"(", b")", b"[", b"]", b"\n", b"\n\n", b"\r\n", b" ", b"$", b";",
                         b"%", b"\"", b"\\", b"1-0", b"*", b"#", b"\xe2\x94\x82", b"\xef\xbb\xbf",
                         b"[%clk 1:2:3]", b"[%eval x]", b"O-O+", b"e8=Q", b"12...", b"\x00", b"\xff"])


def with_draw_offers(game: bytes, every: int = 3) -> tuple[bytes, int]:
    """A real game as lichess's exporter writes it since July 2026 (lichess-org/database, Annotator.addDrawOffers,
    then Games.scala's ``replace("] } { [", "] [")``): the offer's own comment block first after the move, then
    the eval and clock block, ``12. Qd2 { White offers draw } { [%eval 0.21] [%clk 0:02:58] }``; an offer every
    ``every``-th move, named by the side that moved. Returns the text and the number of offers."""
    head, _, moves = game.partition(b"\n\n")
    parts = moves.split(b" { [%")
    out, offers = [parts[0]], 0
    for i, part in enumerate(parts[1:], 1):
        if i % every == 0:
            # the part before this block ends with the move the block follows: its number says the side
            side = b"Black" if out[-1].rsplit(b" ", 2)[-2].endswith(b"...") else b"White"
            out.append(b" { " + side + b" offers draw }")
            offers += 1
        out.append(b" { [%" + part)
    return head + b"\n\n" + b"".join(out), offers


def mutated(data: bytes, mutations) -> bytes:
    """``data`` with each of Hypothesis' ``(_, kind, where, noise)`` mutations done in turn."""
    for _, kind, where, noise in mutations:
        at = where % (len(data) + 1)
        if kind == "cut":
            data = data[:at]
        elif kind == "double_brace":
            data = data.replace(b"{", b"{{", 1 + where % 3)
        elif kind == "drop":
            data = data[:at] + data[at + 1 + where % 7:]
        elif kind == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif kind == "insert":
            data = data[:at] + noise + data[at:]
        elif kind == "swap":
            data = data[:at] + data[at:at + 40][::-1] + data[at + 40:]
    return data


def reference_cuts(data: bytes, block_size: int) -> list[tuple[int, bytes]]:
    """Blocks by the rule alone: each ends at the first cut at or after the next multiple of block_size."""
    from fastpgn.io.sources import find_cut

    out, base = [], 0
    while True:
        target = (base // block_size + 1) * block_size
        q = find_cut(data, max(target, base + 1)) if target < len(data) else -1
        if q < 0:
            if base < len(data):
                out.append((base, data[base:]))
            return out
        out.append((base, data[base:q]))
        base = q


def blocks_as_cut(found: list, want: list) -> list[tuple[int, bytes]]:
    """The cutter's blocks as ``(offset, bytes)``, a cut-short last game (split off as damage) joined back to
    the block it came from, as reference_cuts leaves it; asserts that the damage is the rule's: the input
    ends inside that game's tags, or inside its movetext (a comment or variation open, or its last line cut
    before a result)."""
    from fastpgn.scan import kernel

    got = [(b.offset, bytes(b.data)) for b in found]
    damaged = [b for b in found if b.damage is not None]
    assert damaged in ([], found[-1:])
    if damaged:
        cut_off, reason = got[-1][1], str(damaged[0].damage)
        if "the tags" in reason:
            assert cut_off.lstrip(b" \t")[:1] == b"[", reason
        else:
            _, inside = kernel.last_game(cut_off, 0, len(cut_off), at_stream_start=got[-1][0] == 0)
            assert inside and f" {inside} of its last game" in reason, reason
            assert inside != "movetext" or not cut_off.rstrip(b" \t").endswith(b"\n")
        if len(got) > len(want):
            (offset, last), (_, cut_off) = got[-2], got.pop()
            got[-1] = (offset, last + cut_off)
    return got


# -- the converter's output ------------------------------------------------------------------------

def chunk_files(folder: Path) -> list[Path]:
    """The finished chunk files of a converter's output folder, in order."""
    return sorted(p for p in folder.glob("*.part_*") if not p.name.endswith(".tmp"))


def all_lines(folder: Path) -> list[str]:
    """Every 22-field line of a converter's output folder, in order."""
    from fastpgn.oneliner import format_line, iter_lines

    return [format_line(r) for f in chunk_files(folder) for r in iter_lines(f)]


def big_input(tmp_path: Path, dump: Path, copies: int = 4) -> Path:
    """A plain ``.pgn`` of ``copies`` copies of a ``.zst`` dump's games: big enough to interrupt."""
    pgn = zstandard.ZstdDecompressor().decompressobj().decompress(dump.read_bytes())
    path = tmp_path / "big.pgn"
    path.write_bytes(pgn * copies)
    return path


def signal_after_chunks(proc: subprocess.Popen, state: Path, chunks: int, sig) -> int:
    """Send ``sig`` to a converter once its resume state records ``chunks`` chunks (or it ended); its exit code."""
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if state.exists() and json.loads(state.read_text())["progress"].get("chunk", 0) >= chunks:
            break
        time.sleep(0.005)
    proc.send_signal(sig)
    return proc.wait(30)


def stderr_on_a_terminal(cmd: list[str]) -> str:
    """What ``cmd`` writes to stderr when stderr is a terminal (a pseudo-terminal 100 columns wide)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(cmd, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:      # EIO: the child closed the terminal
            break
        if not data:
            break
        seen += data
    os.close(master)
    assert proc.wait(30) == 0
    return seen.decode()


# -- lichess's Parquet release, built from the dumps -----------------------------------------------

#: Two real dumps the release tests build a release from.
RELEASE_DUMPS = ("lichess_db_standard_rated_2013-01.head348.pgn.zst",
                 "lichess_db_standard_rated_2023-02.head15.pgn.zst")
RELEASE_STRINGS = ("Event", "Site", "White", "Black", "Result", "WhiteTitle", "BlackTitle")
RELEASE_INTS = ("WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff")
RELEASE_LATER = ("ECO", "Opening", "Termination", "TimeControl")


def official_schema():
    """The column types of lichess's Parquet release (needs pyarrow)."""
    import pyarrow as pa

    fields = [pa.field(n, pa.string()) for n in RELEASE_STRINGS] + [pa.field(n, pa.int16()) for n in RELEASE_INTS]
    fields += [pa.field("UTCDate", pa.date32()), pa.field("UTCTime", pa.time32("s"))]
    fields += [pa.field(n, pa.string()) for n in RELEASE_LATER] + [pa.field("movetext", pa.string())]
    return pa.schema(fields)


def _date(text):
    try:
        return datetime.datetime.strptime(text, "%Y.%m.%d").date()
    except (TypeError, ValueError):
        return None


def _time(text):
    try:
        return datetime.datetime.strptime(text, "%H:%M:%S").time()
    except (TypeError, ValueError):
        return None


def release_rows(pgn: bytes):
    """One row per game of ``pgn``, as the release holds it."""
    import fastpgn
    from fastpgn import schema

    games = list(fastpgn.read_games(pgn))
    ends = [g.offset for g in games[1:]] + [len(pgn)]
    rows = []
    for game, end in zip(games, ends):
        text = pgn[game.offset:end].decode("utf-8")
        movetext = text.split("\n\n", 1)[1].strip() if "\n\n" in text else ""
        h = game.headers
        row = {n: h.get(n) for n in RELEASE_STRINGS + RELEASE_LATER}
        row.update({n: schema.int16(h.get(n)) for n in RELEASE_INTS})
        row.update(UTCDate=_date(h.get("UTCDate")), UTCTime=_time(h.get("UTCTime")), movetext=movetext)
        rows.append(row)
    return rows


# -- the analyse command's tests (tests/engine) --

INSTALL = "needs Debian's stockfish: apt-get install -y stockfish"


def stockfish() -> str:
    """Debian's stockfish, found on PATH; else the test skips (fails on CI) naming the install line."""
    from fastpgn.engine import find_engine

    path = find_engine("stockfish")
    if path is None:
        missing_system_package(INSTALL)
    return path


def one_writer(table, rows: int) -> bytes:
    """What pyarrow writes for ``table`` in row groups of ``rows`` games, one ``ParquetWriter`` with
    fastpgn's settings (what the converter's row groups, encoded apart and joined, must equal)."""
    import io

    from fastpgn import arrow

    sink = io.BytesIO()
    writer = arrow.parquet_writer(sink, table.schema)
    for at in range(0, table.num_rows, rows):
        writer.write_table(table.slice(at, rows).combine_chunks(), row_group_size=rows)
    writer.close()
    return sink.getvalue()
def converter_writer(table, rows: int) -> bytes:
    """What the converter writes for ``table`` in row groups of ``rows`` games, on one thread: each row group
    encoded by ``list_chunks.encode_row_group`` (pyarrow's columns and fastpgn's list pages), then joined."""
    import io

    from fastpgn import arrow
    from fastpgn.parquet.list_chunks import ParquetFileWriter

    out = io.BytesIO()
    writer = ParquetFileWriter(out, table.schema, arrow.parquet_writer)
    writer.write_table(table, row_group_size=rows)
    writer.close()
    return out.getvalue()


DB = ("data", "lichess-db")
G2013 = (*DB, "lichess_db_standard_rated_2013-01.head348.pgn.zst")      # no clocks, almost no evals
G2021 = (*DB, "lichess_db_standard_rated_2021-10.head999.pgn.zst")      # clocks; some games with evals
G2022 = (*DB, "lichess_db_standard_rated_2022-06.head2499.pgn.zst")     # clocks; evals, mates
G2023 = (*DB, "lichess_db_standard_rated_2023-02.head15.pgn.zst")       # clocks, no evals


def fake_engine(tmp_path: Path, mode: str = "ok", *extra: str) -> tuple[str, Path]:
    """An executable that runs the fake engine in ``mode`` (``--engine`` takes a program), and its log."""
    log = tmp_path / f"fake-{mode}.log"
    script = tmp_path / f"fake-{mode}"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_ENGINE}" --mode {mode} {" ".join(extra)} '
                      f'--log "{log}" "$@"\n')
    script.chmod(0o755)
    return str(script), log


def analyse_cli(argv, capsys) -> tuple[int, str]:
    """``python -m fastpgn analyse ARGV`` in process: its exit status and stderr."""
    from fastpgn.cli.analyse import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, err


def game_texts(path: Path) -> list[str]:
    """The games of a lichess .pgn.zst as the text lichess wrote, one string each."""
    import zstandard

    raw = zstandard.ZstdDecompressor().stream_reader(path.open("rb")).read().decode()
    texts = raw.split("\n\n[Event")
    return [("" if i == 0 else "[Event") + t.rstrip("\n") + "\n\n" for i, t in enumerate(texts)]


def first_games(path: Path, n: int, tmp_path: Path) -> Path:
    out = tmp_path / f"first{n}.pgn"
    out.write_text("".join(game_texts(path)[:n]))
    return out


SPARK_INSTALL = ("apt-get install -y -qq openjdk-17-jre-headless (Java 17+) and pip install -e '.[test]' (pyspark): "
                 "the README's test command does both")


def spark_session(app: str):
    """A real Spark (local[2], UTC, no UI) for a test module's fixture: yields it, then stops it; skips,
    naming the install, where pyspark or Java is missing (CI installs both)."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("pyspark") is None:
        missing_system_package(f"pyspark is not installed: {SPARK_INSTALL}")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing_system_package(f"no Java runtime: {SPARK_INSTALL}")
    from fastpgn import spark as fs

    session = fs.session("local[2]", app, [
        ("spark.sql.session.timeZone", "UTC"), ("spark.ui.enabled", "false"),
        ("spark.sql.shuffle.partitions", "2"), ("spark.driver.memory", "1g")])
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# The corpus's 2,499 games in lichess's framing (pzstd's frames, 512 KiB each), and in one frame.
MULTIFRAME = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.multiframe.pgn.zst")
SINGLE = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")

# Games whose text holds what a cut between frames could be mistaken at: a multi-line comment holding a
# blank line and "[Event " (a game boundary by the splitting rule of docs/differences.md), a blank line
# of CRLF, escape lines, and a game of tags alone.
TRICKY = (b'[Event "a"]\n[Site "x"]\n\n1. e4 { a comment\n\n[Event "inside"]\n\n} e5 2. Nf3 1-0\n\n'
          b'[Event "b"]\r\n[White "w"]\r\n\r\n1. d4 d5 (1... Nf6 { v } 2. c4) 2. c4 *\r\n\r\n'
          b'% an escape line\n[Event "c"]\n[Black "b"]\n\n1. e4 0-1\n\n'
          b'[Event "d"]\n\n[Event "e"]\n[Result "1/2-1/2"]\n\n1. c4 c5 1/2-1/2\n')


def pzstd_layout(text: bytes, step: int, checksum: bool = True) -> bytes:
    """``text`` compressed as pzstd does: frames of ``step`` bytes of text, no content size, each behind a
    12-byte skippable frame holding its compressed size."""
    cctx = zstandard.ZstdCompressor(level=3, write_content_size=False, write_checksum=checksum)
    out = []
    for at in range(0, len(text), step):
        frame = cctx.compress(text[at:at + step])
        out += [b"\x50\x2a\x4d\x18", (4).to_bytes(4, "little"), len(frame).to_bytes(4, "little"), frame]
    return b"".join(out)
