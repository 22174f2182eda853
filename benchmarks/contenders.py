"""One contender per process: ``python -m benchmarks.contenders NAME INPUT [--limit N]``.

``compare.py`` starts each of these as its own process and times the whole
process; each prints one ``RESULT {json}`` line on stdout with what it
extracted: ``games``, ``plies``, ``evals`` (plies with an engine eval),
``clocks`` (plies with a clock), ``bytes`` (PGN bytes covered), and for the
in-memory kernel runs ``inner_seconds`` (the kernel calls alone, timed inside
the process). A count the contender cannot extract is ``null``.

python-chess and the Rust-based binding are GPL peers: they are imported and
called here, never copied.
"""

from __future__ import annotations

import sys
import time

SEP = "\u2502"


def _result(**fields) -> int:
    # JSON of numbers, names and nulls, by hand: the harness imports nothing it does not time for every contender
    # (argparse and json were 5 ms of a process that reads 100 MB of headers in 140)
    text = ", ".join(f'"{k}": {_json_value(v)}' for k, v in fields.items())
    print("RESULT {" + text + "}", flush=True)
    return 0


def _json_value(value) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _line_counts(line: str) -> tuple[int, int, int]:
    """(plies, evals, clocks) of one 22-field line; the mate ``#`` appended to evals is not an eval."""
    f = line.split(SEP)
    ev = f[20].count(" ") + 1 if f[20] else 0
    if ev and f[5] == "Y":
        ev -= 1
    return int(f[8]), ev, (f[21].count(" ") + 1 if f[21] else 0)


def _lines_totals(lines, into: dict | None = None) -> dict:
    """The games, plies, evals and clocks of 22-field ``lines``, added to ``into`` (a new dict if None)."""
    totals = into if into is not None else {"games": 0, "plies": 0, "evals": 0, "clocks": 0}
    for line in lines:
        p, e, c = _line_counts(line)
        totals["games"] += 1
        totals["plies"] += p
        totals["evals"] += e
        totals["clocks"] += c
    return totals


# ------------------------------------------------------------------ fastpgn

def fastpgn_games(path: str, limit: int | None) -> int:
    """``read_games``: every header, SAN move, eval and clock of every game."""
    from fastpgn.reader import read_games

    games = plies = evals = clocks = 0
    for g in read_games(path):
        _ = g.headers
        plies += len(g.moves)
        ev = g.evals
        evals += len(ev) - ev.count(None)
        ck = g.clocks
        clocks += len(ck) - ck.count(None)
        games += 1
    return _result(games=games, plies=plies, evals=evals, clocks=clocks)


def fastpgn_lines(path: str, limit: int | None) -> int:
    """``read_lines``: the 22-field line of every game, as str."""
    from fastpgn.reader import read_lines

    return _result(**_lines_totals(read_lines(path)))


def fastpgn_headers(path: str, limit: int | None) -> int:
    """``read_headers``: every game's headers (a dict of str), offset and number; the movetext skipped."""
    from fastpgn.reader import read_headers

    games = 0
    for g in read_headers(path):
        _ = g.headers
        games += 1
    return _result(games=games, plies=None, evals=None, clocks=None)


def memory_lines(path: str, limit: int | None) -> int:
    """``read_lines`` over the corpus's bytes already in memory (timed inside: one pass of the reader's loop)."""
    from fastpgn import openings, scan as _scan
    from fastpgn.reader import read_lines

    with open(path, "rb") as f:
        data = f.read()
    table = openings.load()
    table[openings.SEP.encode().join((b"A00", b"fastpgn benchmark warm-up"))]   # as kernel-lines, untimed
    t0 = time.perf_counter()
    for _line in read_lines(data, openings=table):   # as a program iterates them, keeping none
        pass
    inner = time.perf_counter() - t0
    totals = _lines_totals(read_lines(data, openings=table))    # again, untimed, for the counts
    return _result(**totals, inner_seconds=inner, backend=_scan.BACKEND)


def _memory_blocks(path: str):
    from fastpgn.io.sources import blocks, open_source

    src = open_source(path)
    try:
        return list(blocks(src.chunks()))
    finally:
        src.close()


