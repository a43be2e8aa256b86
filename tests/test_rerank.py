"""The opt-in LLM reranker (CODEQA_RERANK=llm, query/rerank.py) against a real index of the fixture repo
and the stub chat server: it reorders a question's top candidates as the model says, sends one short
line a candidate and a grammar where the server takes one, and keeps the search's order, saying why,
when the model fails, stalls or answers in prose."""

from __future__ import annotations

import pytest

from codeqa.config import Settings
from codeqa.errors import UsageError
from codeqa.query.rerank import grammar_for, parse_order, reorder, reranker_from_settings
from codeqa.query.retrieve import Retriever
from codeqa.types import Hit

QUESTION = "How does the encoder turn text into vectors?"


@pytest.fixture
def rerank_settings(llm_settings):
    return llm_settings.with_(rerank="llm", rerank_candidates=6, rerank_timeout=2.0)


def plain_order(indexed_repo, embedder, settings, top_k=6):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        return [(h.path, h.start_line) for h in r.search(QUESTION, top_k=top_k)]


def test_the_model_reorders_a_questions_top_candidates(indexed_repo, embedder, settings, rerank_settings, llm_stub):
    before = plain_order(indexed_repo, embedder, settings)
    llm_stub.window = 4096  # poses as llama.cpp: the request carries the grammar
    llm_stub.reply("3 1")
    with Retriever.open(indexed_repo, rerank_settings, embedder) as r:
        hits = r.search(QUESTION, top_k=6)
    after = [(h.path, h.start_line) for h in hits]
    assert after[:2] == [before[2], before[0]] and sorted(after) == sorted(before)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].reasons[-1] == "llm rerank 3->1"
    request = llm_stub.chat_requests[-1]
    prompt = request.messages[-1]["content"]
    assert QUESTION in prompt and f"1. {before[0][0]}:L{before[0][1]} " in prompt
    assert len(prompt.splitlines()) <= 6 + 5  # one line a candidate
    assert request.body["grammar"] == grammar_for(6) and request.body["max_tokens"] <= 30


@pytest.mark.parametrize("reply, why", [
    ({"status": 500}, "llm rerank failed, search order kept: The chat endpoint"),
    ({"text": "3 1", "delay": 4.0}, "llm rerank failed, search order kept"),
    ({"text": "The encoder is the best match."}, "llm rerank kept the search order"),
])
def test_a_failed_slow_or_wordy_model_keeps_the_order_and_says_so(indexed_repo, embedder, settings, rerank_settings,
                                                                  llm_stub, reply, why):
    before = plain_order(indexed_repo, embedder, settings)
    llm_stub.reply(**reply)
    with Retriever.open(indexed_repo, rerank_settings, embedder) as r:
        hits = r.search(QUESTION, top_k=6)
    assert [(h.path, h.start_line) for h in hits] == before
    assert all(h.reasons[-1].startswith(why) for h in hits)


def test_an_identifier_is_not_sent_to_the_model(indexed_repo, embedder, rerank_settings, llm_stub):
    with Retriever.open(indexed_repo, rerank_settings, embedder) as r:
        r.search("EncoderClass.encode", top_k=6)
    assert llm_stub.chat_requests == []


def test_rerank_settings_are_checked():
    with pytest.raises(UsageError, match="CODEQA_RERANK='yes' is neither off nor llm"):
        reranker_from_settings(Settings.load(env={"CODEQA_RERANK": "yes"}))
    with pytest.raises(UsageError, match="CODEQA_RERANK_CANDIDATES"):
        Settings.load(env={"CODEQA_RERANK_CANDIDATES": "0"})


def test_rerank_without_a_chat_model_says_what_to_set(indexed_repo, embedder):
    with pytest.raises(UsageError, match="CODEQA_RERANK=llm .* set OPENAI_BASE_URL"):
        Retriever.open(indexed_repo, Settings.load(env={"CODEQA_RERANK": "llm"}), embedder)


def test_a_reply_is_read_strictly():
    assert parse_order("3 1 3 9 2", 4) == [2, 0, 1]  # a repeat and a number past the list are dropped
    assert parse_order("[2, 1]", 4) == [1, 0]
    assert parse_order("Result 2 is best", 4) == [] and parse_order("", 4) == []
    grammar = grammar_for(12)
    assert '"12" | "11" | "10" | "9"' in grammar and "{0,11}" in grammar


def test_reordering_keeps_every_hit_and_descending_scores():
    pool = [Hit(f"f{i}.py", 1, 2, score, "function", None, "") for i, score in enumerate((0.9, 0.5, 0.4))]
    out = reorder(pool, [2])
    assert [h.path for h in out] == ["f2.py", "f0.py", "f1.py"] and [h.score for h in out] == [0.9, 0.5, 0.4]
    assert out[1].reasons == ("llm rerank: not named",)
