"""A UCI engine's eval for every ply of a game, written as lichess writes it: the library's names.

What is done to one game (its evals, the cache of positions met again,
lichess's layout of ``[%eval]`` beside ``[%clk]``) is defined in
``fastpgn._analysis``; this module is its public face. The ``analyse``
command (``python -m fastpgn analyse``: options, threads, ``--resume``,
summary, exit status) lives with the other commands in the ``cli`` package.
"""

from __future__ import annotations

from fastpgn._analysis import (EvalCache, Limit, analysable, analyse_game, complete_games, format_clock,  # noqa: F401
                               lichess_pgn, position_key)
from fastpgn._analysis import CACHE_ENTRIES, RESULTS  # noqa: F401 - re-exported: they were defined here

__all__ = ["EvalCache", "Limit", "analyse_game", "format_clock", "lichess_pgn", "position_key"]

# The examples of the library part run with this module's (``doctest.testmod(fastpgn.analyse)``).
__test__ = {"Limit": Limit, "position_key": position_key, "EvalCache": EvalCache, "format_clock": format_clock,
            "lichess_pgn": lichess_pgn, "analyse_game": analyse_game, "complete_games": complete_games}
