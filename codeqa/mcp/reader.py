"""The reader the MCP tools share: one Retriever for the server's life, the turns the tools take on it,
and the paths an agent may read.

It opens on the first call, so `tools/list` works before any index exists, and the embedding model
loads on the first search, not at startup. The SDK runs each tool on a worker thread: calls take turns
(one Retriever and its caches serve them all), and an index run holds the reader closed while it writes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mcp.server.mcpserver.exceptions import ToolError

from ..config import Settings
from ..embed import Embedder
from ..errors import CodeQAError, IndexMismatchError, IndexMissingError
from ..query.retrieve import Retriever
from ..query.source import inside_repository


@contextmanager
def as_tool_errors() -> Iterator[None]:
    """A codeqa error becomes a tool error the agent reads; the ones an index run fixes say to call reindex."""
    try:
        yield
    except (IndexMissingError, IndexMismatchError) as exc:
        raise ToolError(f"{exc} An agent can call the reindex tool to do it.") from exc
    except CodeQAError as exc:
        raise ToolError(str(exc)) from exc


class IndexReader:
    """The one Retriever over `repo`'s index that the tools take turns on; `embedder`, when given, is the one
    it reads with (a workspace's repositories share one model), else the configured model."""

    def __init__(self, repo: Path, settings: Settings, embedder: Embedder | None = None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.embedder = embedder
        self._lock = threading.Lock()
        self._retriever: Retriever | None = None

    @contextmanager
    def opened(self) -> Iterator[Retriever]:
        """The Retriever, opened on first use, for one call; codeqa errors come out as tool errors."""
        with self._lock, as_tool_errors():
            if self._retriever is None:
                self._retriever = Retriever.open(self.repo, self.settings, self.embedder)
            else:  # another process (`codeqa index`, --watch) may have finished a run: no answer from before it
                self._retriever.refresh()
            yield self._retriever

    @contextmanager
    def closed(self) -> Iterator[None]:
        """The reader closed, and every other call waiting, while the index is rewritten; the next call
        opens the new run."""
        with self._lock, as_tool_errors():
            self._drop()
            yield

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None


def indexed_path(retriever: Retriever, path: str) -> str:
    """`path` as the index names it, or a tool error: outside the repository, or not indexed."""
    rel = inside_repository(retriever.repo, path)
    if rel is None:
        raise ToolError(f"{path} is outside the repository {retriever.repo}; pass a path relative to it, "
                        "as search_code and find_symbol print them.")
    if rel not in retriever.indexed_paths:
        raise ToolError(f"{rel} is not in the index of {retriever.repo}: codeqa reads source files it indexed (not "
                        "ignored, secret or binary ones). search_code and find_symbol print indexed paths; a new file "
                        "needs reindex first.")
    return rel
