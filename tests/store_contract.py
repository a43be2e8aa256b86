"""The store's contracts (codeqa/store/__init__.py), one test class per protocol, which every engine passes.

    StateReaderContract  ChunkReaderContract  GraphReaderContract
    StateWriterContract  ChunkWriterContract  GraphWriterContract
    StoreContract        all six: what an engine's test module subclasses

A test module subclasses `StoreContract` (or the classes of the protocols its engine implements) and provides a
`make_store` fixture: a factory returning a fresh, empty, writable store each call. Each class fills its store
through the writers and checks one protocol's points; a writer's test reads what it wrote back."""

from __future__ import annotations

import math

import pytest

from codeqa.store import ManifestEntry, SearchFilter, query_sparse_vector
from codeqa.types import Chunk, Reference, Symbol, name_key

DIM = 8


def vec(*hot: int) -> list[float]:
    v = [0.0] * DIM
    for i in hot:
        v[i] = 1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def symbol(path: str, qualified: str, line: int, kind: str = "function", parent: str | None = None) -> Symbol:
    name = qualified.rsplit(".", 1)[-1]
    return Symbol(f"{path}#{qualified}@{line}", name, qualified, kind, "python", path, line, line + 3, f"def {name}()",
                  f"{name} docs", parent)


def chunk(path: str, line: int, text: str, symbols: tuple[Symbol, ...] = (), language: str = "python") -> Chunk:
    return Chunk(f"00000000-0000-0000-0000-{abs(hash((path, line))) % 10**12:012d}", path, line, line + 2, language,
                 "function", tuple(s.id for s in symbols), text, tuple(s.qualified_name for s in symbols))


def ref(path: str, line: int, name: str, targets: tuple[str, ...], enclosing: str | None, kind: str = "call",
        column: int = 4) -> Reference:
    return Reference(name, path, line, column, kind, enclosing, targets, "exact", f"    {name}()")


ENCODER = symbol("enc.py", "Encoder", 1, "class")
ENCODE = symbol("enc.py", "Encoder.encode", 5, "method", parent=ENCODER.id)
TOKENIZE = symbol("tok.py", "tokenize", 1)
MAIN = symbol("app/main.py", "main", 1)


def fill(store) -> None:
    store.ensure_schema(DIM)
    store.write_meta({"model_id": "m", "files": 3})
    store.upsert_symbols([ENCODER, ENCODE, TOKENIZE, MAIN])
    store.upsert_chunks([chunk("enc.py", 1, "class Encoder:\n    def encode(self, text): return tokenize(text)", (ENCODER, ENCODE)),
                         chunk("tok.py", 1, "def tokenize(text):\n    return text.split()", (TOKENIZE,)),
                         chunk("app/main.py", 1, "def main():\n    Encoder().encode('hi')", (MAIN,), "python"),
                         chunk("README.md", 1, "Encoder guide: how to split text", (), "markdown")],
                        [vec(0), vec(1), vec(2), vec(3)], ["", "", "", ""])
    store.replace_references([ref("enc.py", 6, "tokenize", (TOKENIZE.id,), ENCODE.id),
                              ref("app/main.py", 2, "Encoder", (ENCODER.id,), MAIN.id, "instantiation"),
                              ref("app/main.py", 2, "encode", (ENCODE.id,), MAIN.id, column=14)])
    store.put_manifest([ManifestEntry(p, "h" + p, "python", 1, n) for p, n in
                        (("enc.py", 2), ("tok.py", 1), ("app/main.py", 1), ("README.md", 0))])
    store.flush()


class FilledStore:
    """The store every contract class checks: `fill`ed, closed after the test."""

    @pytest.fixture
    def store(self, make_store):
        s = make_store()
        fill(s)
        yield s
        s.close()


class StateReaderContract(FilledStore):
    """StateReader: exists, the meta, the generation, the manifest, close."""

    def test_empty_until_schema(self, make_store):
        s = make_store()
        try:
            assert not s.exists() and s.read_meta() == {} and s.manifest() == {}
            s.ensure_schema(DIM)
            s.write_meta({"a": 1})
            assert s.exists()
        finally:
            s.close()

    def test_reads_what_was_written(self, store):
        assert store.exists() and store.read_meta() == {"model_id": "m", "files": 3}
        assert store.manifest()["enc.py"] == ManifestEntry("enc.py", "henc.py", "python", 1, 2)
        store.close()
        store.close()  # and the fixture closes it once more: close is idempotent


