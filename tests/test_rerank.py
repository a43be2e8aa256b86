"""The opt-in rerankers (query/rerank.py) against a real index of the fixture repo and the stub server.

The LLM reranker (CODEQA_RERANK=llm) reorders a question's top candidates as the model says, sends one short
line a candidate and a grammar where the server takes one, and keeps the search's order, saying why, when the
model fails, stalls or answers in prose. The embedding reranker (CODEQA_RERANK=openai:<model>) reorders a
question's candidates by a second model's cosine before the spread over files, embeds each candidate once a
process, and keeps the order, saying why, when its server fails. The likelihood reranker
(CODEQA_RERANK=likelihood:<file.gguf>) moves the evidence function a model finds the question likeliest after to
the lead of a question about behaviour, only past a margin, and keeps every other hit where it was."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

import numpy as np

from codeqa.config import Settings
from codeqa.errors import CodeQAError, EmbeddingError, UsageError
from codeqa.query import likelihood
from codeqa.query.likelihood import Candidate, code_view, prompt_text
from codeqa.query.rerank import (LEAD_MARGIN, EmbeddingReranker, LikelihoodReranker, LLMReranker, candidate_text,
                                 grammar_for, parse_order, reorder, reranker_from_settings)
from codeqa.query.retrieve import Retriever
from codeqa.types import Hit
from conftest import copy_fixture_repo

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
    with pytest.raises(UsageError, match="CODEQA_RERANK='yes' is none of off, llm, openai:<model>"):
        reranker_from_settings(Settings.load(env={"CODEQA_RERANK": "yes"}))
    with pytest.raises(UsageError, match="CODEQA_RERANK='openai:' is none of"):
        reranker_from_settings(Settings.load(env={"CODEQA_RERANK": "openai:"}))
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


def _cosine(a: str, b: str) -> float:
    from llm_stub import stub_embedding

    x, y = np.asarray(stub_embedding(a)), np.asarray(stub_embedding(b))
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


@pytest.fixture
def embedding_rerank_settings(llm_stub):
    """A second embedding model at its own URL (the stub's bag-of-words vectors), the chat model unset."""
    return Settings.load(env={"CODEQA_RERANK": "openai:stub-rerank", "CODEQA_RERANK_BASE_URL": llm_stub.base_url,
                              "CODEQA_RERANK_API_KEY": "rerank-key"})


def test_a_second_embedding_model_reorders_a_questions_candidates(indexed_repo, embedder, embedding_rerank_settings,
                                                                  llm_stub):
    with Retriever.open(indexed_repo, embedding_rerank_settings, embedder) as r:
        hits = r.search(QUESTION, top_k=6)
        sent = [t for q in llm_stub.embedding_requests for t in q.body["input"]]
        again = r.search(QUESTION, top_k=6)
    reranked = [h for h in hits if any(w.startswith("embedding rerank ") for w in h.reasons)]
    assert reranked and hits[0].reasons[-1].endswith("->1")
    # the first result is the candidate the second model finds nearest, with what the search added kept: its cosine,
    # not the first model's, plus its words lift and boosts
    keys = [_cosine(QUESTION, candidate_text(h)) + h.lift + h.boost for h in reranked]
    assert keys[0] == pytest.approx(max(keys), abs=1e-6) and hits[0].score == pytest.approx(keys[0], abs=1e-5)
    assert QUESTION in sent and len(sent) >= 3  # the question, and the candidates' path, name and code
    assert all(request.headers.get("authorization") == "Bearer rerank-key" for request in llm_stub.embedding_requests)
    # a candidate is embedded once a process: the second search sends the question only
    assert [(h.path, h.start_line) for h in again] == [(h.path, h.start_line) for h in hits]
    assert [t for q in llm_stub.embedding_requests for t in q.body["input"]][len(sent):] == [QUESTION]


def test_an_identifier_keeps_the_first_models_order(indexed_repo, embedder, embedding_rerank_settings, llm_stub):
    with Retriever.open(indexed_repo, embedding_rerank_settings, embedder) as r:
        hits = r.search("EncoderClass.encode", top_k=6)
    assert hits and not any("embedding rerank" in why for h in hits for why in h.reasons)
    assert llm_stub.embedding_requests == []


class _Failing:
    model_id, dimension = "broken", 4

    def encode(self, texts, batch_size=64):
        raise EmbeddingError("The embeddings endpoint at CODEQA_RERANK_BASE_URL answered 503.")


def test_a_failed_embedding_reranker_keeps_the_order_and_says_so():
    pool = [Hit(f"f{i}.py", 1, 2, score, "function", f"f{i}", "def f(): pass") for i, score in enumerate((0.9, 0.5, 0.4))]
    out = EmbeddingReranker(_Failing(), _Failing()).rerank("How does f work?", pool, graph=None)
    assert [h.path for h in out] == ["f0.py", "f1.py", "f2.py"] and [h.score for h in out] == [0.9, 0.5, 0.4]
    assert all(h.reasons == ("embedding rerank failed, search order kept: The embeddings endpoint at "
                             "CODEQA_RERANK_BASE_URL answered 503.",) for h in out)


def test_the_reranker_endpoint_falls_back_to_the_embeddings_one():
    end = Settings.load(env={"CODEQA_EMBEDDINGS_BASE_URL": "http://emb/v1", "CODEQA_EMBEDDINGS_API_KEY": "k"}).rerank_endpoint
    assert (end.base_url, end.api_key, end.url_setting) == ("http://emb/v1", "k", "CODEQA_EMBEDDINGS_BASE_URL")
    end = Settings.load(env={"CODEQA_RERANK_BASE_URL": "http://rr/v1", "OPENAI_API_KEY": "chat"}).rerank_endpoint
    assert (end.base_url, end.api_key, end.url_setting) == ("http://rr/v1", None, "CODEQA_RERANK_BASE_URL")


class _Reply:
    """A chat model that answers one reply, or fails."""

    def __init__(self, reply: str | None):
        self.reply = reply

    def complete(self, messages, generation=None):
        if self.reply is None:
            raise UsageError("The chat endpoint answered 503.")
        return self.reply


class _Words:
    """An embedder by word counts over a tiny vocabulary: a text's vector says which of these words it holds."""

    model_id, dimension = "words", 4
    WORDS = ("encode", "vector", "parse", "config")

    def encode(self, texts, batch_size=64):
        rows = np.asarray([[1.0 + t.lower().count(w) for w in self.WORDS] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_embedding_reranker_keeps_what_the_search_added():
    """The second model's cosine replaces the first model's, not the question's words lift or the rankers' boosts: a
    definition the question names, or one in its words, stays ahead of a candidate only a little nearer (stop 50's
    reranker dropped both, and the search of bench/how.py's questions about one function fell 0.804 -> 0.661)."""
    question = "How does the encoder turn text into a vector?"
    nearer, named = _pool()[1], replace(_pool()[0], text="def encode(text): return parse(text)")
    words = _Words()
    cosines = [float(words.encode([candidate_text(h)])[0] @ words.encode([question])[0]) for h in (nearer, named)]
    assert cosines[0] > cosines[1]  # the second model alone puts `nearer` first
    gap = cosines[0] - cosines[1]
    out = EmbeddingReranker(words, words).rerank(question, [replace(named, lift=gap, boost=gap), nearer], _Graph())
    assert [h.path for h in out] == [named.path, nearer.path]
    assert out[0].score == pytest.approx(cosines[1] + 2 * gap) and out[1].score == pytest.approx(cosines[0])
    alone = EmbeddingReranker(words, words).rerank(question, [replace(named, lift=0.0, boost=0.0), nearer], _Graph())
    assert [h.path for h in alone] == [nearer.path, named.path]


class _Graph:
    def symbols_by_id(self, ids):
        return {}


def _pool():
    texts = ("def parse(config): ...", "def encode(text): return vector(text)", "def vector(x): encode vector")
    return [Hit(f"f{i}.py", 1, 2, score, "function", f"f{i}", text)
            for i, (score, text) in enumerate(zip((0.9, 0.5, 0.4), texts))]


class _Likely:
    """A QuestionLikelihood with set scores (one a candidate, in order), or one that fails; it records what it read."""

    def __init__(self, scores: list[float] | None):
        self.scores, self.asked = scores, []

    def score(self, question, candidates):
        self.asked.append((question, list(candidates)))
        if self.scores is None:
            raise CodeQAError("The likelihood model /models/q.gguf failed on a question: out of memory")
        return self.scores[:len(candidates)]


@pytest.mark.parametrize("make", [
    lambda ok: LLMReranker(_Reply("3 2" if ok else None), candidates=3),
    lambda ok: EmbeddingReranker(_Words() if ok else _Failing(), _Words() if ok else _Failing()),
    lambda ok: LikelihoodReranker(_Likely([-30.0, -20.0, -25.0] if ok else None)),
], ids=["llm", "embedding", "likelihood"])
class TestRerankerContract:
    """What every Reranker (the protocol's docstring) does: the same hits, best first, scores descending; a
    model's failure keeps the order and says why; an identifier is left alone."""

    QUESTION = "How does the encoder turn text into a vector?"

    def test_the_same_hits_reordered_with_descending_scores(self, make):
        out = make(True).rerank(self.QUESTION, _pool(), _Graph())
        assert sorted(h.path for h in out) == ["f0.py", "f1.py", "f2.py"] and out[0].path != "f0.py"
        assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
        assert make(True).where in ("results", "pool", "lead")

    def test_a_failure_keeps_the_order_and_says_why(self, make):
        out = make(False).rerank(self.QUESTION, _pool(), _Graph())
        assert [(h.path, h.score) for h in out] == [(h.path, h.score) for h in _pool()]
        assert all("failed, search order kept" in h.reasons[-1] for h in out)

    def test_an_identifier_is_left_alone(self, make):
        assert make(True).rerank("EncoderClass.encode", _pool(), _Graph()) == _pool()


def _lead_pool():
    """A class first, then four functions: the likelihood reranker looks at the first three functions only."""
    kinds = ("class", "function", "method", "function", "function")
    return [Hit(f"f{i}.py", 1, 9, score, kind, f"f{i}", f"def f{i}(x):\n    return g(x) + {i}")
            for i, (score, kind) in enumerate(zip((0.95, 0.9, 0.5, 0.4, 0.3), kinds))]


def test_the_likeliest_function_leads_past_the_margin_and_the_rest_keep_their_places():
    model = _Likely([-40.0, -39.0, -30.0])
    out = LikelihoodReranker(model).rerank("How does the code turn x into g of x?", _lead_pool(), _Graph())
    assert [h.path for h in out] == ["f0.py", "f3.py", "f1.py", "f2.py", "f4.py"]
    assert [h.score for h in out] == [h.score for h in _lead_pool()]  # each place keeps its score
    assert out[1].reasons == ("likelihood rerank 3->1 (-30.0 nats)",) and out[0].reasons == () == out[4].reasons
    assert [c.path for c in model.asked[0][1]] == ["f1.py", "f2.py", "f3.py"]  # the class and the fourth: not read
    assert model.asked[0][1][0] == Candidate("f1.py", "f1", "def f1(x):\n    return g(x) + 1")


@pytest.mark.parametrize("scores", [[-30.0, -30.0 - 0.5, -30.0 + LEAD_MARGIN], [-20.0, -25.0, -30.0]])
def test_a_likeliest_candidate_within_the_margin_or_the_first_itself_changes_nothing(scores):
    out = LikelihoodReranker(_Likely(scores)).rerank("How does the code turn x into g of x?", _lead_pool(), _Graph())
    assert out == _lead_pool()


def test_the_likelihood_reranker_needs_two_functions_to_choose_from():
    model = _Likely([-1.0])
    pool = [replace(h, kind="class") for h in _lead_pool()[:4]] + _lead_pool()[4:]
    assert LikelihoodReranker(model).rerank("How does f4 work?", pool, _Graph()) == pool and model.asked == []


def test_the_likelihood_setting_names_a_file_and_is_checked(tmp_path, monkeypatch):
    with pytest.raises(UsageError, match=r"likelihood:.*missing\.gguf: no such file.*local_llm\.sh model 1\.5b"):
        reranker_from_settings(Settings.load(env={"CODEQA_RERANK": f"likelihood:{tmp_path / 'missing.gguf'}"}))
    with pytest.raises(UsageError, match="none of off, llm, openai:<model>.*likelihood:<file.gguf>"):
        reranker_from_settings(Settings.load(env={"CODEQA_RERANK": "likelihood:"}))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"not a model")
    with monkeypatch.context() as patch:  # without the packages transformers needs for a GGUF file, it says so now
        patch.setattr(likelihood, "missing_packages", lambda: ["gguf"])
        with pytest.raises(UsageError, match=r"needs gguf: pip install 'codeqa\[likelihood\]'"):
            reranker_from_settings(Settings.load(env={"CODEQA_RERANK": f"likelihood:{model}"}))
    reranker = reranker_from_settings(Settings.load(env={"CODEQA_RERANK": f"likelihood:{model}"}))
    assert isinstance(reranker, LikelihoodReranker) and reranker.where == "lead"
    # the model loads at the first question: a file that is no model is said to be one, and the order is kept
    hits = reranker.rerank("How does the code turn x into g of x?", _lead_pool(), _Graph())
    assert [h.path for h in hits] == [h.path for h in _lead_pool()]
    assert hits[1].reasons[-1].startswith(f"likelihood rerank failed, search order kept: CODEQA_RERANK=likelihood:"
                                          f"{model}: transformers could not load it")


def test_the_lead_reranker_picks_what_leads_the_evidence_of_a_question_about_behaviour(indexed_repo, embedder, tmp_path):
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"")
    settings = Settings.load(env={"CODEQA_RERANK": f"likelihood:{model_file}"})
    with Retriever.open(indexed_repo, settings, embedder) as r:
        assert r.reranker is None and isinstance(r.searcher.lead_reranker, LikelihoodReranker)
        before = [(h.path, h.start_line, h.kind) for h in r.search(QUESTION, top_k=6, spread=True)]
        functions = [i for i, (_, _, kind) in enumerate(before) if kind in ("function", "method")][:3]
        assert len(functions) == 3
        r.searcher.lead_reranker = LikelihoodReranker(model := _Likely([-50.0, -60.0, -40.0]))
        after = [(h.path, h.start_line, h.kind) for h in r.search(QUESTION, top_k=6, spread=True)]
        assert after[functions[0]] == before[functions[2]] and after[functions[1]] == before[functions[0]]
        assert model.asked[0][0] == QUESTION
        r.search("EncoderClass", top_k=6, spread=True)  # not a question about behaviour: lead.py's steps do not apply
        plain = r.search(QUESTION, top_k=6)  # search without the evidence's spread: no lead to pick
        assert len(model.asked) == 1 and all("likelihood" not in why for h in plain for why in h.reasons)


class _Unloaded(_Likely):
    """A _Likely that says its model is not in memory yet, as GGUFLikelihood does before its first question."""

    path = "/models/q.gguf"
    loaded = False


def test_a_shell_is_told_when_a_question_will_load_the_likelihood_model_first():
    note = LikelihoodReranker(_Unloaded([-1.0])).loading_note(QUESTION)
    assert note is not None and "CODEQA_RERANK=likelihood: loading q.gguf" in note and "about a minute" in note
    assert LikelihoodReranker(_Unloaded([-1.0])).loading_note("EncoderClass.encode") is None  # no lead to pick
    assert LikelihoodReranker(_Likely([-1.0])).loading_note(QUESTION) is None  # says nothing of a load: loaded
    assert not likelihood.GGUFLikelihood(Path("/models/q.gguf")).loaded


def test_the_retriever_says_the_model_loads_only_where_the_lead_will_be_picked(indexed_repo, embedder, tmp_path):
    """The lead is picked on the search route among hits the dense vector found: a usage question, or an index whose
    phase 2 has embedded nothing yet, loads no model, and a shell must not say it does."""
    from codeqa.indexing.index import index_repo

    settings = Settings.load(env={})
    with Retriever.open(indexed_repo, settings, embedder) as r:
        r.searcher.lead_reranker = LikelihoodReranker(_Unloaded([-1.0]))
        assert "loading q.gguf" in r.loading_note(QUESTION)
        usage = "Where is EncoderClass used?"
        assert r.retrieve(usage).route == "usage" and r.loading_note(usage) is None
    repo = copy_fixture_repo(tmp_path / "phase1")
    index_repo(repo, settings, embedder=embedder, embed=False)
    with Retriever.open(repo, settings, embedder) as r:
        assert r.semantic_coverage() == 0.0
        r.searcher.lead_reranker = LikelihoodReranker(model := _Unloaded([-1.0, -2.0, -3.0]))
        assert r.loading_note(QUESTION) is None
        r.retrieve(QUESTION)
        assert model.asked == []  # and indeed nothing was scored


def test_ask_says_on_stderr_that_the_likelihood_model_loads_and_answers_all_the_same(indexed_repo, embedder, tmp_path,
                                                                                    monkeypatch, capsys):
    from codeqa.cli import main

    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"not a model")
    with Retriever.open(indexed_repo, Settings.load(env={}), embedder) as r:
        assert r.loading_note(QUESTION) is None  # no CODEQA_RERANK: nothing loads for the lead
    monkeypatch.setenv("CODEQA_RERANK", f"likelihood:{model_file}")
    assert main(["ask", QUESTION, "--repo", str(indexed_repo), "--no-llm"]) == 0
    captured = capsys.readouterr()
    assert "note: CODEQA_RERANK=likelihood: loading m.gguf to pick the answer's lead" in captured.err
    assert "Traceback" not in captured.err
    assert re.search(r"\.py:L\d+-L\d+", captured.out)  # the extractive answer still cites lines
    assert main(["ask", "EncoderClass", "--repo", str(indexed_repo), "--no-llm"]) == 0
    assert "loading" not in capsys.readouterr().err  # an identifier: the lead is not picked, nothing loads


def test_a_candidate_is_shown_as_its_first_lines_with_docstrings_cut():
    code = 'def f(x):\n    """Turn x into y.\n\n    Long story.\n    """\n' + "".join(f"    x = x + {i}\n" for i in range(40))
    view = code_view(code)
    assert view.splitlines()[:3] == ["def f(x):", '    """Turn x into y. ..."""', "    x = x + 0"]
    assert view.endswith("    ...") and len(view.splitlines()) == 25
    shown = prompt_text(Candidate("a/b.py", "f", code))
    assert shown.startswith("Here is some code from a/b.py (f):\n```python\ndef f(x):") and "Long story" not in shown
