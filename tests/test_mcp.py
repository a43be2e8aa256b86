"""The MCP server as coding agents meet it: `codeqa mcp` started as a real process and driven by the MCP
SDK's own client, over stdio and over Streamable HTTP. Embeddings (and the LLM behind `ask`) come from
the local stub server, so that a server process starts in a second instead of loading the model."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from conftest import copy_fixture_repo
from llm_stub import LLMStub

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"search_code", "find_symbol", "find_references", "read_code", "ask", "index_status", "reindex",
         "list_repositories"}
FAKE_KEY = "sk-live-1234567890abcdefGHIJKLMN"
SERVICE = f'"""Service settings."""\n\nAPI_KEY = "{FAKE_KEY}"\nTIMEOUT = 30\n'
CALL_LIMIT_S = 120  # a whole session; a hung call fails the test instead of hanging it


@pytest.fixture(scope="module")
def stub():
    with LLMStub() as server:
        yield server


@pytest.fixture(scope="module")
def env(stub):
    """The children's environment: stub embeddings and LLM, nothing from the developer's own setup."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("QDRANT_URL", "CODEQA_INDEX_DIR", "CODEQA_MODEL", "CODEQA_MCP_TOKEN")}
    return {**base, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "CODEQA_EMBEDDINGS": "openai:stub-embed",
            "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test-key", "CODEQA_MODEL": "stub-model",
            "NO_PROXY": "127.0.0.1,localhost"}


def codeqa(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeqa", *argv], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def repo(tmp_path_factory, env):
    """An indexed copy of the fixture repo with one file holding a credential (read-only for the tests)."""
    repo = copy_fixture_repo(tmp_path_factory.mktemp("mcp") / "repo")
    (repo / "app" / "service.py").write_text(SERVICE)
    done = codeqa(env, "index", str(repo))
    assert done.returncode == 0, done.stderr
    return repo


def stdio_client(env: dict, repo: Path, *options: str) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeqa", "mcp", "--repo", str(repo), *options],
                                   env=env)
    return Client(params, read_timeout_seconds=60)


def run_session(client: Client, steps) -> None:
    """Connect, run `steps(client)`, disconnect; all within CALL_LIMIT_S."""
    async def main():
        with anyio.fail_after(CALL_LIMIT_S):
            async with client:
                await steps(client)

    try:
        anyio.run(main)
    except BaseException as exc:  # the task groups wrap a failed assert: show the assert, not the groups
        while len(getattr(exc, "exceptions", ())) == 1:
            exc = exc.exceptions[0]
        raise exc from None


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content)


async def ok(client: Client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return result, result.structured_content


async def wait_until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds}s for {what}"
        await anyio.sleep(0.05)


async def status_until(client: Client, condition, what: str, seconds: float = 60):
    """index_status, asked until `condition(its structured content)` holds: the background embedding goes on
    by itself."""
    deadline = time.monotonic() + seconds
    while True:
        result, status = await ok(client, "index_status")
        if condition(status):
            return result, status
        assert time.monotonic() < deadline, f"index_status never showed {what} in {seconds}s: {status}"
        await anyio.sleep(0.1)


def embedding_state(status: dict) -> str | None:
    return (status.get("embedding") or {}).get("state")


