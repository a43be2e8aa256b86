"""What an OpenAI-compatible chat endpoint says about itself: its context window, the model it
serves, and (llama.cpp) an exact token count of a prompt.

    info = probe_endpoint("http://127.0.0.1:18080/v1", api_key, "qwen2.5-coder-1.5b", setting=None)
    info.window, info.window_source, info.served_model, info.notes
    count_prompt_tokens(base_url, api_key, messages)      # llama.cpp: template applied, then tokenized

Where the window comes from, first that answers:
- llama.cpp: `GET /v1/models` (`data[].meta.n_ctx`) or `GET /props` (`default_generation_settings.n_ctx`);
- vLLM: `GET /v1/models` (`data[].max_model_len`);
- Ollama: `POST /api/show`: the `num_ctx` the model was created with; otherwise Ollama's default
  (2,048 tokens before 0.6, 4,096 since), taken as 2,048, and a note saying what to set. Ollama's
  OpenAI-compatible endpoint ignores a window sent with a request, so codeqa fits the prompt to it;
- otherwise CODEQA_CONTEXT_WINDOW, else 8,192 tokens with a note asking to set it.

Nothing here raises: a server that does not answer a probe is simply one that does not tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..types import ServerUsage

# a duration as Ollama reads `keep_alive` (Go's time.ParseDuration, or whole seconds; negative: for ever)
KEEP_ALIVE = re.compile(r"-?\d+|-?(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+")
DEFAULT_WINDOW = 8192  # assumed when neither the endpoint nor CODEQA_CONTEXT_WINDOW says
OLLAMA_DEFAULT_WINDOW = 2048  # Ollama's default num_ctx before 0.6 (4,096 since): the safe one


@dataclass(frozen=True)
class EndpointInfo:
    """What a chat endpoint told about itself (or what codeqa assumes, and says so in `notes`)."""

    kind: str  # "llama.cpp" | "ollama" | "vllm" | "openai" | "unknown" | "fake"
    window: int | None  # tokens the model reads and writes in one request
    window_source: str | None  # where `window` came from, e.g. "llama.cpp /props (n_ctx)"
    served_model: str | None = None  # the model the endpoint serves, when it serves exactly one
    tokenizes: bool = False  # count_prompt_tokens works (llama.cpp)
    notes: tuple[str, ...] = field(default=())  # things the user should know, said once


def _root(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _get(client, url: str) -> Any:
    try:
        response = client.get(url)
        return response.json() if response.status_code == 200 else None
    except Exception:  # noqa: BLE001 - a probe that fails tells nothing; never an error
        return None


def _post(client, url: str, body: dict) -> Any:
    try:
        response = client.post(url, json=body)
        return response.json() if response.status_code == 200 else None
    except Exception:  # noqa: BLE001
        return None


def _client(api_key: str | None, timeout: float):
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(headers=headers, timeout=timeout, trust_env=False)


def probe_endpoint(base_url: str, api_key: str | None, model: str, setting: int | None,
                   timeout: float = 5.0) -> EndpointInfo:
    """Ask the endpoint for its window and models (a few quick GETs); fall back to `setting`
    (CODEQA_CONTEXT_WINDOW), then DEFAULT_WINDOW with a note."""
    root = _root(base_url)
    notes: list[str] = []
    kind, window, source, served, tokenizes = "unknown", None, None, None, False
    if "api.openai.com" in base_url:
        kind = "openai"
    with _client(api_key, timeout) as client:
        models = _get(client, root + "/v1/models") if kind != "openai" else None
        entries = models.get("data") if isinstance(models, dict) else None
        ids = [str(e.get("id")) for e in entries or () if isinstance(e, dict) and e.get("id")]
        mine = next((e for e in entries or () if isinstance(e, dict) and e.get("id") == model), None)
        entry = mine or (entries[0] if entries and len(entries) == 1 and isinstance(entries[0], dict) else None)
        if entry is not None:
            meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
            if entry.get("owned_by") == "llamacpp" or "n_ctx" in meta:
                kind = "llama.cpp"
                if isinstance(meta.get("n_ctx"), int) and meta["n_ctx"] > 0:
                    window, source = meta["n_ctx"], "llama.cpp /v1/models (n_ctx)"
            elif isinstance(entry.get("max_model_len"), int):
                kind, window, source = "vllm", entry["max_model_len"], "vLLM /v1/models (max_model_len)"
            elif entry.get("owned_by") == "library" or entry.get("owned_by") == "ollama":
                kind = "ollama"
        if kind in ("unknown", "llama.cpp") and window is None:
            props = _get(client, root + "/props")
            n_ctx = (props or {}).get("default_generation_settings", {}).get("n_ctx") if isinstance(props, dict) else None
            if isinstance(n_ctx, int) and n_ctx > 0:
                kind, window, source = "llama.cpp", n_ctx, "llama.cpp /props (n_ctx)"
        if kind in ("unknown", "ollama"):
            version = _get(client, root + "/api/version")
            if isinstance(version, dict) and "version" in version:
                kind = "ollama"
                show = _post(client, root + "/api/show", {"model": model})
                params = str((show or {}).get("parameters") or "")
                match = re.search(r"^\s*num_ctx\s+(\d+)", params, re.MULTILINE)
                if match:
                    window, source = int(match.group(1)), "Ollama /api/show (num_ctx)"
                else:
                    window, source = OLLAMA_DEFAULT_WINDOW, "Ollama's default num_ctx"
                    notes.append(
                        f"Ollama serves {model!r} with its default window (2,048 or 4,096 tokens, and its "
                        "OpenAI-compatible endpoint ignores a window sent with a request), so codeqa fits prompts "
                        f"into {OLLAMA_DEFAULT_WINDOW:,} tokens. For more, start Ollama with OLLAMA_CONTEXT_LENGTH=8192 "
                        "(or create a model with `PARAMETER num_ctx 8192`) and set CODEQA_CONTEXT_WINDOW=8192.")
        if kind == "llama.cpp":
            tokenizes = isinstance(_post(client, root + "/tokenize", {"content": "a"}), dict)
        if len(ids) == 1 and kind == "llama.cpp":  # llama.cpp answers to any name with its one model
            served = ids[0]
        if ids and model not in ids and not (kind == "llama.cpp" and served):
            notes.append(f"The endpoint {base_url} does not list the model {model!r} (CODEQA_MODEL); it lists "
                         + ", ".join(repr(i) for i in ids[:5]) + ".")
        elif kind == "llama.cpp" and served and served != model:
            notes.append(f"The endpoint {base_url} serves {served!r}, not {model!r} (CODEQA_MODEL): llama.cpp answers "
                         f"any name with the one model it has loaded, so answers name {served!r}.")
    if setting:
        if window is not None and setting > window:
            notes.append(f"CODEQA_CONTEXT_WINDOW={setting} is more than the {window:,} tokens the endpoint reports "
                         f"({source}); codeqa uses {window:,}.")
        elif window is None or setting < window:
            window, source = setting, "CODEQA_CONTEXT_WINDOW"
    if window is None:
        window, source = DEFAULT_WINDOW, "assumed"
        notes.append(f"The endpoint {base_url} does not say its context window; codeqa assumes {DEFAULT_WINDOW:,} tokens. "
                     "Set CODEQA_CONTEXT_WINDOW to the model's window (smaller is safe).")
    return EndpointInfo(kind=kind, window=window, window_source=source, served_model=served, tokenizes=tokenizes,
                        notes=tuple(notes))


def count_prompt_tokens(base_url: str, api_key: str | None, messages: Sequence[dict], timeout: float = 30.0) -> int | None:
    """llama.cpp: the prompt's tokens exactly as the server will read them (its chat template applied,
    then its tokenizer), or None when the server cannot say."""
    root = _root(base_url)
    with _client(api_key, timeout) as client:
        applied = _post(client, root + "/apply-template", {"messages": list(messages)})
        prompt = applied.get("prompt") if isinstance(applied, dict) else None
        if not isinstance(prompt, str):
            return None
        tokens = _post(client, root + "/tokenize", {"content": prompt, "add_special": True})
    ids = tokens.get("tokens") if isinstance(tokens, dict) else None
    return len(ids) if isinstance(ids, list) else None


def keep_loaded(base_url: str, api_key: str | None, model: str, keep_alive: str, timeout: float = 10.0) -> None:
    """Ollama: keep `model` loaded for `keep_alive` from now. Its OpenAI-compatible endpoint takes no `keep_alive`
    and each of its requests resets the time to Ollama's default; a request on its own API without a prompt
    only sets it (and loads the model, were it unloaded). Never raises."""
    with _client(api_key, timeout) as client:
        _post(client, _root(base_url) + "/api/generate", {"model": model, "keep_alive": keep_alive})


def server_usage(timings, usage) -> ServerUsage | None:
    """What a server said of a request: llama.cpp's `timings` (`prompt_n` tokens read, `cache_n` reused, their
    speeds), else OpenAI's `usage` (`prompt_tokens`, `prompt_tokens_details.cached_tokens` among them, and
    `completion_tokens`); None when the piece says neither."""
    def number(value) -> float | None:
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None

    if isinstance(timings, dict) and number(timings.get("prompt_n")) is not None:
        read, cached, written = (number(timings.get(k)) for k in ("prompt_n", "cache_n", "predicted_n"))
        return ServerUsage(read_tokens=int(read), cached_tokens=None if cached is None else int(cached),
                           written_tokens=None if written is None else int(written),
                           read_per_second=number(timings.get("prompt_per_second")) or None,
                           write_per_second=number(timings.get("predicted_per_second")) or None)
    prompt = number(getattr(usage, "prompt_tokens", None))
    if prompt is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = number(getattr(details, "cached_tokens", None))
    written = number(getattr(usage, "completion_tokens", None))
    return ServerUsage(read_tokens=int(prompt - (cached or 0)), cached_tokens=None if cached is None else int(cached),
                       written_tokens=None if written is None else int(written))


__all__ = ["EndpointInfo", "probe_endpoint", "count_prompt_tokens", "keep_loaded", "server_usage", "DEFAULT_WINDOW",
           "KEEP_ALIVE"]
