"""Chat models: the ChatModel protocol, OpenAIChat (any OpenAI-compatible endpoint) and FakeChat.

The answer stage talks to an LLM through `ChatModel.stream`, the LLM reranker (query/rerank.py) through
`ChatModel.complete`; endpoint failures arrive as one `LLMError` sentence that names the endpoint, the
model and the setting to check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Protocol, Sequence

from ..config import Settings
from ..errors import LLMError, UsageError
from ..types import ServerUsage, one_line
from .endpoint import KEEP_ALIVE, EndpointInfo, count_prompt_tokens, keep_loaded, probe_endpoint, server_usage

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


class LLMTimeout(LLMError):
    """The endpoint fell silent past the wait (CODEQA_LLM_TIMEOUT), before or during the reply."""


class LLMClosed(LLMError):
    """The endpoint ended the reply's stream before it said the reply was done: the connection closed with
    no finish reason, or broke in the middle of the body."""


@dataclass(frozen=True)
class ChatDelta:
    """One piece of a streamed reply.

    `text` is answer text; `reasoning` is thinking the server sends apart (`reasoning_content`), never
    answer text; `finish` is the server's finish reason on the last piece ("stop", "length", ...);
    `progress` is (tokens read, tokens in all) while the model reads the prompt, before any text;
    `usage` what the server said of the whole request (tokens read, reused from its cache, written; speeds),
    on a piece of its own after the last text, where the server says it.
    """

    text: str = ""
    reasoning: str = ""
    finish: str | None = None
    progress: tuple[int, int] | None = None
    usage: ServerUsage | None = None


@dataclass(frozen=True)
class Generation:
    """What one request may produce: at most `max_tokens` answer tokens, and how long to wait.

    `first_wait` is the longest silence before the first piece (the model reads the whole prompt
    first: minutes for a CPU model), `wait` the longest silence between pieces after it."""

    max_tokens: int | None = None
    wait: float | None = None
    first_wait: float | None = None
    # a GBNF grammar the reply must follow, where the server takes one (llama.cpp); others ignore it
    grammar: str | None = None

    def waits(self, default: float) -> tuple[float, float]:
        """(the longest silence between pieces, the longest wait for the first piece)."""
        wait = self.wait or default
        return wait, max(wait, self.first_wait or 0.0)


class ChatModel(Protocol):
    """A chat endpoint that streams its reply.

    Contract:
    - `model` names the model asked for (recorded in answers, shown in messages).
    - `stream(messages, generation)` takes OpenAI-style messages (`{"role": "system"|"user"|"assistant",
      "content": str}`) and returns an iterator of `ChatDelta`s: the `text` of the pieces joined in order
      is the whole reply, `reasoning` never holds answer text, and the last piece carries the finish
      reason ("stop" for a whole reply, "length" when `generation.max_tokens` cut it, "content_filter", ...).
      A stream that ends with no finish reason was not finished (an answer reads it as closed early).
      Nothing is sent before iteration starts; closing the iterator early stops the request.
    - `complete(messages, generation)` returns the whole reply text as one string (a plain request).
    - `info()` says what the endpoint tells about itself (`EndpointInfo`: its context window and where
      that came from, the model it serves, whether it counts tokens); asked once, then remembered.
      It never raises: what cannot be learnt is None.
    - `count_tokens(messages)` counts a whole request's prompt tokens with the model's own tokenizer and
      chat template, or returns None when the endpoint cannot (then the caller estimates).
    - Every failure of `stream` and `complete` (unreachable endpoint, silence past the wait, HTTP error,
      malformed reply) raises `LLMError` whose message is one sentence naming the endpoint
      (OPENAI_BASE_URL) and the model; no other exception escapes. A failure may come after some pieces:
      silence past the wait raises LLMTimeout, a stream the endpoint closes before its finish reason
      (no `[DONE]`, or a body cut short) raises LLMClosed.
    - Never prints; never reads the environment (settings come in through the constructor).
    """

    model: str

    def stream(self, messages: Sequence[Message], generation: Generation | None = None) -> Iterator[ChatDelta]: ...

    def complete(self, messages: Sequence[Message], generation: Generation | None = None) -> str: ...

    def info(self) -> EndpointInfo: ...

    def count_tokens(self, messages: Sequence[Message]) -> int | None: ...


class OpenAIChat:
    """Any OpenAI-compatible chat endpoint via the `openai` client: OpenAI, vLLM, Ollama, llama.cpp server.

    `timeout` is the longest silence between streamed pieces (a stream that keeps sending is never
    cut); before the first piece the wait is `Generation.first_wait`, sized by the caller from the
    prompt. `max_retries` retries connection errors, 408/429/5xx once by default. What the endpoint
    says about itself (endpoint.py) picks the settings that keep a model from repeating itself, and what
    keeps a prompt's start for the next question: llama.cpp is asked to cache it (`cache_prompt`), and
    Ollama, whose OpenAI-compatible endpoint ignores `keep_alive`, is told on its own API after each
    request to keep the model loaded for `keep_alive` (CODEQA_KEEP_ALIVE; its default unloads it after
    five idle minutes, and the next question would load it again).
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 1, temperature: float | None = 0.0,
                 window: int | None = None, keep_alive: str | None = None):
        self.model = model
        self.keep_alive = keep_alive
        self.base_url = base_url
        self.timeout = timeout
        self.temperature = temperature
        self._api_key = api_key
        self._max_retries = max_retries
        self._window = window  # CODEQA_CONTEXT_WINDOW: used when the endpoint does not say
        self._client = None
        self._info: EndpointInfo | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenAIChat":
        """The configured endpoint and model; UsageError when an endpoint is configured without a model."""
        if not settings.model:
            raise UsageError(missing_model_message(settings))
        if not KEEP_ALIVE.fullmatch(settings.keep_alive):
            raise UsageError(f"CODEQA_KEEP_ALIVE={settings.keep_alive!r} is no duration Ollama takes: give one such as "
                             "30m, 2h or 90s (-1 keeps the model loaded for ever, 0 unloads it at once).")
        return cls(settings.model, settings.openai_base_url, settings.openai_api_key, settings.llm_timeout,
                   window=settings.context_window, keep_alive=settings.keep_alive)

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def info(self) -> EndpointInfo:
        if self._info is None:
            self._info = probe_endpoint(self.endpoint, self._api_key, self.model, self._window,
                                        timeout=min(self.timeout, 10.0))
        return self._info

    def count_tokens(self, messages: Sequence[Message]) -> int | None:
        if not self.info().tokenizes:
            return None
        return count_prompt_tokens(self.endpoint, self._api_key, messages, timeout=min(self.timeout, 30.0))

    def _openai(self):
        if self._client is None:
            try:
                from openai import OpenAI
            except ImportError as exc:
                raise LLMError(f"The openai package is not installed ({exc}); run `pip install openai`.") from exc
            # local servers (Ollama, llama.cpp, vLLM) need no key, but the client insists on one
            self._client = OpenAI(base_url=self.base_url, api_key=self._api_key or "not-needed",
                                  timeout=self.timeout, max_retries=self._max_retries)
        return self._client

    def _request(self, messages: Sequence[Message], stream: bool, generation: Generation | None):
        import httpx

        generation = generation or Generation()
        extra: dict = {} if self.temperature is None else {"temperature": self.temperature}
        kind = self.info().kind
        if generation.max_tokens:
            # OpenAI's newer models take only max_completion_tokens; every local server knows max_tokens
            extra["max_completion_tokens" if kind == "openai" else "max_tokens"] = generation.max_tokens
        body = dict(REPEAT_GUARD.get(kind, {}))
        if stream and kind in USAGE_IN_STREAMS:  # the tokens read, reused and written, after the last piece
            extra["stream_options"] = {"include_usage": True}
        if kind == "llama.cpp":
            # the next request reads only what follows the start it shares with this one (llama.cpp's default
            # since 2024, said for the servers before it)
            body["cache_prompt"] = True
        if stream and kind == "llama.cpp":
            body["return_progress"] = True  # prompt progress chunks while it reads: a live wait, not silence
        if generation.grammar and kind == "llama.cpp":
            body["grammar"] = generation.grammar
        if body:
            extra["extra_body"] = body
        wait, first = generation.waits(self.timeout)
        # the read timeout is the silence allowed between two pieces; the first may take as long as reading does
        extra["timeout"] = httpx.Timeout(first, connect=min(wait, 10.0))
        return self._openai().chat.completions.create(model=self.model, messages=list(messages), stream=stream,
                                                      **extra)

    def stream(self, messages: Sequence[Message], generation: Generation | None = None) -> Iterator[ChatDelta]:
        import httpx
        import openai

        generation = generation or Generation()
        wait, first = generation.waits(self.timeout)
        watch = None  # set once the request is made: the stream has started
        finished = False
        served: ServerUsage | None = None
        try:
            response = self._request(messages, stream=True, generation=generation)
            watch = _Silence(lambda: _interrupt(response))
            watch.arm(first)  # until the first text: the model reads the prompt (progress chunks do not count)
            try:
                for chunk in response:
                    extra = getattr(chunk, "model_extra", None) or {}
                    progress = extra.get("prompt_progress")
                    if isinstance(progress, dict) and progress.get("total"):
                        # llama.cpp's `processed` is the prompt's tokens in its slot so far, the reused `cache`
                        # among them (server-context.cpp): adding the cache showed "5,686 of 2,844 tokens" on a
                        # prompt read before
                        total = int(progress["total"])
                        yield ChatDelta(progress=(min(int(progress.get("processed", 0)), total), total))
                    said = server_usage(extra.get("timings"), getattr(chunk, "usage", None))
                    if said is not None:  # llama.cpp's timings and a usage chunk may come apart: each adds what it says
                        served = said if served is None else replace(served, **{
                            k: v for k, v in vars(said).items() if v is not None})
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    delta = choice.delta
                    delta_extra = getattr(delta, "model_extra", None) or {}
                    text = getattr(delta, "content", None) or ""
                    reasoning = (getattr(delta, "reasoning_content", None) or delta_extra.get("reasoning_content")
                                 or delta_extra.get("reasoning") or "")
                    if text or reasoning:
                        watch.arm(wait)
                    finished = finished or bool(choice.finish_reason)
                    if text or reasoning or choice.finish_reason:
                        yield ChatDelta(text=text, reasoning=reasoning, finish=choice.finish_reason)
            finally:
                watch.stop()
                response.close()
            if watch.fired:
                raise LLMTimeout(self._silent(watch.limit))
            if not finished:
                # the SDK ends a stream quietly when the connection closes without `[DONE]`
                raise LLMClosed(self._closed("it ended with no finish reason"))
            self._keep_loaded()
            if served is not None:
                yield ChatDelta(usage=served)
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:  # ValueError: a malformed SSE line
            fired = watch is not None and watch.fired
            if fired or isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
                raise LLMTimeout(self._silent(watch.limit if fired else first)) from exc
            if watch is not None and isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
                if finished:
                    return  # the reply was whole; only the connection's goodbye was lost
                raise LLMClosed(self._closed(one_line(str(exc.__cause__ or exc), drop_period=True))) from exc
            raise LLMError(self.explain(exc)) from exc

    def _keep_loaded(self) -> None:
        """Ollama: keep the model loaded for CODEQA_KEEP_ALIVE from now (each request reset it to the default)."""
        if self.keep_alive and self.info().kind == "ollama":
            keep_loaded(self.endpoint, self._api_key, self.model, self.keep_alive, timeout=min(self.timeout, 10.0))

    def _closed(self, how: str) -> str:
        return (f"The chat endpoint {self.endpoint} closed the stream before the answer was done (model {self.model!r}): "
                f"{how}; see the server's log.")

    def _silent(self, seconds: float) -> str:
        return (f"The chat endpoint {self.endpoint} did not answer within {seconds:g}s of silence (model {self.model!r}); "
                "check OPENAI_BASE_URL or raise CODEQA_LLM_TIMEOUT.")

    def complete(self, messages: Sequence[Message], generation: Generation | None = None) -> str:
        import httpx
        import openai

        try:
            response = self._request(messages, stream=False, generation=generation)
            self._keep_loaded()
            return (response.choices[0].message.content or "") if response.choices else ""
        except (openai.OpenAIError, httpx.HTTPError, ValueError, AttributeError) as exc:
            raise LLMError(self.explain(exc)) from exc

    def explain(self, exc: BaseException) -> str:
        """One sentence saying what went wrong and which setting to check."""
        import httpx
        import openai

        where, model = self.endpoint, self.model
        if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
            return self._silent(self.timeout)
        if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
            return f"Could not reach the chat endpoint {where}; check OPENAI_BASE_URL and that the server is running."
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return f"The chat endpoint {where} rejected the API key (HTTP {exc.status_code}); check OPENAI_API_KEY."
        if isinstance(exc, openai.NotFoundError):
            return (f"The chat endpoint {where} answered 404 for model {model!r}; check CODEQA_MODEL (or --model) "
                    "and that OPENAI_BASE_URL ends with /v1.")
        if isinstance(exc, openai.APIStatusError):
            detail = one_line(_error_message(exc), drop_period=True)
            return f"The chat endpoint {where} answered HTTP {exc.status_code} for model {model!r}: {detail}."
        detail = one_line(str(exc), drop_period=True)
        return f"The chat endpoint {where} failed for model {model!r} (check OPENAI_BASE_URL): {detail}."