def kernel_lines(path: str, limit: int | None) -> int:
    """``lines_from_block`` over game-aligned 4 MiB blocks already in memory (the kernel calls alone are timed)."""
    from fastpgn import openings, scan as _scan

    scan = _scan.kernel.lines_from_block
    table = openings.load()
    # The shipped map builds its fuzzy index on its first miss (~0.1 s, once per
    # process, whatever the input size): build it here, untimed, so the figure
    # is the kernel's steady rate. The whole-process rows include it.
    table[openings.SEP.encode().join((b"A00", b"fastpgn benchmark warm-up"))]
    table = _scan.kernel.opening_table(table)  # as read_lines and the converter pass it
    todo = _memory_blocks(path)
    clock = time.perf_counter
    read = inner = 0
    totals = _lines_totals(())
    for b in todo:
        t0 = clock()
        out, n, _rej, _filtered = scan(b.data, 0, len(b.data), base_offset=b.offset, first_game=read,
                                       at_stream_start=b.at_stream_start, openings=table)
        inner += clock() - t0
        read += n
        _lines_totals(out.decode("utf-8", "replace").splitlines(), totals)
    return _result(**totals, inner_seconds=inner, backend=_scan.BACKEND)


def kernel_games(path: str, limit: int | None) -> int:
    """``games_from_block`` over game-aligned 4 MiB blocks already in memory (the kernel calls alone are timed)."""
    from fastpgn import scan as _scan

    scan = _scan.kernel.games_from_block
    todo = _memory_blocks(path)
    clock = time.perf_counter
    read = inner = 0
    games = plies = evals = clocks = 0
    for b in todo:
        t0 = clock()
        recs, n, _rej, _filtered = scan(b.data, 0, len(b.data), base_offset=b.offset, first_game=read,
                                        at_stream_start=b.at_stream_start)
        inner += clock() - t0
        read += n
        for _off, _num, _headers, moves, ev, ck, _res, _first, _s, _e in recs:
            games += 1
            plies += len(moves)
            evals += len(ev) - ev.count(None)
            clocks += len(ck) - ck.count(None)
    return _result(games=games, plies=plies, evals=evals, clocks=clocks,
                   inner_seconds=inner, backend=_scan.BACKEND)


def _arrow_counts(batch) -> tuple[int, int, int, int]:
    """(games, plies, evals, clocks) of a record batch of the analysis schema."""
    import pyarrow.compute as pc

    def present(name):
        values = batch.column(name).flatten()
        return len(values) - values.null_count

    evals = present("eval_cp") + present("eval_mate")
    return batch.num_rows, int(pc.sum(batch.column("plies")).as_py() or 0), evals, present("clock")


def fastpgn_arrow(path: str, limit: int | None) -> int:
    """``read_arrow``: every game as a row of the analysis schema, in record batches."""
    from fastpgn import read_arrow

    games = plies = evals = clocks = 0
    for batch in read_arrow(path):
        g, p, e, c = _arrow_counts(batch)
        games, plies, evals, clocks = games + g, plies + p, evals + e, clocks + c
    return _result(games=games, plies=plies, evals=evals, clocks=clocks)


#: The header columns a decode-bound reading asks for (issue of the multi-frame corpus: "three header columns").
HEAD_COLUMNS = ("white_elo", "black_elo", "result")


def fastpgn_arrow_heads(jobs: int):
    """``read_arrow(columns=HEAD_COLUMNS, jobs=jobs)``: three header columns, the kernel's headers-only work."""
    def run(path: str, limit: int | None) -> int:
        from fastpgn import read_arrow

        games = 0
        for batch in read_arrow(path, columns=list(HEAD_COLUMNS), jobs=jobs):
            games += batch.num_rows
        return _result(games=games, plies=None, evals=None, clocks=None)
    run.__doc__ = f"read_arrow of {', '.join(HEAD_COLUMNS)} at jobs={jobs}"
    return run


def lichess_parquet_arrow(path: str, limit: int | None) -> int:
    """``read_arrow`` over lichess's Parquet release (a folder in its layout): rows written as PGN, then the scanner."""
    return fastpgn_arrow(path, limit)


