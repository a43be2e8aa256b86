"""Chat models: the ChatModel protocol, OpenAIChat (any OpenAI-compatible endpoint) and FakeChat.

The answer stage talks to an LLM only through `ChatModel.stream`; endpoint failures arrive as one
`LLMError` sentence that names the endpoint, the model and the setting to check.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Protocol, Sequence

from .config import Settings
from .errors import LLMError, UsageError
from .types import one_line

# Not a fallback: codeqa never picks a chat model itself (an endpoint serves the models it serves).
# Only codeqa/answer.py and ui/answer_view.py still import this name; remove it with those imports.
Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


class ChatModel(Protocol):
    """A chat endpoint that streams its reply.

    Contract:
    - `model` names the model (recorded in answers, shown in messages).
    - `stream(messages)` takes OpenAI-style messages (`{"role": "system"|"user"|"assistant",
      "content": str}`) and returns an iterator of non-empty text pieces; joined in order they are
      the whole reply. Nothing is sent before iteration starts.
    - `complete(messages)` returns the whole reply as one string (a plain, non-streamed request).
    - Every failure (unreachable endpoint, timeout, HTTP error, malformed reply) raises `LLMError`
      whose message is one sentence naming the endpoint (OPENAI_BASE_URL) and the model; no other
      exception escapes. A failure may come after some pieces were yielded.
    - Never prints; never reads the environment (settings come in through the constructor).
    """

    model: str

    def stream(self, messages: Sequence[Message]) -> Iterator[str]: ...

    def complete(self, messages: Sequence[Message]) -> str: ...


class OpenAIChat:
    """Any OpenAI-compatible chat endpoint via the `openai` client: OpenAI, vLLM, Ollama, llama.cpp server.

    `timeout` bounds connecting and each wait for data (a stream that keeps sending is not cut);
    `max_retries` retries connection errors, 408/429/5xx once by default.
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 1, temperature: float | None = 0.0):
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.temperature = temperature
        self._api_key = api_key
        self._max_retries = max_retries
        self._client = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenAIChat":
        """The configured endpoint and model; UsageError when an endpoint is configured without a model."""
        if not settings.model:
            raise UsageError(missing_model_message(settings))
        return cls(settings.model, settings.openai_base_url, settings.openai_api_key, settings.llm_timeout)

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

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

    def _request(self, messages: Sequence[Message], stream: bool):
        extra = {} if self.temperature is None else {"temperature": self.temperature}
        return self._openai().chat.completions.create(model=self.model, messages=list(messages), stream=stream, **extra)

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        import httpx
        import openai

        try:
            for chunk in self._request(messages, stream=True):
                if not chunk.choices:
                    continue
                piece = getattr(chunk.choices[0].delta, "content", None)
                if piece:
                    yield piece
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:  # ValueError: a malformed SSE line
            raise LLMError(self.explain(exc)) from exc

    def complete(self, messages: Sequence[Message]) -> str:
        import httpx
        import openai

        try:
            response = self._request(messages, stream=False)
            return (response.choices[0].message.content or "") if response.choices else ""
        except (openai.OpenAIError, httpx.HTTPError, ValueError, AttributeError) as exc:
            raise LLMError(self.explain(exc)) from exc

    def explain(self, exc: BaseException) -> str:
        """One sentence saying what went wrong and which setting to check."""
        import httpx
        import openai

        where, model = self.endpoint, self.model
        if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
            return (f"The chat endpoint {where} did not answer within {self.timeout:g}s (model {model!r}); "
                    "check OPENAI_BASE_URL or raise CODEQA_LLM_TIMEOUT.")
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


class FakeChat:
    """A scripted ChatModel for tests, benchmarks and demos: no network, instant.

    `replies` are used in order (the last repeats); a reply may be a function of the messages.
    `error` makes every call raise it. Every call's messages are kept in `requests`.
    """

    def __init__(self, replies: Sequence[str | Callable[[Sequence[Message]], str]] = ("No answer.",),
                 model: str = "fake", error: LLMError | None = None):
        self.model = model
        self.replies = list(replies)
        self.error = error
        self.requests: list[list[Message]] = []

    def _reply(self, messages: Sequence[Message]) -> str:
        self.requests.append([dict(m) for m in messages])
        if self.error is not None:
            raise self.error
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        return reply(messages) if callable(reply) else reply

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        text = self._reply(messages)
        yield from (piece for piece in re.findall(r"\S+\s*|\s+", text) if piece)

    def complete(self, messages: Sequence[Message]) -> str:
        return self._reply(messages)


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


__all__ = ["ChatModel", "OpenAIChat", "FakeChat", "Message", "missing_model_message"]