def _interrupt(response) -> None:
    """Wake a read blocked on the stream's socket (closing it from another thread does not) and close it."""
    import socket

    try:
        raw = getattr(response, "response", response)
        stream = raw.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):
        pass
    try:
        response.close()
    except Exception:  # noqa: BLE001 - the reading thread reports the silence
        pass


class _Silence:
    """A watchdog over a stream: `on_silence` runs (closing the response) when no piece came for `limit`
    seconds since the last `arm`. The HTTP read timeout alone cannot tell the model's first wait (it reads
    the whole prompt) from a stall between pieces."""

    def __init__(self, on_silence: Callable[[], None]):
        import threading

        self._on_silence = on_silence
        self._deadline = float("inf")
        self.limit = 0.0
        self.fired = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="codeqa-llm-silence", daemon=True)
        self._thread.start()

    def arm(self, seconds: float) -> None:
        import time

        self.limit = seconds
        self._deadline = time.monotonic() + seconds

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        import time

        while not self._stopped.wait(0.1):
            if time.monotonic() > self._deadline:
                self.fired = True
                try:
                    self._on_silence()
                finally:
                    return


# Servers that send the request's usage after its last piece when the stream asks for it (`stream_options`, an
# OpenAI field): another server may refuse a field it does not know.
USAGE_IN_STREAMS = ("openai", "llama.cpp", "vllm", "ollama")

