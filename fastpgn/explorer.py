"""An opening explorer that counts as lichess's (lila-openingexplorer) does: built in DuckDB, and looked up.

``build_tree`` reads Parquet the converter wrote with positions on
(``--positions --uci``: the ``zobrist``, ``uci`` and ``moves`` columns) and
aggregates, out of core, one row per position, speed, rating group and
move, by lichess's rules (its importer ``import-lichess.rs`` and indexer
``indexer/lichess.rs``):

- a game counts when its result is decisive or drawn, both players have a
  rating, neither is a BOT and its clock names a speed (``every_game=True``
  counts every game);
- its first 50 plies count (``max_plies``), and a position it reached more
  than once counts once, with the last move the game played from it;
- ``rating_sum`` adds the MOVER's rating (the player whose move it was), so
  that ``averageRating`` is the movers' average;
- ``rating`` is the group of the two players' mean (rounded down): 0, 1000,
  1200, 1400, 1600, 1800, 2000, 2200, 2500 (up to 2799) and 2800 (2800 and
  over);
- ``games_kept`` keeps the row's 8 latest games (the month, then the order
  of the dataset), from which ``lookup`` picks the top and recent games.

The tree is one Parquet file sorted by ``zobrist``, so that ``lookup`` reads
only the row groups that can hold a position. ``lookup(tree, fen_or_board)``
answers field for field as lichess's ``/lichess`` explorer API: ``white``,
``draws``, ``black``, ``moves``, ``recentGames``, ``topGames``, ``opening``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from fastpgn._duckdb_files import literal, parquet_files, sql_files, sql_string as _quote
from fastpgn.filters import where_sql
from fastpgn.lichess import SPEEDS

__all__ = ["RATING_BANDS", "RATING_GROUPS", "SPEEDS", "Tree", "build_tree", "lookup", "start_key"]

#: The tree's rating groups (lichess's ``RatingGroup``): a game counts in the group of its players' mean
#: rating, rounded down; each group runs up to the next, the last (2800) has no end.
RATING_GROUPS = (0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500, 2800)
#: The groups ``lookup``'s ``ratings`` takes, as lichess's API: 2500 holds 2800 and over too.
RATING_BANDS = RATING_GROUPS[:-1]
#: lichess's depth (``MAX_PLIES`` of its indexer).
DEFAULT_MAX_PLIES = 50
DEFAULT_MEMORY = "2GB"
#: The games a row keeps (lichess's ``MAX_LICHESS_GAMES``), and the most top games an answer holds
#: (``MAX_TOP_GAMES``); an answer holds at most KEPT_GAMES top and recent games together.
KEPT_GAMES = 8
TOP_GAMES = 4
#: lichess's leaderboard high scores by speed (``Speed::highscore``), by which top games are ranked.
HIGHSCORES = {"ultraBullet": 2644, "bullet": 3352, "blitz": 2974, "rapid": 2949, "classical": 2533,
              "correspondence": 4000}
#: The lower bound lichess ranks a group's top games by: its top group (2800 and over) is its
#: ``Group3200``, whose bound is 3200.
_RANK_BOUND = {**{g: g for g in RATING_GROUPS}, 2800: 3200}
#: The columns a tree has, in order.
TREE_COLUMNS = ("zobrist", "speed", "rating", "uci", "san", "games", "white", "draws", "black", "rating_sum",
                "rated", "games_kept")


class Tree:
    """What ``build_tree`` did: the games it read, used, filtered out, could not use (no positions) and left
    out by lichess's rules (``every_game=False``): read = used + filtered + without positions + left out."""

    def __init__(self, path: str, rows: int, games_read: int, games_used: int, games_filtered: int,
                 games_without_positions: int, seconds: float, games_left_out: int = 0) -> None:
        self.path = path
        self.rows = rows
        self.games_read = games_read
        self.games_used = games_used
        self.games_filtered = games_filtered
        self.games_without_positions = games_without_positions
        self.games_left_out = games_left_out
        self.seconds = seconds

    def __repr__(self) -> str:
        return (f"Tree({self.path!r}, rows={self.rows}, games_read={self.games_read}, games_used={self.games_used}, "
                f"games_filtered={self.games_filtered}, games_without_positions={self.games_without_positions}, "
                f"games_left_out={self.games_left_out})")


