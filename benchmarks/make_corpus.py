"""Build benchmark inputs of a chosen size from the real lichess dump games.

The games of ``data/lichess-db/`` in the shared corpus (``$FASTPGN_SHARED``,
else ``shared`` beside the checkout; read in place, never copied into the
repository) are deduplicated, then laid out in passes: each pass is a
fresh seeded permutation of every distinct game, so two copies of a game are
about a whole pass (12 MB) apart and a compressor's window rarely sees both,
which keeps compression ratios close to the real dumps'. Every copy gets a
new, unique 8-character Site id, so no game is a byte-for-byte copy of
another. The same ``--seed`` and ``--size`` give the same bytes.

Writes, into ``-o`` (default ``bench-data/``, git-ignored):

* ``lichess-<SIZE>-seed<SEED>.pgn``       plain PGN
* ``lichess-<SIZE>-seed<SEED>.pgn.zst``   zstd level 3 (``--zstd-level``)
* ``lichess-<SIZE>-seed<SEED>.pgn.bz2``   with ``--bz2`` (slow to write)
* ``lichess-<SIZE>-seed<SEED>.pgn.pzstd.zst``  with ``--pzstd``: lichess's own framing, ``pzstd -p10 -19``
  (independent zstd frames of 32 MiB of PGN, each behind a skippable frame giving its size); slow to
  write (about 1 MB/s a core), so it is made once and kept while the PGN's sha256 is the same
* ``lichess-<SIZE>-seed<SEED>.json``      manifest: sizes, sha256, game order,
  and per-distinct-game ply/eval/clock counts read by python-chess (the
  oracle ``compare.py`` checks every contender against), when it is installed.

Usage::

    python -m benchmarks.make_corpus --size 100MB
    python -m benchmarks.make_corpus --size 1GB --seed 1 --bz2
    python -m benchmarks.make_corpus --size 1GB --pzstd
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = Path(os.environ.get("FASTPGN_SHARED", ROOT.parent / "shared")) / "data" / "lichess-db"
ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SITE_PREFIX = b'[Site "https://lichess.org/'
RESULTS = (b"1-0", b"0-1", b"1/2-1/2", b"*")
_UNITS = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def parse_size(text: str) -> int:
    """Bytes in ``100MB``, ``1GB``, ``500M``, ``64MiB`` or a plain number (MB = 10**6).

    >>> parse_size("100MB"), parse_size("1.5GB"), parse_size("64MiB"), parse_size("1000")
    (100000000, 1500000000, 67108864, 1000)
    """
    s = text.strip().upper().replace("_", "")
    i = len(s)
    while i and not (s[i - 1].isdigit() or s[i - 1] == "."):
        i -= 1
    number, unit = s[:i], s[i:].strip()
    if not number or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 100MB or 1GB)")
    return int(float(number) * _UNITS[unit])


def size_label(n: int) -> str:
    """``100MB`` / ``1GB`` for names; exact bytes when not a round number."""
    for unit, factor in (("GB", 10**9), ("MB", 10**6)):
        if n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B"


def _decompress(path: Path) -> bytes:
    name = path.name
    if name.endswith(".zst"):
        import zstandard

        with open(path, "rb") as f:
            return zstandard.ZstdDecompressor().stream_reader(f).read()
    if name.endswith(".bz2"):
        return bz2.decompress(path.read_bytes())
    return path.read_bytes()


def _split_games(data: bytes) -> list[bytes]:
    """Games of a lichess dump: each starts with an ``[Event `` line after a blank line."""
    data = data.replace(b"\r\n", b"\n")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parts = data.split(b"\n\n[Event ")
    games = []
    for i, part in enumerate(parts):
        text = part if i == 0 else b"[Event " + part
        games.append(text.strip() + b"\n\n")
    return [g for g in games if g.startswith(b"[Event ")]


def _complete(game: bytes) -> bool:
    """Tags, a blank line, and movetext that ends in a result token (drops cut-off games)."""
    head, sep, moves = game.rstrip().partition(b"\n\n")
    return bool(sep) and SITE_PREFIX in head and moves.rsplit(None, 1)[-1] in RESULTS


def load_games(source: Path) -> tuple[list[bytes], list[str]]:
    """Distinct complete games of every ``.pgn``/``.pgn.zst``/``.pgn.bz2`` in ``source``, in a fixed order."""
    files = sorted(p for p in source.iterdir()
                   if p.name.endswith((".pgn", ".pgn.zst", ".pgn.bz2")))
    if not files:
        raise SystemExit(f"make_corpus: no .pgn/.pgn.zst/.pgn.bz2 files in {source}")
    seen: set[bytes] = set()
    games: list[bytes] = []
    for path in files:
        for game in _split_games(_decompress(path)):
            if not _complete(game):
                continue
            key = game[game.find(SITE_PREFIX):].split(b"]", 1)[0]
            if key in seen:
                continue
            seen.add(key)
            games.append(game)
    return games, [p.name for p in files]


def oracle_counts(games: list[bytes], cache_dir: Path) -> dict | None:
    """Per game (plies, evals, clocks) read by python-chess; cached by content hash; None without chess."""
    try:
        import chess
        import chess.pgn
    except ImportError:
        return None
    digest = hashlib.sha256(b"".join(games)).hexdigest()[:16]
    cache = cache_dir / f".oracle-{digest}-chess{chess.__version__}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    t0 = time.perf_counter()
    plies, evals, clocks = [], [], []
    for i, game in enumerate(games):
        g = chess.pgn.read_game(io.StringIO(game.decode("utf-8")))
        p = e = c = 0
        for node in g.mainline():
            p += 1
            e += node.eval() is not None
            c += node.clock() is not None
        plies.append(p)
        evals.append(e)
        clocks.append(c)
        if (i + 1) % 2000 == 0:
            print(f"  oracle: {i + 1:,}/{len(games):,} games read by python-chess", file=sys.stderr)
    result = {"tool": f"python-chess {chess.__version__}", "plies": plies, "evals": evals, "clocks": clocks}
    cache.write_text(json.dumps(result, separators=(",", ":")))
    print(f"  oracle: {len(games):,} games in {time.perf_counter() - t0:.1f} s (cached in {cache})",
          file=sys.stderr)
    return result


def _new_id(rng: random.Random, used: set[str], length: int) -> str:
    while True:
        gid = "".join(rng.choices(ID_ALPHABET, k=length))
        if gid not in used:
            used.add(gid)
            return gid


def _reidentify(game: bytes, rng: random.Random, used: set[str]) -> bytes:
    """The game with a new, unused Site id of the same length (so byte sizes stay the same)."""
    i = game.index(SITE_PREFIX) + len(SITE_PREFIX)
    j = game.index(b'"', i)
    return game[:i] + _new_id(rng, used, j - i or 8).encode() + game[j:]


def plan(n_games: int, lengths: list[int], size: int, seed: int) -> list[int]:
    """The order of distinct-game indices: seeded passes, each a full permutation, until ``size`` bytes."""
    rng = random.Random(f"order-{seed}")
    order: list[int] = []
    total = 0
    while total < size:
        perm = list(range(n_games))
        rng.shuffle(perm)
        for i in perm:
            order.append(i)
            total += lengths[i]
            if total >= size:
                break
    return order


def build(size: int, seed: int, out_dir: Path, source: Path, want_bz2: bool, zstd_level: int,
          force: bool = False, use_oracle: bool = True) -> Path:
    """Write the corpus files and manifest; return the manifest path."""
    import zstandard

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"lichess-{size_label(size)}-seed{seed}"
    manifest_path = stem.with_suffix(".json")
    pgn_path = Path(f"{stem}.pgn")
    zst_path = Path(f"{stem}.pgn.zst")
    bz2_path = Path(f"{stem}.pgn.bz2")

    if not force and manifest_path.exists() and pgn_path.exists() and zst_path.exists():
        old = json.loads(manifest_path.read_text())
        if (old.get("zstd_level") == zstd_level and (bz2_path.exists() or not want_bz2)
                and pgn_path.stat().st_size == old.get("bytes")):
            print(f"make_corpus: {pgn_path} is up to date (--force rebuilds)", file=sys.stderr)
            return manifest_path

    t0 = time.perf_counter()
    games, files = load_games(source)
    lengths = [len(g) for g in games]
    print(f"make_corpus: {len(games):,} distinct games, {sum(lengths) / 1e6:.1f} MB, from {source}",
          file=sys.stderr)
    oracle = oracle_counts(games, out_dir) if use_oracle else None
    order = plan(len(games), lengths, size, seed)

    rng = random.Random(f"ids-{seed}")
    used: set[str] = set()
    sha = hashlib.sha256()
    written = 0
    cctx = zstandard.ZstdCompressor(level=zstd_level)
    tmp = [Path(f"{p}.tmp") for p in (pgn_path, zst_path, bz2_path)]
    with open(tmp[0], "wb") as pgn, open(tmp[1], "wb") as zraw, \
            cctx.stream_writer(zraw, closefd=False) as zst, \
            (bz2.open(tmp[2], "wb", compresslevel=9) if want_bz2 else open(os.devnull, "wb")) as bzf:
        buf = []
        pending = 0
        for n, i in enumerate(order):
            text = _reidentify(games[i], rng, used)
            buf.append(text)
            pending += len(text)
            if pending >= 1 << 22 or n == len(order) - 1:
                chunk = b"".join(buf)
                pgn.write(chunk)
                zst.write(chunk)
                bzf.write(chunk)
                sha.update(chunk)
                written += len(chunk)
                buf, pending = [], 0
    os.replace(tmp[0], pgn_path)
    os.replace(tmp[1], zst_path)
    if want_bz2:
        os.replace(tmp[2], bz2_path)
    elif tmp[2].exists():
        tmp[2].unlink()

    totals = {"games": len(order)}
    if oracle is not None:
        for key in ("plies", "evals", "clocks"):
            per = oracle[key]
            totals[key] = sum(per[i] for i in order)
    manifest = {
        "name": stem.name,
        "seed": seed,
        "size_requested": size,
        "bytes": written,
        "sha256": sha.hexdigest(),
        "zst_bytes": zst_path.stat().st_size,
        "zstd_level": zstd_level,
        "bz2_bytes": bz2_path.stat().st_size if bz2_path.exists() else None,
        "source": str(source),
        "source_files": files,
        "distinct_games": len(games),
        "totals": totals,
        "oracle": None if oracle is None else {
            "tool": oracle["tool"], "plies": oracle["plies"], "evals": oracle["evals"],
            "clocks": oracle["clocks"]},
        "lengths": lengths,
        "order": order,
    }
    manifest_path.write_text(json.dumps(manifest, separators=(",", ":")))
    ratio = written / manifest["zst_bytes"]
    print(f"make_corpus: wrote {pgn_path} ({written / 1e6:.1f} MB, {len(order):,} games, "
          f"zstd -{zstd_level} ratio {ratio:.2f}"
          + (f", bz2 ratio {written / manifest['bz2_bytes']:.2f}" if manifest["bz2_bytes"] else "")
          + f") in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return manifest_path


#: The skippable frame pzstd writes before each zstd frame: magic, then 4 bytes holding the frame's size.
SKIPPABLE = (0x184D2A50).to_bytes(4, "little") + (4).to_bytes(4, "little")


def pzstd_frames(path: Path) -> list[int]:
    """The compressed sizes of the zstd frames of a ``pzstd`` file, read from its skippable headers alone
    (nothing is decoded); empty when the file does not start with one.

    >>> pzstd_frames(Path(os.devnull))
    []
    """
    sizes = []
    with open(path, "rb") as f:
        while (head := f.read(12))[:8] == SKIPPABLE and len(head) == 12:
            sizes.append(int.from_bytes(head[8:], "little"))
            f.seek(sizes[-1], os.SEEK_CUR)
    return sizes


def lichess_framing(manifest_path: Path, force: bool = False, pzstd: str = "pzstd") -> Path:
    """``pzstd -p10 -19`` of the corpus beside it (``.pgn.pzstd.zst``), as lichess compresses its dumps;
    kept while the manifest's sha256 is the one it was made from (``--force`` rebuilds)."""
    manifest = json.loads(manifest_path.read_text())
    pgn_path = manifest_path.with_suffix(".pgn")
    out = Path(f"{pgn_path}.pzstd.zst")
    made = manifest.get("pzstd") or {}
    if (not force and out.exists() and made.get("of_sha256") == manifest["sha256"]
            and made.get("bytes") == out.stat().st_size):
        print(f"make_corpus: {out} is up to date ({len(made['frames'])} frames)", file=sys.stderr)
        return out
    t0 = time.perf_counter()
    tmp = Path(f"{out}.tmp")
    with open(tmp, "wb") as f:
        subprocess.run([pzstd, "-p10", "-19", "-q", "-c", str(pgn_path)], stdout=f, check=True)
    os.replace(tmp, out)
    frames = pzstd_frames(out)
    manifest["pzstd"] = {"command": "pzstd -p10 -19", "of_sha256": manifest["sha256"], "bytes": out.stat().st_size,
                         "frames": frames}
    manifest_path.write_text(json.dumps(manifest, separators=(",", ":")))
    print(f"make_corpus: wrote {out} ({len(frames)} frames, ratio {manifest['bytes'] / out.stat().st_size:.2f}) "
          f"in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.make_corpus", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=parse_size("100MB"),
                   help="PGN bytes to write, e.g. 100MB, 1GB (MB = 10**6; default 100MB)")
    p.add_argument("--seed", type=int, default=0, help="shuffle and id seed (default 0)")
    p.add_argument("-o", "--output-dir", type=Path, default=ROOT / "bench-data",
                   help="output folder (default: bench-data/ in the repository, git-ignored)")
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                   help=f"folder of real lichess dump excerpts (default {DEFAULT_SOURCE})")
    p.add_argument("--bz2", action="store_true", help="also write .pgn.bz2 (about 10 MB/s)")
    p.add_argument("--zstd-level", type=int, default=3, help="zstd level (default 3, zstd's default)")
    p.add_argument("--no-oracle", action="store_true",
                   help="skip the python-chess count oracle (compare.py then checks contenders against each other)")
    p.add_argument("--pzstd", action="store_true",
                   help="also write .pgn.pzstd.zst, lichess's framing (pzstd -p10 -19; slow, kept once made)")
    p.add_argument("--force", action="store_true", help="rebuild even when the files are up to date")
    args = p.parse_args(argv)
    if not args.source.is_dir():
        print(f"make_corpus: {args.source} is not a folder (set --source or FASTPGN_SHARED)", file=sys.stderr)
        return 2
    manifest = build(args.size, args.seed, args.output_dir, args.source, args.bz2, args.zstd_level,
                     args.force, not args.no_oracle)
    if args.pzstd:
        if not shutil.which("pzstd"):
            print("make_corpus: --pzstd needs pzstd (Debian package zstd; benchmarks/setup.sh)", file=sys.stderr)
            return 2
        lichess_framing(manifest, args.force)
    print(manifest.with_suffix(".pgn"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
