"""Two phases in one index run: phase 1 (graph + keyword vectors) is searchable before any chunk is
embedded; phase 2 fills in the dense vectors by priority, and a later run completes what one left."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa.indexing.dense import pending_files
from codeqa.embed import SentenceTransformerEmbedder
from codeqa.indexing.index import index_repo, index_status
from codeqa.query.retrieve import Retriever, semantic_note
from codeqa.store import ManifestEntry, open_store
from conftest import CountingEmbedder, copy_fixture_repo, index_snapshot


@pytest.fixture
def repo(tmp_path):
    return copy_fixture_repo(tmp_path / "repo")


def _dense_chunks(repo: Path, settings) -> tuple[int, int]:
    """(chunks with a dense vector, all chunks): a dense-only search returns only chunks that have one."""
    store = open_store(repo, settings)
    try:
        total = store.count_chunks()
        return len(store.search([1.0] + [0.0] * 383, None, total + 10)), total
    finally:
        store.close()


def test_phase_one_is_searchable_without_the_model_and_a_later_run_embeds(repo, settings, embedder, tmp_path):
    fresh = SentenceTransformerEmbedder()  # not loaded: phase 1 must never need it
    first = index_repo(repo, settings, embedder=fresh, embed=False)
    assert not fresh.loaded and first.chunks_embedded == 0 and first.chunks_deferred == first.chunks > 10
    assert first.symbols > 15 and first.references > 10 and 0 < first.searchable_seconds <= first.elapsed_seconds
    assert _dense_chunks(repo, settings) == (0, first.chunks)
    assert not (settings.index_dir_for(repo.resolve()) / "state.json").exists()  # the next run has work to do
    assert index_status(repo, settings, open_store(repo, settings)).semantic == 0.0

    with Retriever.open(repo, settings, embedder=fresh) as retriever:
        assert retriever.semantic_coverage() == 0.0 and "at 0%" in semantic_note(0.0)
        hits = retriever.search("encode text with the encoder class")
        assert hits and all("keyword" in h.reasons or "symbol" in h.reasons for h in hits)
        assert any(h.path == "encoders/encoder.py" for h in hits[:3])
        by_name = retriever.search("EncoderClass")
        assert by_name[0].path == "encoders/encoder.py"
    assert not fresh.loaded  # keyword search embeds no query

    counting = CountingEmbedder(embedder)
    second = index_repo(repo, settings, embedder=counting)  # nothing changed: phase 2 only
    assert second.files_changed == 0 and not second.nothing_to_do
    assert second.chunks_embedded == first.chunks and second.chunks_deferred == 0 and counting.texts == first.chunks
    assert _dense_chunks(repo, settings) == (first.chunks, first.chunks)
    assert (settings.index_dir_for(repo.resolve()) / "state.json").exists()
    assert index_repo(repo, settings, embedder=counting).nothing_to_do
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert retriever.semantic_coverage() == 1.0 and semantic_note(1.0) is None
        assert "dense" in retriever.search("encode text with the encoder class")[0].reasons

    # the same index a one-phase run builds, and phase 2 embedded exactly the texts phase 1 would have
    clean = settings.with_(index_dir=tmp_path / "clean")
    index_repo(repo, clean, embedder=embedder)
    assert index_snapshot(repo, settings) == index_snapshot(repo, clean)
    rebuilt = CountingEmbedder(embedder)
    index_repo(repo, settings, full=True, embedder=rebuilt)
    assert rebuilt.texts == 0  # every vector came from the cache phase 2 filled


def test_a_changed_file_is_embedded_in_the_same_run(repo, settings, embedder):
    index_repo(repo, settings, embedder=embedder)
    (repo / "app" / "formatting.py").write_text((repo / "app" / "formatting.py").read_text()
                                                + "\n\ndef shout_twice(text):\n    return text.upper() * 2\n")
    report = index_repo(repo, settings, embedder=embedder)
    assert report.files_changed == 1 and report.chunks_deferred == 0
    assert _dense_chunks(repo, settings)[0] == report.chunks
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        assert retriever.semantic_coverage() == 1.0


def test_search_fuses_keywords_while_semantic_search_is_partial(repo, settings, embedder):
    """Half the chunks embedded: a prose question also searches by its words, weighted by what is missing."""
    index_repo(repo, settings, embedder=embedder)
    store = open_store(repo, settings)
    try:
        meta = store.read_meta()
        store.write_meta({**meta, "chunks_embedded": meta["chunks"] // 2})
    finally:
        store.close()
    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        calls = []
        real = retriever.store.search

        def spy(dense, sparse, limit, weights=(1.0, 1.0), where=None):
            calls.append((dense is not None, bool(sparse and sparse[0]), weights))
            return real(dense, sparse, limit, weights, where)

        retriever.store.search = spy
        coverage = retriever.semantic_coverage()
        assert 0.4 < coverage < 0.6 and "Semantic search is at" in semantic_note(coverage)
        assert retriever.search("how is text shouted in upper case")
        assert calls[-1][:2] == (True, True) and calls[-1][2] == pytest.approx((1.0, 1.0 - coverage))


def test_phase_two_goes_package_code_first_and_small_files_first():
    entries = {p: ManifestEntry(p, "h", "python", n, 0, embedded=e) for p, n, e in [
        ("tests/test_big.py", 1, False), ("pkg/big.py", 40, False), ("pkg/small.py", 2, False),
        ("docs/guide.md", 1, False), ("examples/demo.py", 1, False), ("pkg/done.py", 1, True),
        ("pkg/empty.py", 0, False)]}
    entries["pkg/pending.py"] = ManifestEntry.pending("pkg/pending.py")
    assert [e.path for e in pending_files(entries)] == ["pkg/small.py", "pkg/big.py", "examples/demo.py",
                                                        "docs/guide.md", "tests/test_big.py"]


def test_both_phases_seal_their_segments_as_they_go_and_find_the_same(repo, tmp_path, monkeypatch):
    """Every SEAL_CHUNKS chunks phase 1 seals what it stored (EdgeStore.optimize: an immutable segment,
    the shard loaded again, which frees the appendable segment's memory), and the index answers as one
    built in one go."""
    import numpy as np

    import codeqa.indexing.index as index_module
    from codeqa.config import Settings
    from codeqa.store import query_sparse_vector

    class Constant:
        model_id, dimension = "constant", 8

        def encode(self, texts, batch_size=64):
            return np.full((len(texts), 8), 8 ** -0.5, dtype="float32")

    def built(name: str):
        settings = Settings.load(env={}, index_dir=tmp_path / name, parse_workers=1)
        calls.clear()
        index_repo(repo, settings, embedder=Constant(), embed=False)
        store = open_store(repo, settings)
        try:
            found = [sorted((h.path, h.start_line, round(h.score, 4)) for h in store.search(None, query_sparse_vector(q), 500))
                     for q in ("encoder class", "greeter hello", "main command line")]  # every hit: ties come in any order
        finally:
            store.close()
        return index_snapshot(repo, settings), found, len(calls)

    import codeqa.store.edge as edge

    monkeypatch.setattr(edge, "OPTIMIZE_THRESHOLD_KB", 1)  # the fixture's segments count as big ones
    calls: list = []
    real = edge.EdgeStore.optimize

    def optimize(self):  # a seal: the shard is loaded again, so the appendable segment's memory is freed
        before = self._shard
        real(self)
        if self._shard is not before:
            calls.append(before)

    monkeypatch.setattr(edge.EdgeStore, "optimize", optimize)
    once = built("once")
    import codeqa.indexing.graph.stage as graph_stage

    monkeypatch.setattr(graph_stage, "FILE_BATCH", 2)  # stored two files at a time
    monkeypatch.setattr(index_module, "SEAL_CHUNKS", 5)
    sealed = built("sealed")
    assert all(once[1]) and sealed[:2] == once[:2]
    assert once[2] == 1 and sealed[2] > 2
    # phase 2 seals as it embeds too (setting a vector moves the point into an appendable segment)
    import codeqa.indexing.dense as dense_stage

    monkeypatch.setattr(dense_stage, "BATCH_CHUNKS", 4)
    monkeypatch.setattr(index_module, "DENSE_SEAL_CHUNKS", 5)
    settings = Settings.load(env={}, index_dir=tmp_path / "sealed", parse_workers=1, embedding_batch_size=1)
    calls.clear()
    report = index_repo(repo, settings, embedder=Constant())
    assert report.chunks_embedded == report.chunks and not report.chunks_deferred and len(calls) > 2
    assert index_snapshot(repo, settings) == once[0]


def test_a_big_phase_1_resolves_references_with_the_chunks_shard_let_go(repo, tmp_path, monkeypatch, embedder):
    """Resolution never reads the chunks: once a run has sealed (a big one), it seals the rest after the
    parse and the shard is not in memory while references are resolved; the index is the same."""
    import codeqa.indexing.graph.stage as graph_stage
    import codeqa.indexing.index as index_module
    import codeqa.store.edge as edge
    from codeqa.config import Settings

    stores: list = []
    real_open = edge.EdgeStore.open.__func__
    monkeypatch.setattr(edge.EdgeStore, "open", classmethod(lambda cls, *a, **k: stores.append(real_open(cls, *a, **k)) or stores[-1]))
    loaded: list[bool] = []
    real_resolve = graph_stage.resolve_by_file

    def resolve(*args, **kwargs):
        loaded.append(stores[-1]._shard is not None)
        return real_resolve(*args, **kwargs)

    monkeypatch.setattr(graph_stage, "resolve_by_file", resolve)
    once = Settings.load(env={}, index_dir=tmp_path / "once", parse_workers=1)
    chunks = index_repo(repo, once, embed=False, embedder=embedder).chunks
    monkeypatch.setattr(edge, "OPTIMIZE_THRESHOLD_KB", 1)  # the fixture's segments count as big ones
    monkeypatch.setattr(graph_stage, "FILE_BATCH", 2)
    monkeypatch.setattr(index_module, "SEAL_CHUNKS", chunks // 2 + 1)  # one seal mid-way, some chunks after it
    sealed = Settings.load(env={}, index_dir=tmp_path / "sealed", parse_workers=1)
    index_repo(repo, sealed, embed=False, embedder=embedder)
    assert loaded == [True, False]  # a small run keeps its shard; a sealing one lets it go
    assert index_snapshot(repo, sealed) == index_snapshot(repo, once)


def _writer_on(monkeypatch) -> None:
    """The fixture repo is far below WRITER_MIN_FILES: a run with the writer, as a big one has it."""
    import codeqa.indexing.writer as store_writer

    monkeypatch.setattr(store_writer, "WRITER_MIN_FILES", 1)


def test_a_writer_process_stores_phase_1_and_the_index_is_the_same(repo, tmp_path, monkeypatch, embedder):
    """A big embedded run stores its chunks from a writer process (indexing/writer.py) while it resolves
    references: the index equals one written in the run's process, sealed segments included."""
    import codeqa.indexing.graph.stage as graph_stage
    import codeqa.indexing.index as index_module
    import codeqa.indexing.writer as store_writer
    from codeqa.config import Settings

    once = Settings.load(env={}, index_dir=tmp_path / "once", parse_workers=1)
    plain = index_repo(repo, once, embed=False, embedder=embedder)
    here: list = []
    monkeypatch.setattr(index_module, "store_chunks", lambda *a: here.append(a))  # this process stores nothing
    writers: list = []
    real_finish = store_writer.StoreWriter.finish
    monkeypatch.setattr(store_writer.StoreWriter, "finish", lambda self, *a: writers.append(real_finish(self, *a))
                        or writers[-1])
    _writer_on(monkeypatch)
    monkeypatch.setattr(graph_stage, "FILE_BATCH", 2)
    monkeypatch.setattr(index_module, "SEAL_CHUNKS", plain.chunks // 3 + 1)  # the writer seals mid-way
    written = Settings.load(env={}, index_dir=tmp_path / "written", parse_workers=2)
    report = index_repo(repo, written, embed=False, embedder=embedder)
    assert not here and len(writers) == 1
    assert writers[0].files == report.files_changed and writers[0].chunks == writers[0].total_chunks == plain.chunks
    assert writers[0].seals >= 1  # it takes what the spool holds, up to 64 files a batch: one seal or more
    assert (report.chunks, report.symbols, report.references) == (plain.chunks, plain.symbols, plain.references)
    assert index_snapshot(repo, written) == index_snapshot(repo, once)
    assert not [p for p in (tmp_path / "written").iterdir() if p.name.startswith("writer-spool-")]  # spool gone
    again = index_repo(repo, written, embedder=embedder)  # phase 2 completes it as after any phase 1
    assert again.files_changed == 0 and again.chunks_embedded == plain.chunks and not again.chunks_deferred


def test_a_writer_that_dies_fails_the_run_and_the_next_run_completes(repo, tmp_path, monkeypatch, embedder):
    import os
    import signal

    import codeqa.indexing.graph.stage as graph_stage
    import codeqa.indexing.writer as store_writer
    from codeqa.config import Settings
    from codeqa.errors import StoreError

    once = Settings.load(env={}, index_dir=tmp_path / "once", parse_workers=1)
    index_repo(repo, once, embed=False, embedder=embedder)
    real_add = store_writer.StoreWriter.add

    def add(self, packed):  # the writer is killed (out of memory, say) once it has had the first files
        real_add(self, packed)
        os.kill(self.pid, signal.SIGKILL)

    monkeypatch.setattr(store_writer.StoreWriter, "add", add)
    monkeypatch.setattr(graph_stage, "FILE_BATCH", 2)
    _writer_on(monkeypatch)
    settings = Settings.load(env={}, index_dir=tmp_path / "failed", parse_workers=2)
    with pytest.raises(StoreError, match="ended without finishing"):
        index_repo(repo, settings, embed=False, embedder=embedder)
    monkeypatch.setattr(store_writer.StoreWriter, "add", real_add)
    index_repo(repo, settings, embed=False, embedder=embedder)
    assert index_snapshot(repo, settings) == index_snapshot(repo, once)


def test_a_writer_error_is_the_runs_message():
    from codeqa.indexing.writer import write_outcome

    def full():
        raise OSError(28, "No space left on device")

    assert write_outcome(full) == "Writing the index's chunks failed: [Errno 28] No space left on device"
    assert write_outcome(lambda: (_ for _ in ()).throw(RuntimeError())) == "Writing the index's chunks failed (RuntimeError)."


class _Payload:
    """What an attacker pickles: loading it creates the marker folder."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.mkdir, (str(self.marker),)


def test_a_pickle_in_the_writers_spool_is_refused_not_run(tmp_path):
    """Data is never code: the spool is JSON, and a record that is a pickle (one that would create a
    marker folder when loaded) fails the writer with a message, without running anything."""
    import pickle
    import zlib

    from codeqa.config import Settings
    from codeqa.errors import StoreError
    from codeqa.indexing.writer import CacheKeys, StoreWriter, pack, unpack

    repo = copy_fixture_repo(tmp_path / "repo")
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    store = open_store(repo, settings, create=True)
    store.ensure_schema(8)
    store.close()
    marker = tmp_path / "pwned"
    crafted = zlib.compress(pickle.dumps(_Payload(marker)))
    with StoreWriter(repo, settings, CacheKeys("m", 8), settings.index_dir_for(repo), 10) as writer:
        writer.start()
        writer.add([crafted])
        with pytest.raises(StoreError, match="not a packed file"):
            writer.finish()
    assert not marker.exists()
    with pytest.raises(ValueError, match="not a packed file"):  # and in this process: pack's records only
        unpack(crafted)
    assert not marker.exists()
    from codeqa.types import Chunk, ParsedFile, SourceFile, Symbol

    symbol = Symbol("a.py#f@1", "f", "f", "function", "python", "a.py", 1, 2, "def f():", "", None)
    parsed = ParsedFile(SourceFile("a.py", repo / "a.py", "python", 9, "0" * 64), (symbol,), (), "syntax error at 2")
    chunk = Chunk("c1", "a.py", 1, 2, "python", "function", ("a.py#f@1",), "def f():\n    \udcff é", ("f",))
    assert unpack(pack(parsed, [chunk])) == (parsed, [chunk])  # lone surrogates too (escaped text)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the writer is Linux's (/proc, prctl)")
def test_a_killed_run_takes_its_writer_with_it(tmp_path):
    """SIGKILL on a run: its writer process dies too, and writes nothing after it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = f"""
import time
from pathlib import Path
from codeqa.config import Settings
from codeqa.indexing.writer import CacheKeys, StoreWriter
w = StoreWriter(Path({str(tmp_path)!r}), Settings(), CacheKeys("m", 8), Path({str(tmp_path / 'index')!r}), 10)
print(w.pid, flush=True)
time.sleep(60)
"""
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        writer = int(run.stdout.readline())
        time.sleep(1)  # started (prctl is among its first lines)
        os.kill(writer, 0)  # alive while the run is
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{writer}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # dead, not yet reaped by whoever adopted it
                        break
            except FileNotFoundError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the writer outlived its run")
    finally:
        run.kill()
