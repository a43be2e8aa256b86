"""An answer's end is known (issue 63, item 7): the real `openai` client against the stub, which ends its
stream each way a server can — `[DONE]` after `stop`, `length`, `content_filter`, a close with no finish
reason, a connection dropped mid-body, silence — and each way gives its own `Answer.cut` and its own
mark in the answer, the CLI, the MCP notes and the page. The loop cut reads sentences as a reader does."""

from __future__ import annotations

import io

import pytest

from codeqa.answer import Answerer, repeating
from codeqa.answer.streaming import CUT_REASONS, describe_cut
from codeqa.llm import FakeChat, Generation, LLMClosed, LLMTimeout, OpenAIChat
from codeqa.query.retrieve import Retriever
from codeqa.types import Answer
from llm_stub import Reply
from test_ui import ask, calls, page, texts  # noqa: F401  (calls is the page tests' fixture)

HOW_Q = "How does EncoderClass encode a text?"
PARTIAL = "Encoder encodes text [1]. It then also "
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def retriever(indexed_repo, embedder, llm_settings):
    with Retriever.open(indexed_repo, llm_settings, embedder) as r:
        yield r


# ---- the chat client tells each end apart ---------------------------------------------------------

def test_a_finish_reason_without_done_is_complete_and_no_finish_reason_is_a_closed_stream(llm_stub):
    chat = OpenAIChat("stub-model", llm_stub.base_url, "k", timeout=2.0, max_retries=0)
    llm_stub.script(Reply("all of it", done=False))
    deltas = list(chat.stream(MESSAGES))
    assert "".join(d.text for d in deltas) == "all of it" and deltas[-1].finish == "stop"
    llm_stub.script(Reply("kept back", finish="content_filter"))
    assert list(chat.stream(MESSAGES))[-1].finish == "content_filter"
    for closing in (Reply(PARTIAL, finish=None, done=False), Reply(PARTIAL, broken=True)):
        llm_stub.script(closing)
        seen = []
        with pytest.raises(LLMClosed, match="closed the stream before"):
            for delta in chat.stream(MESSAGES):
                seen.append(delta.text)
        assert "".join(seen) == PARTIAL  # what came before the close still came
    llm_stub.script(Reply("one two three", stall_after=1))
    with pytest.raises(LLMTimeout, match="within 1s of silence"):
        list(chat.stream(MESSAGES, Generation(wait=1.0, first_wait=1.0)))


# ---- each end is its own cut, with its own mark --------------------------------------------------

ENDS = [  # (the stub's reply, Answer.cut, words the answer's note holds, an error is set)
    (Reply(PARTIAL), None, None, False),
    (Reply(PARTIAL, done=False), None, None, False),
    (Reply(PARTIAL, finish="eos_token"), None, None, False),  # Text Generation Inference before 2.2
    (Reply(PARTIAL, finish="length"), "length", "limit of", False),
    (Reply(PARTIAL, finish="content_filter"), "content_filter", "content filter", False),
    (Reply(PARTIAL, finish="tool_calls"), "stopped", "'tool_calls'", False),
    (Reply(PARTIAL, finish=None, done=False), "closed", "closed the stream before", True),
    (Reply(PARTIAL, broken=True), "closed", "closed the stream before", True),
    (Reply(PARTIAL + "and more", stall_after=7), "timeout", "silence", True),
]


@pytest.mark.parametrize("reply, cut, note, error", ENDS,
                         ids=["done", "stop-no-done", "eos_token", "length", "content_filter", "other", "closed", "broken", "timeout"])
def test_every_end_of_a_stream_gives_its_own_cut_and_mark(retriever, llm_stub, llm_settings, reply, cut, note, error):
    llm_stub.script(reply)
    answer = Answerer(retriever, llm_settings.with_(llm_timeout=1.0)).answer(HOW_Q)
    assert answer.mode == "llm" and answer.cut == cut and bool(answer.error) == error, (answer.cut, answer.error)
    assert answer.answer.startswith(PARTIAL.strip())
    if cut is None:
        assert answer.answer == PARTIAL.strip() or answer.answer == PARTIAL
    else:
        mark = answer.answer[len(PARTIAL.strip()):]  # what follows the text the model wrote
        assert "The answer was cut" in mark and note in mark, answer.answer


def test_the_shells_name_each_cut_in_their_own_words():
    from codeqa.cli.ask import _print_citations
    from codeqa.mcp.pages import page_info
    from codeqa.mcp.schemas import AnswerResult, answer_notes
    from rich.console import Console

    sentences = {cut: describe_cut(cut) for cut in CUT_REASONS}
    assert len(set(sentences.values())) == len(sentences) == 7  # no two ends read alike
    for cut, why in sentences.items():
        out = io.StringIO()
        _print_citations(Console(file=out, width=200), Answer("x [1].", (), (), "llm", cut=cut))
        assert f"The answer is incomplete: {why}." in out.getvalue()
        result = AnswerResult(answer="x", page=page_info(0, 1, 1), mode="llm",
                              route="search", model="m", error=None, citations=[], evidence=[], cut=cut)
        assert f"(the answer is incomplete: {why})" in answer_notes(result)
    assert describe_cut("made-up") == "it ended early (made-up)"


def test_the_page_warns_of_a_filtered_answer(monkeypatch, calls, indexed_repo, llm_stub):  # noqa: F811
    llm_stub.reply(PARTIAL, finish="content_filter")
    at = page(monkeypatch, indexed_repo, OPENAI_BASE_URL=llm_stub.base_url, OPENAI_API_KEY="test-key",
              CODEQA_MODEL="stub-model", CODEQA_LLM_TIMEOUT="5")
    ask(at, HOW_Q)
    assert f"The answer is incomplete: {describe_cut('content_filter')}." in texts(at.warning)


# ---- the loop cut reads sentences as a reader does --------------------------------------------------

FILE_LIST = (
    "EncoderClass is built in three places:\n\n"
    "1. `pkg/use.py` builds an encoder from the settings and passes it to the indexer [2].\n"
    "2. `pkg/cli.py` builds an encoder from the settings and passes it to the indexer [2].\n"
    "3. `pkg/api/v1.2/server.py` builds an encoder from the settings and passes it to the indexer [2].\n"
    "4. `pkg/app.main.py` builds an encoder from the settings and passes it to the indexer [2].\n"
    "Version 1.5 of a.b.c builds an encoder from the settings and passes it along [1].\n")


def test_a_list_of_files_sharing_a_long_prefix_is_not_a_loop(retriever):
    assert repeating(FILE_LIST) is None
    answer = Answerer(retriever, retriever.settings, chat=FakeChat([FILE_LIST])).answer(HOW_Q)
    assert answer.cut is None and answer.answer.strip() == FILE_LIST.strip()


def test_a_real_loop_is_still_cut_after_its_first_copy(retriever):
    item = "`pkg/use.py` builds an encoder from the settings and passes it to the indexer [2]. "
    assert repeating("It is built here. " + item * 3) is not None  # back to back
    spaced = "".join(f"{item}Then step {n} runs. " for n in range(3))  # the same sentence between others
    assert repeating(spaced) is not None and spaced[repeating(spaced):].startswith(item.strip())
    loop = FILE_LIST + "".join(f"- {item}\n" for _ in range(6))
    answer = Answerer(retriever, retriever.settings, chat=FakeChat([loop])).answer(HOW_Q)
    assert answer.cut == "repeating" and answer.answer.startswith(FILE_LIST.strip())
    assert answer.answer.count("`pkg/use.py` builds") <= 2  # the list's own item, and at most the loop's first copy
