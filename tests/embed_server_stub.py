"""A local OpenAI-compatible embeddings server for tests (stdlib only), with faults on demand.

    stub = EmbedServerStub(jitter=0.03).start()    # 127.0.0.1, random port; stub.base_url ends with /v1
    stub.script(Answer(429, headers={"Retry-After": "0.3"}), Answer(drop=True))  # the next requests, in order
    stub.always(Answer(503))                       # every request no script() entry is waiting for
    ... run code against stub.base_url ...
    stub.requests[-1].body["input"]; stub.most_in_flight

POST /v1/embeddings answers tests/llm_stub.py's bag-of-words vectors, listed in shuffled order (each
with its `index`), as base64 float32 when asked (`encoding_format`) unless `floats_only` (Ollama does
that), each request after a random wait of up to `jitter` seconds so that parallel requests finish out
of order (`seconds_per_text` more for each text, as a CPU server takes). An Answer can fail with a status and an error body, send headers, wait, or drop the
connection without a reply, or send a body of its own.
"""

from __future__ import annotations

import array
import base64
import json
import random
import threading
import time
from dataclasses import dataclass, field

from llm_stub import RecordedRequest, stub_embedding
from local_server import JSONHandler, LocalServer


@dataclass
class Answer:
    status: int = 200
    error: str = "stub error"  # the message of an error answer
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    drop: bool = False  # close the connection without an answer
    body: str | None = None  # send this instead (with `status`): what a proxy or a wrong URL answers


@dataclass
class EmbedServerStub(LocalServer):
    jitter: float = 0.0
    floats_only: bool = False
    seconds_per_text: float = 0.0  # a CPU server: each text of a request adds this wait
    requests: list[RecordedRequest] = field(default_factory=list)
    most_in_flight: int = 0
    thread_name = "embed-server-stub"

    def __post_init__(self):
        self._default = Answer()
        self._queue: list[Answer] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self._random = random.Random(7)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self._queue.extend(answers)

    def always(self, answer: Answer) -> None:
        with self._lock:
            self._default = answer

    def _begin(self, request: RecordedRequest) -> tuple[Answer, float]:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self._in_flight)
            answer = self._queue.pop(0) if self._queue else self._default
            return answer, answer.delay + self._random.uniform(0, self.jitter)

    def _end(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Handler(JSONHandler):
    owner: EmbedServerStub
    protocol_version = "HTTP/1.1"  # keep-alive, as the servers it stands for
    disable_nagle_algorithm = True  # headers and body are two writes: Nagle + delayed ACK would add ~40 ms

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        answer, wait = self.owner._begin(RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        try:
            time.sleep(wait + self.owner.seconds_per_text * len(body.get("input") or []))
            if answer.drop:
                self.close_connection = True
                return
            if answer.body is not None:
                self._send(answer.status, answer.body, answer.headers)
                return
            if answer.status != 200:
                self._send(answer.status, {"error": {"message": answer.error, "type": "stub", "code": answer.status}},
                           answer.headers)
                return
            base64_wanted = body.get("encoding_format") == "base64" and not self.owner.floats_only
            data = [{"object": "embedding", "index": i, "embedding": _encoded(stub_embedding(text), base64_wanted)}
                    for i, text in enumerate(body["input"])]
            self.owner._random.shuffle(data)  # the index says which text a vector is for, not the position
            self._send(200, {"object": "list", "model": body.get("model"), "data": data}, answer.headers)
        finally:
            self.owner._end()

    def _send(self, status: int, payload: object, headers: dict[str, str]) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _encoded(vector: list[float], as_base64: bool) -> list[float] | str:
    return base64.b64encode(array.array("f", vector).tobytes()).decode("ascii") if as_base64 else vector


EmbedServerStub.handler = _Handler
