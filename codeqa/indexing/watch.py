"""Live sync: re-index a repository within seconds of a save.

A filesystem observer (watchdog: inotify, FSEvents, ReadDirectoryChangesW, or polling where none
works) marks the repository dirty on any change outside `.git`, the index folder and the folders a
walk never enters; a worker thread waits until nothing has changed for `debounce` seconds and runs
an incremental `index_repo`. That run walks with the repository's `.gitignore` and `.codeqaignore`
rules, so a change to an ignored file costs a no-change run (well under a second: no model, no
store). A run that finds another writer at work (`codeqa index`, the UI's button) waits for its lock
to be released, trying the lock ten times a second rather than walking and hashing the repository
again every quiet spell, and then runs: the other run may predate the change.

The watcher's process keeps what its last run ended with (resident.py): the runs consider again only
the paths the events named (a whole walk after a folder event or now and then), take the parses and
resolution state from memory rather than the index's caches, and optimize the store only once enough
has been written. A save of one file is then searchable in a second or two on a project of a thousand
files, where a one-shot `codeqa index` takes several.

Beside the MCP server the runs go through the server's own BackgroundIndexer (`index`): a save then
stops the background embedding that the server's reindex started, rather than meeting its index lock
for hours, and the embedding starts again after the save's phase 1.

The watcher reports through callbacks and never prints: `codeqa watch`, the MCP server and the UI
decide what to show.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from ..config import Settings
from ..embed import Embedder, embedder_from_settings
from ..errors import CodeQAError, IndexLockedError
from .prune import is_junk
from .index import IndexReport, index_repo
from .resident import ResidentIndex
from .writer_lock import wait_for_writer

# the events of one save arrive within milliseconds of each other; a run of one saved file now takes a
# second or two (resident.py), so waiting a full second more was half of what a save cost
DEBOUNCE_SECONDS = 0.3
CHANGES = frozenset({"created", "modified", "deleted", "moved", "closed"})  # watchdog's event types that change a file


class RepoWatcher:
    """Keeps one repository's index fresh while it runs. Use as a context manager, or start()/stop()."""

    def __init__(self, repo: Path, settings: Settings, embedder: Embedder | None = None,
                 on_report: Callable[[IndexReport], None] | None = None,
                 on_error: Callable[[Exception], None] | None = None, debounce: float = DEBOUNCE_SECONDS,
                 index: Callable[[], IndexReport] | None = None, resident: ResidentIndex | None = None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        # one embedder for every run: the model loads at the first change that needs it, once
        self.embedder = embedder or embedder_from_settings(settings)
        # told every path the events name; with `index`, that of the runs it makes (BackgroundIndexer.resident)
        self.resident = resident if resident is not None else ResidentIndex()
        # one run after a save: both phases, or the runs of the server it keeps fresh (BackgroundIndexer.update)
        self.index = index or (lambda: index_repo(self.repo, self.settings, embedder=self.embedder,
                                                  resident=self.resident))
        self.on_report = on_report or (lambda report: None)
        self.on_error = on_error or (lambda exc: None)
        self.debounce = debounce
        self.runs = 0
        self._index_dir = settings.index_dir_for(self.repo).resolve()
        self._changed = threading.Condition()
        self._last_change: float | None = None
        self._stopping = False
        self._observer = None
        self._worker: threading.Thread | None = None

    def start(self) -> "RepoWatcher":
        from watchdog.observers import Observer

        self.resident.follow_events()  # before the observer starts: no event is missed
        self._observer = Observer()
        self._observer.schedule(_Events(self), str(self.repo), recursive=True)
        self._observer.start()
        self._worker = threading.Thread(target=self._run, name="codeqa-watch", daemon=True)
        self._worker.start()
        return self

    def stop(self, wait: float = 60.0) -> bool:
        """Stop watching; an index run in progress gets `wait` seconds to finish. False when it is still
        running (its thread is a daemon: a run cut off at exit is completed by the next index run, like
        one killed at any point)."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=min(wait, 5))
        if self._worker is not None:
            self._worker.join(timeout=wait)
            return not self._worker.is_alive()
        return True

    def __enter__(self) -> "RepoWatcher":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def touched(self, path: str, folder: bool = False) -> None:
        """A change at `path` (absolute; `folder`: a folder created, moved or deleted): marks the repository
        dirty unless the path is never indexed."""
        target = Path(path).resolve()  # one resolve per event: the observer sends many
        try:
            rel = target.relative_to(self.repo)
        except ValueError:
            return
        if target == self._index_dir or self._index_dir in target.parents:
            return  # the index writing itself (an index folder inside the repository)
        if not rel.parts or any(is_junk(part) for part in rel.parts):
            return
        self.resident.touched(None if folder else [rel.as_posix()])
        self._changed_now()

    def _changed_now(self) -> None:
        with self._changed:
            self._last_change = time.monotonic()
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._stopping and self._last_change is None:
                    self._changed.wait()
                if self._stopping:
                    return
                quiet = time.monotonic() - self._last_change
                if quiet < self.debounce:  # a save often comes as several events: wait for the last
                    self._changed.wait(self.debounce - quiet)
                    continue
                self._last_change = None
            try:
                report = self.index()
            except IndexLockedError:  # another writer: its run may predate the change
                wait_for_writer(self._index_dir, -1, cancel=lambda: self._stopping)  # until it is done, or stop()
                self._changed_now()
                continue
            except CodeQAError as exc:  # an unreachable server, a full disk: say so, try after the next change
                self.on_error(exc)
                continue
            except Exception as exc:  # a bug must not end live sync silently
                self.on_error(exc)
                continue
            self.runs += 1
            self.on_report(report)


class _Events:
    """watchdog's handler interface, forwarding every path an event names."""

    def __init__(self, watcher: RepoWatcher):
        self.watcher = watcher

    def dispatch(self, event) -> None:
        if event.event_type not in CHANGES:
            return  # opening and reading a file (as every index run does) is no change
        if event.is_directory and event.event_type == "modified":
            return  # a folder's own times move with every file in it: the file's event says what changed
        for path in (getattr(event, "src_path", None), getattr(event, "dest_path", None)):
            if path:
                self.watcher.touched(path if isinstance(path, str) else path.decode("utf-8", "surrogateescape"),
                                     folder=event.is_directory)
