"""Answers in seconds (issue 65): the answer found in the code is ready as soon as the search is done and shown
before the model's (never as the model's), llama.cpp is asked to cache the prompt and says what it reused,
Ollama keeps the model loaded, and a later question says how long it should take."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeqa.answer import EXTRACTIVE_NOTE, Answerer, Conversation
from codeqa.answer.pace import Pace, about
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.errors import UsageError
from codeqa.llm import FakeChat, OpenAIChat
from codeqa.query.retrieve import Retriever
from codeqa.types import ServerUsage
from llm_stub import Reply

ROOT = Path(__file__).resolve().parent.parent
USAGE_Q = "Where is EncoderClass used?"
HOW_Q = "How does EncoderClass encode a text?"
MODEL_REPLY = "EncoderClass hashes each word into a bucket [1]."


@pytest.fixture
def retriever(indexed_repo, embedder, settings):
    with Retriever.open(indexed_repo, settings, embedder) as r:
        yield r


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- the answer found in the code, first ------------------------------------------------------------

def test_the_early_answer_is_ready_before_the_model_is_asked_and_checked_as_a_no_llm_answer(retriever):
    chat = FakeChat([MODEL_REPLY])
    stream = Answerer(retriever, retriever.settings, chat=chat).stream(USAGE_Q)
    early = stream.early
    assert not chat.requests  # no model was asked for it
    assert early.mode == "extractive" and early.answer.startswith(EXTRACTIVE_NOTE) and early.model is None
    assert early.citations and all(c.verified for c in early.citations) and early.grounded
    assert stream.early is early  # built once
    answer = stream.result()
    assert answer.mode == "llm" and answer.answer.startswith("EncoderClass hashes") and len(chat.requests) == 1
    assert EXTRACTIVE_NOTE not in answer.answer  # the model's answer holds none of the early one


def test_an_answer_without_a_model_has_no_early_answer(retriever):
    stream = Answerer(retriever, retriever.settings, chat=FakeChat([MODEL_REPLY])).stream(USAGE_Q, no_llm=True)
    assert stream.early is None and stream.result().mode == "extractive"


def test_ask_prints_the_answer_found_in_the_code_first_then_the_models(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("CODEQA_MODEL", "stub-model")
    llm_stub.reply("It is built in `app/main.py:L7` and in app/cli.py:L9.")
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo))
    assert code == 0, err
    found, model = out.split("The model's answer (stub-model)")
    assert found.startswith("Found in the code (not the model's answer; the model reads ")
    assert "✓ app/cli.py:L9" in found and "Used 5 times in 2 files" in found
    assert EXTRACTIVE_NOTE not in found  # the heading says it
    assert "It is built in `app/main.py:L7`" in model and "Citations" in model
    assert "It is built" not in found


def test_ask_json_carries_both_answers_and_keeps_its_keys(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("CODEQA_MODEL", "stub-model")
    llm_stub.reply("It is built in app/main.py:L7.")
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo), "--no-llm", "--json")
    plain = json.loads(out)
    assert code == 0 and plain["early"] is None and plain["mode"] == "extractive"
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo), "--json")
    result = json.loads(out)
    assert code == 0 and result["mode"] == "llm" and result["answer"].startswith("It is built")
    assert set(plain) == set(result)  # every key of an answer, the same with and without a model
    early = result["early"]
    assert early["mode"] == "extractive" and early["model"] is None and early["prompt"] is None
    assert early["citations"] and all(c["verified"] for c in early["citations"])
    assert set(early) == set(result) - {"early"}


def test_a_failed_model_leaves_the_answer_found_in_the_code_once(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("CODEQA_MODEL", "stub-model")
    llm_stub.reply(status=500)
    code, out, err = run(capsys, "ask", USAGE_Q, "--repo", str(indexed_repo))
    assert code == 1 and "HTTP 500" in err
    assert out.count("Used 5 times in 2 files") == 1 and "The model could not answer" in out


def test_ctrl_c_while_the_model_reads_keeps_what_was_shown_and_exits_130(indexed_repo, llm_stub):
    """A real Ctrl-C (SIGINT to a `codeqa ask` process) once the model has been asked and has not said a word."""
    llm_stub.reply("never read", stall_after=0)  # the model reads for ever
    env = {**os.environ, "OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "CODEQA_MODEL": "stub-model",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ask", USAGE_Q, "--repo", str(indexed_repo)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not llm_stub.chat_requests and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)  # the answer found in the code is printed before the model is asked
        assert llm_stub.chat_requests, "the model was never asked"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert out.startswith("Found in the code") and "✓ app/cli.py:L9" in out
    assert err.strip().splitlines()[-1] == ("Stopped: the model's answer was not finished; the answer found in the "
                                            "code is above.")
    assert "Traceback" not in err and "never read" not in out


# ---- a prompt the server can reuse --------------------------------------------------------------------

def test_llama_cpp_is_asked_to_cache_and_says_what_it_reused(retriever, llm_stub, llm_settings):
    llm_stub.window = 8192
    llm_stub.reply(MODEL_REPLY)
    conversation = Conversation()
    answerer = Answerer(retriever, llm_settings)
    first = answerer.answer(HOW_Q, conversation)
    body = llm_stub.chat_requests[-1].body
    assert body["cache_prompt"] is True and body["stream_options"] == {"include_usage": True}
    assert first.served.read_tokens == first.prompt.tokens and first.served.cached_tokens == 0
    second = answerer.answer("and where is it instantiated?", conversation)
    # the instructions and the first turn are the start the two prompts share: read once, then reused
    assert 0 < second.served.cached_tokens and second.served.read_tokens < second.prompt.tokens
    assert second.served.read_tokens + second.served.cached_tokens == llm_stub.prompt_tokens[-1]
    assert second.served.read_per_second == 50.0 and second.served.write_per_second == 10.0


def test_ask_json_says_the_prompt_tokens_read_and_reused(capsys, indexed_repo, llm_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    monkeypatch.setenv("CODEQA_MODEL", "stub-model")
    llm_stub.window = 8192
    llm_stub.reply(MODEL_REPLY)
    run(capsys, "ask", HOW_Q, "--repo", str(indexed_repo), "--json")
    code, out, err = run(capsys, "ask", HOW_Q, "--repo", str(indexed_repo), "--json")  # the same prompt again
    prompt = json.loads(out)["prompt"]
    assert code == 0 and prompt["cached_tokens"] > prompt["tokens"] // 2
    assert prompt["read_tokens"] + prompt["cached_tokens"] == llm_stub.prompt_tokens[-1]
    assert prompt["read_per_second"] == 50.0 and prompt["write_per_second"] == 10.0


def test_an_openai_style_usage_chunk_gives_the_cached_count(retriever, llm_stub, llm_settings):
    llm_stub.ollama_parameters = "num_ctx 8192"  # Ollama: no timings, the OpenAI usage chunk
    llm_stub.reply(MODEL_REPLY)
    answerer = Answerer(retriever, llm_settings)
    answerer.answer(HOW_Q)
    second = answerer.answer(HOW_Q)
    assert llm_stub.chat_requests[-1].body["stream_options"] == {"include_usage": True}
    assert "cache_prompt" not in llm_stub.chat_requests[-1].body
    assert second.served.cached_tokens > 0 and second.served.read_per_second is None
    assert second.served.written_tokens == len(MODEL_REPLY.split())


def test_ollama_is_told_to_keep_the_model_loaded_after_each_answer(retriever, llm_stub, llm_settings):
    llm_stub.ollama_parameters = "num_ctx 8192"
    llm_stub.reply(MODEL_REPLY)
    Answerer(retriever, llm_settings.with_(keep_alive="2h")).answer(HOW_Q)
    kept = [r for r in llm_stub.requests if r.path == "/api/generate"]
    assert [r.body for r in kept] == [{"model": "stub-model", "keep_alive": "2h"}]
    assert llm_stub.requests.index(kept[0]) > llm_stub.requests.index(llm_stub.chat_requests[-1])
    assert "keep_alive" not in llm_stub.chat_requests[-1].body  # its OpenAI endpoint would ignore it


def test_a_server_of_no_known_kind_gets_no_field_it_may_refuse(retriever, llm_stub, llm_settings):
    llm_stub.reply(MODEL_REPLY)
    answer = Answerer(retriever, llm_settings).answer(HOW_Q)
    body = llm_stub.chat_requests[-1].body
    assert not {"cache_prompt", "stream_options", "keep_alive"} & set(body)
    assert answer.served is None and not [r for r in llm_stub.requests if r.path == "/api/generate"]


def test_a_keep_alive_ollama_cannot_read_is_refused_naming_the_setting():
    settings = Settings.load(env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "CODEQA_MODEL": "m",
                                  "CODEQA_KEEP_ALIVE": "half an hour"})
    with pytest.raises(UsageError, match="CODEQA_KEEP_ALIVE='half an hour'"):
        OpenAIChat.from_settings(settings)
    for fine in ("30m", "1h30m", "-1", "0", "90s", "3600"):
        OpenAIChat.from_settings(settings.with_(keep_alive=fine))


# ---- what it costs, said before it starts ---------------------------------------------------------------

def test_a_later_question_says_how_long_it_should_take(retriever):
    usage = ServerUsage(read_tokens=None, cached_tokens=0, written_tokens=40, read_per_second=25.0, write_per_second=8.0)
    chat = FakeChat([MODEL_REPLY], tokens_per_char=0.3, window=8192, usage=usage)
    pace = Pace()
    first = Answerer(retriever, retriever.settings, chat=chat, pace=pace).stream(HOW_Q)
    assert first.estimate is None and first.estimate_seconds is None  # nothing is known before the first answer
    first.result()
    second = Answerer(retriever, retriever.settings, chat=chat, pace=pace).stream(USAGE_Q)  # a new Answerer, one pace
    assert second.estimate.reused_tokens == 0  # the server never said it reuses a prompt
    assert second.estimate_seconds == pytest.approx(second.prompt.tokens / 25.0 + 40 / 8.0)
    assert about(second.estimate_seconds).startswith("about ")


def test_a_follow_up_on_a_caching_server_is_expected_to_read_only_what_is_new(retriever):
    usage = ServerUsage(read_tokens=500, cached_tokens=300, written_tokens=40, read_per_second=25.0, write_per_second=8.0)
    chat = FakeChat([MODEL_REPLY], tokens_per_char=0.3, window=8192, usage=usage)
    conversation = Conversation()
    answerer = Answerer(retriever, retriever.settings, chat=chat)
    answerer.answer(HOW_Q, conversation)
    follow = answerer.stream("and where is it instantiated?", conversation)
    assert 0 < follow.estimate.reused_tokens < follow.prompt.tokens
    assert follow.estimate.read_seconds == pytest.approx((follow.prompt.tokens - follow.estimate.reused_tokens) / 25.0)


def test_speeds_are_measured_where_the_server_does_not_say_them():
    pace, server = Pace(), ("http://x/v1", "m")
    messages = [{"role": "user", "content": "q"}]
    pace.learn(server, messages, 3000, None, read_seconds=100.0, write_seconds=20.0, written=120)
    estimate = pace.estimate(server, messages, 1500)
    assert estimate.read_seconds == pytest.approx(50.0) and estimate.write_seconds == pytest.approx(20.0)
    pace.learn(server, messages, 100, None, read_seconds=50.0, write_seconds=1.0, written=2)  # too little to time
    assert pace.estimate(server, messages, 1500).read_seconds == pytest.approx(50.0)
    assert pace.estimate(("http://y/v1", "m"), messages, 1500) is None  # another server: nothing known


@pytest.mark.parametrize("seconds, words", [(4, "a few seconds"), (41, "about 40 s"), (250, "about 4 min")])
def test_the_wait_in_words(seconds, words):
    assert about(seconds) == words
