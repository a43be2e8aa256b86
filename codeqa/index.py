"""index_repo(): the one place where the indexing stages are wired together.

    walk (files) -> parse (parse) -> chunk (chunk) -> embed (embed) -> store (store)
                              \\-> resolve references against the whole project (graph) -> store

References are resolved again for the files whose last resolution read something that changed
(graph/incremental.py, with what each file read kept in `resolved.sqlite`), and only their stored
references are replaced; the result equals resolving every file.

Incremental by content hash: unchanged files are not touched, deleted files are removed, and a
run with nothing to do never loads the embedding model, nor even opens the store (embedded mode): a
complete run leaves `state.json` (the hashes it indexed, its summary) and the next run compares
the walk with it.

The index records a fingerprint (codeqa version, a hash of queries/, chunk settings, the model):
when it differs, the run re-derives every file, taking vectors from the embedding cache, and says so.
An index built by the previous engine (qdrant-client's local mode) is rebuilt once the same way.

Crash safety (SIGKILL at any moment, then re-run = a clean index, no duplicates):
- `state.json` is removed before the first write of a run and written after its last one;
- a file's manifest entry is set to "pending" before any of its points is written or deleted, and
  to its hash only after its chunks and symbols are in; a pending entry never matches a file, so
  the next run deletes whatever the file has and re-does it (point ids are deterministic);
- a `graph_dirty` flag in the meta point makes the next run re-resolve references, all of them, and
  so does `resolved.sqlite` marked incomplete from the first reference write to the end of a run;
- dropping the index starts with the meta and manifest, and a run that finds points without them
  drops them (store.ensure_schema).
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Collection, Iterator, Sequence

from .chunk import NestingTooDeep, chunk_embedding_text, chunk_file
from .config import Settings
from .embed import Embedder, EmbeddingCache, make_embedder
from .errors import IndexLockedError
from .files import read_source_text, redact_source, walk_repository
from .fingerprint import FINGERPRINT_WORDS, FINGERPRINT_KEYS, VECTOR_META_KEYS, index_meta, stale_fingerprint
from .graph import GraphIndex
from .graph.incremental import FileGraph, GraphState, files_to_resolve, summarize
from .graph.resolve import resolve_by_file
from .parse import parse_source, prepare_language
from .parse_cache import ParseCache, encode_parsed
from .store import INDEX_FORMAT, ManifestEntry, Store, dir_size, open_store
from .types import Chunk, ParsedFile, Reference, SkippedFile, SourceFile

# Below these many changed files, starting worker processes costs more than it saves: a forked
# worker starts in milliseconds (it inherits the imported modules); a spawned one imports everything
# and compiles its queries first (~0.4 s), so it only pays on big projects.
PARALLEL_PARSE_MIN_FILES = {"fork": 48, "spawn": 400}
PARSE_JOBS_PER_TASK = 2
FILE_BATCH = 64
# The embedding cache keeps the vectors most recently written or read, this many times the index's
# chunks (at least EMBED_CACHE_MIN): enough for a few branches' worth of changes, not years of churn.
EMBED_CACHE_FACTOR = 4
EMBED_CACHE_MIN = 20_000
GRAPH_STATE_FILE = "resolved.sqlite"  # graph/incremental.py's GraphState
MOST_USED = 5  # names in the meta's most_used (the UI's example questions)

ProgressCallback = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class IndexReport:
    repo: str
    index_dir: str
    files_total: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    files_changed: int = 0
    files_deleted: int = 0
    files_unchanged: int = 0
    symbols: int = 0
    references: int = 0
    references_by_confidence: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    chunks_embedded: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    partial: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): parsed with errors / failed
    graph_seconds: float = 0.0
    graph_files_per_second: float = 0.0
    embedding_seconds: float = 0.0
    chunks_per_second: float = 0.0
    elapsed_seconds: float = 0.0
    index_bytes: int = 0
    model_loaded: bool = False
    model_id: str = ""
    nothing_to_do: bool = False
    notes: list[str] = field(default_factory=list)  # one line each: a rebuild and why

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped))

    def to_dict(self) -> dict:
        return {
            "repo": self.repo, "index_dir": self.index_dir, "files": self.files_total,
            "files_by_language": self.files_by_language, "files_changed": self.files_changed,
            "files_deleted": self.files_deleted, "files_unchanged": self.files_unchanged,
            "symbols": self.symbols, "references": self.references,
            "references_by_confidence": self.references_by_confidence, "chunks": self.chunks,
            "chunks_embedded": self.chunks_embedded,
            "skipped": [{"path": s.path, "reason": s.reason, **({"detail": s.detail} if s.detail else {})} for s in self.skipped],
            "skipped_by_reason": self.skipped_by_reason,
            "partial": [{"path": p, "reason": r} for p, r in self.partial],
            "graph_seconds": round(self.graph_seconds, 3), "graph_files_per_second": round(self.graph_files_per_second, 1),
            "embedding_seconds": round(self.embedding_seconds, 3), "chunks_per_second": round(self.chunks_per_second, 1),
            "elapsed_seconds": round(self.elapsed_seconds, 3), "index_bytes": self.index_bytes,
            "model_loaded": self.model_loaded, "model_id": self.model_id, "nothing_to_do": self.nothing_to_do,
            "notes": list(self.notes),
        }


@contextmanager
def index_lock(index_dir: Path) -> Iterator[None]:
    """One writer per index: a second `codeqa index` is refused, not interleaved."""
    index_dir.mkdir(parents=True, exist_ok=True)
    handle = open(index_dir / "index.lock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise IndexLockedError(f"Another `codeqa index` is running on {index_dir}; wait for it to finish and run again.")
    try:
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


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
                       changed=changed, deleted=deleted)


def index_repo(repo: Path, settings: Settings | None = None, full: bool = False,
               progress: ProgressCallback | None = None, embedder: Embedder | None = None) -> IndexReport:
    settings = settings or Settings.load()
    started = time.perf_counter()
    repo = Path(repo)
    walked = walk_repository(repo, settings.files_max_bytes)  # raises for a missing repo before anything is created
    repo = repo.resolve()
    index_dir = settings.index_dir_for(repo)
    report = IndexReport(repo=str(repo), index_dir=str(index_dir), skipped=walked.skipped)
    report.files_total = len(walked.files)
    report.files_by_language = dict(Counter(f.language or "text" for f in walked.files))
    embedder = embedder or make_embedder(settings.embeddings, settings.embedding_adapter, settings.openai_base_url, settings.openai_api_key)
    report.model_id = embedder.model_id
    progress = progress or (lambda stage, done, total: None)
    with index_lock(index_dir):
        wanted_meta = index_meta(embedder, settings)
        if not settings.qdrant_url:
            report.notes.extend(_migrate_legacy_index(repo, index_dir, settings))
        state = None if full or settings.qdrant_url else _read_state(index_dir)
        if state is not None and (index_dir / "graph.sqlite").is_file() and _state_is_current(state, wanted_meta, walked.files):
            _report_from_state(report, state)  # nothing to do, and no need to open the store to know it
        else:
            _remove_state(index_dir)  # from here on the index may be half-updated until the run ends
            # parse workers start before the store opens, and get ready meanwhile
            with parse_workers(_likely_changed(state, wanted_meta, walked.files), settings) as pool:
                store = open_store(repo, settings, create=True)
                try:
                    _run(repo, index_dir, settings, walked.files, store, embedder, full, progress, report, pool)
                finally:
                    store.close()
            if not settings.qdrant_url:
                _write_state(index_dir, wanted_meta, walked.files, report)
    report.model_loaded = bool(getattr(embedder, "loaded", True))
    report.index_bytes = dir_size(index_dir)
    report.elapsed_seconds = time.perf_counter() - started
    return report


# ---- the previous engine's index ----------------------------------------------------------------

def _migrate_legacy_index(repo: Path, index_dir: Path, settings: Settings) -> list[str]:
    """An index of the previous engine (qdrant-client's local mode: `qdrant/`, a pickled parse cache in
    `parsed/`), in the index folder or in `<repo>/.codeqa` where it used to live by default. Its
    embedding cache is plain SQLite (text hash -> float32 bytes, checked when read), so the new index
    is built from it without embedding again; its pickles are never opened. Returns the line to show."""
    if (index_dir / "graph.sqlite").exists():
        return []
    for old in dict.fromkeys([index_dir] + ([] if settings.index_dir else [repo / ".codeqa"])):
        if not (old / "qdrant").is_dir():
            continue
        old_cache, new_cache = old / "embeddings.sqlite", index_dir / "embeddings.sqlite"
        if old != index_dir and old_cache.is_file() and not new_cache.exists():
            index_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(old_cache, new_cache)
        if old == index_dir:  # the dead parts go; the embedding cache stays where it is
            shutil.rmtree(old / "qdrant", ignore_errors=True)
            shutil.rmtree(old / "parsed", ignore_errors=True)
            (old / STATE_FILE).unlink(missing_ok=True)
            return [f"Rebuilt the index in {old}, made by codeqa's previous engine, with Qdrant Edge "
                    "from its embedding cache (nothing re-embedded)."]
        return [f"Rebuilt the index of codeqa's previous engine from {old} in {index_dir} from its embedding "
                f"cache (nothing re-embedded); indexes now live outside the repository, so {old} can be deleted."]
    return []


# ---- state.json: what the last complete run indexed -----------------------------------------

STATE_FILE = "state.json"
STATE_VERSION = 1


def _read_state(index_dir: Path) -> dict | None:
    try:
        state = json.loads((index_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and state.get("version") == STATE_VERSION else None


def _same_index_meta(state: dict | None, wanted_meta: dict) -> bool:
    """Whether state.json's run used this model and fingerprint (else every file is derived again)."""
    meta = (state or {}).get("meta") or {}
    return (state is not None and state.get("index_format") == INDEX_FORMAT
            and all(meta.get(k) == wanted_meta[k] for k in (*VECTOR_META_KEYS, *FINGERPRINT_KEYS)))


