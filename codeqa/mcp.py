"""MCP server over the library: coding agents search, walk the symbol graph and ask with cited answers.

    server, tools = build_server(repo, settings)   # seven tools; opens nothing until the first call
    serve_stdio(repo, settings)                     # what `codeqa mcp` runs (an agent starts it as a child)
    host, port = http_address("127.0.0.1:8765", token)
    serve_http(repo, settings, host, port, token)   # Streamable HTTP at /mcp, `Authorization: Bearer <token>`
    serve_stdio(repo, settings, watch)              # --watch: `watch(update)` re-indexes saves through `update`

Every tool returns compact text for the model and structured content that its output schema
(the pydantic model in its return annotation) describes. What an agent can act on (no index yet,
an index to rebuild, an unknown symbol, a path outside the index) comes back as a tool error
(isError) saying what to do next. The code an agent sees is redacted as the index redacts it: the
agent is a model, and a file's credentials never go into a prompt.

One Retriever stays open for the server's life. It opens on the first call, so `tools/list` works
before any index exists, and the embedding model loads on the first search, not at startup.

reindex returns once phase 1 of the run is committed (search by keywords and the graph, references,
ask) and phase 2, the dense vectors, goes on in a thread of the server (index_background.py): on a big
repository that is hours with the bundled CPU model, and an agent must not wait for it. index_status
says how far it is. A reindex (or a --watch run) meanwhile stops it after its batch in flight, indexes
what changed and starts it again; the server stopping stops it too. Nothing embedded is lost: each
batch is committed, and the next run (reindex, `codeqa index`) does what is left.
"""

from __future__ import annotations

import fnmatch
import hmac
import inspect
import os
import signal
import socket
import threading
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from . import __version__
from .answer import Answerer
from .config import Settings
from .errors import CodeQAError, IndexMismatchError, IndexMissingError, UsageError
from .index import IndexReport, index_status
from .index_background import BackgroundIndexer, EmbeddingProgress
from .query.retrieve import Retriever, group_references, semantic_note
from .mcp_results import (AnswerResult, CitationInfo, CodeLines, EmbeddingInfo, EvidenceInfo, ReferenceSite, ReferencesResult,
                          ReindexResult, SearchHit, SearchResult, StatusResult, SymbolResult, _answer_text,
                          _references_text, _reindex_text, _result, _span, _status_text, _symbol_info, _symbol_text)
from .types import Hit

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
MAX_READ_LINES = 400  # one read_code call: a long file comes in pieces, not as one flood of context
SEARCH_POOL = 50  # a filtered search keeps what matches among at least this many results
LISTED_FILES = 50  # changed files and skipped paths named in a status or reindex summary
# what a stopping server gives the background embedding to finish its batch: under the 2 s an MCP
# client waits for a stdio server to exit before it kills it (a batch cut off is re-done by the next run)
STOP_WAIT_SECONDS = 1.5
# --watch beside the server: given the tools' own index run, a context manager that calls it after saves
Watch = Callable[[Callable[[], IndexReport]], AbstractContextManager]
ReferenceKind = Literal["call", "instantiation", "type", "import", "inheritance", "attribute"]

INSTRUCTIONS = """codeqa answers questions about one repository from its index (a tree-sitter symbol graph and
hybrid search). Start with search_code (a description or identifiers) or find_symbol (a name), follow
find_references for every use of a symbol, read_code to read lines, ask for a cited answer. Locations are
path:Lstart-Lend, relative to the repository. If a tool says the index is missing or stale, call reindex: it
returns once the index is searchable and embeds the rest in the background (index_status shows how far)."""


@contextmanager
def _as_tool_errors() -> Iterator[None]:
    """A codeqa error becomes a tool error the agent reads; the ones an index run fixes say to call reindex."""
    try:
        yield
    except (IndexMissingError, IndexMismatchError) as exc:
        raise ToolError(f"{exc} An agent can call the reindex tool to do it.") from exc
    except CodeQAError as exc:
        raise ToolError(str(exc)) from exc


