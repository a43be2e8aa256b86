"""Throughput of `CODEQA_EMBEDDINGS=openai:<model>` against an embedding server, by requests in flight.

The server is bench/embed_stub.py in a child process (so that its CPU is not this process's GIL),
made to stand in for a remote GPU server with `--latency-ms` per request and, optionally, injected
failures (`--fail-rate`, answered 503 and retried by the client). The texts are real code: windows of
`--lines` lines from the .py files under SOURCE (SQLAlchemy's lib/ by default), about the size of
codeqa's chunks. For each concurrency the real OpenAIEmbedder (a fresh client, warmed by one request)
encodes all texts at `--batch-size`, `--rounds` times, and every round's vectors are checked against
the stub's (all of them, in order); the table gives the best and worst round as requests/s and chunks/s.

Two side measurements: the wire format (one batch, sequential requests on one connection, base64
float32 vs JSON numbers: bytes per answer, mean request time, and the client's CPU to decode an
answer into float32 rows), and the import time of `httpx` and of `openai` (fresh processes, median).

    python bench/embed_server.py [SOURCE] [--texts 4000] [--batch-size 64] [--latency-ms 50]
                                 [--concurrency 1,2,4,8] [--rounds 2] [--fail-rate 0]
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codeqa.embed.openai_api import OpenAIEmbedder  # noqa: E402
from embed_stub import embed  # noqa: E402  (bench/ is on sys.path: this script's folder)

DEFAULT_SOURCE = Path("/tmp/data/sqlalchemy-2.0.36/lib")


def code_windows(source: Path, count: int, lines: int) -> list[str]:
    """`count` texts: consecutive `lines`-line windows of the .py files under `source`, blank ones skipped."""
    texts: list[str] = []
    for path in sorted(source.rglob("*.py")):
        rows = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        texts.extend(t for i in range(0, len(rows), lines) if (t := "".join(rows[i:i + lines])).strip())
        if len(texts) >= count:
            return texts[:count]
    if not texts:
        raise SystemExit(f"no .py files under {source}")
    return [texts[i % len(texts)] for i in range(count)]


def start_stub(latency_ms: float, fail_rate: float) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, str(ROOT / "bench" / "embed_stub.py"), "--latency-ms", str(latency_ms),
               "--fail-rate", str(fail_rate)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    found = re.search(r"http://\S+/v1", line)
    if not found:
        process.kill()
        raise SystemExit(f"the stub did not start: {line!r}")
    return process, found.group(0)


def throughput(base_url: str, texts: list[str], expected: np.ndarray, batch_size: int, concurrency: int,
               rounds: int) -> list[float]:
    """Seconds to encode all texts, one figure a round; each round's vectors are checked against `expected`
    (the stub's vectors computed here): all of them, in input order, retries or not."""
    embedder = OpenAIEmbedder("stub-hash", base_url, concurrency=concurrency)  # default retry settings
    embedder.encode(texts[:1])  # the connection and the first-call costs are not the throughput
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        vectors = embedder.encode(texts, batch_size=batch_size)
        seconds.append(time.perf_counter() - started)
        if vectors.shape != expected.shape or not np.allclose(vectors, expected, atol=1e-5):
            raise SystemExit(f"concurrency {concurrency}: the vectors are not the texts' own, in order")
    return seconds


def wire_formats(base_url: str, batch: list[str], requests: int) -> list[tuple[str, int, float, float]]:
    """(format, answer bytes, mean seconds a request, mean client CPU seconds to decode an answer)."""
    import httpx

    rows = []
    with httpx.Client(timeout=60) as client:
        for encoding in ("base64", "float"):
            payload = {"model": "stub-hash", "input": batch, "encoding_format": encoding}
            client.post(f"{base_url}/embeddings", json=payload)
            walls, decodes, size = [], [], 0
            for _ in range(requests):
                started = time.perf_counter()
                response = client.post(f"{base_url}/embeddings", json=payload)
                walls.append(time.perf_counter() - started)
                cpu = time.process_time()
                data = response.json()["data"]
                if encoding == "base64":
                    vectors = np.stack([np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4") for d in data])
                else:
                    vectors = np.asarray([d["embedding"] for d in data], dtype=np.float32)
                decodes.append(time.process_time() - cpu)
                size = len(response.content)
                assert vectors.shape == (len(batch), 384)
            rows.append((encoding, size, statistics.mean(walls), statistics.mean(decodes)))
    # the stub's vectors are sparse and its numbers rounded to 6 places; a model's are dense, sent at full
    # precision (~20 characters a number): such an answer, decoded here (random unit vectors, same size)
    dense = np.random.default_rng(0).standard_normal((len(batch), 384))
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    body = json.dumps({"data": [{"index": i, "embedding": row.tolist()} for i, row in enumerate(dense)]})
    cpu = time.process_time()
    for _ in range(requests):
        np.asarray([d["embedding"] for d in json.loads(body)["data"]], dtype=np.float32)
    rows.append(("float, dense, full precision (decoded here, not sent)", len(body), float("nan"), (time.process_time() - cpu) / requests))
    return rows


def import_seconds(module: str, runs: int = 5) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
             for _ in range(runs)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, nargs="?", default=DEFAULT_SOURCE)
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--lines", type=int, default=30, help="lines a text (codeqa's chunks average ~25-40)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--fail-rate", type=float, default=0.0)
    args = parser.parse_args()

    texts = code_windows(args.source, args.texts, args.lines)
    requests = math.ceil(len(texts) / args.batch_size)
    print(f"{len(texts)} texts from {args.source} (mean {statistics.mean(map(len, texts)):.0f} chars), "
          f"batches of {args.batch_size} = {requests} requests a round; stub latency {args.latency_ms:g} ms a request, "
          f"fail rate {args.fail_rate:g}; {args.rounds} round(s) each", flush=True)
    expected = np.asarray([embed(text, None) for text in texts], dtype=np.float32)
    stub, base_url = start_stub(args.latency_ms, args.fail_rate)
    try:
        # requests/s counts the batches answered: a failed and retried request is not one
        print("\n| concurrency | requests/s | chunks/s | vs 1 |\n|---|---|---|---|", flush=True)
        single = None
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            seconds = throughput(base_url, texts, expected, args.batch_size, concurrency, args.rounds)
            fast, slow = min(seconds), max(seconds)
            single = single or fast
            print(f"| {concurrency} | {requests / slow:.1f}–{requests / fast:.1f} | {len(texts) / slow:.0f}–{len(texts) / fast:.0f} "
                  f"| {single / fast:.1f}x |", flush=True)
        if not args.fail_rate:  # the wire-format requests are plain httpx, without retries
            print("\n| wire format (one batch, sequential) | answer bytes | request ms | client decode ms |\n|---|---|---|---|")
            for encoding, size, wall, decode in wire_formats(base_url, texts[:args.batch_size], 20):
                request = "–" if math.isnan(wall) else f"{wall * 1000:.1f}"
                print(f"| {encoding} | {size:,} | {request} | {decode * 1000:.2f} |")
    finally:
        stub.terminate()
        stub.wait()
    print(f"\nimport httpx {import_seconds('httpx'):.2f} s, import openai {import_seconds('openai'):.2f} s "
          "(fresh processes, median of 5)")


if __name__ == "__main__":
    main()