async def refused(client: Client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, text_of(result)
    assert result.structured_content is None
    assert "Traceback" not in text_of(result)
    return text_of(result)


def test_every_tool_over_stdio(repo, env, stub):
    lines = (repo / "encoders" / "encoder.py").read_text().splitlines(keepends=True)
    stub.reply(lambda body: "EncoderClass is made in run: " + re.search(r"\[1\] (\S+:L\d+-L\d+)", str(body)).group(1))

    async def steps(client: Client):
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        assert all(t.output_schema and t.description for t in listed)

        result, found = await ok(client, "search_code", query="tokenize")
        assert found["hits"][0]["path"] == "encoders/encoder.py" and not found["post_filtered"]
        hit = next(h for h in found["hits"] if h["symbol"] == "tokenize")
        assert hit["location"] == "encoders/encoder.py:L33-L35" and hit["preview"] == "def tokenize(text):"
        assert hit["reasons"] and f"encoders/encoder.py:L33-L35  tokenize  score {hit['score']:.3f} " \
                                  f"({', '.join(hit['reasons'])})" in text_of(result)

        _, found = await ok(client, "search_code", query="encode text", limit=3, path_glob="app/*")
        assert found["post_filtered"] and 0 < len(found["hits"]) <= 3
        assert all(h["path"].startswith("app/") for h in found["hits"])
        _, found = await ok(client, "search_code", query="greeting", language="java")
        assert found["hits"] and all(h["language"] == "java" for h in found["hits"])

        result, found = await ok(client, "find_symbol", name="tokenize")
        (tokenize,) = found["definitions"]
        assert tokenize["location"] == "encoders/encoder.py:L33-L35" and tokenize["kind"] == "function"
        assert tokenize["signature"].startswith("def tokenize") and tokenize["doc"] == "Split text into lowercase words."
        assert "encoders/encoder.py:L33-L35" in text_of(result)
        _, found = await ok(client, "find_symbol", name="EncoderClass.encode")
        assert [d["qualified_name"] for d in found["definitions"]] == ["EncoderClass.encode"]

        result, refs = await ok(client, "find_references", symbol="EncoderClass")
        by_file = refs["files"]
        assert {r["kind"] for r in by_file["app/main.py"]} >= {"import", "instantiation"}
        assert refs["shown"] == refs["total"] == sum(map(len, by_file.values()))
        made = next(r for r in by_file["app/main.py"] if r["kind"] == "instantiation")
        assert made["text"] == "encoder = EncoderClass(dim=4)" and made["enclosing"] == "run"
        assert "app/main.py" in text_of(result) and "encoder = EncoderClass(dim=4)" in text_of(result)
        _, capped = await ok(client, "find_references", symbol="EncoderClass", limit=1)
        assert capped["shown"] == 1 and capped["total"] == refs["total"] > 1
        _, only = await ok(client, "find_references", symbol="EncoderClass", kinds=["instantiation"])
        assert only["total"] >= 1 and {r["kind"] for sites in only["files"].values() for r in sites} == {"instantiation"}

        result, code = await ok(client, "read_code", path="encoders/encoder.py", start_line=33, end_line=35)
        assert code["text"] == "".join(lines[32:35]) and code["total_lines"] == len(lines)
        assert "33 | def tokenize(text):" in text_of(result)
        result, code = await ok(client, "read_code", path="app/service.py")
        assert "[REDACTED]" in code["text"] and "TIMEOUT = 30" in code["text"]
        assert FAKE_KEY not in text_of(result) + str(code)

        heard = []

        async def progress(done, total, message):
            heard.append((done, total, message))

        result = await client.call_tool("ask", {"question": "How is EncoderClass used?"}, progress_callback=progress)
        assert not result.is_error, text_of(result)
        answer = result.structured_content
        # the answer found in the code comes first, cited and checked, and says it is not the model's (issue 65)
        assert heard[0][2].startswith("Found in the code (not the model's answer: the model reads ")
        assert "✓ app/cli.py:L9" in heard[0][2] and "Used 5 times in 2 files" in heard[0][2]
        reading = [h for h in heard if "The model is reading" in h[2]]
        assert reading and reading[0][1] == answer["prompt_tokens"] > 0 and heard.index(reading[0]) > 0
        assert "in all)" not in reading[0][2]  # nothing is known of the server's speed before its first answer
        assert answer["mode"] == "llm" and answer["route"] == "usage" and answer["error"] is None
        assert answer["evidence"] and answer["citations"][0]["verified"]
        assert answer["citations"][0]["location"] == answer["evidence"][0]["location"]
        assert answer["answer"] in text_of(result) and "✓" in text_of(result)
        heard.clear()
        await client.call_tool("ask", {"question": "How is format_name used?"}, progress_callback=progress)
        reading = [h for h in heard if "The model is reading" in h[2]]  # now the server's speed is known
        assert reading and reading[0][2].endswith(" in all)") and "(a" in reading[0][2]
        assert heard[0][2].startswith("Found in the code") and "in all;" in heard[0][2]

        result, status = await ok(client, "index_status")
        assert status["files"] > 5 and status["symbols"] > 5 and status["chunks"] > 5
        assert status["last_indexed"] and status["complete"] and status["stale"] == 0
        assert "No file changed since" in text_of(result)

    run_session(stdio_client(env, repo), steps)


def test_ask_says_by_a_progress_notification_that_the_likelihood_model_loads_first(repo, env, tmp_path):
    """CODEQA_RERANK=likelihood:<file> loads its model at the first question about behaviour (a minute on two
    cores): the client hears so before the answer. The file here is no model: the answer comes all the same."""
    model = tmp_path / "m.gguf"
    model.write_bytes(b"not a model")

    async def steps(client: Client):
        heard = []

        async def progress(done, total, message):
            heard.append(message)

        result = await client.call_tool("ask", {"question": "How does the encoder turn text into vectors?"},
                                        progress_callback=progress)
        assert not result.is_error, text_of(result)
        assert heard and heard[0].startswith("CODEQA_RERANK=likelihood: loading m.gguf to pick the answer's lead")
        assert result.structured_content["evidence"]

    run_session(stdio_client({**env, "CODEQA_RERANK": f"likelihood:{model}"}, repo), steps)


def test_errors_say_what_to_do(repo, env):
    async def steps(client: Client):
        message = await refused(client, "find_symbol", name="NoSuchThing")
        assert "No symbol named 'NoSuchThing'" in message and "search_code" in message
        assert "No symbol named" in await refused(client, "find_references", symbol="NoSuchThing")
        for outside in ("../outside.py", "/etc/passwd", "app/../../repo-sibling.py"):
            assert "outside the repository" in await refused(client, "read_code", path=outside)
        for not_indexed in (".env", "generated/out.py", "app/missing.py"):  # a secret, an ignored file, no file
            assert "is not in the index" in await refused(client, "read_code", path=not_indexed)
        assert "past its end" in await refused(client, "read_code", path="encoders/encoder.py", start_line=999)
        assert "before start_line" in await refused(client, "read_code", path="encoders/encoder.py",
                                                    start_line=20, end_line=10)
        assert "limit" in await refused(client, "search_code", query="x", limit=0)
        assert "kinds" in await refused(client, "find_references", symbol="EncoderClass", kinds=["nonsense"])
        for empty in ("", "   "):  # bad input the agent can act on, not a validation dump
            message = await refused(client, "ask", question=empty)
            assert "The question is empty" in message and "validation" not in message, message
        _, found = await ok(client, "find_symbol", name="tokenize")  # the server goes on after errors
        assert found["definitions"]

    run_session(stdio_client(env, repo), steps)

    async def other_model(client: Client):  # an index embedded by another model is refused, with what to run
        message = await refused(client, "search_code", query="tokenize")
        assert "openai:stub-embed" in message and "openai:other-embed" in message and "reindex" in message

    run_session(stdio_client({**env, "CODEQA_EMBEDDINGS": "openai:other-embed"}, repo), other_model)


def test_no_index_yet_then_reindex(tmp_path, env):
    """Before an index exists the tools are listed and say to reindex; reindex builds it, and after an edit
    index_status names the file and a second reindex picks it up."""
    repo = copy_fixture_repo(tmp_path / "repo")

    async def steps(client: Client):
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        for tool, arguments in (("search_code", {"query": "tokenize"}), ("index_status", {}), ("find_symbol", {"name": "x"})):
            message = await refused(client, tool, **arguments)
            assert "No codeqa index" in message and "reindex" in message

        result, report = await ok(client, "reindex")
        assert report["files"] > 5 and report["files_changed"] == report["files"] and not report["nothing_to_do"]
        assert report["symbols"] > 5 and report["chunks_deferred"] == report["chunks"] and "Indexed" in text_of(result)
        _, found = await ok(client, "search_code", query="tokenize")
        assert found["hits"][0]["path"] == "encoders/encoder.py"
        await status_until(client, lambda s: embedding_state(s) == "finished", "the background embedding's end")

        (repo / "app" / "fresh.py").write_text("def brand_new_helper(value):\n    return value * 2\n")
        result, status = await ok(client, "index_status")
        assert status["changed"] == ["app/fresh.py"] and status["stale"] == 1 and "reindex" in text_of(result)
        await refused(client, "find_symbol", name="brand_new_helper")
        _, report = await ok(client, "reindex")
        assert report["files_changed"] == 1 and report["files_unchanged"] == report["files"] - 1
        _, found = await ok(client, "find_symbol", name="brand_new_helper")
        assert found["definitions"][0]["location"] == "app/fresh.py:L1-L2"
        _, status = await ok(client, "index_status")
        assert status["stale"] == 0

    run_session(stdio_client(env, repo), steps)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"codeqa mcp did not listen on {port} within {timeout}s")


