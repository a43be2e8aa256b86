"""The graph stage of an index run: parse what changed (or read it from the parse cache), then resolve
references across files, incrementally when the last run's record of what each file read allows it.

    changed files --parse_pool--> ParsedFile + chunks (cached) --graph/--> references by file --> GraphUpdate
"""

from __future__ import annotations

import gc
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping, MutableMapping, Sequence

from ...config import Settings
from . import GraphIndex
from .incremental import FileGraph, file_graph, files_to_resolve, summarize
from .resolve import resolve_by_file
from .tables import FileTables
from ..parse_cache import ParseCache
from ..parse_pool import _parse_and_chunk, _parse_and_chunk_all
from ...types import Chunk, ParsedFile, Reference, SourceFile

FILE_BATCH = 64  # parsed files written to the parse cache at a time
ProgressCallback = Callable[[str, int, int], None]  # (stage, done, total)

def parse_fingerprint(meta: dict) -> str:
    """What a cached parse depends on besides the file: the codeqa version, queries, graph version and chunker."""
    return "\0".join(str(meta[k]) for k in ("codeqa_version", "queries_hash", "graph_version", "chunker_version"))


@dataclass(frozen=True)
class GraphUpdate:
    """What the graph stage changes in the stored references, and every file's FileGraph."""

    references: list[Reference]  # the resolved references of the files resolved (none given to on_resolved)
    paths: set[str] | None  # the files whose stored references `references` replace; None: all
    resolved: list[str] | None  # the files resolved; None: all
    graphs: dict[str, FileGraph]
    twins: dict[str, tuple[str, ...]]
    complete: frozenset[str] = frozenset()  # the files whose parse in the stage's `parsed` has all its references


