"""Both engines pass every store protocol's contract (tests/store_contract.py): EdgeStore (embedded Qdrant Edge +
SQLite) and ServerStore (qdrant-client; here its in-memory engine stands in for a server)."""

from __future__ import annotations

import itertools

import pytest

from store_contract import StoreContract


class TestEdgeStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        from codeqa.store.edge import EdgeStore

        return lambda: EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)


class TestServerStore(StoreContract):
    @pytest.fixture
    def make_store(self):
        from qdrant_client import QdrantClient

        from codeqa.store.server import ServerStore

        client = QdrantClient(":memory:")
        counter = itertools.count()
        return lambda: ServerStore(client, f"codeqa_test_{next(counter)}")


def test_the_graph_stores_each_id_and_path_once_and_keeps_only_used_ones(tmp_path):
    """Rows hold numbers of `names`; a reference or symbol that goes takes its now unused names with it."""
    import sqlite3
    from dataclasses import replace

    from codeqa.store.edge import EdgeStore
    from store_contract import ENCODE, ENCODER, MAIN, TOKENIZE, fill, ref

    def names() -> set[str]:
        with sqlite3.connect(tmp_path / "index" / "graph.sqlite") as db:
            return {row[0] for row in db.execute("SELECT text FROM names")}

    store = EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)
    try:
        fill(store)
        assert names() == {s.id for s in (ENCODER, ENCODE, TOKENIZE, MAIN)} | {"enc.py", "tok.py", "app/main.py"}
        store.delete_files(["app/main.py"])
        store.upsert_symbols([replace(MAIN, id="app/main.py#main@3", start_line=3)])
        store.replace_references([ref("enc.py", 6, "tokenize", (TOKENIZE.id,), ENCODE.id)])
        assert names() == {ENCODER.id, ENCODE.id, TOKENIZE.id, "app/main.py#main@3", "enc.py", "tok.py", "app/main.py"}
        assert [r.target_ids for r in store.references_from([ENCODE.id])] == [(TOKENIZE.id,)]
        assert [s.id for s in store.symbols_in_files(["app/main.py"])] == ["app/main.py#main@3"]
    finally:
        store.close()


def test_an_index_in_another_format_is_refused_by_readers_and_rebuilt_by_a_run(tmp_path):
    import sqlite3

    from codeqa.errors import IndexMismatchError
    from codeqa.store.edge import EdgeStore
    from store_contract import fill

    store = EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)
    fill(store)
    store.close()
    with sqlite3.connect(tmp_path / "index" / "graph.sqlite") as db:
        db.execute("PRAGMA user_version = 3")  # the format before names and float16 vectors
    with pytest.raises(IndexMismatchError, match="another codeqa version.*codeqa index"):
        EdgeStore.open(tmp_path / "repo", tmp_path / "index")
    store = EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)  # what `codeqa index` does
    try:
        assert not store.exists() and store.read_meta() == {}
        fill(store)
        assert store.exists() and store.count_chunks() == 4 and len(list(store.all_references())) == 3
    finally:
        store.close()


def test_the_embedding_cache_stores_float16_and_still_reads_float32_rows(tmp_path):
    """Rows written before float16 (untagged float32) read as they were; a damaged row is a miss, so
    its text is embedded again."""
    import sqlite3

    import numpy as np

    from codeqa.embed import EmbeddingCache

    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path)
    vector = np.array([[0.6, -0.8, 1e-3, 0.0]], dtype=np.float32)
    cache.put_many("m", ["new"], vector)
    cache.close()
    with sqlite3.connect(path) as db:
        assert len(db.execute("SELECT vector FROM vectors").fetchone()[0]) == 4 + 4 * 2
        db.executemany("INSERT INTO vectors (model, hash, vector) VALUES (?, ?, ?)",
                       [("m", EmbeddingCache.key("old"), vector[0].tobytes()), ("m", EmbeddingCache.key("odd"), b"\x00" * 7),
                        ("m", EmbeddingCache.key("text"), "not bytes")])
    cache = EmbeddingCache(path)
    try:
        found = cache.get_many("m", ["new", "old", "odd", "text"])
        assert set(found) == {cache.key("new"), cache.key("old")}
        assert found[cache.key("old")].dtype == np.float32 and (found[cache.key("old")] == vector[0]).all()
        assert found[cache.key("new")].dtype == np.float32
        assert np.allclose(found[cache.key("new")], vector[0], atol=1e-3) and not (found[cache.key("new")] == vector[0]).all()
    finally:
        cache.close()


