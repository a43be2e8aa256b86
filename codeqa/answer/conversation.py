"""Conversation: the turns of one chat, a follow-up rewritten to stand alone, and the bounded history
a prompt carries.

    conversation.rewrite("and where is it called?")  -> "where is EncoderClass called?" (the last turn's subject)
    conversation.messages()                           -> alternating user/assistant messages, newest kept, redacted

Secrets never reach the model: the history is redacted here, as the snippets are in packing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..redact import redact
from ..query.pack import CHARS_PER_TOKEN, count_tokens
from ..llm import Message

_CONJUNCTION = re.compile(r"^\s*(?:and|also|but|so|then|ok(?:ay)?|now)\b[\s,]*", re.IGNORECASE)
_WHAT_ABOUT = re.compile(r"^\s*(?:(?:and\s+)?(?:what|how)\s+about|and)\s+", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(it|its|this|that|they|them|these|those|this one|that one|the same)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    question: str  # as the user asked it
    query: str  # what retrieval used (the rewrite of a follow-up)
    answer: str
    subjects: tuple[str, ...] = ()  # qualified names the turn was about, for "it" in the next question


class Conversation:
    """The turns of one chat (the UI keeps one per session).

    Follow-ups are rewritten for retrieval ("and where is it called?" after a question about
    `EncoderClass` -> "where is EncoderClass called?") and the history goes into the prompt,
    bounded to the last `max_turns` turns and `max_history_tokens` tokens (oldest dropped first,
    long answers cut).
    """

    def __init__(self, max_turns: int = 4, max_history_tokens: int = 1500):
        self.turns: list[Turn] = []
        self.max_turns = max_turns
        self.max_history_tokens = max_history_tokens

    def __len__(self) -> int:
        return len(self.turns)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def clear(self) -> None:
        self.turns.clear()

    def rewrite(self, question: str, names: Sequence[str] = ()) -> str:
        """The retrieval query for `question`, given the names it mentions itself.

        A follow-up without names of its own gets the previous turn's subject in place of its
        pronoun ("where is it called?"); a bare "and X?" / "what about X?" repeats the previous
        question about X instead. Anything else is returned unchanged.
        """
        if not self.turns:
            return question
        last = self.turns[-1]
        subject = last.subjects[0] if last.subjects else None
        words = re.findall(r"\w+", question)
        if names:
            bare = _WHAT_ABOUT.sub("", question).strip(" ?.!")
            if _WHAT_ABOUT.match(question) and len(words) <= 5 and subject and subject in last.query:
                return last.query.replace(subject, bare)
            return question
        if subject is None:
            return question
        follow_up = bool(_CONJUNCTION.match(question)) or len(words) <= 10
        if not follow_up:
            return question
        stripped = _CONJUNCTION.sub("", question)
        if _PRONOUN.search(stripped):
            return _PRONOUN.sub(lambda m: f"{subject}'s" if m.group(1).lower() == "its" else subject, stripped, count=1)
        if _CONJUNCTION.match(question):
            return f"{stripped.rstrip(' ?')} ({subject})?"
        return question

    def messages(self) -> list[Message]:
        """History as alternating user/assistant messages, newest kept, within the bounds; redacted."""
        picked: list[Message] = []
        used = 0
        for turn in reversed(self.turns[-self.max_turns:]):
            answer = _cut_tokens(turn.answer, max(self.max_history_tokens // 2, 100))
            pair = [{"role": "user", "content": redact(turn.question)}, {"role": "assistant", "content": redact(answer)}]
            cost = count_tokens(turn.question) + count_tokens(answer) + 8
            if picked and used + cost > self.max_history_tokens:
                break
            picked = pair + picked
            used += cost
        return picked


def _cut_tokens(text: str, limit: int) -> str:
    if count_tokens(text) <= limit:
        return text
    cut = text[: int(limit * CHARS_PER_TOKEN)]
    return cut.rsplit("\n", 1)[0] + "\n[…]"