def _state_is_current(state: dict, wanted_meta: dict, files: Sequence[SourceFile]) -> bool:
    return _same_index_meta(state, wanted_meta) and state.get("files") == {f.path: f.sha256 for f in files}


def _likely_changed(state: dict | None, wanted_meta: dict, files: Sequence[SourceFile]) -> list[SourceFile]:
    """The files this run will probably parse, told from state.json before the store is open: all of
    them without a state or after a model or chunker change. (The manifest has the last word.)"""
    if not _same_index_meta(state, wanted_meta):
        return list(files)
    known = state.get("files") or {}
    return [f for f in files if known.get(f.path) != f.sha256]


def _report_from_state(report: IndexReport, state: dict) -> None:
    summary = state.get("summary") or {}
    report.nothing_to_do = True
    report.files_unchanged = report.files_total
    report.symbols = summary.get("symbols", 0)
    report.references = summary.get("references", 0)
    report.references_by_confidence = summary.get("references_by_confidence", {})
    report.chunks = summary.get("chunks", 0)
    report.partial = [tuple(item) for item in summary.get("partial", [])]


def _write_state(index_dir: Path, wanted_meta: dict, files: Sequence[SourceFile], report: IndexReport) -> None:
    state = {"version": STATE_VERSION, "index_format": INDEX_FORMAT, "meta": wanted_meta,
             "files": {f.path: f.sha256 for f in files},
             "summary": {"symbols": report.symbols, "references": report.references, "chunks": report.chunks,
                         "references_by_confidence": report.references_by_confidence,
                         "partial": [list(item) for item in report.partial]}}
    tmp = index_dir / (STATE_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(index_dir / STATE_FILE)


def _remove_state(index_dir: Path) -> None:
    try:
        (index_dir / STATE_FILE).unlink()
    except FileNotFoundError:
        return
    fd = os.open(index_dir, os.O_RDONLY)  # the removal is on disk before the first write of the run
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---- the run ---------------------------------------------------------------------------------

def _run(repo: Path, index_dir: Path, settings: Settings, files: list[SourceFile], store: Store,
         embedder: Embedder, full: bool, progress: ProgressCallback, report: IndexReport,
         pool: ProcessPoolExecutor | None = None) -> None:
    meta = store.read_meta()
    if embedder.dimension == 0:  # an endpoint whose size we learn from one call
        embedder.encode(["dimension probe"])
    wanted_meta = index_meta(embedder, settings)
    stale_model = bool(meta) and any(meta.get(k) != wanted_meta[k] for k in VECTOR_META_KEYS if wanted_meta[k])
    stale = stale_fingerprint(meta, wanted_meta) if meta else []
    if full or stale_model or stale:
        if stale_model:
            report.notes.append(f"The index was embedded with {meta.get('model_id')}; rebuilt with {embedder.model_id}.")
        elif stale and not full:
            report.notes.append(f"The index was built with {', '.join(FINGERPRINT_WORDS[k] for k in stale)}; "
                                "re-derived every file (vectors from the embedding cache).")
        store.drop_all()  # vectors from two models, or graphs from two query sets, must never mix
        meta = {}
    store.ensure_schema(embedder.dimension)
    manifest = store.manifest()
    current = {f.path: f for f in files}
    changed = [f for f in files if f.path not in manifest or manifest[f.path].sha256 != f.sha256]
    deleted = sorted(set(manifest) - set(current))
    report.files_changed, report.files_deleted = len(changed), len(deleted)
    report.files_unchanged = len(files) - len(changed)
    if not changed and not deleted and meta and not meta.get("graph_dirty"):
        report.nothing_to_do = True
        report.symbols = meta.get("symbols", 0)
        report.references = meta.get("references", 0)
        report.references_by_confidence = meta.get("references_by_confidence", {})
        report.chunks = store.count_chunks()
        report.partial = sorted((p, e.reason or e.status) for p, e in manifest.items() if e.status == "partial")
        return
    store.write_meta({**meta, **wanted_meta, "graph_dirty": True, "repo": str(repo)}, publish=False)
    # write-ahead: every file this run touches is pending before any of its points changes
    touched = deleted + [f.path for f in changed]
    stale_paths = [p for p in touched if p in manifest]
    progress("delete", 0, len(stale_paths))
    store.mark_pending(touched)
    store.delete_files(stale_paths)
    store.delete_manifest(deleted)
    progress("delete", len(stale_paths), len(stale_paths))

    fingerprint = parse_fingerprint(wanted_meta)
    parse_cache = ParseCache(index_dir / "parsed.sqlite")
    # what each file's resolution read last time, so that only what a change can move is resolved
    # again (embedded mode: a server's references may be written by other machines too)
    previous = None
    if not settings.qdrant_url and meta and not meta.get("graph_dirty"):
        with closing(GraphState(index_dir / GRAPH_STATE_FILE)) as state:
            previous = state.load(fingerprint)
    try:
        graph_started = time.perf_counter()
        fresh, parsed, update = graph_stage(changed, files, settings, parse_cache, fingerprint, pool, progress, previous)
        report.graph_seconds = time.perf_counter() - graph_started  # parse + chunk + resolve, not the writes
        parse_cache.prune({parse_cache.key(f, fingerprint) for f in files})
    finally:
        parse_cache.close()
    report.partial = sorted((pf.file.path, pf.error) for pf in parsed if pf.error)
    # embed + store, file batch by file batch; a file's manifest entry gets its hash last
    total_chunks = sum(len(c) for _, c in fresh.values())
    cache = EmbeddingCache(index_dir / "embeddings.sqlite")
    embedded = 0
    embed_seconds = load_seconds = 0.0

    def load_model() -> None:  # before the first text the cache lacks: with every vector cached, never
        nonlocal load_seconds
        if hasattr(embedder, "load") and not getattr(embedder, "loaded", False):
            t = time.perf_counter()
            progress("model", 0, 1)
            embedder.load()
            progress("model", 1, 1)
            load_seconds += time.perf_counter() - t  # timed apart from encoding so chunks/s means encoding speed

    try:
        batch_files = [fresh[f.path] for f in changed]
        for start in range(0, len(batch_files), FILE_BATCH):
            group = batch_files[start:start + FILE_BATCH]
            chunks = [c for _, cs in group for c in cs]
            by_id = {s.id: s for pf, _ in group for s in pf.symbols}
            texts = [chunk_embedding_text(c, by_id) for c in chunks]
            t0 = time.perf_counter()
            vectors = _embed_with_cache(embedder, cache, texts, settings.embedding_batch_size,
                                        lambda n: progress("embed", embedded + n, total_chunks), load_model)
            embed_seconds += time.perf_counter() - t0
            embedded += len(chunks)
            report.chunks_embedded += len(chunks)
            progress("store", start, len(batch_files))
            store.upsert_chunks(chunks, vectors, texts)
            store.upsert_symbols([s for pf, _ in group for s in pf.symbols])
            store.flush()  # the points are on disk before the entries that vouch for them
            store.put_manifest([ManifestEntry(pf.file.path, pf.file.sha256, pf.file.language, len(cs), len(pf.symbols),
                                              "partial" if pf.error else ("ok" if pf.file.language else "text"), pf.error or "")
                                for pf, cs in group])
            progress("store", min(start + FILE_BATCH, len(batch_files)), len(batch_files))
        report.chunks = store.count_chunks()  # final: only the references are written after this
        if embedded:
            cache.prune(keep=max(EMBED_CACHE_MIN, EMBED_CACHE_FACTOR * report.chunks))
    finally:
        cache.close()
    embed_seconds -= load_seconds
    report.embedding_seconds = embed_seconds
    report.chunks_per_second = embedded / embed_seconds if embed_seconds > 0 else 0.0

    progress("references", 0, 1)
    graph_state = None if settings.qdrant_url else GraphState(index_dir / GRAPH_STATE_FILE)
    try:
        if graph_state is not None:
            graph_state.begin()  # until finish(), the stored references are no run's: the next resolves all
        store.replace_references(update.references, update.paths)
        store.optimize()  # before the meta that readers reload on: they load the reorganised segments
        progress("references", 1, 1)
        report.graph_files_per_second = len(changed) / report.graph_seconds if report.graph_seconds > 0 else 0.0
        report.symbols = sum(len(pf.symbols) for pf in parsed)
        report.references = sum(g.references for g in update.graphs.values())
        by_confidence: Counter[str] = Counter()
        used: Counter[str] = Counter()
        for g in update.graphs.values():
            by_confidence.update(dict(g.by_confidence))
            used.update(dict(g.used))
        report.references_by_confidence = dict(by_confidence)
        store.write_meta({**store.read_meta(), **wanted_meta, "graph_dirty": False, "repo": str(repo),
                          "last_indexed": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          "files": len(files), "symbols": report.symbols, "references": report.references,
                          "references_by_confidence": report.references_by_confidence, "chunks": report.chunks,
                          "most_used": sorted(used, key=lambda n: (-used[n], n))[:MOST_USED]})
        store.flush()
        if graph_state is not None:
            graph_state.finish(update.graphs, update.resolved, update.twins, fingerprint)
    finally:
        if graph_state is not None:
            graph_state.close()


def parse_fingerprint(meta: dict) -> str:
    """What a cached parse depends on besides the file: the codeqa version, queries and chunker."""
    return "\0".join(str(meta[k]) for k in ("codeqa_version", "queries_hash", "chunker_version"))


@dataclass(frozen=True)
class GraphUpdate:
    """What the graph stage changes in the stored references, and every file's FileGraph."""

    references: list[Reference]  # the resolved references of the files resolved
    paths: set[str] | None  # the files whose stored references `references` replace; None: all
    resolved: list[str] | None  # the files resolved; None: all
    graphs: dict[str, FileGraph]
    twins: dict[str, tuple[str, ...]]


def graph_stage(changed: list[SourceFile], files: Sequence[SourceFile], settings: Settings, cache: ParseCache,
                fingerprint: str, pool: ProcessPoolExecutor | None = None, progress: ProgressCallback | None = None,
                previous: tuple[dict[str, FileGraph], dict[str, tuple[str, ...]]] | None = None) -> tuple[dict[str, tuple[ParsedFile, list[Chunk]]], list[ParsedFile], GraphUpdate]:
    """Parse + chunk the changed files (in worker processes when there are many; `pool` shut down
    after), take the others' parses from the cache, and resolve references: a change in one file can
    retarget references in others, so with the last run's FileGraphs and twins (`previous`, from
    GraphState.load) the files whose resolution read something that changed are resolved again
    (graph/incremental.py), without them all files.
    Returns the changed files' (parse, chunks) by path, every file's parse in `files` order (with the
    last run's state, of the files not resolved again only the references that resolving others
    reads), and the references to store."""
    progress = progress or (lambda stage, done, total: None)
    fresh: dict[str, tuple[ParsedFile, list[Chunk]]] = {}
    progress("parse", 0, len(changed))
    # the stage makes tens of thousands of small objects (parse results, references): garbage
    # collections mid-way would walk the whole growing heap again and again
    fresh_parse: set[str] = set()  # parsed here, not taken from the cache
    with _gc_paused():
        written: list[tuple[SourceFile, bytes]] = []
        for done, (pf, chunks, blob) in enumerate(_parse_and_chunk_all(changed, settings, pool), start=1):
            fresh[pf.file.path] = (pf, chunks)
            written.append((pf.file, blob))
            if len(written) >= FILE_BATCH:
                cache.put_many(written, fingerprint)
                written = []
            progress("parse", done, len(changed))
        cache.put_many(written, fingerprint)
        if pool is not None:
            pool.shutdown()  # idle workers would hold memory through the embedding
        # with the last run's state most files' own references are not resolved again: of those, only
        # what resolving the others reads is decoded, the rest once it turns out to be needed
        light = previous is not None
        cached = cache.get_many([f for f in files if f.path not in fresh], fingerprint, all_references=not light)
        parsed: list[ParsedFile] = []
        for f in files:
            if f.path in fresh:
                parsed.append(fresh[f.path][0])
            elif f.path in cached:
                parsed.append(cached[f.path])
            else:  # not cached (a cache from before, or pruned): parse it again
                pf, _, blob = _parse_chunk_encode((f, settings.chunk_max_chars, settings.chunk_min_chars))
                cache.put_many([(f, blob)], fingerprint)
                parsed.append(pf)
                fresh_parse.add(f.path)
        index = GraphIndex.build(parsed)
        graphs_before: dict[str, FileGraph] = {}
        only = twins_before = None
        if previous is not None:
            graphs_before, twins_before = previous
            current = {f.path: f for f in files}
            before = [SourceFile(p, Path(), g.language or None, 0, g.sha256) for p, g in graphs_before.items()
                      if p not in current or current[p].sha256 != g.sha256]
            only = files_to_resolve(graphs_before, parsed, cache.get_many(before, fingerprint), index)
        complete = set(fresh) | fresh_parse if light else {f.path for f in files}
        resolution = resolve_by_file(parsed, index, only, twins_before if only is not None else None,
                                     lambda paths: _complete_parses(paths, parsed, complete, cache, fingerprint, settings))
    references = [r for refs in resolution.references.values() for r in refs]
    graphs = summarize(parsed, resolution, index, graphs_before)
    if resolution.complete:
        return fresh, parsed, GraphUpdate(references, None, None, graphs, resolution.twins)
    resolved = list(resolution.references)
    paths = set(resolved) | (set(graphs_before) - set(graphs))
    return fresh, parsed, GraphUpdate(references, paths, resolved, graphs, resolution.twins)


def _complete_parses(paths: Collection[str], parsed: Sequence[ParsedFile], complete: Collection[str],
                     cache: ParseCache, fingerprint: str, settings: Settings) -> dict[str, ParsedFile]:
    """The parses of `paths` with all their references, where `parsed` has part of them (ParseCache
    get_many(all_references=False)); those in `complete` have them all already."""
    by_path = {pf.file.path: pf for pf in parsed}
    out = {p: by_path[p] for p in paths if p in complete}
    need = [by_path[p].file for p in paths if p not in complete]
    found = cache.get_many(need, fingerprint)
    for f in need:  # gone from the cache meanwhile: parsed again
        out[f.path] = found.get(f.path) or _parse_and_chunk((f, settings.chunk_max_chars, settings.chunk_min_chars))[0]
    return out


_gc_lock = threading.Lock()
_gc_pauses = 0  # graph stages running now, in any thread
_gc_was_enabled = True  # the collector's state before the first of them


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The garbage collector off while graph stages run, then as the process had it.

    Collections mid-stage walk the whole growing heap of parse results again and again: on
    SQLAlchemy's sources (939 files, 178k references) parse + resolve took 41 s of CPU with the
    collector on, 28 s with it off (34 s when freezing the results instead). The collector is one per
    process, so other threads' cycles wait for the end of the stage too (nothing is lost, only
    freed later). Stages in several threads share one pause: the last to finish restores the state
    the first one found."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _embed_with_cache(embedder: Embedder, cache: EmbeddingCache, texts: Sequence[str], batch_size: int,
                      on_progress: Callable[[int], None], before_encoding: Callable[[], None] = lambda: None):
    import numpy as np

    found = cache.get_many(embedder.model_id, texts)
    if embedder.dimension:  # a cache is data from disk: a vector of another size is not used
        found = {k: v for k, v in found.items() if v.shape == (embedder.dimension,) and np.isfinite(v).all()}
    missing = list(dict.fromkeys(t for t in texts if cache.key(t) not in found))
    if missing:
        before_encoding()
    step = max(batch_size * 4, 1)
    for start in range(0, len(missing), step):
        part = missing[start:start + step]
        vectors = embedder.encode(part, batch_size=batch_size)
        cache.put_many(embedder.model_id, part, vectors)
        found.update((cache.key(t), v) for t, v in zip(part, vectors))
        on_progress(min(start + step, len(missing)) + (len(texts) - len(missing)))
    on_progress(len(texts))
    return np.stack([found[cache.key(t)] for t in texts]) if texts else np.zeros((0, embedder.dimension), dtype="float32")