def test_an_edge_store_that_let_go_sees_what_another_writer_stored_meanwhile(tmp_path):
    """An index run hands its chunk writes to a writer process (indexing/writer.py): after release(), the
    run's own store object loads the chunks again with the writer's points in them."""
    from codeqa.store.edge import EdgeStore
    from store_contract import DIM, chunk, fill, vec

    run = EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)
    try:
        fill(run)
        assert run.count_chunks() == 4
        run.release()
        writer = EdgeStore.open(tmp_path / "repo", tmp_path / "index")
        try:
            writer.upsert_chunks([chunk("late.py", 1, "def written_elsewhere(): pass")], [vec(DIM - 1)], ["late.py"])
            writer.flush()
        finally:
            writer.close()
        assert run.count_chunks() == 5 and run.search(vec(DIM - 1), None, 1)[0].path == "late.py"
    finally:
        run.close()


def test_a_sealed_segment_reads_its_sparse_and_keyword_indexes_from_disk_and_searches_still_find(tmp_path, monkeypatch):
    """Sealed (optimize) segments keep their sparse index and keyword payload indexes memory-mapped and read
    on demand (Memory.Cold), not in the heap of every process that loads the chunks: keyword search and a
    path filter over such a segment answer as over an open one."""
    import json

    from codeqa.store import edge, query_sparse_vector
    from codeqa.store.edge import EdgeStore
    from store_contract import chunk, vec

    monkeypatch.setattr(edge, "OPTIMIZE_THRESHOLD_KB", 1)  # so that optimize() seals this small shard's segment

    writer = EdgeStore.open(tmp_path / "repo", tmp_path / "index", create=True)
    try:
        writer.ensure_schema(8)
        chunks = [chunk(f"m{i}.py", 1, f"def handler_{i}(request): return route_{i % 7}(request)") for i in range(300)]
        chunks.append(chunk("needle.py", 1, "def zanzibar_quokka(): pass"))
        writer.upsert_chunks(chunks, [vec(i % 8) for i in range(len(chunks))], [""] * len(chunks))
        writer.optimize()
    finally:
        writer.close()
    config = json.loads((tmp_path / "index" / "chunks" / "edge_config.json").read_text())
    assert config["sparse_vectors"]["sparse"]["memory"] == "cold"
    segments = (tmp_path / "index" / "chunks").glob("segments/*")
    sealed = [s for s in segments
              if json.loads((s / "segment.json").read_text())["config"]["sparse_vector_data"]["sparse"]["index"]
              == {"full_scan_threshold": None, "index_type": "Mmap", "memory": "cold"}]
    assert sealed
    for segment in sealed:
        fields = json.loads((segment / "payload_index" / "config.json").read_text())["indexed_fields"]
        assert {f: i["memory"] for f, i in fields.items()} == {"path": "cold", "symbol_ids": "cold", "language": "cold"}
    reader = EdgeStore.open(tmp_path / "repo", tmp_path / "index")
    try:
        hits = reader.search(None, query_sparse_vector("zanzibar quokka"), 3)
        assert [h.path for h in hits][:1] == ["needle.py"]
        hits = reader.search(None, query_sparse_vector("route_3 handler"), 5)
        assert hits and all(h.path.startswith("m") for h in hits)
        assert [h.text for h in reader.chunks_in_file("needle.py")] == ["def zanzibar_quokka(): pass"]
    finally:
        reader.close()


def test_each_small_protocol_has_its_contract_class_and_both_engines_implement_it():
    """Store joins the six small protocols (store/__init__.py) and declares nothing of its own; each protocol has
    its contract class, which every engine's test class runs, and each engine has each method, named alike."""
    import inspect

    import codeqa.store as store
    import store_contract
    from codeqa.store.edge import EdgeStore
    from codeqa.store.server import ServerStore

    def declared(cls) -> list[str]:
        return [n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")]

    protocols = [k for k in store.Store.__mro__ if k.__module__ == "codeqa.store" and declared(k)]
    assert sorted(k.__name__ for k in protocols) == sorted(["StateReader", "ChunkReader", "GraphReader", "StateWriter",
                                                            "ChunkWriter", "GraphWriter"])
    for protocol in protocols:
        contract = getattr(store_contract, f"{protocol.__name__}Contract")
        assert issubclass(TestEdgeStore, contract) and issubclass(TestServerStore, contract)
        for name in declared(protocol):
            want = list(inspect.signature(getattr(protocol, name)).parameters)
            for engine in (EdgeStore, ServerStore):
                assert list(inspect.signature(getattr(engine, name)).parameters) == want, (engine, protocol, name)
