"""Phase 2 in the background: an index run that returns once phase 1 is committed.

    indexer = BackgroundIndexer(repo, settings)
    report = indexer.update()     # phase 1 now: on return search, refs and ask work by keywords and the graph
    indexer.progress()            # EmbeddingProgress: running, stopping, finished, stopped or failed; how far
    indexer.close()               # stops phase 2 after its batch in flight; the next run resumes it

For a process that stays up and must keep answering (the MCP server, its --watch): phase 2 of a big
repository takes hours with the bundled CPU model. update() runs index_repo(embed=False), then starts a
thread that runs index_repo again, which finds only phase 2 left and does it. That thread holds the
index lock, so the next update() from this object stops it first (after the batch it is embedding,
waiting for that batch), runs its own phase 1, and starts phase 2 again: no update waits hours for
the index lock. A stop loses nothing: every batch is committed as it ends and the embedding cache
keeps what was encoded, so whatever runs next (update(), `codeqa index`) takes it from there.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..config import Settings
from ..embed import Embedder, embedder_from_settings
from ..errors import CodeQAError
from .index import IndexReport, index_repo
from .resident import ResidentIndex

# stopping: asked to stop (by an update() or close()), embedding the batch in flight first
EmbeddingState = Literal["running", "stopping", "finished", "stopped", "failed"]


@dataclass(frozen=True)
class EmbeddingProgress:
    """The background phase 2 that an update() started last."""

    state: EmbeddingState
    chunks_embedded: int  # chunks of the index with their dense vector (phase 2 gives them batch by batch)
    chunks: int  # chunks in the index
    error: str | None = None  # why it failed (state "failed")
    seconds: float = 0.0  # since it started, until it ended

    @property
    def share(self) -> float:
        return self.chunks_embedded / self.chunks if self.chunks else 1.0


class BackgroundIndexer:
    """Index runs over one repository from a process that stays up; one object per process and index
    (its update() calls take turns). The embedder is kept for every run: the model loads once."""

    def __init__(self, repo: Path, settings: Settings, embedder: Embedder | None = None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.embedder = embedder or embedder_from_settings(settings)
        # what its runs keep between them (resident.py), once a watcher tells it the saves (watched())
        self.resident: ResidentIndex | None = None
        self._updating = threading.Lock()  # one update() at a time: the tool and the watcher may both call it
        self._state = threading.Lock()  # guards what follows; never held while waiting for a run
        self._thread: threading.Thread | None = None
        self._stop: threading.Event | None = None  # the running thread's; it also names the run its progress is of
        self._progress: EmbeddingProgress | None = None
        self._started = 0.0
        self._closed = False

    def update(self, full: bool = False) -> IndexReport:
        """Bring the index up to date with the files on disk and return when phase 1 is committed; phase 2,
        when chunks wait for their vectors, goes on in a background thread (see progress()). A phase 2 that
        this object started is stopped first, and waited for until its batch in flight is committed."""
        with self._updating:
            self._stop_running(wait=None)  # its index lock must be free for this run
            report = index_repo(self.repo, self.settings, full=full, embedder=self.embedder, embed=False,
                                resident=self.resident)
            if report.chunks_deferred:
                self._start(report)
            return report

    def watched(self) -> ResidentIndex:
        """The ResidentIndex its runs keep from now on, for a watcher to report saves to (`codeqa mcp
        --watch`): the walk, parses and tables stay in memory between runs. Without a watcher nothing is
        kept: a server's runs are rare, and a big project's parses are a lot of memory to hold for them."""
        with self._state:
            if self.resident is None:
                self.resident = ResidentIndex()
            return self.resident

    def progress(self) -> EmbeddingProgress | None:
        """The background phase 2 this object started last (None: none yet)."""
        with self._state:
            progress = self._progress
            if progress is not None and progress.state in ("running", "stopping"):
                progress = replace(progress, seconds=time.monotonic() - self._started)
        return progress

    def wait(self, timeout: float | None = None) -> EmbeddingProgress | None:
        """Wait for the background phase 2 to end (a script, a test); its progress after."""
        with self._state:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.progress()

    def close(self, wait: float | None = 5.0) -> bool:
        """Stop phase 2 after its batch in flight, giving it `wait` seconds; no update() starts another.
        False when it is still busy (a daemon thread: a process that exits then cuts it off like a kill,
        which loses at most that batch; the next run does it)."""
        with self._state:
            self._closed = True
        return self._stop_running(wait)

    def _stop_running(self, wait: float | None) -> bool:
        with self._state:
            thread, stop = self._thread, self._stop
            if thread is None or stop is None:
                return True
            stop.set()
            if self._progress is not None and self._progress.state == "running":
                self._progress = replace(self._progress, state="stopping")
        thread.join(wait)
        return not thread.is_alive()

    def _start(self, report: IndexReport) -> None:
        with self._state:
            if self._closed:
                return
            stop = threading.Event()
            self._progress = EmbeddingProgress("running", report.chunks - report.chunks_deferred, report.chunks)
            self._started = time.monotonic()
            self._stop = stop
            # a daemon: a process that exits while it runs must not wait hours for it (close() stops it first)
            self._thread = threading.Thread(target=self._embed, args=(stop, report.chunks), name="codeqa-embed",
                                            daemon=True)
            self._thread.start()

    def _embed(self, stop: threading.Event, chunks: int) -> None:
        def on_progress(stage: str, done: int, total: int) -> None:
            nonlocal chunks
            if stage == "searchable":  # files changed since update(): this run indexed them first
                chunks = done
            elif stage == "embed":  # `total`: the chunks that waited when this run's phase 2 began
                self._set(stop, chunks_embedded=max(0, chunks - (total - done)), chunks=chunks)

        try:
            report = index_repo(self.repo, self.settings, embedder=self.embedder, progress=on_progress, stop=stop,
                                resident=self.resident)
        except CodeQAError as exc:  # another writer (`codeqa index`), a full disk, an unreachable server
            self._set(stop, state="failed", error=str(exc))
        except Exception as exc:  # a bug must not end the embedding silently
            self._set(stop, state="failed", error=f"{type(exc).__name__}: {exc}")
        else:
            self._set(stop, state="stopped" if report.chunks_deferred else "finished",
                      chunks_embedded=report.chunks - report.chunks_deferred, chunks=report.chunks)

    def _set(self, run: threading.Event, **changes) -> None:
        """Update the progress of `run` (named by its stop event), unless a newer run has replaced it."""
        with self._state:
            if self._progress is not None and self._stop is run:
                if "state" in changes:  # it ended
                    changes["seconds"] = time.monotonic() - self._started
                self._progress = replace(self._progress, **changes)


__all__ = ["BackgroundIndexer", "EmbeddingProgress"]
