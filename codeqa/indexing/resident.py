"""What a long-lived process keeps between its index runs over one repository (`codeqa watch`, `codeqa
mcp --watch`, the page's watcher), so that a save is searchable within a second or two.

A one-shot `codeqa index` decodes every file's parse from the parse cache, reads every file's FileGraph
from resolved.sqlite, walks and hashes the whole repository, and optimizes the store: on SQLAlchemy's
sources (1,138 files) that was ~5 s of a ~8 s run after one appended function. A watcher's process
already had all of it at the end of its last run, so `index_repo(resident=...)` takes it from here:

- the walk: only the paths the file-system events named are considered again (walk.walk_again);
  a whole walk on the first run, after a folder or ignore-file event, a path the last walk did not
  accept, too many paths, a run nobody told about its paths, or every FULL_WALK_SECONDS;
- the parses (as graph_stage returns them: cut to what resolving others reads, a few whole) and
  the FileGraphs and stub twins the last run ended with, in place of the parse cache and GraphState;
- each file's part of the resolver's tables (graph/tables.py), made again for the changed files only;
- the store is optimized once OPTIMIZE_CHUNKS chunks were written since it last was, not after
  every small run (an appendable segment searches as well, it only holds more memory).

Everything here is used only when it belongs to the index as it is now: the index's manifest must
be exactly the files and hashes the last run of this object committed, with the same parse
fingerprint, no graph_dirty flag and no `full` run asked for. Another writer (`codeqa index`, the
page's button) changes the manifest, or leaves it equal with the very parses and graphs kept here:
parses and resolution depend on the files' content only, and an incremental result equals a clean
one (tests/test_incremental_graph.py). A run that fails or stops part-way leaves nothing usable here
(`forget` before its first write, `keep` after its commit).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Collection, Mapping, Sequence

from .walk import WalkResult, walk_again, walk_repository
from .graph.incremental import FileGraph, GraphState
from .graph.tables import FileTables
from .parse_cache import ParseCache
from ..types import ParsedFile, SourceFile

FULL_WALK_SECONDS = 300.0  # a whole walk at least this often: what an event may have missed (a link's target)
WALK_AGAIN_MAX = 256  # more paths than this at once (a checkout, a formatter over the tree): a whole walk
OPTIMIZE_CHUNKS = 5_000  # chunks written since the last optimize before a run optimizes the store


class ResidentIndex:
    """One repository's walk, parses and resolution state, kept by a long-lived process between its
    index runs (see the module docstring). Its runs take turns (the index's writer lock); a run walks
    before it takes that lock, so walks take turns on this object's own."""

    def __init__(self) -> None:
        self._walk_lock = threading.Lock()  # one walk at a time: each starts from the one before
        self._paths_lock = threading.Lock()  # guards _paths, which the watcher's event thread adds to
        self._events = False  # a watcher reports changes (follow_events)
        self._paths: set[str] | None = None  # changed since the last walk, relative to the repository; None: unknown
        self._walked: WalkResult | None = None
        self._walked_root: Path | None = None
        self._full_walk_at = 0.0
        self.fingerprint: str | None = None  # the parse fingerprint what follows was made with
        self.meta: dict = {}  # index_meta of the run that kept it (likely_changed compares it)
        self.shas: dict[str, str] = {}  # the manifest (path -> sha256) the parses and graphs belong to
        self.parses: dict[str, ParsedFile] = {}
        self.complete: frozenset[str] = frozenset()  # paths whose parse holds all its references
        self.graphs: dict[str, FileGraph] = {}
        self.twins: dict[str, tuple[str, ...]] = {}
        # each file's part of the resolver's tables, by the parse object it was made of (graph/tables.py):
        # valid whatever the index holds, so `forget` keeps it
        self.tables: dict[str, tuple[ParsedFile, FileTables]] = {}
        self.unoptimized_chunks = 0  # written since the store was last optimized (unknown at first: 0)

    # ---- the walk ---------------------------------------------------------------------------
    def follow_events(self) -> None:
        """A watcher reports every change from now on (`touched`): walks may look at those paths only."""
        with self._paths_lock:
            self._events = True

    def touched(self, paths: Collection[str] | None) -> None:
        """Paths (relative to the repository) a file-system event named; None: a change the events
        cannot name (a folder created, moved or deleted, an overflow): the next walk is a whole one."""
        with self._paths_lock:
            if paths is None or self._paths is None:
                self._paths = None
            else:
                self._paths.update(paths)

    def walk(self, repo: Path, max_bytes: int) -> WalkResult:
        """The repository's walk: the last one brought up to date for the paths the events named since
        (walk.walk_again) when that is enough, else a whole walk_repository."""
        with self._walk_lock:
            return self._walk(repo, max_bytes)

    def _walk(self, repo: Path, max_bytes: int) -> WalkResult:
        root = Path(repo).resolve()
        with self._paths_lock:
            paths = self._paths
            self._paths = set() if self._events else None  # from here on, events name what changes
        previous = self._walked if self._walked_root == root else None
        walked = None
        try:
            if (previous is not None and paths is not None and len(paths) <= WALK_AGAIN_MAX
                    and time.monotonic() - self._full_walk_at < FULL_WALK_SECONDS):
                walked = walk_again(root, previous, paths, max_bytes)
            if walked is None:
                walked = walk_repository(repo, max_bytes)
                self._full_walk_at = time.monotonic()
        except BaseException:
            self.touched(None)  # the paths were not looked at
            raise
        self._walked, self._walked_root = walked, root
        return walked

    # ---- parses and resolution ----------------------------------------------------------------
    def usable(self, manifest: Mapping[str, object], fingerprint: str) -> bool:
        """Whether the parses and graphs kept here belong to the index whose manifest (path ->
        ManifestEntry) is `manifest`, read at the start of a run."""
        if self.fingerprint != fingerprint or len(manifest) != len(self.shas):
            return False
        return all(getattr(entry, "sha256", None) == self.shas.get(path) for path, entry in manifest.items())

    def likely_changed(self, wanted_meta: dict, files: Sequence[SourceFile]) -> list[SourceFile] | None:
        """The files a run will probably parse (state.likely_changed, from what is kept here);
        None when nothing is kept for this index."""
        if not self.shas or self.meta != wanted_meta:
            return None
        return [f for f in files if self.shas.get(f.path) != f.sha256]

    def forget(self) -> None:
        """Before a run's first write: until `keep`, nothing here is the index's."""
        self.fingerprint, self.meta, self.shas = None, {}, {}
        self.parses, self.complete, self.graphs, self.twins = {}, frozenset(), {}, {}

    def keep(self, fingerprint: str, wanted_meta: dict, files: Sequence[SourceFile], parsed: Sequence[ParsedFile],
             complete: Collection[str], graphs: Mapping[str, FileGraph], twins: Mapping[str, tuple[str, ...]]) -> None:
        """After a run's commit: the parses and graphs of `files`, as the index now holds them."""
        self.fingerprint, self.meta = fingerprint, dict(wanted_meta)
        self.shas = {f.path: f.sha256 for f in files}
        self.parses = {pf.file.path: pf for pf in parsed}
        self.complete = frozenset(complete)
        self.graphs, self.twins = dict(graphs), dict(twins)

    def warm(self, cache: ParseCache, state: GraphState, fingerprint: str, wanted_meta: dict,
             files: Sequence[SourceFile]) -> None:
        """Take the parses and graphs of an index that a run found up to date (nothing to do) from its
        caches: the first save after a watcher starts is then as quick as the next ones. Left empty
        when the caches lack any of `files`."""
        previous = state.load(fingerprint)
        if previous is None or set(previous[0]) != {f.path for f in files}:
            return
        parses = cache.get_many(files, fingerprint, all_references=False)
        if len(parses) == len(files):
            self.keep(fingerprint, wanted_meta, files, [parses[f.path] for f in files], (), *previous)

    def optimize_due(self, chunks_written: int) -> bool:
        """Count `chunks_written` by a run; True (and the count starts again) once enough have been
        written since the last optimize that the run should optimize the store."""
        self.unoptimized_chunks += chunks_written
        if self.unoptimized_chunks < OPTIMIZE_CHUNKS:
            return False
        self.unoptimized_chunks = 0
        return True


__all__ = ["ResidentIndex", "FULL_WALK_SECONDS", "WALK_AGAIN_MAX", "OPTIMIZE_CHUNKS"]
