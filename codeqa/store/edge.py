"""EdgeStore: the embedded index. Qdrant Edge holds the chunks, SQLite the graph (store/graph_db.py).

    <index-dir>/chunks/         a Qdrant Edge shard: dense (cosine, stored float16) + sparse (BM25 with
                                the IDF modifier) vectors; payload = the chunk (path, lines, kind, symbols, text)
    <index-dir>/graph.sqlite    meta (the fingerprint), manifest, symbols, references
    <index-dir>/codeqa-index.json  the marker: the folder is an index, and whose (store/index_folder.py)

Qdrant Edge is Qdrant's own engine as a library: segments, HNSW, the sparse inverted index, payload
indexes, filters and weighted RRF fusion run in-process. The shard is created without a write-ahead
log: a WAL is held by one process at a time, and readers (the UI, `codeqa search`, an MCP server)
must be able to open the index while another process writes it. Durability comes from `flush()`,
which index.py calls before a manifest entry vouches for a file's points; a killed writer leaves
those files "pending", and the next run re-does them.

A reader that stays open (the UI) reloads the shard when the meta's generation moves on: a writer in
another process committed a run, and the points this process loaded are no longer the index.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Sequence

from ..errors import IndexFolderError, IndexMismatchError, IndexMissingError, StoreError
from ..types import Chunk, Hit, Reference, Symbol
from .rows import (RRF_K, ManifestEntry, SearchFilter, batches, best_first, chunk_from_payload, chunk_payload, dense_row,
               hit_from_payload, sparse_vector)
from .graph_db import GraphDB
from .index_folder import MARKER_FILE, check_readable, claim_index_folder, previous_engine_index, read_marker

UPSERT_BATCH = 512
# Segments past this size (KB of vectors) are rebuilt by optimize() into immutable ones: their sparse
# index and payload indexes then open from disk instead of being rebuilt in memory (500k chunks:
# open 3.1 s -> see bench/search_latency.py). No HNSW graph is built (m=0): a full scan of the dense
# vectors answers in ~45 ms at 500k chunks on 2 cores, and building the graph took minutes.
OPTIMIZE_THRESHOLD_KB = 1000
# Segments the optimizer keeps before it merges them: a big phase 1 seals a segment every 50k chunks
# (index.SEAL_CHUNKS), and with the default (about one per core) each seal merged every earlier one
# again (300k chunks: seals took 18, 32, 73 s; with 8: 12, 16, 14 s); 16 leaves site-packages' 11
# seals unmerged (a merge would build a segment as big as the seals were kept small to avoid). Search
# cost is about the same: the dense vectors are scanned in full (m=0 below), each segment's sparse index is its own.
SEGMENTS = 16
CHUNKS_DIR = "chunks"
GRAPH_FILE = "graph.sqlite"
_PAYLOAD_INDEXES = ("path", "symbol_ids", "language")


class EdgeStore:
    """All reads and writes of an embedded index. Create with `EdgeStore.open(...)`; close() when done."""

    def __init__(self, index_dir: Path, graph: GraphDB):
        self.index_dir = Path(index_dir)
        self.graph = graph
        self._shard: Any = None
        self._loaded_generation = -1
        self._writes = False  # this process writes: it never needs to reload what it wrote
        self._token_ids: dict[str, tuple[int, ...]] = {}  # identifier -> sparse token ids (see sparse_vector)

    @classmethod
    def open(cls, repo: Path, index_dir: Path, create: bool = False) -> "EdgeStore":
        index_dir = Path(index_dir)
        graph_file = index_dir / GRAPH_FILE
        if not create and not graph_file.exists():
            check_readable(index_dir, repo, {})  # another repository's folder is refused as such
            if previous_engine_index(index_dir):
                raise IndexMismatchError(f"The index in {index_dir} was built by an older codeqa (qdrant-client's local "
                                         f"mode); run `codeqa index {repo}` once to rebuild it (nothing is re-embedded).")
            raise IndexMissingError.for_repo(repo)
        try:
            if create:  # the marker first: nothing is written or deleted in a folder that is not an index
                claim_index_folder(index_dir, repo)
            index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"Cannot create the index folder {index_dir} ({exc.strerror}); "
                             "choose another with --index-dir or CODEQA_INDEX_DIR.") from None
        graph = GraphDB(graph_file, create=create)
        if not create:
            try:  # an index made before markers names its repository in its meta
                check_readable(index_dir, repo, graph.read_meta())
            except BaseException:
                graph.close()
                raise
        return cls(index_dir, graph)

    @property
    def chunks_dir(self) -> Path:
        return self.index_dir / CHUNKS_DIR

    # ---- the shard ------------------------------------------------------------------------------
    def _chunks(self) -> Any:
        """The shard, loaded on first use (the graph-only commands never load it), and loaded again
        when another process committed a run since."""
        from qdrant_edge import EdgeShard

        if self._shard is not None and not self._writes and self.graph.generation() != self._loaded_generation:
            self._release_shard()
        if self._shard is None:
            if not (self.chunks_dir / "edge_config.json").exists():
                raise IndexMissingError(f"The index in {self.index_dir} has no chunks yet; run `codeqa index` first.")
            generation = self.graph.generation()
            try:
                self._shard = EdgeShard.load(str(self.chunks_dir))
            except Exception as exc:  # the engine raises plain Exception with its message
                raise StoreError(f"Cannot open the chunks of the index in {self.index_dir} ({exc}); "
                                 "run `codeqa index --full` to rebuild it.") from None
            self._loaded_generation = generation
        return self._shard

    def _release_shard(self) -> None:
        if self._shard is not None:
            try:
                self._shard.close()
            except Exception:
                pass
            self._shard = None

    def close(self) -> None:
        self._release_shard()
        self.graph.close()

    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    def release(self) -> None:
        """Let go of the chunks in this process (loaded again on next use, with what another process wrote
        meanwhile): a run hands the chunk writes to its writer process (indexing/writer.py)."""
        self._release_shard()
        self._token_ids.clear()  # up to a million identifiers (~200 MB): a project's names repeat within a stretch
        _return_freed_memory()

    def optimize(self) -> None:
        """Rebuild big appendable segments as immutable ones (see OPTIMIZE_THRESHOLD_KB); durable on return.

        The shard is then closed (loaded again on its next use) and the freed heap handed back to the
        system: an appendable segment holds ~4.5 KB a chunk in memory, and the engine keeps that memory
        (plus the optimizer's working copy) until the shard is closed, while a loaded immutable segment holds
        ~1-2 KB (site-packages, 550k chunks: 2.4 GB before, and a 2.5 GB spike while optimizing at
        the end). index.py calls this every SEAL_CHUNKS chunks of a big phase 1 for that reason."""
        shard = self._chunks()
        shard.optimize()
        shard.flush()
        self.release()

    # ---- schema ---------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.graph.has_schema() and bool(self.graph.read_meta()) and (self.chunks_dir / "edge_config.json").exists()

    def ensure_schema(self, vector_size: int) -> None:
        from qdrant_edge import (Distance, EdgeConfig, EdgeOptimizersConfig, EdgeShard, EdgeSparseVectorParams,
                                 EdgeVectorParams, HnswIndexConfig, KeywordIndexParams, Memory, Modifier,
                                 UpdateOperation, VectorStorageDatatype)

        self._writes = True
        if not self.graph.read_meta() and self.chunks_dir.exists():
            self._release_shard()  # points without a meta: left by a run killed while dropping or creating
            self._remove_chunks()
        self.graph.ensure_schema()
        if (self.chunks_dir / "edge_config.json").exists():
            self._chunks()
            return
        plain = HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)  # m=0: no graph, exact scans
        dense = EdgeVectorParams(size=vector_size, distance=Distance.Cosine, hnsw_config=plain,
                                 datatype=VectorStorageDatatype.Float16)  # half float32's size, the same rankings
        # the sparse index of a sealed segment memory-mapped and read on demand (Cold), not held in the heap
        # (Pinned, the default): 150k chunks of site-packages loaded in 331 -> 214 MB (anonymous 147 -> 31 MB),
        # and the writer process of a big run holds every sealed segment loaded; the price is the first
        # keyword search after a load (~50 ms of page faults, then ~1 ms as before)
        config = EdgeConfig(vectors={"dense": dense},
                            sparse_vectors={"sparse": EdgeSparseVectorParams(modifier=Modifier.Idf, memory=Memory.Cold)},
                            wal_enabled=False,
                            optimizers=EdgeOptimizersConfig(indexing_threshold=OPTIMIZE_THRESHOLD_KB,
                                                            default_segment_number=SEGMENTS))
        self._shard = EdgeShard.create(str(self.chunks_dir), config)
        # the keyword indexes memory-mapped, not held in the heap: they were most of a loaded shard's own
        # memory (151k chunks of site-packages: anonymous 184 -> 20 MB, RSS 359 -> 298 MB), in the
        # writer process at the top of a big run's memory and in every process that searches; and read
        # on demand (Cold), not read in whole when a segment loads (Cached): with the sparse index Cold
        # too, 150k chunks load in 214 -> 184 MB (the path filter is read where a search or delete uses it)
        keyword = KeywordIndexParams(memory=Memory.Cold)
        for field in _PAYLOAD_INDEXES:
            self._shard.update(UpdateOperation.create_field_index(field, keyword))
        self._shard.flush()
        self._loaded_generation = self.graph.generation()

    def drop_all(self) -> None:
        """The meta and manifest go first: a crash halfway leaves points without a meta, which the
        next ensure_schema removes."""
        self.graph.drop_all()
        self._release_shard()
        if self.chunks_dir.exists():
            self._remove_chunks()

    def _remove_chunks(self) -> None:
        """The one deletion of a folder: the shard, in a folder that carries codeqa's marker (open(create=True)
        wrote it or found it); a `chunks/` anywhere else is not ours to remove."""
        if read_marker(self.index_dir) is None:
            raise IndexFolderError(f"{self.index_dir} has no {MARKER_FILE}: its chunks/ folder is left as it is.")
        if self.chunks_dir.is_symlink():  # codeqa makes no links: this one leads out of the index folder
            raise IndexFolderError(f"{self.chunks_dir} is a link, which codeqa did not make; it is left as it is. Remove "
                                   "the link and run `codeqa index` again.")
        shutil.rmtree(self.chunks_dir)

    # ---- meta and manifest ----------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        return self.graph.read_meta()

    def write_meta(self, meta: dict[str, Any], publish: bool = True) -> None:
        self.graph.write_meta(meta, publish)
        if self._writes:  # what this process wrote is what its shard holds: no reload for its own runs
            self._loaded_generation = self.graph.generation()

    def generation(self) -> int:
        return self.graph.generation()

    def manifest(self) -> dict[str, ManifestEntry]:
        return self.graph.manifest()

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        self.graph.put_manifest(entries)

    def mark_pending(self, paths: Sequence[str]) -> None:
        self.graph.put_manifest([ManifestEntry.pending(path) for path in paths])

    def delete_manifest(self, paths: Sequence[str]) -> None:
        self.graph.delete_manifest(paths)

    # ---- writes ---------------------------------------------------------------------------------
    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float] | None],
                      embedded_texts: Sequence[str]) -> None:
        from qdrant_edge import Point, SparseVector, UpdateOperation

        shard = self._chunks()
        points = []
        for chunk, vector, embedded in zip(chunks, vectors, embedded_texts):
            indices, values = sparse_vector(embedded + "\n" + chunk.text, self._token_ids)
            named: dict[str, Any] = {"sparse": SparseVector(indices, values)}
            if vector is not None:
                named["dense"] = [float(x) for x in vector]
            points.append(Point(id=chunk.id, payload=chunk_payload(chunk, tuple), vector=named))
        for batch in batches(points, UPSERT_BATCH):
            shard.update(UpdateOperation.upsert_points(list(batch)))

    def set_dense(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        from qdrant_edge import PointVectors, UpdateOperation

        shard = self._chunks()
        updates = [PointVectors(i, {"dense": [float(x) for x in v]}) for i, v in zip(ids, vectors)]
        for batch in batches(updates, UPSERT_BATCH):
            shard.update(UpdateOperation.update_vectors(list(batch)))

    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        self.graph.upsert_symbols(symbols)

    def delete_files(self, paths: Sequence[str]) -> None:
        from qdrant_edge import UpdateOperation

        if not paths:
            return
        shard = self._chunks()
        for batch in batches(list(paths), 500):
            shard.update(UpdateOperation.delete_points_by_filter(_filter(SearchFilter(paths=tuple(batch)))))
        self.graph.delete_symbols_in(paths)

    def stage_references(self, references: Iterable[Reference]) -> None:
        self.graph.stage_references(references)

    def replace_references(self, references: Iterable[Reference], paths: Collection[str] | None = None) -> tuple[int, int]:
        return self.graph.replace_references(references, paths)

    # ---- reads ----------------------------------------------------------------------------------
    def count_chunks(self) -> int:
        from qdrant_edge import CountRequest

        return int(self._chunks().count(CountRequest(exact=True)))

    def symbols_by_key(self, keys: Iterable[str]) -> list[Symbol]:
        return self.graph.symbols_by_key(keys)

    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]:
        return self.graph.symbols_by_ids(ids)

    def symbols_in_files(self, paths: Iterable[str]) -> list[Symbol]:
        return self.graph.symbols_in_files(paths)

    def children_of(self, ids: Iterable[str]) -> list[Symbol]:
        return self.graph.children_of(ids)

    def all_symbols(self) -> Iterator[Symbol]:
        return self.graph.all_symbols()

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        return self.graph.references_to(symbol_ids) if symbol_ids else []

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        return self.graph.references_from(symbol_ids) if symbol_ids else []

    def all_references(self) -> Iterator[Reference]:
        return self.graph.all_references()

    def chunks_for_symbols(self, symbol_ids: Sequence[str], limit: int = 50) -> list[Hit]:
        from qdrant_edge import FieldCondition, Filter, MatchAny, ScrollRequest

        if not symbol_ids:
            return []
        flt = Filter(must=[FieldCondition(key="symbol_ids", match=MatchAny(list(symbol_ids)))])
        records, _ = self._chunks().scroll(ScrollRequest(limit=limit, filter=flt, with_payload=True))
        return [hit_from_payload(dict(r.payload or {}), 0.0, ("symbol",)) for r in records]

    def chunks_in_file(self, path: str) -> list[Hit]:
        from qdrant_edge import ScrollRequest

        hits: list[Hit] = []
        offset = None
        while True:
            records, offset = self._chunks().scroll(ScrollRequest(offset=offset, limit=256, with_payload=True,
                                                                  filter=_filter(SearchFilter(paths=(path,)))))
            hits.extend(hit_from_payload(dict(r.payload or {}), 0.0, ()) for r in records)
            if offset is None:
                return sorted(hits, key=lambda h: h.start_line)

    def chunks_of_files(self, paths: Sequence[str]) -> list[Chunk]:
        from qdrant_edge import ScrollRequest

        chunks: list[Chunk] = []
        for batch in batches(list(paths), 500):
            offset = None
            while True:
                records, offset = self._chunks().scroll(ScrollRequest(offset=offset, limit=1024, with_payload=True,
                                                                      filter=_filter(SearchFilter(paths=tuple(batch)))))
                chunks.extend(chunk_from_payload(r.id, dict(r.payload or {})) for r in records)
                if offset is None:
                    break
        return chunks

    def dense_vectors(self) -> Iterator[tuple[str, int, int, list[float]]]:
        from qdrant_edge import ScrollRequest

        offset = None
        while True:
            records, offset = self._chunks().scroll(ScrollRequest(offset=offset, limit=1024, with_payload=True,
                                                                  with_vector=True))
            yield from filter(None, map(dense_row, records))
            if offset is None:
                return

    def search(self, dense: Sequence[float] | None, sparse: tuple[Sequence[int], Sequence[float]] | None, limit: int,
               weights: tuple[float, float] = (1.0, 1.0), where: SearchFilter | None = None) -> list[Hit]:
        from qdrant_edge import Fusion, Prefetch, Query, QueryRequest, SparseVector

        flt = _filter(where) if where else None
        if dense is None:
            if sparse is None or not sparse[0]:
                return []
            query = SparseVector(list(map(int, sparse[0])), list(map(float, sparse[1])))
            request = QueryRequest(limit=limit, query=Query.Nearest(query, using="sparse"), filter=flt, with_payload=True)
            return best_first(hit_from_payload(dict(p.payload or {}), p.score, ("keyword",)) for p in self._chunks().query(request))
        vector = [float(x) for x in dense]
        if sparse is None or not sparse[0] or weights[1] == 0:
            request = QueryRequest(limit=limit, query=Query.Nearest(vector, using="dense"), filter=flt, with_payload=True)
            reasons: tuple[str, ...] = ("dense",)
        else:
            prefetches = [Prefetch(limit=limit * 4, query=Query.Nearest(vector, using="dense"), filter=flt),
                          Prefetch(limit=limit * 4, filter=flt, query=Query.Nearest(
                              SparseVector(list(map(int, sparse[0])), list(map(float, sparse[1]))), using="sparse"))]
            request = QueryRequest(limit=limit, prefetches=prefetches, with_payload=True,
                                   query=Fusion.Rrf(k=RRF_K, weights=[float(w) for w in weights]))
            reasons = ("hybrid",)
        points = self._chunks().query(request)
        if any(not (p.payload or {}).get("path") for p in points):
            # a point without its payload: a writer in another process rewrote a segment this reader had mapped
            # (its payload is read from disk on demand); load the shard again and ask once more
            self._release_shard()
            points = self._chunks().query(request)
        return best_first(hit_from_payload(dict(p.payload), p.score, reasons) for p in points if (p.payload or {}).get("path"))


def _return_freed_memory() -> None:
    """glibc keeps freed heap pages in the process; malloc_trim gives them back (a closed shard's
    segments: 283 -> 6 MB measured). Elsewhere nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _filter(where: SearchFilter) -> Any:
    from qdrant_edge import FieldCondition, Filter, MatchAny

    must = []
    if where.paths is not None:
        must.append(FieldCondition(key="path", match=MatchAny(list(where.paths))))
    if where.languages is not None:
        must.append(FieldCondition(key="language", match=MatchAny(list(where.languages))))
    return Filter(must=must)
