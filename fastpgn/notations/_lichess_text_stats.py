"""Statistics of a file of compact games: games per date, played, won (as White, as Black), drawn, lost, open.

``Stats`` writes them as ``pgn-transform.pl`` does: a CSV and a table on
stdout, each ending with the summary line. :mod:`fastpgn.notations.lichess_text`
re-exports it.
"""

from __future__ import annotations

from fastpgn.notations._lichess_text_read import CompactGame

__all__ = ["Stats"]

_COLUMNS = ("Played", "Won", "Won as White", "Won as Black", "Drawn", "Lost", "Open")
# (result, my colour) -> the Stats row column it counts in (what CompactGame.outcome() says).
_STATS_COLUMN = {("1-0", "W"): 1, ("0-1", "B"): 2, ("1-0", "B"): 4, ("0-1", "W"): 4,
                 ("1/2-1/2", "W"): 3, ("1/2-1/2", "B"): 3, ("*", "W"): 5, ("*", "B"): 5}


class Stats:
    """Games per date: played, won (as White, as Black), drawn, lost, open.

    The first five columns are the original's; Lost and Open are ours, so
    that Played = Won + Drawn + Lost + Open and every game is counted.

    >>> s = Stats(); s.add(CompactGame("2021.04.07", "W", "1-0")); s.add(CompactGame("2021.04.07", "B", "1-0"))
    >>> print(s.summary())
    2 played, 1 won (50.0%), 1 won as white (50.0%), 0 won as black (0.0%), 0 draws (0.0%), 1 lost (50.0%), 0 open (0.0%)
    """  # noqa: E501 (doctest output)

    def __init__(self) -> None:
        self.days: dict[str, list[int]] = {}

    def add(self, game: CompactGame) -> None:
        self._add(game.date, game.colour, game.result)

    def _add(self, date: str, colour: str, result: str, games: int = 1) -> None:
        row = self.days.get(date)
        if row is None:
            row = self.days[date] = [0, 0, 0, 0, 0, 0]  # played, ww, wb, drawn, lost, open
        row[0] += games
        column = _STATS_COLUMN.get((result, colour))
        if column is None:  # a record built by hand
            outcome = CompactGame(date, colour, result).outcome()
            column = ((1 if colour == "W" else 2) if outcome == "won"
                      else {"drawn": 3, "lost": 4, "open": 5}[outcome])
        row[column] += games

    def rows(self) -> list[tuple[str, int, int, int, int, int, int, int]]:
        """``(date, played, won, won as white, won as black, drawn, lost, open)`` by date."""
        return [(d, r[0], r[1] + r[2], r[1], r[2], r[3], r[4], r[5])
                for d, r in sorted(self.days.items())]

    def totals(self) -> tuple[int, int, int, int, int, int, int]:
        sums = [0] * 7
        for _date, *counts in self.rows():
            for k in range(7):
                sums[k] += counts[k]
        played, won, ww, wb, drawn, lost, open_ = sums
        return played, won, ww, wb, drawn, lost, open_

    def summary(self) -> str:
        played, won, ww, wb, drawn, lost, open_ = self.totals()

        def pc(x: int) -> str:
            # The original divides by the count of wins and draws, and by zero without any.
            return f"{x * 100 / played:.1f}" if played else "0.0"

        return (f"{played} played, {won} won ({pc(won)}%), {ww} won as white ({pc(ww)}%), "
                f"{wb} won as black ({pc(wb)}%), {drawn} draws ({pc(drawn)}%), "
                f"{lost} lost ({pc(lost)}%), {open_} open ({pc(open_)}%)")

    def table(self) -> str:
        """The stdout table of ``pgn-transform.pl`` with Lost and Open columns, then the summary line."""
        out = ["Date        Played  Won  As White  As Black  Draws  Lost  Open",
               "==========  ======  ===  ========  ========  =====  ====  ===="]
        for d, played, won, ww, wb, drawn, lost, open_ in self.rows():
            out.append(f"{d}  {played:4}{won:6}{ww:8}{wb:10}{drawn:8}{lost:7}{open_:6}")
        out.append(self.summary())
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """The CSV: header row, a row per date, then the summary row as the original writes it."""
        out = ["Date, " + ", ".join(_COLUMNS)]
        for row in self.rows():
            out.append(", ".join(str(v) for v in row))
        out.append(", " + self.summary())
        return "\n".join(out) + "\n"