def start_key(fen: str | None = None) -> int:
    """The Polyglot key (signed 64-bit) of a game's start: its FEN tag, else the standard start.

    >>> hex(start_key() & (1 << 64) - 1)
    '0x463b96181691fc9c'
    """
    from fastpgn import position_key

    return position_key(fen) if fen else position_key("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")


def require_duckdb():
    """The duckdb module, or an ImportError that says how to install it (an extra: the core stays light)."""
    try:
        import duckdb
    except ImportError:
        raise ImportError("DuckDB is not installed (the explorer and analyse --evals-db need it): "
                          "pip install 'fastpgn[duckdb]'") from None
    return duckdb


def connect(memory_limit: str = DEFAULT_MEMORY, temp_directory: str | None = None, threads: int | None = None):
    """An embedded DuckDB that spills to ``temp_directory`` past ``memory_limit`` (a month does not fit)."""
    duckdb = require_duckdb()

    con = duckdb.connect(":memory:")
    con.execute(f"SET memory_limit = {_quote(memory_limit)}")
    if temp_directory is not None:
        con.execute(f"SET temp_directory = {_quote(temp_directory)}")
    con.execute("SET preserve_insertion_order = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def _with_progress(con, sql: str, progress: Callable[[float], object] | None):
    """Run ``sql`` on ``con``; ``progress(percent)`` a few times a second from another thread while it runs."""
    if progress is None:
        return con.execute(sql)
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.25):
            try:
                value = con.query_progress()
            except Exception:  # noqa: BLE001 - the progress is a courtesy, never a failure
                return
            if value is not None and value >= 0:
                progress(float(value))

    thread = threading.Thread(target=poll, daemon=True, name="fastpgn-explorer-progress")
    thread.start()
    try:
        return con.execute(sql)
    finally:
        done.set()
        thread.join()
        progress(100.0)


def build_tree(dataset: str, output: str, *, max_plies: int = DEFAULT_MAX_PLIES, where=None,
               every_game: bool = False, by_speed: bool = True, by_rating: bool = True,
               memory_limit: str = DEFAULT_MEMORY, temp_directory: str | None = None, threads: int | None = None,
               progress: Callable[[float], object] | None = None) -> Tree:
    """Aggregate the first ``max_plies`` plies of a Parquet dataset (written with positions on) into ``output``.

    The games count by lichess's rules (the module's docstring); with
    ``every_game`` every game with positions counts (a result of ``*``
    counts in ``games`` only, a missing rating or speed gives a null
    ``rating`` or ``speed``). ``where``: a fastpgn.filters.Where (or dict)
    the games must pass; the others are counted as filtered out. Games
    without positions (a variant the board does not play, a move it
    refused) are counted apart. Returns a ``Tree`` with the counts.
    ``by_speed``/``by_rating`` are accepted for older callers: every tree
    has its ``speed`` and ``rating`` columns. ``output`` is written whole or
    not at all, in a private folder beside it (where DuckDB also spills,
    unless ``temp_directory`` says elsewhere) and renamed onto it
    (``fastpgn.io.output.staged``: a link at ``output`` is replaced by the
    tree, never written through).

    >>> tree = build_tree("games/", "tree.parquet")                     # doctest: +SKIP
    >>> fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    >>> lookup("tree.parquet", fen)["moves"][0]["san"]                  # doctest: +SKIP
    'e5'
    """
    import shutil
    import tempfile
    import time

    from fastpgn.errors import InputError
    from fastpgn.io.output import staged

    del by_speed, by_rating     # (always on)
    if max_plies < 1:
        raise ValueError(f"max_plies must be at least 1, not {max_plies}")
    started = time.perf_counter()
    files = parquet_files(dataset)
    if not files:
        raise InputError(f"{dataset}: no Parquet files")
    for path in files:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
    condition = where_sql(where)
    with staged(output) as written:
        spill = temp_directory
        if spill is None:
            # (the private folder the tree is written in: no one else can plant a link where DuckDB spills)
            spill = (os.path.join(os.path.dirname(written), "duckdb") if written != os.fspath(output)
                     else tempfile.mkdtemp(prefix="fastpgn-explorer-"))
        try:
            con = connect(memory_limit, spill, threads)
            rows, read, used, passed, positioned = _aggregate(con, files, dataset, written, condition, max_plies,
                                                              every_game, progress)
        finally:
            if temp_directory is None and os.path.isdir(spill):
                shutil.rmtree(spill, ignore_errors=True)
    return Tree(output, rows, read, used, read - passed, passed - positioned, time.perf_counter() - started,
                positioned - used)


