"""A local Qdrant REST server for tests: the real `qdrant-client` (URL mode) talks HTTP to it, and it
answers from qdrant-client's own in-memory engine, so an index built through it can be searched.

    with QdrantStub(api_key="k") as stub:       # 127.0.0.1, random port
        client = QdrantClient(url=stub.url, api_key="k")
        ...
        stub.requests            # every call: method, path, headers, JSON body
        stub.created             # collection name -> the create request's body (shard_number, ...)

    stub.fail_from = len(stub.requests) + 3   # the fourth request from now on fails (503, or no answer)
    QdrantStub(version="1.15.2")              # a server that GET / says is 1.15.2 (default SERVER_VERSION)

Routes: the ones codeqa uses (collections: list, exists, create, delete; points: upsert, delete,
retrieve, scroll, count, query, update vectors) plus GET / for the client's version check. Anything else answers
404 so a new call shows up as a failing test. A wrong or missing api-key header answers 401.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from qdrant_client import QdrantClient, models

from local_server import JSONHandler, LocalServer

SERVER_VERSION = "1.20.0"


@dataclass
class QdrantRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class QdrantStub(LocalServer):
    api_key: str | None = None
    requests: list[QdrantRequest] = field(default_factory=list)
    created: dict[str, dict] = field(default_factory=dict)
    payload_indexes: dict[str, dict] = field(default_factory=dict)  # collection -> field -> schema
    # a server that fails mid-run: from the request numbered `fail_from` on (0-based, counting every request),
    # each answers `fail_status`, or with fail_status 0 loses its connection without an answer
    fail_from: int | None = None
    fail_status: int = 503
    version: str = SERVER_VERSION  # what GET / reports: the lease refuses a server too old for its conditional writes

    def __post_init__(self):
        self.engine = QdrantClient(":memory:")
        self._lock = threading.Lock()  # the in-memory engine is not thread-safe

    def stop(self) -> None:
        super().stop()
        self.engine.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def collections(self) -> set[str]:
        with self._lock:
            return {c.name for c in self.engine.get_collections().collections}

    def writes(self, since: int = 0) -> list[QdrantRequest]:
        """Requests from index `since` on that change data."""
        return [r for r in self.requests[since:] if r.method in ("PUT", "DELETE")
                or r.path.endswith("/points/delete")]

    # ---- the routes -------------------------------------------------------------------------
    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        e = self.engine
        if method == "GET" and path == "/":
            return 200, {"title": "qdrant - vector search engine (stub)", "version": self.version}
        if method == "GET" and path == "/collections":
            return 200, {"collections": [{"name": c.name} for c in e.get_collections().collections]}
        m = re.fullmatch(r"/collections/([^/]+)(/.*)?", path)
        if not m:
            return 404, None
        name, rest = m.group(1), m.group(2) or ""
        if rest == "/exists" and method == "GET":
            return 200, {"exists": e.collection_exists(name)}
        if rest == "" and method == "PUT":
            config = models.CreateCollection.model_validate(body)
            self.created[name] = body
            return 200, e.create_collection(name, vectors_config=config.vectors,
                                            sparse_vectors_config=config.sparse_vectors)
        if rest == "" and method == "DELETE":
            return 200, e.delete_collection(name)
        if not e.collection_exists(name):
            return 404, None
        if rest == "/index" and method == "PUT":  # a payload index: the in-memory engine filters without one
            self.payload_indexes.setdefault(name, {})[body["field_name"]] = body.get("field_schema")
            return 200, {"operation_id": 0, "status": "completed"}
        if rest == "/points" and method == "PUT":  # with a conditional write's update_filter / update_mode
            request = models.PointsList.model_validate(body)
            return 200, _dump(e.upsert(name, points=request.points, update_filter=request.update_filter,
                                       update_mode=request.update_mode))
        if rest == "/points/vectors" and method == "PUT":  # update_vectors: dense vectors filled in later
            points = models.UpdateVectors.model_validate(body).points
            return 200, _dump(e.update_vectors(name, points=points))
        if rest == "/points/delete" and method == "POST":
            selector = (models.FilterSelector(filter=models.Filter.model_validate(body["filter"])) if "filter" in body
                        else models.PointIdsList(points=body["points"]))
            return 200, _dump(e.delete(name, points_selector=selector))
        if rest == "/points" and method == "POST":
            request = models.PointRequest.model_validate(body)
            records = e.retrieve(name, request.ids, with_payload=request.with_payload or False,
                                 with_vectors=request.with_vector or False)
            return 200, [_dump(r) for r in records]
        if rest == "/points/scroll" and method == "POST":
            request = models.ScrollRequest.model_validate(body)
            records, offset = e.scroll(name, scroll_filter=request.filter, limit=request.limit or 10,
                                       offset=request.offset, with_payload=request.with_payload or False,
                                       with_vectors=request.with_vector or False)
            return 200, {"points": [_dump(r) for r in records], "next_page_offset": offset}
        if rest == "/points/count" and method == "POST":
            request = models.CountRequest.model_validate(body)
            return 200, {"count": e.count(name, count_filter=request.filter, exact=True).count}
        if rest == "/points/query" and method == "POST":
            request = models.QueryRequest.model_validate(body)
            response = e.query_points(name, query=request.query, prefetch=request.prefetch, using=request.using,
                                      limit=request.limit or 10, with_payload=request.with_payload or False,
                                      query_filter=request.filter)
            return 200, _dump(response)
        return 404, None


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


class _Handler(JSONHandler):
    owner: QdrantStub
    server_version = "qdrant-stub/1"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = urlsplit(self.path).path
        self.owner.requests.append(QdrantRequest(self.command, path, headers, body))
        failing = self.owner.fail_from is not None and len(self.owner.requests) > self.owner.fail_from
        if failing and not self.owner.fail_status:
            self.close_connection = True  # no answer at all: the client sees the connection go
            return
        if failing:
            status, result = self.owner.fail_status, None
            payload: dict = {"status": {"error": "Service Unavailable: the stub fails from here on"}, "time": 0.0}
        elif self.owner.api_key is not None and headers.get("api-key") != self.owner.api_key:
            status, result = 401, None
            payload = {"status": {"error": "Must provide a valid API key"}, "time": 0.0}
        else:
            with self.owner._lock:
                try:
                    status, result = self.owner.handle(self.command, path, body)
                except Exception as exc:  # a request the engine rejects: a 400 like the server's
                    status, result = 400, None
                    payload = {"status": {"error": f"{type(exc).__name__}: {exc}"}, "time": 0.0}
            if status == 200 and path == "/":
                payload = result  # the server's root answers its version bare, not wrapped as "result"
            elif status == 200:
                payload = {"result": result, "status": "ok", "time": 0.0}
            elif status == 404 and result is None:
                payload = {"status": {"error": f"Not found: {self.command} {path}"}, "time": 0.0}
        self.send_json(status, payload)

    do_GET = do_PUT = do_POST = do_DELETE = _serve


QdrantStub.handler, QdrantStub.thread_name = _Handler, "qdrant-stub"
