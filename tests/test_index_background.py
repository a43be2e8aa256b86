"""Phase 2 in the background (indexing/background.py): update() returns once phase 1 is committed, a thread
embeds the rest, and a stop (another update, close) ends it between batches without losing anything.

The embedder here waits at a gate the test opens, so every "while phase 2 runs" below is a state the
test holds, not a race it hopes to win."""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import pytest

import codeqa.indexing.dense as dense_stage
from codeqa.errors import EmbeddingError
from codeqa.indexing.index import index_repo, index_status
from codeqa.indexing.background import BackgroundIndexer
from codeqa.query.retrieve import Retriever
from codeqa.store import open_store
from conftest import copy_fixture_repo, index_snapshot, wait_for

DIMENSION = 16
GATE_LIMIT_S = 60  # a gate the test forgets to open fails the run instead of hanging it


class HashEmbedder:
    """The same unit vector for the same text, different ones for different texts; no model."""

    model_id, dimension = "hash-16", DIMENSION

    def __init__(self):
        self.texts = 0

    def encode(self, texts, batch_size=64):
        self.texts += len(texts)
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(DIMENSION)
                for t in texts]
        vectors = np.array(rows, dtype="float32").reshape(len(texts), DIMENSION)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class GatedEmbedder(HashEmbedder):
    """Each encode() call is recorded (with its thread) and waits until the test opens the gate."""

    def __init__(self):
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.calls: list[threading.Thread] = []

    def encode(self, texts, batch_size=64):
        self.calls.append(threading.current_thread())
        self.entered.set()
        if not self.gate.wait(GATE_LIMIT_S):
            raise RuntimeError("the test never opened the gate")
        return super().encode(texts, batch_size)


class FailingEmbedder(HashEmbedder):
    def encode(self, texts, batch_size=64):
        raise EmbeddingError("the embedding server refused the batch (HTTP 503)")


@pytest.fixture
def repo(tmp_path):
    return copy_fixture_repo(tmp_path / "repo")


@pytest.fixture
def small_batches(monkeypatch, settings):
    """Phase 2 in batches of 4 chunks, one encode() call each: the fixture repository takes many."""
    monkeypatch.setattr(dense_stage, "BATCH_CHUNKS", 4)
    return settings.with_(embedding_batch_size=2)


def dense_chunks(repo, settings) -> int:
    """Chunks with a dense vector: a dense-only search returns only those."""
    store = open_store(repo, settings)
    try:
        return len(store.search([1.0] + [0.0] * (DIMENSION - 1), None, store.count_chunks() + 10))
    finally:
        store.close()


def test_a_stop_ends_phase_two_between_batches_and_the_next_run_completes(repo, small_batches, tmp_path):
    settings = small_batches
    stop = threading.Event()

    class StopAfterFirstBatch(HashEmbedder):
        def encode(self, texts, batch_size=64):
            stop.set()  # asked to stop while the first batch is being embedded
            return super().encode(texts, batch_size)

    first = StopAfterFirstBatch()
    report = index_repo(repo, settings, embedder=first, stop=stop)
    assert 0 < report.chunks_embedded == first.texts <= 4 and report.chunks_deferred == report.chunks - report.chunks_embedded
    assert dense_chunks(repo, settings) == report.chunks_embedded  # the batch in flight was committed
    assert not (settings.index_dir_for(repo.resolve()) / "state.json").exists()  # the next run has phase 2 to do
    store = open_store(repo, settings)
    try:
        assert index_status(repo, settings, store).semantic == pytest.approx(report.chunks_embedded / report.chunks)
    finally:
        store.close()

    rest = HashEmbedder()
    second = index_repo(repo, settings, embedder=rest)
    assert second.files_changed == 0 and second.chunks_deferred == 0
    assert second.chunks_embedded == report.chunks_deferred  # the committed batch is not embedded again
    assert dense_chunks(repo, settings) == second.chunks
    clean = settings.with_(index_dir=tmp_path / "clean")
    index_repo(repo, clean, embedder=HashEmbedder())
    assert index_snapshot(repo, settings) == index_snapshot(repo, clean)


