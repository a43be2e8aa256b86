"""A local OpenAI-compatible chat server for tests (stdlib only): the real `openai` client talks to it.

    stub = LLMStub().start()             # 127.0.0.1, random port; stub.base_url ends with /v1
    stub.reply("text")                   # what every request gets from now on
    stub.script(Reply(status=500), Reply("second"))   # the next requests, in order, then the default
    ... run code against stub.base_url ...
    stub.requests[-1].body["messages"]   # what the client sent
    stub.hold_embeddings() ... stub.release_embeddings()   # an index run's embedding batches wait in between
    stub.stop()

With `window` set the stub poses as llama.cpp's server with that context window: /v1/models and
/props report it, /apply-template and /tokenize count a prompt (one token per `chars_per_token`
characters), a prompt over the window is refused with llama.cpp's HTTP 400, `max_tokens` cuts a reply
(finish_reason "length"), a streamed request with "return_progress" gets a prompt-progress chunk first, and
the last chunk carries llama.cpp's `timings`: `cache_n`, the prompt's tokens it shares with the request before
(its prompt cache), and `prompt_n`, the rest. `stub.prompt_tokens` lists what each chat request's prompt counted.
With `ollama_parameters` set it poses as Ollama: /api/show answers them, /api/generate (its keep-alive call) is
answered. A stream whose request asks for it (`stream_options.include_usage`) ends with an OpenAI usage chunk,
`prompt_tokens_details.cached_tokens` counted as for `timings`.

Endpoints: POST /v1/chat/completions (plain JSON, or SSE when the body says "stream": true),
POST /v1/embeddings (deterministic bag-of-words vectors, EMBEDDING_DIMENSION long), GET /v1/models. A Reply can fail with an HTTP status and an OpenAI-style error body, wait before
answering (`delay`, for timeouts), pause between stream chunks (`chunk_delay`) or stall after some
chunks (`stall_after`, a stream that stops sending). Waits end at once when the stub stops. A stream ends
as a server may end it: its last chunk's `finish` reason ("stop", "length", "content_filter", or None for
no finish chunk), then `data: [DONE]` unless `done` is False, and `broken` declares a body longer than
the one sent, so the close reads as a connection dropped mid-body.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from local_server import JSONHandler, LocalServer


EMBEDDING_DIMENSION = 64


def stub_embedding(text: str) -> list[float]:
    """Words hashed into buckets: texts sharing words get similar vectors, and the same text the same one."""
    import hashlib

    vector = [0.0] * EMBEDDING_DIMENSION
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % EMBEDDING_DIMENSION] += 1.0
    return vector if any(vector) else [1.0] + [0.0] * (EMBEDDING_DIMENSION - 1)


@dataclass
class Reply:
    text: str | Callable[[dict], str] = "OK"  # or a function of the request body
    status: int = 200
    error: str = "stub error"  # the message of an error reply
    delay: float = 0.0  # seconds before the response starts
    chunk_delay: float = 0.0  # seconds between stream chunks
    stall_after: int | None = None  # stream: send this many chunks, then hang until the stub stops
    chunks: list[str] | None = None  # stream: exact pieces (default: the text split after each word)
    reasoning: str = ""  # stream: sent first as `reasoning_content` deltas, as servers that split thinking out do
    finish: str | None = "stop"  # stream: the last chunk's finish_reason ("length" when max_tokens cut the pieces)
    done: bool = True  # stream: end with `data: [DONE]`; False closes the connection without it
    broken: bool = False  # stream: promise a longer body (Content-Length) and close short of it, without [DONE]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON
    held: bool = False  # an embeddings request that waited for release_embeddings()

    @property
    def messages(self) -> list[dict]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def text(self) -> str:
        """Everything the client sent as message content, joined: what a secret must never be in."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass
