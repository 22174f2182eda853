"""The report's page: the tables of ``fastpgn.report.queries`` drawn with Plotly, in one self-contained HTML file.

Plotly's JavaScript is written into the page once (no CDN: the page opens
offline), each chart is a Plotly figure beside a table of its numbers, and
all the numbers are in the page once more as JSON (the script tag
``fastpgn-report-data``) for programs and tests. The figures are JSON too
(``fastpgn-report-figures``), drawn by one script at the end of the page:
by then every table beside a chart is laid out, so each chart is drawn at
the width its box has (drawn earlier, a chart took the whole row and lay
over its table until the window was resized). JSON inside a ``<script>``
element is written with ``<``, ``>`` and ``&`` escaped (``script_json``),
so that no tag value can end the element or open an HTML comment in it.
"""

from __future__ import annotations

import datetime
import html
import json
import os
from typing import Any

import fastpgn
from fastpgn.report.queries import CLOCK_BANDS, SPEED_ORDER

RESULT_WORDS = {"1-0": "White won", "1/2-1/2": "Draw", "0-1": "Black won", "*": "Unfinished"}
# The range of White's score the Openings chart's colour scale spans.
SCORE_COLOURS = (30.0, 70.0)
JUDGEMENTS = (("inaccuracy_pct", "Inaccuracies"), ("mistake_pct", "Mistakes"), ("blunder_pct", "Blunders"))
# Human words for the tables' column names.
HEADINGS = {
    "games": "games", "pct": "% of the speed's games", "speed": "speed", "day": "day", "month": "month",
    "rating": "rating (from)", "players": "players (one a side of a game)", "diff": "White's rating minus Black's",
    "white_score_pct": "White's score %", "expected_pct": "Elo expects %", "result": "result",
    "termination": "how it ended", "opening": "opening", "white_wins_pct": "White won %", "draws_pct": "draws %",
    "band": "rating band (from)", "sides": "players with analysis", "accuracy": "accuracy %",
    "acpl": "average centipawn loss", "moves": "analysed moves", "inaccuracy_pct": "inaccuracies %",
    "mistake_pct": "mistakes %", "blunder_pct": "blunders %", "clock_band": "time left after the move",
}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1em 3em; color: #222; }
h1 { margin-bottom: 0.2em; } .meta { color: #555; font-size: 0.9em; }
section { border-top: 1px solid #ddd; padding-top: 0.5em; margin-top: 1.5em; }
.pair { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.plot { flex: 3 1 640px; min-height: 420px; min-width: 0; overflow: hidden; }
.numbers { flex: 1 1 300px; max-height: 440px; overflow: auto; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } th { text-align: left; background: #f6f6f6; }
.note { background: #fff6d5; padding: 0.6em 1em; border-left: 4px solid #e0b400; }
.damage { background: #fde2e1; padding: 0.6em 1em; border-left: 4px solid #c62828; font-weight: 600; }
"""
# Plotly's options for every chart: no logo, and redrawn to its box's width when the window is resized.
CONFIG = {"displaylogo": False, "responsive": True}
# Draws every figure of the page once the page is laid out (the script is the page's last).
DRAW = """
(function () {
  var figures = JSON.parse(document.getElementById("fastpgn-report-figures").textContent);
  Object.keys(figures).forEach(function (id) {
    Plotly.newPlot(id, figures[id].data, figures[id].layout, %s);
  });
})();
"""


def _speed_key(speed: str) -> int:
    return SPEED_ORDER.index(speed) if speed in SPEED_ORDER else len(SPEED_ORDER)


def _speeds(rows: list, at: int = 0) -> list[str]:
    return sorted({row[at] for row in rows}, key=_speed_key)


def _figure(title: str, x_title: str, y_title: str, **layout):
    import plotly.graph_objects as go

    fig = go.Figure()
    layout.setdefault("margin", {"t": 60, "l": 60, "r": 20, "b": 60})
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, template="plotly_white",
                      hovermode="closest", **layout)
    return fig


def _bar(fig, x, y, name: str | None = None, **kw):
    import plotly.graph_objects as go

    fig.add_trace(go.Bar(x=x, y=y, name=name, **kw))


def _line(fig, x, y, name: str, **kw):
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(x=x, y=y, name=name, mode="lines+markers", **kw))


def _by_speed(t):
    rows = t["rows"]
    fig = _figure("How many games of each speed", "speed", "games")
    _bar(fig, [r[0] for r in rows], [r[1] for r in rows], customdata=[r[2] for r in rows],
         hovertemplate="%{x}: %{y:,} games (%{customdata}%)<extra></extra>")
    return fig


def _by_period(t):
    period = t["columns"][0]
    rows = t["rows"]
    fig = _figure(f"Games played each {period}, by speed", period, "games", barmode="stack")
    for speed in _speeds(rows, 1):
        mine = [r for r in rows if r[1] == speed]
        _bar(fig, [r[0] for r in mine], [r[2] for r in mine], speed,
             hovertemplate="%{x}: %{y:,} " + speed + " games<extra></extra>")
    return fig


def _ratings(t):
    rows = t["rows"]
    fig = _figure("How strong the players are: ratings by speed", "rating (100-point steps)",
                  "players (each side of each game)")
    for speed in _speeds(rows):
        mine = [r for r in rows if r[0] == speed]
        _line(fig, [r[1] for r in mine], [r[2] for r in mine], speed,
              hovertemplate=speed + ", rating %{x}-%{x}+99: %{y:,} players<extra></extra>")
    return fig


def _score_by_diff(t):
    rows = t["rows"]
    fig = _figure("Does the higher-rated player win? White's score against the rating gap",
                  "White's rating minus Black's (50-point steps)", "White's score %")
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(x=[r[0] for r in rows], y=[r[2] for r in rows], mode="markers", name="White's score",
                             customdata=[r[1] for r in rows],
                             marker={"size": 8}, hovertemplate="gap %{x}: White scored %{y}% in %{customdata:,} "
                                                               "games<extra></extra>"))
    fig.add_trace(go.Scatter(x=[r[0] for r in rows], y=[r[3] for r in rows], mode="lines",
                             name="what the Elo formula expects",
                             hovertemplate="gap %{x}: Elo expects %{y}%<extra></extra>"))
    return fig


def _shares(t, category: int, title: str, words: dict[str, str] | None = None):
    rows = t["rows"]
    speeds = _speeds(rows)
    fig = _figure(title, "% of the speed's games", "speed", barmode="stack")
    cats = sorted({r[category] for r in rows}, key=lambda c: (-sum(r[2] for r in rows if r[category] == c), c))
    if words:
        cats = [c for c in words if c in cats] + [c for c in cats if c not in words]
    for cat in cats:
        mine = {r[0]: r for r in rows if r[category] == cat}
        label = (words or {}).get(cat, cat)
        _bar(fig, [mine[s][3] if s in mine else 0 for s in speeds], speeds, label, orientation="h",
             customdata=[mine[s][2] if s in mine else 0 for s in speeds],
             hovertemplate=label + " (%{y}): %{x}% (%{customdata:,} games)<extra></extra>")
    return fig


def _openings(t):
    rows = list(reversed(t["rows"]))
    fig = _figure("The 20 most played openings, and how White scored in them", "games", "",
                  height=max(420, 28 * len(rows) + 120), margin={"l": 360, "t": 60, "r": 20, "b": 60})
    import plotly.graph_objects as go
    from plotly.colors import sample_colorscale

    # Each bar's colour is picked here: plotly.js warns ("Invalid color specifier") for each bar whose marker
    # colour is a number on a colour scale, and the colour bar comes from a trace of no points.
    low, high = SCORE_COLOURS
    colours = sample_colorscale("RdBu", [min(1.0, max(0.0, ((r[2] if r[2] is not None else 50) - low) /
                                                       (high - low))) for r in rows])
    _bar(fig, [r[1] for r in rows], [r[0] for r in rows], orientation="h", showlegend=False,
         customdata=[[r[2], r[3], r[4]] for r in rows],
         hovertemplate="%{y}: %{x:,} games; White scored %{customdata[0]}% (won %{customdata[1]}%, "
                       "drew %{customdata[2]}%)<extra></extra>",
         marker={"color": colours})
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", showlegend=False, hoverinfo="skip",
                             marker={"colorscale": "RdBu", "cmin": low, "cmax": high, "showscale": True,
                                     "colorbar": {"title": {"text": "White's score %"}}}))
    return fig


def _accuracy(t):
    rows = t["rows"]
    fig = _figure("How accurately players of each rating play (games with computer analysis)",
                  "rating band (200 points)", "accuracy % (lichess)",
                  yaxis2={"title": "average centipawn loss", "overlaying": "y", "side": "right"})
    _line(fig, [r[0] for r in rows], [r[2] for r in rows], "accuracy %", customdata=[r[1] for r in rows],
          hovertemplate="rating %{x}-%{x}+199: accuracy %{y}% (%{customdata:,} players)<extra></extra>")
    _line(fig, [r[0] for r in rows], [r[3] for r in rows], "average centipawn loss", yaxis="y2",
          hovertemplate="rating %{x}-%{x}+199: %{y} centipawns lost a move<extra></extra>")
    return fig


def _judgements(t, title: str, x_title: str, labels: list | None = None):
    rows = t["rows"]
    fig = _figure(title, x_title, "% of analysed moves", barmode="group")
    x = labels or [r[0] for r in rows]
    for at, (_column, word) in enumerate(JUDGEMENTS):
        _bar(fig, x, [r[2 + at] for r in rows], word, customdata=[r[1] for r in rows],
             hovertemplate="%{x}: %{y}% " + word.lower() + " (of %{customdata:,} moves)<extra></extra>")
    fig.update_xaxes(type="category")
    return fig


def _clock_labels(t) -> list[str]:
    return [CLOCK_BANDS[r[0]][1] for r in t["rows"]]


# name: (section heading, draw, what the section needs when its table is empty)
CHARTS = {
    "by_speed": ("Games by speed", _by_speed, None),
    "by_period": ("Games over time", _by_period, "no game has a date"),
    "ratings": ("Ratings", _ratings, "no game has a rating"),
    "score_by_diff": ("Rating gap and result", _score_by_diff, "no finished game has both ratings"),
    "results": ("Results", lambda t: _shares(t, 1, "How games end, by speed", RESULT_WORDS), None),
    "terminations": ("How games end", lambda t: _shares(t, 1, "Why games end (the Termination tag), by speed"), None),
    "openings": ("Openings", _openings, "no game names its opening (the Opening tag)"),
    "accuracy_by_band": ("Accuracy by rating", _accuracy,
                         "no game here has computer analysis on every move (the [%eval] comments)"),
    "judgements_by_band": ("Mistakes by rating", lambda t: _judgements(
        t, "Inaccuracies, mistakes and blunders by the mover's rating", "rating band (200 points)"),
        "no game here has computer analysis (the [%eval] comments)"),
    "judgements_by_clock": ("Mistakes under time pressure", lambda t: _judgements(
        t, "Inaccuracies, mistakes and blunders by the time left on the mover's clock", "time left after the move",
        _clock_labels(t)), "no analysed game here has clock times (the [%clk] comments)"),
}


# Columns whose numbers are ratings or gaps: written 1500, not 1,500.
PLAIN = {"rating", "band", "diff"}


def _cell(value: Any, plain: bool = False) -> str:
    if isinstance(value, bool) or value is None:
        return f"<td>{'' if value is None else value}</td>"
    if isinstance(value, int) and plain:
        return f'<td class="n">{value}</td>'
    if isinstance(value, int):
        return f'<td class="n">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="n">{value:,.2f}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _html_table(name: str, t: dict[str, list]) -> str:
    columns = t["columns"]
    rows = t["rows"]
    if name == "judgements_by_clock":
        rows = [[CLOCK_BANDS[r[0]][1], *r[1:]] for r in rows]
    head = "".join(f"<th>{html.escape(HEADINGS.get(c, c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(v, c in PLAIN) for c, v in zip(columns, row)) + "</tr>" for row in rows)
    return f'<table data-table="{name}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _known(n: int | None) -> str:
    return "not known" if n is None else f"{n:,}"


def _summary(report) -> str:
    t = report.tables.get("summary")
    s = dict(zip(t["columns"], t["rows"][0])) if t else {}
    lines = [("games in the report", f"{report.games:,}")]
    if s:
        lines += [("first and last day", f"{s['first_day'] or '?'} to {s['last_day'] or '?'}"),
                  ("players", f"{s['players']:,}"),
                  ("games with evals ([%eval])", f"{s['with_evals']:,} ({s['evals_pct']}%)"),
                  ("games with clocks ([%clk])", f"{s['with_clocks']:,} ({s['clocks_pct']}%)"),
                  ("games with accuracy (evals on every move)", f"{s['with_accuracy']:,}"),
                  ("White's score", f"{s['white_score_pct']}%")]
    lines += [("games read", _known(report.games_read)),
              ("games rejected (bad PGN)", _known(report.games_rejected)),
              ("games filtered out", _known(report.games_filtered))]
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in lines)
    return f'<table data-table="summary-page">{rows}</table>'


# The words of each input's state in the table of inputs.
STATES = {"finished": "whole", "damaged": "damaged", "unfinished": "conversion not finished",
          "no record": "no record of its conversion"}


def _inputs(report) -> str:
    """Each input's games: in the report, read, rejected and filtered out, and whether it is whole."""
    head = "".join(f"<th>{h}</th>" for h in ("input", "Parquet", "state", "games in the report", "games read",
                                            "games rejected (bad PGN)", "games filtered out"))
    body = "".join(
        "<tr>" + f"<td>{html.escape(s.name)}</td><td>{html.escape(s.where)}</td>"
        f"<td>{html.escape(STATES.get(s.state, s.state))}</td>"
        + "".join(f'<td class="n">{_known(n)}</td>' for n in (s.games, s.read, s.rejected, s.filtered_out()))
        + "</tr>" for s in report.sources)
    return (f'<table data-table="inputs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def _banners(report) -> list[str]:
    """A banner over the page for each damaged input: what and where the damage is, what the page holds."""
    out = []
    for s in report.damaged:
        rejected = f", {s.rejected:,} rejected" if s.rejected else ""
        out.append(f'<p class="damage" role="alert">{html.escape(s.name)} is damaged: {html.escape(s.damage or "")}. '
                   f"The page holds its {s.rows:,} whole game{'' if s.rows == 1 else 's'} before the damage "
                   f"({_known(s.read)} read{rejected}).</p>")
    return out


def script_json(value: Any) -> str:
    """JSON text safe inside a ``<script>`` element: ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes.

    A tag value can then neither end the element (``</script>``) nor open an
    HTML comment in it (``<!--<script>``, after which ``</script>`` does not
    end it), and the text is the same JSON to a parser.

    >>> print(script_json({"opening": "</script><!--<script>"}))
    {"opening": "\\u003c/script\\u003e\\u003c!--\\u003cscript\\u003e"}
    """
    return _script_safe(json.dumps(value, ensure_ascii=True))


def _script_safe(text: str) -> str:
    # (these characters stand only inside strings in JSON text, where the escapes mean the same)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def render(report, plotly_js: str | None = None) -> str:
    """The page of ``report`` (a fastpgn.report.Report) as HTML text."""
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    sections = _banners(report)
    for note in report.notes:
        sections.append(f'<p class="note">{html.escape(note[0].upper() + note[1:])}.</p>')
    figures: list[str] = []
    if report.games:
        for name, (heading, draw, empty) in CHARTS.items():
            t = report.tables[name]
            if not t["rows"]:
                sections.append(f'<section id="{name}"><h2>{html.escape(heading)}</h2>'
                                f'<p class="note">No chart: {html.escape(empty or "no games")}.</p></section>')
                continue
            # (the figure's JSON as plotly writes it, keyed by its div: the script at the end draws it)
            figures.append(f'"chart-{name}": {pio.to_json(draw(t), pretty=False)}')
            sections.append(f'<section id="{name}"><h2>{html.escape(heading)}</h2><div class="pair">'
                            f'<div class="plot"><div id="chart-{name}" class="chart" style="height:100%; '
                            f'width:100%;"></div></div><div class="numbers">{_html_table(name, t)}</div>'
                            "</div></section>")
    filters = ", ".join(f"{k}={v}" for k, v in report.filters.items()) or "none"
    made = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fastpgn {html.escape(fastpgn.__version__)}">
<title>fastpgn report: {html.escape(', '.join(os.path.basename(i.rstrip('/')) for i in report.inputs))}</title>
<style>{STYLE}</style>
<script type="text/javascript">{plotly_js if plotly_js is not None else get_plotlyjs()}</script>
</head><body>
<h1>Games at a glance</h1>
<p class="meta">Made by fastpgn {html.escape(fastpgn.__version__)} on {made}.
Inputs: {html.escape(', '.join(report.inputs))}. Filters: {html.escape(filters)}.
Hover over a chart for its numbers; each table beside a chart holds them all.</p>
<section id="summary"><h2>Summary</h2>{_summary(report)}
<h3>Inputs</h3>{_inputs(report)}</section>
{''.join(sections)}
<script type="application/json" id="fastpgn-report-data">{script_json(report.as_dict())}</script>
<script type="application/json" id="fastpgn-report-figures">{_script_safe("{" + ", ".join(figures) + "}")}</script>
<script type="text/javascript">{DRAW % json.dumps(CONFIG)}</script>
</body></html>
"""


def write(report) -> None:
    """Write ``report``'s page to ``report.path``, whole or not at all (``fastpgn.io.output.staged``: written
    beside it and renamed; a link at the path is replaced, never written through)."""
    from fastpgn.io import output

    text = render(report)
    with output.staged(report.path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


__all__ = ["CHARTS", "render", "script_json", "write"]
