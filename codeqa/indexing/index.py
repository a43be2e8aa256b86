"""index_repo(): the one place where the indexing stages are wired together, in two phases.

    phase 1: walk (files) -> parse (parse) -> chunk (chunk) -> store chunks with BM25 vectors (writer.py)
                                   \\-> resolve references against the whole project (graph) -> store
             committed: search (keywords + graph), refs, ask, the UI and MCP work from here on
    phase 2: dense vectors by priority, in committed batches (dense.py) -> semantic search complete

Embedding is most of a big project's run (the bundled model embeds 14-25 chunks/s on 2 cores), so
phase 1 never waits for the model: a chunk gets its dense vector in phase 1 only when the embedding
cache has it. `index_repo(embed=False)` (`codeqa index --defer-embeddings`) stops after phase 1; any
later run does what phase 2 left, first of all. A big embedded run stores its chunks from a writer
process (writer.py), beside the resolution of references, which can only begin once every file
is parsed and runs on one core.

References are resolved again for the files whose last resolution read something that changed
(graph/incremental.py, with what each file read kept in `resolved.sqlite`), and only their stored
references are replaced; the result equals resolving every file.

Incremental by content hash: unchanged files are not touched, deleted files are removed, and a
run with nothing to do never loads the embedding model, nor even opens the store (embedded mode): a
complete run leaves `state.json` (state.py) and the next run compares the walk with it.

The index records a fingerprint (codeqa version, a hash of queries/, chunk settings, the model):
when it differs, the run re-derives every file, taking vectors from the embedding cache, and says so.
An index built by the previous engine (qdrant-client's local mode) is rebuilt once the same way.

Crash safety (SIGKILL at any moment, then re-run = a clean index, no duplicates):
- `state.json` is removed before the first write of a run and written after its last one, only
  when no chunk waits for its dense vector;
- a file's manifest entry is set to "pending" before any of its points is written or deleted, and
  to its hash only after its chunks and symbols are in; a pending entry never matches a file, so
  the next run deletes whatever the file has and re-does it (point ids are deterministic);
- a file's entry says `embedded` only after its dense vectors are flushed; a file that does not is
  given them by the next run's phase 2 (setting a vector twice is harmless);
- a `graph_dirty` flag in the meta point makes the next run re-resolve references, all of them, and
  so does `resolved.sqlite` marked incomplete from the first reference write to the end of a run;
- dropping the index starts with the meta and manifest, and a run that finds points without them
  drops them (store.ensure_schema).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Sequence

from ..config import Settings
from .dense import fill_dense, pending_files
from ..embed import Embedder, EmbeddingCache, embedder_from_settings
from .walk import walk_repository
from ..fingerprint import FINGERPRINT_WORDS, VECTOR_META_KEYS, index_meta, stale_fingerprint
from .graph.incremental import GraphState
from .graph.stage import GraphUpdate, ProgressCallback, graph_stage, parse_fingerprint
from .state import (after_phase2, embedded_at, likely_changed, migrate_legacy_index, read_state, remove_state,
                    report_from_state, state_is_current, state_summary, write_state)
from .parse_cache import ParseCache
from .parse_pool import parse_workers
from .resident import ResidentIndex
from ..store import Store, dir_size, index_notes, open_store, semantic_coverage
from ..store.index_folder import check_writable, claim_index_folder
from .writer import CacheKeys, Sealer, StoreWriter, Written, store_chunks, writes_beside
from ..types import ParsedFile, Reference, SourceFile
from .report import IndexReport
from .writer_lock import writer_lock

# The embedding cache keeps the vectors most recently written or read, this many times the index's
# chunks (at least EMBED_CACHE_MIN): enough for a few branches' worth of changes, not years of churn.
EMBED_CACHE_FACTOR = 4
EMBED_CACHE_MIN = 20_000
GRAPH_STATE_FILE = "resolved.sqlite"  # graph/incremental.py's GraphState
MOST_USED = 5  # names in the meta's most_used (the UI's example questions)
# Phase 1 seals what it has stored every SEAL_CHUNKS chunks, and phase 2 what it has embedded every
# DENSE_SEAL_CHUNKS (store.optimize: EdgeStore then holds ~1-2 KB a chunk in memory instead of an
# appendable segment's ~4.5 KB); below it, one optimize at the end. Phase 1's are smaller: a big run's
# writer process seals beside the resolution, and a seal of 100k chunks took it up by ~0.6 GB for a while
# (site-packages: the run's peak, 4.3 GB).
SEAL_CHUNKS = 50_000
DENSE_SEAL_CHUNKS = 100_000
STAGE_REFERENCES = 20_000  # resolved references written to the store's staging rows at a time


@contextmanager
def index_lock(index_dir: Path) -> Iterator[None]:
    """One writer per index: a second `codeqa index` is refused (IndexLockedError), not interleaved."""
    with writer_lock(index_dir):
        yield


@dataclass(frozen=True)
class IndexStatus:
    """What an index holds and how far the repository has moved on since (for the UI's sidebar)."""

    files: int
    symbols: int
    chunks: int
    last_indexed: str | None  # ISO 8601, UTC; None when no run has finished
    complete: bool  # False after an interrupted run: the next `codeqa index` completes it
    changed: tuple[str, ...] = ()  # edited or new since the last run
    deleted: tuple[str, ...] = ()  # indexed but gone from the repository
    semantic: float = 1.0  # share of the chunks with their dense vector (< 1: `codeqa index` has embedding left to do)
    embedded_at: str | None = None  # ISO 8601, UTC: when phase 2 last completed; None while it has chunks left

    @property
    def stale(self) -> int:
        return len(self.changed) + len(self.deleted)


def index_status(repo: Path, settings: Settings, store: Store) -> IndexStatus:
    """Counts from the index's meta, and the files whose content hash differs from the manifest."""
    meta = store.read_meta()
    manifest = store.manifest()
    current = {f.path: f.sha256 for f in walk_repository(repo, settings.files_max_bytes).files}
    changed = tuple(sorted(p for p, digest in current.items() if p not in manifest or manifest[p].sha256 != digest))
    deleted = tuple(sorted(set(manifest) - set(current)))
    return IndexStatus(files=len(manifest), symbols=int(meta.get("symbols") or sum(e.symbols for e in manifest.values())),
                       chunks=int(meta.get("chunks") or sum(e.chunks for e in manifest.values())),
                       last_indexed=meta.get("last_indexed"), complete=not meta.get("graph_dirty"),
                       changed=changed, deleted=deleted, semantic=semantic_coverage(meta), embedded_at=embedded_at(meta))


def index_repo(repo: Path, settings: Settings | None = None, full: bool = False,
               progress: ProgressCallback | None = None, embedder: Embedder | None = None,
               embed: bool = True, stop: threading.Event | None = None,
               resident: ResidentIndex | None = None) -> IndexReport:
    """Index `repo` (see the module docstring); with `embed` False, stop after phase 1 (keyword and graph
    search work, the chunks' dense vectors are left to a later run). Once `stop` is set, phase 2 ends
    after the batch it is embedding (a long-lived process stopping its background run); the report's
    `chunks_deferred` says what is left, and the next run does it. A long-lived process passes the same
    `resident` to each of its runs over `repo`: they keep the walk, parses and resolution state there
    (resident.py), and the result is the same."""
    settings = settings or Settings.load()
    started = time.perf_counter()
    repo = Path(repo)
    # raises for a missing repo before anything is created
    walked = resident.walk(repo, settings.files_max_bytes) if resident else walk_repository(repo, settings.files_max_bytes)
    repo = repo.resolve()
    index_dir = settings.index_dir_for(repo)
    owner = None if settings.qdrant_url else repo  # on a server the folder holds caches any checkout may share
    check_writable(index_dir, owner)  # before the lock's file: a folder that is not this repo's index gets nothing
    report = IndexReport(repo=str(repo), index_dir=str(index_dir), skipped=walked.skipped, pruned=walked.pruned,
                         gitignored_files=len(walked.gitignored))
    report.files_total = len(walked.files)
    report.files_by_language = dict(Counter(f.language or "text" for f in walked.files))
    embedder = embedder or embedder_from_settings(settings)
    report.model_id = embedder.model_id
    progress = progress or (lambda stage, done, total: None)
    with index_lock(index_dir):
        claim_index_folder(index_dir, owner)  # the marker before anything else; checked again, now under the lock
        report.notes.extend(index_notes(repo, settings))  # on a server, runs across machines: open_store(create=True)'s lease
        wanted_meta = index_meta(embedder, settings)
        if not settings.qdrant_url:
            report.notes.extend(migrate_legacy_index(repo, index_dir, settings))
        state = None if full or settings.qdrant_url else read_state(index_dir)
        cold = resident is not None and not resident.shas  # a run that finds nothing to do fills it
        if not cold and state is not None and (index_dir / "graph.sqlite").is_file() \
                and state_is_current(state, wanted_meta, walked.files):
            report_from_state(report, state)  # nothing to do, and no need to open the store to know it
        else:
            remove_state(index_dir)  # from here on the index may be half-updated until the run ends
            likely = resident.likely_changed(wanted_meta, walked.files) if resident else None
            likely = likely_changed(state, wanted_meta, walked.files) if likely is None else likely
            # the writer and the parse workers start before the store opens (a fork must not inherit its
            # handles), and get ready meanwhile
            with _writer_for(likely, repo, settings, embedder, index_dir) as writer, \
                    parse_workers(likely, settings) as pool:
                store = open_store(repo, settings, create=True)
                try:
                    indexed = _run(RunOptions(repo, index_dir, settings, embedder, progress, full, embed, stop,
                                              resident if not settings.qdrant_url else None),
                                   walked.files, store, report, pool, writer)
                finally:
                    store.close()
            if not settings.qdrant_url and not report.chunks_deferred:  # else the next run has phase 2 to do
                write_state(index_dir, wanted_meta, indexed, state_summary(report))
    report.model_loaded = bool(getattr(embedder, "loaded", True))
    report.index_bytes = dir_size(index_dir)
    report.elapsed_seconds = time.perf_counter() - started
    return report


@contextmanager
def _writer_for(likely: Sequence[SourceFile], repo: Path, settings: Settings, embedder: Embedder,
                index_dir: Path) -> Iterator[StoreWriter | None]:
    """A writer process for phase 1's chunks (writer.py) when the run is a big one on an embedded
    index and a second core can take the writes; else None (the run writes them itself)."""
    if not writes_beside(len(likely), settings):
        yield None
        return
    with StoreWriter(repo, settings, CacheKeys(embedder.model_id, embedder.dimension), index_dir, SEAL_CHUNKS) as writer:
        yield writer


# ---- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOptions:
    """What index_repo asks of one run, fixed before it starts; every stage of the run reads it."""

    repo: Path
    index_dir: Path
    settings: Settings
    embedder: Embedder
    progress: ProgressCallback
    full: bool = False  # re-derive every file (vectors still come from the embedding cache)
    embed: bool = True  # False: stop after phase 1
    stop: threading.Event | None = None  # once set, phase 2 ends after the batch it is embedding
    resident: ResidentIndex | None = None  # what a long-lived process keeps between its runs (resident.py)


@dataclass
class Phase1:
    """What phase 1 leaves for the commit: every file's parse and the resolved graph (dropped before phase 2)."""

    parsed: list[ParsedFile]
    update: GraphUpdate
    written: Written | None  # what a writer process stored; None: the run stored the chunks itself
    chunks_stored: int = 0  # chunks this process stored (a writer counts its own)


def _run(run: RunOptions, files: list[SourceFile], store: Store, report: IndexReport,
         pool: ProcessPoolExecutor | None = None, writer: StoreWriter | None = None) -> list[SourceFile]:
    """One run on the open store: the fingerprint check, the write-ahead, phase 1, its commit, then phase 2.
    Returns `files` as the index now holds them: with the hash of the bytes parsed, where a file changed
    after the walk (parse_pool._parse_and_chunk), so that state.json never vouches for bytes not parsed."""
    run_started = time.perf_counter()
    meta, wanted_meta = _check_fingerprint(run, store, report)
    manifest = store.manifest()
    current = {f.path: f for f in files}
    changed = [f for f in files if f.path not in manifest or manifest[f.path].sha256 != f.sha256]
    deleted = sorted(set(manifest) - set(current))
    report.files_changed, report.files_deleted = len(changed), len(deleted)
    report.files_unchanged = len(files) - len(changed)
    fingerprint = parse_fingerprint(wanted_meta)
    resident = run.resident
    warm = resident is not None and bool(meta) and not meta.get("graph_dirty") and resident.usable(manifest, fingerprint)
    if not changed and not deleted and meta and not meta.get("graph_dirty"):
        if resident is not None and not warm:  # an up-to-date index: the watcher's first save is quick too
            with closing(ParseCache(run.index_dir / "parsed.sqlite")) as parses, \
                    closing(GraphState(run.index_dir / GRAPH_STATE_FILE)) as graph_state:
                resident.warm(parses, graph_state, fingerprint, wanted_meta, files)
        _report_unchanged(run, store, manifest, meta, report)
        return files
    known = (resident.parses, resident.complete, resident.graphs, resident.twins) if warm else None
    if resident is not None:
        resident.forget()  # until this run's commit
    _write_ahead(run, store, meta, wanted_meta, manifest, changed, deleted)
    parse_cache = ParseCache(run.index_dir / "parsed.sqlite")
    # what each file's resolution read last time, so that only what a change can move is resolved
    # again (embedded mode: a server's references may be written by other machines too)
    previous = known[2:] if known is not None else None
    if previous is None and not run.settings.qdrant_url and meta and not meta.get("graph_dirty"):
        with closing(GraphState(run.index_dir / GRAPH_STATE_FILE)) as state:
            previous = state.load(fingerprint)
    cache = EmbeddingCache(run.index_dir / "embeddings.sqlite")
    try:
        phase1 = _phase1(run, files, changed, store, cache, parse_cache, fingerprint, previous, report, pool, writer,
                         known)
        as_parsed = {pf.file.path: pf.file for pf in phase1.parsed}
        # an unchanged file parsed again for the references alone (its parse not cached) and edited since
        # the walk: its stored chunks are of the bytes the manifest names, its references of others; redone next run
        moved = {f.path for f in files if as_parsed.get(f.path, f).sha256 != f.sha256} - {f.path for f in changed}
        if moved:
            store.mark_pending(sorted(moved))
        files = [as_parsed.get(f.path, f) for f in files]
        report.partial = sorted((pf.file.path, pf.error) for pf in phase1.parsed if pf.error)
        report.files_by_language = dict(Counter(pf.file.language or "text" for pf in phase1.parsed))
        # final: only the references are written after this (a writer counted them: loading the chunks here
        # would add them to the resolution's memory, not yet handed back)
        report.chunks = phase1.written.total_chunks if phase1.written is not None else store.count_chunks()
        pending = pending_files(store.manifest())
        report.chunks_deferred = sum(e.chunks for e in pending)
        optimize = phase1.written is None and not (run.embed and pending)  # a writer optimized
        if optimize and resident is not None:  # a small run leaves the store's segments as they are
            optimize = resident.optimize_due(phase1.chunks_stored)
        _commit_graph(run, files, store, wanted_meta, report, phase1, len(changed), fingerprint, optimize)
        if resident is not None:
            resident.keep(fingerprint, wanted_meta, files, phase1.parsed, phase1.update.complete, phase1.update.graphs,
                          phase1.update.twins)
        del phase1  # phase 2 needs none of it
        report.searchable_seconds = time.perf_counter() - run_started
        if run.embed and pending:
            run.progress("searchable", report.chunks, report.chunks_deferred)
            _fill_dense(run, store, cache, report)
        if report.chunks_embedded:
            cache.prune(keep=max(EMBED_CACHE_MIN, EMBED_CACHE_FACTOR * report.chunks))
    finally:
        cache.close()
    return files


def _check_fingerprint(run: RunOptions, store: Store, report: IndexReport) -> tuple[dict, dict]:
    """The stored meta and the one this run writes. An index built by another model or with another
    fingerprint (or any, with `full`) is dropped first, and the report says why: (`{}`, wanted) then."""
    embedder = run.embedder
    meta = store.read_meta()
    if embedder.dimension == 0:  # an endpoint whose size we learn from one call
        embedder.encode(["dimension probe"])
    wanted_meta = index_meta(embedder, run.settings)
    stale_model = bool(meta) and any(meta.get(k) != wanted_meta[k] for k in VECTOR_META_KEYS if wanted_meta[k])
    stale = stale_fingerprint(meta, wanted_meta) if meta else []
    if run.full or stale_model or stale:
        if stale_model:
            report.notes.append(f"The index was embedded with {meta.get('model_id')}; rebuilt with {embedder.model_id}.")
        elif stale and not run.full:
            report.notes.append(f"The index was built with {', '.join(FINGERPRINT_WORDS[k] for k in stale)}; "
                                "re-derived every file (vectors from the embedding cache).")
        store.drop_all()  # vectors from two models, or graphs from two query sets, must never mix
        meta = {}
    store.ensure_schema(embedder.dimension)
    return meta, wanted_meta


def _report_unchanged(run: RunOptions, store: Store, manifest: dict, meta: dict, report: IndexReport) -> None:
    """No file changed since the last complete phase 1: the report from the meta, and phase 2 if any is left."""
    report.symbols = meta.get("symbols", 0)
    report.references = meta.get("references", 0)
    report.references_by_confidence = meta.get("references_by_confidence", {})
    report.files_by_language = dict(Counter(e.language or "text" for e in manifest.values()))
    report.chunks = store.count_chunks()
    report.partial = sorted((p, e.reason or e.status) for p, e in manifest.items() if e.status == "partial")
    report.chunks_deferred = sum(e.chunks for e in pending_files(manifest))
    report.nothing_to_do = not (run.embed and report.chunks_deferred)
    if not report.nothing_to_do:  # only phase 2 is left: an earlier run deferred it or was stopped in it
        with closing(EmbeddingCache(run.index_dir / "embeddings.sqlite")) as cache:
            _fill_dense(run, store, cache, report)


def _write_ahead(run: RunOptions, store: Store, meta: dict, wanted_meta: dict, manifest: dict,
                 changed: list[SourceFile], deleted: list[str]) -> None:
    """Every file this run touches is pending before any of its points changes (a killed run's next redoes it)."""
    store.write_meta({**meta, **wanted_meta, "graph_dirty": True, "repo": str(run.repo)}, publish=False)
    touched = deleted + [f.path for f in changed]
    stale_paths = [p for p in touched if p in manifest]
    run.progress("delete", 0, len(stale_paths))
    store.mark_pending(touched)
    store.delete_files(stale_paths)
    store.delete_manifest(deleted)
    run.progress("delete", len(stale_paths), len(stale_paths))


def _phase1(run: RunOptions, files: list[SourceFile], changed: list[SourceFile], store: Store,
            cache: EmbeddingCache, parse_cache: ParseCache, fingerprint: str, previous, report: IndexReport,
            pool: ProcessPoolExecutor | None, writer: StoreWriter | None, known: tuple | None = None) -> Phase1:
    """Phase 1: chunks with their BM25 vectors (and dense ones where the embedding cache has them) are
    stored batch by batch as files are parsed, a file's manifest entry getting its hash last; references
    are resolved and staged in the store as they come. Closes `parse_cache`."""
    progress = run.progress
    stored = [0, 0]  # files and chunks stored (by this process; a writer counts its own)
    sealer = Sealer(store, SEAL_CHUNKS)
    if writer is not None:  # it writes the chunks from here on: what this process wrote is on disk, let go
        store.flush()
        store.release()
        writer.start()

    def store_batch(batch: list) -> None:
        if writer is not None:
            writer.add([packed for _, packed in batch])
            progress("store", writer.stored, len(changed))
            return
        report.chunks_embedded += store_chunks(store, run.embedder, cache, batch)
        stored[0] += len(batch)
        stored[1] += sum(len(chunks) for _, chunks in batch)
        sealer.stored(sum(len(chunks) for _, chunks in batch))  # a big phase 1 seals its segment as it grows
        progress("store", stored[0], len(changed))

    def parse_done() -> None:
        if writer is not None:
            writer.end_input()  # it ends once it has stored the rest, and its memory goes with it
        else:
            sealer.done()  # a big run lets the shard go: it is not in memory while references are resolved

    def step(stage: str, done: int, total: int) -> None:
        progress(stage, done, total)
        if writer is not None and stage == "resolve":  # the writer stores meanwhile
            progress("store", writer.stored, len(changed))

    staged: list[Reference] = []

    def stage(references: list[Reference]) -> None:  # into the store as they are resolved, not all at the end
        staged.extend(references)
        if len(staged) >= STAGE_REFERENCES:
            store.stage_references(staged)
            staged.clear()

    try:
        graph_started = time.perf_counter()
        _, parsed, update = graph_stage(changed, files, run.settings, parse_cache, fingerprint, pool, step, previous,
                                        on_parsed=store_batch, on_resolved=stage, on_parse_done=parse_done,
                                        pack=writer is not None, known=known[0] if known else None,
                                        known_complete=known[1] if known else (),
                                        tables=run.resident.tables if run.resident is not None else None)
        store.stage_references(staged)
        written = None
        if writer is not None:
            written = writer.finish(lambda n: progress("store", n, len(changed)))
            report.chunks_embedded += written.chunks_embedded
            progress("store", len(changed), len(changed))
        report.graph_seconds = time.perf_counter() - graph_started  # parse + chunk + resolve + chunk writes
        parse_cache.prune({parse_cache.key(f, fingerprint) for f in files})
    finally:
        parse_cache.close()
    return Phase1(parsed, update, written, stored[1])


def _commit_graph(run: RunOptions, files: list[SourceFile], store: Store, wanted_meta: dict, report: IndexReport,
                  phase1: Phase1, changed: int, fingerprint: str, optimize: bool) -> None:
    """The references, then the meta that makes the run's phase 1 the index readers see."""
    progress, parsed, update = run.progress, phase1.parsed, phase1.update
    progress("references", 0, 1)
    graph_state = None if run.settings.qdrant_url else GraphState(run.index_dir / GRAPH_STATE_FILE)
    try:
        if graph_state is not None:
            graph_state.begin()  # until finish(), the stored references are no run's: the next resolves all
        store.replace_references(update.references, update.paths)
        if optimize:
            store.optimize()  # before the meta that readers reload on: they load the reorganised segments
        report.graph_files_per_second = changed / report.graph_seconds if report.graph_seconds > 0 else 0.0
        report.symbols = sum(len(pf.symbols) for pf in parsed)
        report.references = sum(g.references for g in update.graphs.values())
        by_confidence: Counter[str] = Counter()
        used: Counter[str] = Counter()
        for g in update.graphs.values():
            by_confidence.update(dict(g.by_confidence))
            used.update(dict(g.used))
        report.references_by_confidence = dict(by_confidence)
        store.write_meta({**store.read_meta(), **wanted_meta, "graph_dirty": False, "repo": str(run.repo),
                          "last_indexed": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          "files": len(files), "symbols": report.symbols, "references": report.references,
                          "references_by_confidence": report.references_by_confidence, "chunks": report.chunks,
                          "chunks_embedded": report.chunks - report.chunks_deferred,
                          "most_used": heapq.nsmallest(MOST_USED, used, key=lambda n: (-used[n], n))})
        store.flush()
        progress("references", 1, 1)
        if graph_state is not None:
            graph_state.finish(update.graphs, update.resolved, update.twins, fingerprint)
    finally:
        if graph_state is not None:
            graph_state.close()


def _fill_dense(run: RunOptions, store: Store, cache: EmbeddingCache, report: IndexReport) -> None:
    """Phase 2 (dense.py), then the meta that says how far semantic search has come."""
    embedder, progress = run.embedder, run.progress

    def load_model() -> float:  # before the first text the cache lacks: with every vector cached, never
        if not hasattr(embedder, "load") or getattr(embedder, "loaded", False):
            return 0.0
        t = time.perf_counter()
        progress("model", 0, 1)
        embedder.load()
        progress("model", 1, 1)
        return time.perf_counter() - t  # timed apart from encoding so chunks/s means encoding speed

    def publish(pending: int) -> None:
        meta = store.read_meta()
        store.write_meta({**meta, "chunks_embedded": int(meta.get("chunks") or report.chunks) - pending})

    dense = fill_dense(store, embedder, cache, run.settings.embedding_batch_size, progress, publish, load_model,
                       run.stop, DENSE_SEAL_CHUNKS)
    report.chunks_embedded += dense.chunks_embedded
    report.chunks_embedded_phase2 += dense.chunks_embedded
    report.chunks_encoded += dense.chunks_encoded
    report.chunks_deferred = dense.pending_chunks
    report.embedding_seconds = dense.encode_seconds
    report.chunks_per_second = dense.chunks_encoded / dense.encode_seconds if dense.encode_seconds > 0 else 0.0
    # a stopped run leaves it to the one that completes phase 2: stopping stays quick; a watcher's small runs
    # leave the store's segments as they are
    if not dense.pending_chunks and (run.resident is None or run.resident.optimize_due(dense.chunks_embedded)):
        store.optimize()  # before the meta that readers reload on: they load the reorganised segments
    store.write_meta(after_phase2(store.read_meta(), report.chunks, dense.pending_chunks))
    store.flush()
