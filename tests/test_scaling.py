"""Scaling out: a Qdrant server or cluster (`--qdrant-url`, QDRANT_API_KEY, collections per repo, shards
and replicas passed through) and an OpenAI-compatible embeddings server. The real qdrant-client
talks HTTP to tests/qdrant_stub.py, whose answers come from qdrant-client's in-memory engine."""

from __future__ import annotations

import json
import shutil

import pytest

from codeqa import cli
from codeqa.config import Settings
from codeqa.errors import StoreError
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from codeqa.store.identity import collection_prefix
from conftest import copy_fixture_repo
from qdrant_stub import QdrantStub

API_KEY = "test-qdrant-key"


@pytest.fixture
def qdrant(monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    with QdrantStub(api_key=API_KEY) as stub:
        yield stub


def _server_settings(stub: QdrantStub, index_dir, **extra) -> Settings:
    env = {"QDRANT_URL": stub.url, "QDRANT_API_KEY": API_KEY, "CODEQA_QDRANT_SHARDS": "3",
           "CODEQA_QDRANT_REPLICAS": "2", "CODEQA_INDEX_DIR": str(index_dir), **extra}
    return Settings.load(env=env)


def test_index_and_search_through_a_qdrant_server(tmp_path, qdrant, embedder):
    repo = copy_fixture_repo(tmp_path / "one" / "repo")
    settings = _server_settings(qdrant, tmp_path / "index-one")
    report = index_repo(repo, settings, embedder=embedder)
    assert report.chunks > 10 and report.symbols > 15
    prefix = collection_prefix(repo)
    assert prefix.startswith("codeqa_repo_")
    assert qdrant.collections == {f"{prefix}_{kind}" for kind in ("chunks", "symbols", "references", "files", "lease")}
    # every call carried the key; each create request passed the cluster settings through
    assert qdrant.requests and all(r.headers.get("api-key") == API_KEY for r in qdrant.requests)
    assert set(qdrant.created) == qdrant.collections
    for body in qdrant.created.values():
        assert (body["shard_number"], body["replication_factor"]) == (3, 2)
    assert qdrant.created[f"{prefix}_chunks"]["sparse_vectors"]["sparse"]["modifier"] == "idf"
    # the server holds the index: no local Qdrant folder, no state.json shortcut
    assert not (tmp_path / "index-one" / "qdrant").exists() and not (tmp_path / "index-one" / "state.json").exists()

    with Retriever.open(repo, settings, embedder=embedder) as retriever:
        hits = retriever.search("split text into words", top_k=5)
        assert hits[0].path == "encoders/encoder.py" and "def tokenize" in hits[0].text
        assert retriever.store.references_to(["encoders/encoder.py#tokenize@33"])

    # a re-run with nothing to do reads the server's manifest and writes nothing but its writer lease
    mark = len(qdrant.requests)
    again = index_repo(repo, settings, embedder=embedder)
    assert again.nothing_to_do and again.chunks == report.chunks
    assert {w.path.split("/")[2] for w in qdrant.writes(mark)} == {f"{prefix}_lease"}

    # a second repository of the same name gets its own collections on the same server
    other = copy_fixture_repo(tmp_path / "two" / "repo")
    index_repo(other, _server_settings(qdrant, tmp_path / "index-two"), embedder=embedder)
    assert collection_prefix(other) != prefix and len(qdrant.collections) == 10


def test_wrong_key_or_unreachable_server_is_a_clear_error(tmp_path, qdrant, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    bad_key = Settings.load(env={"QDRANT_URL": qdrant.url, "QDRANT_API_KEY": "wrong", "CODEQA_INDEX_DIR": str(tmp_path / "i")})
    with pytest.raises(StoreError, match="refused the request \\(401\\).*QDRANT_API_KEY"):
        index_repo(repo, bad_key, embedder=embedder)
    closed = Settings.load(env={"QDRANT_URL": "http://127.0.0.1:9", "CODEQA_INDEX_DIR": str(tmp_path / "i")})
    with pytest.raises(StoreError, match="Cannot reach the Qdrant server at http://127.0.0.1:9"):
        index_repo(repo, closed, embedder=embedder)


def test_cli_with_qdrant_url_and_an_embeddings_server(tmp_path, qdrant, llm_stub, monkeypatch, capsys):
    """`codeqa index/search --qdrant-url` with CODEQA_EMBEDDINGS=openai:<model>: vectors come from the endpoint."""
    repo = copy_fixture_repo(tmp_path / "repo")
    monkeypatch.setenv("QDRANT_API_KEY", API_KEY)
    monkeypatch.setenv("CODEQA_EMBEDDINGS", "openai:stub-embed")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    common = ["--qdrant-url", qdrant.url, "--index-dir", str(tmp_path / "index")]
    assert cli.main(["index", str(repo), *common, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model_id"] == "openai:stub-embed" and report["chunks_embedded"] == report["chunks"] > 10
    sent = [r.body for r in llm_stub.embedding_requests]
    assert sent and all(b["model"] == "stub-embed" for b in sent)
    assert sum(len(b["input"]) for b in sent) >= report["chunks"]
    assert all(r.headers.get("api-key") == API_KEY for r in qdrant.requests)

    assert cli.main(["search", "tokenize", "--repo", str(repo), *common, "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert any(r["path"] == "encoders/encoder.py" and r["symbol"] == "tokenize" for r in results[:3])

    # searching the same index with another embedding model is refused, not answered wrongly
    monkeypatch.setenv("CODEQA_EMBEDDINGS", "openai:other-model")
    assert cli.main(["search", "tokenize", "--repo", str(repo), *common, "--json"]) == 2
    assert "re-index with `codeqa index" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "index", ignore_errors=True)