def test_update_returns_after_phase_one_and_phase_two_goes_on_in_the_background(repo, settings):
    gated = GatedEmbedder()
    indexer = BackgroundIndexer(repo, settings, embedder=gated)
    try:
        report = indexer.update()  # the gate is shut: phase 2 cannot have embedded anything yet
        assert report.files_changed == report.files_total > 5 and report.chunks_deferred == report.chunks > 10
        assert gated.entered.wait(GATE_LIMIT_S), "phase 2 did not start in the background"
        assert gated.calls[0] is not threading.current_thread()
        progress = indexer.progress()
        assert progress.state == "running" and progress.chunks_embedded == 0 and progress.chunks == report.chunks
        with Retriever.open(repo, settings, embedder=HashEmbedder()) as retriever:  # readers work meanwhile
            assert retriever.semantic_coverage() == 0.0
            assert [s.path for s in retriever.graph.find_symbols("EncoderClass")] == ["encoders/encoder.py"]
            assert retriever.search("tokenize")[0].path == "encoders/encoder.py"

        gated.gate.set()
        done = indexer.wait(GATE_LIMIT_S)
        assert done.state == "finished" and done.chunks_embedded == done.chunks == report.chunks and done.share == 1.0
        assert done.error is None and done.seconds > 0
        assert dense_chunks(repo, settings) == report.chunks
        with Retriever.open(repo, settings, embedder=HashEmbedder()) as retriever:
            assert retriever.semantic_coverage() == 1.0
        assert (settings.index_dir_for(repo.resolve()) / "state.json").exists()
    finally:
        gated.gate.set()
        indexer.close()


def test_an_update_during_phase_two_stops_it_indexes_the_change_and_resumes(repo, small_batches):
    settings = small_batches
    gated = GatedEmbedder()
    indexer = BackgroundIndexer(repo, settings, embedder=gated)
    try:
        first = indexer.update()
        assert gated.entered.wait(GATE_LIMIT_S)
        first_run = gated.calls[0]
        (repo / "app" / "fresh.py").write_text("def brand_new_helper(value):\n    return value * 2\n")
        second: dict = {}
        updating = threading.Thread(target=lambda: second.update(report=indexer.update()))
        updating.start()
        # the update waits for the batch in flight, and has told phase 2 to stop after it
        assert wait_for(lambda: indexer.progress().state == "stopping", GATE_LIMIT_S)
        assert updating.is_alive()
        gated.gate.set()
        updating.join(GATE_LIMIT_S)
        report = second["report"]
        assert report.files_changed == 1 and report.chunks == first.chunks + 1
        assert gated.calls.count(first_run) == 1  # the stopped run began no batch after the one in flight
        assert report.chunks_deferred == report.chunks - 4  # that batch stayed: only the rest waits

        done = indexer.wait(GATE_LIMIT_S)
        assert done.state == "finished" and done.chunks_embedded == done.chunks == report.chunks
        assert dense_chunks(repo, settings) == report.chunks  # the new file's chunk too
        with Retriever.open(repo, settings, embedder=HashEmbedder()) as retriever:
            assert [s.path for s in retriever.graph.find_symbols("brand_new_helper")] == ["app/fresh.py"]
    finally:
        gated.gate.set()
        indexer.close()


def test_close_stops_phase_two_and_the_next_run_completes_it(repo, small_batches, tmp_path):
    settings = small_batches
    gated = GatedEmbedder()
    indexer = BackgroundIndexer(repo, settings, embedder=gated)
    report = indexer.update()
    assert gated.entered.wait(GATE_LIMIT_S)
    assert not indexer.close(wait=0.2)  # busy with its batch: close stops waiting, the run is told to stop
    assert indexer.progress().state == "stopping"
    gated.gate.set()
    done = indexer.wait(GATE_LIMIT_S)
    assert done.state == "stopped" and len(gated.calls) == 1
    assert done.chunks_embedded == 4 and done.chunks == report.chunks
    assert indexer.update().chunks_deferred == report.chunks - 4  # after close, an update starts no phase 2
    assert len(gated.calls) == 1 and indexer.progress().state == "stopped"

    rest = index_repo(repo, settings, embedder=HashEmbedder())
    assert rest.files_changed == 0 and rest.chunks_embedded == report.chunks - 4 and rest.chunks_deferred == 0
    clean = settings.with_(index_dir=tmp_path / "clean")
    index_repo(repo, clean, embedder=HashEmbedder())
    assert index_snapshot(repo, settings) == index_snapshot(repo, clean)
    assert dense_chunks(repo, settings) == dense_chunks(repo, clean) == report.chunks


def test_a_failed_phase_two_says_why_and_leaves_the_index_searchable(repo, settings):
    indexer = BackgroundIndexer(repo, settings, embedder=FailingEmbedder())
    try:
        report = indexer.update()
        done = indexer.wait(GATE_LIMIT_S)
        assert done.state == "failed" and "HTTP 503" in done.error and done.chunks_embedded == 0
        with Retriever.open(repo, settings, embedder=HashEmbedder(), need_model=False) as retriever:
            assert retriever.graph.find_symbols("EncoderClass") and retriever.semantic_coverage() == 0.0
        assert report.chunks_deferred == report.chunks
    finally:
        indexer.close()
