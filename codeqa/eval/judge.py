"""LLM judge for `codeqa eval`: grades one answer for faithfulness to the code it cites and
correctness against the gold code, 1-5 each with a one-line reason.

The judge model is CODEQA_JUDGE_MODEL (else the chat model) on the configured OpenAI-compatible
endpoint, through `OpenAIChat.complete`. It sees the question, the gold code and the cited code
(both redacted, numbered like answer prompts) and the answer. Its reply is parsed leniently (a
fenced or prose-wrapped JSON object; scores `4`, `4.0`, `"4"`, `"4/5"`); a reply without usable
scores is recorded as "unparsed" and an endpoint failure as "failed": neither stops an evaluation.
"""

from __future__ import annotations

import json
import re
from typing import Sequence

from ..answer import format_snippet
from ..llm import ChatModel, OpenAIChat, missing_model_message
from ..config import Settings
from ..errors import LLMError, UsageError
from ..query.retrieve import Retriever
from ..types import Answer, Snippet, one_line
from .metrics import Verdict
from .questions import Span

JUDGE_SPAN_LINES = 60  # gold and cited code shown to the judge, per span
JUDGE_ANSWER_CHARS = 6000


JUDGE_PROMPT = """You grade answers to questions about a code repository. You get the question, the gold \
code (what a correct answer must rest on), the code the answer cites, and the answer.
Score two things from 1 (worst) to 5 (best):
- faithfulness: every claim in the answer is supported by the code it cites (5 all supported, 3 some \
claims unsupported, 1 mostly unsupported or invented; an answer that cites no code scores at most 2).
- correctness: the answer answers the question correctly, judged against the gold code (5 correct and \
complete, 3 partly correct or incomplete, 1 wrong or no answer).
Reply with one JSON object and nothing else:
{"faithfulness": <1-5>, "faithfulness_reason": "<one line>", "correctness": <1-5>, "correctness_reason": "<one line>"}"""


def parse_verdict(text: str) -> Verdict:
    """Read the judge's reply: a JSON object, possibly fenced or surrounded by prose. Scores must be
    whole numbers 1-5 (`4`, `4.0`, `"4"`, `"4/5"`); anything else is "unparsed", never an exception."""
    obj = _first_json_object(text)
    if obj is None:
        return Verdict("unparsed", detail=one_line(text) or "(empty reply)")
    scores = {key: _score(obj.get(key)) for key in ("faithfulness", "correctness")}
    if None in scores.values():
        return Verdict("unparsed", detail="scores missing or not 1-5: " + one_line(json.dumps(obj)))
    return Verdict("ok", scores["faithfulness"], scores["correctness"], one_line(str(obj.get("faithfulness_reason", ""))),
                   one_line(str(obj.get("correctness_reason", ""))))


def _first_json_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text or ""):
        try:
            obj, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _score(value: object) -> int | None:
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.0+)?)\s*(?:/\s*5)?\s*", value)
        value = float(m.group(1)) if m else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        return None
    return int(value) if 1 <= value <= 5 else None


class AnswerJudge:
    """Grades one answer with a chat model (`complete`, not streamed): faithfulness to the cited code,
    correctness against the gold code. Endpoint failures and bad replies become a Verdict, not an error."""

    def __init__(self, chat: ChatModel):
        self.chat = chat

    @classmethod
    def from_settings(cls, settings: Settings) -> "AnswerJudge":
        """CODEQA_JUDGE_MODEL, else the chat model (CODEQA_MODEL), on the same endpoint."""
        model = settings.judge_model or settings.model
        if not model:
            raise UsageError(missing_model_message(settings, "CODEQA_JUDGE_MODEL or CODEQA_MODEL"))
        return cls(OpenAIChat(model, settings.openai_base_url, settings.openai_api_key, settings.llm_timeout))

    @property
    def model(self) -> str:
        return self.chat.model

    def messages(self, question: str, answer: Answer, gold: Sequence[Span], retriever: Retriever) -> list[dict]:
        gold_code = "\n\n".join(format_snippet(i, s) for i, s in enumerate(_spans_text(gold, retriever), 1)) \
            or "(the gold files cannot be read)"
        cited = [Span(c.path, c.start_line, c.end_line) for c in answer.citations]
        cited_code = "\n\n".join(format_snippet(i, s) for i, s in enumerate(_spans_text(cited, retriever), 1)) \
            or "(the answer cites no code)"
        text = answer.answer if len(answer.answer) <= JUDGE_ANSWER_CHARS else answer.answer[:JUDGE_ANSWER_CHARS] + "\n[…]"
        user = (f"Question: {question}\n\nGold code:\n\n{gold_code}\n\nCode the answer cites:\n\n{cited_code}\n\n"
                f"Answer:\n{text}")
        return [{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": user}]

    def judge(self, question: str, answer: Answer, gold: Sequence[Span], retriever: Retriever) -> Verdict:
        try:
            reply = self.chat.complete(self.messages(question, answer, gold, retriever))
        except LLMError as exc:
            return Verdict("failed", detail=str(exc))
        return parse_verdict(reply)


def _spans_text(spans: Sequence[Span], retriever: Retriever) -> list[Snippet]:
    """Redacted file text of each span (cut to JUDGE_SPAN_LINES); unreadable spans are left out."""
    out = []
    for s in dict.fromkeys(spans):
        lines = retriever.source.redacted_lines(s.path)
        if lines is None or s.start_line > len(lines):
            continue
        end = min(s.end_line, len(lines), s.start_line + JUDGE_SPAN_LINES - 1)
        out.append(Snippet(s.path, s.start_line, end, "".join(lines[s.start_line - 1:end])))
    return out


__all__ = ["JUDGE_PROMPT", "Verdict", "parse_verdict", "AnswerJudge"]
