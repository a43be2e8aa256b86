"""Embeddings from any OpenAI-compatible /embeddings endpoint (`CODEQA_EMBEDDINGS=openai:<model>`):
OpenAI, Text Embeddings Inference (TEI), vLLM, Ollama, llama.cpp's server.

All of them answer POST {base}/embeddings {"model", "input": [...]} with {"data": [{"index", "embedding"}]}.
A call's texts go out in batches, `concurrency` requests at a time over one keep-alive connection pool,
and come back in input order. Threads, not asyncio: `encode` is called from plain code, some of it
inside a running event loop (the MCP server). A text list that fits one batch (a search query) is
sent from the calling thread.

Failures:
    429, 408, 5xx, a dropped connection, a timeout   retried: exponential backoff with jitter, or the
                                                     wait Retry-After names; at most `max_attempts` tries
    401 / 403                                        at once: the API key setting
    404, an unknown model                            at once: the model in CODEQA_EMBEDDINGS, the base URL setting
    413                                              at once: a smaller CODEQA_EMBEDDING_BATCH_SIZE
    a base URL that is not http(s)                   at once: the base URL setting
    any other answer that is not embeddings          at once, with the server's own message
    a timeout of a batch of several texts            split in half at once, and later batches go out at
                                                     the smaller size: a slow CPU server (llama.cpp on two
                                                     cores) takes minutes for 64 chunks
    llama.cpp's "input is too large to process"      at once: the server's batch size (-ub/-b) or CODEQA_CHUNK_MAX_CHARS
Every failure is an EmbeddingError; the API key never appears in one.

Asymmetric models embed a search query and a document differently: each is sent with its prompt
(`query_prompt`, `document_prompt`: CODEQA_EMBEDDING_QUERY_PROMPT / _DOCUMENT_PROMPT, else the model's
own from PROMPTS, matched on its name). `encode` embeds documents; `for_queries()` is the same model
embedding queries (what search uses). The document prompt is part of `model_id`: vectors made with
another prompt are another model's.

httpx, not the openai client: importing it costs ~0.15 s here against openai's ~0.7 s, and a one-file
re-index pays the import every time. Vectors are asked for as base64 float32 (`encoding_format`, what the
openai client asks for too); a server that sends JSON numbers instead (Ollama) is read as well.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from typing import Any, Sequence

import numpy as np

from ..errors import EmbeddingError, UsageError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_AFTER_MAX = 60.0  # seconds: a longer Retry-After is cut to this, so a run never sleeps unseen for long
# (a pattern of the model's name, query prompt, document prompt): the prompts each model was trained with
PROMPTS = (
    (r"nomic-embed-text", "search_query: ", "search_document: "),
    (r"(^|[/_-])e5([/_-]|$)", "query: ", "passage: "),
    (r"bge-(small|base|large)-en", "Represent this sentence for searching relevant passages: ", ""),
    # EmbeddingGemma's own prompt for finding code from a question (its model card's "code retrieval" task)
    (r"embeddinggemma", "task: code retrieval | query: ", "title: none | text: "),
)
_TOO_LARGE = re.compile(r"input \((\d+) tokens\) is too large to process")  # llama.cpp: the text exceeds -ub
_UNKNOWN_MODEL = re.compile(r"model.{0,80}(not found|does not exist|unknown|not exist|no such|not loaded)"
                            r"|(unknown|invalid|no such) model|model_not_found", re.IGNORECASE | re.DOTALL)


class OpenAIEmbedder:
    """Embedder protocol over an OpenAI-compatible /embeddings endpoint. `dimension` is known after the first
    encode. `backoff_base` is the first retry's wait in seconds (doubling each time, up to `backoff_max`)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, dimension: int | None = None,
                 *, concurrency: int = 4, timeout: float = 60.0, max_attempts: int = 5, backoff_base: float = 0.5,
                 backoff_max: float = 30.0, settings_named: tuple[str, str] = ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
                 query_prompt: str | None = None, document_prompt: str | None = None):
        if concurrency < 1:
            raise UsageError(f"CODEQA_EMBEDDING_CONCURRENCY={concurrency} must be at least 1 (requests in flight).")
        if timeout <= 0:
            raise UsageError(f"CODEQA_EMBEDDING_TIMEOUT={timeout} must be a positive number of seconds.")
        self.model = model
        preset = next(((q, d) for pattern, q, d in PROMPTS if re.search(pattern, model, re.IGNORECASE)), ("", ""))
        # "none" turns a preset off ("" in the environment reads as unset)
        self.query_prompt = _prompt(query_prompt, preset[0])
        self.document_prompt = _prompt(document_prompt, preset[1])
        self.model_id = f"openai:{model}"
        if self.document_prompt:
            self.model_id += f"+doc-{hashlib.sha256(self.document_prompt.encode()).hexdigest()[:8]}"
        self.dimension = dimension or 0
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self._base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key
        self._url_setting, self._key_setting = settings_named  # what the messages tell the user to fix
        self._client: Any = None  # httpx.Client, made at the first encode (importing httpx is not free)
        self._client_lock = threading.Lock()
        self._batch_cap: int | None = None  # set by a timed-out batch: later batches go out at most this big

    def for_queries(self) -> "QueryEmbedder":
        """This model embedding search queries (with the query prompt); `encode` embeds documents."""
        return QueryEmbedder(self)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        return self._encode([self.document_prompt + t for t in texts], batch_size)

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batch_size = max(1, min(batch_size, self._batch_cap or batch_size))
        batches = [texts[start:start + batch_size] for start in range(0, len(texts), batch_size)]
        call = _Call()
        if len(batches) == 1 or self.concurrency == 1:
            parts = [self._embed_batch(batch, call) for batch in batches]
        else:
            pool = ThreadPoolExecutor(min(self.concurrency, len(batches)), thread_name_prefix="codeqa-embed")
            futures = [pool.submit(self._embed_batch, batch, call) for batch in batches]
            parts = []
            try:
                parts = [future.result() for future in futures]  # in input order, whatever order they finish in
            except BaseException as exc:
                call.stop.set()  # requests in flight end on their own; none is waited for
                pool.shutdown(wait=False, cancel_futures=True)
                if not isinstance(exc, _Stopped) or call.failure is None:
                    raise
            else:
                pool.shutdown()
            if call.failure is not None:  # a batch left off is not the news: the one that failed is
                raise call.failure
        widths = {part.shape[1] for part in parts}
        if len(widths) != 1:
            raise EmbeddingError(f"The embeddings endpoint {self._url} answered vectors of different sizes "
                                 f"({sorted(widths)}) in one run; is {self._url_setting} a single model's server?")
        vectors = np.concatenate(parts)
        self.dimension = vectors.shape[1]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors

    # ---- one batch ------------------------------------------------------------------------------

    @property
    def _url(self) -> str:
        return f"{self._base_url}/embeddings"

    def _http(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import httpx

                headers = {"User-Agent": "codeqa"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(
                    headers=headers, timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                    limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency))
            return self._client

    def _embed_batch(self, batch: list[str], call: "_Call") -> np.ndarray:
        cap = self._batch_cap
        if cap and len(batch) > cap:  # a batch made before another one timed out
            return np.concatenate([self._embed_batch(batch[i:i + cap], call) for i in range(0, len(batch), cap)])
        try:
            try:
                return self._post(batch, call.stop)
            except _TimedOut:  # a slow server: the halves go out one after the other, and so do later batches
                half = (len(batch) + 1) // 2
                with self._client_lock:
                    self._batch_cap = min(self._batch_cap or half, half)
                return np.concatenate([self._embed_batch(batch[:half], call), self._embed_batch(batch[half:], call)])
        except _Stopped:
            raise
        except BaseException as exc:
            call.fail(exc)  # before it propagates: the batches still queued are left off
            raise

    def _post(self, batch: list[str], stop: threading.Event) -> np.ndarray:
        """One batch's vectors, with retries; _Stopped when another batch of the call failed for good first."""
        import httpx

        client = self._http()
        payload = {"model": self.model, "input": batch, "encoding_format": "base64"}
        failure = ""
        for attempt in range(1, self.max_attempts + 1):
            if stop.is_set():
                raise _Stopped()
            wait: float | None = None
            try:
                response = client.post(self._url, json=payload)
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise EmbeddingError(f"{self._url_setting}={self._base_url!r} is not a usable http(s) URL ({exc}); set it to "
                                     "the server's API root, such as http://gpu-box:8080/v1.") from exc
            except httpx.TimeoutException:
                if len(batch) > 1:
                    raise _TimedOut() from None
                failure = (f"no answer to a batch of {len(batch)} texts within {self.timeout:g} s. Raise "
                           f"CODEQA_EMBEDDING_TIMEOUT or lower CODEQA_EMBEDDING_BATCH_SIZE (now {len(batch)})")
            except httpx.TransportError as exc:
                failure = f"cannot connect ({type(exc).__name__}: {exc}). Start the server or fix {self._url_setting}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return self._vectors(response, len(batch))
                if (status not in (408, 429) and status < 500) or _TOO_LARGE.search(response.text or ""):
                    raise self._refused(response, len(batch))
                wait = _retry_after(response.headers.get("retry-after"))
                failure = f"{status} {_server_message(response)}"
                if status == 429:
                    failure += f". Lower CODEQA_EMBEDDING_CONCURRENCY (now {self.concurrency}) or raise the server's limit"
            if attempt == self.max_attempts:
                break
            if wait is None:  # exponential, with jitter so that parallel batches do not retry in step
                wait = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
            if stop.wait(wait):
                raise _Stopped()
        times = "once" if attempt == 1 else f"{attempt} times in a row"
        raise EmbeddingError(f"The embeddings endpoint {self._url} failed {times}; last: {failure}.")

    def _vectors(self, response: Any, count: int) -> np.ndarray:
        """The answer's vectors as float32 rows, in input order (servers may list them in any order)."""
        try:
            data = response.json()["data"]
            items = sorted(((item.get("index", position), item["embedding"]) for position, item in enumerate(data)),
                           key=lambda pair: pair[0])
            rows = [_row(embedding) for _, embedding in items]
            vectors = np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"The embeddings endpoint {self._url} did not answer with embeddings "
                                 f"({type(exc).__name__}: {exc}); is {self._url_setting} the API root (often ending in /v1)?") from exc
        if [index for index, _ in items] != list(range(count)) or vectors.ndim != 2 or not vectors.shape[1]:
            raise EmbeddingError(f"The embeddings endpoint {self._url} answered {len(items)} vectors for {count} texts.")
        return vectors

    def _refused(self, response: Any, count: int) -> EmbeddingError:
        """The error for a 3xx or 4xx that no retry can fix, naming the setting that can."""
        status, message = response.status_code, _server_message(response)
        said = f"The embeddings endpoint {self._url} answered {status} ({message})"
        if status in (401, 403):
            fix = f"Set {self._key_setting} to a key this server accepts"
        elif status == 404 or _UNKNOWN_MODEL.search(message):
            fix = (f"Check the model name in CODEQA_EMBEDDINGS=openai:{self.model} (the server's GET /models lists them) "
                   f"and that {self._url_setting} is the API root (often ending in /v1)")
        elif _TOO_LARGE.search(message):
            fix = (f"Start llama-server with a physical batch as large as the model's window (-ub and -b, e.g. "
                   f"-ub 2048 -b 2048; this text had {_TOO_LARGE.search(message)[1]} tokens), or lower CODEQA_CHUNK_MAX_CHARS")
        elif status == 413:
            fix = (f"Lower CODEQA_EMBEDDING_BATCH_SIZE (now {count}); if a text is too long for the model, lower "
                   "CODEQA_CHUNK_MAX_CHARS or let the server truncate (TEI: --auto-truncate)")
        elif 300 <= status < 400:
            fix = f"Set {self._url_setting} to where it redirects ({response.headers.get('location', 'no Location given')})"
        else:
            fix = f"Check CODEQA_EMBEDDINGS and {self._url_setting} against the server's documentation"
        return EmbeddingError(f"{said}. {fix}.")


