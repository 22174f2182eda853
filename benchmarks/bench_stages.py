"""The lines converter's CPU per GB, stage by stage, beside zstandard's single-stream decompression floor.

The converter (``python -m fastpgn IN.pgn.zst N --compression gz``) is five
stages in a row; each is timed here alone, on one core, over the same input,
as the converter runs it:

- ``decode``: the input's zstd frames decoded into a reused 4 MiB buffer
  through fastpgn's source (``open_source(path).readinto``: the frame layout
  followed, offsets kept), nothing else;
- ``cut``: ``fastpgn.io.blocks.cut_blocks`` over the decoded stream already
  in memory (its reads copy from memory, as the decoder's output would be
  copied; the copy is part of the stage);
- ``kernel``: the lines sink, ``lines_from_block`` on each block, the
  shipped openings table as the converter passes it;
- ``compress``: each block's lines compressed as the chunk writer gets them
  (one gzip member, ISA-L level 2, or one zstd frame with ``--compression zst``);
- ``write``: the compressed members appended to a file, fsynced at the end.

Each stage's CPU seconds per GB of PGN (``time.process_time``: user+sys of
this one-threaded process), MB of PGN per CPU second (its speed on a core of
its own, whatever else the machine runs) and MB/s of wall time, the median of
interleaved rounds; the floor is ``zstandard``'s stream reader alone into the
same buffer. Then the whole converter as its own process at ``-j 1`` and
``-j 2``: wall time, CPU (user+sys of the process, ``wait4``) and its MB/s as
a share of the floor's (the goal: 0.40 of it).

    python -m benchmarks.bench_stages bench-data/lichess-100MB-seed0.pgn.zst
    python -m benchmarks.bench_stages IN.pgn.zst --rounds 5 --compression zst --json > stages.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
BUF = 4 << 20
STAGES = ("decode", "cut", "kernel", "compress", "write")


def _cpu_wall(fn):
    """(CPU seconds of this process, wall seconds, result) of ``fn()``."""
    c0, t0 = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - c0, time.perf_counter() - t0, result


def floor(path: Path) -> int:
    """zstandard's stream reader alone, straight into one reused 4 MiB buffer: the bytes decoded."""
    import zstandard

    buf = bytearray(BUF)
    view = memoryview(buf)
    n = 0
    with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw, read_size=1 << 20) as f:
        while True:
            got = f.readinto(view)
            if not got:
                return n
            n += got


def decode(path: Path) -> int:
    """fastpgn's source: the frames followed, decoded into one reused 4 MiB buffer."""
    from fastpgn.io.sources import open_source

    buf = bytearray(BUF)
    view = memoryview(buf)
    n = 0
    src = open_source(str(path))
    try:
        while True:
            got = src.readinto(view)
            if not got:
                return n
            n += got
    finally:
        src.close()


def decoded(path: Path) -> bytes:
    from fastpgn.io.sources import open_source

    src = open_source(str(path))
    try:
        return b"".join(src.chunks())
    finally:
        src.close()


def cut(data: bytes) -> list:
    """``cut_blocks`` over ``data``, read from memory as the decoder would hand it: each block's span
    (offset, size, at stream start) for the kernel stage; each block released, as the converter does."""
    from fastpgn.io.blocks import cut_blocks

    view = memoryview(data)
    pos = 0

    def readinto(target) -> int:
        nonlocal pos
        n = min(len(target), len(view) - pos)
        target[:n] = view[pos:pos + n]
        pos += n
        return n

    spans = []
    for block in cut_blocks(readinto, pool=[]):
        spans.append((block.offset, len(block.data), block.at_stream_start))
        block.release()
    return spans


def kernel_setup():
    from fastpgn import openings, scan as _scan

    table = openings.load()
    table[openings.SEP.encode().join((b"A00", b"fastpgn benchmark warm-up"))]   # the fuzzy index, untimed
    return _scan.kernel.lines_from_block, _scan.kernel.opening_table(table), _scan.BACKEND


def kernel(data: bytes, spans, scan, table) -> list:
    outs = []
    for offset, size, first in spans:
        out, _n, _rej, _filtered = scan(data, offset, offset + size, base_offset=offset, at_stream_start=first,
                                        openings=table)
        outs.append(out)
    return outs


