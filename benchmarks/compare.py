"""fastpgn side by side with what users would pick instead, on the same real-games corpus.

Every contender runs as its own process, several times, interleaved (run 1
of every contender, then run 2, ...), so machine noise hits all of them
alike. Times are whole-process wall time (``time.perf_counter`` around the
process), peak RSS comes from ``/usr/bin/time -f %M`` (else ``wait4``); the
table shows medians. MB/s is always of uncompressed PGN (MB = 10**6 bytes),
whatever the contender read. The corpus is one ``make_corpus`` wrote (its
games start with ``[Event``; the ``.json`` beside it holds the oracle).

Every contender reports what it extracted (games, plies, plies with an eval,
plies with a clock); the agreement columns compare that with the oracle
counts ``make_corpus`` recorded (python-chess, per source game), and the
check column flags a contender that extracts less than it claims.

Slow contenders run on a prefix of the corpus (whole games), labelled in the
table: the pure-Python backend on ``--py-sample`` MB, python-chess
``read_game`` on ``--chess-games`` games. Their MB/s is of the sample, so
extrapolate with care (it includes the process start-up).

    python -m benchmarks.make_corpus --size 100MB --bz2
    python -m benchmarks.compare bench-data/lichess-100MB-seed0.pgn
    python -m benchmarks.compare bench-data/lichess-100MB-seed0.pgn --runs 5 --json > results.json
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.make_corpus import pzstd_frames

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
COUNTS = ("games", "plies", "evals", "clocks")
ALL = frozenset(COUNTS)
REFERENCE = "fastpgn-lines-cy"

#: Ratios the run reports: (numerator, denominator, what the ratio says). Same-size pairs also give the
#: median of their per-round ratios (round i of one against round i of the other: the interleaving's point).
PAIRS = (
    ("lichess-parquet-arrow", "fastpgn-arrow-cy-zst",
     "the release to the analysis schema against the same games' .pgn.zst to the same schema (read_arrow, both)"),
    ("convert-cy-j1-parquet-release", "convert-cy-j1-parquet",
     "the converter, -j 1 --format parquet: the release against the same games' .pgn.zst"),
    ("convert-cy-j2-parquet-release", "convert-cy-j2-parquet",
     "the converter, -j 2 --format parquet: the release against the same games' .pgn.zst"),
    ("lichess-parquet-arrow", "convert-cy-j1-parquet",
     "read_arrow over the release against the converter writing Parquet from .pgn.zst (the figure quoted before)"),
    ("lichess-parquet-arrow", "duckdb-chess",
     "fastpgn over the release against the usual route (DuckDB reads movetext, python-chess parses it; "
     "first games, extrapolated)"),
    ("fastpgn-arrow-release-uci", "rust-binding-release",
     "the release's games replayed, UCI moves out: fastpgn read_arrow(folder, uci=True) against the Rust "
     "binding's parse_games on the movetext column (boards per position, all cores)"),
    ("convert-cy-j1-pgn-elo2000", "pgn-extract-elo2000",
     "keep the games where both players are rated 2000 or more, plain .pgn, one core: fastpgn's converter "
     "--min-elo 2000 against pgn-extract -t (WhiteElo >= 2000, BlackElo >= 2000)"),
    ("convert-cy-j1-pgn-player", "pgn-extract-player",
     "keep one player's games, plain .pgn, one core: fastpgn's converter --player against pgn-extract -Tp"),
    ("convert-cy-j1-pgn-validate", "pgn-extract",
     "validate every move, plain .pgn, one core: fastpgn's converter --validate against pgn-extract "
     "(which validates and rewrites)"),
)

#: Pairs that must keep the same games (a filter's two sides): the ratios table says whether their counts agree.
SAME_GAMES = frozenset({("convert-cy-j1-pgn-elo2000", "pgn-extract-elo2000"),
                        ("convert-cy-j1-pgn-player", "pgn-extract-player"),
                        ("convert-cy-j1-pgn-validate", "pgn-extract"),
                        ("fastpgn-arrow-release-uci", "rust-binding-release")})


# ------------------------------------------------------------------ inputs

@dataclass
class Corpus:
    pgn: Path
    zst: Path | None
    bz2: Path | None
    manifest: dict | None
    nbytes: int
    frames: Path | None = None   # the same PGN in lichess's framing (pzstd -p10 -19: independent frames)

    def expected(self, n_games: int | None = None) -> dict | None:
        """Oracle counts for the first ``n_games`` games (all when None); None without an oracle."""
        m = self.manifest
        if not m or not m.get("oracle"):
            return None
        order = m["order"] if n_games is None else m["order"][:n_games]
        oracle = m["oracle"]
        return {"games": len(order), **{k: sum(oracle[k][i] for i in order) for k in COUNTS[1:]}}


def _sibling(pgn: Path, suffix: str) -> Path | None:
    p = Path(str(pgn) + suffix)
    return p if p.exists() else None


def load_corpus(pgn: Path) -> Corpus:
    manifest_path = pgn.with_suffix(".json")
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else None
    return Corpus(pgn, _sibling(pgn, ".zst"), _sibling(pgn, ".bz2"), manifest, pgn.stat().st_size,
                  _sibling(pgn, ".pzstd.zst"))


def frames_pairs(jobs: int) -> tuple:
    """The ratios of the section in lichess's framing, at ``-j jobs``: each job beside the decoders."""
    mf = "frames-"
    return (
        (f"{mf}convert-cy-j{jobs}-elo2200", f"{mf}zstd",
         f"decode-bound: the converter --min-elo 2200 to lines at -j {jobs} against zstd -dc's single stream, "
         "both of lichess's framing (target: at least 1.0, out of reach of one decoder)"),
        (f"{mf}arrow-heads-j{jobs}", f"{mf}py-zstd",
         f"decode-bound: read_arrow(jobs={jobs}) of three header columns against python-zstandard's single-stream "
         "decode of the same file (target: at least 1.0)"),
        (f"{mf}convert-cy-j{jobs}-elo2200", f"{mf}pzstd-p{jobs}",
         f"the same filter against pzstd -d -p {jobs}, the frames decoded on {jobs} threads (nothing else done)"),
        (f"{mf}convert-cy-j{jobs}", f"{mf}pzstd-p{jobs}",
         f"the converter to lines at -j {jobs} against pzstd -d -p {jobs}"),
        (f"{mf}convert-cy-j{jobs}-parquet", f"{mf}pzstd-p{jobs}",
         f"the converter to Parquet at -j {jobs} against pzstd -d -p {jobs}"),
        (f"{mf}convert-cy-j{jobs}", f"convert-cy-j{jobs}",
         f"the converter to lines at -j {jobs}: lichess's framing against the single-frame .pgn.zst (target: 1.0 "
         "or more)"),
        (f"{mf}convert-cy-j{jobs}-parquet", f"convert-cy-j{jobs}-parquet",
         f"the converter to Parquet at -j {jobs}: lichess's framing against the single-frame .pgn.zst "
         "(target: 1.0 or more)"),
        (f"{mf}convert-cy-j{jobs}-elo2200", f"convert-cy-j{jobs}-elo2200",
         "the filter: lichess's framing against the single-frame .pgn.zst"),
        (f"{mf}arrow-heads-j{jobs}", f"arrow-heads-j{jobs}",
         "read_arrow of three header columns: lichess's framing against the single-frame .pgn.zst"),
        (f"{mf}pzstd-p{jobs}", f"{mf}zstd", f"pzstd -d -p {jobs} against zstd -dc: what decoding the frames on "
         f"{jobs} threads gives"),
    )


