"""Every number of the report, as DuckDB SQL over the analysis schema (docs/schema.md), in one place.

The view ``games`` holds the games the report covers (the filters applied);
each entry of ``QUERIES`` is one table of the page: its SQL, and the names
of the columns it answers. The filter flags become a SQL condition over the columns with
``fastpgn.filters.where_sql``, for Parquet inputs (a PGN input is filtered
by the converter on its way in).

A side's rating band is ``elo // 200 * 200`` (1500 holds 1500..1699); a
rating difference is White's rating minus Black's, to the nearest 50 points
(``round(diff / 50) * 50``, halves away from zero) clamped to +-800; White's score counts a win 1,
a draw 1/2, and leaves out unfinished games (``*``).
"""

from __future__ import annotations

from typing import NamedTuple

from fastpgn.lichess import SPEEDS

# The order speeds are shown in (lichess's, slowest last); a game without a speed is "unknown".
SPEED_ORDER = SPEEDS + ("unknown",)
SPEED = "coalesce(speed, 'unknown')"
SCORE = "CASE result WHEN '1-0' THEN 1.0 WHEN '0-1' THEN 0.0 WHEN '1/2-1/2' THEN 0.5 END"

class Query(NamedTuple):
    title: str          # what the progress bar says while it runs
    sql: str


# Each side of a game as a row: its rating, and with evals its accuracy, ACPL and judgement counts.
_SIDES = """
    SELECT {SPEED} AS speed, white_elo AS elo, white_accuracy AS accuracy, white_acpl AS acpl,
           white_inaccuracies AS inaccuracies, white_mistakes AS mistakes, white_blunders AS blunders FROM games
    UNION ALL
    SELECT {SPEED}, black_elo, black_accuracy, black_acpl, black_inaccuracies, black_mistakes, black_blunders
    FROM games
""".replace("{SPEED}", SPEED)

# Every analysed ply (one with an eval, so a win percent) of a game with evals: who moved (White moves
# the odd plies unless the FEN gives Black the move), the mover's rating, the clock after the move.
_PLIES = """
    SELECT CASE WHEN (i % 2 = 1) = (coalesce(split_part(fen, ' ', 2), 'w') <> 'b') THEN white_elo
                ELSE black_elo END AS elo,
           judgement[i] AS judgement, clock[i] AS left_s
    FROM (SELECT *, unnest(range(1, len(judgement) + 1)) AS i FROM games WHERE judgement IS NOT NULL)
    WHERE win_percent[i] IS NOT NULL
"""

_JUDGED = """count(*) AS moves,
       round(100 * avg(CASE WHEN judgement = 'Inaccuracy' THEN 1 ELSE 0 END), 2) AS inaccuracy_pct,
       round(100 * avg(CASE WHEN judgement = 'Mistake' THEN 1 ELSE 0 END), 2) AS mistake_pct,
       round(100 * avg(CASE WHEN judgement = 'Blunder' THEN 1 ELSE 0 END), 2) AS blunder_pct"""

# The clock bands of the time-pressure table: (upper bound in seconds, exclusive; its label).
CLOCK_BANDS = ((10, "under 10 s"), (30, "10-30 s"), (60, "30-60 s"), (180, "1-3 min"), (600, "3-10 min"),
               (None, "10 min and more"))
_CLOCK_BAND = ("CASE " + " ".join(f"WHEN left_s < {high} THEN {i}" for i, (high, _) in enumerate(CLOCK_BANDS)
                                  if high is not None) + f" ELSE {len(CLOCK_BANDS) - 1} END")

