"""Search and references across a workspace: one Retriever per repository, one ranking for all.

Each repository is searched in its own index, as alone, for its best `top_k`; the lists are merged by each
hit's own score (equal scores: the workspace's order). Every repository is ranked by the same Searcher and
model, so the scores are on one scale, and a repository's number of hits does not count: each brings at most
`top_k`, and a hit ranks by how well it matches, not by how many others its repository has. Merged by rank
instead (reciprocal-rank fusion), every repository's first hit would tie, however poor: on "how does X work"
questions about one of 5-6 repositories, the gold span was in the top 5 for 10 of 38 questions (dev) and 6 of
20 (held out), against 28 and 14 merged by score, as many as searching the right repository alone
(bench/workspace_search.py --questions).

Every repository's Retriever gets the same embedder, wrapped so that one search embeds its query once
(QueryOnce): embedding the query is most of a small repository's search time.

A repository whose index cannot be opened (none yet, another model, a folder gone) is left out and
reported in `unavailable`, never silently; only when none can be opened is that an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..config import Settings
from ..embed import Embedder, embedder_from_settings
from ..errors import CodeQAError, UsageError
from ..types import Hit
from ..workspace import Workspace, settings_for
from .retrieve import Retriever, lookup_references

@dataclass(frozen=True)
class RepositoryHit:
    """A hit of one repository of a workspace."""

    repository: str
    hit: Hit


@dataclass(frozen=True)
class Unavailable:
    """A repository left out of a workspace query, and why (the message says what to run)."""

    repository: str
    reason: str


def merge(ranked: Sequence[tuple[str, Sequence[Hit]]], top_k: int) -> list[RepositoryHit]:
    """The `top_k` best of several repositories' ranked lists, by score (module docstring); a repository's own
    order is kept."""
    merged = [(hit.score, i, rank, RepositoryHit(name, hit))
              for i, (name, hits) in enumerate(ranked) for rank, hit in enumerate(hits)]
    merged.sort(key=lambda m: (-m[0], m[1], m[2]))
    return [m[3] for m in merged[:top_k]]


class QueryOnce:
    """An embedder that keeps the vectors of the last texts it embedded, so the Retrievers of a workspace, asked
    the same query one after the other, embed it once; everything else is the model's own. An asymmetric
    model's query side (`for_queries`) is kept the same way."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self._last: tuple[tuple[str, ...], object] | None = None
        queries = getattr(inner, "for_queries", None)
        self._queries = QueryOnce(queries()) if callable(queries) else None

    def encode(self, texts, batch_size: int = 64):
        key, last = tuple(texts), self._last  # one read: another thread may replace it meanwhile
        if last is not None and last[0] == key:
            return last[1]
        vectors = self.inner.encode(list(texts), batch_size=batch_size)
        self._last = (key, vectors)
        return vectors

    def for_queries(self) -> "QueryOnce":
        return self._queries or self

    def __getattr__(self, name: str):
        if name == "inner":  # not set yet (a copy being made): no recursion through this method
            raise AttributeError(name)
        return getattr(self.inner, name)


class WorkspaceSearcher:
    """The indexes of a workspace's repositories, open for search. Open with `WorkspaceSearcher.open(...)`;
    use as a context manager. One embedding model serves every repository, and embeds each query once."""

    def __init__(self, workspace: Workspace, retrievers: Sequence[tuple[str, Retriever]],
                 unavailable: Sequence[Unavailable]):
        self.workspace = workspace
        self.retrievers = tuple(retrievers)
        self.unavailable = tuple(unavailable)

    @classmethod
    def open(cls, workspace: Workspace, settings: Settings, embedder: Embedder | None = None) -> "WorkspaceSearcher":
        if not workspace.repositories:
            raise UsageError(f"Workspace {workspace.name!r} has no repositories yet; add one with "
                             f"`codeqa workspace add {workspace.name} PATH`.")
        retrievers: list[tuple[str, Retriever]] = []
        unavailable: list[Unavailable] = []
        shared = QueryOnce(embedder or embedder_from_settings(settings))  # its model loads at its first use
        try:
            for repository in workspace.repositories:
                try:
                    retriever = Retriever.open(repository.path, settings_for(repository, settings), shared)
                except CodeQAError as exc:
                    unavailable.append(Unavailable(repository.name, str(exc)))
                    continue
                retrievers.append((repository.name, retriever))
        except BaseException:
            for _, r in retrievers:
                r.close()
            raise
        if not retrievers:
            raise UsageError(f"No repository of workspace {workspace.name!r} can be searched: "
                             + " ".join(f"{u.repository}: {u.reason}" for u in unavailable))
        return cls(workspace, retrievers, unavailable)

    def __enter__(self) -> "WorkspaceSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for _, retriever in self.retrievers:
            retriever.close()

    def semantic_coverage(self) -> dict[str, float]:
        """Each repository's share of chunks with a dense vector (Retriever.semantic_coverage)."""
        return {name: r.semantic_coverage() for name, r in self.retrievers}

    def search(self, query: str, top_k: int = 10) -> list[RepositoryHit]:
        """The best chunks of every repository for `query`, merged into one ranking, best first."""
        return merge([(name, r.search(query, top_k=top_k)) for name, r in self.retrievers], top_k)


@dataclass(frozen=True)
class RepositoryReferences:
    """`codeqa refs` in one repository of a workspace: lookup_references' record, or why it could not be read."""

    repository: str
    path: str
    found: dict | None
    unavailable: str | None = None


def workspace_references(workspace: Workspace, settings: Settings, spec: str) -> list[RepositoryReferences]:
    """The definitions of `spec` and their reference sites in each repository of the workspace, in its order.
    A repository resolves names within itself: a name it only imports from another is not followed there."""
    out = []
    for repository in workspace.repositories:
        try:
            found = lookup_references(repository.path, settings_for(repository, settings), spec)
        except CodeQAError as exc:
            out.append(RepositoryReferences(repository.name, str(repository.path), None, str(exc)))
            continue
        out.append(RepositoryReferences(repository.name, str(repository.path), found))
    return out


def references_json(spec: str, results: Sequence[RepositoryReferences]) -> dict:
    """The `refs --workspace --json` record: every definition and site with its `repository`, grouped by
    repository in the workspace's order, and what each repository held."""
    definitions, references, repositories, suggestions = [], [], [], []
    for r in results:
        summary = {"repository": r.repository, "path": r.path}
        if r.found is None:
            repositories.append({**summary, "error": r.unavailable})
            continue
        definitions += [{"repository": r.repository, **d} for d in r.found["definitions"]]
        references += [{"repository": r.repository, **x} for x in r.found["references"]]
        suggestions += [s for s in r.found.get("suggestions", []) if s not in suggestions]
        repositories.append({**summary, "definitions": len(r.found["definitions"]),
                             "references": len(r.found["references"])})
    record = {"symbol": spec, "repositories": repositories, "definitions": definitions, "references": references}
    if not definitions:
        record["suggestions"] = suggestions
    return record

