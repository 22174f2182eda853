"""Every number of the report, as DuckDB SQL over the analysis schema (docs/schema.md), in one place.

The view ``games`` holds the games the report covers (the filters applied);
each entry of ``QUERIES`` is one table of the page: its SQL, and the names
of the columns it answers. ``where_sql`` turns the filter flags
(``fastpgn.filters.Where``) into a SQL condition over the columns, for
Parquet inputs (a PGN input is filtered by the converter on its way in).

A side's rating band is ``elo // 200 * 200`` (1500 holds 1500..1699); a
rating difference is White's rating minus Black's, to the nearest 50 points
(``round(diff / 50) * 50``, halves away from zero) clamped to +-800; White's score counts a win 1,
a draw 1/2, and leaves out unfinished games (``*``).
"""

from __future__ import annotations

from typing import NamedTuple

from fastpgn.filters import Where

# The order speeds are shown in (lichess's, slowest last); a game without a speed is "unknown".
SPEED_ORDER = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence", "unknown")
SPEED = "coalesce(speed, 'unknown')"
SCORE = "CASE result WHEN '1-0' THEN 1.0 WHEN '0-1' THEN 0.0 WHEN '1/2-1/2' THEN 0.5 END"

# A tag as the columns keep it: the string columns hold the tag's text, the ratings their number;
# every other tag is in the ``tags`` map.
TAG_COLUMNS = {
    "Event": "event", "White": "white", "Black": "black", "WhiteTitle": "white_title", "BlackTitle": "black_title",
    "Result": "result", "Termination": "termination", "TimeControl": "time_control", "ECO": "eco",
    "Opening": "opening", "Variant": "variant", "FEN": "fen",
    "WhiteElo": "CAST(white_elo AS VARCHAR)", "BlackElo": "CAST(black_elo AS VARCHAR)",
}


class Query(NamedTuple):
    title: str          # what the progress bar says while it runs
    sql: str


def _elo_test(where: Where, column: str, params: list) -> str:
    parts = [f"{column} IS NOT NULL"]
    if where.min_elo is not None:
        parts.append(f"{column} >= ?")
        params.append(where.min_elo)
    if where.max_elo is not None:
        parts.append(f"{column} <= ?")
        params.append(where.max_elo)
    return "(" + " AND ".join(parts) + ")"


def where_sql(where: Where | None) -> tuple[str, list]:
    """``where`` as a SQL condition over the analysis columns and its parameters; ``("TRUE", [])`` for none.

    It follows ``Where``'s rules: a missing rating, date or tag fails its
    test, a missing Variant is Standard, names compare ignoring case.

    >>> sql, params = where_sql(Where(min_elo=2000, speed="blitz"))
    >>> sql
    '(white_elo IS NOT NULL AND white_elo >= ?) AND (black_elo IS NOT NULL AND black_elo >= ?) AND speed IN (?)'
    >>> params
    [2000, 2000, 'blitz']
    """
    if not where:
        return "TRUE", []
    tests: list[str] = []
    params: list = []
    if where.min_elo is not None or where.max_elo is not None:
        if where.elo_of in ("white", "both"):
            tests.append(_elo_test(where, "white_elo", params))
        if where.elo_of in ("black", "both"):
            tests.append(_elo_test(where, "black_elo", params))
        if where.elo_of == "either":
            white = _elo_test(where, "white_elo", params)
            tests.append(f"({white} OR {_elo_test(where, 'black_elo', params)})")
    if where.speed:
        speeds = sorted(where.speed)
        tests.append(f"speed IN ({', '.join('?' * len(speeds))})")
        params.extend(speeds)
    if where.time_control is not None:
        tests.append("time_control = ?")
        params.append(where.time_control)
    if where.since is not None:
        tests.append("date >= CAST(? AS DATE)")
        params.append(where.since.replace(".", "-"))
    if where.until is not None:
        tests.append("date <= CAST(? AS DATE)")
        params.append(where.until.replace(".", "-"))
    if where.variant is not None:
        tests.append("lower(coalesce(variant, 'Standard')) = lower(?)")
        params.append(where.variant)
    if where.player is not None:
        tests.append("(lower(white) = lower(?) OR lower(black) = lower(?))")
        params.extend([where.player, where.player])
    if where.eco is not None:
        tests.append("starts_with(eco, ?)")
        params.append(where.eco)
    if where.termination is not None:
        tests.append("termination = ?")
        params.append(where.termination)
    if where.with_evals:
        tests.append("eval_cp IS NOT NULL")
    if where.with_clocks:
        tests.append("clock IS NOT NULL")
    if where.min_plies is not None:
        tests.append("plies >= ?")
        params.append(where.min_plies)
    if where.max_plies is not None:
        tests.append("plies <= ?")
        params.append(where.max_plies)
    for name, value in where.tags:
        column = TAG_COLUMNS.get(name)
        if column is None:
            tests.append("map_extract_value(tags, ?) = ?")
            params.extend([name, value])
        else:
            tests.append(f"{column} = ?")
            params.append(value)
    return " AND ".join(tests), params


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

__all__ = ["ALL_GAMES", "CLOCK_BANDS", "QUERIES", "SPEED_ORDER", "TAG_COLUMNS", "Query", "where_sql"]