def _parse_and_chunk(job: tuple[SourceFile, int, int]) -> tuple[ParsedFile, list[Chunk]]:
    file, max_chars, min_chars = job
    try:
        text = redact_source(read_source_text(file.abs_path))  # credentials never reach symbols, chunks or vectors
    except (OSError, UnicodeDecodeError) as exc:
        return ParsedFile(file, (), (), error=f"unreadable: {exc}"), []
    parsed, tree = parse_source(file, text)
    try:
        chunks = chunk_file(file, text, tree, parsed.symbols, max_chars, min_chars)
    except Exception as exc:  # too deep, or a chunker bug on one file: it must not end the run
        reason = str(exc) if isinstance(exc, NestingTooDeep) else f"chunking failed ({type(exc).__name__}: {exc})"
        chunks = chunk_file(file, text, None, (), max_chars, min_chars)
        parsed = ParsedFile(file, parsed.symbols, parsed.references, error=f"{reason}; used line windows")
    return parsed, chunks


def _parse_chunk_encode(job: tuple[SourceFile, int, int]) -> tuple[ParsedFile, list[Chunk], bytes]:
    """One changed file: its parse, chunks, and the parse as the cache stores it (plain JSON).
    A worker encodes, so the parent only writes the bytes."""
    parsed, chunks = _parse_and_chunk(job)
    return parsed, chunks, encode_parsed(parsed)