#: lichess's importer (import-lichess.rs): a game with an unknown result (``*``), a missing rating or a BOT
#: player is never sent to the indexer, and the indexer takes only a game with a speed (from its clock).
_LICHESS_RULES = ("g.result IN ('1-0', '0-1', '1/2-1/2') AND g.white_elo IS NOT NULL AND g.black_elo IS NOT NULL "
                  "AND coalesce(g.white_title, '') <> 'BOT' AND coalesce(g.black_title, '') <> 'BOT' "
                  "AND g.speed IS NOT NULL")


def _group_sql(white: str, black: str) -> str:
    """The rating group of the players' mean rating, rounded down (lichess's ``midpoint``); null if one is
    missing."""
    return (f"CASE WHEN {white} IS NULL OR {black} IS NULL THEN NULL "
            + " ".join(f"WHEN ({white} + {black}) // 2 >= {g} THEN {g}" for g in reversed(RATING_GROUPS[1:]))
            + " ELSE 0 END")


def _aggregate(con, files, dataset, written, condition, max_plies, every_game, progress):
    """build_tree's queries on ``con`` (closed at the end): the tree written to ``written``; its rows, and the
    games read, used, passing the filter and passing it with positions."""
    from fastpgn.errors import InputError

    try:
        source = f"read_parquet({sql_files(files)}, union_by_name = true, filename = true)"
        try:
            names = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        except Exception as exc:  # noqa: BLE001 - DuckDB's error for a file that is not Parquet
            raise InputError(f"{dataset}: not a Parquet dataset ({str(exc).splitlines()[0]})") from None
        missing = [c for c in ("zobrist", "uci", "moves") if c not in names]
        if missing:
            raise InputError(f"{dataset}: no {', '.join(missing)} column: convert it with "
                             "--format parquet --positions --uci")
        fens = [r[0] for r in con.execute(
            f"SELECT DISTINCT fen FROM {source} WHERE fen IS NOT NULL AND ({condition})").fetchall()]
        starts: dict[str, int] = {}
        for fen in fens:
            try:
                starts[fen] = start_key(fen)
            except ValueError:
                pass            # a FEN the board refuses: its games have no positions either
        con.execute("CREATE TEMP TABLE starts (fen VARCHAR, k BIGINT)")
        if starts:
            con.executemany("INSERT INTO starts VALUES (?, ?)", list(starts.items()))
        # The dataset's order (its files in order, each in its order) ranks games played in the same month:
        # lichess ranks them in the order it imported them, the dump's.
        con.execute("CREATE TEMP TABLE files (path VARCHAR, no BIGINT)")
        con.executemany("INSERT INTO files VALUES (?, ?)", [(os.path.abspath(p), i) for i, p in enumerate(files)])
        standard = start_key()
        positioned = ("g.zobrist IS NOT NULL AND g.uci IS NOT NULL AND len(g.zobrist) = len(g.moves) "
                      "AND len(g.uci) = len(g.moves) AND (g.fen IS NULL OR s.k IS NOT NULL)")
        rules = "TRUE" if every_game else _LICHESS_RULES
        counts = con.execute(f"""
            SELECT count(*),
                   count(*) FILTER (WHERE {condition}),
                   count(*) FILTER (WHERE ({condition}) AND {positioned}),
                   count(*) FILTER (WHERE ({condition}) AND {positioned} AND {rules})
            FROM {source} g LEFT JOIN starts s ON g.fen = s.fen""").fetchone()
        read, passed, with_positions, used = (int(x) for x in counts)
        mode = "CASE WHEN g.event ILIKE '%casual%' THEN 'casual' ELSE 'rated' END" if "event" in names else "'rated'"
        sql = f"""
            COPY (
              WITH games AS (
                SELECT g.game_id, g.white, g.black, g.white_elo, g.black_elo, g.result, g.speed, {mode} AS mode,
                       strftime(g.date, '%Y-%m') AS month, coalesce(f.no, 0) * 1099511627776 + g.byte_offset AS rank,
                       coalesce(split_part(g.fen, ' ', 2) = 'b', false) AS black_first,
                       -- the positions before each move (not the one after the last move: no move leaves it)
                       list_prepend(coalesce(s.k, {standard}),
                                    g.zobrist[1:least({max_plies}, len(g.moves)) - 1]) AS keys,
                       g.uci[1:{max_plies}] AS ucis, g.moves[1:{max_plies}] AS sans
                FROM {source} g LEFT JOIN starts s ON g.fen = s.fen LEFT JOIN files f ON g.filename = f.path
                WHERE ({condition}) AND {positioned} AND {rules}
              ), plies AS (
                -- a position the game reached again counts once, with the move last played from it
                SELECT * EXCLUDE (keys, ucis, sans),
                       unnest(keys) AS zobrist, unnest(ucis) AS uci, rtrim(unnest(sans), '?!') AS san,
                       unnest(range(1, len(keys) + 1)) AS ply,
                       unnest(list_transform(keys, lambda x, i: NOT list_contains(keys[i + 1:], x))) AS last
                FROM games
              ), moves AS (
                SELECT *, CASE WHEN (ply % 2 = 1) <> black_first THEN white_elo ELSE black_elo END AS mover,
                       {_group_sql("white_elo", "black_elo")} AS rating
                FROM plies WHERE last AND san IS NOT NULL
              ), ranked AS (
                -- only the latest few of each row are kept (a window's row number, never a list of them all,
                -- and in no order: an ordered aggregate holds its rows in memory; lookup orders them)
                SELECT *, row_number() OVER (PARTITION BY zobrist, speed, rating, uci
                                             ORDER BY coalesce(month, '') DESC, rank DESC) AS latest
                FROM moves
              )
              SELECT zobrist, speed, rating::INTEGER AS rating, uci, min(san) AS san, count(*)::BIGINT AS games,
                     count(*) FILTER (WHERE result = '1-0')::BIGINT AS white,
                     count(*) FILTER (WHERE result = '1/2-1/2')::BIGINT AS draws,
                     count(*) FILTER (WHERE result = '0-1')::BIGINT AS black,
                     coalesce(sum(mover), 0)::BIGINT AS rating_sum, count(mover)::BIGINT AS rated,
                     -- (sorted after the aggregate: the latest first, whatever order the threads gave)
                     list_reverse_sort(list({{'month': coalesce(month, ''), 'rank': rank, 'id': game_id,
                            'winner': CASE result WHEN '1-0' THEN 'white' WHEN '0-1' THEN 'black' END,
                            'mode': mode,
                            'white': {{'name': white, 'rating': white_elo::INTEGER}},
                            'black': {{'name': black, 'rating': black_elo::INTEGER}}}})
                       FILTER (WHERE latest <= {KEPT_GAMES})) AS games_kept
              FROM ranked
              GROUP BY zobrist, speed, rating, uci
              ORDER BY zobrist, games DESC, uci
            ) TO {_quote(written)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 65536)"""
        _with_progress(con, sql, progress)
        rows = int(con.execute(f"SELECT count(*) FROM read_parquet({_quote(literal(written))})").fetchone()[0])
    finally:
        con.close()
    return rows, read, used, passed, with_positions