class StateWriterContract(FilledStore):
    """StateWriter: the meta replaced and published, the manifest's entries, drop_all."""

    def test_meta_replaces_and_generation_moves(self, store):
        before = store.generation()
        store.write_meta({"model_id": "x", "nested": {"k": [1, 2]}})
        assert store.read_meta() == {"model_id": "x", "nested": {"k": [1, 2]}}
        assert store.generation() > before
        published = store.generation()
        store.write_meta({"model_id": "x", "graph_dirty": True}, publish=False)
        assert store.read_meta()["graph_dirty"] and store.generation() == published

    def test_manifest(self, store):
        assert set(store.manifest()) == {"enc.py", "tok.py", "app/main.py", "README.md"}
        store.mark_pending(["tok.py", "new.py"])
        assert store.manifest()["tok.py"] == ManifestEntry("tok.py", "", None, 0, 0, "pending")
        assert store.manifest()["new.py"].status == "pending"
        store.delete_manifest(["new.py"])
        assert "new.py" not in store.manifest()

    def test_drop_all(self, store):
        before = store.generation()
        store.drop_all()
        assert not store.exists() and store.read_meta() == {} and store.manifest() == {}
        store.ensure_schema(DIM)
        assert store.count_chunks() == 0 and list(store.all_symbols()) == [] and list(store.all_references()) == []
        store.write_meta({"model_id": "m"})
        assert store.generation() > before  # a reader that saw the old index notices the rebuilt one


class ChunkReaderContract(FilledStore):
    """ChunkReader: chunk lookups, the stored dense vectors, dense, keyword and hybrid search, filters, ties."""

    def test_chunk_lookups(self, store):
        assert store.count_chunks() == 4
        hits = store.chunks_for_symbols([TOKENIZE.id])
        assert [(h.path, h.start_line) for h in hits] == [("tok.py", 1)] and hits[0].symbol == "tokenize"
        assert "return text.split()" in hits[0].text and hits[0].symbol_ids == (TOKENIZE.id,)
        assert [h.path for h in store.chunks_in_file("enc.py")] == ["enc.py"]
        assert store.chunks_in_file("missing.py") == []

    def test_dense_vectors_are_the_stored_ones(self, store):
        got = {(p, start, end): v for p, start, end, v in store.dense_vectors()}
        assert sorted(got) == [("README.md", 1, 3), ("app/main.py", 1, 3), ("enc.py", 1, 3), ("tok.py", 1, 3)]
        assert got[("tok.py", 1, 3)] == pytest.approx(vec(1), abs=1e-3)
        assert got[("README.md", 1, 3)] == pytest.approx(vec(3), abs=1e-3)

    def test_dense_search_is_cosine(self, store):
        hits = store.search(vec(1), None, 2)
        assert hits[0].path == "tok.py" and hits[0].score == pytest.approx(1.0, abs=1e-3)
        assert hits[1].score == pytest.approx(0.0, abs=1e-3)
        mixed = store.search(vec(1, 2), None, 4)
        assert {h.path for h in mixed[:2]} == {"tok.py", "app/main.py"}
        assert mixed[0].score == pytest.approx(1 / math.sqrt(2), abs=1e-3)  # float16 vectors: 3 digits

    def test_hybrid_search_fuses_in_the_engine(self, store):
        # dense alone ranks README first; the keyword "tokenize" lifts tok.py and enc.py
        dense_only = store.search(vec(3), None, 4)
        assert dense_only[0].path == "README.md"
        fused = store.search(vec(3), query_sparse_vector("tokenize"), 4)
        assert fused[0].path in {"tok.py", "enc.py", "README.md"} and "hybrid" in fused[0].reasons
        rrf = {h.path: h.score for h in fused}
        # RRF with k=2 over 0-based ranks: README is first in the dense list only, 1 / (2 + 0)
        assert rrf["README.md"] == pytest.approx(1 / 2, abs=1e-4)
        heavy_sparse = store.search(vec(3), query_sparse_vector("tokenize"), 4, weights=(1.0, 5.0))
        assert heavy_sparse[0].path in {"tok.py", "enc.py"}
        no_sparse = store.search(vec(3), query_sparse_vector("tokenize"), 4, weights=(1.0, 0.0))
        assert [h.path for h in no_sparse] == [h.path for h in dense_only]

    def test_ties_come_in_path_and_line_order(self, store):
        # twenty-four chunks (two in each of twelve files) as near the query as each other, written in no order: an
        # engine returns ties in the order its segments and threads happen to give, so the same search could differ
        # from one open to the next
        paths = [f"tie/m{i:02d}.py" for i in (7, 2, 11, 0, 9, 4, 1, 10, 5, 8, 3, 6)]
        store.upsert_chunks([chunk(p, line, "def tied():\n    return tie_word") for p in paths for line in (9, 1)],
                            [vec(4)] * 24, [""] * 24)
        store.flush()
        want = sorted((p, line) for p in paths for line in (1, 9))
        assert [(h.path, h.start_line) for h in store.search(vec(4), None, 24)] == want
        assert [(h.path, h.start_line) for h in store.search(None, query_sparse_vector("tie_word"), 24)] == want

    def test_search_filters(self, store):
        only_md = store.search(vec(1), None, 4, where=SearchFilter(languages=("markdown",)))
        assert [h.path for h in only_md] == ["README.md"]
        in_files = store.search(vec(3), query_sparse_vector("tokenize"), 4, where=SearchFilter(paths=("tok.py", "app/main.py")))
        assert {h.path for h in in_files} <= {"tok.py", "app/main.py"} and in_files


