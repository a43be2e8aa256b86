"""The chat model is never guessed: an LLM endpoint configured without CODEQA_MODEL is refused with a
message that names the setting and the way to answer without an LLM, before any request is sent."""

from __future__ import annotations

import pytest

from codeqa.llm import OpenAIChat
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.errors import UsageError
from codeqa.eval.judge import AnswerJudge


def test_an_endpoint_without_a_model_is_refused_with_what_to_set():
    settings = Settings.load(env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert settings.llm_configured and settings.model is None
    with pytest.raises(UsageError) as caught:
        OpenAIChat.from_settings(settings)
    message = str(caught.value)
    assert "CODEQA_MODEL" in message and "--no-llm" in message and "http://127.0.0.1:11434/v1" in message
    with pytest.raises(UsageError, match="CODEQA_JUDGE_MODEL or CODEQA_MODEL"):
        AnswerJudge.from_settings(settings)


def test_the_model_is_the_one_configured():
    settings = Settings.load(env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "CODEQA_MODEL": "llama3.1"})
    assert OpenAIChat.from_settings(settings).model == "llama3.1"
    assert AnswerJudge.from_settings(settings).model == "llama3.1"
    assert AnswerJudge.from_settings(settings.with_(judge_model="big-judge")).model == "big-judge"
    with pytest.raises(TypeError):
        OpenAIChat()  # no default model to fall back on


@pytest.mark.slow
def test_ask_with_an_endpoint_but_no_model_exits_2_before_any_request(capsys, monkeypatch, indexed_repo, llm_stub):
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.base_url)
    code = main(["ask", "How is EncoderClass used?", "--repo", str(indexed_repo)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "CODEQA_MODEL" in err and "--no-llm" in err and err.count("\n") == 1
    assert not llm_stub.requests