def _key_of(fen_or_board) -> int:
    from fastpgn import position_key

    return position_key(fen_or_board)


def _board_of(fen_or_board):
    """A fastpgn Board of the position (a copy of a Board given)."""
    from fastpgn import Board

    if isinstance(fen_or_board, Board):
        return fen_or_board.copy()
    fen = fen_or_board.strip()
    parts = fen.split()
    return Board(" ".join(parts + ["0", "1"][len(parts) - 4:]) if 4 <= len(parts) < 6 else fen)


def _opening(key: int) -> dict[str, str] | None:
    """lichess's opening of a position: the named position it is exactly (``openings.named_positions``)."""
    from fastpgn.openings import named_positions

    named = named_positions().get(key)
    return {"eco": named[0], "name": named[1]} if named else None


def _game(row: dict, speed: str | None) -> dict[str, Any]:
    """A kept game in the API's order: id, winner, speed, mode, black, white, year, month."""
    month = row["month"] or None
    return {"id": row["id"], "winner": row["winner"], "speed": speed, "mode": row["mode"],
            "black": dict(row["black"]), "white": dict(row["white"]),
            "year": int(month[:4]) if month else None, "month": month}


def _top_group(ratings) -> int | None:
    """The lowest group top games come from (lichess's ``top_group``): 2000 without a ratings filter, else
    the lowest of 2500, 2200, 2000 down to which every group is asked for; None if 2500 is not."""
    top = None
    for group in (2500, 2200, 2000):
        if ratings is not None and group not in ratings:
            break
        top = group
    return top


