"""LLM-assisted retrieval, measured (issue 41, item 5): does a hypothetical answer written by the configured
model (HyDE, as codeQA did) lift retrieval on real developer questions?

    OPENAI_BASE_URL=... CODEQA_MODEL=... python bench/llm_retrieval.py --project streamlink-8.6.3 \
        --project conan-2.34.0 --out /tmp/hyde.jsonl

For each SWE-QA question (../shared/data/swe-qa, gold files as bench/llm_answers.py derives them), the
top 10 of `codeqa search` for the question alone and for the question followed by the model's short
hypothetical answer (code and identifiers it guesses, at most 128 tokens) are scored: file_recall@10
(the share of gold files in the top 10) and file MRR@10. The model's time per question is reported
too, since a user pays it before retrieval starts. Questions alternate into two halves (even, odd), so
a difference that shows on one half only is visible.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_answers import gold_for, open_project  # noqa: E402

HYDE_PROMPT = ("Write the Python code that most likely answers this question about the {project} code base: the "
               "classes, functions and calls involved, with their likely names. Code only, at most 15 lines.\n\n"
               "Question: {question}")


def file_scores(hits, gold: set[str]) -> tuple[float, float]:
    paths = list(dict.fromkeys(h.path for h in hits))[:10]
    recall = len(gold & set(paths)) / len(gold)
    rank = next((i for i, p in enumerate(paths, 1) if p in gold), None)
    return recall, (1 / rank if rank else 0.0)


def main(argv=None) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", required=True)
    parser.add_argument("--per-project", type=int, default=48)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from codeqa.llm import Generation, OpenAIChat
    from codeqa.query.retrieve import Retriever

    rows = []
    for project in args.project:
        repo, name, questions, settings = open_project(project)
        chat = OpenAIChat.from_settings(settings)
        with Retriever.open(repo, settings) as retriever:
            for number, q in enumerate(questions[:args.per_project]):
                gold, _ = gold_for(q["answer"], retriever)
                if not gold:
                    continue
                started = time.perf_counter()
                guess = chat.complete([{"role": "user", "content": HYDE_PROMPT.format(project=name, question=q["question"])}],
                                      Generation(max_tokens=128, wait=120, first_wait=300))
                llm_s = time.perf_counter() - started
                plain = file_scores(retriever.search(q["question"], top_k=10), gold)
                hyde = file_scores(retriever.search(q["question"] + "\n" + guess, top_k=10), gold)
                row = {"project": name, "number": number, "half": number % 2, "recall": plain[0], "mrr": plain[1],
                       "hyde_recall": hyde[0], "hyde_mrr": hyde[1], "llm_s": round(llm_s, 1)}
                rows.append(row)
                with args.out.open("a") as out:
                    out.write(json.dumps(row) + "\n")
                print(f"{name}#{number}: recall {plain[0]:.2f} -> {hyde[0]:.2f}, mrr {plain[1]:.2f} -> {hyde[1]:.2f}, "
                      f"{llm_s:.0f} s", file=sys.stderr, flush=True)
    summary = {}
    for half in (0, 1, None):
        chosen = [r for r in rows if half is None or r["half"] == half]
        if chosen:
            summary["all" if half is None else f"half{half}"] = {
                "questions": len(chosen), **{k: round(statistics.mean(r[k] for r in chosen), 3)
                                             for k in ("recall", "hyde_recall", "mrr", "hyde_mrr")},
                "llm_s_median": round(statistics.median(r["llm_s"] for r in chosen), 1)}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
