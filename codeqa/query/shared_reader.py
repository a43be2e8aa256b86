"""One open index that several threads ask at once: the page's browser sessions.

    shared = SharedRetriever(Retriever.open(repo, settings))
    with shared.held():                      # one session's whole page run: the index stays open
        with shared.turn() as retriever:     # retrieval, one caller at a time
            stream = Answerer(retriever, settings).stream(question)
        for piece in stream: ...             # the model writes; other sessions retrieve meanwhile
    shared.retire()                          # a re-index: closed when the last holder leaves

Contract:
- `turn()` gives the retriever to one caller at a time, refreshed first. The store reloads its shard when a
  run committed since (another process's phase 2, a re-index), and it does so only inside a turn, so no other
  session is mid-search on the shard it closes.
- `held()` keeps the retriever open without excluding anyone: what runs under it alone reads source files and
  the graph (an answer streaming, its citations being checked), never the chunks' shard. A turn is also held.
- `retire()` closes the retriever when the last holder leaves (at once if none): a re-index from one session
  never closes another's reader mid-question. A hold asked of a retriever already closed raises
  IndexReopenedError (the page asks again and gets the new one).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from ..errors import CodeQAError
from .retrieve import Retriever


class IndexReopenedError(CodeQAError):
    """The index was closed for a re-index between finding it and holding it; open it again."""


class SharedRetriever:
    def __init__(self, retriever: Retriever):
        self.retriever = retriever
        self._turn = threading.Lock()
        self._state = threading.Lock()
        self._holders = 0
        self._retired = False
        self._closed = False

    @contextmanager
    def held(self) -> Iterator[Retriever]:
        with self._state:
            if self._closed:
                raise IndexReopenedError(f"The index of {self.retriever.repo} was reopened after a re-index; ask again.")
            self._holders += 1
        try:
            yield self.retriever
        finally:
            with self._state:
                self._holders -= 1
                close = self._retired and self._holders == 0 and not self._closed
                self._closed = self._closed or close
            if close:
                self.retriever.close()

    @contextmanager
    def turn(self) -> Iterator[Retriever]:
        with self.held() as retriever, self._turn:
            retriever.refresh()
            yield retriever

    def retire(self) -> None:
        with self._state:
            self._retired = True
            close = self._holders == 0 and not self._closed
            self._closed = self._closed or close
        if close:
            self.retriever.close()

    @property
    def closed(self) -> bool:
        return self._closed


__all__ = ["SharedRetriever", "IndexReopenedError"]
