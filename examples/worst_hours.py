"""The worst 24 hours in move accuracy: the average eval loss per move by UTC hour of day.

python-lichess-db-pgn-parser wrote the second of the day into its line "to
save time when using Spark ... when searching for time-related insights,
such as worst 24 hours in move accuracy". This is that query, over the
Parquet that fastpgn writes (``python -m fastpgn spark ... -o DIR``, or the
converter's ``--format parquet`` chunks), once in Spark SQL and once in
DuckDB; both give the same numbers.

The rule, in both: over the games with evals (``eval_cp`` is not null) that
start from the standard position (``fen`` is null) at a known time, each move
after the first whose eval before and after are both centipawn evals (a mate
eval is left out) loses ``max(0, before - after)`` centipawns from the
mover's side (White moves on even plies), each eval first clamped to
±1000 cp as lichess does for its average centipawn loss. The hour is the
game's start (``utc``), UTC. Rows: hour, moves counted, average loss; the
worst hour first.

    python examples/worst_hours.py games/                  # DuckDB
    python examples/worst_hours.py games/ --engine spark   # Spark, local[*]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

CLAMP = 1000

SPARK_SQL = f"""
SELECT hour, count(*) AS moves, avg(loss) AS avg_loss
FROM (
    SELECT CAST((unix_seconds(utc) % 86400) DIV 3600 AS INT) AS hour,
           explode(transform(sequence(1, size(eval_cp) - 1), i ->
               CASE WHEN eval_cp[i - 1] IS NOT NULL AND eval_cp[i] IS NOT NULL THEN
                   greatest(0, (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END) *
                       (least({CLAMP}, greatest(-{CLAMP}, CAST(eval_cp[i - 1] AS INT)))
                        - least({CLAMP}, greatest(-{CLAMP}, CAST(eval_cp[i] AS INT)))))
               END)) AS loss
    FROM games
    WHERE eval_cp IS NOT NULL AND size(eval_cp) >= 2 AND fen IS NULL AND utc IS NOT NULL
)
WHERE loss IS NOT NULL
GROUP BY hour
ORDER BY avg_loss DESC, hour
"""
# Spark's arrays count from 0 (ply i is White's move when i is even), DuckDB's lists from 1 (odd).
DUCKDB_SQL = f"""
SELECT hour, count(*) AS moves, avg(loss) AS avg_loss
FROM (
    SELECT CAST((epoch(utc)::BIGINT % 86400) // 3600 AS INTEGER) AS hour,
           unnest(list_transform(range(2, len(eval_cp) + 1), lambda i:
               CASE WHEN eval_cp[i - 1] IS NOT NULL AND eval_cp[i] IS NOT NULL THEN
                   greatest(0, (CASE WHEN i % 2 = 1 THEN 1 ELSE -1 END) *
                       (least({CLAMP}, greatest(-{CLAMP}, CAST(eval_cp[i - 1] AS INTEGER)))
                        - least({CLAMP}, greatest(-{CLAMP}, CAST(eval_cp[i] AS INTEGER)))))
               END)) AS loss
    FROM games
    WHERE eval_cp IS NOT NULL AND len(eval_cp) >= 2 AND fen IS NULL AND utc IS NOT NULL
)
WHERE loss IS NOT NULL
GROUP BY hour
ORDER BY avg_loss DESC, hour
"""


def parquet_files(folder) -> list[str]:
    """The dataset's Parquet files: a staging folder, hidden files and records (``_``, ``.``) left out."""
    root = Path(folder)
    if root.is_file():
        return [str(root)]
    return sorted(str(p) for p in root.rglob("*.parquet")
                  if not any(part[0] in "._" for part in p.relative_to(root).parts))


def with_spark(spark, folder) -> list[tuple[int, int, float]]:
    """(hour, moves, average loss) rows, worst first, by Spark SQL over the Parquet under ``folder``."""
    spark.read.parquet(*parquet_files(folder)).createOrReplaceTempView("games")
    return [(r["hour"], r["moves"], r["avg_loss"]) for r in spark.sql(SPARK_SQL).collect()]


def with_duckdb(folder) -> list[tuple[int, int, float]]:
    """The same rows by DuckDB over the same files."""
    import duckdb

    con = duckdb.connect()
    con.read_parquet(parquet_files(folder)).create_view("games")
    return [(int(h), int(m), float(a)) for h, m, a in con.execute(DUCKDB_SQL).fetchall()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset",
                        help="a folder of fastpgn Parquet (the spark command's DIR, or --format parquet chunks)")
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    parser.add_argument("--master", default="local[*]", help="Spark master (with --engine spark)")
    args = parser.parse_args(argv)
    if not parquet_files(args.dataset):
        print(f"worst_hours: no Parquet files under {args.dataset}", file=sys.stderr)
        return 2
    if args.engine == "spark":
        from fastpgn.spark import session

        spark = session(args.master, "worst hours")
        try:
            rows = with_spark(spark, args.dataset)
        finally:
            spark.stop()
    else:
        rows = with_duckdb(args.dataset)
    print("hour (UTC)  moves       average loss (cp)")
    for hour, moves, loss in rows:
        print(f"{hour:02d}:00       {moves:<11,} {loss:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
