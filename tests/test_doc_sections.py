"""Documents by structure: Markdown and reStructuredText chunked by heading section, each chunk named by
its heading path and knowing the languages of its code blocks; search finds the section and says which."""

from __future__ import annotations

import shutil
from pathlib import Path

from codeqa.indexing.chunk import chunk_embedding_text, chunk_file
from codeqa.types import SourceFile
from conftest import FIXTURES
from test_chunk import assert_tiles

DOCS = FIXTURES / "documents"


def sections(name: str, max_chars: int = 1500, min_chars: int = 100):
    text = (DOCS / name).read_text(encoding="utf-8")
    chunks = chunk_file(SourceFile(f"docs/{name}", DOCS / name, None, len(text), ""), text, None, (), max_chars, min_chars)
    assert_tiles(text, chunks)
    assert {c.kind for c in chunks} == {"section"}
    return [(c.start_line, c.end_line, c.symbol_names, c.code_languages) for c in chunks]


def test_markdown_sections_follow_the_heading_tree():
    """ATX and setext headings nest by level (a setext `Usage` closes the ATX `## Install` before it, a
    skipped level nests), a `#` line in a code fence or a list item is no heading, and a section too
    long for a chunk is cut between paragraphs, every piece keeping its heading path."""
    q = "manual.md › Quickcache"
    assert sections("manual.md", max_chars=600, min_chars=60) == [
        (1, 2, ("manual.md",), ()),
        (3, 7, (q,), ()),
        (8, 17, (f"{q} › Install", f"{q} › Install › From PyPI"), ("bash",)),  # a bare heading joins what follows
        (18, 27, (f"{q} › Install › From source",), ("bash",)),
        (28, 41, (f"{q} › Usage",), ("python",)),
        (42, 50, (f"{q} › Usage › Expiry",), ()),
        (51, 58, (f"{q} › Usage › Expiry",), ()),
        (59, 62, (f"{q} › Troubleshooting",), ()),
    ]


def test_text_above_the_first_heading_takes_the_name_of_the_section_it_joins():
    assert sections("manual.md")[0] == (1, 7, ("manual.md › Quickcache",), ())


def test_rst_heading_levels_come_from_the_order_of_adornment_styles():
    """`=` over and under, `=` under, `-`, `~`: four levels, as docutils reads them; `.. code-block:: python`
    and a doctest block are Python code."""
    q = "setup.rst › Quickcache"
    assert sections("setup.rst", max_chars=600, min_chars=40) == [
        (1, 6, (q,), ()),
        (7, 11, (f"{q} › Configuration",), ()),
        (12, 22, (f"{q} › Configuration › Cache folder",), ("python",)),
        (23, 29, (f"{q} › Configuration › Cache folder › Size limit",), ("python",)),
        (30, 33, (f"{q} › Logging",), ()),
    ]


def test_the_embedded_text_leads_with_the_heading_path_and_the_code_language():
    text = (DOCS / "manual.md").read_text(encoding="utf-8")
    chunks = chunk_file(SourceFile("manual.md", DOCS / "manual.md", None, len(text), ""), text, None, ())
    usage = next(c for c in chunks if c.symbol_names[0].endswith("Usage"))
    header = chunk_embedding_text(usage, {}).splitlines()[:2]
    assert header[0].startswith("manual.md manual.md › Quickcache › Usage:") and header[1] == "python code"


def test_a_search_for_a_documented_concept_returns_its_section(tmp_path, embedder, settings):
    from codeqa.answer.extractive import extractive_answer
    from codeqa.indexing.index import index_repo
    from codeqa.query.retrieve import Retriever

    repo = tmp_path / "repo"
    shutil.copytree(DOCS, repo / "docs")
    (repo / "quickcache.py").write_text("def cached(ttl):\n    \"\"\"Keep results for ttl seconds.\"\"\"\n"
                                        "    return lambda f: f\n", encoding="utf-8")
    index_repo(repo, settings, embedder=embedder)
    with Retriever.open(repo, settings, embedder) as retriever:
        hits = retriever.search("how do I install quickcache from a git clone in editable mode", top_k=5)
        top = hits[0]
        assert (top.path, top.start_line, top.end_line, top.kind) == ("docs/manual.md", 18, 27, "section")
        assert top.symbol == "manual.md › Quickcache › Install › From source" and top.code_languages == ("bash",)
        assert top.title == "manual.md › Quickcache › Install › From source (bash code)"
        retrieval = retriever.retrieve("Where does the cache folder live and how is it moved?")
        answer = extractive_answer(retrieval, retriever)
    assert ("docs/setup.rst:L12-L21 — documentation, section “setup.rst › Quickcache › Configuration › Cache folder "
            "(python code)”") in answer
