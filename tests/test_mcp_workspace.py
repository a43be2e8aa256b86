"""`codeqa mcp --workspace W` as coding agents meet it (issue 66, item 4): one server process for every repository
of a workspace, driven by the MCP SDK's own client over stdio and Streamable HTTP. A workspace of two fixture
repositories (`shop`, the fixture repo in git; `cars`, the pyrefs fixture plus a `tokenize` of its own), indexed
by `codeqa index --workspace`; embeddings and the LLM come from the local stub server, as in test_mcp.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from conftest import FIXTURES, copy_fixture_repo
from llm_stub import LLMStub
from test_mcp import PAGE_BYTES, TOOLS, codeqa, free_port, ok, refused, run_session, text_of, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
WORDS = '"""Words of a car\'s manual."""\n\n\ndef tokenize(text):\n    """Split a manual into words."""\n    return text.split()\n'
MANUAL = "from pkg.words import tokenize\n\n\ndef pages(manual):\n    return len(tokenize(manual))\n\n\n" \
         "def chapters(manual):\n    return [tokenize(part) for part in manual.split('##')]\n"


@pytest.fixture(scope="module")
def stub():
    with LLMStub() as server:
        yield server


@pytest.fixture(scope="module")
def team(tmp_path_factory, stub):
    """(environment, shop, cars, workspaces dir): workspace `team` of two indexed repositories, and workspace
    `mixed` of shop and `late`, a repository not indexed yet."""
    root = tmp_path_factory.mktemp("mcpws")
    base = {k: v for k, v in os.environ.items()
            if k not in ("QDRANT_URL", "CODEQA_INDEX_DIR", "CODEQA_MODEL", "CODEQA_MCP_TOKEN", "CODEQA_INDEX_NAME")}
    env = {**base, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-embed",
           "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test-key", "CODEQA_MODEL": "stub-model",
           "NO_PROXY": "127.0.0.1,localhost", "CODEQA_WORKSPACES_DIR": str(root / "workspaces")}
    shop = copy_fixture_repo(root / "shop")
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "fixture")):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=shop, check=True,
                       capture_output=True)
    cars = shutil.copytree(FIXTURES / "pyrefs", root / "cars")
    (cars / "pkg" / "words.py").write_text(WORDS)
    (cars / "pkg" / "manual.py").write_text(MANUAL)
    late = copy_fixture_repo(root / "late")
    assert codeqa(env, "workspace", "add", "team", str(shop), str(cars)).returncode == 0
    assert codeqa(env, "workspace", "add", "mixed", str(shop), str(late)).returncode == 0
    done = codeqa(env, "index", "--workspace", "team")
    assert done.returncode == 0, done.stderr
    return env, shop, cars, late


def workspace_client(env: dict, name: str, *options: str) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeqa", "mcp", "--workspace", name, *options],
                                   env=env)
    return Client(params, read_timeout_seconds=60)


def small(result, content) -> None:
    """A page: its text and its structured content (as JSON) under 4 KB."""
    assert len(text_of(result).encode()) < PAGE_BYTES
    assert len(json.dumps(content, ensure_ascii=False).encode()) < PAGE_BYTES