def graph_stage(changed: list[SourceFile], files: Sequence[SourceFile], settings: Settings, cache: ParseCache,
                fingerprint: str, pool: ProcessPoolExecutor | None = None, progress: ProgressCallback | None = None,
                previous: tuple[dict[str, FileGraph], dict[str, tuple[str, ...]]] | None = None,
                on_parsed: Callable[[list[tuple[ParsedFile, list[Chunk]]]], None] | None = None,
                on_resolved: Callable[[list[Reference]], None] | None = None,
                on_parse_done: Callable[[], None] | None = None, pack: bool = False,
                known: Mapping[str, ParsedFile] | None = None, known_complete: Collection[str] = (),
                tables: MutableMapping[str, tuple[ParsedFile, FileTables]] | None = None,
                ) -> tuple[dict[str, tuple[ParsedFile, list[Chunk]]], list[ParsedFile], GraphUpdate]:
    """Parse + chunk the changed files (in worker processes when there are many; `pool` shut down
    after), take the others' parses from the cache, and resolve references: a change in one file can
    retarget references in others, so with the last run's FileGraphs and twins (`previous`, from
    GraphState.load) the files whose resolution read something that changed are resolved again
    (graph/incremental.py), without them all files.
    Returns the changed files' (parse, chunks) by path, every file's parse in `files` order (with the
    last run's state, of the files not resolved again only the references that resolving others
    reads), and the references to store.

    With `on_parsed`, the changed files' (parse, chunks) go to it batch by batch as they are parsed
    (index.py stores them) and are not returned; only what resolving other files reads stays in
    memory, and the rest of a parse is read back from the cache when its file is resolved: a big
    tree's parses never sit in memory all at once (site-packages, 19k files). With `on_resolved`, each
    resolved file's references go to it (index.py stages them in the store) and the GraphUpdate holds
    none. `on_parse_done()` is called once every changed file went to `on_parsed`, before resolution
    begins. With `pack` (and `on_parsed`), each file's chunks go to `on_parsed` as the bytes of
    writer.pack, for a writer process to store.

    `known` (a long-lived process's last `parsed`, by path: resident.ResidentIndex) stands in for the
    cache for the unchanged files it has with the same hash; those in `known_complete` have all their
    references, the others what ParseCache's all_references=False gives; `tables` goes to resolve_by_file."""
    progress = progress or (lambda stage, done, total: None)
    fresh: dict[str, tuple[ParsedFile, list[Chunk]]] = {}
    kept: dict[str, ParsedFile] = {}  # with on_parsed: the changed files' parses, cut to what others read
    progress("parse", 0, len(changed))
    # the stage makes tens of thousands of small objects (parse results, references): garbage
    # collections mid-way would walk the whole growing heap again and again
    fresh_parse: set[str] = set()  # parsed here, not taken from the cache
    with _gc_paused():
        # one object per string value across the kept parses (site-packages: 1.3 -> 0.9 GB of them, sampled)
        strings: dict = {}
        written: list[tuple[SourceFile, bytes]] = []
        batch: list[tuple[ParsedFile, list[Chunk]]] = []
        for done, (pf, chunks, blob) in enumerate(_parse_and_chunk_all(changed, settings, pool, cut=on_parsed is not None,
                                                                              packed=pack and on_parsed is not None,
                                                                              strings=strings),
                                                         start=1):
            if on_parsed is None:
                fresh[pf.file.path] = (pf, chunks)
            else:  # cut (the whole parse is in its cache entry), kept until resolved
                kept[pf.file.path] = pf
                batch.append((pf, chunks))
            written.append((pf.file, blob))
            if len(written) >= FILE_BATCH:
                cache.put_many(written, fingerprint)  # in the cache before the store: resolving reads it back
                if batch:
                    on_parsed(batch)
                written, batch = [], []
            progress("parse", done, len(changed))
        cache.put_many(written, fingerprint)
        if batch:
            on_parsed(batch)
        del batch, strings
        if pool is not None:
            pool.shutdown()  # idle workers would hold memory through the embedding
        if on_parse_done is not None:
            on_parse_done()
        # with the last run's state most files' own references are not resolved again: of those, only
        # what resolving the others reads is decoded, the rest once it turns out to be needed
        light = previous is not None or on_parsed is not None
        known = known or {}
        rest = [f for f in files if f.path not in fresh and f.path not in kept]
        cached = {f.path: pf for f in rest if (pf := known.get(f.path)) is not None and pf.file.sha256 == f.sha256
                  and (light or f.path in known_complete)}
        cached.update(cache.get_many([f for f in rest if f.path not in cached], fingerprint, all_references=not light))
        # not cached (a cache of another format, or pruned): parsed again, in workers when there are many
        missing = [f for f in files if f.path not in fresh and f.path not in kept and f.path not in cached]
        again: dict[str, ParsedFile] = {}
        written = []
        for pf, _, blob in _parse_and_chunk_all(missing, settings):
            again[pf.file.path] = pf
            written.append((pf.file, blob))
            if len(written) >= FILE_BATCH:
                cache.put_many(written, fingerprint)
                written = []
        cache.put_many(written, fingerprint)
        fresh_parse.update(again)
        parsed = [fresh[f.path][0] if f.path in fresh else kept.get(f.path) or cached.get(f.path) or again[f.path]
                  for f in files]
        index = GraphIndex.build(parsed)
        graphs_before: dict[str, FileGraph] = {}
        only = twins_before = None
        if previous is not None:
            graphs_before, twins_before = previous
            current = {f.path: f for f in files}
            before = [SourceFile(p, Path(), g.language or None, 0, g.sha256) for p, g in graphs_before.items()
                      if p not in current or current[p].sha256 != g.sha256]
            only = files_to_resolve(graphs_before, parsed, cache.get_many(before, fingerprint), index)
        complete = set(fresh) | fresh_parse | (set(known_complete) & cached.keys()) if light else {f.path for f in files}
        by_path = {pf.file.path: pf for pf in parsed}
        made: dict[str, FileGraph] = {}
        shared: dict = {}

        def on_file(path: str, refs: list[Reference], reads: frozenset) -> None:  # reads never all kept at once
            made[path] = file_graph(by_path[path], refs, reads, index.by_id, shared)
            if on_resolved is not None:
                on_resolved(refs)

        resolution = resolve_by_file(parsed, index, only, twins_before if only is not None else None,
                                     lambda paths: _complete_parses(paths, parsed, complete, cache, fingerprint, settings),
                                     lambda done, total: progress("resolve", done, total), on_file,
                                     keep_references=on_resolved is None, tables=tables)
    references = [r for refs in resolution.references.values() for r in refs]
    graphs = summarize(parsed, made, graphs_before)
    if resolution.complete:
        return fresh, parsed, GraphUpdate(references, None, None, graphs, resolution.twins, frozenset(complete))
    resolved = list(resolution.references)
    paths = set(resolved) | (set(graphs_before) - set(graphs))
    return fresh, parsed, GraphUpdate(references, paths, resolved, graphs, resolution.twins, frozenset(complete))


def _complete_parses(paths: Collection[str], parsed: Sequence[ParsedFile], complete: Collection[str],
                     cache: ParseCache, fingerprint: str, settings: Settings) -> dict[str, ParsedFile]:
    """The parses of `paths` with all their references, where `parsed` has part of them (ParseCache
    get_many(all_references=False)); those in `complete` have them all already."""
    by_path = {pf.file.path: pf for pf in parsed}
    out = {p: by_path[p] for p in paths if p in complete}
    need = [by_path[p].file for p in paths if p not in complete]
    found = cache.get_many(need, fingerprint, known=by_path)  # only the references `parsed` lacks are built
    for f in need:  # gone from the cache meanwhile: parsed again
        out[f.path] = found.get(f.path) or _parse_and_chunk((f, settings.chunk_max_chars, settings.chunk_min_chars),
                                                            settings.queries_dir)[0]
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
                _age_young_objects()
                gc.enable()


def _age_young_objects() -> None:
    """Move the objects made while the collector was off to its oldest generation, unexamined.

    With the collector off they all stay in the youngest generation, and the first collection after
    the stage would walk every one of them (the parses, FileGraphs and references the run keeps), then
    walk them again as they age. A freeze and unfreeze moves them to the oldest generation in one step,
    where only a full collection looks at them. Nothing is frozen afterwards; a caller that froze
    objects itself (a pre-forking server) is left as it was."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
