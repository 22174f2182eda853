"""The report's page in a real headless Chromium with the network off, driven over its DevTools protocol.

Each chart is drawn (a screenshot of it is not blank), the console shows
no error, and the page asks for nothing outside itself: it opens offline,
as it must years later.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import ROOT, missing_system_package

pytest.importorskip("duckdb")
pytest.importorskip("plotly")
websocket = pytest.importorskip("websocket")
Image = pytest.importorskip("PIL.Image")

from fastpgn.report import build  # noqa: E402
from fastpgn.report.page import CHARTS  # noqa: E402

INSTALL = "needs Debian's chromium for the browser test: apt-get install -y chromium"


class Chromium:
    """A headless Chromium and one page of it, spoken to over the DevTools protocol (a websocket)."""

    def __init__(self, profile: Path) -> None:
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            missing_system_package(INSTALL)
        # Every host name resolves to nothing: a fetch from outside fails, and is seen in the requests.
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=1280,900",
             "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.events: list[dict] = []
        self._ids = itertools.count(1)
        port = self._port()
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                    pages = [t for t in json.load(answer) if t["type"] == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("Chromium opened no page")
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)

    def _port(self) -> int:
        deadline = time.monotonic() + 30
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                return int(found.group(1))
            if not line and self.proc.poll() is not None:
                break
        raise AssertionError("Chromium did not start its DevTools endpoint")

    def send(self, method: str, **params) -> dict:
        """Call ``method``; its result (the events that come meanwhile are kept in ``events``)."""
        call = next(self._ids)
        self.ws.send(json.dumps({"id": call, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == call:
                assert "error" not in message, message
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str, seconds: float = 30) -> None:
        if any(e.get("method") == method for e in self.events):
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            self.events.append(message)
            if message.get("method") == method:
                return
        raise AssertionError(f"no {method} within {seconds} s")

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _opened(page: Path, profile: Path):
    """``page`` opened in a fresh Chromium, offline, once every chart is drawn: the browser (close it)."""
    browser = Chromium(profile)
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")
        browser.send("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                     uploadThroughput=-1)
        browser.send("Page.navigate", url=page.as_uri())
        browser.wait_for("Page.loadEventFired")
        # Plotly draws on load; give it the moment it needs, then ask every chart whether it was drawn.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            drawn = browser.send("Runtime.evaluate", returnByValue=True, expression=(
                "Array.from(document.querySelectorAll('.plot .js-plotly-plot')).filter("
                "d => d.querySelector('.main-svg')).length"))["result"]["value"]
            if drawn == len(CHARTS):
                break
            time.sleep(0.2)
    except BaseException:
        browser.close()
        raise
    return browser


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    """The sample's report opened in Chromium, offline: the browser, and the page's events after loading."""
    folder = tmp_path_factory.mktemp("browser")
    page = folder / "report.html"
    build(os.path.relpath(ROOT / "data" / "sample.pgn.zst"), page, jobs=1)     # the page names it so
    browser = _opened(page, folder / "profile")
    try:
        # Measured at once: a screenshot beyond the viewport resizes the window, and plotly redraws to fit.
        browser.first_layout = _layout(browser)
        yield browser, page
    finally:
        browser.close()


def test_every_chart_is_drawn_and_not_blank(shown):
    browser, _ = shown
    boxes = browser.send("Runtime.evaluate", returnByValue=True, expression="""
        Array.from(document.querySelectorAll('.plot .js-plotly-plot')).map(d => {
            const r = d.getBoundingClientRect();
            return {id: d.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height,
                    traces: d.querySelectorAll('.trace, .bars .point, .scatterlayer .points path').length};
        })""")["result"]["value"]
    assert sorted(b["id"] for b in boxes) == sorted(f"chart-{name}" for name in CHARTS)
    for box in boxes:
        assert box["w"] > 300 and box["h"] > 200 and box["traces"] > 0, box
        shot = browser.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                            clip={"x": box["x"], "y": box["y"], "width": box["w"], "height": box["h"], "scale": 1})
        import base64

        picture = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
        colours = picture.getcolors(maxcolors=1 << 20) or []
        # A blank box is one colour (white); a chart has its axes, labels and the colours of its traces.
        assert len(colours) > 20, box["id"]
        white = max(count for count, colour in colours if colour == (255, 255, 255)) if any(
            c == (255, 255, 255) for _, c in colours) else 0
        assert white < 0.97 * picture.width * picture.height, box["id"]


def _complaints(browser) -> list[dict]:
    """The page's errors and warnings: exceptions, console.error/warn/assert/trace, the browser's own log."""
    return [e["params"] for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled"
                and e["params"]["type"] in ("error", "assert", "warning", "trace"))     # plotly.js warns by trace
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]


def test_no_console_error_nor_warning_and_nothing_fetched(shown):
    browser, page = shown
    assert _complaints(browser) == []
    asked = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert page.as_uri() in asked
    assert [u for u in asked if not u.startswith(("file:", "data:", "blob:"))] == []
    failed = [e["params"] for e in browser.events if e.get("method") == "Network.loadingFailed"]
    assert failed == []


def _layout(browser) -> list[dict]:
    """Each chart's boxes (its drawing, its box, its table of numbers) and the window's width, in pixels."""
    return browser.send("Runtime.evaluate", returnByValue=True, expression="""
        Array.from(document.querySelectorAll('.pair')).map(p => {
            const box = e => { const r = e.getBoundingClientRect();
                               return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
            return {chart: box(p.querySelector('.js-plotly-plot .main-svg')), plot: box(p.querySelector('.plot')),
                    table: box(p.querySelector('.numbers table')), numbers: box(p.querySelector('.numbers')),
                    id: p.querySelector('.js-plotly-plot').id, width: document.documentElement.clientWidth};
        })""")["result"]["value"]


def test_each_table_is_beside_its_chart_on_first_load(shown):
    """As the page first opens (no resize): each chart within its box, its table of numbers beside it, on screen."""
    browser, _ = shown
    pairs = browser.first_layout
    assert len(pairs) == len(CHARTS)
    for pair in pairs:
        chart, table, numbers = pair["chart"], pair["table"], pair["numbers"]
        apart = (chart["right"] <= numbers["left"] or numbers["right"] <= chart["left"]
                 or chart["bottom"] <= numbers["top"] or numbers["bottom"] <= chart["top"])
        assert apart, pair                              # the chart does not lie over its table
        assert chart["right"] <= pair["plot"]["right"] + 1, pair      # nor outgrows its box
        # beside it at this width (1280 pixels), and on screen
        assert numbers["left"] >= chart["right"] and numbers["right"] <= pair["width"], pair
        assert table["right"] > table["left"] and table["bottom"] > table["top"], pair


def test_the_page_says_what_it_shows(shown):
    browser, _ = shown
    text = browser.send("Runtime.evaluate", returnByValue=True,
                        expression="document.body.innerText")["result"]["value"]
    import fastpgn

    assert f"Made by fastpgn {fastpgn.__version__}" in text and "sample.pgn.zst" in text and "Filters: none" in text
    for title in ("How many games of each speed", "White's score against the rating gap",
                  "The 20 most played openings", "time left on the mover's clock"):
        assert title in text or title in json.dumps(browser.send(
            "Runtime.evaluate", returnByValue=True,
            expression="Array.from(document.querySelectorAll('.gtitle')).map(t => t.textContent)")["result"]["value"])


def test_the_docs_screenshot_tool_draws_the_page(tmp_path):
    """tools/report_screenshot.py (which makes docs/report.png) photographs a drawn page, offline."""
    import sys

    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        missing_system_package(INSTALL)
    shot = tmp_path / "report.png"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "report_screenshot.py"), "-o", str(shot)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    picture = Image.open(shot).convert("RGB")
    assert picture.size == Image.open(ROOT / "docs" / "report.png").size
    # the charts' colours are on it (a page photographed before plotly drew is text, grey on white)
    vivid = sum(n for n, (r, g, b) in picture.getcolors(maxcolors=1 << 22) or [] if max(r, g, b) - min(r, g, b) > 60)
    assert vivid > 0.03 * picture.width * picture.height


# An Opening tag that would end a script element, or open an HTML comment in it after which the element's own
# end tag no longer ends it; with an ampersand, and the line separators JavaScript once refused in a string.
HOSTILE = "</script><!--<script> & \u2028\u2029 x < y > z"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The sample's report with HOSTILE as the Opening of its first 300 games (the most played), in Chromium."""
    from helpers import decompressed

    folder = tmp_path_factory.mktemp("hostile")
    pgn = decompressed(ROOT / "data" / "sample.pgn.zst").decode()
    tags = re.escape('[Opening "')
    pgn = re.sub(tags + r'[^"\n]*"\]', lambda m: f'[Opening "{HOSTILE}"]', pgn, count=300)
    (folder / "hostile.pgn").write_text(pgn, encoding="utf-8")
    page = folder / "report.html"
    build(folder / "hostile.pgn", page, jobs=1, quiet=True)
    browser = _opened(page, folder / "profile")
    try:
        yield browser, page
    finally:
        browser.close()


def _value(browser, expression: str):
    """What ``expression`` gives in the page (an exception it throws fails the test, with its text)."""
    answer = browser.send("Runtime.evaluate", returnByValue=True, expression=expression)
    assert "exceptionDetails" not in answer, answer["exceptionDetails"]
    return answer["result"]["value"]


def test_a_tag_holding_script_tags_leaves_the_data_and_charts_whole(hostile):
    browser, _ = hostile
    data = _value(browser, "JSON.parse(document.getElementById('fastpgn-report-data').textContent)")
    openings = data["tables"]["openings"]
    assert openings["rows"][0][0] == HOSTILE and openings["rows"][0][1] == 300
    assert data["games"] == 3000
    drawn = browser.send("Runtime.evaluate", returnByValue=True, expression=(
        "Array.from(document.querySelectorAll('.plot .js-plotly-plot')).filter(d => d.querySelector('.main-svg'))"
        ".map(d => d.id)"))["result"]["value"]
    assert sorted(drawn) == sorted(f"chart-{name}" for name in CHARTS)
    # the value shows as text, in the table beside the chart and on the chart's axis
    cell = browser.send("Runtime.evaluate", returnByValue=True, expression=(
        "document.querySelector('table[data-table=openings] tbody tr td').textContent"))["result"]["value"]
    assert cell == HOSTILE
    assert _complaints(browser) == []