class ChunkWriterContract(FilledStore):
    """ChunkWriter: chunks without a dense vector until set_dense, delete_files, optimize, release."""

    def test_chunks_without_dense_vectors_until_set_dense(self, store):
        later = chunk("later.py", 1, "def tokenize_later(text):\n    return tokenize(text)", ())
        store.upsert_chunks([later], [None], ["later.py tokenize_later"])
        store.put_manifest([ManifestEntry("later.py", "hlater", "python", 1, 0, embedded=False)])
        assert store.manifest()["later.py"].embedded is False and store.manifest()["tok.py"].embedded is True
        assert store.count_chunks() == 5
        assert all(h.path != "later.py" for h in store.search(vec(4), None, 5))  # no dense vector: dense never finds it
        keyword = store.search(None, query_sparse_vector("tokenize_later"), 5)
        assert keyword[0].path == "later.py" and "keyword" in keyword[0].reasons
        assert store.search(None, None, 5) == []
        fused = store.search(vec(4), query_sparse_vector("tokenize_later"), 5)
        assert "later.py" in {h.path for h in fused}  # hybrid search finds it by its keywords meanwhile
        assert store.chunks_of_files(["later.py", "missing.py"]) == [later]
        assert {c.path for c in store.chunks_of_files(["enc.py", "tok.py"])} == {"enc.py", "tok.py"}
        store.set_dense([later.id], [vec(4)])
        dense = store.search(vec(4), None, 1)
        assert dense[0].path == "later.py" and dense[0].score == pytest.approx(1.0, abs=1e-3)
        assert store.search(None, query_sparse_vector("tokenize_later"), 1)[0].path == "later.py"  # sparse vector kept
        assert store.chunks_of_files(["later.py"]) == [later]  # payload kept
        store.optimize()
        assert store.search(vec(4), None, 1)[0].path == "later.py" and store.count_chunks() == 5

    def test_delete_files(self, store):
        store.delete_files(["enc.py"])
        assert store.count_chunks() == 3 and store.chunks_in_file("enc.py") == []
        assert store.symbols_in_files(["enc.py"]) == [] and "enc.py" in store.manifest()
        assert all(h.path != "enc.py" for h in store.search(vec(0), None, 4))

    def test_optimize_keeps_every_answer(self, store):
        before = [(h.path, round(h.score, 5)) for h in store.search(vec(3), query_sparse_vector("tokenize"), 4)]
        store.optimize()
        after = [(h.path, round(h.score, 5)) for h in store.search(vec(3), query_sparse_vector("tokenize"), 4)]
        assert after == before and store.count_chunks() == 4

    def test_release_lets_go_and_the_next_use_answers_the_same(self, store):
        before = [(h.path, round(h.score, 5)) for h in store.search(vec(3), query_sparse_vector("tokenize"), 4)]
        store.release()
        store.release()  # twice is harmless
        assert [(h.path, round(h.score, 5)) for h in store.search(vec(3), query_sparse_vector("tokenize"), 4)] == before
        store.upsert_chunks([chunk("more.py", 1, "def tokenize_more(): pass")], [vec(5)], ["more.py"])
        store.release()
        assert store.count_chunks() == 5 and store.search(vec(5), None, 1)[0].path == "more.py"


