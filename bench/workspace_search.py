"""Search across a workspace: latency and memory as the number of repositories grows.

For each count N, a fresh process (peak RSS is per process) opens the first N repositories of workspace W
(`WorkspaceSearcher.open`: one Retriever per repository, one embedding model for all) and runs the same
queries `codeqa search --workspace W` runs, each against every repository, fused by reciprocal rank. It reports:
- open: opening the N indexes and loading the model, as a fresh `codeqa search` pays them;
- first search, then p50/p95 over the queries (warm), and the mean time per repository inside it;
- peak RSS, and its growth over the model alone (measured first in the same process);
- for N=1, each query also through the plain `Retriever` (what `codeqa search --repo` does), interleaved:
  the workspace's own cost with one repository.

    python bench/workspace_search.py WORKSPACE [--counts 1,2,5] [--rounds 3]
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
from codeqa.query.workspace import WorkspaceSearcher  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workspace")
    parser.add_argument("--counts", default="1,2,5", help="numbers of repositories, the workspace's first ones")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries (default 3)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one configuration
    args = parser.parse_args()
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
