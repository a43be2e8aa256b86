"""What the MCP tools return: one pydantic model per tool (its output schema, sent as structured content)
and the compact text an agent reads beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from ..query.lookup import ReferenceRecord
from ..store import semantic_search_at
from ..types import Symbol, span_label

if TYPE_CHECKING:
    from ..index_background import EmbeddingProgress


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


class ReferenceSite(BaseModel):
    line: int
    column: int
    kind: str
    confidence: str = Field(description="exact | likely | name-only")
    text: str
    enclosing: str | None = Field(description="qualified name of the symbol the reference is in")


class ReferencesResult(BaseModel):
    symbol: str
    definitions: list[SymbolInfo]
    total: int = Field(description="every matching reference site, also those past the limit")
    shown: int
    files: dict[str, list[ReferenceSite]] = Field(description="path -> its reference sites, in line order")


class CodeLines(BaseModel):
    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str = Field(description="the lines as indexed (credentials redacted)")


class CitationInfo(BaseModel):
    location: str
    verified: bool
    reason: str
    stale: bool = Field(description="the file changed since it was indexed: the cited lines may say something else")
    attributed: bool = Field(False, description="not cited by the model: an uncited sentence shares its code words with these lines")


class EvidenceInfo(BaseModel):
    location: str
    reason: str


class AnswerResult(BaseModel):
    answer: str
    mode: str = Field(description="llm | extractive")
    route: str = Field(description="usage | relationship | search")
    model: str | None
    error: str | None = Field(description="why the LLM failed, when it did (the answer is then extractive or cut)")
    citations: list[CitationInfo]
    evidence: list[EvidenceInfo] = Field(description="the snippets the answer was built from")
    grounded: bool = Field(True, description="some verified evidence supports the answer (a citation, cited or attributed)")
    cut: str | None = Field(None, description="why the answer stopped early: length (its token limit) | repeating | error")
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
    last_indexed: str | None
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
        files.setdefault(r.path, []).append(ReferenceSite(line=r.line, column=r.column, kind=r.kind, confidence=r.confidence,
                                                          text=r.text.strip(), enclosing=r.enclosing))
    return files


def embedding_info(progress: "EmbeddingProgress | None") -> EmbeddingInfo | None:
    if progress is None:
        return None
    return EmbeddingInfo(state=progress.state, chunks_embedded=progress.chunks_embedded, chunks=progress.chunks,
                         error=progress.error, seconds=round(progress.seconds, 1))


def symbol_text(d: SymbolInfo) -> str:
    lines = [f"{d.location}  {d.kind} {d.qualified_name}", *(["  " + d.signature.splitlines()[0]] if d.signature else []),
             *([f'  "{d.doc}"'] if d.doc else [])]
    return "\n".join(lines)


def references_text(r: ReferencesResult, kinds: list[str] | None) -> str:
    where = ", ".join(d.location for d in r.definitions)
    scope = f" of kind {', '.join(kinds)}" if kinds else ""
    lines = [f"{r.symbol} (defined at {where}): {r.total} reference(s){scope}"]
    if r.shown < r.total:
        lines[0] += f"; the first {r.shown} shown (raise limit, or pass kinds, to see the others)"
    for path, sites in r.files.items():
        lines += [path, *(f"  L{s.line:<5} {s.kind:<13} {s.confidence:<9} {s.text}" for s in sites)]
    return "\n".join(lines)


def answer_text(a: AnswerResult) -> str:
    parts = [a.answer.rstrip()]
    if a.error:
        parts.append(f"(the LLM failed: {a.error})")
    if a.cut:
        parts.append({"length": "(the answer is incomplete: it reached its token limit)",
                      "repeating": "(the answer is incomplete: the model was repeating itself)"}.get(
                          a.cut, "(the answer is incomplete: the stream broke)"))
    if a.mode == "llm" and not a.grounded:
        parts.append("(no verified evidence supports this answer: treat it as ungrounded)")
    if a.unknown_names:
        parts.append("Names the index does not know: " + ", ".join(a.unknown_names))
    if a.left_out:
        parts.append(f"Left out to fit the model's window ({a.prompt_tokens} of {a.window} tokens): " + "; ".join(a.left_out))
    if a.citations:
        parts.append("Citations:\n" + "\n".join(f"  {'~' if c.attributed else '✓' if c.verified else '✗'} {c.location}"
                                                 + (" (attributed)" if c.attributed else "")
                                                 + ("" if c.verified else f" (unverified: {c.reason})")
                                                 + (" (stale: the file changed since indexed)" if c.stale else "")
                                                 for c in a.citations))
    if a.evidence:
        parts.append("Evidence (read_code reads more):\n" + "\n".join(f"  {e.location} ({e.reason})" for e in a.evidence))
    return "\n\n".join(parts)


def status_text(s: StatusResult) -> str:
    text = (f"Index of {s.repo}: {s.files} files, {s.chunks} chunks, {s.symbols} symbols; "
            f"last indexed {s.last_indexed or 'never completed'}.")
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
        listed = ", ".join(s.changed + [f"{p} (deleted)" for p in s.deleted])
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
    return "\n".join([text, *r.notes, *(f"partially parsed: {p}" for p in r.partial)])
