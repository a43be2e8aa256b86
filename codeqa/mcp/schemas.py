"""What the MCP tools return: one pydantic model per tool (its output schema, sent as structured content)
and the compact text an agent reads beside it, both one page as pages.py sizes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from ..answer.extractive import EXTRACTIVE_NOTE
from ..answer.streaming import describe_cut
from ..query.lookup import ReferenceRecord
from ..store import semantic_search_at
from ..types import Symbol, span_label
from .pages import LINE_WIDTH, PageInfo, clip, paging_line

if TYPE_CHECKING:
    from ..indexing.background import EmbeddingProgress


class SearchHit(BaseModel):
    location: str = Field(description="path:Lstart-Lend")
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    language: str | None
    score: float
    reasons: list[str] = Field(description="why it ranks: dense, keyword, symbol, ref-hop, member...")
    preview: str = Field(description="the first non-blank line of the code, redacted")
    stale: bool = Field(description="the file changed since it was indexed: lines may have moved (reindex)")


class SearchResult(BaseModel):
    query: str
    hits: list[SearchHit]
    page: PageInfo = Field(description="where these hits sit in the ranking; next_offset pages on")
    post_filtered: bool = Field(description="path_glob/language applied to the top results after the search")
    semantic_search: float = Field(1.0, description="share of the chunks with dense vectors: below 1 while the index "
                                                    "run is still embedding (the rest are found by keywords)")


class SymbolInfo(BaseModel):
    qualified_name: str
    name: str
    kind: str
    language: str
    location: str
    path: str
    start_line: int
    end_line: int
    signature: str
    doc: str = Field(description="the docstring's first line")
    id: str


class SymbolResult(BaseModel):
    name: str
    definitions: list[SymbolInfo]
    page: PageInfo = Field(description="which of the matching definitions these are; next_offset pages on")


class ReferenceSite(BaseModel):
    line: int
    column: int
    kind: str
    confidence: str = Field(description="exact | likely | name-only")
    text: str
    enclosing: str | None = Field(description="qualified name of the symbol the reference is in")


class ReferencesResult(BaseModel):
    symbol: str
    definitions: list[SymbolInfo] = Field(description="the first 3 definitions (find_symbol pages through them all)")
    definitions_total: int
    total: int = Field(description="every matching reference site, also those past this page")
    shown: int = Field(description="sites on this page")
    by_kind: dict[str, int] = Field(description="every matching site counted by kind")
    by_confidence: dict[str, int] = Field(description="every matching site counted by confidence")
    file_count: int = Field(description="files with a matching site")
    top_files: dict[str, int] = Field(description="the files with the most sites, and their counts")
    files: dict[str, list[ReferenceSite]] = Field(description="path -> its sites on this page; the order is exact, "
                                                            "likely, then name-only, each by path and line")
    page: PageInfo = Field(description="which sites these are; next_offset pages on")


class CodeLines(BaseModel):
    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str = Field(description="the lines as indexed (credentials redacted)")
    next_start_line: int | None = Field(None, description="where the next read goes on; null at the file's end")


class CitationInfo(BaseModel):
    location: str
    verified: bool
    reason: str
    stale: bool = Field(description="the file changed since it was indexed: the cited lines may say something else")
    attributed: bool = Field(False, description="not cited by the model: codeqa found an uncited sentence's names and "
                                                "most of its words in these lines")
    supported: bool | None = Field(None, description="the lines mention what the sentences citing them name; None: not "
                                                     "checked (the sentence names nothing, or the lines are unverified)")
    support_reason: str = ""
    counted: bool = Field(False, description="counts as support of the answer (verified, and the lines mention what the sentence names)")
    rote: bool = Field(False, description="snippet numbers written by rote (a long run, or no such snippet): support nothing")
    mark: str = Field("", description="✓ verified, the lines mention what the sentence names | ! verified, they do not | · verified, not checked | "
                                      "✗ unverified or rote | ~ attributed")
    status: str = Field("", description="what was checked, in words (the page's and the CLI's)")


class EvidenceInfo(BaseModel):
    location: str
    reason: str


class AnswerResult(BaseModel):
    answer: str = Field(description="this page of the answer (page counts its characters)")
    page: PageInfo = Field(description="characters: where this part of the answer starts, and next_offset, "
                                       "the `offset` of an ask with the same question for the rest")
    mode: str = Field(description="llm | extractive")
    route: str = Field(description="usage | relationship | search")
    model: str | None
    error: str | None = Field(description="why the LLM failed, when it did (the answer is then extractive or cut)")
    citations: list[CitationInfo] = Field(description="the first citations (on the answer's first page only)")
    citations_total: int = 0
    evidence: list[EvidenceInfo] = Field(description="the best snippets the answer was built from (first page only)")
    evidence_total: int = 0
    grounded: bool = Field(True, description="LLM answers: some citation is verified and its lines mention what its sentence names, and every sentence "
                                             "that names code is supported; extractive answers: some citation is verified")
    citations_summary: str = Field("", description="the citations counted by what was checked (the page's and the CLI's line)")
    warnings: list[str] = Field(default_factory=list, description="not grounded; possibly incomplete (a one-sentence "
                                                                  "answer to a how question)")
    cut: str | None = Field(None, description="why the answer stopped early: length (its token limit) | content_filter | "
                                              "stopped (another finish reason) | closed (the stream ended unfinished) | "
                                              "timeout | error | repeating")
    prompt_tokens: int | None = Field(None, description="tokens the model read (LLM answers)")
    window: int | None = Field(None, description="the model's context window")
    left_out: list[str] = Field(default_factory=list, description="evidence left out to fit the window")
    unknown_names: list[str] = Field(default_factory=list, description="names the answer uses that the index does not know")


class EmbeddingInfo(BaseModel):
    state: str = Field(description="running | stopping (after the batch in flight) | finished | stopped | failed")
    chunks_embedded: int = Field(description="chunks of the index with their dense vector")
    chunks: int = Field(description="chunks in the index")
    error: str | None = Field(description="why it failed, when it did")
    seconds: float = Field(description="how long it has run, or ran")


class StatusResult(BaseModel):
    repo: str
    files: int
    chunks: int
    symbols: int
    last_indexed: str | None = Field(description="when phase 1 (keywords and the graph: searchable) last completed")
    embeddings_complete: str | None = Field(None, description="when phase 2 (every chunk embedded) last completed; "
                                                              "null while chunks wait for their vectors")
    complete: bool = Field(description="false after an interrupted run")
    semantic_search: float = Field(1.0, description="share of the chunks with dense vectors (1: semantic search complete)")
    stale: int = Field(description="files changed or deleted since the last run")
    changed: list[str]
    deleted: list[str]
    embedding: EmbeddingInfo | None = Field(None, description="the background embedding (phase 2) this server's "
                                                              "reindex started last; null when none")


class ReindexResult(BaseModel):
    repo: str
    index_dir: str
    files: int
    files_changed: int
    files_deleted: int
    files_unchanged: int
    symbols: int
    references: int
    chunks: int
    chunks_embedded: int = Field(description="chunks given their dense vector by this call (from the embedding cache)")
    chunks_deferred: int = Field(0, description="chunks still without their dense vector: embedded in the background")
    semantic_search: float = Field(1.0, description="share of the chunks with dense vectors when the call returned")
    embedding: EmbeddingInfo | None = Field(None, description="the background embedding this call started; null when "
                                                              "every chunk already had its vector")
    skipped_by_reason: dict[str, int]
    partial: list[str] = Field(description="files parsed with errors")
    notes: list[str]
    elapsed_seconds: float
    nothing_to_do: bool


def tool_result(text: str, structured: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured.model_dump(mode="json"))


def symbol_info(s: Symbol) -> SymbolInfo:
    doc = next((line.strip() for line in s.docstring.splitlines() if line.strip()), "")
    return SymbolInfo(qualified_name=s.qualified_name, name=s.name, kind=s.kind, language=s.language,
                      location=span_label(s.path, s.start_line, s.end_line, full=True), path=s.path, start_line=s.start_line,
                      end_line=s.end_line, signature=s.signature.strip(), doc=doc, id=s.id)


def reference_sites(records: Sequence[ReferenceRecord]) -> dict[str, list[ReferenceSite]]:
    """Reference sites by file, in the order given (find_references sorts them by path and line)."""
    files: dict[str, list[ReferenceSite]] = {}
    for r in records:
        files.setdefault(r.path, []).append(reference_site(r))
    return files


def reference_site(r: ReferenceRecord) -> ReferenceSite:
    return ReferenceSite(line=r.line, column=r.column, kind=r.kind, confidence=r.confidence, text=clip(r.text),
                         enclosing=r.enclosing)


def embedding_info(progress: "EmbeddingProgress | None") -> EmbeddingInfo | None:
    if progress is None:
        return None
    return EmbeddingInfo(state=progress.state, chunks_embedded=progress.chunks_embedded, chunks=progress.chunks,
                         error=progress.error, seconds=round(progress.seconds, 1))


def symbol_text(d: SymbolInfo) -> str:
    lines = [f"{d.location}  {d.kind} {d.qualified_name}", *(["  " + d.signature.splitlines()[0]] if d.signature else []),
             *([f'  "{d.doc}"'] if d.doc else [])]
    return "\n".join(lines)


def references_head(r: ReferencesResult, kinds: list[str] | None) -> str:
    """The counts an agent reads first: where it is defined, how many sites of which kinds, the busiest files."""
    where = ", ".join(d.location for d in r.definitions)
    if r.definitions_total > len(r.definitions):
        where += f" and {r.definitions_total - len(r.definitions)} more (find_symbol lists them)"
    scope = f" of kind {', '.join(kinds)}" if kinds else ""
    lines = [f"{r.symbol} (defined at {where}): {r.total} reference(s){scope} in {r.file_count} file(s)"]
    if r.total:
        lines.append("By kind: " + ", ".join(f"{k} {n}" for k, n in r.by_kind.items())
                     + "; by confidence: " + ", ".join(f"{c} {n}" for c, n in r.by_confidence.items()))
    if r.file_count > 1:
        lines.append("Most in: " + ", ".join(f"{clip(p, 80)} ({n})" for p, n in r.top_files.items()))
    return "\n".join(lines)


def site_line(s: ReferenceSite) -> str:
    return f"  L{s.line:<5} {s.kind:<13} {s.confidence:<9} {s.text}"


def site_blocks(records: Sequence[ReferenceRecord]) -> list[str]:
    """Each site's text, under its file's name where the file changes."""
    return [(f"{clip(r.path)}\n" if i == 0 or records[i - 1].path != r.path else "") + site_line(reference_site(r))
            for i, r in enumerate(records)]


def references_text(r: ReferencesResult, kinds: list[str] | None, blocks: list[str]) -> str:
    call = f"find_references(symbol={r.symbol!r}, {f'kinds={kinds}, ' if kinds else ''}"
    more = paging_line(r.page, "reference sites", call)
    return "\n".join([references_head(r, kinds), *blocks, *([more] if more else [])])


def answer_text(a: AnswerResult, args: str = "") -> str:
    """The page's text; `args` go into the paging hint (a workspace's `repository='name', `)."""
    more = paging_line(a.page, "characters of the answer", f"ask(the same question, {args}")
    return "\n\n".join([a.answer.rstrip(), *answer_notes(a), *([more] if more else [])])


def early_text(a: AnswerResult, tokens: int, expected: str) -> str:
    """The answer found in the code, sent in a progress notification while the model reads: a heading that says
    it is not the model's, its start (an early page's room), its citations summary and first citations."""
    wait = f", {expected} in all" if expected else ""
    heading = (f"Found in the code (not the model's answer: the model reads {tokens:,} tokens of context{wait}; "
               "its answer is this call's result):")
    body = a.answer.removeprefix(EXTRACTIVE_NOTE).strip()
    body = body if len(body) <= EARLY_CHARS else body[:EARLY_CHARS].rsplit("\n", 1)[0] + "\n[…]"
    cited = [f"  {c.mark} {c.location} ({c.status})" for c in a.citations]
    return "\n\n".join([heading, body, a.citations_summary, *(["Citations:\n" + "\n".join(cited)] if cited else [])])


EARLY_CHARS = 2500  # of the answer found in the code, in a progress notification (its citations follow)


def answer_notes(a: AnswerResult) -> list[str]:
    """What the first page says after the answer (later pages carry the answer's text alone)."""
    if a.page.offset:
        return []
    parts = []
    if a.error:
        parts.append(f"(the LLM failed: {a.error})")
    if a.cut:
        parts.append(f"(the answer is incomplete: {describe_cut(a.cut)})")
    parts += [f"({w})" for w in a.warnings]
    if a.unknown_names:
        parts.append(clip("Names the index does not know: " + ", ".join(a.unknown_names), 2 * LINE_WIDTH))
    if a.left_out:
        parts.append(clip(f"Left out to fit the model's window ({a.prompt_tokens} of {a.window} tokens): "
                          + "; ".join(a.left_out), 2 * LINE_WIDTH))
    if a.citations_summary:
        parts.append(a.citations_summary)
    if a.citations:
        parts.append(f"Citations ({len(a.citations)} of {a.citations_total}):\n"
                     + "\n".join(f"  {c.mark} {c.location} ({c.status})" for c in a.citations))
    if a.evidence:
        parts.append(f"Evidence ({len(a.evidence)} of {a.evidence_total}; read_code reads more):\n"
                     + "\n".join(f"  {clip(e.location)} ({clip(e.reason, 80)})" for e in a.evidence))
    return parts


def status_text(s: StatusResult) -> str:
    text = (f"Index of {s.repo}: {s.files} files, {s.chunks} chunks, {s.symbols} symbols; "
            f"searchable since {s.last_indexed or 'never completed'}"
            + (f", embeddings complete {s.embeddings_complete}." if s.embeddings_complete else "."))
    if not s.complete:
        text += "\nThe last index run was interrupted: call reindex to complete it."
    if s.semantic_search < 1:
        text += (f"\n{semantic_search_at(s.semantic_search)}: the index run has not embedded every chunk "
                 "yet; search finds the rest by keywords and the graph.")
        if s.embedding is None or s.embedding.state not in ("running", "stopping"):
            text += " Call reindex to embed the rest in the background."
    if s.embedding is not None:
        text += "\n" + _embedding_text(s.embedding)
    if s.stale:
        listed = clip(", ".join(s.changed + [f"{p} (deleted)" for p in s.deleted]), 6 * LINE_WIDTH)
        text += f"\n{s.stale} file(s) changed since: {listed}. Call reindex to bring the index up to date."
    else:
        text += "\nNo file changed since."
    return text


def _embedding_text(e: EmbeddingInfo) -> str:
    done = f"{e.chunks_embedded} of {e.chunks} chunks have their vectors"
    return {"running": f"Embedding in the background: {done} ({int(100 * e.chunks_embedded / max(e.chunks, 1))}%), "
                       f"running for {e.seconds:.0f}s.",
            "stopping": f"Embedding in the background: {done}; stopping after the batch in flight.",
            "finished": f"Background embedding finished in {e.seconds:.0f}s: {done}.",
            "stopped": f"Background embedding stopped: {done}. Call reindex to go on.",
            "failed": f"Background embedding failed ({done}): {e.error}. Call reindex to try again."}[e.state]


def reindex_text(r: ReindexResult) -> str:
    if r.nothing_to_do:
        text = f"Index of {r.repo} already up to date ({r.files} files, {r.chunks} chunks)."
    else:
        text = (f"Indexed {r.repo}: {r.files_changed} changed, {r.files_deleted} deleted, {r.files_unchanged} unchanged "
                f"of {r.files} files; {r.symbols} symbols, {r.references} references, {r.chunks} chunks "
                f"in {r.elapsed_seconds:.1f}s.")
    if r.chunks_deferred:
        text += (f"\nsearch_code, find_symbol, find_references and ask work now, by keywords and the graph; semantic "
                 f"search at {int(r.semantic_search * 100)}%: "
                 + (f"embedding its {r.chunks_deferred} chunks without a vector continues in the background "
                    "(index_status shows how far)." if r.embedding is not None and r.embedding.state == "running"
                    else "call reindex again to embed the rest."))
    if r.skipped_by_reason:
        text += "\nNot indexed: " + ", ".join(f"{reason} {n}" for reason, n in sorted(r.skipped_by_reason.items()))
    return "\n".join([text, *(clip(n, 2 * LINE_WIDTH) for n in r.notes[:5]), *(f"partially parsed: {clip(p)}" for p in r.partial)])
