"""Retrieval on real developer questions (issue 42): SWE-QA-Bench, a frozen development and test split.

    python bench/swe_qa.py                       # both splits, search and ask, one row a split
    python bench/swe_qa.py --split dev           # tune on this one only
    python bench/swe_qa.py --split test          # look at this one to confirm a change, never to find one
    python bench/swe_qa.py --json OUT.json       # metrics and per-question rows (gold, what came back)
    python bench/swe_qa.py --search-only --limit 12 --rerank
                                                 # the first 12 questions a project, the configured chat
                                                 # model (OPENAI_BASE_URL, CODEQA_MODEL) reranking (query/rerank.py)

The split is by project, frozen before any tuning (commit 1 of issue 42) and never changed since:

    dev   conan 2.34.0, streamlink 8.6.3, reflex 0.7.14     (144 questions)
    test  sqlfluff 3.4.2, astropy 7.1.0                      (96 questions)

Questions: ../shared/data/swe-qa/<project>.jsonl (48 a project). Sources: the PyPI sdists above, unpacked
under $CODEQA_BENCH_DATA (default /tmp/data), indexed with `codeqa index` into $CODEQA_BENCH_INDEX_ROOT
(bench/qa_harness.py). Versions were picked as the release whose files match most of the paths and
definitions the answers name (the answers were written against commits between those releases).

Gold, derived from each expert answer (bench/llm_answers.py `gold_for`, plus the answers' code blocks):
- files: the repository files it names (a path, or a module's dotted name), and the files defining the
  definitions it names (a name the index defines at most twice outside tests);
- spans: those definitions' line ranges, and each code block written as ```START:END:PATH (its text found
  in the sdist's file, nearest to START, since the release's lines differ from the commit's);
- symbols: the names it gives that the index defines.
A question with no gold file is left out of the figures (counted in `no_gold`).

Per question, over the top-10 of `codeqa search QUESTION` (what a person or an agent sees) and over the
snippets of `codeqa ask QUESTION --no-llm` (what an LLM is shown):
    file_recall   share of gold files among the results' files
    span_hit      1 if a result overlaps a gold span
    span_rr       1/rank of the first result overlapping a gold span (search only; MRR@10 in the mean)
    def_cover     share of gold spans of named definitions that a result overlaps (ask: "is the function
                  that does the work in the evidence")
    search_s      seconds a search took (mean; with --rerank, the model's reading and reply included), and
                  the 1-minute load average at the start and end of each project (this machine is shared)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_answers import SWE_QA, gold_for, named_definitions  # noqa: E402
from qa_harness import DATA, INDEX_ROOT, Session, ensure_index  # noqa: E402

SPLIT = {
    "dev": ["conan-2.34.0", "streamlink-8.6.3", "reflex-0.7.14"],
    "test": ["sqlfluff-3.4.2", "astropy-7.1.0"],
}
_BLOCK = re.compile(r"```(\d+):(\d+):([^\n`]+)\n(.*?)```", re.S)


def block_spans(answer: str, repo: Path, indexed: set[str]) -> list[tuple[str, int, int]]:
    """The answer's ```START:END:PATH code blocks as (path, start, end) in this release's file."""
    spans = []
    for m in _BLOCK.finditer(answer):
        start, end, name = int(m[1]), int(m[2]), m[3].strip().lstrip("./")
        path = next((p for p in sorted(indexed) if p == name or p.endswith("/" + name) or name.endswith("/" + p)), None)
        body = [line for line in m[4].splitlines() if line.strip()]
        if path is None or not body:
            continue
        lines = (repo / path).read_text(encoding="utf-8", errors="replace").splitlines()
        found = [i + 1 for i, line in enumerate(lines) if line.rstrip() == body[0].rstrip()]
        if found:
            at = min(found, key=lambda i: abs(i - start))
            spans.append((path, at, at + max(0, end - start)))
    return spans


def gold(question: dict, repo: Path, retriever) -> dict:
    files, symbols = gold_for(question["answer"], retriever)
    definitions = []
    for name in sorted(symbols):
        found = named_definitions(name, retriever)
        if len(found) <= 2:
            definitions += [(s.path, s.start_line, s.end_line) for s in found]
    spans = definitions + block_spans(question["answer"], repo, set(retriever.indexed_paths))
    files |= {p for p, _, _ in spans}
    return {"files": sorted(files), "spans": spans, "definitions": definitions, "symbols": sorted(symbols)}


def overlaps(hit: dict, spans) -> bool:
    return any(hit["path"] == p and hit["start_line"] <= e and s <= hit["end_line"] for p, s, e in spans)


def measure(hits: list[dict], g: dict) -> dict:
    files = {h["path"] for h in hits}
    rank = next((i for i, h in enumerate(hits, 1) if overlaps(h, g["spans"])), None)
    covered = [d for d in g["definitions"] if any(overlaps(h, [d]) for h in hits)]
    return {"file_recall": len(files & set(g["files"])) / len(g["files"]),
            "span_hit": float(rank is not None), "span_rr": 1 / rank if rank else 0.0,
            "def_cover": len(covered) / len(g["definitions"]) if g["definitions"] else None}


def run_project(project: str, top_k: int, ask: bool, index: bool, limit: int | None = None,
                rerank: bool = False) -> list[dict]:
    repo, index_dir = DATA / project, INDEX_ROOT / project
    if index:
        ensure_index(repo, index_dir, log=lambda m: print(m, file=sys.stderr))
    name = project.rsplit("-", 1)[0]
    questions = [json.loads(line) for line in (SWE_QA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    with Session(repo, index_dir) as session:
        if rerank:  # the Session leaves the chat endpoint out; the reranker alone gets it
            from codeqa.config import Settings
            from codeqa.query.rerank import reranker_from_settings

            session.retriever.reranker = reranker_from_settings(Settings.load().with_(rerank="llm"))
        for number, q in enumerate(questions[:limit]):
            g = gold(q, repo, session.retriever)
            row = {"project": name, "number": number, "question": q["question"], "gold": g}
            if g["files"]:
                started = time.perf_counter()
                hits = session.search(q["question"], top_k=top_k)
                row["search"] = {**measure(hits, g), "search_s": time.perf_counter() - started}
                row["search_hits"] = [f"{h['path']}:L{h['start_line']}-L{h['end_line']}" for h in hits]
                if ask:
                    snippets = session.ask(q["question"]).get("snippets") or []
                    row["ask"] = measure(snippets, g)
                    row["ask_snippets"] = [f"{s['path']}:L{s['start_line']}-L{s['end_line']}" for s in snippets]
            rows.append(row)
    return rows


def summarise(rows: list[dict]) -> dict:
    scored = [r for r in rows if "search" in r]
    out = {"questions": len(rows), "scored": len(scored), "no_gold": len(rows) - len(scored)}
    for side in ("search", "ask"):
        part = [r[side] for r in scored if side in r]
        if not part:
            continue
        for metric in ("file_recall", "span_hit", "span_rr", "def_cover", "search_s"):
            values = [p[metric] for p in part if p.get(metric) is not None]
            out[f"{side}.{metric}"] = round(statistics.fmean(values), 3) if values else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test", "both"], default="both")
    ap.add_argument("--project", action="append", help="only this project (e.g. conan-2.34.0); repeatable")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--search-only", action="store_true", help="skip `ask` (its columns are then absent)")
    ap.add_argument("--no-index", action="store_true", help="use the indexes as they are")
    ap.add_argument("--limit", type=int, help="only the first N questions of each project (a fixed subsample)")
    ap.add_argument("--rerank", action="store_true",
                    help="rerank with the configured chat model (OPENAI_BASE_URL, CODEQA_MODEL; query/rerank.py)")
    ap.add_argument("--json", type=Path, help="write the summary and every row here")
    args = ap.parse_args(argv)
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    report, all_rows = {}, []
    for split in splits:
        rows = []
        for project in SPLIT[split]:
            if args.project and project not in args.project:
                continue
            load = os.getloadavg()[0]
            part = run_project(project, args.top_k, not args.search_only, not args.no_index, args.limit, args.rerank)
            report[f"{split}/{project}"] = {**summarise(part), "load": f"{load:.1f}-{os.getloadavg()[0]:.1f}"}
            rows += part
        if rows:
            report[split] = summarise(rows)
        all_rows += [{**r, "split": split} for r in rows]
    for name, figures in report.items():
        print(f"{name:28} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps({"report": report, "rows": all_rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
