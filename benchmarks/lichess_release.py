"""Write a PGN dump in the layout of lichess's own Parquet release (untimed setup for a contender).

``python -m benchmarks.lichess_release DUMP FOLDER``: one row per game, the
header columns in the release's types (ratings int16, ``UTCDate`` date32,
``UTCTime`` time32[s], the rest strings) and ``movetext`` the game's movetext
text, written as ``FOLDER/year=YYYY/month=MM/train-00000-of-00001.parquet``
by each game's ``UTCDate``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

STRINGS = ("Event", "Site", "White", "Black", "Result", "WhiteTitle", "BlackTitle")
INTS = ("WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff")
LATER = ("ECO", "Opening", "Termination", "TimeControl")


def release_schema(pa):
    fields = [pa.field(n, pa.string()) for n in STRINGS] + [pa.field(n, pa.int16()) for n in INTS]
    fields += [pa.field("UTCDate", pa.date32()), pa.field("UTCTime", pa.time32("s"))]
    fields += [pa.field(n, pa.string()) for n in LATER] + [pa.field("movetext", pa.string())]
    return pa.schema(fields)


def _parsed(text, form, kind):
    try:
        value = datetime.datetime.strptime(text, form)
    except (TypeError, ValueError):
        return None
    return value.date() if kind == "date" else value.time()


def release_rows(pgn: bytes) -> list[dict]:
    """One row per game of ``pgn`` (decompressed PGN text), as the release holds it."""
    import fastpgn
    from fastpgn import schema

    games = list(fastpgn.read_games(pgn))
    ends = [g.offset for g in games[1:]] + [len(pgn)]
    rows = []
    for game, end in zip(games, ends):
        text = pgn[game.offset:end].decode("utf-8")
        h = game.headers
        row = {n: h.get(n) for n in STRINGS + LATER}
        row.update({n: schema.int16(h.get(n)) for n in INTS})
        row["UTCDate"] = _parsed(h.get("UTCDate"), "%Y.%m.%d", "date")
        row["UTCTime"] = _parsed(h.get("UTCTime"), "%H:%M:%S", "time")
        row["movetext"] = text.split("\n\n", 1)[1].strip() if "\n\n" in text else ""
        rows.append(row)
    return rows


def write_release(source, folder: Path, row_group_size: int = 10_000) -> int:
    """Write ``source`` (anything ``open_source`` reads) under ``folder``; the number of games."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fastpgn.io import sources

    pgn = b"".join(sources.open_source(source).chunks())
    rows = release_rows(pgn)
    months: dict[tuple[int, int], list] = {}
    for row in rows:
        day = row["UTCDate"] or datetime.date(1970, 1, 1)
        months.setdefault((day.year, day.month), []).append(row)
    for (year, month), part in sorted(months.items()):
        out = Path(folder) / f"year={year:04}" / f"month={month:02}"
        out.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(part, schema=release_schema(pa))
        pq.write_table(table, out / "train-00000-of-00001.parquet", row_group_size=row_group_size)
    return len(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.lichess_release")
    p.add_argument("dump")
    p.add_argument("folder")
    args = p.parse_args(argv)
    print(write_release(args.dump, Path(args.folder)), "games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
