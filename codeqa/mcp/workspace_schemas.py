"""What the MCP tools return over a workspace (issue 66): list_repositories' entries (also served for one
repository), results that name their `repository` beside repository-relative paths, and the text beside them.

A tool over one repository of a workspace returns the one-repository model with `repository` added (`named`)
and its text after a `[name] ` tag, so `read_code(repository=..., path=...)` reads what a hit or a site named.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field

from .pages import LINE_WIDTH, PageInfo, clip, paging_line
from .schemas import (AnswerResult, CodeLines, ReferenceSite, ReindexResult, SearchHit, StatusResult, SymbolResult)


class InRepository(BaseModel):
    repository: str = Field(description="the workspace's repository the paths are relative to (pass it back as `repository`)")


class RepositorySymbolResult(SymbolResult, InRepository):
    pass


class RepositoryCodeLines(CodeLines, InRepository):
    pass


class RepositoryAnswerResult(AnswerResult, InRepository):
    pass


class RepositoryStatusResult(StatusResult, InRepository):
    pass


class RepositoryReindexResult(ReindexResult, InRepository):
    pass


NAMED: dict[type[BaseModel], type[BaseModel]] = {
    SymbolResult: RepositorySymbolResult, CodeLines: RepositoryCodeLines, AnswerResult: RepositoryAnswerResult,
    StatusResult: RepositoryStatusResult, ReindexResult: RepositoryReindexResult}


def named(name: str, text: str, result: BaseModel) -> tuple[str, BaseModel]:
    """A one-repository page as a workspace serves it: `[name] ` before its text, `repository` in its content."""
    return f"[{name}] {text}", NAMED[type(result)].model_construct(**dict(result), repository=name)


# ---- list_repositories ----------------------------------------------------------------------------

class RepositoryInfo(BaseModel):
    name: str = Field(description="what the other tools' `repository` argument takes")
    path: str = Field(description="the repository's folder")
    remote: str | None = Field(description="its git remote (normalised, no credentials); null when it has none")
    exists: bool = Field(description="false when the folder is gone")
    index: str = Field(description="its index folder, or its name on the Qdrant server")
    indexed: bool = Field(description="an index exists and can be read (search, references and ask work)")
    commit: str | None = Field(description="the git commit the index reflects (its last complete run); null when not "
                                           "known: not in git, not indexed, or a run since that has not completed")
    dirty: bool | None = Field(description="the work tree differed from that commit when it was indexed")
    freshness: str = Field(description="fresh (every file indexed and embedded) | embedding (searchable; some chunks "
                                       "still wait for their dense vectors) | stale (files changed since: reindex) | "
                                       "incomplete (the last run was interrupted) | not indexed | unreadable | "
                                       "missing folder")
    embeddings_complete: bool = Field(description="every chunk has its dense vector (semantic search complete)")
    stale_files: int | None = Field(description="files changed or deleted since the index was built")
    last_indexed: str | None = Field(description="when phase 1 (keywords and the graph) last completed")
    note: str = Field(description="what it means and what to do, in words")


class RepositoriesResult(BaseModel):
    workspace: str | None = Field(description="the workspace served; null for a server of one repository (--repo)")
    repositories: list[RepositoryInfo]
    page: PageInfo


def repositories_text(r: RepositoriesResult) -> str:
    width = max((len(x.name) for x in r.repositories), default=0)
    head = (f"Workspace {r.workspace}: {r.page.total} repositories" if r.workspace is not None
            else "One repository (this server was started with --repo)")
    lines = [head + "; pass a name as `repository` to the other tools."]
    for x in r.repositories:
        commit = ("not indexed" if not x.indexed else "commit unknown" if x.commit is None
                  else x.commit[:12] + ("+dirty" if x.dirty else ""))
        lines.append(f"{x.name:<{width}}  {commit:<16}  {x.freshness:<11}  {clip(x.path)}")  # aligned: clip joins spaces
        lines.append("  " + clip(x.note, 2 * LINE_WIDTH))
    more = paging_line(r.page, "repositories", "list_repositories(")
    return "\n".join(lines + ([more] if more else []))


# ---- search_code and find_references across repositories --------------------------------------

class RepositorySearchHit(SearchHit, InRepository):
    pass


class NotSearched(BaseModel):
    repository: str
    reason: str = Field(description="why its index could not be read, and what to do")


class WorkspaceSearchResult(BaseModel):
    query: str
    hits: list[RepositorySearchHit] = Field(description="every repository's hits in one ranking, by score")
    page: PageInfo = Field(description="where these hits sit in the ranking; next_offset pages on")
    post_filtered: bool = Field(description="path_glob/language applied to the top results after the search")
    repositories: list[str] = Field(description="the repositories searched")
    not_searched: list[NotSearched] = Field(description="repositories left out, each with why (never skipped silently)")
    semantic_search: dict[str, float] = Field(description="each repository's share of chunks with dense vectors")


class RepositorySites(BaseModel):
    repository: str
    definitions: list[str] = Field(description="where the symbol is defined in it (the first 3 locations)")
    definitions_total: int
    total: int = Field(description="its reference sites (every page)")
    by_kind: dict[str, int]
    error: str | None = Field(None, description="why it could not be read (then it was not searched)")


class WorkspaceReferencesResult(BaseModel):
    symbol: str
    repositories: list[RepositorySites] = Field(description="each repository searched, in the workspace's order: its "
                                                            "definitions and count of sites, or why it was not read")
    total: int = Field(description="every matching reference site of every repository")
    shown: int = Field(description="sites on this page")
    files: dict[str, dict[str, list[ReferenceSite]]] = Field(
        description="repository -> path -> its sites on this page, grouped by repository in the workspace's order; "
                    "in each, exact, likely, then name-only sites, each by path and line")
    page: PageInfo = Field(description="which sites these are; next_offset pages on")


def references_head(r: WorkspaceReferencesResult, kinds: Sequence[str] | None) -> list[str]:
    scope = f" of kind {', '.join(kinds)}" if kinds else ""
    defined = [x for x in r.repositories if x.definitions_total]
    lines = [f"{r.symbol}: {r.total} reference(s){scope} in {len(defined)} repositor{'y' if len(defined) == 1 else 'ies'} "
             "that define it (each resolves names within itself)"]
    for x in r.repositories:
        if x.error is not None:
            lines.append(clip(f"[{x.repository}] not searched: {x.error}", 2 * LINE_WIDTH))
        elif not x.definitions_total:
            lines.append(f"[{x.repository}] no symbol named {r.symbol} here")
        else:
            where = ", ".join(x.definitions) + (f" and {x.definitions_total - len(x.definitions)} more"
                                                if x.definitions_total > len(x.definitions) else "")
            kinds_seen = "; " + ", ".join(f"{k} {n}" for k, n in x.by_kind.items()) if x.by_kind else ""
            lines.append(clip(f"[{x.repository}] defined at {where}: {x.total} reference(s){kinds_seen}", 2 * LINE_WIDTH))
    return lines


def workspace_references_text(r: WorkspaceReferencesResult, kinds: Sequence[str] | None, blocks: Sequence[str],
                              call: str) -> str:
    more = paging_line(r.page, "reference sites", call)
    return "\n".join([*references_head(r, kinds), *blocks, *([more] if more else [])])
