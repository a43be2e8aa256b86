"""Store stage: where one repository's index lives, behind small protocols.

    StateReader     exists, meta, manifest            StateWriter    schema, meta, manifest, flush
    ChunkReader     chunks and search                 ChunkWriter    chunks, dense vectors, files' deletion
    GraphReader     symbols and references            GraphWriter    symbols, references
    Store           all six (StoreReader: the three reads, StoreWriter: the three writes); each protocol's
                    contract is in its docstring and in its class in tests/store_contract.py
    EdgeStore       store/edge.py: Qdrant Edge (Qdrant's engine in-process) for the chunks, SQLite for the
                    graph, manifest and meta; the embedded default, in the user's cache dir
    ServerStore     store/server.py: a Qdrant server or cluster (qdrant-client) holds everything

No module outside this package imports a Qdrant package. Everything either engine writes is plain
data (Qdrant segments, SQLite rows of plain values, JSON): opening an index never runs code from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Protocol, Sequence

from ..config import Settings
from ..types import Chunk, Hit, Reference, Symbol

# the rows both engines write, re-exported for the callers that name them as the store's
from .rows import (INDEX_FORMAT, RRF_K, ManifestEntry, SearchFilter, best_first, point_id, query_sparse_vector,
                   reference_key, sparse_vector, token_id)


# The store's protocols, small and by what callers need (issue 64): the index's state (meta and manifest), its
# chunks and search, its graph (symbols and references); each read and written by its own protocol, each checked
# by its own contract class in tests/store_contract.py. StoreReader, StoreWriter and Store only join them.


class StateReader(Protocol):
    """Whether the index exists, its meta and its manifest: what a reader checks before and between questions.

    Contract (tests/store_contract.py, StateReaderContract):
    - `exists()` is False until a writer's `ensure_schema` ran, and again after its `drop_all()`.
    - `read_meta()` returns the meta dict a writer wrote ({} when none). `generation()` is a number that
      moves with each published `write_meta`, so a long-lived reader knows when to look again (a run's
      first, unpublished write leaves it: readers do not drop their caches for a half-written run).
    - `manifest()`: path -> ManifestEntry, as a writer put them.
    - `close()` releases the index (idempotent). Several processes may open one index to read while
      one writes.
    """

    def exists(self) -> bool: ...
    def read_meta(self) -> dict[str, Any]: ...
    def generation(self) -> int: ...
    def manifest(self) -> dict[str, ManifestEntry]: ...
    def close(self) -> None: ...


class ChunkReader(Protocol):
    """The stored chunks and the search over them: what the searcher and the rankers read.

    Contract (tests/store_contract.py, ChunkReaderContract):
    - `chunks_of_files(paths)` returns the stored chunks of those files as `Chunk`s equal to the ones
      upserted; `count_chunks()` counts them all. `chunks_for_symbols(ids, limit)` (chunks naming one of
      the symbol ids) and `chunks_in_file(path)` (by start line) return `Hit`s with the stored text.
      Lookups never load the whole index; unknown ids or paths give empty results, never errors.
    - `search(dense, sparse, limit, weights, where)`: with `sparse` None (or weight 0) the chunks
      nearest to `dense` by cosine, score = cosine (to 1e-3: an engine may store float16); with `dense`
      None the chunks best by BM25 over `sparse`; otherwise dense and sparse candidates (limit * 4
      each) fused by weighted RRF (k = RRF_K) inside the engine. Hits carry the stored chunk text.
      A chunk stored without a dense vector is found by sparse search only. Best score first, ties in
      (path, start_line) order (`best_first`), so a search gives the same results every time.
    - `dense_vectors()` yields (path, start_line, end_line, vector) for every chunk with a dense vector, the
      vector as stored (to 1e-3), in no set order: what a training script reads (scripts/train_question_map.py).
    """

    def count_chunks(self) -> int: ...
    def chunks_of_files(self, paths: Sequence[str]) -> list[Chunk]: ...
    def chunks_for_symbols(self, symbol_ids: Sequence[str], limit: int = 50) -> list[Hit]: ...
    def chunks_in_file(self, path: str) -> list[Hit]: ...
    def search(self, dense: Sequence[float] | None, sparse: tuple[Sequence[int], Sequence[float]] | None, limit: int,
               weights: tuple[float, float] = (1.0, 1.0), where: SearchFilter | None = None) -> list[Hit]: ...
    def dense_vectors(self) -> Iterator[tuple[str, int, int, list[float]]]: ...


class GraphReader(Protocol):
    """The symbols and the references between them: what the graph lookups (query/lookup.py) and the
    reference hops read.

    Contract (tests/store_contract.py, GraphReaderContract):
    - Lookups never load the whole index: `symbols_by_key(keys)` matches `name_key(name)` or
      `name_key(qualified_name)`; `symbols_by_ids`, `symbols_in_files`, `children_of(ids)` (symbols
      whose parent_id is one of ids); `references_to(ids)` (a target id among ids, ordered by path,
      line, column), `references_from(ids)` (enclosing symbol among ids). Unknown ids give empty
      results, never errors. `all_symbols()` and `all_references()` walk them all (an export, a rebuild).
    - Staged references (GraphWriter) are never seen here.
    """

    def symbols_by_key(self, keys: Iterable[str]) -> list[Symbol]: ...
    def symbols_by_ids(self, ids: Iterable[str]) -> list[Symbol]: ...
    def symbols_in_files(self, paths: Iterable[str]) -> list[Symbol]: ...
    def children_of(self, ids: Iterable[str]) -> list[Symbol]: ...
    def all_symbols(self) -> Iterator[Symbol]: ...
    def references_to(self, symbol_ids: Sequence[str]) -> list[Reference]: ...
    def references_from(self, symbol_ids: Sequence[str]) -> list[Reference]: ...
    def all_references(self) -> Iterator[Reference]: ...


class StateWriter(Protocol):
    """The index's life, its meta and its manifest, as the indexer writes them.

    Contract (tests/store_contract.py, StateWriterContract):
    - `ensure_schema(size)` makes the index exist (and drops any references a killed run staged);
      `drop_all()` removes every chunk, symbol, reference, manifest entry and the meta.
    - Meta: `write_meta(d)` replaces the whole dict; values are JSON-able; `publish=True` moves the
      readers' `generation()`, a run's first write (publish=False) does not.
    - Manifest: `put_manifest` upserts entries by path; `mark_pending(paths)` sets them pending with an
      empty hash; `delete_manifest(paths)` removes entries.
    - `flush()` makes every write so far durable (of every protocol); `close()` releases the index (idempotent).
    - Writers are serialised by the caller (index.py's lock) and, on a server, across machines by the
      writer lease that `open_store(create=True)` takes (store/lease.py).
    """

    def ensure_schema(self, vector_size: int) -> None: ...
    def drop_all(self) -> None: ...
    def write_meta(self, meta: dict[str, Any], publish: bool = True) -> None: ...
    def put_manifest(self, entries: Sequence[ManifestEntry]) -> None: ...
    def mark_pending(self, paths: Sequence[str]) -> None: ...
    def delete_manifest(self, paths: Sequence[str]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


class ChunkWriter(Protocol):
    """The chunks' writes: phase 1 stores them, phase 2 gives them their dense vectors.

    Contract (tests/store_contract.py, ChunkWriterContract):
    - `upsert_chunks(chunks, vectors, embedded_texts)` stores each chunk (by `Chunk.id`) with its dense
      vector and a BM25 sparse vector of `embedded_text + text`; a vector that is None stores the chunk
      without a dense vector until `set_dense(ids, vectors)` gives it one (the sparse vector and payload
      stay).
    - `delete_files(paths)` removes those files' chunks and symbols (not references, not manifest): what
      a changed or deleted file leaves behind.
    - `optimize()` reorganises what was written for fast opens and queries (search results stay the same);
      `release()` lets go of whatever this process holds of the chunks (after a flush: another process
      may then write them; the next use here sees what it wrote).
    """

    def upsert_chunks(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float] | None],
                      embedded_texts: Sequence[str]) -> None: ...
    def set_dense(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...
    def delete_files(self, paths: Sequence[str]) -> None: ...
    def optimize(self) -> None: ...
    def release(self) -> None: ...


class GraphWriter(Protocol):
    """The symbols' and references' writes.

    Contract (tests/store_contract.py, GraphWriterContract):
    - `upsert_symbols` stores symbols by id.
    - `replace_references(refs)` makes the stored references equal `refs` (a set: order and
      duplicates do not matter) and returns (added, removed); `replace_references(refs, paths)` does
      so for the references whose path is in `paths` only (every one of `refs` has such a path) and
      leaves the others. `stage_references(refs)` gives part of the next call's `refs` ahead of it, in
      as many calls as the writer likes (an index run stages each file's as it is resolved): staged
      references change nothing a reader sees.
    """

    def upsert_symbols(self, symbols: Sequence[Symbol]) -> None: ...
    def stage_references(self, references: Iterable[Reference]) -> None: ...
    def replace_references(self, references: Iterable[Reference], paths: Collection[str] | None = None) -> tuple[int, int]: ...


class StoreReader(StateReader, ChunkReader, GraphReader, Protocol):
    """Every read of one repository's index: what a query side that needs all three holds (query/retrieve.py,
    query/searcher.py). A caller that reads one part types with that part's protocol."""


class StoreWriter(StateWriter, ChunkWriter, GraphWriter, Protocol):
    """Every write of one repository's index: what the indexer holds."""


class Store(StoreReader, StoreWriter, Protocol):
    """One repository's index, read and written (what `open_store` returns; EdgeStore, ServerStore).
    Readers are typed with StoreReader or one of its parts, the indexer with Store."""


def open_store(repo: Path, settings: Settings, create: bool = False) -> Store:
    """The index of `repo`: on the Qdrant server when settings.qdrant_url is set (named by store/identity.py),
    else embedded in settings.index_dir_for(repo). Raises IndexMissingError when there is none and `create`
    is False. `create` is for the index's writer: on a server it takes the writer lease (IndexLockedError
    while another machine's run holds it), which close() gives back."""
    if settings.qdrant_url:
        from .server import ServerStore

        return ServerStore.connect(repo, settings.qdrant_url, settings.qdrant_api_key, shards=settings.qdrant_shards,
                                   replicas=settings.qdrant_replicas, index_name=settings.index_name, writer=create)
    from .edge import EdgeStore

    return EdgeStore.open(repo, settings.index_dir_for(repo), create=create)


def index_notes(repo: Path, settings: Settings) -> list[str]:
    """What an index run tells the user about where its index lives: on a server without a git remote or
    --index-name, that the index is named after the folder's path and how to name it for good."""
    if not settings.qdrant_url:
        return []
    from .identity import index_identity

    note = index_identity(repo, settings.index_name).note
    return [note] if note else []


def semantic_coverage(meta: dict[str, Any]) -> float:
    """The share of an index's chunks that have their dense vector, from its meta (index.py writes
    `chunks_embedded` when phase 1 commits and as phase 2 goes on): 1.0 once semantic search is complete."""
    chunks = int(meta.get("chunks") or 0)
    embedded = meta.get("chunks_embedded")
    return 1.0 if not chunks or embedded is None else max(0.0, min(1.0, int(embedded) / chunks))


def semantic_search_at(coverage: float) -> str:
    """The words "Semantic search is at N%", in one place: how far phase 2 has come (N rounded down), which the
    CLI, the MCP tools and the page each follow with what their user can do about it."""
    return f"Semantic search is at {int(coverage * 100)}%"


def dir_size(path: Path) -> int:
    """Bytes a folder takes on disk. Qdrant's segment files are sparse (a pluggy index: 123 MB long, 2 MB
    written), so it counts allocated blocks where the system reports them, as `du` does."""
    def used(f: Path) -> int:
        st = f.stat()
        blocks = getattr(st, "st_blocks", None)
        return blocks * 512 if blocks is not None else st.st_size
    return sum(used(f) for f in Path(path).rglob("*") if f.is_file()) if Path(path).exists() else 0


__all__ = ["Store", "StoreReader", "StoreWriter", "StateReader", "ChunkReader", "GraphReader", "StateWriter", "ChunkWriter",
           "GraphWriter", "ManifestEntry", "SearchFilter", "open_store", "index_notes", "point_id", "sparse_vector",
           "query_sparse_vector", "best_first", "reference_key", "dir_size", "semantic_coverage", "RRF_K", "INDEX_FORMAT"]
