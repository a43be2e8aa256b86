"""The public library API (`import codeqa`): what README shows works, and nothing heavy loads on import."""

from __future__ import annotations

import subprocess
import sys

import codeqa


def test_readme_library_example(indexed_repo, embedder, settings):
    hits = codeqa.search(indexed_repo, "split text into lowercase words", settings, top_k=3, embedder=embedder)
    assert hits and isinstance(hits[0], codeqa.Hit)
    assert any(h.path == "encoders/encoder.py" and h.symbol == "tokenize" for h in hits)
    answer = codeqa.ask(indexed_repo, "how is EncoderClass used?", settings, no_llm=True, embedder=embedder)
    assert isinstance(answer, codeqa.Answer) and answer.mode == "extractive"
    assert answer.citations and all(c.verified for c in answer.citations)


def test_import_is_light_and_exports_what_all_names():
    code = ("import sys, codeqa; heavy = [m for m in ('torch', 'qdrant_client', 'qdrant_edge', 'streamlit') if m in sys.modules];"
            "print(heavy); [getattr(codeqa, n) for n in codeqa.__all__ if n != '__version__']")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