def game_starts(data: bytes) -> list[int]:
    """Offsets where games start: an ``[Event `` line at the start or after a blank line."""
    starts = [0] if data.startswith(b"[Event ") else []
    i = data.find(b"\n\n[Event ")
    while i >= 0:
        starts.append(i + 2)
        i = data.find(b"\n\n[Event ", i + 2)
    return starts


@dataclass
class Sample:
    label: str
    pgn: Path
    zst: Path
    games: int
    nbytes: int
    expected: dict | None


def make_sample(corpus: Corpus, workdir: Path, *, games: int | None = None, nbytes: int | None = None) -> Sample:
    """The corpus's first whole games, ``games`` of them or up to ``nbytes`` bytes, as .pgn and .pgn.zst."""
    import zstandard

    want = nbytes if nbytes is not None else 4_000 * games
    with open(corpus.pgn, "rb") as f:
        data = f.read(want + (4 << 20))
    whole = len(data) >= corpus.nbytes
    bounds = game_starts(data) + ([len(data)] if whole else [])   # bounds[n]: end of the first n games
    avail = len(bounds) - 1
    if games is not None:
        n = min(games, avail)
    else:
        n = max([i for i, b in enumerate(bounds) if b <= nbytes] + [1])
        n = min(n, avail)
    if whole and n >= avail:
        return Sample("", corpus.pgn, corpus.zst or corpus.pgn, avail, corpus.nbytes, corpus.expected())
    chunk = data[:bounds[n]]
    stem = workdir / f"{corpus.pgn.stem}.first{n}"
    pgn = Path(f"{stem}.pgn")
    zst = Path(f"{stem}.pgn.zst")
    pgn.write_bytes(chunk)
    zst.write_bytes(zstandard.ZstdCompressor(level=3).compress(chunk))
    return Sample(f"first {n:,} games, {len(chunk) / 1e6:.1f} MB", pgn, zst, n, len(chunk), corpus.expected(n))


# ------------------------------------------------------------------ contenders

@dataclass
class Contender:
    name: str
    label: str
    argv: list
    input: Path                 # the file the contender reads
    nbytes: int                 # uncompressed PGN bytes it covers
    section: str = "end-to-end"  # end-to-end | kernel | floor
    env: dict = field(default_factory=dict)
    claims: frozenset = ALL     # counts it claims to extract
    expected: dict | None = None
    sample: str = ""            # "" = whole corpus, else a label of the prefix it read
    note: str = ""
    stdout_file: bool = False   # keep stdout (pgn-extract) / else stdout is parsed for RESULT
    post: object = None         # callable(stdout_text, workdir) -> counts dict
    times: list = field(default_factory=list)
    cpu: list = field(default_factory=list)   # user+sys seconds of the process and its children, per run
    rss_kb: list = field(default_factory=list)
    inner: list = field(default_factory=list)
    counts: dict | None = None
    error: str = ""


def _py(module: str, *args, backend: str | None = None) -> tuple[list, dict]:
    env = {"PYTHONPATH": str(ROOT)}
    if backend:
        env["FASTPGN_IMPLEMENTATION"] = backend
    return [PYTHON, "-m", module, *map(str, args)], env