def kernel_columns(path: str, limit: int | None) -> int:
    """``columns_from_block`` and its Arrow record batch, over game-aligned 4 MiB blocks in memory (timed inside)."""
    from fastpgn import scan as _scan
    from fastpgn.arrow import record_batch
    from fastpgn.scan import columns as _columns_py

    scan = _scan.kernel.columns_from_block
    table = _columns_py.default_openings()
    table[b"A00\xe2\x94\x82fastpgn benchmark warm-up"]  # the map's fuzzy index, built once, untimed
    table = _scan.kernel.opening_table(table)
    record_batch(scan(b"", 0, 0, openings=table).output)  # pyarrow imported, untimed
    todo = _memory_blocks(path)
    clock = time.perf_counter
    read = inner = 0
    games = plies = evals = clocks = 0
    for b in todo:
        t0 = clock()
        columns, n, _rej, _filtered = scan(b.data, 0, len(b.data), base_offset=b.offset, first_game=read,
                                           at_stream_start=b.at_stream_start, openings=table)
        batch = record_batch(columns)
        inner += clock() - t0
        read += n
        g, p, e, c = _arrow_counts(batch)
        games, plies, evals, clocks = games + g, plies + p, evals + e, clocks + c
    return _result(games=games, plies=plies, evals=evals, clocks=clocks,
                   inner_seconds=inner, backend=_scan.BACKEND)


def validation_hook(kernel=None):
    """``fastpgn.board.moves_hook()`` on board kernel ``kernel`` (default: the live one); None without a board.

    The hook gets the game's SAN (bytes, space-separated) and its start tags,
    and returns field 20 unchanged or raises PGNError (a ValueError) to reject
    the game; the compiled scanner replays what it can itself (``validates_san``).
    """
    try:
        from fastpgn.board import moves_hook
    except ImportError:
        return None
    return moves_hook(board_kernel=kernel)


def fastpgn_validate(path: str, limit: int | None) -> int:
    """22-field lines with every SAN move validated on a board (``moves_hook``), streaming."""
    from fastpgn import openings, scan as _scan
    from fastpgn.io.sources import blocks, open_source

    hook = validation_hook()
    if hook is None:
        print("fastpgn's board layer (fastpgn.board._kernel.kernel.san_to_uci) is not importable", file=sys.stderr)
        return 3
    scan = _scan.kernel.lines_from_block
    table = openings.load()
    totals = _lines_totals(())
    rejected = read = 0
    src = open_source(path)
    try:
        for b in blocks(src.chunks()):
            out, n, rejects, _ = scan(b.data, 0, len(b.data), base_offset=b.offset, first_game=read,
                                      at_stream_start=b.at_stream_start, openings=table, moves_hook=hook)
            read += n
            rejected += len(rejects)
            _lines_totals(out.decode("utf-8", "replace").splitlines(), totals)
    finally:
        src.close()
    return _result(**totals, rejected=rejected)


# ------------------------------------------------------------------ python-chess (GPL peer)

def chess_games(path: str, limit: int | None) -> int:
    """python-chess ``read_game`` (validating), headers, every mainline node's ``eval()`` and ``clock()``."""
    import chess.pgn

    games = plies = evals = clocks = 0
    with open(path, encoding="utf-8") as f:
        while limit is None or games < limit:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            _ = game.headers
            for node in game.mainline():
                plies += 1
                evals += node.eval() is not None
                clocks += node.clock() is not None
            games += 1
        consumed = f.tell()
    return _result(games=games, plies=plies, evals=evals, clocks=clocks, bytes=consumed)


def chess_parquet(path: str, limit: int | None) -> int:
    """The usual script: python-chess reads each game, a row per game (headers, SAN, evals, clocks) into
    pandas, ``DataFrame.to_parquet``."""
    import chess.pgn
    import pandas as pd

    rows = []
    plies = evals = clocks = 0
    with open(path, encoding="utf-8") as f:
        while limit is None or len(rows) < limit:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            row = dict(game.headers)
            sans, cps, clks = [], [], []
            board = game.board()
            for node in game.mainline():
                sans.append(board.san(node.move))
                board.push(node.move)
                score = node.eval()
                cps.append(None if score is None else score.white().score())
                evals += score is not None
                clk = node.clock()
                clks.append(clk)
                clocks += clk is not None
            plies += len(sans)
            row.update(moves=sans, eval_cp=cps, clock=clks)
            rows.append(row)
        consumed = f.tell()
    pd.DataFrame(rows).to_parquet(path + ".chess.parquet")
    return _result(games=len(rows), plies=plies, evals=evals, clocks=clocks, bytes=consumed)


