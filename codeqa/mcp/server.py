"""The MCP server over the library: its wiring (FastMCP's MCPServer and the tools), stdio and Streamable HTTP.

    server, tools = build_server(repo, settings)   # eight tools; opens nothing until the first call
    serve_stdio(repo, settings)                     # what `codeqa mcp` runs (an agent starts it as a child)
    host, port = http_address("127.0.0.1:8765", token)
    serve_http(repo, settings, host, port, token)   # Streamable HTTP at /mcp, `Authorization: Bearer <token>`
    serve_stdio(repo, settings, watch)              # --watch: `watch(indexer)` re-indexes saves through its update()
    serve_stdio(workspace, settings)                # `codeqa mcp --workspace NAME`: every repository, one process

The tools are tools.py (what each does), over reader.py (the one Retriever they share, path checks)
and the server's background index runs (indexing/background.py); what they return is schemas.py. Over a
workspace, workspace.py serves each repository's tools behind a `repository` argument (workspace_schemas.py).
"""

from __future__ import annotations

import hmac
import inspect
import signal
import socket
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from .. import __version__
from ..config import Settings
from ..errors import CodeQAError, UsageError
from ..indexing.background import BackgroundIndexer
from ..workspace import Workspace
from .tools import RepositoryTools
from .workspace import WorkspaceTools

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
# --watch beside the server: given the tools' own indexer, a context manager that calls its update() after saves
Watch = Callable[[BackgroundIndexer], AbstractContextManager]

INSTRUCTIONS = """codeqa answers questions about one repository from its index (a tree-sitter symbol graph and
hybrid search). Start with search_code (a description or identifiers) or find_symbol (a name), follow
find_references for every use of a symbol, read_code to read lines, ask for a cited answer. Locations are
path:Lstart-Lend, relative to the repository. If a tool says the index is missing or stale, call reindex: it
returns once the index is searchable and embeds the rest in the background (index_status shows how far)."""

WORKSPACE_INSTRUCTIONS = """codeqa answers questions about the repositories of workspace {name} ({names}), each from its
own index (a tree-sitter symbol graph and hybrid search). list_repositories says each one's folder, the commit its
index reflects and whether it is fresh. search_code and find_references cover every repository unless `repository`
names one, and every result names its repository; find_symbol, read_code, ask, index_status and reindex take
`repository`. Locations are path:Lstart-Lend, relative to the repository named beside them: pass both back to
read_code. If a tool says an index is missing or stale, call reindex with that repository: it returns once the
index is searchable and embeds the rest in the background (index_status shows how far)."""
# every tool, in the order tools/list gives them
TOOL_NAMES = ("search_code", "find_symbol", "find_references", "read_code", "ask", "index_status", "reindex",
              "list_repositories")
Source = Path | Workspace  # one repository (`--repo`), or every repository of a workspace (`--workspace`)


def build_server(source: Source, settings: Settings) -> tuple[MCPServer, RepositoryTools | WorkspaceTools]:
    """The MCP server over `source`'s index (or each of its repositories' indexes), and its tools (close them
    when the server stops)."""
    tools: RepositoryTools | WorkspaceTools
    if isinstance(source, Workspace):
        tools = WorkspaceTools(source, settings)
        instructions, describe = WORKSPACE_INSTRUCTIONS.format(name=source.name, names=tools.names), tools.description
    else:
        tools = RepositoryTools(source, settings)
        instructions, describe = INSTRUCTIONS, lambda name: inspect.cleandoc(getattr(RepositoryTools, name).__doc__ or "")
    server = MCPServer("codeqa", version=__version__, instructions=instructions, log_level="WARNING")
    reading = ToolAnnotations(read_only_hint=True)
    writing = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)  # reindex: only the index
    for name in TOOL_NAMES:
        server.add_tool(getattr(tools, name), description=describe(name),
                        annotations=writing if name == "reindex" else reading)
    return server, tools


def _watching(tools: RepositoryTools | WorkspaceTools, watch: Watch | None) -> ExitStack:
    """`watch` beside each repository's index runs (none without it)."""
    stack = ExitStack()
    try:
        for indexer in tools.indexers if watch else ():
            stack.enter_context(watch(indexer))
    except BaseException:
        stack.close()
        raise
    return stack


def serve_stdio(source: Source, settings: Settings, watch: Watch | None = None) -> None:
    """Serve over stdin/stdout until the client closes them (how agents start `codeqa mcp`). With `watch`,
    saves are re-indexed by the tools' own index runs: they take turns with reindex and stop its background
    embedding rather than wait hours for the index lock."""
    server, tools = build_server(source, settings)
    try:
        with _watching(tools, watch):
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


def serve_http(source: Source, settings: Settings, host: str, port: int, token: str | None,
               listening: Callable[[str], None] = lambda url: None, watch: Watch | None = None) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp until interrupted; with a token, every request needs
    `Authorization: Bearer <token>`. `listening(url)` is called once the port is bound; `watch` as in serve_stdio."""
    import anyio
    import uvicorn

    server, tools = build_server(source, settings)
    app: Any = server.streamable_http_app(host=host)
    if token:
        app = BearerTokenGate(app, token)
    sock = _listen(host, port)  # bound here, so a port in use is an error we word (uvicorn would exit the process)
    listening(f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    try:
        with _watching(tools, watch):
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
