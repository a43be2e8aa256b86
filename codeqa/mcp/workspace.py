"""The MCP tools over a workspace (issue 66): every repository of it served by one process, `codeqa mcp
--workspace NAME`.

Each repository keeps its own RepositoryTools (tools.py: its reader, its index runs), given its name; they
share two embedding models, one that reads (a query is embedded once for every repository, as
query/workspace.py does) and one that indexes. Every tool takes `repository`:

    list_repositories                  each repository: folder, remote, the commit its index reflects, freshness
    search_code, find_references       every repository unless `repository` names one: one ranking by score
                                       (query/workspace.merge), sites grouped by repository; one whose index cannot
                                       be read is listed with why, never skipped silently
    find_symbol, read_code, ask,       one repository: `repository` is required when there are several, and a
    index_status, reindex              missing or unknown one is refused with the names there are

Paths stay relative to their repository, which each result names beside them (`repository`, and `[name]`
in the text), so `read_code(repository=..., path=...)` reads what a hit or a site named. Pages stay under
4 KB as one repository's do (pages.py).
"""

from __future__ import annotations

import inspect
from collections import Counter
from contextlib import contextmanager
from typing import Annotated, Iterator

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from ..config import Settings
from ..embed import embedder_from_settings
from ..query.retrieve import semantic_note
from ..query.workspace import QueryOnce, merge
from ..types import span_label
from ..workspace import Workspace, settings_for
from .pages import LINE_WIDTH, clip, fit_page, page_info, paging_line
from .schemas import reference_site, site_line, tool_result
from .tools import (LISTED_DEFINITIONS, MAX_OFFSET, SEARCH_POOL, ReferenceKind, RepositoryTools, hit_text, matches,
                    references, repositories_page, search_hit)
from .workspace_schemas import (NotSearched, RepositoriesResult, RepositoryAnswerResult, RepositoryCodeLines,
                                RepositoryReindexResult, RepositorySearchHit, RepositorySites, RepositoryStatusResult,
                                RepositorySymbolResult, WorkspaceReferencesResult, WorkspaceSearchResult,
                                workspace_references_text)

Repository = Annotated[str | None, Field(description="the workspace's repository (list_repositories names them)")]
ACROSS = {"search_code", "find_references"}  # the tools that cover every repository when `repository` is left out


