"""How long a model's answer will take, said before it starts: a chat server's reading and writing speeds,
learnt from the answers it gave in this process (the page's session, the MCP server, a conversation).

    pace = Pace()                                   # kept by the shell across questions
    pace.learn(server, messages, tokens, served, read_seconds, write_seconds, written)   # after each answer
    pace.estimate(server, messages, tokens)         # Estimate | None (None until one prompt was read)
    about(estimate.seconds)                         # "about 40 s", the words every shell shows

A server's own figures come first (llama.cpp's `timings`: prompt and predicted tokens per second); else the
speeds are measured here, from the request to its first piece and from there to its end. A prompt's start
that repeats the last request's (the instructions, the conversation so far) is counted as reused where the
server has said that it reuses a cached prompt; the rest is read at the learnt speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..llm import Message
from ..types import ServerUsage
from .prompt import estimate_tokens

MIN_TIMED_READ_TOKENS = 256  # fewer prompt tokens read than this time mostly the request, not the reading
MIN_TIMED_WRITTEN = 8  # the same for the tokens written
KEPT_LENGTHS = 5  # the last answers whose length predicts the next one's


@dataclass(frozen=True)
class Estimate:
    """How long the next answer should take on this server: reading the prompt (until its first word), then
    writing as long an answer as its last ones."""

    read_seconds: float
    write_seconds: float
    reused_tokens: int  # of the prompt, expected from the server's cache: the start it shares with the last request

    @property
    def seconds(self) -> float:
        return self.read_seconds + self.write_seconds


@dataclass
class _Server:
    read_per_second: float | None = None
    write_per_second: float | None = None
    lengths: list[int] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # the last request's
    caches: bool = False  # the server said it reused part of a prompt


class Pace:
    """Speeds of each chat server (`server`: its endpoint and model) seen in this process."""

    def __init__(self) -> None:
        self._servers: dict[tuple[str, str], _Server] = {}

    def learn(self, server: tuple[str, str], messages: Sequence[Message], tokens: int, served: ServerUsage | None,
              read_seconds: float | None, write_seconds: float | None, written: int) -> None:
        """One finished request: its prompt (`tokens` long), what the server said of it, the seconds until its
        first piece and from there to its end, and the pieces written (tokens, near enough, where unsaid)."""
        known = self._servers.setdefault(server, _Server())
        served = served or ServerUsage()
        read = served.read_tokens if served.read_tokens is not None else tokens
        if served.read_per_second:
            known.read_per_second = served.read_per_second
        elif read_seconds and read >= MIN_TIMED_READ_TOKENS:
            known.read_per_second = read / read_seconds
        written = served.written_tokens or written
        if served.write_per_second:
            known.write_per_second = served.write_per_second
        elif write_seconds and written >= MIN_TIMED_WRITTEN:
            known.write_per_second = written / write_seconds
        if written:
            known.lengths = (known.lengths + [written])[-KEPT_LENGTHS:]
        known.caches = known.caches or bool(served.cached_tokens)
        known.messages = [dict(m) for m in messages]

    def estimate(self, server: tuple[str, str], messages: Sequence[Message], tokens: int) -> Estimate | None:
        """The next request's wait, or None before this server has read a prompt."""
        known = self._servers.get(server)
        if known is None or not known.read_per_second:
            return None
        reused = 0
        if known.caches:
            shared = 0
            while (shared < min(len(messages), len(known.messages)) - 1  # the new question is never cached
                   and messages[shared] == known.messages[shared]):
                shared += 1
            if shared:  # the shared messages' share of the counted prompt
                reused = min(tokens, round(tokens * estimate_tokens(messages[:shared]) / max(estimate_tokens(messages), 1)))
        length = sum(known.lengths) / len(known.lengths) if known.lengths else 0
        write = length / known.write_per_second if known.write_per_second else 0.0
        return Estimate((tokens - reused) / known.read_per_second, write, reused)


def about(seconds: float) -> str:
    """A wait in the words every shell shows: "about 40 s", "about 4 min"."""
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {max(10, 5 * round(seconds / 5))} s"
    return f"about {round(seconds / 60)} min"


__all__ = ["Pace", "Estimate", "about"]
