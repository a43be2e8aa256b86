"""The MCP shell: coding agents search, walk the symbol graph, read code and ask with cited answers.

    server.py   the MCPServer wiring, stdio and Streamable HTTP (bearer token), `codeqa mcp`
    tools.py    the tools over one repository (RepositoryTools); their docstrings are what an agent reads
    workspace.py  the same tools over every repository of a workspace (WorkspaceTools), and list_repositories
    workspace_schemas.py  what they return that names a repository
    reader.py   the one Retriever the tools share, their turns on it, the paths an agent may read
    schemas.py  each tool's result model (its output schema) and the compact text beside it
    pages.py    the 4 KB page: how much of a list or an answer fits, and offset for the rest
"""

from __future__ import annotations

from .server import BearerTokenGate, build_server, http_address, serve_http, serve_stdio
from .tools import RepositoryTools
from .workspace import WorkspaceTools

__all__ = ["build_server", "serve_stdio", "serve_http", "http_address", "BearerTokenGate", "RepositoryTools",
           "WorkspaceTools"]
