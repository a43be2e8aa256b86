"""The documentation a newcomer reads (issue 64): a short README, docs by task whose links resolve, every setting
on a line of docs/configuration.md, and every benchmark figure's script named where bench/README.md says."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from codeqa.config import Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_every_setting_has_a_line_in_the_configuration_table():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    rows = "\n".join(line for line in text.splitlines() if line.startswith("| `"))
    missing = [f.name for f in fields(Settings) if f"`CODEQA_{f.name.upper()}`" not in rows]
    assert not missing, f"docs/configuration.md has no table line for: {', '.join(missing)}"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_links_between_the_readme_and_the_docs_resolve():
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s) and mailto links are not ours to check
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_readme_and_the_benchmarks_page_stay_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
    assert len((DOCS / "benchmarks.md").read_text(encoding="utf-8").splitlines()) <= 400


def test_each_script_bench_readme_quotes_in_the_benchmarks_page_is_named_there():
    index = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    benchmarks = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in index.splitlines() if line.startswith("| `") and ".py`" in line]
    quoted = [row[1].strip().strip("`") for row in rows if "docs/benchmarks.md" in row[3]]
    assert quoted, "bench/README.md quotes no script in docs/benchmarks.md"
    missing = [name for name in quoted if f"bench/{name}" not in benchmarks]
    assert not missing, f"bench/README.md says these are quoted in docs/benchmarks.md, which does not name them: {missing}"
