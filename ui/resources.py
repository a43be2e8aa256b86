"""The page's cached resources, shared by every rerun and browser session of one server process.

    load_embedder / embedder_for   the embedding model, one per embeddings setting (loads its weights on first use)
    open_index                     the open index of a repository: a SharedRetriever the sessions take turns on
    cached_status                  index_status, computed at most once a minute (it hashes every file)
    live_sync                      `codeqa ui --watch`: one watcher per repository for the server's life
    release_index                  drops the open index, so the next rerun reopens it (after a re-index)

Other processes may read and write the same index meanwhile: the Retriever notices a finished run on its
next question.
"""

from __future__ import annotations

import logging
from pathlib import Path

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


@st.cache_resource(show_spinner=False, on_release=lambda watcher: watcher.stop())
def live_sync(repo: str, _settings: Settings):
    """`codeqa ui --watch`: one watcher per repository for the server's life; its runs reach every session
    through the index (an open retriever sees a finished run on its next question)."""
    from codeqa.indexing.watch import RepoWatcher

    def failed(exc: Exception) -> None:
        log.warning("live sync of %s: %s", repo, exc)

    return RepoWatcher(Path(repo), _settings, embedder=embedder_for(_settings), on_error=failed).start()


def release_index() -> None:
    open_index.clear()  # on_release retires each shared retriever: closed once no session is using it
    cached_status.clear()