def _parse_and_chunk_all(files: list[SourceFile], settings: Settings, pool: ProcessPoolExecutor | None = None
                         ) -> Iterator[tuple[ParsedFile, list[Chunk], bytes]]:
    """Parse and chunk `files`: in `pool` (see parse_workers) when given, in workers started now when
    there are enough files, else in order here. Workers take the biggest files first, and results
    come back in that order.

    A worker pool that breaks (a worker killed, out of memory) costs nothing but time: the files it
    had not returned are parsed here.
    """
    if pool is None and _worker_count(files, settings) > 1:
        with parse_workers(files, settings) as own:
            yield from _parse_and_chunk_all(files, settings, own)
        return
    jobs = [(f, settings.chunk_max_chars, settings.chunk_min_chars) for f in files]
    if pool is None:
        yield from map(_parse_chunk_encode, jobs)
        return
    jobs.sort(key=lambda job: -job[0].size)  # no worker is left with a big file at the end while the other idles
    done = 0
    try:
        for result in pool.map(_parse_chunk_encode, jobs, chunksize=PARSE_JOBS_PER_TASK):
            yield result
            done += 1
    except BrokenProcessPool:
        yield from map(_parse_chunk_encode, jobs[done:])


def _worker_count(files: Sequence[SourceFile], settings: Settings) -> int:
    """How many parse workers `files` are worth: 1 (parse here) below PARALLEL_PARSE_MIN_FILES."""
    workers = min(settings.parse_workers or min(os.cpu_count() or 1, 8), len(files))
    return workers if len(files) >= PARALLEL_PARSE_MIN_FILES[_start_method()] else 1