def _importable(module: str, backend: str | None = None) -> tuple[bool, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if backend:
        env["FASTPGN_IMPLEMENTATION"] = backend
    r = subprocess.run([PYTHON, "-c", f"import {module}"], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        return True, ""
    last = (r.stderr.strip().splitlines() or ["?"])[-1]
    return False, f"`import {module}` failed: {last}"


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "?"


def _no_counts(_text: str, _work: Path) -> dict:
    return {k: None for k in COUNTS}


def _grep_post(text: str, _work: Path) -> dict:
    return {"games": int(text.strip() or 0), "plies": None, "evals": None, "clocks": None}


def _pgn_extract_post(_text: str, work: Path) -> dict:
    """Count what pgn-extract wrote: games, PlyCount tags, and the eval/clock comments it passed through."""
    out = work / "pgn-extract.out.pgn"
    games = plies = evals = clocks = 0
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("[Event "):
                games += 1
            elif line.startswith("[PlyCount "):
                plies += int(line.split('"')[1])
            else:
                evals += line.count("[%eval")
                clocks += line.count("[%clk")
    out.unlink()
    return {"games": games, "plies": plies, "evals": evals, "clocks": clocks}


def _pgn_extract_games(_text: str, work: Path) -> dict:
    """Count the games pgn-extract kept (its output's ``[Event`` lines)."""
    out = work / "pgn-extract.out.pgn"
    games = 0
    with open(out, "rb") as f:
        for line in f:
            games += line.startswith(b"[Event ")
    out.unlink()
    return {"games": games, "plies": None, "evals": None, "clocks": None}


def busiest_player(pgn: Path) -> tuple[str, int]:
    """The player with the most games of ``pgn`` whose name pgn-extract's prefix match and fastpgn's
    case-blind match read alike (no other name starts with it, ignoring case); and their game count."""
    from collections import Counter

    counts: Counter = Counter()
    with open(pgn, "rb") as f:
        for line in f:
            if line.startswith((b"[White \"", b"[Black \"")):
                counts[line[8:].split(b'"', 1)[0].decode("utf-8", "replace")] += 1
    folded = sorted({n.casefold() for n in counts})
    for name, n in counts.most_common(50):
        low = name.casefold()
        i = folded.index(low)
        if i + 1 < len(folded) and folded[i + 1].startswith(low):
            continue
        if sum(1 for other in counts if other.casefold() == low) == 1 and name.isascii() and name.strip() == name:
            return name, n
    return "", 0


def pgn_extract() -> str | None:
    """pgn-extract's path (Debian puts it in /usr/games, often not on the PATH); None when not installed."""
    return shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")


def py313_with(module: str, given: str | None) -> tuple[str | None, str]:
    """A Python 3.13 interpreter that imports ``module`` (bulletchess needs 3.13): ``given``, else
    ``bench-data/py313``, else pyenv's 3.13, else ``python3.13`` on the PATH; or None and why not."""
    import glob

    tried = [given] if given else []
    tried += [str(ROOT / "bench-data" / "py313" / "bin" / "python")]
    tried += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python")), reverse=True)
    tried += [shutil.which("python3.13") or ""]
    found = [t for t in tried if t and os.path.exists(t)]
    for exe in found:
        r = subprocess.run([exe, "-c", f"import {module}"], capture_output=True, text=True)
        if r.returncode == 0:
            return exe, ""
    if not found:
        return None, "no Python 3.13 (pyenv install 3.13, or --py313 PATH)"
    return None, f"no Python 3.13 with {module} ({', '.join(found)}; benchmarks/setup.sh makes bench-data/py313)"


def _converter_post(_text: str, work: Path) -> dict:
    """Read the converter's chunks back (untimed) and count the 22-field lines."""
    from benchmarks.contenders import _line_counts

    games = plies = evals = clocks = 0
    chunks = sorted(p for p in (work / "conv").iterdir() if ".part_" in p.name)
    for chunk in chunks:
        if chunk.name.endswith(".gz"):
            fh = gzip.open(chunk, "rt", encoding="utf-8")
        elif chunk.name.endswith(".zst"):
            import io

            import zstandard

            fh = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(open(chunk, "rb")), encoding="utf-8")
        else:
            fh = open(chunk, encoding="utf-8")
        with fh:
            for line in fh:
                p, e, c = _line_counts(line.rstrip("\n"))
                games += 1
                plies += p
                evals += e
                clocks += c
    return {"games": games, "plies": plies, "evals": evals, "clocks": clocks}


def _parquet_post(_text: str, work: Path) -> dict:
    """Read the converter's Parquet chunks back (untimed) and count games, plies, evals and clocks."""
    import pyarrow.parquet as pq

    from benchmarks.contenders import _arrow_counts

    games = plies = evals = clocks = 0
    for chunk in sorted(p for p in (work / "conv").iterdir() if p.name.endswith(".parquet")):
        for batch in pq.ParquetFile(chunk).iter_batches(columns=["plies", "eval_cp", "eval_mate", "clock"]):
            g, p, e, c = _arrow_counts(batch)
            games, plies, evals, clocks = games + g, plies + p, evals + e, clocks + c
    return {"games": games, "plies": plies, "evals": evals, "clocks": clocks}


def converter_help() -> tuple[str | None, str]:
    """The converter's ``--help`` text, or None and why it is not usable."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        r = subprocess.run([PYTHON, "-m", "fastpgn", "--help"], env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "`python -m fastpgn --help` timed out"
    if r.returncode == 0:
        return r.stdout, ""
    last = (r.stderr.strip().splitlines() or ["?"])[-1]
    return None, f"the dump converter is not there yet (`python -m fastpgn --help`: {last})"


def _board_backend() -> str:
    """``cython``/``python``: the live board kernel with a ``san_to_uci``; ``""`` when there is none."""
    r = subprocess.run([PYTHON, "-c", "from benchmarks.contenders import validation_hook as h; "
                        "import fastpgn.board._kernel as b; print(b.BACKEND if h() else '')"],
                       env=dict(os.environ, PYTHONPATH=str(ROOT), FASTPGN_IMPLEMENTATION="auto"),
                       capture_output=True, text=True)
    return r.stdout.strip()


def build_contenders(corpus: Corpus, args, work: Path, notes: list) -> list[Contender]:
    cs: list[Contender] = []
    full = corpus.expected()
    pgn, zst, bz2 = corpus.pgn, corpus.zst, corpus.bz2
    jobs = os.cpu_count() or 1

    cy_ok, cy_why = _importable("fastpgn.scan._scan_cy")
    if not cy_ok:
        notes.append(f"fastpgn Cython kernel skipped: {cy_why} (build it with `pip install -e .` or cythonize)")
    py_sample = make_sample(corpus, work, nbytes=int(args.py_sample * 1e6))
    chess_sample = make_sample(corpus, work, games=args.chess_games)

    def add(name, label, module_args, backend=None, sample=None, input_=None, **kw):
        argv, env = _py(*module_args, backend=backend)
        s = sample
        cs.append(Contender(
            name, label, argv, input_ or (s.pgn if s else pgn), s.nbytes if s else corpus.nbytes,
            env=env, expected=s.expected if s else full, sample=s.label if s else "", **kw))

    def sample_pgn(s):
        return s.pgn if s else pgn

    # lichess's Parquet release of the same games (untimed setup), and of the python-chess sample's games
    release = release_sample = None
    if cy_ok and _importable("pyarrow")[0]:
        from benchmarks.lichess_release import write_release

        release = work / "lichess-release"
        release_sample = work / f"lichess-release-first{chess_sample.games}"
        wanted = not args.only or "release" in args.only or "duckdb" in args.only
        if not getattr(args, "list", False) and wanted:
            if not release.exists():
                write_release(pgn, release)
            if not release_sample.exists():
                write_release(chess_sample.pgn, release_sample)
    else:
        notes.append("lichess's Parquet release rows skipped: they need the Cython kernel and pyarrow")

    # fastpgn, whole process
    backends = ([("cy", "cython", None)] if cy_ok else []) + [("py", "python", py_sample)]
    for tag, backend, s in backends:
        add(f"fastpgn-lines-{tag}", f"fastpgn read_lines ({backend}), .pgn",
            ("benchmarks.contenders", "fastpgn-lines", sample_pgn(s)), backend, s,
            note="the 22-field line of every game")
        add(f"fastpgn-games-{tag}", f"fastpgn read_games ({backend}), .pgn",
            ("benchmarks.contenders", "fastpgn-games", sample_pgn(s)), backend, s,
            note="Game records: all headers, SAN, evals, clocks")
        add(f"fastpgn-headers-{tag}", f"fastpgn read_headers ({backend}), .pgn",
            ("benchmarks.contenders", "fastpgn-headers", sample_pgn(s)), backend, s, claims=frozenset({"games"}),
            note="headers only: each game's headers dict, offset and number; movetext skipped (target: 0.5x grep)")
        add(f"fastpgn-arrow-{tag}", f"fastpgn read_arrow ({backend}), .pgn",
            ("benchmarks.contenders", "fastpgn-arrow", sample_pgn(s)), backend, s,
            note="record batches of the analysis schema (typed columns, per-ply lists)")
        if tag == "cy" and zst:
            add("fastpgn-arrow-cy-zst", "fastpgn read_arrow (cython), .pgn.zst",
                ("benchmarks.contenders", "fastpgn-arrow", zst), backend, None, input_=zst,
                note="decompression included; the denominator of the release's ratio (same games, same schema)")
        if tag == "cy" and release is not None:
            add("lichess-parquet-arrow", "fastpgn read_arrow (cython), lichess's Parquet release",
                ("benchmarks.contenders", "lichess-parquet-arrow", release), backend, None, input_=release,
                note="the same games in the official layout: rows written as PGN by the kernel (release_text), "
                     "then the same scanner")
        if tag == "cy" and zst:
            add("fastpgn-games-cy-zst", "fastpgn read_games (cython), .pgn.zst",
                ("benchmarks.contenders", "fastpgn-games", zst), backend, None, input_=zst,
                note="decompression included")

    conv_help, conv_why = converter_help()
    if conv_help is None:
        notes.append(f"fastpgn converter skipped: {conv_why}")
    else:
        for tag, backend, s in backends:
            src = (s.zst if s else zst) or sample_pgn(s)
            for j in sorted({1, jobs}):
                add(f"convert-{tag}-j{j}", f"python -m fastpgn ({backend}) -j {j}, .pgn.zst -> .gz",
                    ("fastpgn", src, 100_000, "-j", j, "-o", "{OUT}", "--compression", "gz", "-q"),
                    backend, s, input_=src, post=_converter_post,
                    note="22-field lines in gz chunks of 100,000 games; counts read back from the chunks")
        if "--min-elo" in conv_help:
            for tag, backend, s in backends:
                src = (s.zst if s else zst) or sample_pgn(s)
                for j in sorted({1, jobs}):
                    add(f"convert-{tag}-j{j}-filtered", f"python -m fastpgn ({backend}) -j {j} --min-elo 1900, "
                        ".pgn.zst -> .gz",
                        ("fastpgn", src, 100_000, "-j", j, "-o", "{OUT}", "--compression", "gz", "-q",
                         "--min-elo", 1900),
                        backend, s, input_=src, post=_converter_post, claims=frozenset(),
                        note="the converter keeping the games where a player is rated 1,900 or more (11% of the "
                             "corpus); the others' movetext is skipped (target: 1.5x the unfiltered converter)")
        if "--format" in conv_help and _importable("pyarrow")[0]:
            for tag, backend, s in backends:
                src = (s.zst if s else zst) or sample_pgn(s)
                for j in sorted({1, jobs}):
                    add(f"convert-{tag}-j{j}-parquet", f"python -m fastpgn ({backend}) -j {j} --format parquet, "
                        ".pgn.zst -> .parquet",
                        ("fastpgn", src, 100_000, "-j", j, "-o", "{OUT}", "--format", "parquet", "-q"),
                        backend, s, input_=src, post=_parquet_post,
                        note="the analysis schema, Parquet chunks of 100,000 games (target: 0.6x the lines' MB/s)")
            if release is not None:
                for j in sorted({1, jobs}):
                    add(f"convert-cy-j{j}-parquet-release", f"python -m fastpgn (cython) -j {j} --format parquet, "
                        "lichess's Parquet release -> .parquet",
                        ("fastpgn", release, 100_000, "-j", j, "-o", "{OUT}", "--format", "parquet", "-q"),
                        "cython", None, input_=release, post=_parquet_post,
                        note="the same games in the official layout, converted to the same schema and chunks")
        else:
            notes.append("fastpgn Parquet converter skipped: no --format option or no pyarrow")
        if "--validate" in conv_help:
            board = _board_backend()
            tag, backend, s = ("cy", "cython", None) if cy_ok and board == "cython" else ("py", "python", py_sample)
            src = (s.zst if s else zst) or sample_pgn(s)
            for j in sorted({1, jobs}):
                add(f"convert-{tag}-j{j}-validate",
                    f"python -m fastpgn ({backend}) -j {j} --validate, .pgn.zst -> .gz",
                    ("fastpgn", src, 100_000, "-j", j, "-o", "{OUT}", "--compression", "gz", "-q", "--validate"),
                    backend, s, input_=src, post=_converter_post,
                    note=f"as above, every move replayed on fastpgn's board ({board or '?'} board kernel)")
            if "--uci" in conv_help:
                for j in sorted({1, jobs}):
                    add(f"convert-{tag}-j{j}-uci",
                        f"python -m fastpgn ({backend}) -j {j} --uci, .pgn.zst -> .gz",
                        ("fastpgn", src, 100_000, "-j", j, "-o", "{OUT}", "--compression", "gz", "-q", "--uci"),
                        backend, s, input_=src, post=_converter_post,
                        note="as --validate, with the UCI moves written in field 20 "
                             "(the board's target: lines with UCI moves)")
        else:
            notes.append("fastpgn converter with validation skipped: no --validate option yet")

    # fastpgn with SAN validation through the kernel's moves_hook (the reader-level hook)
    val_ok, val_why = _importable("fastpgn.board._kernel")
    if val_ok and cy_ok:
        board = _board_backend()
        if board:
            s = py_sample if board == "python" else None
            add("fastpgn-validate-cy", f"fastpgn lines + SAN validation (scan cython, board {board})",
                ("benchmarks.contenders", "fastpgn-validate", sample_pgn(s)),
                "cython" if board == "cython" else "auto", s,
                note="every move checked on a board (moves_hook)")
        else:
            notes.append("fastpgn with validation skipped: fastpgn.board._kernel.kernel has no san_to_uci yet")
    else:
        notes.append("fastpgn with validation skipped: "
                     + (val_why if not val_ok else "needs the Cython scanner"))

    # in-memory kernel, timed inside the process
    for tag, backend, s in backends:
        for kind in ("lines", "games", "columns"):
            add(f"kernel-{kind}-{tag}", f"kernel {kind}_from_block ({backend}), in memory",
                ("benchmarks.contenders", f"kernel-{kind}", sample_pgn(s)), backend, s, section="kernel",
                note="4 MiB game-aligned blocks already in memory; kernel calls timed inside the process")
        add(f"memory-lines-{tag}", f"read_lines over bytes in memory ({backend})",
            ("benchmarks.contenders", "memory-lines", sample_pgn(s)), backend, s, section="kernel",
            note="read_lines(bytes) whole, the file read before the timer: blocks, kernel, str lines "
                 "(target: within 1.3x of kernel-lines' time)")

    # peers
    add("baseline-lichess-db-parser", "str-split baseline (python-lichess-db-pgn-parser style), .pgn",
        ("benchmarks.baseline_lichess_db_parser", pgn, "-o", os.devnull),
        note="pure Python, line by line, str.split; same 22-field line")

    chess_ok, chess_why = _importable("chess.pgn")
    if chess_ok:
        v = _version("chess")
        add("chess-games", f"python-chess {v} read_game + eval()/clock()",
            ("benchmarks.contenders", "chess-games", chess_sample.pgn), None, chess_sample,
            note="validates every move; builds a game tree")
        pandas_ok, pandas_why = _importable("pandas")
        if pandas_ok:
            add("chess-parquet", f"python-chess {v} -> pandas -> to_parquet",
                ("benchmarks.contenders", "chess-parquet", chess_sample.pgn), None, chess_sample,
                note="the usual script: a row per game (headers, SAN, evals, clocks), DataFrame.to_parquet")
        else:
            notes.append(f"python-chess -> pandas -> Parquet skipped: {pandas_why} (pip install pandas)")
        duckdb_ok, duckdb_why = _importable("duckdb")
        if duckdb_ok and release_sample is not None:
            add("duckdb-chess", f"DuckDB {_version('duckdb')} reads movetext, python-chess {v} parses it",
                ("benchmarks.contenders", "duckdb-chess", release_sample), None, chess_sample,
                input_=release_sample,
                note="the usual route over lichess's Parquet release: DuckDB reads the rows (headers typed), "
                     "python-chess reads each movetext (SAN, evals, clocks); the release of the first games")
        elif not duckdb_ok:
            notes.append(f"DuckDB + python-chess skipped: {duckdb_why} (pip install duckdb)")
        add("chess-headers", f"python-chess {v} read_headers",
            ("benchmarks.contenders", "chess-headers", pgn), claims=frozenset({"games"}),
            note="headers only, movetext skipped")
    else:
        notes.append(f"python-chess skipped: {chess_why} (pip install chess)")

    rust_ok, rust_why = _importable("rust_pgn_reader_python_binding")
    if rust_ok:
        v = _version("rust-pgn-reader-python-binding")
        add("rust-binding", f"rust-pgn-reader-python-binding {v}, {jobs} threads",
            ("benchmarks.contenders", "rust-binding", pgn),
            note="UCI moves only (no SAN); mate evals come back as NaN; games split in Python")
    else:
        notes.append(f"rust-pgn-reader-python-binding skipped: {rust_why} "
                     "(pip install rust-pgn-reader-python-binding)")

    pe = pgn_extract()
    if pe:
        cs.append(Contender(
            "pgn-extract", "pgn-extract (validate + rewrite)",
            [pe, "--quiet", "--plycount", "-o", "{WORK}/pgn-extract.out.pgn", str(pgn)],
            pgn, corpus.nbytes, section="jobs", expected=full, post=_pgn_extract_post,
            note="C; validates SAN, writes PGN; evals/clocks only passed through as comments"))
    else:
        notes.append("pgn-extract skipped: not installed (apt-get install pgn-extract; benchmarks/setup.sh)")

    # the jobs users run pgn-extract for, beside fastpgn's converter doing the same on the same plain .pgn
    if conv_help is not None and cy_ok:
        jobs_rows = [("elo2000", ("--min-elo", 2000), "--min-elo 2000 (both players)")]
        player, player_games = busiest_player(pgn)
        if player:
            jobs_rows.append(("player", ("--player", player), f"--player {player} ({player_games:,} games)"))
        jobs_rows.append(("validate", ("--validate",), "--validate"))
        for tag, flags, what in jobs_rows:
            add(f"convert-cy-j1-pgn-{tag}", f"python -m fastpgn (cython) -j 1 {what}, .pgn -> .gz",
                ("fastpgn", pgn, 100_000, "-j", 1, "-o", "{OUT}", "--compression", "gz", "-q", *flags),
                "cython", None, section="jobs", post=_converter_post,
                claims=ALL if tag == "validate" else frozenset(),
                note="the converter on the plain .pgn pgn-extract reads, one worker; counts read back from the chunks")
        if pe:
            tags = work / "elo2000.tags"
            tags.write_text('WhiteElo >= "2000"\nBlackElo >= "2000"\n')
            cs.append(Contender(
                "pgn-extract-elo2000", "pgn-extract -t (WhiteElo >= 2000, BlackElo >= 2000)",
                [pe, "--quiet", "-s", "-t", str(tags), "-o", "{WORK}/pgn-extract.out.pgn", str(pgn)],
                pgn, corpus.nbytes, section="jobs", claims=frozenset(), expected=full, post=_pgn_extract_games,
                note="C; tag criteria from a file, relational Elo match; the kept games written as PGN"))
            if player:
                cs.append(Contender(
                    "pgn-extract-player", f"pgn-extract -Tp{player}",
                    [pe, "--quiet", "-s", f"-Tp{player}", "-o", "{WORK}/pgn-extract.out.pgn", str(pgn)],
                    pgn, corpus.nbytes, section="jobs", claims=frozenset(), expected=full, post=_pgn_extract_games,
                    note="C; a player of either colour (prefix match: the name is chosen so that it is exact)"))

    # the Rust binding's Hugging Face route: the release's movetext column, every position's board
    if rust_ok and release is not None:
        add("rust-binding-release", f"rust-pgn-reader-python-binding {_version('rust-pgn-reader-python-binding')} "
            f"parse_games, lichess's Parquet release movetext, {jobs} threads",
            ("benchmarks.contenders", "rust-binding-release", release), None, None, input_=release,
            note="pyarrow reads the movetext column in 10,000-row batches, parse_games replays them: a board per "
                 "position, UCI squares, clocks, evals (mate evals come back as NaN); no header columns")
        add("fastpgn-arrow-release-uci", "fastpgn read_arrow(folder, uci=True) (cython), lichess's Parquet release",
            ("benchmarks.contenders", "fastpgn-arrow-uci", release), "cython", None, input_=release,
            note="the analysis schema with every move replayed on fastpgn's board, the uci column; one core")

    # bulletchess's PGN reader (a C extension for Python 3.13), in that interpreter
    py313, py313_why = py313_with("bulletchess", getattr(args, "py313", None))
    if py313:
        r = subprocess.run([py313, "-c", "from importlib.metadata import version; print(version('bulletchess'))"],
                           capture_output=True, text=True)
        cs.append(Contender(
            "bulletchess", f"bulletchess {r.stdout.strip() or '?'} PGNFile (Python 3.13)",
            [py313, "-m", "benchmarks.contenders", "bulletchess", str(chess_sample.pgn)], chess_sample.pgn,
            chess_sample.nbytes, env={"PYTHONPATH": str(ROOT)}, claims=frozenset({"games", "plies"}),
            expected=chess_sample.expected, sample=chess_sample.label,
            note="C extension: tags and every move replayed (legal Move objects); no evals or clocks"))
    else:
        notes.append(f"bulletchess skipped: {py313_why}")

    # lichess's framing (pzstd -p10 -19): the decode-bound jobs and full conversions beside the decoders
    mf = corpus.frames
    if mf is None:
        notes.append("lichess's framing skipped: no .pgn.pzstd.zst beside the corpus (python -m "
                     "benchmarks.make_corpus --pzstd, or benchmarks/setup.sh)")
    elif conv_help is not None and cy_ok:
        head = "the decode-bound jobs: "
        for prefix, src, where in (("frames-", mf, "lichess's framing"), ("", zst, "single frame")):
            if src is None:
                continue
            what = f"{'.pgn.pzstd.zst' if prefix else '.pgn.zst'} ({where})"
            add(f"{prefix}convert-cy-j{jobs}-elo2200", f"python -m fastpgn (cython) -j {jobs} --min-elo 2200, {what}",
                ("fastpgn", src, 100_000, "-j", jobs, "-o", "{OUT}", "--compression", "gz", "-q", "--min-elo", 2200),
                "cython", None, input_=src, section="frames", post=_converter_post, claims=frozenset(),
                note=head + "a filter keeping few games (both players 2200 or more), lines in gz chunks")
            add(f"{prefix}arrow-heads-j{jobs}", f"fastpgn read_arrow(jobs={jobs}) of white_elo, black_elo, result, "
                f"{what}", ("benchmarks.contenders", f"fastpgn-arrow-heads-j{jobs}", src), "cython", None,
                input_=src, section="frames", claims=frozenset({"games"}),
                note=head + "three header columns, the kernel's headers-only work")
            if prefix:
                add(f"{prefix}convert-cy-j{jobs}", f"python -m fastpgn (cython) -j {jobs}, {what} -> .gz",
                    ("fastpgn", src, 100_000, "-j", jobs, "-o", "{OUT}", "--compression", "gz", "-q"),
                    "cython", None, input_=src, section="frames", post=_converter_post,
                    note="the full conversions: 22-field lines in gz chunks, the analysis schema in Parquet chunks")
                if "--format" in conv_help and _importable("pyarrow")[0]:
                    add(f"{prefix}convert-cy-j{jobs}-parquet",
                        f"python -m fastpgn (cython) -j {jobs} --format parquet, {what} -> .parquet",
                        ("fastpgn", src, 100_000, "-j", jobs, "-o", "{OUT}", "--format", "parquet", "-q"),
                        "cython", None, input_=src, section="frames", post=_parquet_post,
                        note="the full conversions: 22-field lines in gz chunks, the analysis schema in Parquet "
                             "chunks")
        if shutil.which("zstd"):
            cs.append(Contender("frames-zstd", "zstd -dc > /dev/null, lichess's framing", ["zstd", "-dc", str(mf)],
                                mf, corpus.nbytes, section="frames", claims=frozenset(), stdout_file=True,
                                post=_no_counts, note="the single-stream floor: one thread decodes every frame"))
        add("frames-py-zstd", "Python zstandard, 1 MiB reads across frames, lichess's framing",
            ("benchmarks.contenders", "floor-zstd", mf), input_=mf, section="frames", claims=frozenset(),
            note="the single-stream floor: one thread decodes every frame")
        if shutil.which("pzstd"):
            for n in sorted({1, 2, jobs} & set(range(1, jobs + 1))):
                cs.append(Contender(f"frames-pzstd-p{n}", f"pzstd -d -p {n} -c > /dev/null, lichess's framing",
                                    ["pzstd", "-d", "-q", "-p", str(n), "-c", str(mf)], mf, corpus.nbytes,
                                    section="frames", claims=frozenset(), stdout_file=True, post=_no_counts,
                                    note="the frames decoded on N threads, nothing else: what a parallel decoder "
                                         "can reach"))
        else:
            notes.append("pzstd rows skipped: pzstd not installed (Debian package zstd)")

    # floors
    cs.append(Contender("grep", "grep -c '^\\[Event '", ["grep", "-c", "^\\[Event ", str(pgn)], pgn,
                        corpus.nbytes, section="floor", claims=frozenset({"games"}), expected=full,
                        post=_grep_post))
    add("read", "Python read() in 1 MiB pieces, .pgn", ("benchmarks.contenders", "floor-read", pgn),
        section="floor", claims=frozenset())
    if zst:
        if shutil.which("zstd"):
            cs.append(Contender("zstd", "zstd -dc > /dev/null", ["zstd", "-dc", str(zst)], zst,
                                corpus.nbytes, section="floor", claims=frozenset(), stdout_file=True,
                                post=_no_counts))
        else:
            notes.append("zstd -dc floor skipped: zstd not installed")
        add("py-zstd", "Python zstandard, 1 MiB reads", ("benchmarks.contenders", "floor-zstd", zst),
            input_=zst, section="floor", claims=frozenset())
    else:
        notes.append("zstd floors skipped: no .pgn.zst beside the corpus")
    if bz2:
        add("py-bz2", "Python bz2, 1 MiB reads", ("benchmarks.contenders", "floor-bz2", bz2),
            input_=bz2, section="floor", claims=frozenset())
    else:
        notes.append("bz2 floor skipped: no .pgn.bz2 (run make_corpus with --bz2)")

    if args.only:
        keep = set(args.only.split(","))
        cs = [c for c in cs if c.name in keep or c.name == REFERENCE]
    if args.skip:
        drop = set(args.skip.split(","))
        cs = [c for c in cs if c.name not in drop]
    return cs


# ------------------------------------------------------------------ running

TIME = shutil.which("time", path="/usr/bin:/bin")


def run_once(c: Contender, work: Path, timeout: float) -> None:
    """Run ``c`` once as its own process; record wall time, peak RSS and (once) its counts.

    Peak RSS comes from ``/usr/bin/time -f %M`` when present: a child forked
    straight from this (large) Python process inherits its RSS high-water mark
    at exec, so ``wait4`` alone would report at least this process's size.
    """
    run_dir = work / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    (run_dir / "conv").mkdir(parents=True)
    argv = [a.replace("{OUT}", str(run_dir / "conv")).replace("{WORK}", str(run_dir)) for a in c.argv]
    rss_file = run_dir / "rss"
    if TIME:
        argv = [TIME, "-f", "%M", "-o", str(rss_file)] + argv
    env = dict(os.environ, **c.env)
    # This machine reclaims cold page-cache pages within seconds (DAMON), so
    # the input is read once more right before the timer starts.
    warm_cache([c.input])
    out_path = run_dir / "stdout"
    err_path = run_dir / "stderr"
    with open(out_path if not c.stdout_file else os.devnull, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=str(ROOT), start_new_session=True)
        timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace") if not c.stdout_file else ""
    stderr = err_path.read_text(errors="replace")
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        c.error = f"exit {proc.returncode}" + (" (timeout)" if elapsed >= timeout else "") + f": {last}"
        return
    counts = None
    if c.post is not None:
        if c.counts is None:
            counts = c.post(stdout, run_dir)
    else:
        for line in (stdout + "\n" + stderr).splitlines():
            if line.startswith("RESULT "):
                counts = json.loads(line[7:])
        if counts is None:
            c.error = "printed no RESULT line"
            return
        if "inner_seconds" in counts:
            c.inner.append(counts.pop("inner_seconds"))
    if counts is not None and c.counts is None:
        c.counts = counts
    c.times.append(elapsed)
    c.cpu.append(usage.ru_utime + usage.ru_stime)
    rss = usage.ru_maxrss
    if TIME and rss_file.exists():
        lines = rss_file.read_text().split()
        if lines and lines[-1].isdigit():
            rss = int(lines[-1])
    c.rss_kb.append(rss)


def warm_cache(paths) -> None:
    for p in paths:
        if p and Path(p).is_file():    # a folder (lichess's Parquet release) is read as it goes
            with open(p, "rb") as f:
                while f.read(1 << 24):
                    pass


# ------------------------------------------------------------------ report

def agreement(c: Contender) -> tuple[dict, str]:
    """Per count: 'ok', '—' (not extracted), or the relative difference; and the check verdict."""
    cells = {}
    flags = []
    counts = c.counts or {}
    exp = c.expected
    for k in COUNTS:
        got = counts.get(k)
        if k not in c.claims:
            cells[k] = "—" if got is None or exp is None else ("ok" if got == exp[k] else f"{got:,}")
            continue
        if got is None:
            cells[k] = "none"
            flags.append(f"claims {k}, reports none")
            continue
        if exp is None:
            cells[k] = f"{got:,}"
            continue
        if got == exp[k]:
            cells[k] = "ok"
        else:
            diff = (got - exp[k]) / exp[k] * 100 if exp[k] else float("inf")
            cells[k] = f"{diff:+.2f}%"
            flags.append(f"{k} {'LESS' if got < exp[k] else 'MORE'} ({got:,} of {exp[k]:,})")
    if not c.claims:
        verdict = "—"
    elif exp is None:
        verdict = "no oracle"
    else:
        verdict = "ok" if not flags else "FLAG: " + "; ".join(flags)
    return cells, verdict


def summarize(cs: list[Contender], corpus_bytes: int) -> list[dict]:
    rows = []
    ref = next((c for c in cs if c.name == REFERENCE and c.times), None)
    ref_mbps = ref.nbytes / 1e6 / statistics.median(ref.times) if ref else None
    for c in cs:
        row = {"name": c.name, "label": c.label, "section": c.section, "input": c.input.name,
               "sample": c.sample, "note": c.note, "error": c.error, "claims": sorted(c.claims),
               "pgn_bytes": c.nbytes, "runs_s": c.times, "cpu_s_runs": c.cpu, "inner_s": c.inner, "counts": c.counts,
               "expected": c.expected}
        if c.times:
            secs = statistics.median(c.inner) if c.section == "kernel" and c.inner else statistics.median(c.times)
            mbps = c.nbytes / 1e6 / secs
            games = (c.counts or {}).get("games")
            if "games" not in c.claims and c.expected:     # a filter: the games it read, not those it kept
                games = c.expected["games"]
            cpu = statistics.median(c.cpu) if c.cpu else None
            row.update(seconds=secs, mb_per_s=mbps, games_per_s=games / secs if games else None,
                       cpu_s=cpu, cpu_s_per_gb=cpu / (c.nbytes / 1e9) if cpu is not None else None,
                       peak_rss_mb=max(c.rss_kb) / 1024, vs_fastpgn=mbps / ref_mbps if ref_mbps else None,
                       extrapolated_s=corpus_bytes / 1e6 / mbps if c.sample else None)
            row["agreement"], row["check"] = agreement(c)
        rows.append(row)
    return rows


def pair_ratios(cs: list[Contender], pairs: tuple = PAIRS) -> list[dict]:
    """The ratios of ``pairs`` whose two contenders both ran: MB/s over MB/s (medians), and for contenders
    that read the same games the median of the per-round ratios too."""
    by_name = {c.name: c for c in cs}
    out = []
    for num, den, meaning in pairs:
        a, b = by_name.get(num), by_name.get(den)
        if a is None or b is None or not a.times or not b.times:
            continue
        rate_a = a.nbytes / statistics.median(a.times)
        rate_b = b.nbytes / statistics.median(b.times)
        rounds = None
        if a.nbytes == b.nbytes and len(a.times) == len(b.times):
            rounds = [tb / ta for ta, tb in zip(a.times, b.times)]
        games = [(x.counts or {}).get("games") for x in (a, b)]
        cpu = [x.nbytes / statistics.median(x.cpu) if x.cpu else None for x in (a, b)]
        out.append({"numerator": num, "denominator": den, "meaning": meaning, "ratio_of_medians": rate_a / rate_b,
                    "per_round": rounds, "median_per_round": statistics.median(rounds) if rounds else None,
                    "cpu_ratio": cpu[0] / cpu[1] if None not in cpu else None,
                    "games": games, "same_games": games[0] == games[1] if (num, den) in SAME_GAMES else None})
    return out


def _fmt(v, spec, dash="—"):
    return dash if v is None else format(v, spec)


def print_table(rows: list[dict], meta: dict, notes: list, out=sys.stdout, pairs: list | None = None) -> None:
    w = out.write
    w(f"Corpus: {meta['corpus']} ({meta['pgn_bytes'] / 1e6:.1f} MB PGN, {meta['games']:,} games"
      + (f", zstd ratio {meta['zst_ratio']:.2f}" if meta.get("zst_ratio") else "") + ")\n\n")
    if meta.get("frames"):
        f = meta["frames"]
        w(f"lichess's framing: {f['file']} ({f['bytes'] / 1e6:.1f} MB, {f['zstd_frames']} zstd frames, ratio "
          f"{meta['pgn_bytes'] / f['bytes']:.2f})\n\n")
    w(f"Date {meta['date']}, {meta['machine']}, commit {meta['commit']}, Python {meta['python']}, "
      f"fastpgn backend {meta['backend']}; median of {meta['runs']} runs; "
      f"1-min load average {meta['load_average_1min'][0]} before, {meta['load_average_1min'][1]} after; "
      f"{meta['total_seconds']:.0f} s in all\n\n")
    if meta.get("expected"):
        e = meta["expected"]
        w(f"Oracle ({meta['oracle']}): {e['games']:,} games, {e['plies']:,} plies, "
          f"{e['evals']:,} evals, {e['clocks']:,} clocks\n")
    titles = {"end-to-end": "End to end (whole process)",
              "jobs": "The jobs users run pgn-extract for: plain .pgn, one core (the pairs below must keep the same "
                      "games)",
              "kernel": "In-memory kernel (kernel calls timed inside the process; RSS holds the whole input)",
              "frames": "lichess's framing (pzstd -p10 -19: independent zstd frames of 32 MiB of PGN): the "
                        "decode-bound jobs and the full conversions beside the single-stream and pzstd decoders",
              "floor": "Floors"}
    for section in ("end-to-end", "jobs", "kernel", "frames", "floor"):
        part = [r for r in rows if r["section"] == section]
        if not part:
            continue
        w(f"\n### {titles[section]}\n\n")
        w("| contender | input | MB/s | CPU s/GB | games/s | peak RSS MB | vs fastpgn "
          "| games | plies | evals | clocks | check |\n")
        w("|---|---|---:|---:|---:|---:|---:|:-:|:-:|:-:|:-:|---|\n")
        for r in part:
            src = r["input"]
            if r["sample"]:
                extra = (f"; whole corpus ≈ {r['extrapolated_s']:,.0f} s, extrapolated"
                         if r.get("extrapolated_s") else "")
                src += f" ({r['sample']}{extra})"
            if r.get("mb_per_s") is None:
                w(f"| {r['label']} | {src} | | | | | | | | | | {r['error'] or 'not run'} |\n")
                continue
            a = r["agreement"]
            vs = f"{r['vs_fastpgn']:.3g}×" if r.get("vs_fastpgn") else "—"
            w(f"| {r['label']} | {src} | {r['mb_per_s']:,.1f} | {_fmt(r.get('cpu_s_per_gb'), ',.2f')} "
              f"| {_fmt(r['games_per_s'], ',.0f')} "
              f"| {r['peak_rss_mb']:,.0f} | {vs} | {a['games']} | {a['plies']} | {a['evals']} | {a['clocks']} "
              f"| {r['check']} |\n")
    if pairs:
        w("\n### Ratios in this run\n\n")
        w("| numerator | denominator | ratio of medians | median of per-round ratios | per round "
          "| per CPU second | games |\n")
        w("|---|---|---:|---:|---|---:|---|\n")
        for p in pairs:
            rounds = ", ".join(f"{r:.2f}" for r in p["per_round"]) if p["per_round"] else "— (different inputs)"
            same = p.get("same_games")
            games = "" if same is None else (f"same ({p['games'][0]:,})" if same else
                                             "DIFFER: " + " vs ".join(_fmt(g, ",") for g in p["games"]))
            cpu = p.get("cpu_ratio")
            w(f"| {p['numerator']} | {p['denominator']} | {p['ratio_of_medians']:.3g}× "
              f"| {_fmt(p['median_per_round'], '.3g')}{'×' if p['median_per_round'] else ''} | {rounds} "
              f"| {_fmt(cpu, '.3g')}{'×' if cpu else ''} | {games} |\n")
        for p in pairs:
            w(f"- {p['numerator']} / {p['denominator']}: {p['meaning']}\n")
    w(f"\n`vs fastpgn`: MB/s divided by that of `{REFERENCE}` (fastpgn read_lines, Cython, one process) "
      "in this run. `ok`: the count equals the oracle's for the games read; `—`: not extracted.\n")
    seen: dict[str, list[str]] = {}
    for r in rows:
        if r.get("note"):
            seen.setdefault(r["note"], []).append(r["name"])
    for note, names in seen.items():
        w(f"- {', '.join(names)}: {note}\n")
    for n in notes:
        w(f"- note: {n}\n")


def machine() -> str:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores{(' ' + model) if model else ''}{mem}, {platform.system()}"


def commit() -> str:
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + ("+dirty" if dirty else "") if r.returncode == 0 else "?"
    except OSError:
        return "?"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("corpus", nargs="?", type=Path, default=ROOT / "bench-data" / "lichess-100MB-seed0.pgn",
                   help="the .pgn written by make_corpus (.pgn.zst/.pgn.bz2 and .json beside it are used)")
    p.add_argument("--runs", type=int, default=3, help="runs per contender (default 3; median reported)")
    p.add_argument("--py-sample", type=float, default=10.0,
                   help="MB of the corpus for the pure-Python backend (default 10)")
    p.add_argument("--chess-games", type=int, default=1000,
                   help="games for python-chess read_game (default 1000; it reads about 300 games/s)")
    p.add_argument("--only", help="comma-separated contender names to run (the reference always runs)")
    p.add_argument("--skip", help="comma-separated contender names to skip")
    p.add_argument("--timeout", type=float, default=600, help="seconds before a run is killed (default 600)")
    p.add_argument("--work", type=Path, help="the folder for the run's samples, Parquet releases and outputs, removed "
                   "after the run (default: beside the corpus; give one when that folder is read-only or shared)")
    p.add_argument("--py313", metavar="PYTHON", help="a Python 3.13 with bulletchess (default: bench-data/py313, "
                   "pyenv's 3.13, python3.13)")
    p.add_argument("--list", action="store_true", help="list the contenders and exit")
    p.add_argument("--json", action="store_true", help="print JSON on stdout instead of the table")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    p.add_argument("--table-from", type=Path, metavar="JSON", help="print the table of a saved --json run and exit")
    args = p.parse_args(argv)

    if args.table_from:
        saved = json.loads(args.table_from.read_text())
        print_table(saved["rows"], saved["meta"], saved["notes"], pairs=saved.get("pairs"))
        return 0

    if not args.corpus.exists():
        print(f"compare: {args.corpus} does not exist; build it with\n"
              f"  python -m benchmarks.make_corpus --size 100MB --bz2", file=sys.stderr)
        return 2
    corpus = load_corpus(args.corpus)
    notes: list[str] = []
    if corpus.manifest is None or not corpus.manifest.get("oracle"):
        notes.append("no oracle counts beside the corpus (make_corpus without python-chess): "
                     "the agreement columns show raw counts")
    work = Path(tempfile.mkdtemp(prefix="compare-", dir=args.work or args.corpus.parent))
    try:
        cs = build_contenders(corpus, args, work, notes)
        if args.list:
            for c in cs:
                print(f"{c.name:30} {c.label}")
            return 0
        warm_cache([corpus.pgn, corpus.zst, corpus.bz2] + [c.input for c in cs])
        load_before = os.getloadavg()[0]
        t_all = time.perf_counter()
        for run in range(1, args.runs + 1):
            for c in cs:
                if c.error:
                    continue
                print(f"[run {run}/{args.runs}] {c.name} ...", end="", file=sys.stderr, flush=True)
                run_once(c, work, args.timeout)
                print(f" {c.times[-1]:.2f} s" if c.times and len(c.times) == run and not c.error
                      else f" {c.error}", file=sys.stderr)
        total_s = time.perf_counter() - t_all
        load_after = os.getloadavg()[0]
        print(f"compare: {total_s:.0f} s in all", file=sys.stderr)
        rows = summarize(cs, corpus.nbytes)
        pairs = pair_ratios(cs, PAIRS + frames_pairs(os.cpu_count() or 1))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    m = corpus.manifest or {}
    meta = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "commit": commit(),
        "python": platform.python_version(),
        "backend": "per row (FASTPGN_IMPLEMENTATION set for each fastpgn row)",
        "runs": args.runs,
        "corpus": corpus.pgn.name,
        "pgn_bytes": corpus.nbytes,
        "games": (corpus.expected() or {}).get("games") or m.get("totals", {}).get("games") or 0,
        "zst_ratio": corpus.nbytes / corpus.zst.stat().st_size if corpus.zst else None,
        "frames": None if corpus.frames is None else {
            "file": corpus.frames.name, "bytes": corpus.frames.stat().st_size,
            "zstd_frames": len(pzstd_frames(corpus.frames))},
        "expected": corpus.expected(),
        "oracle": (m.get("oracle") or {}).get("tool"),
        "reference": REFERENCE,
        "load_average_1min": [round(load_before, 2), round(load_after, 2)],
        "total_seconds": round(total_s, 1),
        "rss_from": "/usr/bin/time -f %M" if TIME else "wait4 (includes this process's RSS at fork)",
        "bytecode": "compiled before timing (compileall fastpgn benchmarks)",
    }
    result = {"meta": meta, "rows": rows, "pairs": pairs, "notes": notes}
    if args.save:
        args.save.write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print_table(rows, meta, notes, pairs=pairs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
