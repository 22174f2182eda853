"""Where a Parquet conversion's encoding CPU goes: column by column, and beside the other Parquet writers.

The converter's Parquet output is bound on two cores by its CPU, and
pyarrow's encoding is the largest share of it (docs/performance.md). This
measures that share alone, in one process, over the games of a dump read
once into memory with ``read_arrow`` (the analysis schema):

- ``columns``: each column of the schema encoded alone, as the converter
  encodes a chunk (``list_chunks.encode_row_group`` with ``parquet_writer``'s
  settings, one row group of 16,384 games at a time: pyarrow's encoding, or
  the kernel's for the per-ply number lists), and the whole table so;
- ``writers``: the whole table written by pyarrow with fastpgn's settings,
  by polars (``write_parquet``, zstd, no statistics, the same row groups)
  and by DuckDB on one thread (``COPY ... (FORMAT parquet, COMPRESSION
  zstd)``), where installed.

Each figure is the median of interleaved rounds of CPU seconds
(``time.process_time``: every thread of the process), given per 100 MB of
PGN so that corpora of any size compare, with the bytes each writes.

    python -m benchmarks.parquet_encoding bench-data/lichess-100MB-seed0.pgn.zst
    python -m benchmarks.parquet_encoding DUMP --rounds 5 --json --save encoding.json
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.compare import commit
from fastpgn.convert.tables import ROW_GROUP_ROWS  # the converter's row groups

ROOT = Path(__file__).resolve().parent.parent


def _cpu(fn) -> tuple[float, int]:
    start = time.process_time()
    size = fn()
    return time.process_time() - start, size


def _encode_groups(table) -> int:
    """``table`` encoded as the converter encodes a chunk's row groups; the bytes written.

    A table of one of the per-ply number lists the kernel writes (``list_chunks.own_columns``) is that
    column's chunks as the kernel and zstd make them; any other, pyarrow's row groups."""
    import pyarrow as pa

    from fastpgn.arrow import parquet_writer
    from fastpgn.parquet.list_chunks import column_chunk, encode_row_group, own_columns

    own = table.num_columns == 1 and own_columns(table.schema)
    codec = pa.Codec("zstd")
    size = 0
    for offset in range(0, table.num_rows, ROW_GROUP_ROWS):
        part = table.slice(offset, ROW_GROUP_ROWS).combine_chunks()
        if own:
            size += len(column_chunk(own[0], part.column(0).combine_chunks(), codec)[0])
        else:
            size += len(encode_row_group(part, table.schema, parquet_writer).body)
    return size


def _writers(table, folder: Path) -> dict:
    """The whole-table writers that are installed: name -> a function that writes and returns the bytes."""
    from fastpgn.arrow import parquet_writer

    def pyarrow_writer() -> int:
        sink = io.BytesIO()
        with parquet_writer(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=ROW_GROUP_ROWS):
                writer.write_batch(batch)
        return sink.tell()

    out = {"pyarrow (fastpgn's settings)": pyarrow_writer}
    try:
        import polars
    except ImportError:
        print("(polars is not installed: its row is left out)", file=sys.stderr)
    else:
        frame = polars.from_arrow(table)
        target = folder / "polars.parquet"

        def polars_writer() -> int:
            frame.write_parquet(target, compression="zstd", statistics=False, row_group_size=ROW_GROUP_ROWS)
            return target.stat().st_size

        out[f"polars {polars.__version__}"] = polars_writer
    try:
        import duckdb
    except ImportError:
        print("(duckdb is not installed: its row is left out)", file=sys.stderr)
    else:
        con = duckdb.connect()
        con.execute("SET threads = 1")
        con.register("games", table)
        target = folder / "duckdb.parquet"

        def duckdb_writer() -> int:
            con.execute(f"COPY games TO '{target}' (FORMAT parquet, COMPRESSION zstd, "
                        f"ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
            return target.stat().st_size

        out[f"DuckDB {duckdb.__version__}, one thread"] = duckdb_writer
    return out


def run(args) -> dict:
    import pyarrow as pa

    from fastpgn import scan as _scan
    from fastpgn.arrow import read_arrow
    from fastpgn.io.sources import open_source

    with read_arrow(str(args.input), batch_size=ROW_GROUP_ROWS) as reader:
        table = pa.Table.from_batches(list(reader))
    source = open_source(str(args.input))
    try:
        pgn_bytes = sum(len(chunk) for chunk in source.chunks())
    finally:
        source.close()
    per_100mb = 1e8 / pgn_bytes
    cases: dict = {"all columns": lambda: _encode_groups(table)}
    if not args.no_columns:
        for name in table.column_names:
            cases[f"column {name}"] = (lambda one: lambda: _encode_groups(one))(table.select([name]))
    with tempfile.TemporaryDirectory(prefix="parquet-encoding-") as folder:
        if not args.no_writers:
            cases.update({f"writer {name}": fn for name, fn in _writers(table, Path(folder)).items()})
        runs: dict = {name: [] for name in cases}
        sizes: dict = {}
        for r in range(args.rounds):
            for name, fn in cases.items():
                cpu, sizes[name] = _cpu(fn)
                runs[name].append(cpu)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    rows = [{"case": name, "cpu_ms_per_100mb": statistics.median(runs[name]) * 1e3 * per_100mb,
             "mb_written": sizes[name] / 1e6, "runs_s": runs[name]} for name in cases]
    return {"date": datetime.date.today().isoformat(), "input": args.input.name, "pgn_bytes": pgn_bytes,
            "games": table.num_rows, "row_group_rows": ROW_GROUP_ROWS, "backend": _scan.BACKEND,
            "pyarrow": pa.__version__, "rounds": args.rounds, "python": platform.python_version(),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}", "commit": commit(),
            "load_average_1min": os.getloadavg()[0], "rows": rows}


def table(rep: dict) -> str:
    lines = [f"{rep['input']}: {rep['pgn_bytes'] / 1e6:,.1f} MB of PGN, {rep['games']:,} games, row groups of "
             f"{rep['row_group_rows']:,}; {rep['date']}, commit {rep['commit']}, {rep['machine']}, Python "
             f"{rep['python']}, pyarrow {rep['pyarrow']}, backend {rep['backend']}, median of {rep['rounds']} "
             f"rounds, 1-min load {rep['load_average_1min']:.1f}", ""]
    whole = next(r for r in rep["rows"] if r["case"] == "all columns")["cpu_ms_per_100mb"]
    columns = sorted((r for r in rep["rows"] if r["case"].startswith("column ")),
                     key=lambda r: r["cpu_ms_per_100mb"], reverse=True)
    lines += ["| encoded as the converter encodes | CPU ms per 100 MB of PGN | share of all | MB written |",
              "|---|---:|---:|---:|"]
    for r in [next(r for r in rep["rows"] if r["case"] == "all columns"), *columns]:
        lines.append(f"| {r['case']} | {r['cpu_ms_per_100mb']:.1f} | {r['cpu_ms_per_100mb'] / whole:.0%} "
                     f"| {r['mb_written']:.2f} |")
    writers = [r for r in rep["rows"] if r["case"].startswith("writer ")]
    if writers:
        base = writers[0]["cpu_ms_per_100mb"]
        lines += ["", "| whole table, one writer | CPU ms per 100 MB of PGN | × pyarrow's CPU | MB written |",
                  "|---|---:|---:|---:|"]
        for r in writers:
            lines.append(f"| {r['case'][len('writer '):]} | {r['cpu_ms_per_100mb']:.1f} "
                         f"| {r['cpu_ms_per_100mb'] / base:.2f} | {r['mb_written']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.parquet_encoding", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("input", nargs="?", type=Path, default=ROOT / "bench-data" / "lichess-100MB-seed0.pgn.zst",
                   help="a PGN dump, any compression (default: the 100 MB corpus make_corpus writes)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are shown (default 3)")
    p.add_argument("--no-columns", action="store_true", help="not column by column")
    p.add_argument("--no-writers", action="store_true", help="not the other writers")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--save", type=Path, help="also write the JSON to this file")
    args = p.parse_args(argv)
    if not args.input.exists():
        print(f"parquet_encoding: {args.input} does not exist; build it with "
              "python -m benchmarks.make_corpus --size 100MB", file=sys.stderr)
        return 2
    rep = run(args)
    if args.save:
        args.save.write_text(json.dumps(rep, indent=1) + "\n")
    print(json.dumps(rep, indent=1) if args.json else table(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
