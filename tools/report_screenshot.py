"""Make docs/report.png: the top of the shipped sample's report, as headless Chromium draws it.

The report of data/sample.pgn.zst is made into a temporary folder and
photographed by Chromium's own ``--screenshot`` (a 1280-pixel-wide window,
at three quarters of its size), offline. Run it from the repository's root
after a change to the page:

    python tools/report_screenshot.py                      # writes docs/report.png
    python tools/report_screenshot.py -o /tmp/report.png --chromium /usr/bin/chromium
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT, SCALE = 1280, 2300, 0.75


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "report.png", help="the PNG to write")
    p.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"),
                   help="the Chromium to run (default: chromium on the PATH)")
    args = p.parse_args(argv)
    if not args.chromium:
        print("report_screenshot: no chromium on the PATH (apt-get install -y chromium, or --chromium PATH)",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from fastpgn.report import build

    with tempfile.TemporaryDirectory(prefix="fastpgn-screenshot-") as work:
        page, shot = Path(work) / "report.html", Path(work) / "report.png"
        # (named relative to the root, as the docs' command names it: the page shows the name)
        build("data/sample.pgn.zst" if Path.cwd() == ROOT else ROOT / "data" / "sample.pgn.zst", page, jobs=1)
        # Every host resolves to nothing: the page must draw from itself alone. The time budget lets the
        # page's drawing script finish before the picture is taken.
        done = subprocess.run(
            [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={Path(work) / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
             f"--window-size={WIDTH},{HEIGHT}", f"--force-device-scale-factor={SCALE}",
             "--virtual-time-budget=10000", f"--screenshot={shot}", page.as_uri()],
            capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or not shot.exists():
            print(f"report_screenshot: chromium failed ({done.returncode}): {done.stderr.strip()[-500:]}",
                  file=sys.stderr)
            return 1
        shutil.move(shot, args.output)
    print(f"report_screenshot: {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
