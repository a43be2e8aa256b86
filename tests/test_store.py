"""The store's own sparse scoring in embedded mode gives what Qdrant's engine gives (the engine loops over
every point in Python; bench/search_latency.py shows the difference)."""

from __future__ import annotations

import pytest

from codeqa.config import Settings
from codeqa.index import open_store
from codeqa.store import sparse_vector

QUERIES = ["tokenize text into words", "EncoderClass encode", "format_name", "greet the user by name",
           "class Greeter", "main entry point app cli"]


@pytest.fixture
def store(indexed_repo):
    store = open_store(indexed_repo, Settings.load(env={}))
    assert store.local
    yield store
    store.close()


def _rounded(pairs):
    return sorted((str(pid), round(score, 4)) for pid, score in pairs)


def test_sparse_scores_equal_qdrant_idf_scoring(store):
    from qdrant_client import models

    for query in QUERIES:
        indices, _ = sparse_vector(query)
        ours = store.local_vectors().sparse.search(indices, [1.0] * len(indices), 1000)
        engine = store.client.query_points(store.chunks, query=models.SparseVector(indices=indices, values=[1.0] * len(indices)),
                                           using="sparse", limit=1000).points
        assert ours and _rounded(ours) == _rounded((p.id, p.score) for p in engine), query


def test_dense_scores_equal_qdrant_cosine(store, embedder):
    for query in QUERIES:
        vector = embedder.encode([query])[0]
        ours = store.local_vectors().dense_search(vector, 20)
        engine = store.client.query_points(store.chunks, query=vector.tolist(), using="dense", limit=20).points
        assert [str(pid) for pid, _ in ours] == [str(p.id) for p in engine], query
        assert all(abs(score - p.score) < 1e-5 for (_, score), p in zip(ours, engine)), query
        hits = store.dense_search(vector, 5)
        assert [(h.path, h.start_line) for h in hits] == [(p.payload["path"], p.payload["start_line"]) for p in engine[:5]]


def test_local_hybrid_search_equals_the_engine_fusion(store, embedder):
    for query in QUERIES:
        vector = embedder.encode([query])[0]
        ours = store.hybrid_search(vector, query, 10)
        store.local = False  # the same client, through Qdrant's prefetch + RRF query
        try:
            engine = store.hybrid_search(vector, query, 10)
        finally:
            store.local = True
        # equal BM25 or cosine scores may be ranked in another order (the engine's argsort is not stable),
        # which moves RRF scores a little: the same best hit and nearly the same ten
        assert round(ours[0].score, 6) == round(engine[0].score, 6), query
        spans = lambda hits: {(h.path, h.start_line) for h in hits}  # noqa: E731
        assert len(spans(ours) & spans(engine)) >= 8, query


def test_vectors_read_from_the_engine_equal_a_scroll(store):
    import numpy as np

    fast, slow = store._vectors_from_engine(), store._vectors_by_scroll()
    assert fast is not None, "qdrant-client internals moved: local_vectors() now scrolls (slower, still correct)"
    order = sorted(range(len(slow.ids)), key=lambda i: str(slow.ids[i]))
    fast_order = sorted(range(len(fast.ids)), key=lambda i: str(fast.ids[i]))
    assert [str(slow.ids[i]) for i in order] == [str(fast.ids[i]) for i in fast_order] and len(order) > 10
    assert np.allclose(slow.dense[order], fast.dense[fast_order], atol=1e-6)
    query = sparse_vector("tokenize EncoderClass encode")[0]
    assert _rounded(fast.sparse.search(query, [1.0] * len(query), 50)) == _rounded(slow.sparse.search(query, [1.0] * len(query), 50))
