"""A local OpenAI-compatible embeddings server (stdlib only) so that index and search benchmarks time
the store, not a model: POST /v1/embeddings answers hashed-word vectors, GET /v1/models lists one model.

Each word ([A-Za-z_][A-Za-z0-9_]*, lowercased) adds +1 or -1 at two blake2b-hashed positions of a
384-long vector, which is then L2-normalised; texts sharing words get similar vectors, and the same
text always the same one. A few thousand texts/s on one core, on keep-alive HTTP/1.1 connections.

To stand in for a remote GPU server, each request can wait `latency_ms` before answering (requests
wait side by side, as a server batching them would serve them), and a `fail_rate` fraction of the
requests can fail with `fail_status` (503 by default; Retry-After sent when `retry_after` is set).

    with EmbedStub() as stub:            # 127.0.0.1, a free port
        env = {"CODEQA_EMBEDDINGS": "openai:stub-hash", "OPENAI_BASE_URL": stub.base_url, ...}

    python bench/embed_stub.py [--port N] [--latency-ms 50] [--fail-rate 0.02 [--fail-status 429] [--retry-after 1]]
"""

from __future__ import annotations

import argparse
import array
import base64
import hashlib
import json
import math
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSION = 384
MODEL = "stub-hash"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SLOTS: dict[str, tuple[tuple[int, float], ...]] = {}  # word -> its (position, sign) pairs; grows with the vocabulary


def _slots(word: str) -> tuple[tuple[int, float], ...]:
    found = _SLOTS.get(word)
    if found is None:
        h = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
        found = ((h % DIMENSION, 1.0 if (h >> 20) & 1 else -1.0),
                 ((h >> 32) % DIMENSION, 1.0 if (h >> 60) & 1 else -1.0))
        _SLOTS[word] = found  # a race only writes the same value twice
    return found


def embed(text: str, digits: int | None = 6) -> list[float]:
    """The unit-length hashed-word vector of `text` (the first axis for a text without words),
    rounded to `digits` places for JSON (None: full precision)."""
    vector = [0.0] * DIMENSION
    for word, count in Counter(_WORD.findall(text.lower())).items():
        for position, sign in _slots(word):
            vector[position] += sign * count
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    if digits is None:
        return [v / norm for v in vector]
    return [round(v / norm, digits) for v in vector]


def _base64(text: str) -> str:
    """`embed(text)` as OpenAI's encoding_format=base64 sends it: little-endian float32 bytes, base64."""
    return base64.b64encode(array.array("f", embed(text, None)).tobytes()).decode("ascii")


@dataclass(frozen=True)
class Behaviour:
    """How the stub stands in for a remote server: a wait before each answer, and injected failures."""
    latency_ms: float = 0.0
    fail_rate: float = 0.0
    fail_status: int = 503
    retry_after: float | None = None


class _Server(ThreadingHTTPServer):
    behaviour = Behaviour()
    rng = random.Random(0)  # which requests fail: the same ones every run


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive: the openai client reuses its connection
    # headers and body go out in two writes: without this, Nagle + delayed ACK hold the body ~40 ms
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "stub"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
            inputs = body.get("input") or []
            inputs = [inputs] if isinstance(inputs, str) else list(inputs)
            if not all(isinstance(t, str) for t in inputs):
                raise ValueError("input must be a string or a list of strings")
        except (ValueError, AttributeError) as exc:
            self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            return
        behaviour = self.server.behaviour
        if behaviour.latency_ms:
            time.sleep(behaviour.latency_ms / 1000)
        if behaviour.fail_rate and self.server.rng.random() < behaviour.fail_rate:
            self._send(behaviour.fail_status, {"error": {"message": "injected failure", "type": "stub"}},
                       {} if behaviour.retry_after is None else {"Retry-After": f"{behaviour.retry_after:g}"})
            return
        encode = _base64 if body.get("encoding_format") == "base64" else embed  # the openai client asks for base64
        words = sum(len(t) for t in inputs) // 6
        self._send(200, {"object": "list", "model": body.get("model", MODEL),
                         "data": [{"object": "embedding", "index": i, "embedding": encode(t)} for i, t in enumerate(inputs)],
                         "usage": {"prompt_tokens": words, "total_tokens": words}})


class EmbedStub:
    """The server in a daemon thread; `base_url` ends with /v1. Use with `with` or start()/stop()."""

    def __init__(self, port: int = 0, behaviour: Behaviour = Behaviour()) -> None:
        self._port = port
        self._behaviour = behaviour
        self._server: _Server | None = None

    def start(self) -> "EmbedStub":
        self._server = _Server(("127.0.0.1", self._port), _Handler)
        self._server.behaviour = self._behaviour
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="embed-stub", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "EmbedStub":
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the stub first"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="wait before each answer (a remote GPU server's)")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered with --fail-status")
    parser.add_argument("--fail-status", type=int, default=503)
    parser.add_argument("--retry-after", type=float, default=None, help="seconds, sent as Retry-After with a failure")
    args = parser.parse_args()
    behaviour = Behaviour(args.latency_ms, args.fail_rate, args.fail_status, args.retry_after)
    stub = EmbedStub(args.port, behaviour).start()
    print(f"embeddings stub on {stub.base_url} (model {MODEL}, {DIMENSION} dims); Ctrl-C stops it", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