QUERIES: dict[str, Query] = {
    "summary": Query("summary", f"""
SELECT count(*) AS games, min(date) AS first_day, max(date) AS last_day,
       (SELECT count(DISTINCT name) FROM (SELECT white AS name FROM games UNION ALL SELECT black FROM games)
        WHERE name IS NOT NULL) AS players,
       count(eval_cp) AS with_evals, count(clock) AS with_clocks,
       round(100 * count(eval_cp) / count(*), 2) AS evals_pct, round(100 * count(clock) / count(*), 2) AS clocks_pct,
       count(white_accuracy) AS with_accuracy,
       round(avg({SCORE}) * 100, 2) AS white_score_pct
FROM games"""),
    "by_speed": Query("games by speed", f"""
SELECT {SPEED} AS speed, count(*) AS games, round(100 * count(*) / sum(count(*)) OVER (), 2) AS pct
FROM games GROUP BY 1 ORDER BY games DESC, speed"""),
    # by day, or by month when the games span more than 92 days (build() picks; {period} is 'day' or 'month')
    "by_period": Query("games by {period}", f"""
SELECT strftime(date_trunc('{{period}}', date), '{{fmt}}') AS {{period}}, {SPEED} AS speed, count(*) AS games
FROM games WHERE date IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"""),
    "ratings": Query("rating distribution", """
SELECT speed, elo // 100 * 100 AS rating, count(*) AS players
FROM (""" + _SIDES + """) WHERE elo IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"""),
    "score_by_diff": Query("White's score by rating difference", f"""
SELECT diff, count(*) AS games, round(100 * avg(score), 2) AS white_score_pct,
       round(100 / (1 + pow(10, -diff / 400)), 2) AS expected_pct
FROM (SELECT greatest(-800, least(800, round((white_elo - black_elo) / 50) * 50))::INTEGER AS diff, {SCORE} AS score
      FROM games WHERE white_elo IS NOT NULL AND black_elo IS NOT NULL AND {SCORE} IS NOT NULL)
GROUP BY diff ORDER BY diff"""),
    "results": Query("results by speed", f"""
SELECT {SPEED} AS speed, result, count(*) AS games,
       round(100 * count(*) / sum(count(*)) OVER (PARTITION BY {SPEED}), 2) AS pct
FROM games GROUP BY 1, 2 ORDER BY 1, 2"""),
    "terminations": Query("terminations by speed", f"""
SELECT {SPEED} AS speed, coalesce(termination, 'unknown') AS termination, count(*) AS games,
       round(100 * count(*) / sum(count(*)) OVER (PARTITION BY {SPEED}), 2) AS pct
FROM games GROUP BY 1, 2 ORDER BY 1, 2"""),
    "openings": Query("most played openings", f"""
SELECT opening, count(*) AS games, round(100 * avg({SCORE}), 2) AS white_score_pct,
       round(100 * avg(CASE result WHEN '1-0' THEN 1 WHEN '0-1' THEN 0 WHEN '1/2-1/2' THEN 0 END), 2) AS white_wins_pct,
       round(100 * avg(CASE result WHEN '1/2-1/2' THEN 1 WHEN '1-0' THEN 0 WHEN '0-1' THEN 0 END), 2) AS draws_pct
FROM games WHERE opening IS NOT NULL GROUP BY 1 ORDER BY games DESC, opening LIMIT 20"""),
    "accuracy_by_band": Query("accuracy by rating", """
SELECT elo // 200 * 200 AS band, count(*) AS sides, round(avg(accuracy), 2) AS accuracy, round(avg(acpl), 2) AS acpl
FROM (""" + _SIDES + """) WHERE elo IS NOT NULL AND accuracy IS NOT NULL GROUP BY 1 ORDER BY 1"""),
    "judgements_by_band": Query("mistakes by rating", f"""
SELECT elo // 200 * 200 AS band, {_JUDGED}
FROM ({_PLIES}) WHERE elo IS NOT NULL GROUP BY 1 ORDER BY 1"""),
    "judgements_by_clock": Query("mistakes by clock", f"""
SELECT {_CLOCK_BAND} AS clock_band, {_JUDGED}
FROM ({_PLIES}) WHERE left_s IS NOT NULL GROUP BY 1 ORDER BY 1"""),
}

# Counted before the filters, for the filtered-out figure of a Parquet input.
ALL_GAMES = "SELECT count(*) FROM all_games"

__all__ = ["ALL_GAMES", "CLOCK_BANDS", "QUERIES", "SPEED_ORDER", "Query"]
