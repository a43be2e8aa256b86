"""A model's stream as an answer: where it is (AnswerProgress), its thinking set apart (ThinkSplitter), a
stream that loops (repeating, over sentences as a reader sees them: reader_sentences), and how an answer
ended early, in the words every shell shows (CUT_REASONS, describe_cut). Used by answer.AnswerStream; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class AnswerProgress:
    """Where an LLM answer is, for a shell to show while it waits: "loading" a model before the search (the
    likelihood lead's, `Retriever.loading_note`; `done` 0, `total` None), "reading" the prompt (`done` of `total`
    tokens, when the server says; `total` is the prompt's size) or "writing" (`done` pieces so far). A shell may
    send its own: MCP's "early" carries the answer found in the code (AnswerStream.early) in its message."""

    stage: str  # "loading" | "reading" | "writing" | "early"
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


# How an answer ended early (Answer.cut), as each shell words it after "The answer is incomplete: ".
CUT_REASONS: dict[str, str] = {
    "length": "it reached its token limit",
    "repeating": "the model was repeating itself, and was stopped",
    "content_filter": "the endpoint's content filter stopped it",
    "stopped": "the endpoint ended it for a reason other than a finished answer",
    "closed": "the endpoint closed the stream before the answer was done",
    "timeout": "the endpoint fell silent past CODEQA_LLM_TIMEOUT",
    "error": "the stream broke",
}


def describe_cut(cut: str) -> str:
    """Why an answer is incomplete, in a few words (a cut this version does not know is named as it is)."""
    return CUT_REASONS.get(cut, f"it ended early ({cut})")


# A sentence ends at . ! or ? before whitespace (so `pkg/use.py`, 1.5 and a.b.c do not end one) or at a line
# break; a list item's marker ("- ", "2. ") is no sentence of its own.
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_LIST_MARKER = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s+|\s+")
_SPACE = re.compile(r"\s+")


def reader_sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) for each sentence of `text` as a reader sees it, stripped, in order."""
    out: list[tuple[int, str]] = []
    start = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        line_start = start == 0 or text[start - 1] == "\n"
        if line_start and _LIST_MARKER.fullmatch(text[start:end] + " "):
            continue  # "2." opens the item: its sentence runs on
        piece = text[start:end]
        lead = (_LIST_MARKER if line_start else _SPACE).match(piece)
        skip = lead.end() if lead else 0
        if piece[skip:].strip():
            out.append((start + skip, piece[skip:].rstrip()))
        start = end
    return out


def repeating(text: str) -> int | None:
    """Where a looping stream's repetition starts (the second copy), or None: the text ends with one unit
    of 16-400 characters repeated back to back over 200+ characters (three copies at least), or one
    sentence of 40+ characters occurs three times. List items that share a long prefix but name different
    files are different sentences."""
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
    for at, sentence in reader_sentences(text):
        if len(sentence) < 40:
            continue
        key = " ".join(sentence.split())
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            second = at
        if seen[key] >= 3:
            return second
    return None


__all__ = ["AnswerProgress", "ProgressCallback", "ThinkSplitter", "repeating", "reader_sentences", "CUT_REASONS",
           "describe_cut"]
