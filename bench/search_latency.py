"""Search latency (model warm, index loaded, one warm-up query) in embedded Qdrant at several index sizes.

Chunks are real code text taken round-robin from a source tree (so BM25 sees real token
statistics) with random unit dense vectors (embedding 50k chunks on a laptop CPU would take many
minutes and does not change the cost of a brute-force dense scan). Queries go through the full
`Retriever.search` path: query embedding, dense (+ sparse and RRF when the query names code),
symbol boosts, ref hop. Half the queries are prose, half name identifiers.

    python bench/search_latency.py SOURCE_DIR [--sizes 1000,10000,20000,50000] [--queries 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.embed import make_embedder  # noqa: E402
from codeqa.files import walk_repository  # noqa: E402
from codeqa.index import index_meta  # noqa: E402
from codeqa.retrieve import Retriever  # noqa: E402
from codeqa.store import QdrantStore, point_id  # noqa: E402
from codeqa.types import Chunk  # noqa: E402

# prose (dense only) and queries naming code (dense + BM25 fused with RRF), alternating
QUERIES = ["how are http redirects handled", "where is parse_args called", "parse the configuration file",
           "HelpFormatter write_usage", "where is the cache invalidated", "get_terminal_size fallback",
           "encode the request body as json", "invoke Context.forward", "retry a failed connection",
           "make_context with default_map", "validate user input", "echo_via_pager"]


def source_pieces(src: Path, n: int) -> list[tuple[str, str]]:
    pieces = []
    for f in walk_repository(src).files:
        lines = f.abs_path.read_text(encoding="utf-8").splitlines(keepends=True)
        pieces.extend((f.path, "".join(lines[i:i + 30])) for i in range(0, len(lines), 30))
    if not pieces:
        raise SystemExit(f"no source files under {src}")
    return [pieces[i % len(pieces)] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--sizes", default="1000,10000,20000,50000")
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
            store = QdrantStore.open(repo, settings.index_dir_for(repo), create=True)
            store.ensure_collections(embedder.dimension)
            t0 = time.perf_counter()
            pieces = source_pieces(args.source, size)
            for start in range(0, size, 2000):
                batch = pieces[start:start + 2000]
                chunks = [Chunk(point_id(i + start), f"c{(i + start) // 50}/{p}", 1, text.count("\n") + 1, "python", "module", (), text)
                          for i, (p, text) in enumerate(batch)]
                vectors = rng.standard_normal((len(chunks), embedder.dimension)).astype("float32")
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                store.upsert_chunks(chunks, vectors, [c.path for c in chunks])
            store.write_meta(index_meta(embedder))
            build = time.perf_counter() - t0
            store.close()
            t0 = time.perf_counter()
            retriever = Retriever.open(repo, settings, embedder=embedder)
            load = time.perf_counter() - t0
            t0 = time.perf_counter()
            retriever.search("warm up the sparse index", top_k=10)  # embedded mode builds its BM25 postings once
            first = time.perf_counter() - t0
            timings = []
            for i in range(args.queries):
                t0 = time.perf_counter()
                retriever.search(QUERIES[i % len(QUERIES)], top_k=10)
                timings.append((time.perf_counter() - t0) * 1000)
            retriever.close()
            timings.sort()
            p95 = timings[min(len(timings) - 1, int(len(timings) * 0.95))]
            print(f"{size:>6} chunks: search p50 {statistics.median(timings):.0f} ms, p95 {p95:.0f} ms "
                  f"(index open {load:.1f}s, first query {first:.1f}s, build {build:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
