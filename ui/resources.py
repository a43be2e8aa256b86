"""The page's cached resources, shared by every rerun and browser session of one server process.

    load_embedder / embedder_for   the embedding model, one per embeddings setting (loads its weights on first use)
    open_index / index_of          the open index of a repository: a SharedRetriever the sessions take turns on
    cached_status                  index_status, computed at most once a minute (it hashes every file)
    live_sync                      `codeqa ui --watch`: a watcher per repository in use, at most WATCHED_AT_ONCE
    release_index                  drops one repository's open index and status, so the next rerun reopens it

Other processes may read and write the same index meanwhile: the Retriever notices a finished run on its
next question.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable

import streamlit as st

from codeqa import embed
from codeqa.config import Settings
from codeqa.indexing.index import IndexStatus, index_status
from codeqa.query.retrieve import Retriever
from codeqa.query.shared_reader import SharedRetriever

log = logging.getLogger("codeqa.ui")


@st.cache_resource(show_spinner=False)
def load_embedder(spec: str, adapter: str, base_url: str | None, _api_key: str | None, concurrency: int, timeout: float,
                  settings_named: tuple[str, str], onnx_cache: str | None = None):
    """The embedding model, built once per embeddings setting; it loads its weights on first use."""
    # looked up on the module at each call, not imported by name: this module is imported once per process
    return embed.make_embedder(spec, adapter, base_url, _api_key, concurrency=concurrency, timeout=timeout,
                               settings_named=settings_named, onnx_cache=Path(onnx_cache) if onnx_cache else None)


def embedder_for(settings: Settings):
    end = settings.embeddings_endpoint
    return load_embedder(settings.embeddings, settings.embedding_adapter, end.base_url, end.api_key,
                         settings.embedding_concurrency, settings.embedding_timeout, (end.url_setting, end.key_setting),
                         str(settings.onnx_cache) if settings.onnx_cache else None)


@st.cache_resource(show_spinner="Opening the index…", on_release=lambda shared: shared.retire())
def open_index(repo: str, index_dir: str | None, qdrant_url: str | None, _settings: Settings) -> SharedRetriever:
    """The open index of `repo`, shared by all sessions, which take turns on it; reopened after re-indexing (the
    old one is closed when the last session using it is done)."""
    return SharedRetriever(Retriever.open(Path(repo), _settings, embedder=embedder_for(_settings)))


@st.cache_data(ttl=60, show_spinner=False)
def cached_status(repo: str, index_dir: str | None, last_indexed: str | None, _retriever: Retriever) -> IndexStatus:
    """Hashing every file to find the changed ones costs a walk; once a minute is enough."""
    return index_status(Path(repo), _retriever.settings, _retriever.store)


def index_of(repo: Path, base: Settings) -> SharedRetriever:
    return open_index(str(repo), str(base.index_dir or ""), base.qdrant_url, base)


def release_index(repo: Path, base: Settings, last_indexed: str | None) -> None:
    """Before `repo` is re-indexed: its open index is retired (closed once no session is using it) and its
    status forgotten; the other repositories' stay open for the sessions asking about them."""
    open_index.clear(str(repo), str(base.index_dir or ""), base.qdrant_url, base)  # on_release retires it
    cached_status.clear(str(repo), str(base.index_dir or ""), last_indexed, None)


WATCHED_AT_ONCE = 4  # `--any-repo --watch`: each watcher holds an observer thread and its OS watches


class Watchers:
    """A watcher per repository in use, at most `limit` at once: the least recently used one stops to make
    room (a repository typed once and left would otherwise be watched for the server's life)."""

    def __init__(self, start: Callable[[str], object], limit: int = WATCHED_AT_ONCE):
        self._start = start
        self.limit = limit
        self._live: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def watch(self, repo: str) -> str | None:
        """Keeps `repo` watched; returns the repository whose watcher stopped to make room, if one did."""
        with self._lock:
            if repo in self._live:
                self._live.move_to_end(repo)
                return None
            evicted = self._live.popitem(last=False) if len(self._live) >= self.limit else None
            self._live[repo] = self._start(repo)
        if evicted is None:
            return None
        evicted[1].stop(wait=0)  # a run in progress ends on its own; the next run of that repository completes it
        return evicted[0]

    def watched(self) -> list[str]:
        with self._lock:
            return list(self._live)

    def stop(self) -> None:
        with self._lock:
            live, self._live = list(self._live.values()), OrderedDict()
        for watcher in live:
            watcher.stop()


@st.cache_resource(show_spinner=False, on_release=lambda watchers: watchers.stop())
def _watchers(_settings: Settings) -> Watchers:
    from codeqa.indexing.watch import RepoWatcher

    def start(repo: str):
        def failed(exc: Exception) -> None:
            log.warning("live sync of %s: %s", repo, exc)

        return RepoWatcher(Path(repo), _settings, embedder=embedder_for(_settings), on_error=failed).start()

    return Watchers(start, WATCHED_AT_ONCE)


def live_sync(repo: Path, base: Settings) -> str | None:
    """`codeqa ui --watch`: `repo` is watched while sessions use it; its runs reach every session through the
    index (an open retriever sees a finished run on its next question). Returns the repository whose watcher
    stopped to make room, if one did."""
    return _watchers(base).watch(str(repo))
