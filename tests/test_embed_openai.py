"""CODEQA_EMBEDDINGS=openai:<model>: the real embedder (httpx) against a local server with faults injected:
batches in flight at once and back in input order, retries on 429 / 5xx / dropped connections with the
wait Retry-After asks for, a bounded budget, and at-once failures that name the setting to fix."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from codeqa.config import Settings
from codeqa.embed import OpenAIEmbedder, embedder_from_settings, query_embedder
from codeqa.errors import EmbeddingError, UsageError
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from conftest import copy_fixture_repo
from embed_server_stub import Answer, EmbedServerStub
from llm_stub import stub_embedding

SECRET = "sk-test-secret-key"


@pytest.fixture
def server(monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    with EmbedServerStub() as stub:
        yield stub


def embedder_for(stub: EmbedServerStub, **options) -> OpenAIEmbedder:
    options = {"concurrency": 4, "backoff_base": 0.01, "api_key": SECRET, **options}
    return OpenAIEmbedder("stub-embed", stub.base_url, **options)


def expected(texts: list[str]) -> np.ndarray:
    rows = np.asarray([stub_embedding(t) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


TEXTS = [f"def handler_{i}(request): return render(request, 'page_{i % 13}') word{i % 29}" for i in range(300)]


def test_batches_in_flight_at_once_come_back_in_input_order(server):
    server.jitter = 0.03  # parallel requests finish out of order; each lists its vectors shuffled
    embedder = embedder_for(server, concurrency=4)
    vectors = embedder.encode(TEXTS, batch_size=7)
    assert vectors.dtype == np.float32 and vectors.shape == (300, 64) and embedder.dimension == 64
    np.testing.assert_allclose(vectors, expected(TEXTS), atol=1e-6)
    assert len(server.requests) == 43 and 2 <= server.most_in_flight <= 4
    body = server.requests[0].body
    assert body["model"] == "stub-embed" and body["encoding_format"] == "base64"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_a_server_that_sends_json_numbers_is_read_too(server):
    server.floats_only = True  # Ollama ignores encoding_format
    vectors = embedder_for(server).encode(TEXTS[:50], batch_size=16)
    np.testing.assert_allclose(vectors, expected(TEXTS[:50]), atol=1e-6)


def test_a_429_waits_what_retry_after_says_then_succeeds(server):
    server.script(Answer(429, "slow down", headers={"Retry-After": "0.4"}))
    embedder = embedder_for(server, backoff_base=0.001)  # without Retry-After the retry would come at once
    started = time.perf_counter()
    vectors = embedder.encode(TEXTS[:5])
    assert time.perf_counter() - started >= 0.4
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body
    np.testing.assert_allclose(vectors, expected(TEXTS[:5]), atol=1e-6)


def test_a_500_and_a_dropped_connection_are_retried(server):
    server.script(Answer(500, "out of memory"), Answer(drop=True), Answer(503))
    vectors = embedder_for(server, concurrency=1).encode(TEXTS[:20], batch_size=10)
    assert len(server.requests) == 5  # 3 failures, then the two batches
    np.testing.assert_allclose(vectors, expected(TEXTS[:20]), atol=1e-6)


@pytest.mark.parametrize("status, message, names", [
    (401, "Incorrect API key provided", "OPENAI_API_KEY"),
    (403, "forbidden", "OPENAI_API_KEY"),
    (404, "The model `stub-embed` does not exist", "CODEQA_EMBEDDINGS=openai:stub-embed"),
    (400, "model 'stub-embed' not found, try pulling it first", "CODEQA_EMBEDDINGS=openai:stub-embed"),
    (413, "batch size 64 > maximum allowed batch size 32", "CODEQA_EMBEDDING_BATCH_SIZE (now 64)"),
])
def test_a_refusal_fails_at_once_naming_the_setting_to_fix(server, status, message, names):
    server.always(Answer(status, message))
    with pytest.raises(EmbeddingError) as caught:
        embedder_for(server, max_attempts=5).encode(TEXTS[:64], batch_size=64)
    text = str(caught.value)
    assert names in text and message in text and f"answered {status}" in text and SECRET not in text
    assert len(server.requests) == 1


def test_gives_up_after_the_retry_budget_and_stops_the_other_batches(server):
    server.always(Answer(503, "overloaded"))
    embedder = embedder_for(server, concurrency=4, max_attempts=3)
    with pytest.raises(EmbeddingError, match=r"failed 3 times in a row; last: 503 overloaded"):
        embedder.encode(TEXTS, batch_size=10)  # 30 batches
    assert 3 <= len(server.requests) <= 4 * 3  # the queued batches never went out


def test_a_server_that_keeps_rate_limiting_names_the_concurrency_setting(server):
    server.always(Answer(429, "rate limited", headers={"Retry-After": "0"}))
    with pytest.raises(EmbeddingError, match=r"Lower CODEQA_EMBEDDING_CONCURRENCY \(now 2\)"):
        embedder_for(server, concurrency=2, max_attempts=2).encode(TEXTS[:3])
    assert len(server.requests) == 2


def test_a_timeout_is_retried_then_names_the_timeout_setting(server):
    server.always(Answer(delay=1.0))
    with pytest.raises(EmbeddingError, match=r"within 0.2 s\. Raise CODEQA_EMBEDDING_TIMEOUT"):
        embedder_for(server, timeout=0.2, max_attempts=2).encode(TEXTS[:3])
    # the batch of 3 halves down to one text first (3 -> 2 -> 1), then that text is tried twice
    assert [len(r.body["input"]) for r in server.requests] == [3, 2, 1, 1]


def test_a_slow_cpu_server_gets_smaller_batches_instead_of_the_same_one_again(server):
    """llama.cpp on two cores: a batch of 64 chunks takes minutes. A batch that times out is split, and
    the batches after it go out at the size that worked, instead of failing after five tries of the same."""
    server.seconds_per_text = 0.1
    texts = TEXTS[:16]
    vectors = embedder_for(server, timeout=0.35, concurrency=1, max_attempts=1).encode(texts, batch_size=8)
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-5)
    sizes = [len(r.body["input"]) for r in server.requests]
    assert sizes[:2] == [8, 4] and set(sizes[2:]) == {2} and sum(sizes[2:]) == 16


def test_a_text_longer_than_llama_cpps_batch_fails_at_once_naming_the_server_flag(server):
    server.always(Answer(500, "input (3000 tokens) is too large to process. increase the physical batch size "
                              "(current batch size: 512)"))
    with pytest.raises(EmbeddingError, match=r"-ub and -b.*3000 tokens.*CODEQA_CHUNK_MAX_CHARS"):
        embedder_for(server).encode(["a long text"])
    assert len(server.requests) == 1


def test_an_asymmetric_model_gets_its_query_and_document_prompts(server):
    embedder = OpenAIEmbedder("nomic-embed-text-v1.5", server.base_url)
    embedder.encode(["def parse(): ..."])
    query_embedder(embedder).encode(["how is text parsed?"])
    assert [r.body["input"] for r in server.requests] == [["search_document: def parse(): ..."],
                                                         ["search_query: how is text parsed?"]]
    assert embedder.model_id.startswith("openai:nomic-embed-text-v1.5+doc-")
    own = embedder_from_settings(Settings.load(env={
        "CODEQA_EMBEDDINGS": "openai:multilingual-e5-small", "OPENAI_BASE_URL": server.base_url,
        "CODEQA_EMBEDDING_QUERY_PROMPT": "Q: ", "CODEQA_EMBEDDING_DOCUMENT_PROMPT": "none"}))
    assert (own.query_prompt, own.document_prompt, own.model_id) == ("Q: ", "", "openai:multilingual-e5-small")
    assert OpenAIEmbedder("text-embedding-3-small").query_prompt == ""  # a symmetric model: nothing added


def test_an_unreachable_server_names_the_base_url_setting():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder("m", f"http://127.0.0.1:{port}/v1", backoff_base=0.01, max_attempts=2)
    with pytest.raises(EmbeddingError, match=r"failed 2 times in a row; last: cannot connect.*fix OPENAI_BASE_URL"):
        embedder.encode(["text"])


def test_a_base_url_without_http_fails_at_once_naming_the_setting():
    with pytest.raises(EmbeddingError, match=r"OPENAI_BASE_URL='localhost:8080/v1' is not a usable http\(s\) URL"):
        OpenAIEmbedder("m", "localhost:8080/v1", backoff_base=5.0).encode(["text"])  # a retry would wait seconds


@pytest.mark.parametrize("body, says", [
    ("<html>Sign in</html>", r"did not answer with embeddings .*is OPENAI_BASE_URL the API root"),
    ('{"data": [{"index": 0, "embedding": [0.5, 0.5]}]}', r"answered 1 vectors for 2 texts"),
    ('{"data": [{"index": 0, "embedding": "not base64!"}, {"index": 1, "embedding": []}]}', r"did not answer with embeddings"),
])
def test_an_answer_that_is_not_the_embeddings_asked_for_fails_at_once(server, body, says):
    server.always(Answer(body=body, headers={"Content-Type": "text/html"}))
    with pytest.raises(EmbeddingError, match=says):
        embedder_for(server).encode(["a", "b"])
    assert len(server.requests) == 1


def test_settings_reach_the_embedder():
    settings = Settings.load(env={"CODEQA_EMBEDDINGS": "openai:m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
                                  "CODEQA_EMBEDDING_CONCURRENCY": "6", "CODEQA_EMBEDDING_TIMEOUT": "2.5"})
    embedder = embedder_from_settings(settings)
    assert (embedder.concurrency, embedder.timeout, embedder.model_id) == (6, 2.5, "openai:m")
    assert Settings.load(env={}).embedding_concurrency == 4
    with pytest.raises(UsageError, match="CODEQA_EMBEDDING_CONCURRENCY=0 must be at least 1"):
        embedder_from_settings(settings.with_(embedding_concurrency=0))


def test_index_and_search_through_a_concurrent_endpoint(tmp_path, server):
    server.jitter = 0.05  # long enough that three requests overlap on a loaded machine
    repo = copy_fixture_repo(tmp_path / "repo")
    settings = Settings.load(env={"CODEQA_EMBEDDINGS": "openai:stub-embed", "OPENAI_BASE_URL": server.base_url,
                                  "CODEQA_EMBEDDING_BATCH_SIZE": "4", "CODEQA_EMBEDDING_CONCURRENCY": "3",
                                  "CODEQA_INDEX_DIR": str(tmp_path / "index")})
    report = index_repo(repo, settings)
    assert report.chunks_embedded == report.chunks > 10 and server.most_in_flight == 3
    with Retriever.open(repo, settings) as retriever:
        hits = retriever.search("tokenize text into words", top_k=5)
    assert any(h.symbol == "tokenize" for h in hits)


def test_search_sends_the_query_prompt_and_the_index_the_document_prompt(tmp_path, server):
    repo = copy_fixture_repo(tmp_path / "repo")
    settings = Settings.load(env={"CODEQA_EMBEDDINGS": "openai:nomic-embed-text-v1.5", "OPENAI_BASE_URL": server.base_url,
                                  "CODEQA_INDEX_DIR": str(tmp_path / "index")})
    index_repo(repo, settings)
    texts = [t for r in server.requests for t in r.body["input"]]
    assert len(texts) > 10 and all(t.startswith("search_document: ") for t in texts)
    with Retriever.open(repo, settings) as retriever:
        hits = retriever.search("tokenize text into words", top_k=5)
    assert server.requests[-1].body["input"] == ["search_query: tokenize text into words"]
    assert any(h.symbol == "tokenize" for h in hits)
