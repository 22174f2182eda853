"""What lichess computes from a game's evals and clocks, as the pure column sink's lists; the twin of scan/analysis.pxi.

The formulas are ``fastpgn.accuracy``'s (the reference; docs/schema.md,
"Accuracy, ACPL, judgements"): per ply White's win percent, lichess's
judgement and the seconds spent; per game each side's accuracy, average
centipawn loss and judgements counted. The compiled twin ports the same
double operations in the same order, so the columns are equal to the bit.
"""

from __future__ import annotations

from fastpgn import accuracy as _accuracy, schema

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any

_PER_GAME = ("white_accuracy", "black_accuracy", "white_acpl", "black_acpl", "white_inaccuracies", "white_mistakes",
             "white_blunders", "black_inaccuracies", "black_mistakes", "black_blunders")


def _count(n: int) -> int | None:
    return n if n <= schema.INT16[1] else None


def analysis_columns(headers: list[dict[str, str]], moves: list[list[str]],
                     evals: list[tuple[Any, Any]],     # (schema.eval_columns': both lists, or both None)
                     clocks: list[list[float | None] | None],
                     time_controls: list[tuple[int | None, int | None]]) -> dict[str, list[Any]]:
    """The columns fastpgn.accuracy computes from the evals and clocks of a block's games (in the schema's
    order): from each game's headers, SAN moves, ``(eval_cp, eval_mate)`` lists, clock list and
    ``(base_seconds, increment_seconds)``.

    >>> cols = analysis_columns([{}], [["e4", "e5"]], [([20, 30], [None, None])], [[180, 178]], [(180, 2)])
    >>> cols["judgement"], cols["move_seconds"], cols["white_acpl"]
    ([[None, None]], [[0.0, 2.0]], [0])
    """
    per_ply: dict[str, list[Any]] = {"win_percent": [], "judgement": [], "move_seconds": []}
    per_game: dict[str, list[Any]] = {name: [] for name in _PER_GAME}
    for h, m, (cps, mates), clock, control in zip(headers, moves, evals, clocks, time_controls):
        white_first = _accuracy.starts_white(h.get("FEN"))
        if clock is None or None in control:     # no clock, or no time control (correspondence)
            per_ply["move_seconds"].append(None)
        else:
            per_ply["move_seconds"].append(
                [None if s is None else float(s) for s in _accuracy.move_seconds(clock, control, white_first)])
        values: tuple[Any, ...] = (None,) * len(_PER_GAME)
        if cps is None:
            per_ply["win_percent"].append(None)
            per_ply["judgement"].append(None)
        else:
            scores = list(zip(cps, mates))
            per_ply["win_percent"].append([_accuracy.win_percent(cp, mate) for cp, mate in scores])
            per_ply["judgement"].append(_accuracy.judgements(scores, white_first))
            analysed = _accuracy.analysed(scores, m[-1] if m else None)
            if analysed is not None:
                counts = _accuracy.judgement_counts(analysed, white_first)
                values = (*_accuracy.game_accuracy(analysed, white_first), *_accuracy.acpl(analysed, white_first),
                          *(_count(counts[side][name]) for side in ("white", "black") for name in _accuracy.JUDGEMENTS))
        for name, value in zip(_PER_GAME, values):
            per_game[name].append(value)
    return {**per_ply, **per_game}


__all__ = ["analysis_columns"]