class GraphReaderContract(FilledStore):
    """GraphReader: symbol and reference lookups."""

    def test_symbol_lookups(self, store):
        assert {s.id for s in store.symbols_by_key([name_key("encoder")])} == {ENCODER.id}
        assert {s.id for s in store.symbols_by_key([name_key("Encoder.encode"), "tokenize"])} == {ENCODE.id, TOKENIZE.id}
        assert {s.id for s in store.symbols_by_key(["encode"])} == {ENCODE.id}
        assert store.symbols_by_ids([MAIN.id, "nope"]) == [MAIN]
        assert [s.id for s in store.symbols_in_files(["enc.py"])] == [ENCODER.id, ENCODE.id]
        assert store.children_of([ENCODER.id]) == [ENCODE]
        assert store.symbols_by_key(["missing"]) == [] and store.children_of(["x"]) == []
        assert [s.id for s in store.all_symbols()] == [MAIN.id, ENCODER.id, ENCODE.id, TOKENIZE.id]

    def test_reference_lookups(self, store):
        to_encoder = store.references_to([ENCODER.id, ENCODE.id])
        assert [(r.path, r.line, r.name) for r in to_encoder] == [("app/main.py", 2, "Encoder"), ("app/main.py", 2, "encode")]
        assert to_encoder[0].target_ids == (ENCODER.id,) and to_encoder[0].kind == "instantiation"
        assert [r.name for r in store.references_from([ENCODE.id])] == ["tokenize"]
        assert store.references_to([]) == [] and store.references_to(["unknown"]) == []
        assert len(list(store.all_references())) == 3


class GraphWriterContract(FilledStore):
    """GraphWriter: references replaced (all, or some files'), staged ahead of a replace."""

    def test_replace_references_writes_the_difference(self, store):
        keep = ref("enc.py", 6, "tokenize", (TOKENIZE.id,), ENCODE.id)
        new = ref("tok.py", 2, "split", (), TOKENIZE.id)
        assert store.replace_references([keep, new, new]) == (1, 2)
        assert {(r.path, r.line) for r in store.all_references()} == {("enc.py", 6), ("tok.py", 2)}
        assert store.replace_references([keep, new]) == (0, 0)

    def test_replace_references_of_some_files_leaves_the_others(self, store):
        moved = ref("app/main.py", 2, "encode", (TOKENIZE.id,), MAIN.id, column=14)
        assert store.replace_references([moved], {"app/main.py", "gone.py"}) == (1, 2)
        assert sorted((r.path, r.line, r.target_ids) for r in store.all_references()) == [
            ("app/main.py", 2, (TOKENIZE.id,)), ("enc.py", 6, (TOKENIZE.id,))]
        assert store.references_to([ENCODER.id]) == [] and len(store.references_to([TOKENIZE.id])) == 2
        assert store.replace_references([], {"enc.py"}) == (0, 1)
        assert [r.path for r in store.all_references()] == ["app/main.py"]

    def test_staged_references_join_the_next_replace_and_a_new_run_drops_them(self, store):
        keep = ref("enc.py", 6, "tokenize", (TOKENIZE.id,), ENCODE.id)
        new = ref("tok.py", 2, "split", (ENCODER.id, TOKENIZE.id), TOKENIZE.id)
        store.stage_references([keep])
        store.stage_references([new, keep])
        assert len(list(store.all_references())) == 3  # staged: nothing a reader sees changed yet
        assert store.replace_references([new]) == (1, 2)
        assert {(r.path, r.line) for r in store.all_references()} == {("enc.py", 6), ("tok.py", 2)}
        assert [r.path for r in store.references_to([ENCODER.id])] == ["tok.py"]
        assert store.replace_references([keep, new]) == (0, 0)  # what was staged went with the last call
        store.stage_references([ref("gone.py", 1, "x", (MAIN.id,), None)])  # a run killed after staging
        store.ensure_schema(DIM)
        assert store.replace_references([keep, new]) == (0, 0)

    def test_staged_references_of_some_files(self, store):
        moved = ref("app/main.py", 2, "encode", (TOKENIZE.id,), MAIN.id, column=14)
        store.stage_references([moved])
        assert store.replace_references([], {"app/main.py", "gone.py"}) == (1, 2)
        assert sorted((r.path, r.line, r.target_ids) for r in store.all_references()) == [
            ("app/main.py", 2, (TOKENIZE.id,)), ("enc.py", 6, (TOKENIZE.id,))]


class StoreContract(StateReaderContract, StateWriterContract, ChunkReaderContract, ChunkWriterContract,
                    GraphReaderContract, GraphWriterContract):
    """Every protocol's contract: a Store (an engine) passes them all."""