class RepositoryTools:
    """The tools over one repository's index. Calls take turns: the SDK runs each on a worker thread,
    and one Retriever (with its caches) serves them all."""

    def __init__(self, repo: Path, settings: Settings):
        self.repo = Path(repo).resolve()
        self.settings = settings
        self.indexer = BackgroundIndexer(self.repo, settings)  # the server's index runs: reindex and --watch
        self._lock = threading.Lock()
        self._retriever: Retriever | None = None

    @contextmanager
    def _opened(self) -> Iterator[Retriever]:
        with self._lock, _as_tool_errors():
            if self._retriever is None:
                self._retriever = Retriever.open(self.repo, self.settings)
            else:  # another process (`codeqa index`, --watch) may have finished a run: no answer from before it
                self._retriever.refresh()
            yield self._retriever

    def close(self) -> None:
        self.indexer.close(wait=STOP_WAIT_SECONDS)  # not under the lock: a stop must not wait for a call
        with self._lock:
            self._drop_retriever()

    def _drop_retriever(self) -> None:
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None

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
        with self._opened() as retriever:
            coverage = retriever.semantic_coverage()
            hits = retriever.search(query, top_k=max(limit * 5, SEARCH_POOL) if filtered else limit)
            hits = [h for h in hits if _matches(h, path_glob, language)][:limit]
            found = [SearchHit(location=_span(h.path, h.start_line, h.end_line), path=h.path, start_line=h.start_line,
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
        return _result(f"{text}\n{note}" if note else text,
                       SearchResult(query=query, hits=found, post_filtered=filtered, semantic_search=round(coverage, 4)))

    def find_symbol(self, name: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")]
                    ) -> Annotated[CallToolResult, SymbolResult]:
        """Where a symbol is defined: qualified name, kind, path:Lstart-Lend, signature and the docstring's first
        line. Every match is listed (the same name may be defined in several files)."""
        with self._opened() as retriever:
            symbols = retriever.find_symbols(name)
        if not symbols:
            raise self._unknown(name)
        found = [_symbol_info(s) for s in symbols]
        text = f"{len(found)} definition(s) of {name}:\n" + "\n".join(_symbol_text(d) for d in found)
        return _result(text, SymbolResult(name=name, definitions=found))

    def find_references(self, symbol: Annotated[str, Field(min_length=1, description="`Name`, `Class.method` or `path:Name`")],
                        kinds: Annotated[list[ReferenceKind] | None, Field(description="only these kinds of reference")] = None,
                        limit: Annotated[int, Field(ge=1, le=5000)] = 200,
                        ) -> Annotated[CallToolResult, ReferencesResult]:
        """Every reference site of a symbol from the resolved symbol graph (calls, instantiations, types,
        imports, inheritance, attributes), grouped by file, each with its kind, confidence (exact, likely,
        name-only) and line. `total` counts them all when `limit` cuts the list."""
        with self._opened() as retriever:
            definitions = retriever.find_symbols(symbol)
            if not definitions:
                raise self._unknown(symbol)
            refs = [r for r in retriever.store.references_to([s.id for s in definitions]) if not kinds or r.kind in kinds]
            refs = sorted(refs, key=lambda r: (r.path, r.line, r.column))
            shown = refs[:limit]
            enclosing = retriever.symbols_by_id(r.enclosing_symbol_id for r in shown if r.enclosing_symbol_id)
        files = {path: [ReferenceSite(line=r.line, column=r.column, kind=r.kind, confidence=r.confidence, text=r.line_text.strip(),
                                      enclosing=enclosing[r.enclosing_symbol_id].qualified_name
                                      if r.enclosing_symbol_id in enclosing else None) for r in group]
                 for path, group in group_references(shown)}
        result = ReferencesResult(symbol=symbol, definitions=[_symbol_info(s) for s in definitions], total=len(refs),
                                  shown=len(shown), files=files)
        return _result(_references_text(result, kinds), result)

    def read_code(self, path: Annotated[str, Field(min_length=1, description="relative to the repository, as the other tools print it")],
                  start_line: Annotated[int, Field(ge=1)] = 1,
                  end_line: Annotated[int | None, Field(ge=1, description="inclusive; default: start_line + 399")] = None,
                  ) -> Annotated[CallToolResult, CodeLines]:
        """Lines of an indexed file, numbered, credentials redacted as the index holds them; at most 400
        lines a call. Only files in the index can be read."""
        with self._opened() as retriever:
            rel = self._indexed_path(retriever, path)
            lines = retriever.redacted_lines(rel)
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
        text = f"{_span(rel, start_line, end)} ({len(lines)} lines in the file)\n{numbered.rstrip()}{more}"
        return _result(text, CodeLines(path=rel, start_line=start_line, end_line=end, total_lines=len(lines), text="".join(body)))

    def ask(self, question: Annotated[str, Field(description="a question about the code, e.g. \"How is Foo used?\"")],
            ctx: Context | None = None) -> Annotated[CallToolResult, AnswerResult]:
        """An answer to a question about the code, with path:Lstart-Lend citations checked against the evidence
        (from the configured LLM, or extractive without one), and the evidence it rests on for reading further.
        A local model may read for minutes first: progress notifications say how far it is."""
        report = _progress_reporter(ctx)
        with self._opened() as retriever:
            answer = Answerer(retriever, self.settings).answer(question, on_progress=report)
        prompt = answer.prompt
        result = AnswerResult(
            answer=answer.answer, mode=answer.mode, route=answer.route, model=answer.model, error=answer.error,
            citations=[CitationInfo(location=_span(c.path, c.start_line, c.end_line) if c.start_line else c.path,
                                    verified=c.verified, reason=c.reason, stale=c.stale, attributed=c.attributed)
                       for c in answer.citations],
            evidence=[EvidenceInfo(location=s.label, reason=s.reason) for s in answer.snippets],
            grounded=answer.grounded, cut=answer.cut, prompt_tokens=prompt.tokens if prompt else None,
            window=prompt.window if prompt else None, left_out=list(prompt.left_out) if prompt else [],
            unknown_names=list(answer.unknown_names))
        return _result(_answer_text(result), result)

    def index_status(self) -> Annotated[CallToolResult, StatusResult]:
        """What the index holds (files, chunks, symbols, when it was last built), which files changed since, how
        much of it semantic search covers, and how far the background embedding that reindex started has come."""
        with self._opened() as retriever:
            status = index_status(self.repo, self.settings, retriever.store)
        result = StatusResult(repo=str(self.repo), files=status.files, chunks=status.chunks, symbols=status.symbols,
                              last_indexed=status.last_indexed, complete=status.complete, stale=status.stale,
                              semantic_search=round(status.semantic, 4),
                              changed=list(status.changed[:LISTED_FILES]), deleted=list(status.deleted[:LISTED_FILES]),
                              embedding=_embedding_info(self.indexer.progress()))
        return _result(_status_text(result), result)

    def reindex(self) -> Annotated[CallToolResult, ReindexResult]:
        """Bring the index up to date with the files on disk (incremental: only changed files are parsed) and
        return as soon as search_code, find_symbol, find_references and ask work on it, by keywords and the
        graph. The chunks' dense vectors are then embedded in the background (hours for a big repository on
        a CPU): semantic search fills in meanwhile and index_status shows how far it is. A reindex while that
        runs stops it after the batch in flight, indexes what changed, and starts it again; nothing is lost.
        Other calls wait until the index is searchable, not for the embedding."""
        with self._lock, _as_tool_errors():
            self._drop_retriever()  # the next call opens the new run
            report = self.indexer.update()
            progress = self.indexer.progress() if report.chunks_deferred else None
        d = report.to_dict()
        # the report's other fields (every skipped path, timings by stage) are left out: ReindexResult ignores them
        result = ReindexResult.model_validate({
            **d, "partial": [f"{p['path']}: {p['reason']}" for p in d["partial"][:LISTED_FILES]],
            "semantic_search": round(1 - report.chunks_deferred / report.chunks, 4) if report.chunks else 1.0,
            "embedding": _embedding_info(progress)})
        return _result(_reindex_text(result), result)

    def _indexed_path(self, retriever: Retriever, path: str) -> str:
        """`path` as the index names it, or a tool error: outside the repository, or not indexed."""
        joined = Path(os.path.normpath(retriever.repo / path))  # lexical, so an indexed symlink keeps its own name
        resolved = joined.resolve()  # and a symlink must not lead out of it
        inside = joined.is_relative_to(retriever.repo) and (resolved == retriever.repo or retriever.repo in resolved.parents)
        if not inside:
            raise ToolError(f"{path} is outside the repository {retriever.repo}; pass a path relative to it, "
                            "as search_code and find_symbol print them.")
        rel = joined.relative_to(retriever.repo).as_posix()
        if rel not in retriever.indexed_paths:
            raise ToolError(f"{rel} is not in the index of {retriever.repo}: codeqa reads source files it indexed (not "
                            "ignored, secret or binary ones). search_code and find_symbol print indexed paths; a new file "
                            "needs reindex first.")
        return rel


def _embedding_info(progress: EmbeddingProgress | None) -> EmbeddingInfo | None:
    if progress is None:
        return None
    return EmbeddingInfo(state=progress.state, chunks_embedded=progress.chunks_embedded, chunks=progress.chunks,
                         error=progress.error, seconds=round(progress.seconds, 1))


def _matches(h: Hit, path_glob: str | None, language: str | None) -> bool:
    return ((not path_glob or fnmatch.fnmatchcase(h.path, path_glob))
            and (not language or (h.language or "").lower() == language.lower()))


def _preview(retriever: Retriever, h: Hit) -> str:
    lines = retriever.redacted_lines(h.path) or []
    first = next((line.strip() for line in lines[h.start_line - 1:h.end_line] if line.strip()), "")
    return first[:160]


# ---- the server and its transports ---------------------------------------------------------------

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


def build_server(repo: Path, settings: Settings) -> tuple[MCPServer, RepositoryTools]:
    """The MCP server over `repo`'s index, and its tools (close them when the server stops)."""
    tools = RepositoryTools(repo, settings)
    server = MCPServer("codeqa", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    reading = ToolAnnotations(read_only_hint=True)
    writing = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)  # reindex: only the index
    for tool in (tools.search_code, tools.find_symbol, tools.find_references, tools.read_code, tools.ask, tools.index_status,
                 tools.reindex):
        server.add_tool(tool, description=inspect.cleandoc(tool.__doc__ or ""),
                        annotations=writing if tool == tools.reindex else reading)
    return server, tools


def serve_stdio(repo: Path, settings: Settings, watch: Watch | None = None) -> None:
    """Serve over stdin/stdout until the client closes them (how agents start `codeqa mcp`). With `watch`,
    saves are re-indexed by the tools' own index runs: they take turns with reindex and stop its background
    embedding rather than wait hours for the index lock."""
    server, tools = build_server(repo, settings)
    try:
        with watch(tools.indexer.update) if watch else nullcontext():
            server.run("stdio")
    finally:
        tools.close()


def http_address(spec: str, token: str | None) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) -> (host, port). Anything but localhost needs a token: the tools
    read the repository's code."""
    host, _, port = spec.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {spec!r}: expected HOST:PORT, e.g. 127.0.0.1:8765.")
    if host not in LOCAL_HOSTS and not token:
        raise UsageError(f"Refusing to serve on {host} without a token: anyone who can reach it could read the code. "
                         "Pass --token (or set CODEQA_MCP_TOKEN), or bind to 127.0.0.1.")
    return host, int(port)


def serve_http(repo: Path, settings: Settings, host: str, port: int, token: str | None,
               listening: Callable[[str], None] = lambda url: None, watch: Watch | None = None) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp until interrupted; with a token, every request needs
    `Authorization: Bearer <token>`. `listening(url)` is called once the port is bound; `watch` as in serve_stdio."""
    import anyio
    import uvicorn

    server, tools = build_server(repo, settings)
    app: Any = server.streamable_http_app(host=host)
    if token:
        app = BearerTokenGate(app, token)
    sock = _listen(host, port)  # bound here, so a port in use is an error we word (uvicorn would exit the process)
    listening(f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    try:
        with watch(tools.indexer.update) if watch else nullcontext():
            anyio.run(lambda: http.serve(sockets=[sock]))
        # uvicorn shuts down on Ctrl-C, then raises the signal again for the caller; that second SIGINT
        # sometimes lands after the event loop has finished and is lost (the process then exited 0 in
        # the test suite): a shutdown it owes to SIGINT is an interrupt here, whatever the timing
        if signal.SIGINT in getattr(http, "_captured_signals", ()):
            raise KeyboardInterrupt
    finally:
        sock.close()
        tools.close()


def _listen(host: str, port: int) -> socket.socket:
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except OSError as exc:
        raise UsageError(f"--http {host}:{port}: cannot resolve {host} ({exc.strerror or exc}).") from exc
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CodeQAError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --http HOST:PORT.") from exc
    return sock


class BearerTokenGate:
    """ASGI wrapper: an HTTP request without `Authorization: Bearer <token>` gets 401 (compared in constant time)."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, self._expected):
                body = b'{"error": "unauthorized: send the header Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                        (b"www-authenticate", b'Bearer realm="codeqa"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
