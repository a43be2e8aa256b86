"""The MCP server over the library: its wiring (FastMCP's MCPServer and the tools), stdio and Streamable HTTP.

    server, tools = build_server(repo, settings)   # seven tools; opens nothing until the first call
    serve_stdio(repo, settings)                     # what `codeqa mcp` runs (an agent starts it as a child)
    host, port = http_address("127.0.0.1:8765", token)
    serve_http(repo, settings, host, port, token)   # Streamable HTTP at /mcp, `Authorization: Bearer <token>`
    serve_stdio(repo, settings, watch)              # --watch: `watch(indexer)` re-indexes saves through its update()

The tools are tools.py (what each does), over reader.py (the one Retriever they share, path checks)
and the server's background index runs (indexing/background.py); what they return is schemas.py.
"""

from __future__ import annotations

import hmac
import inspect
import signal
import socket
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from .. import __version__
from ..config import Settings
from ..errors import CodeQAError, UsageError
from ..indexing.background import BackgroundIndexer
from .tools import RepositoryTools

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
# --watch beside the server: given the tools' own indexer, a context manager that calls its update() after saves
Watch = Callable[[BackgroundIndexer], AbstractContextManager]

INSTRUCTIONS = """codeqa answers questions about one repository from its index (a tree-sitter symbol graph and
hybrid search). Start with search_code (a description or identifiers) or find_symbol (a name), follow
find_references for every use of a symbol, read_code to read lines, ask for a cited answer. Locations are
path:Lstart-Lend, relative to the repository. If a tool says the index is missing or stale, call reindex: it
returns once the index is searchable and embeds the rest in the background (index_status shows how far)."""


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
        with watch(tools.indexer) if watch else nullcontext():
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
        with watch(tools.indexer) if watch else nullcontext():
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