class LLMStub(LocalServer):
    model: str = "stub-model"
    requests: list[RecordedRequest] = field(default_factory=list)
    window: int | None = None  # set: the stub poses as llama.cpp with this context window
    ollama_parameters: str | None = None  # set: the stub poses as Ollama; /api/show answers these parameters
    chars_per_token: float = 3.0
    prompt_tokens: list[int] = field(default_factory=list)
    last_prompt: str = ""  # the templated prompt of the last chat request: what its prompt cache holds

    def count(self, messages: list[dict]) -> int:
        """Tokens of a templated prompt, as this stub's llama.cpp pose counts them."""
        return len(self.template(messages)) // max(1, int(self.chars_per_token)) + 1

    @staticmethod
    def template(messages: list[dict]) -> str:
        return "".join(f"<|im_start|>{m.get('role')}\n{m.get('content')}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"

    def __post_init__(self):
        self._default = Reply()
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._embeddings_open = threading.Event()
        self._embeddings_open.set()
        self._held_since = 0  # requests before the last hold_embeddings() are not counted by held_embeddings

    # ---- control --------------------------------------------------------------------------
    def stop(self) -> None:
        self._stopping.set()  # waits inside replies end at once
        super().stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, text: str | Callable[[dict], str] = "OK", **options) -> None:
        """The reply for every request that no script() entry is waiting for."""
        with self._lock:
            self._default = Reply(text, **options)

    def script(self, *replies: Reply) -> None:
        """Replies for the next requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def hold_embeddings(self) -> None:
        """From now on an embeddings request of several texts (an index run's batch) waits, until
        release_embeddings() or the stub stops; one text (a search query, a dimension probe) goes through."""
        self._held_since = len(self.requests)
        self._embeddings_open.clear()

    def release_embeddings(self) -> None:
        self._embeddings_open.set()

    @property
    def held_embeddings(self) -> int:
        """Embeddings requests held since the last hold_embeddings() (waiting now, or answered since)."""
        return sum(1 for r in self.requests[self._held_since:] if r.held)

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # ---- used by the handler ----------------------------------------------------------------
    def _next_reply(self) -> Reply:
        with self._lock:
            return self._queue.pop(0) if self._queue else self._default

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the stub stops first; True when it is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


class _Handler(JSONHandler):
    owner: LLMStub
    server_version = "llm-stub/1"

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            body = raw
        request = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.owner.requests.append(request)
        return request

    def do_GET(self) -> None:
        self._record()
        window = self.owner.window
        if self.path.rstrip("/").endswith("/models"):
            entry = {"id": self.owner.model, "object": "model", "owned_by": "stub"}
            if window:
                entry.update(owned_by="llamacpp", meta={"n_ctx": window, "n_ctx_train": 32768})
            self.send_json(200, {"object": "list", "data": [entry]})
        elif self.owner.ollama_parameters is not None and self.path == "/api/version":
            self.send_json(200, {"version": "0.5.7"})
        elif window and self.path.rstrip("/") == "/props":
            self.send_json(200, {"default_generation_settings": {"n_ctx": window}, "model_alias": self.owner.model})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        request = self._record()
        if self.path.rstrip("/").endswith("/embeddings"):
            body = request.body if isinstance(request.body, dict) else {}
            inputs = body.get("input") or []
            inputs = [inputs] if isinstance(inputs, str) else inputs
            if len(inputs) > 1 and not self.owner._embeddings_open.is_set():
                request.held = True
                while not self.owner._embeddings_open.wait(0.05):
                    if self.owner._stopping.is_set():
                        return
            try:
                self.send_json(200, {"object": "list", "model": body.get("model", "stub-embed"),
                                 "data": [{"object": "embedding", "index": i, "embedding": stub_embedding(t)}
                                          for i, t in enumerate(inputs)],
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            except (BrokenPipeError, ConnectionResetError):  # the client gave up while the batch was held
                pass
            return
        body = request.body if isinstance(request.body, dict) else {}
        if self.owner.ollama_parameters is not None and self.path == "/api/show":
            self.send_json(200, {"parameters": self.owner.ollama_parameters, "model_info": {"qwen2.context_length": 32768}})
            return
        if self.owner.ollama_parameters is not None and self.path == "/api/generate":
            self.send_json(200, {"model": body.get("model"), "response": "", "done": True, "done_reason": "load"})
            return
        if self.owner.window and self.path == "/apply-template":
            self.send_json(200, {"prompt": self.owner.template(body.get("messages") or [])})
            return
        if self.owner.window and self.path == "/tokenize":
            content = str(body.get("content", ""))
            self.send_json(200, {"tokens": list(range(len(content) // max(1, int(self.owner.chars_per_token)) + 1))})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        if self.owner.window:
            used = self.owner.count(body.get("messages") or [])
            self.owner.prompt_tokens.append(used)
            if used > self.owner.window:
                self.send_json(400, {"error": {"code": 400, "type": "exceed_context_size_error",
                                               "message": f"request ({used} tokens) exceeds the available context size "
                                                          f"({self.owner.window} tokens), try increasing it"}})
                return
        reply = self.owner._next_reply()
        if self.owner._wait(reply.delay):
            return
        try:
            if reply.status != 200:
                kind = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit"}.get(reply.status, "server_error")
                self.send_json(reply.status, {"error": {"message": reply.error, "type": kind, "code": kind}})
                return
            body = request.body if isinstance(request.body, dict) else {}
            text = reply.text(body) if callable(reply.text) else reply.text
            model = body.get("model", self.owner.model)
            if body.get("stream"):
                self._stream(reply, text, model, body)
            else:
                self.send_json(200, {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                                 "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                                              "message": {"role": "assistant", "content": text}}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _stream(self, reply: Reply, text: str, model: str, body: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if reply.broken:
            self.send_header("Content-Length", str(1 << 20))
        self.end_headers()
        pieces = reply.chunks if reply.chunks is not None else [p for p in re.findall(r"\S+\s*|\s+", text) if p]

        def event(delta: dict, finish: str | None = None, **extra) -> None:
            chunk = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode("utf-8"))
            self.wfile.flush()

        prompt = self.owner.template(body.get("messages") or [])
        shared = next((i for i, (a, b) in enumerate(zip(prompt, self.owner.last_prompt)) if a != b),
                      min(len(prompt), len(self.owner.last_prompt)))
        self.owner.last_prompt = prompt
        per = max(1, int(self.owner.chars_per_token))
        cached, read = shared // per, len(prompt) // per + 1 - shared // per
        finish = reply.finish
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if limit and len(pieces) > limit:
            pieces, finish = pieces[:limit], "length"
        if body.get("return_progress") and self.owner.prompt_tokens:
            total = self.owner.prompt_tokens[-1]
            # as llama.cpp's server (server-context.cpp) sends it: `processed` is the prompt's tokens in the slot so far,
            # the `cache` it reused (a follow-up's earlier turns) among them
            event({"role": "assistant", "content": None}, prompt_progress={"total": total, "cache": total // 4,
                                                                           "processed": total // 2, "time_ms": 1})
        event({"role": "assistant", "content": ""})
        for piece in re.findall(r"\S+\s*|\s+", reply.reasoning):
            event({"reasoning_content": piece})
        for number, piece in enumerate(pieces):
            if reply.stall_after is not None and number >= reply.stall_after:
                self.owner._wait(3600)
                return
            if number and self.owner._wait(reply.chunk_delay):
                return
            event({"content": piece})
        if reply.broken:
            return  # the handler ends and the connection closes short of the promised length
        if finish is not None:
            timings = {"cache_n": cached, "prompt_n": read, "prompt_ms": 1000.0 * read / 50, "prompt_per_second": 50.0,
                       "predicted_n": len(pieces), "predicted_ms": 100.0 * len(pieces), "predicted_per_second": 10.0}
            event({}, finish, **({"timings": timings} if self.owner.window else {}))
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = {"prompt_tokens": cached + read, "completion_tokens": len(pieces),
                         "total_tokens": cached + read + len(pieces), "prompt_tokens_details": {"cached_tokens": cached}}
                chunk = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
                         "model": model, "choices": [], "usage": usage}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode("utf-8"))
        if reply.done:
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()


LLMStub.handler, LLMStub.thread_name = _Handler, "llm-stub"