def compress(outs, kind: str) -> list:
    from fastpgn.convert.chunks import compress as _compress

    return [_compress(out, kind) for out in outs]


def write(members, folder: Path) -> int:
    path = folder / "stages.part_000000.cri"
    with open(path, "wb") as f:
        for m in members:
            f.write(m)
        f.flush()
        os.fsync(f.fileno())
    n = path.stat().st_size
    path.unlink()
    return n


def _first_game(data: bytes, path: Path) -> None:
    import zstandard

    end = data.find(b"\n\n[Event ")
    path.write_bytes(zstandard.ZstdCompressor(level=3).compress(data[:end + 2] if end >= 0 else data))


def converter(path: Path, jobs: int, kind: str, out: Path) -> tuple[float, float]:
    """(wall, CPU user+sys) of ``python -m fastpgn PATH 100000 -j JOBS`` as its own process."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    argv = [PYTHON, "-m", "fastpgn", str(path), "100000", "-j", str(jobs), "-o", str(out),
            "--compression", kind, "-q"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"converter -j {jobs} failed ({code}): {proc.stderr.read().decode()[-500:]}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def run(args) -> dict:
    # (importing benchmarks wrote the bytecode: the converter's processes start as an installed package's would)
    path = args.input
    data = decoded(path)
    nbytes = len(data)
    scan, table, backend = kernel_setup()
    spans = cut(data)
    outs = kernel(data, spans, scan, table)
    members = compress(outs, args.compression)
    work = Path(tempfile.mkdtemp(prefix="stages-", dir=args.work))
    rounds: dict[str, list] = {name: [] for name in ("floor", *STAGES)}
    whole: dict[int, list] = {j: [] for j in args.jobs}
    starts: list = []
    try:
        tiny = work / "first-game.pgn.zst"     # the converter's fixed cost: start-up, openings, threads
        _first_game(data, tiny)
        for r in range(args.rounds):
            steps = [("floor", lambda: floor(path)), ("decode", lambda: decode(path)),
                     ("cut", lambda: cut(data)), ("kernel", lambda: kernel(data, spans, scan, table)),
                     ("compress", lambda: compress(outs, args.compression)), ("write", lambda: write(members, work))]
            for name, fn in steps:
                cpu, wall, _ = _cpu_wall(fn)
                rounds[name].append((cpu, wall))
            if not args.no_converter:
                for j in args.jobs:
                    whole[j].append(converter(path, j, args.compression, work / "conv"))
                starts.append(converter(tiny, 1, args.compression, work / "conv"))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    gb = nbytes / 1e9
    mb = nbytes / 1e6

    def row(name, pairs):
        cpu = statistics.median(c for c, _ in pairs)
        wall = statistics.median(w for _, w in pairs)
        return {"stage": name, "cpu_s_per_gb": cpu / gb, "wall_s": wall, "cpu_s": cpu, "mb_per_s": mb / wall,
                "mb_per_cpu_s": mb / cpu if cpu else None, "runs": pairs}

    floor_row = row("floor", rounds["floor"])
    stages = [row(name, rounds[name]) for name in STAGES]
    total_cpu = sum(s["cpu_s_per_gb"] for s in stages)
    for s in stages:
        s["share"] = s["cpu_s_per_gb"] / total_cpu
    conv = []
    start_wall = statistics.median(w for w, _ in starts) if starts else 0.0
    start_cpu = statistics.median(c for _, c in starts) if starts else 0.0
    for j, pairs in whole.items():
        if not pairs:
            continue
        wall = statistics.median(w for w, _ in pairs)
        cpu = statistics.median(c for _, c in pairs)
        conv.append({"jobs": j, "wall_s": wall, "cpu_s": cpu, "cpu_s_per_gb": cpu / gb, "mb_per_s": mb / wall,
                     "of_floor": (mb / wall) / floor_row["mb_per_s"],
                     "cpu_s_per_gb_less_start": (cpu - start_cpu) / gb, "runs": pairs})
    return {"date": datetime.date.today().isoformat(), "input": path.name, "pgn_bytes": nbytes,
            "blocks": len(spans), "compression": args.compression, "backend": backend, "rounds": args.rounds,
            "python": platform.python_version(), "machine": f"{os.cpu_count()} cores, {platform.machine()}",
            "commit": _commit(), "load_average_1min": os.getloadavg()[0],
            "floor": floor_row, "stages": stages, "stages_cpu_s_per_gb": total_cpu,
            "stages_mb_per_s_one_core": mb / (total_cpu * gb), "converter": conv, "goal_of_floor": 0.40,
            "start": {"wall_s": start_wall, "cpu_s": start_cpu, "runs": starts} if starts else None}


def _commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip() or "?"


def table(rep: dict) -> str:
    lines = [f"{rep['input']}: {rep['pgn_bytes'] / 1e6:,.1f} MB of PGN, {rep['blocks']} blocks; "
             f"{rep['date']}, commit {rep['commit']}, {rep['machine']}, Python {rep['python']}, "
             f"backend {rep['backend']}, median of {rep['rounds']} rounds, 1-min load {rep['load_average_1min']:.1f}",
             "",
             "| stage | CPU s/GB | share | MB per CPU second (one core) | MB/s (wall) |",
             "|---|---:|---:|---:|---:|"]
    for s in rep["stages"]:
        lines.append(f"| {s['stage']} | {s['cpu_s_per_gb']:.2f} | {s['share']:.0%} | {s['mb_per_cpu_s']:,.0f} "
                     f"| {s['mb_per_s']:,.0f} |")
    lines.append(f"| all five, one core | {rep['stages_cpu_s_per_gb']:.2f} | 100% "
                 f"| {rep['stages_mb_per_s_one_core']:,.0f} | |")
    f = rep["floor"]
    lines.append(f"| floor: zstandard stream reader alone | {f['cpu_s_per_gb']:.2f} | | {f['mb_per_cpu_s']:,.0f} "
                 f"| {f['mb_per_s']:,.0f} |")
    if rep["converter"]:
        lines += ["", "| converter (whole process) | wall s | CPU s | CPU s/GB | CPU s/GB less start-up | MB/s "
                  "| of the floor's MB/s |", "|---|---:|---:|---:|---:|---:|---:|"]
        for c in rep["converter"]:
            lines.append(f"| `-j {c['jobs']} --compression {rep['compression']}` | {c['wall_s']:.2f} "
                         f"| {c['cpu_s']:.2f} | {c['cpu_s_per_gb']:.2f} | {c['cpu_s_per_gb_less_start']:.2f} "
                         f"| {c['mb_per_s']:,.0f} | {c['of_floor']:.2f} (goal {rep['goal_of_floor']:.2f}) |")
        st = rep["start"]
        lines.append(f"| start-up: `-j 1` on the first game alone | {st['wall_s']:.2f} | {st['cpu_s']:.2f} "
                     "| | | | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_stages", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("input", nargs="?", type=Path, default=ROOT / "bench-data" / "lichess-100MB-seed0.pgn.zst",
                   help="a .pgn.zst (default: the 100 MB corpus make_corpus writes)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are shown (default 3)")
    p.add_argument("--compression", choices=("gz", "zst"), default="gz", help="the chunks' compression (default gz)")
    p.add_argument("--jobs", type=lambda s: [int(j) for j in s.split(",")], default=[1, 2],
                   help="the converter's -j values, comma-separated (default 1,2)")
    p.add_argument("--no-converter", action="store_true", help="the stages only, not the whole converter")
    p.add_argument("--work", type=Path, help="folder for the written chunks (default: the system's temporary folder)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    args = p.parse_args(argv)
    if not args.input.exists():
        print(f"bench_stages: {args.input} does not exist; build it with "
              "python -m benchmarks.make_corpus --size 100MB", file=sys.stderr)
        return 2
    try:
        rep = run(args)
    except KeyboardInterrupt:
        return 130
    if args.save:
        args.save.write_text(json.dumps(rep, indent=1) + "\n")
    try:
        print(json.dumps(rep, indent=1) if args.json else table(rep))
    except BrokenPipeError:
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
