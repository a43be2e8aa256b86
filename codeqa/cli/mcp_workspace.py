"""`codeqa mcp --workspace NAME`: one MCP server for every repository of a workspace (stdio, or --http), the
shell over codeqa/mcp/workspace.py. --watch watches each repository, re-indexing through the server's own runs."""

from __future__ import annotations

import sys
from pathlib import Path

from ..config import Settings
from ..errors import UsageError
from ..workspace import load_workspace
from .commands import _watcher
from .workspace import check_workspace_settings


def workspace_mcp(args, settings: Settings) -> int:
    from ..mcp import http_address, serve_http, serve_stdio

    if args.repo != Path("."):  # the tools take `repository`; one repository alone is `--repo PATH` without a workspace
        raise UsageError(f"Give --repo PATH or --workspace NAME, not both ({args.repo} and {args.workspace}); "
                         "over a workspace, each tool takes a `repository` argument.")
    check_workspace_settings(args, settings)
    workspace = load_workspace(args.workspace, settings)
    if not workspace.repositories:
        raise UsageError(f"Workspace {workspace.name!r} has no repositories yet; add one with "
                         f"`codeqa workspace add {workspace.name} PATH`.")
    token = args.token or settings.mcp_token
    address = http_address(args.http, token) if args.http else None
    # each repository's watcher re-indexes through its own runs, which take turns with the reindex tool
    watch = ((lambda indexer: _watcher(indexer.repo, indexer.settings, index=indexer.update, resident=indexer.watched()))
             if args.watch else None)
    if address is None:
        serve_stdio(workspace, settings, watch)  # stdout is the protocol: nothing else may print to it
        return 0

    def listening(url: str) -> None:
        print(f"codeqa MCP on {url} for workspace {workspace.name} ({', '.join(r.name for r in workspace.repositories)})"
              + (" (bearer token required)" if token else ""), file=sys.stderr, flush=True)

    serve_http(workspace, settings, *address, token, listening, watch)
    return 0