class WorkspaceTools:
    """The tools over every repository of `workspace`; close them when the server stops."""

    def __init__(self, workspace: Workspace, settings: Settings):
        self.workspace = workspace
        reading, indexing = QueryOnce(embedder_from_settings(settings)), embedder_from_settings(settings)  # load at first use
        self.repositories = {r.name: RepositoryTools(r.path, settings_for(r, settings), r.name, reading, indexing)
                             for r in workspace.repositories}
        self.names = ", ".join(self.repositories)

    @property
    def indexers(self):
        return [tools.indexer for tools in self.repositories.values()]

    def close(self) -> None:
        for indexer in self.indexers:  # every background embedding stops at once, then each is waited for in turn
            indexer.close(wait=0)
        for tools in self.repositories.values():
            tools.close()

    def description(self, tool: str) -> str:
        """What the agent reads of `tool`: the one-repository tool's description, then how `repository` works here."""
        base = inspect.cleandoc(getattr(RepositoryTools, tool).__doc__ or "")
        if tool == "list_repositories":
            return base.replace("(here one; a server started with --workspace serves several)",
                                f"(workspace {self.workspace.name}: {self.names})")
        if tool in ACROSS:
            how = "Without `repository` it covers every repository of the workspace, and each result names its repository."
        elif len(self.repositories) > 1:
            how = "`repository` is required: which repository of the workspace."
        else:
            how = "`repository` may be left out: the workspace has one repository."
        return f"{base}\n\n{how} Repositories: {self.names}. Paths are relative to their repository."

    # ---- which repository ------------------------------------------------------------------------------
    def _one(self, repository: str | None) -> RepositoryTools:
        if repository is None:
            if len(self.repositories) == 1:
                return next(iter(self.repositories.values()))
            raise ToolError(f"Pass `repository`: this server serves workspace {self.workspace.name}, with "
                            f"{len(self.repositories)} repositories: {self.names} (list_repositories describes each).")
        tools = self.repositories.get(repository)
        if tools is None:
            raise ToolError(f"No repository named {repository!r} in workspace {self.workspace.name}; its repositories: "
                            f"{self.names} (list_repositories describes each).")
        return tools

    def _some(self, repository: str | None) -> list[tuple[str, RepositoryTools]]:
        if repository is None:
            return list(self.repositories.items())
        return [(repository, self._one(repository))]

    # ---- the tools -------------------------------------------------------------------------------------
    def list_repositories(self, offset: Annotated[int, Field(ge=0, description="skip this many repositories (the "
                                                                               "previous page's next_offset)")] = 0,
                          ) -> Annotated[CallToolResult, RepositoriesResult]:
        return repositories_page(self.workspace.name, [tools.info() for tools in self.repositories.values()], offset)

    def search_code(self, query: Annotated[str, Field(min_length=1, description="natural language or identifiers")],
                    repository: Repository = None,
                    limit: Annotated[int, Field(ge=1, le=50)] = 10,
                    path_glob: Annotated[str | None, Field(description="fnmatch pattern on the path, e.g. 'src/*.py'")] = None,
                    language: Annotated[str | None, Field(description="e.g. python, typescript, java")] = None,
                    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="skip this many results (the "
                                                 "previous page's next_offset)")] = 0,
                    ) -> Annotated[CallToolResult, WorkspaceSearchResult]:
        filtered = bool(path_glob or language)
        wanted = offset + limit + 1  # each repository brings at most this many: one past the page
        ranked, shown, coverage, not_searched = [], {}, {}, []
        for name, tools in self._some(repository):
            try:
                with tools.reader.opened() as retriever:
                    coverage[name] = round(retriever.semantic_coverage(), 4)
                    hits = retriever.search(query, top_k=max(wanted * 5, SEARCH_POOL) if filtered else wanted)
                    hits = [h for h in hits if matches(h, path_glob, language)][:wanted]
                    shown.update((id(h), search_hit(retriever, h)) for h in hits)
            except ToolError as exc:
                if repository is not None:
                    raise ToolError(f"[{name}] {exc}") from exc
                not_searched.append(NotSearched(repository=name, reason=clip(str(exc), 2 * LINE_WIDTH)))
                continue
            ranked.append((name, hits))
        if not ranked:
            raise ToolError(f"No repository of workspace {self.workspace.name} could be searched: "
                            + " ".join(f"[{n.repository}] {n.reason}" for n in not_searched))
        found = [RepositorySearchHit(**dict(shown[id(m.hit)]), repository=m.repository)
                 for m in merge(ranked, wanted)[offset:offset + limit + 1]]
        blocks = [hit_text(offset + i, h, f"[{h.repository}] ") for i, h in enumerate(found, 1)]
        notes = [f"[{name}] {note}" for name, c in coverage.items() if (note := semantic_note(c))]
        notes += [f"Not searched: [{n.repository}] {n.reason}" for n in not_searched]
        scope = f" (among the top results with path_glob={path_glob!r} language={language!r})" if filtered else ""
        args = f"repository={repository!r}, " if repository else ""

        def page_of(n: int) -> tuple[str, WorkspaceSearchResult]:
            page = page_info(offset, n, None, more=len(found) > n)
            more = paging_line(page, "results", f"search_code(the same query{' and filters' if filtered else ''}, {args}")
            text = "\n".join(blocks[:n] + ([more] if more else [])) if n else \
                f"No results{scope}{f' past offset {offset}' if offset else ''}. Try other words, or a looser filter."
            return "\n".join([text, *notes]), WorkspaceSearchResult(
                query=query, hits=found[:n], page=page, post_filtered=filtered, repositories=[name for name, _ in ranked],
                not_searched=not_searched, semantic_search=coverage)

        return tool_result(*fit_page(page_of, min(limit, len(found))))

    def find_references(self, symbol: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                        repository: Repository = None,
                        kinds: Annotated[list[ReferenceKind] | None, Field(description="only these kinds of reference")] = None,
                        limit: Annotated[int, Field(ge=1, le=500)] = 50,
                        offset: Annotated[int, Field(ge=0, description="skip this many sites (the previous page's next_offset)")] = 0,
                        ) -> Annotated[CallToolResult, WorkspaceReferencesResult]:
        summaries, records, total = [], [], 0  # records: (repository, site) of this page, in the list's order
        for name, tools in self._some(repository):
            try:
                with tools.reader.opened() as retriever:
                    definitions, refs = references(retriever, symbol, kinds)
                    # this repository's part of the page: its sites come after `total` sites of those before it
                    low, high = (min(max(edge - total, 0), len(refs)) for edge in (offset, offset + limit))
                    records += [(name, r) for r in retriever.graph.records(refs[low:high])]
            except ToolError as exc:
                if repository is not None:
                    raise ToolError(f"[{name}] {exc}") from exc
                summaries.append(RepositorySites(repository=name, definitions=[], definitions_total=0, total=0, by_kind={},
                                                 error=clip(str(exc), 2 * LINE_WIDTH)))
                continue
            total += len(refs)
            summaries.append(RepositorySites(
                repository=name, definitions_total=len(definitions), total=len(refs),
                definitions=[span_label(d.path, d.start_line, d.end_line, full=True) for d in definitions[:LISTED_DEFINITIONS]],
                by_kind=dict(Counter(r.kind for r in refs).most_common())))
        if not any(s.definitions_total for s in summaries):
            if repository is not None:
                raise ToolError(f"[{repository}] {self._one(repository).unknown(symbol)}")
            unread = " ".join(f"Not searched: [{s.repository}] {s.error}" for s in summaries if s.error)
            raise ToolError(f"No symbol named {symbol!r} in any repository of workspace {self.workspace.name} "
                            f"({self.names}). Check the spelling, narrow it as `Class.method` or `path:Name`, or describe "
                            f"it to search_code; if the code is new, call reindex with its repository. {unread}".rstrip())
        blocks = [(f"[{name}] {clip(r.path)}\n" if i == 0 or records[i - 1][0] != name or records[i - 1][1].path != r.path
                   else "") + site_line(reference_site(r)) for i, (name, r) in enumerate(records)]
        call = (f"find_references(symbol={symbol!r}, {f'repository={repository!r}, ' if repository else ''}"
                f"{f'kinds={kinds}, ' if kinds else ''}")

        def page_of(n: int) -> tuple[str, WorkspaceReferencesResult]:
            files: dict[str, dict[str, list]] = {}
            for name, r in records[:n]:
                files.setdefault(name, {}).setdefault(r.path, []).append(reference_site(r))
            result = WorkspaceReferencesResult(symbol=symbol, repositories=summaries, total=total, shown=n, files=files,
                                               page=page_info(offset, n, total))
            return workspace_references_text(result, kinds, blocks[:n], call), result

        return tool_result(*fit_page(page_of, len(records)))

    def find_symbol(self, name: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                    repository: Repository = None,
                    limit: Annotated[int, Field(ge=1, le=200)] = 20,
                    offset: Annotated[int, Field(ge=0, description="skip this many definitions (the previous page's next_offset)")] = 0,
                    ) -> Annotated[CallToolResult, RepositorySymbolResult]:
        tools = self._one(repository)
        with _named_errors(tools.name):
            return tools.find_symbol(name, limit, offset)

    def read_code(self, path: Annotated[str, Field(min_length=1, description="relative to the repository, as the other tools print it")],
                  repository: Repository = None,
                  start_line: Annotated[int, Field(ge=1)] = 1,
                  end_line: Annotated[int | None, Field(ge=1, description="inclusive, the furthest line to read; "
                                                        "default: as many as fit")] = None,
                  ) -> Annotated[CallToolResult, RepositoryCodeLines]:
        tools = self._one(repository)
        with _named_errors(tools.name):
            return tools.read_code(path, start_line, end_line)

    def ask(self, question: Annotated[str, Field(description="a question about the code, e.g. \"How is Foo used?\"")],
            repository: Repository = None,
            offset: Annotated[int, Field(ge=0, description="where the answer goes on (the previous page's next_offset), "
                                         "with the same question")] = 0,
            ctx: Context | None = None) -> Annotated[CallToolResult, RepositoryAnswerResult]:
        tools = self._one(repository)
        with _named_errors(tools.name):
            return tools.ask(question, offset, ctx)

    def index_status(self, repository: Repository = None) -> Annotated[CallToolResult, RepositoryStatusResult]:
        tools = self._one(repository)
        with _named_errors(tools.name):
            return tools.index_status()

    def reindex(self, repository: Repository = None) -> Annotated[CallToolResult, RepositoryReindexResult]:
        tools = self._one(repository)
        with _named_errors(tools.name):
            return tools.reindex()


@contextmanager
def _named_errors(name: str | None) -> Iterator[None]:
    """A tool error of one repository names it first, so the agent knows which one to reindex or fix."""
    try:
        yield
    except ToolError as exc:
        raise ToolError(f"[{name}] {exc}") from exc