def _start_method() -> str:
    return "fork" if sys.platform.startswith("linux") else "spawn"


@contextmanager
def parse_workers(files: Sequence[SourceFile], settings: Settings) -> Iterator[ProcessPoolExecutor | None]:
    """Parse worker processes for `files`, started now (None when too few files are expected).

    An index run starts them before it opens the store, so that each worker builds the parsers and
    compiles the queries (~0.1 s for a big query set) while the parent opens Qdrant, instead of on
    the way of the parse. Linux forks them (they start in milliseconds, every module imported);
    other systems spawn them. The pool is shut down on leaving, or earlier by its user.
    """
    import multiprocessing

    workers = _worker_count(files, settings)
    if workers < 2:
        yield None
        return
    counts = Counter(f.language for f in files if f.language)
    # languages most files share are prepared in every worker; one a single file has is left to
    # the worker that meets it
    languages = tuple(sorted(lang for lang, count in counts.items() if count > 1))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(), languages),
                               mp_context=multiprocessing.get_context(_start_method()))
    try:
        # frozen, the parent's objects are left alone by the workers' garbage collections (and their
        # pages stay shared); a caller that froze objects itself (a pre-forking server) keeps them frozen
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        try:
            with warnings.catch_warnings():  # 3.12+ warns about forking a threaded process: see _start_worker
                warnings.simplefilter("ignore", DeprecationWarning)
                for _ in range(workers):
                    pool.submit(int)  # a forking pool starts all its workers at the first task: now
        finally:
            if freeze:
                gc.unfreeze()
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(parent: int, languages: Sequence[str] = ()) -> None:
    """A parse worker dies with the index run that started it: killed mid-run (Ctrl-C, SIGKILL), the
    run must not leave workers behind holding its lock and output pipes. A forked worker has a copy of
    the parent's stdout/stderr objects whose locks another thread (the progress display's) may have held
    at the fork: it never writes to them, not even the flush at exit. Then it prepares `languages`."""
    sys.stdout = sys.stderr = open(os.devnull, "w")
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    for language in languages:
        try:
            prepare_language(language)
        except Exception:  # a grammar that fails to load: each of its files reports that when parsed
            pass
