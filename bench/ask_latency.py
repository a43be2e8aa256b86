"""Time from question to the first streamed token with the LLM excluded, model warm.

What is timed is everything codeqa does before an LLM could start answering: follow-up handling,
routing, query embedding, hybrid search, graph lookups, packing and prompt building. The chat
model is a FakeChat that yields at once. The extractive path (no LLM) is timed too: question to
its first piece, which is the whole answer being built.

    python bench/ask_latency.py REPO [--questions Q.txt] [--rounds 3] [--count 30]

Without --questions, questions are made from the index: usage ("Where is X used?"), search ("How
does X work?", plus a few generic ones) and relationship ("What is the connection between X and Y?").
One-time costs after opening (symbol table, manifest, the first question) are reported separately
and not in the percentiles.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.answer import Answerer  # noqa: E402
from codeqa.llm import FakeChat  # noqa: E402
from codeqa.config import Settings  # noqa: E402
from codeqa.query.retrieve import Retriever  # noqa: E402

GENERIC = ["how is the configuration loaded", "how are errors handled and reported", "what does the main entry point do",
           "where are files read from disk", "how is input validated"]


def make_questions(retriever: Retriever, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    named = [s for s in retriever.store.all_symbols() if s.kind in ("class", "function", "method") and not s.name.startswith("__")
             and "test" not in s.path.lower()]
    if not named:
        return GENERIC[:count]
    rng.shuffle(named)
    third = max(1, (count - len(GENERIC)) // 3)
    questions = [f"Where is {s.name} used?" for s in named[:third]]
    questions += [f"How does {s.qualified_name} work?" for s in named[third:2 * third]]
    pairs = named[2 * third:4 * third]
    questions += [f"What is the connection between {a.name} and {b.name}?" for a, b in zip(pairs[::2], pairs[1::2])]
    return (questions + GENERIC)[:count]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="an indexed repository")
    parser.add_argument("--questions", type=Path, help="one question per line")
    parser.add_argument("--rounds", type=int, default=3, help="times each question is asked (default 3)")
    parser.add_argument("--count", type=int, default=30, help="generated questions (default 30)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    settings = Settings.load()  # CODEQA_INDEX_DIR names an index kept elsewhere
    opened = time.perf_counter()
    with Retriever.open(args.repo, settings) as retriever:
        retriever.embedder.encode(["warm up the model"])
        load_seconds = time.perf_counter() - opened
        started = time.perf_counter()
        symbol_count = sum(1 for _ in retriever.store.all_symbols())
        _ = retriever.indexed_paths
        tables_seconds = time.perf_counter() - started
        if args.questions:
            questions = [q.strip() for q in args.questions.read_text(encoding="utf-8").splitlines() if q.strip()]
        else:
            questions = make_questions(retriever, args.count, args.seed)
        answerer = Answerer(retriever, settings, chat=FakeChat(["ok"]))

        cold = time.perf_counter()
        next(iter(answerer.stream(questions[0])))
        cold_seconds = time.perf_counter() - cold

        llm_path: dict[str, list[float]] = defaultdict(list)
        extractive: list[float] = []
        for _ in range(args.rounds):
            for question in questions:
                started = time.perf_counter()
                stream = answerer.stream(question)
                next(iter(stream))
                llm_path[stream.retrieval.route].append(time.perf_counter() - started)
                stream.result()
                started = time.perf_counter()
                next(iter(answerer.stream(question, no_llm=True)))
                extractive.append(time.perf_counter() - started)

    every = [t for times in llm_path.values() for t in times]
    print(f"repo {args.repo}: {symbol_count} symbols; {len(questions)} questions x {args.rounds} rounds")
    print(f"open index + warm model: {load_seconds:.2f}s; symbol table + manifest: {tables_seconds * 1000:.0f} ms; "
          f"first question after that: {cold_seconds * 1000:.0f} ms")
    print(f"{'first token, LLM excluded':<34} n={len(every):<4} p50 {percentile(every, 50) * 1000:7.1f} ms   "
          f"p95 {percentile(every, 95) * 1000:7.1f} ms   max {max(every) * 1000:7.1f} ms")
    for route, times in sorted(llm_path.items()):
        print(f"  {route:<32} n={len(times):<4} p50 {percentile(times, 50) * 1000:7.1f} ms   "
              f"p95 {percentile(times, 95) * 1000:7.1f} ms   mean {statistics.mean(times) * 1000:7.1f} ms")
    print(f"{'extractive answer (no LLM)':<34} n={len(extractive):<4} p50 {percentile(extractive, 50) * 1000:7.1f} ms   "
          f"p95 {percentile(extractive, 95) * 1000:7.1f} ms   max {max(extractive) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
