"""Store stage: Qdrant collections of one repository's index.

    <prefix>_chunks      dense (cosine) + sparse BM25 (IDF modifier) vectors; payload = chunk + text
    <prefix>_symbols     vectorless; payload = Symbol fields
    <prefix>_references  vectorless; payload = Reference fields (target_ids point at symbol ids)
    <prefix>_files       vectorless; the manifest: path, sha256, language, chunk count; plus one
                         meta point (model, adapter, vector size, chunker and codeqa versions)

Local mode (`QdrantClient(path=<index-dir>/qdrant)`) is the default; a URL switches to a server or
cluster with the same calls. The prefix is derived from the repository so several repositories can
share one server.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .embed import code_tokens
from .errors import CodeQAError, StoreError, UsageError
from .types import Chunk, Hit, Reference, Symbol

META_POINT_ID = str(uuid.UUID(int=0))
BM25_K1 = 1.2
UPSERT_BATCH = 256


def point_id(*parts: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def token_id(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little")


def sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """BM25-style term weights (saturated tf); Qdrant's IDF modifier supplies the idf part."""
    counts = Counter(token_id(t) for t in code_tokens(text))
    indices = sorted(counts)
    return indices, [counts[i] * (BM25_K1 + 1) / (counts[i] + BM25_K1) for i in indices]


def collection_prefix(repo: Path) -> str:
    repo = Path(repo).resolve()
    slug = re.sub(r"[^a-zA-Z0-9]+", "_", repo.name).strip("_").lower()[:40] or "repo"
    return f"codeqa_{slug}_{hashlib.sha1(str(repo).encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    sha256: str
    language: str | None
    chunks: int
    symbols: int
    status: str = "ok"  # ok | partial (parse errors, too deep: see reason) | text (no grammar) | pending
    reason: str = ""  # why a file is partial, for the report of a later run


