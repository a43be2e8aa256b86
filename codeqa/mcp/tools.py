"""The seven MCP tools over one repository's index: coding agents search, walk the symbol graph, read code and
ask with cited answers. The server (server.py) registers them; their docstrings are what the agent reads.

Every tool returns compact text for the model and structured content that its output schema
(the pydantic model in its return annotation) describes. What an agent can act on (no index yet,
an index to rebuild, an unknown symbol, a path outside the index) comes back as a tool error
(isError) saying what to do next. The code an agent sees is redacted as the index redacts it: the
agent is a model, and a file's credentials never go into a prompt.

They read through one shared Retriever (reader.py).

reindex returns once phase 1 of the run is committed (search by keywords and the graph, references,
ask) and phase 2, the dense vectors, goes on in a thread of the server (index_background.py): on a big
repository that is hours with the bundled CPU model, and an agent must not wait for it. index_status
says how far it is. A reindex (or a --watch run) meanwhile stops it after its batch in flight, indexes
what changed and starts it again; the server stopping stops it too. Nothing embedded is lost: each
batch is committed, and the next run (reindex, `codeqa index`) does what is left.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from ..answer import Answerer
from ..config import Settings
from ..index import index_status
from ..index_background import BackgroundIndexer
from ..query.retrieve import Retriever, semantic_note
from ..types import Hit, span_label
from .reader import IndexReader, indexed_path
from .schemas import (AnswerResult, CitationInfo, CodeLines, EvidenceInfo, ReferencesResult, ReindexResult, SearchHit,
                      SearchResult, StatusResult, SymbolResult, answer_text, embedding_info, reference_sites,
                      references_text, reindex_text, status_text, symbol_info, symbol_text, tool_result)

MAX_READ_LINES = 400  # one read_code call: a long file comes in pieces, not as one flood of context
SEARCH_POOL = 50  # a filtered search keeps what matches among at least this many results
LISTED_FILES = 50  # changed files and skipped paths named in a status or reindex summary
# what a stopping server gives the background embedding to finish its batch: under the 2 s an MCP
# client waits for a stdio server to exit before it kills it (a batch cut off is re-done by the next run)
STOP_WAIT_SECONDS = 1.5
ReferenceKind = Literal["call", "instantiation", "type", "import", "inheritance", "attribute"]

class RepositoryTools:
    """The tools over one repository's index. Calls take turns: the SDK runs each on a worker thread,
    and one Retriever (with its caches) serves them all."""

    def __init__(self, repo: Path, settings: Settings):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.reader = IndexReader(self.repo, settings)
        self.indexer = BackgroundIndexer(self.repo, settings)  # the server's index runs: reindex and --watch

    def close(self) -> None:
        self.indexer.close(wait=STOP_WAIT_SECONDS)  # not under the reader's lock: a stop must not wait for a call
        self.reader.close()

    def _unknown(self, name: str) -> ToolError:
        return ToolError(f"No symbol named {name!r} in the index of {self.repo}. Check the spelling, narrow it as "
                         "`Class.method` or `path:Name`, or describe it to search_code; if the code is new, call reindex.")

    # ---- the tools (their docstrings are what the agent reads) -------------------------------------
    def search_code(self, query: Annotated[str, Field(min_length=1, description="natural language or identifiers")],
                    limit: Annotated[int, Field(ge=1, le=50)] = 10,
                    path_glob: Annotated[str | None, Field(description="fnmatch pattern on the path, e.g. 'src/*.py'")] = None,
                    language: Annotated[str | None, Field(description="e.g. python, typescript, java")] = None,
                    ) -> Annotated[CallToolResult, SearchResult]:
        """Hybrid search over the code (dense + BM25 + symbol names + one reference hop), best first: each hit
        as path:Lstart-Lend with its symbol, score and why it ranks. path_glob and language filter the top
        results after the search (post-filtering), so a narrow filter may return fewer than `limit`."""
        filtered = bool(path_glob or language)
        with self.reader.opened() as retriever:
            coverage = retriever.semantic_coverage()
            hits = retriever.search(query, top_k=max(limit * 5, SEARCH_POOL) if filtered else limit)
            hits = [h for h in hits if _matches(h, path_glob, language)][:limit]
            found = [SearchHit(location=span_label(h.path, h.start_line, h.end_line, full=True), path=h.path, start_line=h.start_line,
                               end_line=h.end_line, symbol=h.symbol, kind=h.kind, language=h.language,
                               score=round(h.score, 4), reasons=list(h.reasons), preview=_preview(retriever, h),
                               stale=h.stale)
                     for h in hits]
        lines = [f"{i}. {h.location}  {h.symbol or h.kind}  score {h.score:.3f} ({', '.join(h.reasons)})"
                 f"{'  STALE: changed since indexed, call reindex' if h.stale else ''}\n   {h.preview}"
                 for i, h in enumerate(found, 1)]
        scope = f" (among the top results with path_glob={path_glob!r} language={language!r})" if filtered else ""
        text = "\n".join(lines) if lines else f"No results{scope}. Try other words, or a looser filter."
        note = semantic_note(coverage)
        return tool_result(f"{text}\n{note}" if note else text,
                       SearchResult(query=query, hits=found, post_filtered=filtered, semantic_search=round(coverage, 4)))

    def find_symbol(self, name: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")]
                    ) -> Annotated[CallToolResult, SymbolResult]:
        """Where a symbol is defined: qualified name, kind, path:Lstart-Lend, signature and the docstring's first
        line. Every match is listed (the same name may be defined in several files)."""
        with self.reader.opened() as retriever:
            symbols = retriever.graph.find_symbols(name)
        if not symbols:
            raise self._unknown(name)
        found = [symbol_info(s) for s in symbols]
        text = f"{len(found)} definition(s) of {name}:\n" + "\n".join(symbol_text(d) for d in found)
        return tool_result(text, SymbolResult(name=name, definitions=found))

    def find_references(self, symbol: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                        kinds: Annotated[list[ReferenceKind] | None, Field(description="only these kinds of reference")] = None,
                        limit: Annotated[int, Field(ge=1, le=5000)] = 200,
                        ) -> Annotated[CallToolResult, ReferencesResult]:
        """Every reference site of a symbol from the resolved symbol graph (calls, instantiations, types,
        imports, inheritance, attributes), grouped by file, each with its kind, confidence (exact, likely,
        name-only) and line. `total` counts them all when `limit` cuts the list."""
        with self.reader.opened() as retriever:
            definitions = retriever.graph.find_symbols(symbol)
            if not definitions:
                raise self._unknown(symbol)
            refs = sorted(retriever.graph.references_of(definitions, kinds), key=lambda r: (r.path, r.line, r.column))
            shown = retriever.graph.records(refs[:limit])
        files = reference_sites(shown)
        result = ReferencesResult(symbol=symbol, definitions=[symbol_info(s) for s in definitions], total=len(refs),
                                  shown=len(shown), files=files)
        return tool_result(references_text(result, kinds), result)

    def read_code(self, path: Annotated[str, Field(min_length=1, description="relative to the repository, as the other tools print it")],
                  start_line: Annotated[int, Field(ge=1)] = 1,
                  end_line: Annotated[int | None, Field(ge=1, description="inclusive; default: start_line + 399")] = None,
                  ) -> Annotated[CallToolResult, CodeLines]:
        """Lines of an indexed file, numbered, credentials redacted as the index holds them; at most 400
        lines a call. Only files in the index can be read."""
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
        body = lines[start_line - 1:end]
        width = len(str(end))
        numbered = "".join(f"{start_line + i:>{width}} | {line}" for i, line in enumerate(body))
        more = f"\n(the file goes on to line {len(lines)}; call read_code with start_line={end + 1})" if end < len(lines) else ""
        text = f"{span_label(rel, start_line, end, full=True)} ({len(lines)} lines in the file)\n{numbered.rstrip()}{more}"
        return tool_result(text, CodeLines(path=rel, start_line=start_line, end_line=end, total_lines=len(lines), text="".join(body)))

    def ask(self, question: Annotated[str, Field(description="a question about the code, e.g. \"How is Foo used?\"")],
            ctx: Context | None = None) -> Annotated[CallToolResult, AnswerResult]:
        """An answer to a question about the code, with path:Lstart-Lend citations checked against the evidence
        (from the configured LLM, or extractive without one), and the evidence it rests on for reading further.
        A local model may read for minutes first: progress notifications say how far it is."""
        report = _progress_reporter(ctx)
        with self.reader.opened() as retriever:
            answer = Answerer(retriever, self.settings).answer(question, on_progress=report)
        prompt = answer.prompt
        result = AnswerResult(
            answer=answer.answer, mode=answer.mode, route=answer.route, model=answer.model, error=answer.error,
            citations=[CitationInfo(location=span_label(c.path, c.start_line, c.end_line, full=True) if c.start_line else c.path,
                                    verified=c.verified, reason=c.reason, stale=c.stale, attributed=c.attributed)
                       for c in answer.citations],
            evidence=[EvidenceInfo(location=s.label, reason=s.reason) for s in answer.snippets],
            grounded=answer.grounded, cut=answer.cut, prompt_tokens=prompt.tokens if prompt else None,
            window=prompt.window if prompt else None, left_out=list(prompt.left_out) if prompt else [],
            unknown_names=list(answer.unknown_names))
        return tool_result(answer_text(result), result)

    def index_status(self) -> Annotated[CallToolResult, StatusResult]:
        """What the index holds (files, chunks, symbols, when it was last built), which files changed since, how
        much of it semantic search covers, and how far the background embedding that reindex started has come."""
        with self.reader.opened() as retriever:
            status = index_status(self.repo, self.settings, retriever.store)
        result = StatusResult(repo=str(self.repo), files=status.files, chunks=status.chunks, symbols=status.symbols,
                              last_indexed=status.last_indexed, complete=status.complete, stale=status.stale,
                              semantic_search=round(status.semantic, 4),
                              changed=list(status.changed[:LISTED_FILES]), deleted=list(status.deleted[:LISTED_FILES]),
                              embedding=embedding_info(self.indexer.progress()))
        return tool_result(status_text(result), result)

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
        return tool_result(reindex_text(result), result)


def _matches(h: Hit, path_glob: str | None, language: str | None) -> bool:
    return ((not path_glob or fnmatch.fnmatchcase(h.path, path_glob))
            and (not language or (h.language or "").lower() == language.lower()))


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