def lookup(tree: str, fen_or_board, *, speeds=None, ratings=None, moves: int | None = 12,
           top_games: int | None = None, recent_games: int | None = None, con=None) -> dict[str, Any]:
    """The moves played from a position, field for field as lichess's opening explorer API answers.

    ``{"white", "draws", "black", "moves": [{"uci", "san", "averageRating",
    "white", "draws", "black", "game", "opening"}, ...], "recentGames",
    "topGames", "opening"}``: the totals over every move, the ``moves`` most
    played moves (12, as lichess; None for all) sorted by games, each with
    its movers' average rating, its one game when it has only one, and the
    opening it leads to; the top games (at most 4: of players rated 2000 and
    over, ranked as lichess ranks them) and the latest games (the top and
    recent games together at most 8), each with the move it played;
    ``opening`` the position's (``{"eco", "name"}`` or None).
    ``speeds``/``ratings`` keep those speeds / rating groups (``RATING_BANDS``;
    2500 holds 2800 and over, as lichess's API). ``top_games``/``recent_games``
    cut those lists further. An unknown position has zero totals, no moves
    and no games.

    >>> lookup("tree.parquet", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")   # doctest: +SKIP
    {'white': 1186, 'draws': 86, 'black': 1152, 'moves': [{'uci': 'e2e4', 'san': 'e4', 'averageRating': 1638, ...
    """
    from fastpgn.errors import InputError

    duckdb = require_duckdb()
    key = _key_of(fen_or_board)
    own = con is None
    if own:
        con = duckdb.connect(":memory:")
    try:
        source = f"read_parquet({_quote(literal(tree))})"
        try:
            names = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        except duckdb.Error as exc:
            raise InputError(f"{tree}: not an explorer tree ({str(exc).splitlines()[0]})") from None
        if not set(TREE_COLUMNS) <= names:
            if {"zobrist", "uci", "san", "games"} <= names:
                raise InputError(f"{tree}: an explorer tree of an older fastpgn (no rating_sum, games_kept "
                                 "columns): build it again")
            raise InputError(f"{tree}: not an explorer tree (no zobrist, uci, san, games columns)")
        tests = [f"zobrist = {int(key)}"]
        wanted: list | None = None
        for flag, column, values, known in (("speeds", "speed", speeds, SPEEDS),
                                            ("ratings", "rating", ratings, RATING_BANDS)):
            if not values:
                continue
            values = [values] if isinstance(values, (str, int)) else list(values)
            bad = [v for v in values if v not in known]
            if bad:
                raise ValueError(f"{flag}: {bad[0]!r} is not one of {', '.join(map(str, known))}")
            if column == "rating":
                wanted = values
                tests.append("least(rating, 2500) IN (" + ", ".join(str(int(v)) for v in values) + ")")
            else:
                tests.append("speed IN (" + ", ".join(_quote(v) for v in values) + ")")
        where = " AND ".join(tests)
        rows = con.execute(f"""
            SELECT uci, min(san), sum(games)::BIGINT AS n, sum(white)::BIGINT, sum(draws)::BIGINT,
                   sum(black)::BIGINT, sum(rating_sum)::BIGINT, sum(rated)::BIGINT
            FROM {source} WHERE {where}
            GROUP BY uci ORDER BY sum(white + draws + black) DESC, n DESC, uci""").fetchall()
        kept = con.execute(f"""
            SELECT uci, speed, rating, g FROM (
              SELECT uci, speed, rating, unnest(games_kept) AS g FROM {source} WHERE {where})
            ORDER BY g.month DESC, g.rank DESC""").fetchall()
    finally:
        if own:
            con.close()
    board = _board_of(fen_or_board)
    latest: dict[str, dict] = {}
    for uci, speed, _rating, g in kept:
        latest.setdefault(uci, _game(g, speed))
    answer_moves = []
    for uci, san, _n, w, d, b, rating_sum, rated in rows:
        after = board.copy()
        after.push_uci(uci)
        answer_moves.append({
            "uci": uci, "san": san,
            # lichess rounds half away from zero
            "averageRating": (2 * rating_sum + rated) // (2 * rated) if rated else None,
            "white": w, "draws": d, "black": b,
            "game": latest.get(uci) if w + d + b == 1 else None,
            "opening": _opening(after.zobrist())})
    # Top games: of the groups from the top group up, ranked by how far the speed's high score is above the
    # group's bound, then the latest first (``LichessEntry::prepare``).
    top_group = _top_group(wanted)
    top: list[tuple[str, str | None, dict]] = []
    if top_group is not None:
        candidates = [(HIGHSCORES.get(speed or "", 0) - _RANK_BOUND[rating], i, uci, speed, g)
                      for i, (uci, speed, rating, g) in enumerate(kept)
                      if rating is not None and rating >= top_group]
        top = [(uci, speed, g) for _, _, uci, speed, g in sorted(candidates, key=lambda c: c[:2])[:TOP_GAMES]]
    chosen = {g["id"] for _, _, g in top}
    room = KEPT_GAMES - len(top)
    recent = [(uci, speed, g) for uci, speed, _r, g in kept if g["id"] not in chosen][:room]
    if top_games is not None:
        top = top[:top_games]
    if recent_games is not None:
        recent = recent[:recent_games]
    return {"white": sum(m["white"] for m in answer_moves), "draws": sum(m["draws"] for m in answer_moves),
            "black": sum(m["black"] for m in answer_moves),
            "moves": answer_moves if moves is None else answer_moves[:moves],
            "recentGames": [{"uci": uci, **_game(g, speed)} for uci, speed, g in recent],
            "topGames": [{"uci": uci, **_game(g, speed)} for uci, speed, g in top],
            "opening": _opening(key)}


# The examples run with doctest.testmod(fastpgn.explorer).
__test__ = {"start_key": start_key}
