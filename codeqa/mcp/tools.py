"""The seven MCP tools over one repository's index: coding agents search, walk the symbol graph, read code and
ask with cited answers. The server (server.py) registers them; their docstrings are what the agent reads.

Every tool returns compact text for the model and structured content that its output schema
(the pydantic model in its return annotation) describes: one page of under 4 KB, its most useful part
first, with `offset` for the rest (pages.py). What an agent can act on (no index yet,
an index to rebuild, an unknown symbol, a path outside the index) comes back as a tool error
(isError) saying what to do next. The code an agent sees is redacted as the index redacts it: the
agent is a model, and a file's credentials never go into a prompt.

They read through one shared Retriever (reader.py). Over a workspace (workspace.py) each repository has its
own RepositoryTools, given its `name`: its pages then name the repository (workspace_schemas.named) and fit
in 4 KB with it, and its paging hints pass `repository` back.

reindex returns once phase 1 of the run is committed (search by keywords and the graph, references,
ask) and phase 2, the dense vectors, goes on in a thread of the server (indexing/background.py): on a big
repository that is hours with the bundled CPU model, and an agent must not wait for it. index_status
says how far it is. A reindex (or a --watch run) meanwhile stops it after its batch in flight, indexes
what changed and starts it again; the server stopping stops it too. Nothing embedded is lost: each
batch is committed, and the next run (reindex, `codeqa index`) does what is left.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from ..answer import AnswerProgress, Answerer
from ..answer.pace import Pace, about
from ..answer.citation_report import citation_status, describe_citations
from ..config import Settings
from ..embed import Embedder
from ..errors import IndexMissingError
from ..indexing.index import index_status
from ..indexing.background import BackgroundIndexer
from ..indexing.state import indexed_commit
from ..store.identity import git_remote, index_identity
from ..query.retrieve import Retriever, semantic_note
from ..types import Answer, Hit, span_label
from .pages import TEXT_BUDGET, clip, fit_page, page_info, paging_line, size, text_page
from .reader import IndexReader, indexed_path
from .schemas import (AnswerResult, CitationInfo, CodeLines, EvidenceInfo, ReferencesResult, ReindexResult, SearchHit,
                      SearchResult, StatusResult, SymbolResult, answer_text, early_text, embedding_info, reference_sites,
                      references_text, reindex_text, site_blocks,
                      status_text, symbol_info, symbol_text, tool_result)
from .workspace_schemas import RepositoriesResult, RepositoryInfo, named, repositories_text

MAX_READ_LINES = 400  # one read_code call at most (and 4 KB): a long file comes in pieces, not as one flood of context
SEARCH_POOL = 50  # a filtered search keeps what matches among at least this many results
MAX_OFFSET = 450  # how deep search_code pages into its ranking (the searcher ranks offset + limit results)
LISTED_FILES = 10  # changed files and skipped paths named in a status or reindex summary
LISTED_DEFINITIONS = 3  # definitions named beside the reference sites (find_symbol pages through them all)
TOP_FILES = 5  # the busiest files named in a references summary
LISTED_CITATIONS, LISTED_EVIDENCE = 6, 5  # on the first page of an answer
KEPT_ANSWERS = 4  # answers kept for paging with offset (an LLM answer is not asked for twice)
CONFIDENCE_ORDER = {"exact": 0, "likely": 1, "name-only": 2}
# what a stopping server gives the background embedding to finish its batch: under the 2 s an MCP
# client waits for a stdio server to exit before it kills it (a batch cut off is re-done by the next run)
STOP_WAIT_SECONDS = 1.5
ReferenceKind = Literal["call", "instantiation", "type", "import", "inheritance", "attribute"]

class RepositoryTools:
    """The tools over one repository's index. Calls take turns: the SDK runs each on a worker thread,
    and one Retriever (with its caches) serves them all. `name`: the repository's name in a workspace, whose
    repositories share two models, `reading` (searches) and `indexing` (index runs); alone, it has its own."""

    def __init__(self, repo: Path, settings: Settings, name: str | None = None, reading: Embedder | None = None,
                 indexing: Embedder | None = None):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.name = name
        self.reader = IndexReader(self.repo, settings, reading)
        self.indexer = BackgroundIndexer(self.repo, settings, indexing)  # the server's index runs: reindex and --watch
        self.args = "" if name is None else f"repository={name!r}, "  # what a paging hint passes back
        self._answers: dict[str, AnswerResult] = {}  # the last answers by question, for ask's offset
        self.pace = Pace()  # the chat server's speeds, learnt from its answers: later questions say how long they take

    @property
    def indexers(self) -> list[BackgroundIndexer]:
        return [self.indexer]

    def close(self) -> None:
        self.indexer.close(wait=STOP_WAIT_SECONDS)  # not under the reader's lock: a stop must not wait for a call
        self.reader.close()

    def unknown(self, name: str) -> ToolError:
        return ToolError(f"No symbol named {name!r} in the index of {self.repo}. Check the spelling, narrow it as "
                         "`Class.method` or `path:Name`, or describe it to search_code; if the code is new, call reindex.")

    # ---- the tools (their docstrings are what the agent reads) -------------------------------------
    def search_code(self, query: Annotated[str, Field(min_length=1, description="natural language or identifiers")],
                    limit: Annotated[int, Field(ge=1, le=50)] = 10,
                    path_glob: Annotated[str | None, Field(description="fnmatch pattern on the path, e.g. 'src/*.py'")] = None,
                    language: Annotated[str | None, Field(description="e.g. python, typescript, java")] = None,
                    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="skip this many results (the "
                                                 "previous page's next_offset)")] = 0,
                    ) -> Annotated[CallToolResult, SearchResult]:
        """Hybrid search over the code (dense + BM25 + symbol names + one reference hop), best first: each hit
        as path:Lstart-Lend with its symbol, score and why it ranks. path_glob and language filter the top
        results after the search (post-filtering), so a narrow filter may return fewer than `limit`. At most
        `limit` hits and 4 KB a page; `offset` (the page's next_offset) goes on down the ranking."""
        filtered = bool(path_glob or language)
        with self.reader.opened() as retriever:
            coverage = retriever.semantic_coverage()
            wanted = offset + limit + 1  # one past the page: whether a next page has anything
            hits = retriever.search(query, top_k=max(wanted * 5, SEARCH_POOL) if filtered else wanted)
            hits = [h for h in hits if matches(h, path_glob, language)][offset:offset + limit + 1]
            found = [search_hit(retriever, h) for h in hits]
        blocks = [hit_text(offset + i, h) for i, h in enumerate(found, 1)]
        scope = f" (among the top results with path_glob={path_glob!r} language={language!r})" if filtered else ""
        note = semantic_note(coverage)

        def page_of(n: int) -> tuple[str, SearchResult]:
            page = page_info(offset, n, None, more=len(found) > n)
            more = paging_line(page, "results", f"search_code(the same query{' and filters' if filtered else ''}, ")
            text = "\n".join(blocks[:n] + ([more] if more else [])) if n else \
                f"No results{scope}{f' past offset {offset}' if offset else ''}. Try other words, or a looser filter."
            return (f"{text}\n{note}" if note else text,
                    SearchResult(query=query, hits=found[:n], page=page, post_filtered=filtered, semantic_search=round(coverage, 4)))

        return tool_result(*fit_page(page_of, min(limit, len(found))))

    def find_symbol(self, name: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                    limit: Annotated[int, Field(ge=1, le=200)] = 20,
                    offset: Annotated[int, Field(ge=0, description="skip this many definitions (the previous page's next_offset)")] = 0,
                    ) -> Annotated[CallToolResult, SymbolResult]:
        """Where a symbol is defined: qualified name, kind, path:Lstart-Lend, signature and the docstring's first
        line. Every match is counted (the same name may be defined in several files); a page lists at most
        `limit` of them and 4 KB, and `offset` (the page's next_offset) goes on."""
        with self.reader.opened() as retriever:
            symbols = retriever.graph.find_symbols(name)
        if not symbols:
            raise self.unknown(name)
        found = [symbol_info(s) for s in symbols[offset:offset + limit]]
        blocks = [symbol_text(d) for d in found]

        def page_of(n: int) -> tuple[str, SymbolResult]:
            page = page_info(offset, n, len(symbols))
            more = paging_line(page, "definitions", f"find_symbol({self.args}name={name!r}, ")
            text = "\n".join([f"{len(symbols)} definition(s) of {name}:", *blocks[:n], *([more] if more else [])])
            return text, SymbolResult(name=name, definitions=found[:n], page=page)

        return self._page(page_of, len(found))

    def find_references(self, symbol: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                        kinds: Annotated[list[ReferenceKind] | None, Field(description="only these kinds of reference")] = None,
                        limit: Annotated[int, Field(ge=1, le=500)] = 50,
                        offset: Annotated[int, Field(ge=0, description="skip this many sites (the previous page's next_offset)")] = 0,
                        ) -> Annotated[CallToolResult, ReferencesResult]:
        """Every reference site of a symbol from the resolved symbol graph (calls, instantiations, types,
        imports, inheritance, attributes): where it is defined, the sites counted by kind, confidence (exact,
        likely, name-only) and file, then the sites themselves, exact ones first, each with its file, line and
        kind. A page holds at most `limit` sites and 4 KB; `offset` (the page's next_offset) goes on, and
        paging until next_offset is null lists every site once."""
        with self.reader.opened() as retriever:
            definitions, refs = references(retriever, symbol, kinds)
            if not definitions:
                raise self.unknown(symbol)
            records = retriever.graph.records(refs[offset:offset + limit])
        by_file = Counter(r.path for r in refs)
        result = ReferencesResult(
            symbol=symbol, definitions=[symbol_info(s) for s in definitions[:LISTED_DEFINITIONS]],
            definitions_total=len(definitions), total=len(refs), shown=0,
            by_kind=dict(Counter(r.kind for r in refs).most_common()),
            by_confidence={c: n for c in CONFIDENCE_ORDER if (n := sum(r.confidence == c for r in refs))},
            file_count=len(by_file), top_files=dict(by_file.most_common(TOP_FILES)), files={},
            page=page_info(offset, 0, len(refs)))
        blocks = site_blocks(records)

        def page_of(n: int) -> tuple[str, ReferencesResult]:
            page = result.model_copy(update={"shown": n, "page": page_info(offset, n, len(refs)),
                                             "files": reference_sites(records[:n])})
            return references_text(page, kinds, blocks[:n]), page

        return tool_result(*fit_page(page_of, len(records)))

    def read_code(self, path: Annotated[str, Field(min_length=1, description="relative to the repository, as the other tools print it")],
                  start_line: Annotated[int, Field(ge=1)] = 1,
                  end_line: Annotated[int | None, Field(ge=1, description="inclusive, the furthest line to read; "
                                                        "default: as many as fit")] = None,
                  ) -> Annotated[CallToolResult, CodeLines]:
        """Lines of an indexed file, numbered, credentials redacted as the index holds them: from start_line
        as many as fit in 4 KB (and up to end_line). When lines are left, the answer says the start_line
        of the next read (next_start_line). Only files in the index can be read."""
        with self.reader.opened() as retriever:
            rel = indexed_path(retriever, path)
            lines = retriever.source.redacted_lines(rel)
        if lines is None:
            raise ToolError(f"{rel} could not be read; it may have been deleted or moved since the index was built: call reindex.")
        if start_line > len(lines):
            raise ToolError(f"{rel} has {len(lines)} lines; start_line {start_line} is past its end.")
        end = min(len(lines), end_line or start_line + MAX_READ_LINES - 1, start_line + MAX_READ_LINES - 1)
        if end < start_line:
            raise ToolError(f"end_line {end_line} is before start_line {start_line}.")
        width = len(str(end))

        def page_of(n: int) -> tuple[str, CodeLines]:
            last = start_line + n - 1
            body = lines[start_line - 1:last]
            numbered = "".join(f"{start_line + i:>{width}} | {line}" for i, line in enumerate(body))
            more = (f"\n(the file goes on to line {len(lines)}; call read_code with {self.args}start_line={last + 1}"
                    f"{f', end_line={end_line}' if end_line and last < min(end_line, len(lines)) else ''})"
                    if last < len(lines) else "")
            text = f"{span_label(rel, start_line, last, full=True)} ({len(lines)} lines in the file)\n{numbered.rstrip()}{more}"
            return text, CodeLines(path=rel, start_line=start_line, end_line=last, total_lines=len(lines), text="".join(body),
                                   next_start_line=last + 1 if last < len(lines) else None)

        return self._page(page_of, end - start_line + 1)

    def ask(self, question: Annotated[str, Field(description="a question about the code, e.g. \"How is Foo used?\"")],
            offset: Annotated[int, Field(ge=0, description="where the answer goes on (the previous page's next_offset), "
                                         "with the same question")] = 0,
            ctx: Context | None = None) -> Annotated[CallToolResult, AnswerResult]:
        """An answer to a question about the code, with path:Lstart-Lend citations checked against the evidence
        (from the configured LLM, or extractive without one), and the evidence it rests on for reading further.
        A page is 4 KB: the answer's start, its citations and best evidence; `offset` with the same question
        reads on (the answer is kept, not asked again). A local model may read for minutes first: a progress
        notification brings the answer found in the code at once (cited; not the model's), and others say how far
        the model is, how long it should take, and that a model loads first when one does (CODEQA_RERANK=likelihood)."""
        full = self._answers.get(question) if offset else None
        if full is None:
            full = self._answer(question, ctx)
        first = {"citations": full.citations[:LISTED_CITATIONS], "evidence": full.evidence[:LISTED_EVIDENCE]}

        def page_of(room: int) -> tuple[str, AnswerResult]:  # room: bytes of the answer's text on this page
            part, after = text_page(full.answer, offset, room)
            page = full.model_copy(update={"answer": part, "page": page_info(offset, len(part), len(full.answer),
                                                                             more=after is not None),
                                           **(first if not offset else {"citations": [], "evidence": []})})
            return answer_text(page, self.args), page

        return self._page(page_of, min(TEXT_BUDGET, size(full.answer[offset:])))

    def _answer(self, question: str, ctx: Context | None) -> AnswerResult:
        """The whole answer, kept for paging with offset."""
        send = _progress_reporter(ctx)
        expected = ""  # "about 40 s", once this server has seen the model answer

        def report(p: AnswerProgress) -> None:
            if send is not None:
                send(p if p.stage != "reading" or not expected else replace(p, message=f"{p.message} ({expected} in all)"))

        with self.reader.opened() as retriever:
            if send is not None and (note := retriever.loading_note(question)):  # a minute's silence reads as a hang
                report(AnswerProgress("loading", 0, None, note))
            stream = Answerer(retriever, self.settings, pace=self.pace).stream(question, on_progress=report)
            if stream.estimate_seconds is not None:
                expected = about(stream.estimate_seconds)
            if send is not None and stream.early is not None:  # useful at once, while the model reads for minutes
                report(AnswerProgress("early", 0, stream.prompt.tokens,
                                      early_text(_result(stream.early), stream.prompt.tokens, expected)))
            return self._keep(question, stream.result())

    def _keep(self, question: str, answer: Answer) -> AnswerResult:
        """`answer` as the tool's result, kept for paging (called under the reader's lock: calls take turns)."""
        result = _result(answer)
        self._answers.pop(question, None)
        self._answers[question] = result
        while len(self._answers) > KEPT_ANSWERS:
            self._answers.pop(next(iter(self._answers)))
        return result

    def index_status(self) -> Annotated[CallToolResult, StatusResult]:
        """What the index holds (files, chunks, symbols, when it was last built), which files changed since, how
        much of it semantic search covers, and how far the background embedding that reindex started has come."""
        # the progress first: the background run writes its last meta before it says it ended, so an ended
        # run's meta is what the store holds next (in the other order it could end between the two reads,
        # and "finished" would stand beside the coverage from before its last batch)
        progress = self.indexer.progress()
        with self.reader.opened() as retriever:
            status = index_status(self.repo, self.settings, retriever.store)
        result = StatusResult(repo=str(self.repo), files=status.files, chunks=status.chunks, symbols=status.symbols,
                              last_indexed=status.last_indexed, embeddings_complete=status.embedded_at,
                              complete=status.complete, stale=status.stale,
                              semantic_search=round(status.semantic, 4),
                              changed=list(status.changed[:LISTED_FILES]), deleted=list(status.deleted[:LISTED_FILES]),
                              embedding=embedding_info(progress))
        return self._result(status_text(result), result)

    def reindex(self) -> Annotated[CallToolResult, ReindexResult]:
        """Bring the index up to date with the files on disk (incremental: only changed files are parsed) and
        return as soon as search_code, find_symbol, find_references and ask work on it, by keywords and the
        graph. The chunks' dense vectors are then embedded in the background (hours for a big repository on
        a CPU): semantic search fills in meanwhile and index_status shows how far it is. A reindex while that
        runs stops it after the batch in flight, indexes what changed, and starts it again; nothing is lost.
        Other calls wait until the index is searchable, not for the embedding."""
        with self.reader.closed():  # the next call opens the new run
            report = self.indexer.update()
            progress = self.indexer.progress() if report.chunks_deferred else None
        d = report.to_dict()
        # the report's other fields (every skipped path, timings by stage) are left out: ReindexResult ignores them
        result = ReindexResult.model_validate({
            **d, "partial": [f"{p['path']}: {p['reason']}" for p in d["partial"][:LISTED_FILES]],
            "semantic_search": round(1 - report.chunks_deferred / report.chunks, 4) if report.chunks else 1.0,
            "embedding": embedding_info(progress)})
        return self._result(reindex_text(result), result)

    def list_repositories(self, offset: Annotated[int, Field(ge=0, description="skip this many repositories (the "
                                                                               "previous page's next_offset)")] = 0,
                          ) -> Annotated[CallToolResult, RepositoriesResult]:
        """The repositories this server answers about (here one; a server started with --workspace serves
        several): each one's name, folder, git remote, the commit its index reflects (and whether the work
        tree differed), and its freshness: fresh, embedding (searchable, semantic search filling in), stale
        (files changed since: reindex), incomplete, not indexed, unreadable, or missing folder."""
        return repositories_page(None, [self.info()], offset)

    def info(self) -> RepositoryInfo:
        """This repository as list_repositories describes it (reading its index status walks its files)."""
        name = self.name or self.repo.name
        local = not self.settings.qdrant_url
        index_dir = self.settings.index_dir_for(self.repo)
        remote = git_remote(self.repo)
        where = str(index_dir) if local else f"Qdrant {index_identity(self.repo, self.settings.index_name).described}"
        commit = indexed_commit(index_dir) if local else None
        base = dict(name=name, path=str(self.repo), remote=remote[0] if remote else None, exists=self.repo.is_dir(),
                    index=where, commit=commit["commit"] if commit else None, dirty=commit["dirty"] if commit else None)
        absent = dict(indexed=False, embeddings_complete=False, stale_files=None, last_indexed=None, commit=None, dirty=None)
        if not self.repo.is_dir():
            return RepositoryInfo(**{**base, **absent, "freshness": "missing folder",
                                     "note": "Its folder is gone: fix or remove it in the workspace file."})
        try:
            with self.reader.opened() as retriever:
                status = index_status(self.repo, self.settings, retriever.store)
        except ToolError as exc:
            missing = isinstance(exc.__cause__, IndexMissingError)
            return RepositoryInfo(**{**base, **absent, "freshness": "not indexed" if missing else "unreadable",
                                     "note": f"{'No index yet' if missing else str(exc)}; call reindex"
                                             f"{f' with repository={name!r}' if self.name else ''} to build it."})
        freshness, note = _freshness(status)
        return RepositoryInfo(**base, indexed=True, embeddings_complete=status.embedded_at is not None,
                              stale_files=len(status.changed) + len(status.deleted), last_indexed=status.last_indexed,
                              freshness=freshness, note=note)

    def _page(self, page_of, most: int) -> CallToolResult:
        """The largest page that fits (pages.fit_page), naming the repository when this one is in a workspace."""
        if self.name is None:
            return tool_result(*fit_page(page_of, most))
        name = self.name
        return tool_result(*fit_page(lambda n: named(name, *page_of(n)), most))

    def _result(self, text: str, result) -> CallToolResult:
        return tool_result(*(named(self.name, text, result) if self.name else (text, result)))


def repositories_page(workspace: str | None, infos: list[RepositoryInfo], offset: int) -> CallToolResult:
    """list_repositories' page from `offset` (as many entries as fit in 4 KB)."""
    def page_of(n: int) -> tuple[str, RepositoriesResult]:
        result = RepositoriesResult(workspace=workspace, repositories=infos[offset:offset + n],
                                    page=page_info(offset, n, len(infos)))
        return repositories_text(result), result

    return tool_result(*fit_page(page_of, max(0, len(infos) - offset)))


def _freshness(status) -> tuple[str, str]:
    """(one word, what it means in a sentence) of an IndexStatus."""
    stale = len(status.changed) + len(status.deleted)
    if not status.complete:
        return "incomplete", "The last index run was interrupted: call reindex to complete it."
    if stale:
        return "stale", f"{stale} file(s) changed since it was indexed: call reindex to bring it up to date."
    if status.embedded_at is None:
        return "embedding", (f"Searchable by keywords and the graph; semantic search at {int(status.semantic * 100)}%: "
                             "the other chunks wait for their dense vectors (reindex embeds them in the background; "
                             "index_status shows how far).")
    return "fresh", f"Every file indexed and embedded ({status.files} files, {status.symbols} symbols)."


def _result(answer: Answer) -> AnswerResult:
    """`answer` as ask's result (its whole text: the tool pages it)."""
    prompt, report = answer.prompt, describe_citations(answer)  # the page's and the CLI's summary
    return AnswerResult(
        answer=answer.answer, page=page_info(0, len(answer.answer), len(answer.answer)), mode=answer.mode,
        route=answer.route, model=answer.model, error=answer.error,
        citations=[CitationInfo(location=span_label(c.path, c.start_line, c.end_line, full=True) if c.start_line else c.path,
                                verified=c.verified, reason=c.reason, stale=c.stale, attributed=c.attributed,
                                supported=c.supported, support_reason=c.support_reason, counted=c.counted,
                                rote=c.rote, mark=status.mark, status=status.words)
                   for c, status in ((c, citation_status(c, answer.mode)) for c in answer.citations)],
        citations_total=len(answer.citations), citations_summary=report.line, warnings=list(report.warnings),
        evidence=[EvidenceInfo(location=s.label, reason=s.reason) for s in answer.snippets],
        evidence_total=len(answer.snippets),
        grounded=answer.grounded, cut=answer.cut, prompt_tokens=prompt.tokens if prompt else None,
        window=prompt.window if prompt else None, left_out=list(prompt.left_out) if prompt else [],
        unknown_names=list(answer.unknown_names))


def references(retriever: Retriever, symbol: str, kinds: list[str] | None) -> tuple[list, list]:
    """(the definitions of `symbol`, their reference sites of `kinds`: exact, likely, then name-only, each by path
    and line)."""
    definitions = retriever.graph.find_symbols(symbol)
    refs = sorted(retriever.graph.references_of(definitions, kinds),
                  key=lambda r: (CONFIDENCE_ORDER.get(r.confidence, 3), r.path, r.line, r.column)) if definitions else []
    return definitions, refs


def matches(h: Hit, path_glob: str | None, language: str | None) -> bool:
    """Whether a hit passes search_code's post-filters."""
    return ((not path_glob or fnmatch.fnmatchcase(h.path, path_glob))
            and (not language or (h.language or "").lower() == language.lower()))


def search_hit(retriever: Retriever, h: Hit) -> SearchHit:
    return SearchHit(location=span_label(h.path, h.start_line, h.end_line, full=True), path=h.path, start_line=h.start_line,
                     end_line=h.end_line, symbol=h.symbol, kind=h.kind, language=h.language, score=round(h.score, 4),
                     reasons=list(h.reasons), preview=_preview(retriever, h), stale=h.stale)


def hit_text(rank: int, h: SearchHit, tag: str = "") -> str:
    """A hit's lines in search_code's text; `tag` is a workspace's `[name] ` before its location."""
    return (f"{rank}. {tag}{clip(h.location)}  {clip(h.symbol or h.kind, 80)}  score {h.score:.3f} ({', '.join(h.reasons)})"
            f"{'  STALE: changed since indexed, call reindex' if h.stale else ''}\n   {h.preview}")


def _preview(retriever: Retriever, h: Hit) -> str:
    lines = retriever.source.redacted_lines(h.path) or []
    first = next((line.strip() for line in lines[h.start_line - 1:h.end_line] if line.strip()), "")
    return first[:160]




def _progress_reporter(ctx: "Context | None"):
    """An on_progress callback that sends MCP progress notifications from the tool's worker thread (only
    when the client asked for them with a progress token; a failed send never fails the answer)."""
    if ctx is None:
        return None
    import anyio.from_thread

    def report(progress) -> None:
        try:
            anyio.from_thread.run(ctx.report_progress, float(progress.done), progress.total, progress.message)
        except Exception:  # noqa: BLE001 - progress is a courtesy; the answer goes on
            pass

    return report