def head_commit(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_one_server_serves_every_repository_and_names_each_result(team, stub):
    env, shop, cars, _ = team
    manual = (cars / "pkg" / "manual.py").read_text().splitlines(keepends=True)

    async def steps(client: Client):
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        for tool in listed:
            if tool.name != "list_repositories":
                assert "repository" in tool.input_schema["properties"], tool.name
                assert "shop" in tool.description and "cars" in tool.description, tool.name

        result, repositories = await ok(client, "list_repositories")
        small(result, repositories)
        assert repositories["workspace"] == "team"
        first, second = repositories["repositories"]
        assert (first["name"], first["path"], second["name"], second["path"]) == ("shop", str(shop), "cars", str(cars))
        assert (first["commit"], first["dirty"], first["freshness"]) == (head_commit(shop), False, "fresh")
        assert first["indexed"] and first["embeddings_complete"] and first["stale_files"] == 0
        assert (second["commit"], second["freshness"], second["indexed"]) == (None, "fresh", True)  # not in git
        assert f"shop  {head_commit(shop)[:12]}" in text_of(result) and "cars  commit unknown" in text_of(result)

        result, found = await ok(client, "search_code", query="tokenize", limit=20)
        small(result, found)
        assert {h["repository"] for h in found["hits"]} == {"shop", "cars"}
        assert found["repositories"] == ["shop", "cars"] and found["not_searched"] == []
        hit = next(h for h in found["hits"] if h["repository"] == "shop" and h["symbol"] == "tokenize")
        assert hit["location"] == "encoders/encoder.py:L33-L35" and hit["preview"] == "def tokenize(text):"
        assert "[shop] encoders/encoder.py:L33-L35  tokenize" in text_of(result)
        assert "[cars] pkg/words.py" in text_of(result)
        scores = [h["score"] for h in found["hits"]]
        assert scores == sorted(scores, reverse=True)  # one ranking, by score
        def embedded(text: str) -> int:
            return sum(r.path.endswith("/embeddings") and text in (r.body.get("input") or []) for r in stub.requests)

        _, both = await ok(client, "search_code", query="split a manual into words")
        assert {h["repository"] for h in both["hits"]} == {"shop", "cars"}
        assert embedded("split a manual into words") == 1  # one model reads for every repository: the query once
        _, only = await ok(client, "search_code", query="tokenize", repository="cars")
        assert only["hits"] and {h["repository"] for h in only["hits"]} == {"cars"} and only["repositories"] == ["cars"]

        # read_code round-trips a hit: its repository and its path as the hit names them
        hit = next(h for h in only["hits"] if h["path"] == "pkg/manual.py")
        result, code = await ok(client, "read_code", repository=hit["repository"], path=hit["path"],
                                start_line=hit["start_line"], end_line=hit["end_line"])
        assert code["repository"] == "cars" and code["path"] == "pkg/manual.py"
        assert code["text"] == "".join(manual[hit["start_line"] - 1:hit["end_line"]])
        assert text_of(result).startswith(f"[cars] pkg/manual.py:L{hit['start_line']}")
        message = await refused(client, "read_code", repository="shop", path="pkg/manual.py")  # not shop's file
        assert "[shop] pkg/manual.py is not in the index" in message

        result, refs = await ok(client, "find_references", symbol="tokenize")
        small(result, refs)
        assert list(refs["files"]) == ["shop", "cars"]  # grouped by repository, in the workspace's order
        assert set(refs["files"]["cars"]) == {"pkg/manual.py"} and len(refs["files"]["cars"]["pkg/manual.py"]) == 3
        assert "encoders/encoder.py" in refs["files"]["shop"] and "app/cli.py" in refs["files"]["shop"]
        summary = {r["repository"]: r for r in refs["repositories"]}
        assert summary["cars"]["definitions"] == ["pkg/words.py:L4-L6"] and summary["cars"]["total"] == 3  # an import, two calls
        assert refs["total"] == refs["shown"] == summary["shop"]["total"] + summary["cars"]["total"]
        text = text_of(result)
        assert text.index("[shop] defined at encoders/encoder.py:L33-L35") < text.index("[cars] defined at pkg/words.py")
        assert text.index("[shop] app/cli.py") < text.index("[cars] pkg/manual.py")
        _, one = await ok(client, "find_references", symbol="tokenize", repository="cars")
        assert list(one["files"]) == ["cars"] and one["total"] == 3
        _, engine = await ok(client, "find_references", symbol="Engine")  # defined in cars alone: shop says so
        assert list(engine["files"]) == ["cars"]
        assert "[shop] no symbol named Engine" in text_of(await client.call_tool("find_references", {"symbol": "Engine"}))

        for tool, arguments in (("find_symbol", {"name": "tokenize"}), ("read_code", {"path": "pkg/manual.py"}),
                                ("ask", {"question": "How is tokenize used?"}), ("index_status", {}), ("reindex", {})):
            message = await refused(client, tool, **arguments)
            assert "repository" in message and "shop, cars" in message and "list_repositories" in message, (tool, message)
            message = await refused(client, tool, repository="nope", **arguments)
            assert "No repository named 'nope'" in message and "shop, cars" in message, (tool, message)
        assert "No repository named 'nope'" in await refused(client, "search_code", query="x", repository="nope")

        result, symbol = await ok(client, "find_symbol", name="tokenize", repository="cars")
        assert symbol["repository"] == "cars" and [d["location"] for d in symbol["definitions"]] == ["pkg/words.py:L4-L6"]
        assert text_of(result).startswith("[cars] ")
        result, status = await ok(client, "index_status", repository="shop")
        assert status["repository"] == "shop" and status["repo"] == str(shop) and status["stale"] == 0
        stub.reply("tokenize splits text into words [1].")
        result, answer = await ok(client, "ask", question="How is tokenize used?", repository="cars")
        small(result, answer)
        assert answer["repository"] == "cars" and answer["evidence"]
        assert all(not e["location"].startswith("encoders/") for e in answer["evidence"])  # cars' own code only

    run_session(workspace_client(env, "team"), steps)


def test_a_repository_not_indexed_is_said_so_never_skipped_silently_and_over_http(team):
    env, shop, _, late = team
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "codeqa", "mcp", "--workspace", "mixed", "--http", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port, server)

        async def steps(client: Client):
            result, repositories = await ok(client, "list_repositories")
            fresh, missing = repositories["repositories"]
            assert (fresh["name"], fresh["freshness"]) == ("shop", "fresh")
            assert (missing["name"], missing["freshness"], missing["indexed"], missing["commit"]) == (
                "late", "not indexed", False, None)
            assert "reindex" in missing["note"] and "late  not indexed" in text_of(result)

            result, found = await ok(client, "search_code", query="tokenize")
            assert found["hits"] and {h["repository"] for h in found["hits"]} == {"shop"}
            assert [n["repository"] for n in found["not_searched"]] == ["late"]
            assert "No codeqa index" in found["not_searched"][0]["reason"]
            assert "Not searched: [late] No codeqa index" in text_of(result)
            result, refs = await ok(client, "find_references", symbol="tokenize")
            assert list(refs["files"]) == ["shop"] and "[late] not searched: No codeqa index" in text_of(result)
            message = await refused(client, "find_symbol", name="tokenize", repository="late")
            assert "[late] No codeqa index" in message and "reindex" in message

            _, report = await ok(client, "reindex", repository="late")
            assert report["repository"] == "late" and report["files"] > 5
            _, found = await ok(client, "find_symbol", name="tokenize", repository="late")
            assert found["definitions"][0]["location"] == "encoders/encoder.py:L33-L35"

        http_client = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(30, read=120))
        run_session(Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http_client),
                           read_timeout_seconds=60), steps)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_one_repository_lists_itself_and_keeps_its_tools(team):
    env, shop, _, _ = team

    async def steps(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert "repository" not in listed["find_symbol"].input_schema["properties"]  # as before workspaces
        _, repositories = await ok(client, "list_repositories")
        (only,) = repositories["repositories"]
        assert repositories["workspace"] is None
        assert (only["name"], only["path"], only["commit"], only["freshness"]) == ("shop", str(shop), head_commit(shop),
                                                                                   "fresh")
        _, found = await ok(client, "find_symbol", name="tokenize")
        assert "repository" not in found and found["definitions"][0]["location"] == "encoders/encoder.py:L33-L35"

    params = StdioServerParameters(command=sys.executable, args=["-m", "codeqa", "mcp", "--repo", str(shop)], env=env)
    run_session(Client(params, read_timeout_seconds=60), steps)


BUSY = "from pkg.words import tokenize\n" + "".join(
    f"\n\ndef handler_{i}(text):\n    return tokenize(text + ' handler {i} appends a sentence long enough to be wide')\n"
    for i in range(150))


def test_pages_across_repositories_fit_in_4kb_and_paging_returns_every_site(team, tmp_path):
    env, _, cars, _ = team
    busy = shutil.copytree(cars, tmp_path / "busy")
    (busy / "pkg" / "busy.py").write_text(BUSY)
    other = copy_fixture_repo(tmp_path / "other")
    (other / "app" / "busy.py").write_text(BUSY.replace("pkg.words", "encoders.encoder"))
    assert codeqa(env, "workspace", "add", "busy", str(busy), str(other)).returncode == 0
    assert codeqa(env, "index", "--workspace", "busy").returncode == 0
    listed = json.loads(codeqa(env, "refs", "tokenize", "--workspace", "busy", "--json").stdout)["references"]
    expected = sorted((r["repository"], r["path"], r["line"], r["column"]) for r in listed)
    assert len(expected) > 300

    async def steps(client: Client):
        sites, offset, pages = [], 0, 0
        while offset is not None:
            result, refs = await ok(client, "find_references", symbol="tokenize", offset=offset, limit=500)
            small(result, refs)
            sites += [(repository, path, r["line"], r["column"])
                      for repository, files in refs["files"].items() for path, found in files.items() for r in found]
            offset, pages = refs["page"]["next_offset"], pages + 1
        assert sorted(sites) == expected and len(sites) == len(expected) and pages > 6
        result, found = await ok(client, "search_code", query="handler appends a sentence", limit=50)
        small(result, found)
        assert found["page"]["next_offset"] == len(found["hits"]) < 50

    run_session(workspace_client(env, "busy"), steps)


def test_mcp_workspace_usage_errors(team):
    env, shop, _, _ = team
    done = codeqa(env, "mcp", "--workspace", "nowhere")
    assert done.returncode == 2 and "No workspace named 'nowhere'" in done.stderr and "Traceback" not in done.stderr
    done = codeqa(env, "mcp", "--workspace", "team", "--index-dir", str(shop))
    assert done.returncode == 2 and "index_dir" in done.stderr
    done = codeqa(env, "mcp", "--workspace", "team", "--repo", str(shop))
    assert done.returncode == 2 and "not both" in done.stderr


def test_watch_reindexes_a_save_in_each_repository(team, tmp_path):
    env, _, cars, _ = team
    first, second = copy_fixture_repo(tmp_path / "first"), shutil.copytree(cars, tmp_path / "second")
    assert codeqa(env, "workspace", "add", "watched", str(first), str(second)).returncode == 0
    assert codeqa(env, "index", "--workspace", "watched").returncode == 0

    async def found(client: Client, name: str, repository: str) -> dict:
        deadline = time.monotonic() + 60
        while True:
            result = await client.call_tool("find_symbol", {"name": name, "repository": repository})
            if not result.is_error:
                return result.structured_content
            assert time.monotonic() < deadline, f"--watch never indexed {name} in {repository}: {text_of(result)}"
            await anyio.sleep(0.2)

    async def steps(client: Client):
        await refused(client, "find_symbol", name="saved_in_first", repository="first")  # its reader is open
        (first / "app" / "saved.py").write_text("def saved_in_first():\n    return 1\n")
        (second / "pkg" / "saved.py").write_text("def saved_in_second():\n    return 2\n")
        assert (await found(client, "saved_in_first", "first"))["definitions"][0]["location"] == "app/saved.py:L1-L2"
        assert (await found(client, "saved_in_second", "second"))["definitions"][0]["location"] == "pkg/saved.py:L1-L2"

    run_session(workspace_client(env, "watched", "--watch"), steps)


def test_a_workspace_of_one_repository_needs_no_repository_argument(tmp_path):
    """In-process, before any index: the one repository is the default, and its errors name it."""
    from mcp.server.mcpserver.exceptions import ToolError

    from codeqa.config import Settings
    from codeqa.mcp import WorkspaceTools
    from codeqa.workspace import Repository, Workspace

    solo = copy_fixture_repo(tmp_path / "solo")
    tools = WorkspaceTools(Workspace("one", (Repository("solo", solo),), tmp_path / "one.toml"), Settings.load(env={}))
    try:
        with pytest.raises(ToolError, match=r"^\[solo\] No codeqa index"):
            tools.find_symbol("tokenize")
        assert "`repository` may be left out" in tools.description("read_code")
        (only,) = tools.list_repositories().structured_content["repositories"]
        assert (only["name"], only["freshness"], only["indexed"]) == ("solo", "not indexed", False)
    finally:
        tools.close()
