"""ServerStore: the index on a Qdrant server or cluster (`--qdrant-url` / QDRANT_URL), via qdrant-client.

    <prefix>_chunks      dense (cosine) + sparse BM25 (IDF modifier) vectors; payload = chunk + text
    <prefix>_symbols     vectorless; payload = Symbol fields + name keys
    <prefix>_references  vectorless; payload = Reference fields (target_ids point at symbol ids)
    <prefix>_files       vectorless; the manifest, plus one meta point (the fingerprint, the generation)
    <prefix>_lease       one point: the writer lease (lease.py), kept when the index is dropped

Every field a lookup filters on has a payload index, so the server answers each lookup from its
indexes. The prefix names the repository by its git remote or --index-name, else its path
(identity.py), so several repositories share one server and one repository's checkouts share an index.
A writer (`connect(writer=True)`) holds the lease until close(), and writes nothing once it lost it.
Every call the server fails (refused, reset, timed out, a 5xx) is a StoreError naming QDRANT_URL and
what to do. Shards and replicas come from settings; the API key is sent only over https (or to localhost).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Sequence

from ..errors import StoreError
from ..types import Chunk, Hit, Reference, Symbol, name_key
from .identity import index_identity
from .lease import WriterLease
from .server_client import GuardedClient, server_client
from .rows import (RRF_K, ManifestEntry, SearchFilter, batches, best_first, chunk_from_payload, chunk_payload, dense_row,
               hit_from_payload, point_id, reference_key, sparse_vector)

META_POINT_ID = str(uuid.UUID(int=0))
UPSERT_BATCH = 256
_INDEXED = {"chunks": ("path", "symbol_ids", "language"), "symbols": ("id", "path", "parent_id", "keys"),
            "references": ("target_ids", "enclosing_symbol_id", "key"), "files": ("type", "path")}


class ServerStore:
    """All reads and writes of an index on a Qdrant server. Create with `ServerStore.connect(...)`."""

    def __init__(self, client: Any, prefix: str, shards: int | None = None, replicas: int | None = None,
                 url: str = "the Qdrant server"):
        self.client = GuardedClient(client, url)
        self.prefix = prefix
        self.shards, self.replicas = shards, replicas
        self._token_ids: dict[str, tuple[int, ...]] = {}  # identifier -> sparse token ids (see sparse_vector)
        self._staged: list[Reference] = []  # stage_references: part of the next replace_references
        self.chunks = f"{prefix}_chunks"
        self.symbols = f"{prefix}_symbols"
        self.references = f"{prefix}_references"
        self.files = f"{prefix}_files"
        self.lease: WriterLease | None = None

    @classmethod
    def connect(cls, repo: Path, url: str, api_key: str | None = None, shards: int | None = None,
                replicas: int | None = None, index_name: str | None = None, writer: bool = False) -> "ServerStore":
        """The index of `repo` (named by identity.py); a `writer` holds its lease (IndexLockedError while
        another writer does) until close()."""
        identity = index_identity(repo, index_name)
        store = cls(server_client(url, api_key), identity.prefix, shards, replicas, url)
        if writer:
            try:
                store.hold_lease(identity.described)
            except BaseException:
                store.close()
                raise
        return store

    def hold_lease(self, described: str, **options: Any) -> None:
        """Takes the writer lease (see lease.py); from here on every write checks that it still holds it."""
        name = f"{self.prefix}_lease"
        if not self.client.collection_exists(name):
            self._create(name, {})
        lease = WriterLease(self.client.unguarded, name, f"{self.prefix} ({described})", **options)
        self.client.call("acquire the writer lease", lease.acquire)
        self.lease = self.client.lease = lease

    def close(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = self.client.lease = None
        try:
            self.client.close()
        except Exception:
            pass

    def flush(self) -> None:
        """Every write waited for the server's acknowledgement: nothing is left to flush."""

    def optimize(self) -> None:
        """The server optimizes its segments itself."""

    def release(self) -> None:
        """Nothing of the chunks is held here: the server has them."""

    # ---- schema ---------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.client.collection_exists(self.files) and bool(self.read_meta())

    def ensure_schema(self, vector_size: int) -> None:
        from qdrant_client import models

        self._staged = []
        if not self.client.collection_exists(self.files) and any(
                self.client.collection_exists(n) for n in (self.chunks, self.symbols, self.references)):
            self.drop_all()  # collections without their manifest: a run killed while creating or dropping them
        for kind in ("chunks", "symbols", "references", "files"):
            name = getattr(self, kind)
            if self.client.collection_exists(name):
                continue
            if kind == "chunks":
                self._create(name, {"dense": models.VectorParams(size=vector_size, distance=models.Distance.COSINE)},
                             sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)})
            else:
                self._create(name, {})
            for field in _INDEXED[kind]:
                schema = models.PayloadSchemaType.INTEGER if field == "key" else models.PayloadSchemaType.KEYWORD
                self.client.create_payload_index(name, field, field_schema=schema)

    def _create(self, name: str, vectors_config: dict, **config: Any) -> None:
        if self.shards:
            config["shard_number"] = self.shards
        if self.replicas:
            config["replication_factor"] = self.replicas
        try:
            self.client.create_collection(name, vectors_config=vectors_config, **config)
        except StoreError:
            if not self.client.collection_exists(name):  # else another writer created it a moment before
                raise

    def drop_all(self) -> None:
        """The manifest goes first: a crash halfway leaves no manifest, and ensure_schema drops the rest."""
        for name in (self.files, self.chunks, self.symbols, self.references):
            if self.client.collection_exists(name):
                self.client.delete_collection(name)

    # ---- meta and manifest ----------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        if not self.client.collection_exists(self.files):
            return {}
        found = self.client.retrieve(self.files, [META_POINT_ID], with_payload=True)
        payload = dict(found[0].payload or {}) if found else {}
        return dict(payload.get("meta") or {})

    def write_meta(self, meta: dict[str, Any], publish: bool = True) -> None:
        from qdrant_client import models

        # a clock, not a counter: the meta point goes with drop_all, and a reader must never see an old number again
        generation = max(time.time_ns(), self.generation() + 1) if publish else self.generation()
        payload = {"type": "meta", "meta": meta, "generation": generation}
        self.client.upsert(self.files, [models.PointStruct(id=META_POINT_ID, vector={}, payload=payload)])

    def generation(self) -> int:
        if not self.client.collection_exists(self.files):
            return 0
        found = self.client.retrieve(self.files, [META_POINT_ID], with_payload=True)
        return int((found[0].payload or {}).get("generation") or 0) if found else 0

    def manifest(self) -> dict[str, ManifestEntry]:
        if not self.client.collection_exists(self.files):
            return {}
        entries = {}
        for record in self._scroll(self.files, _match("type", "file")):
            payload = {k: v for k, v in (record.payload or {}).items() if k != "type"}
            entries[payload["path"]] = ManifestEntry(**payload)
        return entries

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        from qdrant_client import models

        points = [models.PointStruct(id=point_id("file", e.path), vector={}, payload={**asdict(e), "type": "file"})
                  for e in entries]
        for batch in batches(points, UPSERT_BATCH):
            self.client.upsert(self.files, list(batch))

    def mark_pending(self, paths: Sequence[str]) -> None:
        self.put_manifest([ManifestEntry.pending(path) for path in paths])

    def delete_manifest(self, paths: Sequence[str]) -> None:
        from qdrant_client import models

        for batch in batches([point_id("file", p) for p in paths], 1000):
            self.client.delete(self.files, models.PointIdsList(points=list(batch)))

    # ---- writes ---------------------------------------------------------------------------------
    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]],
                      embedded_texts: Sequence[str]) -> None:
        from qdrant_client import models

        points = []
        for chunk, vector, embedded in zip(chunks, vectors, embedded_texts):
            indices, values = sparse_vector(embedded + "\n" + chunk.text, self._token_ids)
            named: dict[str, Any] = {"sparse": models.SparseVector(indices=indices, values=values)}
            if vector is not None:
                named["dense"] = [float(x) for x in vector]
            points.append(models.PointStruct(id=chunk.id, payload=chunk_payload(chunk), vector=named))
        for batch in batches(points, UPSERT_BATCH):
            self.client.upsert(self.chunks, list(batch))

    def set_dense(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        from qdrant_client import models

        updates = [models.PointVectors(id=i, vector={"dense": [float(x) for x in v]}) for i, v in zip(ids, vectors)]
        for batch in batches(updates, UPSERT_BATCH):
            self.client.update_vectors(self.chunks, points=list(batch))

    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        from qdrant_client import models

        points = [models.PointStruct(id=point_id("symbol", s.id), vector={},
                                     payload={**asdict(s), "keys": sorted({name_key(s.name), name_key(s.qualified_name)})})
                  for s in symbols]
        for batch in batches(points, UPSERT_BATCH):
            self.client.upsert(self.symbols, list(batch))

    def delete_files(self, paths: Sequence[str]) -> None:
        from qdrant_client import models

        for batch in batches(list(paths), 500):
            flt = models.Filter(must=[models.FieldCondition(key="path", match=models.MatchAny(any=list(batch)))])
            for name in (self.chunks, self.symbols):
                self.client.delete(name, models.FilterSelector(filter=flt))

    def stage_references(self, references: Iterable[Reference]) -> None:
        """Kept in memory until replace_references: the difference is worked out against the server then."""
        self._staged.extend(references)

    def replace_references(self, references: Iterable[Reference], paths: Collection[str] | None = None) -> tuple[int, int]:
        """Writes only the difference: a reference's point id is a hash of everything it holds."""
        from qdrant_client import models

        staged, self._staged = self._staged, []
        wanted = {point_id("ref", reference_key(r)): r for refs in (staged, references) for r in refs}
        if paths is None:
            existing = {str(rec.id) for rec in self._scroll(self.references, with_payload=False)}
        else:  # only these files' references are replaced
            existing = {str(rec.id) for batch in batches(sorted(paths), 500)
                        for rec in self._scroll(self.references, _match_any("path", batch), with_payload=False)}
        stale = [pid for pid in existing if pid not in wanted]
        new = [models.PointStruct(id=pid, vector={}, payload={**asdict(r), "target_ids": list(r.target_ids)})
               for pid, r in wanted.items() if pid not in existing]
        for batch in batches(stale, 1000):
            self.client.delete(self.references, models.PointIdsList(points=list(batch)))
        for batch in batches(new, UPSERT_BATCH):
            self.client.upsert(self.references, list(batch))
        return len(new), len(stale)

    # ---- reads ----------------------------------------------------------------------------------
    def count_chunks(self) -> int:
        if not self.client.collection_exists(self.chunks):
            return 0
        return self.client.count(self.chunks, exact=True).count

    def _symbols_where(self, key: str, values: Iterable[str]) -> list[Symbol]:
        values = list(dict.fromkeys(values))
        found: dict[str, Symbol] = {}
        for batch in batches(values, 500):
            for rec in self._scroll(self.symbols, _match_any(key, batch)):
                symbol = _symbol(rec.payload)
                found[symbol.id] = symbol
        return list(found.values())

    def symbols_by_key(self, keys: Iterable[str]) -> list[Symbol]:
        return self._symbols_where("keys", keys)

    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols_where("id", ids)

    def symbols_in_files(self, paths: Iterable[str]) -> list[Symbol]:
        return sorted(self._symbols_where("path", paths), key=lambda s: (s.path, s.start_line, s.id))

    def children_of(self, ids: Iterable[str]) -> list[Symbol]:
        return self._symbols_where("parent_id", ids)

    def all_symbols(self) -> Iterator[Symbol]:
        return iter(sorted((_symbol(r.payload) for r in self._scroll(self.symbols)), key=lambda s: (s.path, s.start_line, s.id)))

    def _references_where(self, key: str, values: Sequence[str]) -> list[Reference]:
        found: dict[str, Reference] = {}
        for batch in batches(list(dict.fromkeys(values)), 500):
            for rec in self._scroll(self.references, _match_any(key, batch)):
                found[str(rec.id)] = _reference(rec.payload)
        return sorted(found.values(), key=lambda r: (r.path, r.line, r.column))

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        return self._references_where("target_ids", symbol_ids)

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        return self._references_where("enclosing_symbol_id", symbol_ids)

    def all_references(self) -> Iterator[Reference]:
        return iter(sorted((_reference(r.payload) for r in self._scroll(self.references)),
                           key=lambda r: (r.path, r.line, r.column)))

    def chunks_for_symbols(self, symbol_ids: Sequence[str], limit: int = 50) -> list[Hit]:
        if not symbol_ids:
            return []
        records, _ = self.client.scroll(self.chunks, scroll_filter=_match_any("symbol_ids", symbol_ids), limit=limit,
                                        with_payload=True)
        return [hit_from_payload(rec.payload, 0.0, ("symbol",)) for rec in records]

    def chunks_in_file(self, path: str) -> list[Hit]:
        return sorted((hit_from_payload(rec.payload, 0.0, ()) for rec in self._scroll(self.chunks, _match("path", path))),
                      key=lambda h: h.start_line)

    def chunks_of_files(self, paths: Sequence[str]) -> list[Chunk]:
        return [chunk_from_payload(rec.id, rec.payload or {}) for batch in batches(list(paths), 500)
                for rec in self._scroll(self.chunks, _match_any("path", list(batch)))]

    def search(self, dense: Sequence[float] | None, sparse: tuple[Sequence[int], Sequence[float]] | None, limit: int,
               weights: tuple[float, float] = (1.0, 1.0), where: SearchFilter | None = None) -> list[Hit]:
        from qdrant_client import models

        flt = _filter(where) if where else None
        if dense is None:
            if sparse is None or not sparse[0]:
                return []
            result = self.client.query_points(self.chunks, query=models.SparseVector(indices=list(sparse[0]),
                                              values=list(sparse[1])), using="sparse", limit=limit, query_filter=flt,
                                              with_payload=True)
            return best_first(hit_from_payload(p.payload, p.score, ("keyword",)) for p in result.points)
        vector = [float(x) for x in dense]
        if sparse is None or not sparse[0] or weights[1] == 0:
            result = self.client.query_points(self.chunks, query=vector, using="dense", limit=limit, query_filter=flt,
                                              with_payload=True)
            return best_first(hit_from_payload(p.payload, p.score, ("dense",)) for p in result.points)
        prefetch = [models.Prefetch(query=vector, using="dense", limit=limit * 4, filter=flt),
                    models.Prefetch(query=models.SparseVector(indices=list(sparse[0]), values=list(sparse[1])),
                                    using="sparse", limit=limit * 4, filter=flt)]
        fusion = models.RrfQuery(rrf=models.Rrf(k=RRF_K, weights=[float(w) for w in weights]))
        result = self.client.query_points(self.chunks, prefetch=prefetch, query=fusion, limit=limit, with_payload=True)
        return best_first(hit_from_payload(p.payload, p.score, ("hybrid",)) for p in result.points)

    def dense_vectors(self) -> Iterator[tuple[str, int, int, list[float]]]:
        yield from filter(None, map(dense_row, self._scroll(self.chunks, with_vectors=["dense"])))

    def _scroll(self, collection: str, flt: Any = None, with_payload: bool = True,
                with_vectors: bool | list[str] = False) -> Iterator[Any]:
        offset = None
        while True:
            records, offset = self.client.scroll(collection, scroll_filter=flt, limit=1000, offset=offset,
                                                 with_payload=with_payload, with_vectors=with_vectors)
            yield from records
            if offset is None:
                return


def _symbol(payload: dict[str, Any]) -> Symbol:
    return Symbol(**{k: v for k, v in payload.items() if k != "keys"})


def _reference(payload: dict[str, Any]) -> Reference:
    return Reference(**{**payload, "target_ids": tuple(payload.get("target_ids") or ())})


def _match(key: str, value: Any) -> Any:
    from qdrant_client import models

    return models.Filter(must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))])


def _match_any(key: str, values: Sequence[Any]) -> Any:
    from qdrant_client import models

    return models.Filter(must=[models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))])


def _filter(where: SearchFilter) -> Any:
    from qdrant_client import models

    must = []
    if where.paths is not None:
        must.append(models.FieldCondition(key="path", match=models.MatchAny(any=list(where.paths))))
    if where.languages is not None:
        must.append(models.FieldCondition(key="language", match=models.MatchAny(any=list(where.languages))))
    return models.Filter(must=must)
