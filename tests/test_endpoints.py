"""Which server gets what: the embeddings endpoint and the chat endpoint are separate settings, a key goes
only to the server it was given for, and `--no-llm` answers whatever LLM settings are exported (issue 37)."""

from __future__ import annotations

import re

import pytest

from codeqa.answer import Answerer
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.embed import embedder_from_settings
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from conftest import copy_fixture_repo
from llm_stub import LLMStub

QUESTION = "How does tokenize work?"


@pytest.mark.parametrize("env", [{"OPENAI_API_KEY": "sk-x"}, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
                                 {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}])
def test_no_llm_answers_with_llm_settings_exported_and_no_model(capsys, monkeypatch, indexed_repo, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["ask", QUESTION, "--repo", str(indexed_repo), "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert "CODEQA_MODEL" not in out and re.search(r"encoders/encoder\.py:L\d+-L\d+", out), out


def test_the_embeddings_endpoint_falls_back_to_the_chat_one_and_never_gets_its_key():
    shared = Settings.load(env={"OPENAI_BASE_URL": "http://chat/v1", "OPENAI_API_KEY": "ck"}).embeddings_endpoint
    assert (shared.base_url, shared.api_key, shared.url_setting) == ("http://chat/v1", "ck", "OPENAI_BASE_URL")
    own = Settings.load(env={"OPENAI_BASE_URL": "http://chat/v1", "OPENAI_API_KEY": "ck",
                             "CODEQA_EMBEDDINGS_BASE_URL": "http://embed/v1"}).embeddings_endpoint
    assert (own.base_url, own.api_key, own.url_setting) == ("http://embed/v1", None, "CODEQA_EMBEDDINGS_BASE_URL")
    keyed = Settings.load(env={"CODEQA_EMBEDDINGS_BASE_URL": "http://embed/v1", "CODEQA_EMBEDDINGS_API_KEY": "ek"})
    assert keyed.embeddings_endpoint.api_key == "ek" and "ek" not in repr(keyed)


def test_embeddings_and_chat_on_different_servers(tmp_path, monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    with LLMStub() as embed_server, LLMStub() as chat_server:
        settings = Settings.load(env={
            "CODEQA_EMBEDDINGS": "openai:stub-embed",
            "CODEQA_EMBEDDINGS_BASE_URL": embed_server.base_url, "CODEQA_EMBEDDINGS_API_KEY": "embed-key",
            "OPENAI_BASE_URL": chat_server.base_url, "OPENAI_API_KEY": "chat-key", "CODEQA_MODEL": "stub-model"})
        chat_server.reply(lambda body: "tokenize splits the text " + re.search(r"\[1\] (\S+:L\d+-L\d+)", str(body)).group(1))
        repo = copy_fixture_repo(tmp_path / "repo")
        embedder = embedder_from_settings(settings)
        index_repo(repo, settings, embedder=embedder)
        with Retriever.open(repo, settings, embedder) as retriever:
            answer = Answerer(retriever, settings).answer(QUESTION)
        assert answer.mode == "llm" and answer.citations and answer.citations[0].verified

        embedded = embed_server.embedding_requests
        assert embedded and len(embedded) == len(embed_server.requests) - _metadata(embed_server)
        assert {r.headers.get("authorization") for r in embedded} == {"Bearer embed-key"}
        chats = [r for r in chat_server.requests if r.path.endswith("/chat/completions")]
        assert chats and not chat_server.embedding_requests
        assert {r.headers.get("authorization") for r in chats} == {"Bearer chat-key"}
        assert all("chat-key" not in str(r.headers) for r in embed_server.requests)


def _metadata(stub: LLMStub) -> int:
    """Requests that are neither embeddings nor chat (model listings a client may probe)."""
    return sum(1 for r in stub.requests if not r.path.endswith(("/embeddings", "/chat/completions")))
