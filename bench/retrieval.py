"""Docstring retrieval benchmark (issues 3 and 9): can search find a function from its description?

For each project: copy it with every function docstring replaced by `pass` plus blank lines (line
numbers unchanged), index the copy with codeqa, query with the first paragraph of each docstring
(>= 6 words, tests skipped) and count a hit when a top-k result covers the function's `def` line.
Reports recall@1/5/10 and MRR@10 for codeqa search and, on the same data and model, the baseline
of plain 40-line windows (15-line overlap) ranked by cosine similarity.

    python bench/retrieval.py PROJECT_DIR [PROJECT_DIR ...] [--adapter default|none] [--max-queries 300]
        [--no-baseline] [--json OUT.json] [--workdir DIR]

--workdir keeps the stripped copies and their indexes (one per project and adapter) between runs:
the next run re-embeds nothing that did not change, so a search-side experiment takes seconds a
project instead of minutes.

Get projects as sdists, e.g. `pip download --no-binary :all: --no-deps attrs==24.2.0 -d /tmp/sdists`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.embed import make_embedder  # noqa: E402
from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.index import index_repo  # noqa: E402
from codeqa.eval.questions import MIN_DOCSTRING_WORDS, strip_docstrings  # noqa: E402
from codeqa.query.retrieve import Retriever  # noqa: E402

KS = (1, 5, 10)


def score(ranked: list[list[tuple[str, int, int]]], queries: list[dict]) -> dict:
    ranks = []
    for results, q in zip(ranked, queries):
        rank = next((i + 1 for i, (p, s, e) in enumerate(results) if p == q["path"] and s <= q["def_line"] <= e), None)
        ranks.append(rank)
    n = max(len(ranks), 1)
    out = {f"recall@{k}": sum(1 for r in ranks if r and r <= k) / n for k in KS}
    out["mrr@10"] = sum(1.0 / r for r in ranks if r and r <= 10) / n
    out["queries"] = len(ranks)
    return out


def windows(repo: Path, window: int = 40, overlap: int = 15) -> tuple[list[tuple[str, int, int]], list[str]]:
    """Every file the walk accepts as plain windows of `window` lines, `overlap` lines shared: (spans, texts),
    each text the file's path and the window's lines (the naive RAG of the baseline; bench/peers.py too)."""
    spans, texts = [], []
    for f in walk_repository(repo).files:
        lines = f.abs_path.read_text(encoding="utf-8").splitlines(keepends=True)
        start = 1
        while start <= len(lines):
            end = min(start + window - 1, len(lines))
            spans.append((f.path, start, end))
            texts.append(f"{f.path}\n" + "".join(lines[start - 1:end]))
            if end == len(lines):
                break
            start = end - overlap + 1
    return spans, texts


def window_ranking(spans: list[tuple[str, int, int]], vectors: np.ndarray, queries: list[str], embedder,
                   top_k: int = 10) -> list[list[tuple[str, int, int]]]:
    """The `top_k` windows by cosine similarity to each query (`vectors`: the windows' embeddings)."""
    sims = embedder.encode(queries) @ vectors.T
    return [[spans[i] for i in np.argsort(-row)[:top_k]] for row in sims]


def window_baseline(repo: Path, queries: list[dict], embedder, window: int = 40, overlap: int = 15) -> dict:
    spans, texts = windows(repo, window, overlap)
    vectors = embedder.encode(texts, batch_size=64)
    return score(window_ranking(spans, vectors, [q["query"] for q in queries], embedder), queries)


def run_project(project: Path, settings: Settings, max_queries: int, baseline: bool, workdir: Path) -> dict:
    copy = workdir / project.name
    if copy.exists():  # a kept copy is made again: same bytes, so its kept index has nothing to re-embed
        shutil.rmtree(copy)
    queries = [{"query": f.paragraph, "path": f.path, "def_line": f.def_line, "name": f.name}
               for f in strip_docstrings(project, copy) if len(f.paragraph.split()) >= MIN_DOCSTRING_WORDS and not f.is_test]
    random.Random(0).shuffle(queries)
    queries = queries[:max_queries]
    embedder = make_embedder(settings.embeddings, settings.embedding_adapter)
    t0 = time.perf_counter()
    report = index_repo(copy, settings, embedder=embedder)
    index_seconds = time.perf_counter() - t0
    embedder.encode(["warm up"])  # a kept index needs no embedding: load the model outside the timing
    with Retriever.open(copy, settings, embedder=embedder) as retriever:
        t0 = time.perf_counter()
        ranked = [[(h.path, h.start_line, h.end_line) for h in retriever.search(q["query"], top_k=10)] for q in queries]
        search_seconds = (time.perf_counter() - t0) / max(len(queries), 1)
    result = {"project": project.name, "files": report.files_total, "chunks": report.chunks,
              "index_seconds": round(index_seconds, 1), "search_ms": round(search_seconds * 1000, 1),
              "codeqa": score(ranked, queries), "model": embedder.model_id}
    if baseline:
        result["windows"] = window_baseline(copy, queries, embedder)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--adapter", default="default", help="default | none | path to a .safetensors adapter")
    parser.add_argument("--max-queries", type=int, default=300)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--workdir", type=Path, help="keep copies and indexes here and reuse them (default: a temporary folder)")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="codeqa-bench-") as tmp:
        work = args.workdir.resolve() if args.workdir else Path(tmp)
        adapter_tag = re.sub(r"[^\w.-]+", "_", args.adapter)
        for project in args.projects:
            settings = Settings.load(index_dir=work / f"index-{adapter_tag}-{project.name}", embedding_adapter=args.adapter)
            result = run_project(project.resolve(), settings, args.max_queries, not args.no_baseline, work)
            results.append(result)
            print(json.dumps(result), flush=True)
    keys = ("recall@1", "recall@5", "recall@10", "mrr@10")
    for system in ("codeqa", "windows"):
        rows = [r[system] for r in results if system in r]
        if rows:
            print(f"mean {system:8s} " + "  ".join(f"{k} {np.mean([r[k] for r in rows]):.3f}" for k in keys))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
