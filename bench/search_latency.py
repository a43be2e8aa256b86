"""Search latency and open time of the embedded engine (Qdrant Edge) at several index sizes, up to 500k chunks.

Chunks are real code text taken round-robin from a source tree (so BM25 sees real token
statistics) with random unit dense vectors (embedding 500k chunks on a laptop CPU would take a
day and does not change the engine's cost). For each size it reports:
- open: Retriever.open and the shard's load, as a fresh process pays them; then the first search;
- store p50/p95: one hybrid query inside the engine (dense + BM25 prefetch fused by weighted RRF);
- search p50/p95: the full `Retriever.search` path (query embedding, dense or hybrid, symbol boosts, ref hop);
- peak RSS of this process so far.
Half the queries are prose (dense only), half name identifiers (hybrid).

    python bench/search_latency.py SOURCE_DIR [--sizes 20000,100000,500000] [--queries 40]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.embed import make_embedder  # noqa: E402
from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.index import index_meta  # noqa: E402
from codeqa.query.retrieve import Retriever  # noqa: E402
from codeqa.store import open_store, point_id, query_sparse_vector  # noqa: E402
from codeqa.types import Chunk  # noqa: E402

# prose (dense only) and queries naming code (dense + BM25 fused with RRF), alternating
QUERIES = ["how are http redirects handled", "where is parse_args called", "parse the configuration file",
           "HelpFormatter write_usage", "where is the cache invalidated", "get_terminal_size fallback",
           "encode the request body as json", "invoke Context.forward", "retry a failed connection",
           "make_context with default_map", "validate user input", "echo_via_pager"]


def source_pieces(src: Path, n: int) -> list[tuple[str, str]]:
    pieces = []
    for f in walk_repository(src).files:
        lines = f.abs_path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        pieces.extend((f.path, "".join(lines[i:i + 30])) for i in range(0, len(lines), 30))
    if not pieces:
        raise SystemExit(f"no source files under {src}")
    return [pieces[i % len(pieces)] for i in range(n)]


def percentiles(timings: list[float]) -> tuple[float, float]:
    timings = sorted(timings)
    return statistics.median(timings), timings[min(len(timings) - 1, int(len(timings) * 0.95))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--sizes", default="20000,100000,500000")
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    embedder = make_embedder()
    embedder.encode(["warm up"])
    rng = np.random.default_rng(0)
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory(prefix="codeqa-latency-") as tmp:
            repo = Path(tmp) / "repo"
            repo.mkdir()
            settings = Settings.load(env={}, index_dir=Path(tmp) / "index")
            store = open_store(repo, settings, create=True)
            store.ensure_schema(embedder.dimension)
            t0 = time.perf_counter()
            pieces = source_pieces(args.source, size)
            for start in range(0, size, 2000):
                batch = pieces[start:start + 2000]
                chunks = [Chunk(point_id(i + start), f"c{(i + start) // 50}/{p}", 1, text.count("\n") + 1, "python", "module", (), text)
                          for i, (p, text) in enumerate(batch)]
                vectors = rng.standard_normal((len(chunks), embedder.dimension)).astype("float32")
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                store.upsert_chunks(chunks, vectors, [c.path for c in chunks])
            t1 = time.perf_counter()
            store.optimize()  # as an index run does before its meta
            optimize = time.perf_counter() - t1
            store.write_meta(index_meta(embedder, settings))
            store.flush()
            build = time.perf_counter() - t0
            store.close()
            t0 = time.perf_counter()
            retriever = Retriever.open(repo, settings, embedder=embedder)
            retriever.store.count_chunks()  # the shard is loaded on first use
            opened = time.perf_counter() - t0
            t0 = time.perf_counter()
            retriever.search(QUERIES[0], top_k=10)
            first = time.perf_counter() - t0
            store_ms, search_ms = [], []
            for i in range(args.queries):
                query = QUERIES[i % len(QUERIES)]
                vector = embedder.encode([query])[0]
                t0 = time.perf_counter()
                retriever.store.search(vector, query_sparse_vector(query), 30)
                store_ms.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                retriever.search(query, top_k=10)
                search_ms.append((time.perf_counter() - t0) * 1000)
            retriever.close()
            (s50, s95), (q50, q95) = percentiles(store_ms), percentiles(search_ms)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{size:>7} chunks: open {opened:.2f} s, first search {first * 1000:.0f} ms; hybrid store query p50 {s50:.1f} ms, "
                  f"p95 {s95:.1f} ms; full search p50 {q50:.1f} ms, p95 {q95:.1f} ms; build {build:.0f} s (optimize {optimize:.0f} s); "
                  f"peak RSS {rss:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
