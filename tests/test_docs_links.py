"""The documentation holds together: every relative link resolves, the README stays short and keeps CI's command.

A reader who follows a link in README.md, DEVELOP.md, CHANGELOG.md or a page
of docs/ (and docs/query/) lands on a file that exists and, for ``page.md#section``, on a
heading of that page (GitHub's anchors). docs/README.md is the index: it
lists every page of docs/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "DEVELOP.md", ROOT / "CHANGELOG.md", *DOCS.glob("*.md"),
                *DOCS.glob("query/*.md")])
README_LIMIT = 12_000   # bytes: the README is the start, the manuals are in docs/

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_TICKS = re.compile(r"`+")
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _without_code_spans(paragraph: str) -> str:
    """A paragraph without its code spans: a run of N backticks up to the next run of exactly N
    (CommonMark's rule; a run with no partner is literal text)."""
    out, at = [], 0
    runs = list(_TICKS.finditer(paragraph))
    i = 0
    while i < len(runs):
        opening = runs[i]
        partner = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opening.group())), None)
        if partner is None:
            i += 1
            continue
        out.append(paragraph[at:opening.start()])
        at = runs[partner].end()
        i = partner + 1
    out.append(paragraph[at:])
    return "".join(out)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans, where brackets are not links."""
    paragraphs = re.split(r"\n[ \t]*\n", _FENCE.sub("", text))
    return "\n\n".join(_without_code_spans(p) for p in paragraphs)


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page."""
    seen: dict[str, int] = {}
    anchors = set()
    for title in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)     # a link's text
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):      # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_sees_links_and_anchors():
    """The checks above would catch a broken link (a test that cannot fail is a defect)."""
    text = ("See [a](docs/x.md#one) and `[b](not/a/link.md)`.\n```\n[c](nor/this.md)\n```\n"
            "| `x`, `` | [d](d.md) |\n\n``[e](e.md)`` and [f](f.md)\n")
    assert _LINK.findall(_prose(text)) == ["docs/x.md#one", "d.md", "f.md"]
    readme = _anchors(ROOT / "docs" / "converter.md")
    assert {"exit-status", "the-22-field-line", "lichesss-parquet-release-as-input"} <= readme


def test_the_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size < README_LIMIT, f"README.md is {size:,} bytes; move detail to a page of docs/"


def test_the_readme_holds_the_command_ci_runs():
    """.ci/run runs exactly the README's test command: the two must not drift apart."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert "pytest" in ci
    readme_lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert ci in readme_lines


def test_the_docs_index_lists_every_page():
    index = {Path(t.partition("#")[0]).name for t in _links(DOCS / "README.md")}
    missing = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.name not in index)
    assert not missing, f"docs/README.md does not list {missing}"


def test_the_architecture_page_names_every_module():
    """docs/architecture.md says where each concern lives: a module it does not name is one a reader cannot place."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    kinds = {".py", ".pyx", ".pxi", ".pxd", ".pyi"}
    modules = [p for p in (ROOT / "fastpgn").rglob("*") if p.suffix in kinds and p.name != "__init__.py"]
    unnamed = sorted(str(p.relative_to(ROOT)) for p in modules if p.name not in text and f"`{p.stem}`" not in text)
    assert len(modules) > 80 and not unnamed, f"docs/architecture.md does not name {unnamed}"
