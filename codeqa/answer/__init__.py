"""The answer side: from retrieved evidence to an Answer whose citations are checked.

    conversation.py  follow-ups rewritten to stand alone, the bounded history
    prompt.py        the messages, fitted to the model's window (graph facts, numbered snippets)
    streaming.py     progress, thinking set apart, a repeating stream cut
    citations.py     citations read in every form a model writes them, verified against the evidence
    defang.py        a model's Markdown made safe to render; markdown.py: its one parser, and where code lies
    extractive.py    an answer without an LLM; summary.py: the account of a usage answer
    answerer.py      Answerer and AnswerStream: the API the CLI, the page and MCP drive

    from codeqa.answer import Answerer, Conversation, ask

The chat client it streams through is codeqa.llm (ChatModel, OpenAIChat, FakeChat): the query side's
reranker asks it too.
"""

from __future__ import annotations

from .answerer import AnswerStream, Answerer, answer_to_json, ask, build_messages
from .citations import CitedSpan, parse_citations, verify_citations
from .conversation import Conversation, Turn
from .extractive import EXTRACTIVE_NOTE, extractive_answer
from .prompt import SYSTEM_PROMPT, PromptTooLarge, format_snippet, graph_facts
from .streaming import AnswerProgress, ThinkSplitter, repeating

__all__ = ["Answerer", "AnswerStream", "AnswerProgress", "Conversation", "Turn", "ask", "answer_to_json", "build_messages",
           "format_snippet", "graph_facts", "parse_citations", "verify_citations", "CitedSpan", "SYSTEM_PROMPT",
           "extractive_answer", "EXTRACTIVE_NOTE", "PromptTooLarge",
           "ThinkSplitter", "repeating"]