# What keeps a greedy (temperature 0) small model from looping, by server: each server takes its own keys,
# and OpenAI refuses keys it does not know, so an unknown server gets none (the answer stage still cuts a
# stream that repeats itself).
REPEAT_GUARD: dict[str, dict] = {
    "llama.cpp": {"repeat_penalty": 1.1, "repeat_last_n": 128},
    "vllm": {"repetition_penalty": 1.05},
    "ollama": {"frequency_penalty": 0.2},
}


class FakeChat:
    """A scripted ChatModel for tests, benchmarks and demos: no network, instant.

    `replies` are used in order (the last repeats); a reply may be a function of the messages.
    `error` makes every call raise it. Every call's messages are kept in `requests`, its Generation in
    `generations`. `window` is the context window it reports; `tokens_per_char`, when given, makes it
    count prompts (as a server tokenizer would); `finish` is the finish reason of every reply, and `usage`
    what it says of every request after it. A reply longer than `Generation.max_tokens` words is cut
    there, with finish "length".
    """

    def __init__(self, replies: Sequence[str | Callable[[Sequence[Message]], str]] = ("No answer.",),
                 model: str = "fake", error: LLMError | None = None, window: int | None = None,
                 tokens_per_char: float | None = None, finish: str = "stop", usage: ServerUsage | None = None):
        self.model = model
        self.usage = usage
        self.replies = list(replies)
        self.error = error
        self.window = window
        self.tokens_per_char = tokens_per_char
        self.finish = finish
        self.requests: list[list[Message]] = []
        self.generations: list[Generation | None] = []

    def _reply(self, messages: Sequence[Message], generation: Generation | None) -> str:
        self.requests.append([dict(m) for m in messages])
        self.generations.append(generation)
        if self.error is not None:
            raise self.error
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        return reply(messages) if callable(reply) else reply

    def stream(self, messages: Sequence[Message], generation: Generation | None = None) -> Iterator[ChatDelta]:
        text = self._reply(messages, generation)
        pieces = [piece for piece in re.findall(r"\S+\s*|\s+", text) if piece]
        finish = self.finish
        if generation and generation.max_tokens and len(pieces) > generation.max_tokens:
            pieces, finish = pieces[:generation.max_tokens], "length"
        yield from (ChatDelta(text=piece) for piece in pieces)
        yield ChatDelta(finish=finish)
        if self.usage is not None:
            yield ChatDelta(usage=self.usage)

    def complete(self, messages: Sequence[Message], generation: Generation | None = None) -> str:
        return self._reply(messages, generation)

    def info(self) -> EndpointInfo:
        source = "FakeChat" if self.window else None
        return EndpointInfo(kind="fake", window=self.window, window_source=source, served_model=self.model,
                            tokenizes=self.tokens_per_char is not None)

    def count_tokens(self, messages: Sequence[Message]) -> int | None:
        if self.tokens_per_char is None:
            return None
        return sum(int(len(m["content"]) * self.tokens_per_char) + 4 for m in messages)


def _error_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return getattr(exc, "message", None) or str(exc)


def missing_model_message(settings: Settings, setting: str = "CODEQA_MODEL (or --model)") -> str:
    """Why no chat request can be sent: an LLM endpoint is configured, but no model to ask for."""
    where = f"OPENAI_BASE_URL={settings.openai_base_url}" if settings.openai_base_url else "OPENAI_API_KEY is set"
    return (f"An LLM endpoint is configured ({where}) but no chat model: set {setting} to a model "
            "the endpoint serves (e.g. CODEQA_MODEL=llama3.1 for Ollama), or pass --no-llm to answer without an LLM.")


__all__ = ["ChatModel", "ChatDelta", "Generation", "OpenAIChat", "FakeChat", "Message", "LLMClosed", "LLMTimeout",
           "missing_model_message"]
