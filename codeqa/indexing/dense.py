"""Phase 2 of an index run: dense vectors for the chunks that phase 1 stored with their BM25 vectors only.

    manifest (files with embedded = False) --priority--> batches --embed (cache first)--> Store.set_dense
      --> flush --> the batch's manifest entries say embedded

Phase 1 (index.py) leaves every chunk searchable by keywords and the graph; this stage makes the
semantic half complete, package code before tests, docs and examples, small files first, so what
people ask about most gets its vectors first. Each batch is durable before its files are marked
embedded: a kill loses at most the batch being embedded, and the next run picks up where this one
stopped (the embedding cache keeps what was encoded). Readers see the progress as the meta's
`chunks_embedded`, published every PUBLISH_SECONDS (a reader reloads the shard on each publication).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .chunk import chunk_embedding_text
from ..embed import Embedder, EmbeddingCache, longest_first
from ..roles import ROLE_ORDER, path_role
from ..store import GraphReader, ManifestEntry, Store
from ..types import Chunk, Symbol

BATCH_CHUNKS = 512  # chunks embedded, stored and committed together
PUBLISH_SECONDS = 30.0  # how often readers are told how far semantic search has come


@dataclass
class DenseReport:
    chunks_embedded: int = 0  # chunks given a dense vector by this stage
    chunks_encoded: int = 0  # of those, encoded by the model (the rest came from the embedding cache)
    seconds: float = 0.0
    encode_seconds: float = 0.0  # model time only (not the load), for chunks/s
    pending_chunks: int = 0  # still without a dense vector when the stage stopped


def pending_files(manifest: dict[str, ManifestEntry]) -> list[ManifestEntry]:
    """The files whose chunks lack dense vectors, in the order they get them: package code before
    examples, docs and tests, then fewer chunks first, then by path (the same order every run)."""
    waiting = [e for e in manifest.values() if not e.embedded and e.status != "pending" and e.chunks]
    return sorted(waiting, key=lambda e: (ROLE_ORDER.get(path_role(e.path), len(ROLE_ORDER)), e.chunks, e.path))


def cached_vectors(embedder: Embedder, cache: EmbeddingCache, texts: Sequence[str]) -> list[np.ndarray | None]:
    """Each text's vector from the embedding cache, None where it has none (or one of another size)."""
    found = cache.get_many(embedder.model_id, texts)
    out: list[np.ndarray | None] = []
    for text in texts:
        v = found.get(cache.key(text))
        out.append(v if v is not None and (not embedder.dimension or v.shape == (embedder.dimension,))
                   and np.isfinite(v).all() else None)
    return out


def embed_with_cache(embedder: Embedder, cache: EmbeddingCache, texts: Sequence[str], batch_size: int,
                     on_progress: Callable[[int], None], before_encoding: Callable[[], None] = lambda: None,
                     known: Sequence[np.ndarray | None] | None = None) -> np.ndarray:
    """One vector per text: from the cache where it has one, else encoded (and cached). `known`: what
    cached_vectors already read for `texts`, so the cache is not read twice."""
    known = cached_vectors(embedder, cache, texts) if known is None else known
    found = {cache.key(t): v for t, v in zip(texts, known) if v is not None}
    # longest first in word pieces, so each slice (and each batch of it) holds texts of about one length
    missing = longest_first(list(dict.fromkeys(t for t, v in zip(texts, known) if v is None)))
    if missing:
        before_encoding()
    # batches per call: enough for an endpoint's parallel requests (two rounds), and few enough for steady progress
    step = max(batch_size * max(4, 2 * getattr(embedder, "concurrency", 1)), 1)
    for start in range(0, len(missing), step):
        part = missing[start:start + step]
        vectors = embedder.encode(part, batch_size=batch_size)
        cache.put_many(embedder.model_id, part, vectors)
        found.update((cache.key(t), v) for t, v in zip(part, vectors))
        on_progress(min(start + step, len(missing)) + (len(texts) - len(missing)))
    on_progress(len(texts))
    return np.stack([found[cache.key(t)] for t in texts]) if texts else np.zeros((0, embedder.dimension), dtype="float32")


