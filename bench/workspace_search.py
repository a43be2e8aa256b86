"""Search across a workspace: latency and memory as the number of repositories grows, and what merging the
repositories' lists costs in quality.

For each count N, a fresh process (peak RSS is per process) opens the first N repositories of workspace W
(`WorkspaceSearcher.open`: one Retriever per repository, one embedding model for all) and runs the same
queries `codeqa search --workspace W` runs, each against every repository, merged by score. It reports:
- open: opening the N indexes and loading the model, as a fresh `codeqa search` pays them;
- first search, then p50/p95 over the queries (warm), and the mean time per repository inside it;
- peak RSS, and its growth over the model alone (measured first in the same process);
- for N=1, each query also through the plain `Retriever` (what `codeqa search --repo` does), interleaved:
  the workspace's own cost with one repository.

With --questions Q.jsonl ("question", "project": a repository's name in W, "gold": [{"path", "start", "end"}],
as bench/questions/how-dev.jsonl), each question about one repository is searched across all of W, and the gold
span (and file) in the top 5 and 10 is counted three ways: searching the right repository alone (the ceiling),
merged by score (`codeqa search --workspace`), and merged by reciprocal rank (1/(60 + rank), ties by score).

    python bench/workspace_search.py WORKSPACE [--counts 1,2,5] [--rounds 3]
    python bench/workspace_search.py WORKSPACE --questions bench/questions/how-dev.jsonl
    (CODEQA_WORKSPACES_DIR chooses where workspace files are read; the indexes must exist)
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
from dataclasses import replace
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.embed import embedder_from_settings  # noqa: E402
from codeqa.query.workspace import RepositoryHit, WorkspaceSearcher, merge  # noqa: E402
from codeqa.workspace import load_workspace  # noqa: E402

# prose and identifier-shaped queries, none tuned to any one of the projects
QUERIES = ["how are errors handled and reported", "read the configuration from a file", "retry after a failure",
           "parse command line arguments", "cache entries expire after a time", "insert a document into a table",
           "render markdown to html", "match a path against patterns", "open an http session", "wait between attempts",
           "where is the plugin registered", "validate user input", "serialize to json", "close the stream",
           "the main entry point"]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentiles(ms: list[float]) -> tuple[float, float]:
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def one(workspace_name: str, count: int, rounds: int) -> dict:
    """One configuration, in this process: the first `count` repositories of the workspace."""
    settings = Settings.load()
    workspace = load_workspace(workspace_name, settings)
    if len(workspace.repositories) < count:
        raise SystemExit(f"workspace {workspace_name} has {len(workspace.repositories)} repositories, not {count}")
    workspace = replace(workspace, repositories=workspace.repositories[:count])
    embedder = embedder_from_settings(settings)
    embedder.encode(["warm up"])
    model_rss = peak_rss_mb()
    t0 = time.perf_counter()
    searcher = WorkspaceSearcher.open(workspace, settings, embedder)
    opened = time.perf_counter() - t0
    if searcher.unavailable:
        raise SystemExit(f"left out: {searcher.unavailable}")
    t0 = time.perf_counter()
    searcher.search(QUERIES[0], top_k=10)
    first = (time.perf_counter() - t0) * 1000
    # with one repository, the plain Retriever of `codeqa search --repo` answers each query too, right after the
    # workspace did: the same caches, the same moment of a loaded machine
    plain_retriever = searcher.retrievers[0][1] if count == 1 else None
    timings, plain = [], []
    for _ in range(rounds):
        for query in QUERIES:
            t0 = time.perf_counter()
            searcher.search(query, top_k=10)
            timings.append((time.perf_counter() - t0) * 1000)
            if plain_retriever is not None:
                t0 = time.perf_counter()
                plain_retriever.search(query + " ", top_k=10)  # another text: nothing kept from the line above
                plain.append((time.perf_counter() - t0) * 1000)
    searcher.close()
    p50, p95 = percentiles(timings)
    record = {"repositories": count, "names": [r.name for r in workspace.repositories], "open_s": round(opened, 2),
              "first_ms": round(first), "p50_ms": round(p50, 1), "p95_ms": round(p95, 1),
              "per_repository_ms": round(statistics.mean(timings) / count, 1),
              "peak_rss_mb": round(peak_rss_mb()), "model_rss_mb": round(model_rss)}
    if plain:
        record["plain_p50_ms"], record["plain_p95_ms"] = (round(v, 1) for v in percentiles(plain))
    return record


def by_reciprocal_rank(ranked, top_k: int) -> list[RepositoryHit]:
    """The other way to make one list: each repository's rank r scores 1/(60 + r), ties by the hit's score."""
    items = [(1 / (60 + rank), hit.score, RepositoryHit(name, hit))
             for name, hits in ranked for rank, hit in enumerate(hits, 1)]
    return [item[2] for item in sorted(items, key=lambda item: (-item[0], -item[1]))[:top_k]]


def quality(workspace_name: str, questions: Path) -> None:
    settings = Settings.load()
    workspace = load_workspace(workspace_name, settings)
    names = {r.name for r in workspace.repositories}
    asked = [q for q in map(json.loads, questions.read_text().splitlines()) if q.get("project") in names]
    if not asked:
        raise SystemExit(f"no question of {questions} is about a repository of {workspace_name}")
    ways = {"right repository alone": lambda q, ranked: [RepositoryHit(q["project"], h) for n, hits in ranked
                                                         if n == q["project"] for h in hits],
            "merged by score": lambda q, ranked: merge(ranked, 10),
            "merged by reciprocal rank": lambda q, ranked: by_reciprocal_rank(ranked, 10)}
    counts = {way: [0, 0, 0, 0] for way in ways}  # span@5, span@10, file@5, file@10
    own_share = {way: 0 for way in ways}
    with WorkspaceSearcher.open(workspace, settings) as searcher:
        for q in asked:
            ranked = [(name, r.search(q["question"], top_k=10)) for name, r in searcher.retrievers]
            for way, make in ways.items():
                found = make(q, ranked)
                for i, k in enumerate((5, 10)):
                    top = [f for f in found[:k] if f.repository == q["project"]]
                    counts[way][i] += any(g["path"] == f.hit.path and f.hit.start_line <= g["end"]
                                          and f.hit.end_line >= g["start"] for f in top for g in q["gold"])
                    counts[way][2 + i] += any(g["path"] == f.hit.path for f in top for g in q["gold"])
                own_share[way] += sum(f.repository == q["project"] for f in found[:10]) / 10
    print(f"{len(asked)} questions of {questions.name}, workspace {workspace_name} "
          f"({', '.join(r.name for r in workspace.repositories)}):")
    for way, (s5, s10, f5, f10) in counts.items():
        print(f"  {way:<26} gold span in top 5 {s5}/{len(asked)}, top 10 {s10}/{len(asked)}; gold file top 5 "
              f"{f5}/{len(asked)}, top 10 {f10}/{len(asked)}; top 10 from the question's repository "
              f"{own_share[way] / len(asked):.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workspace")
    parser.add_argument("--counts", default="1,2,5", help="numbers of repositories, the workspace's first ones")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries (default 3)")
    parser.add_argument("--questions", type=Path, help="measure the merge's quality on this question set instead")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one configuration
    args = parser.parse_args()
    if args.questions:
        quality(args.workspace, args.questions)
        return
    if args.one:
        print(json.dumps(one(args.workspace, args.one, args.rounds)))
        return
    for count in (int(c) for c in args.counts.split(",")):
        child = subprocess.run([sys.executable, __file__, args.workspace, "--one", str(count), "--rounds",
                                str(args.rounds)], capture_output=True, text=True, check=True)
        r = json.loads(child.stdout.strip().splitlines()[-1])
        plain = (f"; one plain Retriever: p50 {r['plain_p50_ms']} ms, p95 {r['plain_p95_ms']} ms"
                 if "plain_p50_ms" in r else "")
        print(f"{count} repositor{'y' if count == 1 else 'ies'} ({', '.join(r['names'])}): open {r['open_s']} s, first search {r['first_ms']} ms; "
              f"search p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms ({r['per_repository_ms']} ms per repository); "
              f"peak RSS {r['peak_rss_mb']} MB ({r['peak_rss_mb'] - r['model_rss_mb']} MB over the model alone)"
              f"{plain}", flush=True)


if __name__ == "__main__":
    main()
