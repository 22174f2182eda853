"""How accurately players of each rating play, and how mistakes grow as the clock runs down.

Two questions of a converted dump (``python -m fastpgn DUMP 100000 --format
parquet -o games/``), answered in DuckDB over the analysis columns that the
converter computes as lichess does (``docs/schema.md``, "Accuracy, ACPL,
judgements"):

1. by rating band of the player (200 points wide): games, lichess's average
   game accuracy and average centipawn loss, and inaccuracies, mistakes and
   blunders per game, over the games with evals;
2. by seconds left on the mover's clock after the move: the share of
   analysed moves judged an inaccuracy, a mistake or a blunder (the
   time-pressure curve).

DuckDB reads the Parquet out of core: a month of games needs no more memory
than a file's row group.

    python examples/accuracy_by_rating.py games/
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

BY_RATING = """
WITH sides AS (
    SELECT white_elo AS elo, white_accuracy AS accuracy, white_acpl AS acpl,
           white_inaccuracies AS inaccuracies, white_mistakes AS mistakes, white_blunders AS blunders
    FROM games WHERE white_accuracy IS NOT NULL AND white_elo IS NOT NULL
    UNION ALL
    SELECT black_elo, black_accuracy, black_acpl, black_inaccuracies, black_mistakes, black_blunders
    FROM games WHERE black_accuracy IS NOT NULL AND black_elo IS NOT NULL
)
SELECT (elo // 200) * 200 AS band, count(*) AS games,
       round(avg(accuracy), 1) AS accuracy, round(avg(acpl), 1) AS acpl,
       round(avg(inaccuracies), 2) AS inaccuracies, round(avg(mistakes), 2) AS mistakes,
       round(avg(blunders), 2) AS blunders
FROM sides GROUP BY band ORDER BY band
"""

# A ply with a win percent was analysed (it has an eval); its judgement needs the eval before it too.
BY_CLOCK = """
WITH plies AS (
    SELECT unnest(judgement) AS judgement, unnest(clock) AS left_s, unnest(win_percent) AS win
    FROM games WHERE judgement IS NOT NULL AND clock IS NOT NULL AND len(clock) = len(judgement)
)
SELECT CASE WHEN left_s < 10 THEN '0-10 s' WHEN left_s < 30 THEN '10-30 s' WHEN left_s < 60 THEN '30-60 s'
            WHEN left_s < 180 THEN '1-3 min' ELSE '3 min and more' END AS clock_left,
       min(left_s) AS low, count(*) AS moves,
       round(100 * avg(CASE WHEN judgement = 'Inaccuracy' THEN 1 ELSE 0 END), 2) AS inaccuracy_pct,
       round(100 * avg(CASE WHEN judgement = 'Mistake' THEN 1 ELSE 0 END), 2) AS mistake_pct,
       round(100 * avg(CASE WHEN judgement = 'Blunder' THEN 1 ELSE 0 END), 2) AS blunder_pct
FROM plies WHERE win IS NOT NULL AND left_s IS NOT NULL
GROUP BY clock_left ORDER BY low
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="a folder of fastpgn's Parquet (the converter's --format parquet)")
    args = p.parse_args(argv)
    import duckdb

    files = sorted(args.folder.rglob("*.parquet"))
    if not files:
        print(f"{args.folder}: no .parquet files (convert a dump with --format parquet first)", file=sys.stderr)
        return 2
    con = duckdb.connect()
    con.register("games", con.read_parquet([str(f) for f in files], hive_partitioning=False))
    for title, sql in (("By the player's rating (games with evals)", BY_RATING),
                       ("By seconds left on the mover's clock (analysed moves)", BY_CLOCK)):
        print(title)
        print(con.sql(sql))
    return 0


if __name__ == "__main__":
    sys.exit(main())