def duckdb_chess(path: str, limit: int | None) -> int:
    """The usual route over lichess's Parquet release: DuckDB reads the rows (the header columns typed,
    the movetext as text) and python-chess reads each game's movetext, as a script would:

        for *headers, movetext in duckdb.execute("SELECT ... FROM read_parquet('data/**/*.parquet')").fetchall():
            game = chess.pgn.read_game(io.StringIO(movetext))

    Per ply: the SAN, the eval and the clock, as the analysis schema holds them."""
    import io
    import os

    import chess.pgn
    import duckdb

    glob = os.path.join(path, "**", "*.parquet").replace("'", "''")
    query = f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true)"
    if limit is not None:
        query += f" LIMIT {int(limit)}"
    result = duckdb.connect().execute(query)
    movetext = [d[0] for d in result.description].index("movetext")
    games = plies = evals = clocks = 0
    while True:
        rows = result.fetchmany(4096)
        if not rows:
            break
        for row in rows:
            game = chess.pgn.read_game(io.StringIO(row[movetext] or ""))
            board = game.board()
            sans, cps = [], []
            for node in game.mainline():
                sans.append(board.san(node.move))
                board.push(node.move)
                score = node.eval()
                cps.append(None if score is None else score.white().score())
                evals += score is not None
                clocks += node.clock() is not None
            plies += len(sans)
            games += 1
    return _result(games=games, plies=plies, evals=evals, clocks=clocks)


def chess_headers(path: str, limit: int | None) -> int:
    """python-chess ``read_headers``: the tags only, movetext skipped."""
    import chess.pgn

    games = 0
    with open(path, encoding="utf-8") as f:
        while limit is None or games < limit:
            headers = chess.pgn.read_headers(f)
            if headers is None:
                break
            games += 1
        consumed = f.tell()
    return _result(games=games, plies=None, evals=None, clocks=None, bytes=consumed)


# ------------------------------------------------------------------ rust-pgn-reader-python-binding (GPL peer)

def rust_binding(path: str, limit: int | None, batch: int = 10_000) -> int:
    """``parse_games_from_strings`` on batches of game strings (the binding takes one string per game).

    Splitting the file into games is the caller's job with this binding, so
    it is done here, in Python, as a user would; batches keep memory bounded
    (the binding keeps a 64-byte board per position).
    """
    import numpy as np
    import rust_pgn_reader_python_binding as rp

    games = plies = evals = clocks = invalid = 0

    def parse(strings):
        nonlocal games, plies, evals, clocks, invalid
        parsed = rp.parse_games_from_strings(strings)
        for chunk in parsed.chunks:
            _ = chunk.headers
            valid = chunk.valid
            games += int(np.count_nonzero(valid))
            invalid += int(valid.size - np.count_nonzero(valid))
            plies += chunk.num_moves
            evals += int(np.count_nonzero(~np.isnan(chunk.evals)))
            clocks += int(np.count_nonzero(~np.isnan(chunk.clocks)))

    pending: list[str] = []
    with open(path, encoding="utf-8") as f:
        current: list[str] = []
        seen_moves = False
        for line in f:
            if line.startswith("[") and seen_moves:
                pending.append("".join(current))
                current = []
                seen_moves = False
                if len(pending) >= batch:
                    parse(pending)
                    pending = []
            elif not line.startswith("[") and line.strip():
                seen_moves = True
            current.append(line)
        if current:
            pending.append("".join(current))
        if pending:
            parse(pending)
    return _result(games=games, plies=plies, evals=evals, clocks=clocks, invalid=invalid)


def _release_files(folder: str) -> list:
    import os

    return sorted(os.path.join(d, f) for d, _, files in os.walk(folder) for f in files if f.endswith(".parquet"))