class QueryEmbedder:
    """An OpenAIEmbedder's view that embeds search queries: the query prompt, the same model_id and size."""

    def __init__(self, documents: OpenAIEmbedder):
        self.documents = documents

    @property
    def model_id(self) -> str:
        return self.documents.model_id

    @property
    def dimension(self) -> int:
        return self.documents.dimension

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        return self.documents._encode([self.documents.query_prompt + t for t in texts], batch_size)


def _prompt(setting: str | None, preset: str) -> str:
    if setting is None:
        return preset
    return "" if setting.strip().lower() == "none" else setting


class _Stopped(Exception):
    """A batch left off because another batch of the same encode() failed for good."""


class _TimedOut(Exception):
    """A batch of several texts got no answer in time: it is split instead of sent again whole."""


class _Call:
    """What the batches of one encode() share: a stop flag, and the failure that set it."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.failure: BaseException | None = None
        self._lock = threading.Lock()

    def fail(self, exc: BaseException) -> None:
        with self._lock:
            self.failure = self.failure or exc
        self.stop.set()


def _row(embedding: Any) -> np.ndarray:
    if isinstance(embedding, str):  # encoding_format=base64: little-endian float32
        return np.frombuffer(base64.b64decode(embedding, validate=True), dtype="<f4").astype(np.float32)
    return np.asarray(embedding, dtype=np.float32)


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (a number, or an HTTP date), at most RETRY_AFTER_MAX; None when absent or unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            from datetime import datetime, timezone

            seconds = (parsedate_to_datetime(value) - datetime.now(timezone.utc)).total_seconds()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)


def _server_message(response: Any) -> str:
    """What the server said went wrong, short: OpenAI/vLLM {"error": {"message"}}, TEI {"error": "..."},
    FastAPI {"detail": ...}, or the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error or body.get("message") or body.get("detail")
    text = str(message) if message else (response.text or response.reason_phrase or "no message")
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")


__all__ = ["OpenAIEmbedder", "QueryEmbedder", "DEFAULT_BASE_URL", "PROMPTS"]
