"""The qdrant-client as ServerStore calls it: connected with one cheap check, and every call the server
fails (refused, reset, timed out, answered 5xx) a StoreError that names QDRANT_URL and what to do.

    server_client(url, api_key)    a checked client; the API key goes only over https (or to localhost)
    GuardedClient(client, url)     the client's methods, their failures translated; with a writer lease
                                   set, every write checks it first (lease.py)
    server_failure(url, exc, what) the message for one failure, or None for what is not the server's
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlparse

from ..errors import StoreError
from .lease import WriterLease

_WRITES = frozenset({"upsert", "delete", "update_vectors", "create_collection", "delete_collection",
                     "create_payload_index"})
AGAIN = "run the command again (an interrupted `codeqa index` goes on from what it committed)"


class GuardedClient:
    """The client as the store calls it: a call the server fails is a StoreError that names the URL and
    what to do, never a traceback; once a writer holds a lease, each write checks it first."""

    def __init__(self, client: Any, url: str):
        self.unguarded, self.url = client, url
        self.lease: WriterLease | None = None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.unguarded, name)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            if self.lease is not None and name in _WRITES:
                self.call("renew the writer lease", self.lease.check)
            return self.call(f"{name} {args[0]}" if args and isinstance(args[0], str) else name, method, *args, **kwargs)
        return guarded

    def call(self, what: str, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            message = server_failure(self.url, exc, what)
            if message is None:
                raise
            raise StoreError(message) from None


def server_failure(url: str, exc: BaseException, what: str) -> str | None:
    """What to tell the user about `exc` from a call to the server at `url` (`what`: the call), or None
    when it is not the server's failure (a bug shows its traceback)."""
    import httpx
    from qdrant_client.common.client_exceptions import QdrantException
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    if isinstance(exc, UnexpectedResponse):
        if exc.status_code in (401, 403):
            return (f"The Qdrant server at {url} refused the request ({exc.status_code}): "
                    "set QDRANT_API_KEY to a valid key.")
        return (f"The Qdrant server at {url} (--qdrant-url / QDRANT_URL) answered {exc.status_code} "
                f"{exc.reason_phrase} to {what}{_said(exc.content)}. Check the server (its log says more), then {AGAIN}.")
    if isinstance(exc, ResponseHandlingException):
        exc = exc.source
    if isinstance(exc, (httpx.HTTPError, OSError, QdrantException)):
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return (f"Cannot reach the Qdrant server at {url} ({detail}) for {what}. Check that it is running and "
                f"that --qdrant-url / QDRANT_URL points at it, then {AGAIN}.")
    return None


def _said(content: bytes) -> str:
    """The server's own error message from its JSON answer, shortened; '' when there is none."""
    try:
        error = json.loads(content)["status"]["error"]
    except (ValueError, KeyError, TypeError):
        return ""
    return f" ({str(error)[:300]})" if error else ""


def server_client(url: str, api_key: str | None) -> Any:
    """A client for a Qdrant server or cluster, checked with one cheap call so a wrong URL or key
    fails here with a clear message instead of halfway through an index run."""
    from qdrant_client import QdrantClient

    parsed = urlparse(url)
    if api_key and parsed.scheme != "https" and parsed.hostname not in ("localhost", "127.0.0.1", "::1"):
        raise StoreError(f"Refusing to send QDRANT_API_KEY over plain http to {url}; use an https:// URL.")
    # qdrant-client's own version check only warns, on every connect; what codeqa needs of the server's version is
    # checked where it matters: the writer lease refuses a server too old for its conditional writes (lease.py)
    client = QdrantClient(url=url, api_key=api_key, timeout=60, check_compatibility=False)
    try:
        client.get_collections()
    except Exception as exc:  # connection refused, DNS, TLS, timeout, a refused key
        client.close()
        message = server_failure(url, exc, "its first request")
        if message is None:
            raise
        raise StoreError(message) from None
    return client