def rust_binding_release(path: str, limit: int | None, batch: int = 10_000) -> int:
    """The binding's Hugging Face route: the ``movetext`` column of lichess's Parquet release, read with pyarrow
    in batches, handed to ``parse_games`` as an Arrow array; every position's board (the binding keeps a
    64-byte board per position) and every move's squares, on all cores."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import rust_pgn_reader_python_binding as rp

    games = plies = evals = clocks = invalid = positions = 0
    for name in _release_files(path):
        for part in pq.ParquetFile(name).iter_batches(batch_size=batch, columns=["movetext"]):
            parsed = rp.parse_games(pa.chunked_array([part.column(0)]))
            for chunk in parsed.chunks:
                valid = chunk.valid
                games += int(np.count_nonzero(valid))
                invalid += int(valid.size - np.count_nonzero(valid))
                plies += chunk.num_moves
                positions += int(chunk.boards.shape[0])
                evals += int(np.count_nonzero(~np.isnan(chunk.evals)))
                clocks += int(np.count_nonzero(~np.isnan(chunk.clocks)))
    return _result(games=games, plies=plies, evals=evals, clocks=clocks, invalid=invalid, positions=positions)


def fastpgn_arrow_uci(path: str, limit: int | None) -> int:
    """``read_arrow(path, uci=True)``: the analysis schema with every game replayed on fastpgn's board and its
    moves in UCI (the ``uci`` column)."""
    from fastpgn import read_arrow

    games = plies = evals = clocks = 0
    for batch in read_arrow(path, uci=True):
        g, p, e, c = _arrow_counts(batch)
        games, plies, evals, clocks = games + g, plies + p, evals + e, clocks + c
    return _result(games=games, plies=plies, evals=evals, clocks=clocks)


# ------------------------------------------------------------------ bulletchess (C extension; Python 3.13)

def bulletchess_games(path: str, limit: int | None) -> int:
    """bulletchess's PGN reader (``bulletchess.pgn.PGNFile``): each game's tags and its moves, replayed (the
    reader returns legal ``Move`` objects). Runs under the Python that has bulletchess (3.13)."""
    from bulletchess.pgn import PGNFile

    games = plies = 0
    f = PGNFile.open(path)
    try:
        while limit is None or games < limit:
            game = f.next_game()
            if game is None:
                break
            _ = game.white_player, game.black_player, game.result
            plies += len(game.moves)
            games += 1
    finally:
        f.close()
    return _result(games=games, plies=plies, evals=None, clocks=None)


# ------------------------------------------------------------------ floors

def _drain(f) -> int:
    n = 0
    while True:
        piece = f.read(1 << 20)
        if not piece:
            return n
        n += len(piece)


def floor_read(path: str, limit: int | None) -> int:
    """Read the plain file in 1 MiB pieces: what any Python reader pays first."""
    with open(path, "rb") as f:
        n = _drain(f)
    return _result(games=None, plies=None, evals=None, clocks=None, bytes=n)


def floor_zstd(path: str, limit: int | None) -> int:
    """Python ``zstandard`` stream decompression, 1 MiB reads, nothing else."""
    import zstandard

    # read_across_frames: a multi-frame input (lichess's pzstd framing) is read to its end, not its first frame
    with open(path, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as f:
        n = _drain(f)
    return _result(games=None, plies=None, evals=None, clocks=None, bytes=n)


def floor_bz2(path: str, limit: int | None) -> int:
    """Python standard-library ``bz2`` decompression, 1 MiB reads, nothing else."""
    import bz2

    with bz2.open(path, "rb") as f:
        n = _drain(f)
    return _result(games=None, plies=None, evals=None, clocks=None, bytes=n)


CONTENDERS = {
    "floor-read": floor_read,
    "floor-zstd": floor_zstd,
    "floor-bz2": floor_bz2,
    "fastpgn-games": fastpgn_games,
    "fastpgn-lines": fastpgn_lines,
    "fastpgn-headers": fastpgn_headers,
    "memory-lines": memory_lines,
    "fastpgn-validate": fastpgn_validate,
    "kernel-lines": kernel_lines,
    "kernel-games": kernel_games,
    "kernel-columns": kernel_columns,
    "fastpgn-arrow": fastpgn_arrow,
    "lichess-parquet-arrow": lichess_parquet_arrow,
    "chess-parquet": chess_parquet,
    "chess-games": chess_games,
    "chess-headers": chess_headers,
    "duckdb-chess": duckdb_chess,
    "rust-binding": rust_binding,
    "rust-binding-release": rust_binding_release,
    "fastpgn-arrow-uci": fastpgn_arrow_uci,
    "bulletchess": bulletchess_games,
}


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    limit = None
    for i, arg in enumerate(args):
        if arg == "--limit" or arg.startswith("--limit="):
            given = arg.partition("=")[2] if "=" in arg else " ".join(args[i + 1:i + 2])
            del args[i:i + (1 if "=" in arg else 2)]
            limit = int(given) if given.isdigit() else 0
            break
    name, _, jobs = args[0].rpartition("-j") if args and args[0].startswith("fastpgn-arrow-heads-j") else ("", "", "")
    if name and jobs.isdigit() and int(jobs) > 0:
        return fastpgn_arrow_heads(int(jobs))(args[1], limit)
    if len(args) != 2 or args[0] not in CONTENDERS or limit == 0:
        print(f"usage: python -m benchmarks.contenders {{{','.join(sorted(CONTENDERS))},fastpgn-arrow-heads-jN}} "
              "INPUT [--limit N]",
              file=sys.stderr)
        return 2
    return CONTENDERS[args[0]](args[1], limit)


if __name__ == "__main__":
    sys.exit(main())