class QdrantStore:
    """All reads and writes of an index. Create with `QdrantStore.open(...)`; close() when done."""

    def __init__(self, client, prefix: str, local: bool = False):
        self.client = client
        self.prefix = prefix
        self.local = local  # embedded mode: sparse scoring is done here (see hybrid_search)
        self._vectors: LocalVectors | None = None
        self.chunks = f"{prefix}_chunks"
        self.symbols = f"{prefix}_symbols"
        self.references = f"{prefix}_references"
        self.files = f"{prefix}_files"

    @classmethod
    def open(cls, repo: Path, index_dir: Path, url: str | None = None, api_key: str | None = None,
             create: bool = False) -> "QdrantStore":
        from qdrant_client import QdrantClient

        if url:
            client = _server_client(url, api_key)
        else:
            qdrant_dir = Path(index_dir) / "qdrant"
            if not create and not qdrant_dir.exists():
                raise _missing_index(repo)
            qdrant_dir.mkdir(parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=str(qdrant_dir))
            except RuntimeError as exc:  # portalocker: another process has the folder open
                raise CodeQAError(f"The index at {qdrant_dir} is in use by another codeqa process ({exc}); "
                                  "wait for it to finish or use a Qdrant server (--qdrant-url).") from exc
        store = cls(client, collection_prefix(repo), local=not url)
        store._tune_local_storage()
        return store

    # ---- embedded mode's SQLite files ----------------------------------------------------------
    def _local_connections(self, names: Sequence[str] | None = None) -> list[Any]:
        """The SQLite connections of embedded Qdrant's collections (qdrant-client internals: none if they move)."""
        collections = getattr(getattr(self.client, "_client", None), "collections", None)
        if not self.local or not isinstance(collections, dict):
            return []
        wanted = collections if names is None else {n: collections[n] for n in names if n in collections}
        connections = [getattr(getattr(c, "storage", None), "storage", None) for c in wanted.values()]
        return [c for c in connections if c is not None]

    def _tune_local_storage(self) -> None:
        """Embedded Qdrant commits every point with full fsyncs (~3 ms a point on this machine's disk). In WAL
        mode with synchronous=NORMAL a commit survives a killed process just the same and costs ~10x less;
        `flush` makes writes durable on disk where the index relies on their order (see index.py)."""
        for connection in self._local_connections():
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
            except Exception:
                pass

    def flush(self, *names: str) -> None:
        """Make what was written to these collections durable (a WAL checkpoint; a no-op on a server)."""
        for connection in self._local_connections(names or None):
            try:
                connection.execute("PRAGMA wal_checkpoint(FULL)")
            except Exception:
                pass

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass

    # ---- schema -------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.client.collection_exists(self.files)

    def ensure_collections(self, vector_size: int, shards: int | None = None, replicas: int | None = None) -> None:
        from qdrant_client import models

        extra: dict[str, Any] = {}
        if shards:
            extra["shard_number"] = shards
        if replicas:
            extra["replication_factor"] = replicas
        if not self.client.collection_exists(self.chunks):
            self.client.create_collection(
                self.chunks,
                vectors_config={"dense": models.VectorParams(size=vector_size, distance=models.Distance.COSINE)},
                sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)},
                **extra,
            )
        for name in (self.symbols, self.references, self.files):
            if not self.client.collection_exists(name):
                self.client.create_collection(name, vectors_config={}, **extra)
        self._tune_local_storage()

    def drop_all(self) -> None:
        """The manifest goes first: a crash halfway leaves no manifest, and a run without one drops the rest."""
        self._vectors = None
        for name in (self.files, self.chunks, self.symbols, self.references):
            if self.client.collection_exists(name):
                self.client.delete_collection(name)

    def has_orphans(self) -> bool:
        """Collections left without their manifest (a crash while dropping or creating them)."""
        return not self.exists() and any(self.client.collection_exists(n) for n in (self.chunks, self.symbols, self.references))

    # ---- meta and manifest ----------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        if not self.exists():
            return {}
        found = self.client.retrieve(self.files, [META_POINT_ID], with_payload=True)
        return dict(found[0].payload or {}) if found else {}

    def write_meta(self, meta: dict[str, Any]) -> None:
        from qdrant_client import models

        self.client.upsert(self.files, [models.PointStruct(id=META_POINT_ID, vector={}, payload={**meta, "type": "meta"})])

    def manifest(self) -> dict[str, ManifestEntry]:
        entries = {}
        for record in self._scroll(self.files):
            payload = record.payload or {}
            if payload.get("type") == "file":
                payload = {k: v for k, v in payload.items() if k != "type"}
                entries[payload["path"]] = ManifestEntry(**payload)
        return entries

    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None:
        from qdrant_client import models

        points = [models.PointStruct(id=point_id("file", e.path), vector={}, payload={**asdict(e), "type": "file"})
                  for e in entries]
        for batch in _batches(points, UPSERT_BATCH):
            self.client.upsert(self.files, batch)

    def mark_pending(self, paths: Sequence[str]) -> None:
        """Write-ahead: before a file's points are written or deleted its entry says "pending" (a hash no
        file has), so a run killed at any moment leaves it to be deleted and re-done by the next run."""
        self.put_manifest([ManifestEntry(path, "", None, 0, 0, "pending") for path in paths])

    # ---- writes -----------------------------------------------------------------------------
    def delete_points(self, paths: Sequence[str]) -> None:
        """Remove the chunks and symbols of these files (their manifest entries stay: mark them pending first)."""
        from qdrant_client import models

        self._vectors = None
        for batch in _batches(list(paths), 500):
            flt = models.Filter(must=[models.FieldCondition(key="path", match=models.MatchAny(any=list(batch)))])
            for name in (self.chunks, self.symbols):
                self.client.delete(name, models.FilterSelector(filter=flt))

    def delete_manifest(self, paths: Sequence[str]) -> None:
        from qdrant_client import models

        for batch in _batches([point_id("file", p) for p in paths], 1000):
            self.client.delete(self.files, models.PointIdsList(points=list(batch)))

    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]], embedded_texts: Sequence[str]) -> None:
        from qdrant_client import models

        self._vectors = None
        points = []
        for chunk, vector, embedded in zip(chunks, vectors, embedded_texts):
            indices, values = sparse_vector(embedded + "\n" + chunk.text)
            points.append(models.PointStruct(
                id=chunk.id,
                vector={"dense": list(map(float, vector)), "sparse": models.SparseVector(indices=indices, values=values)},
                payload={"path": chunk.path, "start_line": chunk.start_line, "end_line": chunk.end_line,
                         "language": chunk.language, "kind": chunk.kind, "symbol_ids": list(chunk.symbol_ids),
                         "symbol_names": list(chunk.symbol_names), "text": chunk.text, "header": chunk.header},
            ))
        for batch in _batches(points, UPSERT_BATCH):
            self.client.upsert(self.chunks, batch)

    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None:
        from qdrant_client import models

        points = [models.PointStruct(id=point_id("symbol", s.id), vector={}, payload=asdict(s)) for s in symbols]
        for batch in _batches(points, UPSERT_BATCH):
            self.client.upsert(self.symbols, batch)

    def replace_references(self, references: Sequence[Reference]) -> tuple[int, int]:
        """Make the references collection equal `references`; writes only the difference."""
        from qdrant_client import models

        wanted = {reference_point_id(r): r for r in references}
        existing = {str(rec.id) for rec in self._scroll(self.references, with_payload=False)}
        stale = [pid for pid in existing if pid not in wanted]
        new = [models.PointStruct(id=pid, vector={}, payload=_reference_payload(r))
               for pid, r in wanted.items() if pid not in existing]
        for batch in _batches(stale, 1000):
            self.client.delete(self.references, models.PointIdsList(points=batch))
        for batch in _batches(new, UPSERT_BATCH):
            self.client.upsert(self.references, batch)
        return len(new), len(stale)

    # ---- reads ------------------------------------------------------------------------------
    def count(self, collection: str) -> int:
        if not self.client.collection_exists(collection):
            return 0
        return self.client.count(collection, exact=True).count

    def all_symbols(self) -> list[Symbol]:
        return [Symbol(**rec.payload) for rec in self._scroll(self.symbols)]

    def symbols_named(self, name: str) -> list[Symbol]:
        return [Symbol(**rec.payload) for rec in self._scroll(self.symbols, _match("name", name))]

    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        found = self.client.retrieve(self.symbols, [point_id("symbol", i) for i in ids], with_payload=True)
        return [Symbol(**rec.payload) for rec in found]

    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]:
        from qdrant_client import models

        if not symbol_ids:
            return []
        flt = models.Filter(must=[models.FieldCondition(key="target_ids", match=models.MatchAny(any=list(symbol_ids)))])
        refs = [_reference_from_payload(rec.payload) for rec in self._scroll(self.references, flt)]
        return sorted(refs, key=lambda r: (r.path, r.line, r.column))

    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]:
        from qdrant_client import models

        if not symbol_ids:
            return []
        flt = models.Filter(must=[models.FieldCondition(key="enclosing_symbol_id", match=models.MatchAny(any=list(symbol_ids)))])
        return [_reference_from_payload(rec.payload) for rec in self._scroll(self.references, flt)]

    def all_references(self) -> list[Reference]:
        return [_reference_from_payload(rec.payload) for rec in self._scroll(self.references)]

    def chunks_for_symbols(self, symbol_ids: Sequence[str], limit: int = 50) -> list[Hit]:
        from qdrant_client import models

        if not symbol_ids:
            return []
        flt = models.Filter(must=[models.FieldCondition(key="symbol_ids", match=models.MatchAny(any=list(symbol_ids)))])
        records, _ = self.client.scroll(self.chunks, scroll_filter=flt, limit=limit, with_payload=True)
        return [_hit(rec.payload, 0.0, ("symbol",)) for rec in records]

    def chunks_in_file(self, path: str) -> list[Hit]:
        return [_hit(rec.payload, 0.0, ()) for rec in self._scroll(self.chunks, _match("path", path))]

    def hybrid_search(self, dense: Sequence[float], query_text: str, limit: int) -> list[Hit]:
        """Dense + sparse candidates (limit * 4 each) fused with RRF. A server does it all in one query;
        in embedded mode both candidate lists come from `LocalVectors` (numpy) and only the fusion and
        the payloads from Qdrant."""
        from qdrant_client import models

        indices, values = sparse_vector(query_text)
        if self.local:
            return self._local_hybrid_search(dense, indices, limit)
        prefetch = [models.Prefetch(query=list(map(float, dense)), using="dense", limit=limit * 4)]
        if indices:
            prefetch.append(models.Prefetch(query=models.SparseVector(indices=indices, values=[1.0] * len(indices)),
                                            using="sparse", limit=limit * 4))
        result = self.client.query_points(self.chunks, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                                          limit=limit, with_payload=True)
        return [_hit(p.payload, p.score, ("hybrid",)) for p in result.points]

    def dense_search(self, dense: Sequence[float], limit: int) -> list[Hit]:
        if self.local:
            return self._with_payloads(self.local_vectors().dense_search(dense, limit), ("dense",))
        result = self.client.query_points(self.chunks, query=list(map(float, dense)), using="dense", limit=limit, with_payload=True)
        return [_hit(p.payload, p.score, ("dense",)) for p in result.points]

    def local_vectors(self) -> "LocalVectors":
        """The chunks' vectors in numpy, read once per store (writes through this store drop them).

        Embedded Qdrant scores sparse vectors in a Python loop over every point (~1 s a query at 20k
        chunks) and re-normalises every dense vector for each query (~65 ms at 20k on 2 loaded cores)."""
        if self._vectors is None:
            self._vectors = self._vectors_from_engine() or self._vectors_by_scroll()
        return self._vectors

    def _vectors_from_engine(self) -> "LocalVectors | None":
        """Straight from embedded Qdrant's arrays (instant; a scroll copies every point: ~10 s at 50k).
        These are qdrant-client internals: anything unexpected and the scroll is used instead."""
        import numpy as np

        collections = getattr(getattr(self.client, "_client", None), "collections", None)
        engine = collections.get(self.chunks) if isinstance(collections, dict) else None
        if engine is None:
            return None
        try:
            count = len(engine.payload)
            rows = np.flatnonzero(~np.asarray(engine.deleted[:count], dtype=bool)
                                  & ~np.asarray(engine.deleted_per_vector["dense"][:count], dtype=bool))
            ids = [engine.ids_inv[i] for i in rows]
            dense = np.asarray(engine.vectors["dense"][rows], dtype=np.float32)
            no_sparse = engine.deleted_per_vector["sparse"]
            sparse = [((), ()) if no_sparse[i] else (engine.sparse_vectors["sparse"][i].indices,
                                                    engine.sparse_vectors["sparse"][i].values) for i in rows]
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            return None
        if dense.ndim != 2 or len(dense) != len(ids):
            return None
        return LocalVectors(ids, dense, SparseIndex(ids, sparse))

    def _vectors_by_scroll(self) -> "LocalVectors":
        import numpy as np

        ids, dense, sparse = [], [], []
        for record in self._scroll(self.chunks, with_payload=False, with_vectors=True):
            vectors = record.vector or {}
            ids.append(record.id)
            dense.append(vectors.get("dense") or [])
            point_sparse = vectors.get("sparse")
            sparse.append((point_sparse.indices, point_sparse.values) if point_sparse is not None else ((), ()))
        matrix = np.asarray(dense, dtype=np.float32).reshape(len(ids), -1) if ids else np.zeros((0, 0), np.float32)
        return LocalVectors(ids, matrix, SparseIndex(ids, sparse))

    def _local_hybrid_search(self, dense: Sequence[float], indices: list[int], limit: int) -> list[Hit]:
        from qdrant_client import models
        from qdrant_client.hybrid.fusion import reciprocal_rank_fusion

        vectors = self.local_vectors()
        responses = [[models.ScoredPoint(id=pid, version=0, score=score) for pid, score in vectors.dense_search(dense, limit * 4)]]
        if indices:
            responses.append([models.ScoredPoint(id=pid, version=0, score=score)
                              for pid, score in vectors.sparse.search(indices, [1.0] * len(indices), limit * 4)])
        fused = reciprocal_rank_fusion(responses, limit=limit)
        return self._with_payloads([(p.id, p.score) for p in fused], ("hybrid",))

    def _with_payloads(self, scored: Sequence[tuple[Any, float]], reasons: tuple[str, ...]) -> list[Hit]:
        if not scored:
            return []
        records = {str(r.id): r for r in self.client.retrieve(self.chunks, [pid for pid, _ in scored], with_payload=True)}
        return [_hit(records[str(pid)].payload, score, reasons) for pid, score in scored if str(pid) in records]

    def _scroll(self, collection: str, flt=None, with_payload: bool = True, with_vectors: Any = False) -> Iterator[Any]:
        offset = None
        while True:
            records, offset = self.client.scroll(collection, scroll_filter=flt, limit=1000, offset=offset,
                                                 with_payload=with_payload, with_vectors=with_vectors)
            yield from records
            if offset is None:
                return