def test_http_needs_the_token(repo, env):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([sys.executable, "-m", "codeqa", "mcp", "--repo", str(repo), "--http", f"127.0.0.1:{port}"],
                              env={**env, "CODEQA_MCP_TOKEN": "s3cret"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        wait_for_port(port, server)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        with httpx.Client(trust_env=False, timeout=30) as http:
            for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
                response = http.post(url, json=hello, headers={**headers, **auth})
                assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")

        async def steps(client: Client):
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            _, found = await ok(client, "find_symbol", name="tokenize")
            assert found["definitions"][0]["location"] == "encoders/encoder.py:L33-L35"

        http_client = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, trust_env=False,
                                         timeout=httpx2.Timeout(30, read=120))
        run_session(Client(streamable_http_client(url, http_client=http_client), read_timeout_seconds=60), steps)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_http_refusals(repo, env):
    """Beyond localhost without a token, a malformed address, a port in use, a missing repository: one
    message each, and no server."""
    port = str(free_port())
    for spec in (f"0.0.0.0:{port}", f"192.0.2.1:{port}"):
        refused_run = codeqa(env, "mcp", "--repo", str(repo), "--http", spec)
        assert refused_run.returncode == 2 and "without a token" in refused_run.stderr and "--token" in refused_run.stderr
    for bad in ("8765", "localhost:http", "127.0.0.1:70000"):
        assert codeqa(env, "mcp", "--repo", str(repo), "--http", bad).returncode == 2
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        in_use = codeqa(env, "mcp", "--repo", str(repo), "--http", f"127.0.0.1:{taken.getsockname()[1]}")
    assert in_use.returncode == 1 and "Cannot listen" in in_use.stderr and "Traceback" not in in_use.stderr
    missing = codeqa(env, "mcp", "--repo", str(repo / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_a_run_by_another_process_reaches_every_tool(tmp_path, env):
    """The server keeps one retriever; a `codeqa index` elsewhere (or --watch) must reach find_symbol,
    find_references and read_code too, not only searches."""
    repo = copy_fixture_repo(tmp_path / "repo")
    assert codeqa(env, "index", str(repo)).returncode == 0

    async def steps(client: Client):
        await refused(client, "find_symbol", name="brand_new_helper")  # the retriever is open and has looked
        (repo / "app" / "fresh.py").write_text("def brand_new_helper(value):\n    return value * 2\n\n\n"
                                               "def caller():\n    return brand_new_helper(1)\n")
        assert codeqa(env, "index", str(repo)).returncode == 0
        _, found = await ok(client, "find_symbol", name="brand_new_helper")
        assert found["definitions"][0]["location"] == "app/fresh.py:L1-L2"
        _, refs = await ok(client, "find_references", symbol="brand_new_helper")
        assert refs["total"] == 1
        _, lines = await ok(client, "read_code", path="app/fresh.py", start_line=5, end_line=6)
        assert "def caller" in lines["text"]

    run_session(stdio_client(env, repo), steps)


# ---- reindex: phase 1 before it returns, phase 2 in the background --------------------------------
# The stub holds every embedding batch (hold_embeddings) until the test releases it: "while the
# embedding runs" is a state each test holds, not a race. Search queries (one text) go through.

FRESH = "def brand_new_helper(value):\n    return value * 2\n"


def run_holding_embeddings(stub, transport, steps) -> None:
    """A session while the stub holds every embedding request of several texts (released at the end)."""
    stub.hold_embeddings()
    try:
        run_session(transport, steps)
    finally:
        stub.release_embeddings()


def test_reindex_returns_once_searchable_and_embeds_in_the_background(tmp_path, env, stub):
    repo = copy_fixture_repo(tmp_path / "repo")

    async def steps(client: Client):
        result, report = await ok(client, "reindex")  # its batches are held: only phase 1 can have ended
        assert report["files_changed"] == report["files"] > 5 and report["chunks"] > 10 and report["references"] > 5
        assert report["chunks_deferred"] == report["chunks"] and report["semantic_search"] == 0.0
        assert report["embedding"]["state"] == "running" and report["embedding"]["chunks_embedded"] == 0
        text = text_of(result)
        assert f"{report['references']} references, {report['chunks']} chunks" in text
        assert "semantic search at 0%" in text and "continues in the background" in text

        await wait_until(lambda: stub.held_embeddings == 1, "the background embedding's first batch")
        result, status = await ok(client, "index_status")
        assert status["embedding"]["state"] == "running" and status["embedding"]["chunks"] == report["chunks"]
        assert status["embedding"]["chunks_embedded"] == 0 and status["semantic_search"] == 0.0
        assert f"Embedding in the background: 0 of {report['chunks']} chunks" in text_of(result)
        assert "Call reindex" not in text_of(result)  # it is running: nothing to do but wait
        _, found = await ok(client, "search_code", query="tokenize")  # the other tools work meanwhile
        assert found["hits"][0]["path"] == "encoders/encoder.py" and found["semantic_search"] == 0.0
        _, refs = await ok(client, "find_references", symbol="EncoderClass")
        assert refs["total"] > 1

        stub.release_embeddings()
        result, status = await status_until(client, lambda s: embedding_state(s) != "running", "the embedding's end")
        assert status["embedding"]["state"] == "finished" and status["embedding"]["error"] is None
        assert status["embedding"]["chunks_embedded"] == status["embedding"]["chunks"] == report["chunks"]
        assert status["semantic_search"] == 1.0 and "Background embedding finished" in text_of(result)
        assert "Semantic search is at" not in text_of(result)
        _, found = await ok(client, "search_code", query="split text into lowercase words")
        assert any("dense" in h["reasons"] for h in found["hits"])

    run_holding_embeddings(stub, stdio_client(env, repo), steps)


def test_a_reindex_during_the_background_embedding_indexes_the_change_and_embedding_resumes(tmp_path, env, stub):
    """Documented: a reindex while the embedding runs stops it after the batch in flight, indexes what
    changed and starts it again. (Which ends first, that batch or the stop, does not change the outcome:
    tests/test_index_background.py holds the stop itself.)"""
    repo = copy_fixture_repo(tmp_path / "repo")

    async def steps(client: Client):
        _, first = await ok(client, "reindex")
        await wait_until(lambda: stub.held_embeddings == 1, "the background embedding's first batch")
        (repo / "app" / "fresh.py").write_text(FRESH)
        second: dict = {}

        async def reindex_again():
            second.update((await ok(client, "reindex"))[1])

        async with anyio.create_task_group() as group:
            group.start_soon(reindex_again)
            await anyio.sleep(0.5)  # most often it has reached the server by now; the other order ends the same
            stub.release_embeddings()  # the batch in flight ends, then the stop or the embedding
        assert second["files_changed"] == 1 and second["chunks"] == first["chunks"] + 1
        assert second["embedding"] is not None and second["chunks_deferred"] >= 1
        _, status = await status_until(client, lambda s: embedding_state(s) == "finished", "the embedding's end")
        assert status["embedding"]["chunks_embedded"] == status["chunks"] == second["chunks"]
        assert status["semantic_search"] == 1.0
        _, found = await ok(client, "find_symbol", name="brand_new_helper")
        assert found["definitions"][0]["location"] == "app/fresh.py:L1-L2"

    run_holding_embeddings(stub, stdio_client(env, repo), steps)


def test_index_status_never_says_finished_beside_the_coverage_from_before_the_last_batch(tmp_path, settings):
    """The background run writes its last meta, then says it ended: index_status reads the progress first,
    so a run that ends between its two reads is reported with that meta (in the other order CI saw
    "finished" beside 96%). The indexer here ends the run at the moment its progress is read."""
    from codeqa.indexing.background import EmbeddingProgress
    from codeqa.indexing.index import index_repo
    from codeqa.mcp import RepositoryTools
    from codeqa.store import open_store

    repo = copy_fixture_repo(tmp_path / "repo")
    report = index_repo(repo, settings, embed=False)  # phase 1 only: every chunk waits for its vector
    assert report.chunks_deferred == report.chunks > 10

    class EndsWhenAsked:
        def progress(self):  # the thread's last steps: the meta of the whole index embedded, then "finished"
            store = open_store(repo, settings)
            try:
                store.write_meta({**store.read_meta(), "chunks_embedded": report.chunks})
            finally:
                store.close()
            return EmbeddingProgress("finished", report.chunks, report.chunks)

    tools = RepositoryTools(repo, settings)
    tools.indexer = EndsWhenAsked()
    try:
        status = tools.index_status().structured_content
    finally:
        tools.reader.close()
    assert status["embedding"]["state"] == "finished" and status["semantic_search"] == 1.0


def test_a_save_under_watch_stops_the_background_embedding_instead_of_waiting_for_it(tmp_path, env, stub):
    """mcp --watch re-indexes saves through the server's own runs: the save asks the background embedding
    to stop (index_status: stopping) rather than meeting its index lock until it ends."""
    repo = copy_fixture_repo(tmp_path / "repo")

    async def steps(client: Client):
        _, first = await ok(client, "reindex")
        await wait_until(lambda: stub.held_embeddings == 1, "the background embedding's first batch")
        (repo / "app" / "fresh.py").write_text(FRESH)
        result, _ = await status_until(client, lambda s: embedding_state(s) == "stopping", "the save stopping it")
        assert "stopping after the batch in flight" in text_of(result)
        stub.release_embeddings()
        # the save's phase 1 commits, then its embedding starts: finished and complete is after both
        _, status = await status_until(client, lambda s: embedding_state(s) == "finished" and s["semantic_search"] == 1.0
                                       and s["chunks"] > first["chunks"], "the save indexed and embedded")
        assert status["chunks"] == first["chunks"] + 1 and status["stale"] == 0
        _, found = await ok(client, "find_symbol", name="brand_new_helper")
        assert found["definitions"][0]["location"] == "app/fresh.py:L1-L2"

    run_holding_embeddings(stub, stdio_client(env, repo, "--watch"), steps)


def test_stopping_the_server_during_the_background_embedding_leaves_an_index_the_next_run_completes(tmp_path, env, stub):
    repo = copy_fixture_repo(tmp_path / "repo")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "codeqa", "mcp", "--repo", str(repo), "--http", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stub.hold_embeddings()
    try:
        wait_for_port(port, server)

        async def first_server(client: Client):
            _, report = await ok(client, "reindex")
            assert report["embedding"]["state"] == "running"
            await wait_until(lambda: stub.held_embeddings == 1, "the background embedding's first batch")

        http_client = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(30, read=120))
        run_session(Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http_client),
                           read_timeout_seconds=60), first_server)
        server.send_signal(signal.SIGINT)  # Ctrl-C while its batch is held: the server must not wait for it
        assert server.wait(timeout=30) == 130, server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=30)
        stub.release_embeddings()

    async def next_server(client: Client):
        result, status = await ok(client, "index_status")
        assert status["semantic_search"] == 0.0 and status["embedding"] is None and status["complete"]
        assert "Call reindex to embed the rest in the background" in text_of(result)
        _, report = await ok(client, "reindex")
        assert report["nothing_to_do"] and report["files_changed"] == 0 and report["chunks_deferred"] == report["chunks"]
        _, status = await status_until(client, lambda s: embedding_state(s) == "finished", "the embedding's end")
        assert status["semantic_search"] == 1.0 and status["embedding"]["chunks_embedded"] == report["chunks"]

    run_session(stdio_client(env, repo), next_server)
    done = codeqa(env, "index", str(repo), "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["nothing_to_do"]  # complete: its state.json is written


# ---- compact by default: a page under 4 KB, offset for the rest -----------------------------------
PAGE_BYTES = 4096
BUSY = "from encoders.encoder import tokenize\n" + "".join(
    f'\n\nclass Handler{i}:\n    def run(self, text):\n        """Handler {i} splits its text into words, twice, to count them."""\n'
    f'        words = tokenize(text + " handler {i} appends a sentence long enough to make this line wide")\n'
    f'        return len(words) + len(tokenize(text))\n' for i in range(120))


def test_answers_fit_in_4kb_and_paging_returns_everything(tmp_path, env):
    """A symbol with 240 call sites, 120 definitions of one name, a 700-line file, a usage answer listing
    every site: each tool's text and structured content are under 4 KB by default, and paging with offset
    gives back everything the CLI lists, once."""
    repo = copy_fixture_repo(tmp_path / "repo")
    (repo / "app" / "busy.py").write_text(BUSY)
    extractive = {**{k: v for k, v in env.items() if k not in ("CODEQA_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY")},
                  "CODEQA_EMBEDDINGS_BASE_URL": env["OPENAI_BASE_URL"], "CODEQA_EMBEDDINGS_API_KEY": "test-key"}  # no LLM
    assert codeqa(extractive, "index", str(repo)).returncode == 0
    listed = json.loads(codeqa(extractive, "refs", "tokenize", "--repo", str(repo), "--json").stdout)["references"]
    expected = sorted((r["path"], r["line"], r["column"]) for r in listed)
    done = codeqa(extractive, "ask", "How is tokenize used?", "--repo", str(repo), "--no-llm", "--json")
    full_answer = json.loads(done.stdout)["answer"]
    assert len(expected) > 240 and len(full_answer.encode()) > 3 * PAGE_BYTES  # more than one page of each

    async def small(client: Client, tool: str, **arguments):
        result, content = await ok(client, tool, **arguments)
        as_json = json.dumps(content, ensure_ascii=False).encode()
        assert len(text_of(result).encode()) < PAGE_BYTES and len(as_json) < PAGE_BYTES, (tool, arguments)
        return result, content

    async def steps(client: Client):
        result, refs = await small(client, "find_references", symbol="tokenize")
        assert refs["total"] == len(expected) and refs["shown"] < refs["total"] == refs["page"]["total"]
        assert refs["by_kind"]["call"] >= 240 and refs["file_count"] >= 2 and refs["top_files"]["app/busy.py"] >= 240
        assert f"By kind: call {refs['by_kind']['call']}" in text_of(result) and "offset=" in text_of(result)
        sites, offset, pages = [], 0, 0
        while offset is not None:
            _, refs = await small(client, "find_references", symbol="tokenize", offset=offset, limit=37)
            assert refs["shown"] == sum(map(len, refs["files"].values())) <= 37
            sites += [(path, r["line"], r["column"]) for path, found in refs["files"].items() for r in found]
            offset, pages = refs["page"]["next_offset"], pages + 1
        assert sorted(sites) == expected and pages > 6  # every site, once

        _, found = await small(client, "find_symbol", name="Handler7.run")
        assert found["page"]["total"] == 1
        names, offset = [], 0
        while offset is not None:
            _, found = await small(client, "find_symbol", name="run", offset=offset)
            names += [d["qualified_name"] for d in found["definitions"]]
            offset = found["page"]["next_offset"]
        assert sorted(names) == sorted({*names}) and {f"Handler{i}.run" for i in range(120)} <= set(names)

        result, hits = await small(client, "search_code", query="handler splits its text into words", limit=50)
        assert 0 < hits["page"]["shown"] == len(hits["hits"]) < 50 and hits["page"]["next_offset"] == len(hits["hits"])
        _, more = await small(client, "search_code", query="handler splits its text into words", offset=len(hits["hits"]))
        assert not {h["location"] for h in more["hits"]} & {h["location"] for h in hits["hits"]}

        result, code = await small(client, "read_code", path="app/busy.py")
        assert code["start_line"] == 1 and 20 < code["end_line"] < 200 and code["next_start_line"] == code["end_line"] + 1
        assert f"start_line={code['next_start_line']}" in text_of(result)
        result, code = await small(client, "read_code", path="app/busy.py", start_line=5, end_line=700)
        assert code["end_line"] < 700 and f"start_line={code['next_start_line']}, end_line=700" in text_of(result)

        answer, offset = "", 0
        while offset is not None:
            result, page = await small(client, "ask", question="How is tokenize used?", offset=offset)
            assert page["mode"] == "extractive" and page["page"]["offset"] == offset == len(answer)
            assert (page["citations"] and page["evidence"]) if offset == 0 else not (page["citations"] or page["evidence"])
            answer, offset = answer + page["answer"], page["page"]["next_offset"]
        assert answer == full_answer

        await small(client, "index_status")

    run_session(stdio_client(extractive, repo), steps)
