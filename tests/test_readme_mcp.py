"""The README's MCP snippets, as a new user copies them (issue 64): every stdio snippet names real `codeqa mcp`
flags, and the "any MCP client" snippet, run as written by the MCP SDK's own client against an indexed fixture
repository, lists the tools and answers a call. Embeddings come from the local stub server, as in test_mcp.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from codeqa.cli import build_parser
from conftest import copy_fixture_repo
from llm_stub import LLMStub

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"search_code", "find_symbol", "find_references", "read_code", "ask", "index_status", "reindex"}
# the console script the README tells a new user to name: the one installed beside this interpreter
CODEQA = Path(sys.executable).parent / "codeqa"


def readme_blocks(language: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def stdio_servers() -> list[dict]:
    """Every codeqa server the README's JSON snippets start over stdio (Cursor's, VS Code's, any client's)."""
    servers = []
    for block in readme_blocks("json"):
        config = json.loads(block)
        for table in ("mcpServers", "servers"):
            if "codeqa" in config.get(table, {}) and "command" in config[table]["codeqa"]:
                servers.append(config[table]["codeqa"])
    return servers


def command_lines() -> list[list[str]]:
    """The `codeqa mcp …` commands of the README's shell snippets, `claude mcp add … -- codeqa mcp …` included."""
    lines = []
    for block in readme_blocks("bash"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if " -- codeqa mcp " in line:
                line = line.split(" -- ", 1)[1]
            if line.startswith("codeqa mcp "):
                lines.append(shlex.split(line)[1:])
    return lines


def parses_as_codeqa(argv: list[str]) -> None:
    """argparse exits 2 on a flag `codeqa mcp` does not have; a snippet must never do that."""
    args = build_parser().parse_args([a.replace("${workspaceFolder}", "/ws") for a in argv])
    assert args.command == "mcp", argv


def test_every_readme_stdio_snippet_names_real_codeqa_mcp_flags():
    servers = stdio_servers()
    assert len(servers) >= 3, "the README lost its Cursor, VS Code or any-client snippet"
    for server in servers:
        assert Path(server["command"]).name == "codeqa", server
        parses_as_codeqa(server["args"])
    lines = command_lines()
    assert len(lines) >= 2, "the README lost its Claude Code or HTTP snippet"
    for argv in lines:
        parses_as_codeqa(argv)


def any_client_snippet() -> dict:
    """The snippet for any MCP client: the command is the installed script's full path, as a new user's agent
    (which does not see the virtualenv on its PATH) needs it."""
    full = [s for s in stdio_servers() if Path(s["command"]).is_absolute()]
    assert full, "the README has no stdio snippet that names codeqa by its full path"
    return full[0]


def test_the_any_client_snippet_connects_as_written(tmp_path):
    snippet = any_client_snippet()
    assert snippet["command"].endswith("/.venv/bin/codeqa") and snippet["args"][:1] == ["mcp"]
    repo = copy_fixture_repo(tmp_path / "repo")
    with LLMStub() as stub:
        # the snippet has no --index-dir: the index lives in the user's cache folder, as `codeqa index` leaves it
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("CODEQA_", "QDRANT_"))},
               "XDG_CACHE_HOME": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
               "CODEQA_EMBEDDINGS": "openai:stub-embed", "OPENAI_BASE_URL": stub.base_url,
               "OPENAI_API_KEY": "test-key", "NO_PROXY": "127.0.0.1,localhost"}
        done = subprocess.run([str(CODEQA), "index", str(repo)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        args = [str(repo) if a == "/path/to/repo" else a for a in snippet["args"]]
        client = Client(StdioServerParameters(command=str(CODEQA), args=args, env=env), read_timeout_seconds=60)

        async def session():
            with anyio.fail_after(120):
                async with client:
                    assert {tool.name for tool in (await client.list_tools()).tools} >= TOOLS
                    result = await client.call_tool("find_references", {"symbol": "EncoderClass"})
                    text = "\n".join(block.text for block in result.content)
                    assert not result.is_error, text
                    assert "app/main.py" in text and "EncoderClass" in text

        anyio.run(session)


@pytest.mark.parametrize("flag", ["--no-such-flag"])
def test_a_wrong_flag_in_a_snippet_would_fail_here(flag, capsys):
    """The check above can fail: a flag `codeqa mcp` lacks makes argparse exit 2."""
    with pytest.raises(SystemExit) as exc:
        parses_as_codeqa(["mcp", "--repo", "/r", flag])
    assert exc.value.code == 2
    capsys.readouterr()