class LocalVectors:
    """An embedded index's vectors held in numpy: dense rows L2-normalised (cosine = dot), sparse postings."""

    def __init__(self, ids: Sequence[Any], dense, sparse: "SparseIndex"):
        import numpy as np

        self.ids = list(ids)
        norms = np.linalg.norm(dense, axis=1, keepdims=True) if len(dense) else np.ones((0, 1), np.float32)
        self.dense = dense / np.maximum(norms, 1e-12)
        self.sparse = sparse

    def dense_search(self, query: Sequence[float], limit: int) -> list[tuple[Any, float]]:
        import numpy as np

        if not self.ids:
            return []
        q = np.asarray(query, dtype=np.float32)
        scores = self.dense @ (q / max(float(np.linalg.norm(q)), 1e-12))
        top = np.argpartition(-scores, min(limit, len(scores) - 1))[:limit] if len(scores) > limit else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top]


class SparseIndex:
    """The chunks' sparse vectors as posting lists in numpy, scored like Qdrant's IDF modifier:
    score(doc) = sum over query terms t of q_t * idf(t) * doc_t, idf = ln((N - df + 0.5) / (df + 0.5) + 1);
    documents sharing no term with the query are left out."""

    def __init__(self, ids: Sequence[Any], vectors: Sequence[tuple[Sequence[int], Sequence[float]]]):
        import numpy as np

        self.ids = list(ids)
        rows = np.repeat(np.arange(len(vectors), dtype=np.int32), [len(ind) for ind, _ in vectors])
        terms = np.fromiter((t for ind, _ in vectors for t in ind), dtype=np.int64, count=len(rows))
        values = np.fromiter((v for _, val in vectors for v in val), dtype=np.float32, count=len(rows))
        order = np.argsort(terms, kind="stable")
        self._terms, self._rows, self._values = terms[order], rows[order], values[order]
        self._vocab, self._starts, self._df = np.unique(self._terms, return_index=True, return_counts=True)
        self._documents = sum(1 for ind, _ in vectors if len(ind))  # Qdrant's N: points that have a sparse vector

    def search(self, indices: Sequence[int], values: Sequence[float], limit: int) -> list[tuple[Any, float]]:
        import numpy as np

        n = self._documents
        scores = np.zeros(len(self.ids), dtype=np.float64)
        hit = np.zeros(len(self.ids), dtype=bool)
        positions = np.searchsorted(self._vocab, np.asarray(indices, dtype=np.int64))
        for position, term, weight in zip(positions, indices, values):
            if position >= len(self._vocab) or self._vocab[position] != term:
                continue
            start, df = self._starts[position], self._df[position]
            idf = np.log((n - df + 0.5) / (df + 0.5) + 1.0)
            rows = self._rows[start:start + df]
            scores[rows] += weight * idf * self._values[start:start + df]
            hit[rows] = True
        candidates = np.flatnonzero(hit)
        best = candidates[np.argsort(-scores[candidates], kind="stable")[:limit]]
        return [(self.ids[i], float(scores[i])) for i in best]