def embedding_texts(store: GraphReader, chunks: Sequence[Chunk]) -> list[str]:
    """What the model reads for each stored chunk (chunk.py's header + code), symbols read from the store."""
    ids = {i for c in chunks for i in c.symbol_ids}
    by_id: dict[str, Symbol] = {s.id: s for s in store.symbols_by_ids(ids)} if ids else {}
    return [chunk_embedding_text(c, by_id) for c in chunks]


def fill_dense(store: Store, embedder: Embedder, cache: EmbeddingCache, batch_size: int,
               progress: Callable[[str, int, int], None], publish: Callable[[int], None],
               load_model: Callable[[], float], stop: threading.Event | None = None,
               seal_chunks: int = 0) -> DenseReport:
    """Give every chunk of the manifest's not-yet-embedded files its dense vector (see the module docstring).

    `publish(pending_chunks)` tells readers how far it has come; `load_model()` loads the model before
    the first text the cache lacks and returns the seconds it took. Once `stop` is set, no further batch
    starts: every committed batch stays, and `pending_chunks` says what the next run has left. Every
    `seal_chunks` chunks (0: never) the store is optimized: a vector set moves its point into an
    appendable segment, which holds a chunk in ~4.5 KB of memory until it is sealed."""
    report = DenseReport()
    started = time.perf_counter()
    files = pending_files(store.manifest())
    total = sum(e.chunks for e in files)
    report.pending_chunks = total
    done = 0
    last_publish = time.perf_counter()
    load_seconds = 0.0
    unsealed = 0  # chunks given their vector since the last seal

    def before_encoding() -> None:
        nonlocal load_seconds
        load_seconds += load_model()

    progress("embed", 0, total)
    # a commit's chunks: at least what an embedding server's requests in flight take at once
    per_commit = max(BATCH_CHUNKS, 2 * batch_size * getattr(embedder, "concurrency", 1))
    for group in _batches(files, per_commit):
        if stop is not None and stop.is_set():
            break
        chunks = store.chunks_of_files([e.path for e in group])
        texts = embedding_texts(store, chunks)
        known = cached_vectors(embedder, cache, texts)
        before = time.perf_counter()
        vectors = embed_with_cache(embedder, cache, texts, batch_size,
                                   lambda n: progress("embed", done + n, total), before_encoding, known)
        report.encode_seconds += time.perf_counter() - before
        report.chunks_encoded += sum(v is None for v in known)
        store.set_dense([c.id for c in chunks], vectors)
        store.flush()  # the vectors are on disk before the entries that say so
        store.put_manifest([_embedded(e) for e in group])
        done += sum(e.chunks for e in group)
        report.chunks_embedded += len(chunks)
        report.pending_chunks = total - done
        unsealed += len(chunks)
        if seal_chunks and unsealed >= seal_chunks and report.pending_chunks:
            store.optimize()
            unsealed = 0
        progress("embed", done, total)
        if time.perf_counter() - last_publish >= PUBLISH_SECONDS and report.pending_chunks:
            publish(report.pending_chunks)
            last_publish = time.perf_counter()
    report.encode_seconds -= load_seconds
    report.seconds = time.perf_counter() - started
    return report


def _embedded(entry: ManifestEntry) -> ManifestEntry:
    return ManifestEntry(entry.path, entry.sha256, entry.language, entry.chunks, entry.symbols, entry.status,
                         entry.reason, embedded=True)


def _batches(files: Sequence[ManifestEntry], chunks_per_batch: int):
    group: list[ManifestEntry] = []
    size = 0
    for entry in files:
        group.append(entry)
        size += entry.chunks
        if size >= chunks_per_batch:
            yield group
            group, size = [], 0
    if group:
        yield group


__all__ = ["DenseReport", "fill_dense", "pending_files", "cached_vectors", "embed_with_cache", "embedding_texts",
           "BATCH_CHUNKS"]
