"""Bounded work per question: a length cap (CODEQA_MAX_QUESTION_CHARS) that every shell meets, and question
parsing that grows linearly with the question (a pasted log of 37,000 characters took a minute before)."""

from __future__ import annotations

import gc
import time

import pytest
from mcp.server.mcpserver.exceptions import ToolError

import codeqa.embed
from codeqa.answer import Answerer
from codeqa.cli import main
from codeqa.config import Settings
from codeqa.errors import QuestionTooLongError, UsageError
from codeqa.mcp.tools import RepositoryTools
from codeqa.query.question import parse_question
from codeqa.query.retrieve import Retriever
from test_ui import ask, calls, page, texts  # noqa: F401 (calls: the page's fixture)

CAP = Settings().max_question_chars
# questions made of what costs the parser most, each name a few characters apart: identifiers, names before a
# kind word, possessives, "where ..." with no verb after it, dotted chains, one long word
PATHOLOGICAL = {
    "identifiers": "a_b ",
    "camel case": "FooBar ",
    "kind words": "the x function of Foo ",
    "subject slots": "who calls x_y ",
    "where without a verb": "where x ",
    "how is without a participle": "how is ",
    "possessives": "Foo's bar method ",
    "between without and": "between x ",
    "dotted chain": "a.",
    "one long word": "a",
    "backticks": "`a ",
    "names of the fixture repo": "How is the `encode` function of EncoderClass used by make_encoder in app/cli.py? ",
}


def repeated(text: str, length: int) -> str:
    return (text * (length // len(text) + 1))[:length]


def parse_seconds(question: str) -> float:
    """The best of three parses, with the collector off: a suite's large heap made one parse take 2.8 s in a
    collection pass, which says nothing of the parser."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            started = time.perf_counter()
            parsed = parse_question(question)
            best = min(best, time.perf_counter() - started)
    finally:
        gc.enable()
    assert parsed.text == question
    return best


@pytest.mark.parametrize("shape", PATHOLOGICAL)
def test_parsing_grows_linearly_with_the_question(shape):
    # the old parser compared every pair of names and searched the whole text before each: four times the text
    # took ~16 times as long (16,000 characters of these took 6 to 40 s each); a linear one takes ~4 times as long
    # (3.8-6.4 measured). The ratio, not a wall-clock bound, so a loaded machine does not decide it.
    small = parse_seconds(repeated(PATHOLOGICAL[shape], CAP))
    large = parse_seconds(repeated(PATHOLOGICAL[shape], 4 * CAP))
    assert large < 10 * max(small, 1e-3), (shape, small, large)


def test_a_pathological_question_at_the_cap_is_retrieved_in_well_under_a_second_of_parsing(indexed_repo, embedder):
    settings = Settings.load(env={})
    with Retriever.open(indexed_repo, settings, embedder) as retriever:
        for shape in ("camel case", "names of the fixture repo", "identifiers"):
            question = repeated(PATHOLOGICAL[shape], CAP)
            started = time.perf_counter()
            retriever.match_question(question)
            assert time.perf_counter() - started < 1.0, shape


def test_the_cap_is_a_setting_of_four_thousand_characters_read_from_the_environment():
    assert CAP == 4000
    assert Settings.load(env={"CODEQA_MAX_QUESTION_CHARS": "120"}).max_question_chars == 120
    with pytest.raises(UsageError, match="CODEQA_MAX_QUESTION_CHARS"):
        Settings.load(env={"CODEQA_MAX_QUESTION_CHARS": "0"})


def test_every_library_entry_refuses_a_question_past_the_cap_and_takes_one_at_it(indexed_repo, embedder):
    settings = Settings.load(env={"CODEQA_MAX_QUESTION_CHARS": "200"})
    at_cap = repeated("How is EncoderClass used? ", 200)
    over = at_cap + "?"
    with Retriever.open(indexed_repo, settings, embedder) as retriever:
        for call in (retriever.retrieve, retriever.match_question, retriever.search, retriever.loading_note,
                     lambda q: Answerer(retriever, settings).stream(q, no_llm=True)):
            with pytest.raises(QuestionTooLongError) as refused:
                call(over)
            message = str(refused.value)
            assert "201 characters" in message and "at most 200" in message and "CODEQA_MAX_QUESTION_CHARS" in message
            assert refused.value.exit_code == 2
            call(at_cap)  # the cap itself is taken


def test_the_cli_exits_2_with_the_setting_named(capsys, indexed_repo, monkeypatch):
    monkeypatch.setenv("CODEQA_MAX_QUESTION_CHARS", "50")
    code = main(["ask", "x" * 51, "--repo", str(indexed_repo), "--no-llm"])
    captured = capsys.readouterr()
    assert code == 2
    assert "CODEQA_MAX_QUESTION_CHARS" in captured.err and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1  # one sentence, no stack


def test_the_mcp_ask_and_search_tools_return_a_tool_error(indexed_repo, embedder, monkeypatch):
    monkeypatch.setattr(codeqa.embed, "make_embedder", lambda *args, **kwargs: embedder)
    tools = RepositoryTools(indexed_repo, Settings.load(env={"CODEQA_MAX_QUESTION_CHARS": "50"}))
    try:
        for call in (tools.ask, tools.search_code):
            with pytest.raises(ToolError, match="CODEQA_MAX_QUESTION_CHARS"):
                call("y" * 51)
    finally:
        tools.close()


def test_the_page_shows_the_message_and_answers_the_next_question(monkeypatch, calls, indexed_repo):
    at = page(monkeypatch, indexed_repo, CODEQA_MAX_QUESTION_CHARS="60")
    ask(at, " ".join(["How is EncoderClass used?"] * 3))
    assert "CODEQA_MAX_QUESTION_CHARS" in texts(at.error) and "77 characters" in texts(at.error)
    ask(at, "How is EncoderClass used?")
    assert "Used 5 times in 2 files" in texts(at.markdown)