def reference_point_id(r: Reference) -> str:
    return point_id("ref", r.path, r.line, r.column, r.name, r.kind, ",".join(r.target_ids), r.confidence,
                    r.enclosing_symbol_id, r.line_text)


def _reference_payload(r: Reference) -> dict[str, Any]:
    payload = asdict(r)
    payload["target_ids"] = list(r.target_ids)
    return payload


def _reference_from_payload(payload: dict[str, Any]) -> Reference:
    return Reference(**{**payload, "target_ids": tuple(payload.get("target_ids") or ())})


def _hit(payload: dict[str, Any], score: float, reasons: tuple[str, ...]) -> Hit:
    names = payload.get("symbol_names") or []
    return Hit(path=payload["path"], start_line=payload["start_line"], end_line=payload["end_line"], score=float(score),
               kind=payload.get("kind", ""), symbol=names[0] if names else None, text=payload.get("text", ""),
               language=payload.get("language"), symbol_ids=tuple(payload.get("symbol_ids") or ()), reasons=reasons)


def _match(key: str, value: Any):
    from qdrant_client import models

    return models.Filter(must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))])


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _server_client(url: str, api_key: str | None):
    """A client for a Qdrant server or cluster, checked with one cheap call so a wrong URL or key
    fails here with a clear message instead of halfway through an index run."""
    from qdrant_client import QdrantClient
    from qdrant_client.http.exceptions import UnexpectedResponse

    client = QdrantClient(url=url, api_key=api_key, timeout=60, check_compatibility=False)
    try:
        client.get_collections()
    except UnexpectedResponse as exc:
        client.close()
        if exc.status_code in (401, 403):
            raise StoreError(f"The Qdrant server at {url} refused the request ({exc.status_code}): "
                             "set QDRANT_API_KEY to a valid key.") from None
        raise StoreError(f"The Qdrant server at {url} answered {exc.status_code}: {exc.reason_phrase}.") from None
    except Exception as exc:  # connection refused, DNS, TLS, timeout
        client.close()
        raise StoreError(f"Cannot reach the Qdrant server at {url} ({type(exc).__name__}: {exc}); "
                         "check --qdrant-url / QDRANT_URL.") from None
    return client


def _missing_index(repo: Path) -> UsageError:
    from .errors import IndexMissingError

    return IndexMissingError(f"No codeqa index for {repo} yet; run `codeqa index {repo}` first.")


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()) if Path(path).exists() else 0


__all__ = ["QdrantStore", "ManifestEntry", "point_id", "sparse_vector", "collection_prefix", "dir_size"]
