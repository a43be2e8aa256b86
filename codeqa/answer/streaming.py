"""A model's stream as an answer: where it is (AnswerProgress), its thinking set apart (ThinkSplitter), and
a stream that loops (repeating). Used by answer.AnswerStream; no I/O here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class AnswerProgress:
    """Where an LLM answer is, for a shell to show while it waits: "loading" a model before the search (the
    likelihood lead's, `Retriever.loading_note`; `done` 0, `total` None), "reading" the prompt (`done` of `total`
    tokens, when the server says; `total` is the prompt's size) or "writing" (`done` pieces so far)."""

    stage: str  # "loading" | "reading" | "writing"
    done: int
    total: int | None
    message: str


ProgressCallback = Callable[[AnswerProgress], None]


class ThinkSplitter:
    """Separates `<think>...</think>` blocks (a reasoning model's thinking inline in its text) from the
    answer, across pieces that split the tags anywhere."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self):
        self._buffer = ""
        self._thinking = False

    def feed(self, text: str, final: bool = False) -> tuple[str, str]:
        """(answer text, thinking) that `text` completes; a possible tag at the end waits for the next piece."""
        self._buffer += text
        answer, thought = [], []
        while self._buffer:
            tag = self.CLOSE if self._thinking else self.OPEN
            at = self._buffer.find(tag)
            if at >= 0:
                (thought if self._thinking else answer).append(self._buffer[:at])
                self._buffer = self._buffer[at + len(tag):]
                self._thinking = not self._thinking
                continue
            keep = 0 if final else next((k for k in range(len(tag) - 1, 0, -1) if self._buffer.endswith(tag[:k])), 0)
            (thought if self._thinking else answer).append(self._buffer[:len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep:]
            break
        return "".join(answer), "".join(thought)


def repeating(text: str) -> int | None:
    """Where a looping stream's repetition starts (the second copy), or None: the text ends with one unit
    of 16-400 characters repeated back to back over 200+ characters (three copies at least), or one
    sentence of 40+ characters occurs three times."""
    tail = text[-1500:]
    for period in range(16, min(400, len(tail) // 3) + 1):
        unit = tail[-period:]
        copies = 1
        while copies * period + period <= len(tail) and tail[-(copies + 1) * period:-copies * period] == unit:
            copies += 1
        if copies >= 3 and copies * period >= 200:
            first = text.find(unit)
            return text.find(unit, first + 1) if first >= 0 else len(text) - (copies - 1) * period
    seen: dict[str, int] = {}
    second = 0
    for m in re.finditer(r"[^.!?\n]{40,}[.!?]?", text):
        key = " ".join(m.group(0).split())
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            second = m.start()
        if seen[key] >= 3:
            return second
    return None


__all__ = ["AnswerProgress", "ProgressCallback", "ThinkSplitter", "repeating"]
