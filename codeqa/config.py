"""Settings: one object, built once at the edge (CLI, UI) and passed down.

Precedence: explicit overrides (CLI flags) > environment (CODEQA_*, OPENAI_*, QDRANT_URL) > defaults.
Nothing here is read at import time.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import UsageError


@dataclass(frozen=True)
class Settings:
    # files
    files_max_bytes: int = 1_000_000
    # index location: None -> <cache home>/codeqa/<repo name>-<hash of its path> (see index_dir_for)
    index_dir: Path | None = None
    cache_home: Path | None = None  # XDG_CACHE_HOME
    # where workspaces (named sets of repositories, codeqa/workspace.py) are kept; None -> <config home>/codeqa/workspaces
    workspaces_dir: Path | None = None
    config_home: Path | None = None  # XDG_CONFIG_HOME
    qdrant_url: str | None = None
    qdrant_api_key: str | None = field(default=None, repr=False)  # a key never shows in a repr or a log
    qdrant_shards: int | None = None
    qdrant_replicas: int | None = None
    # the index's name on a Qdrant server; None -> from the git remote, else the path (store/identity.py)
    index_name: str | None = None
    # chunking
    chunk_max_chars: int = 1500  # non-whitespace characters
    chunk_min_chars: int = 100
    # embeddings: "local" (bundled MiniLM) or "openai:<model>"
    embeddings: str = "local"
    embedding_adapter: str = "default"  # "default" (bundled LoRA), "none", or a path
    # a question's vector moved toward code (embed/question_map.py, experimental): "none", or a path ("default":
    # the packaged map, when one ships; none does)
    question_map: str = "none"
    embedding_batch_size: int = 64
    # openai:<model> only: requests in flight at once, and seconds a request waits for its answer before a retry
    embedding_concurrency: int = 4
    embedding_timeout: float = 60.0
    # openai:<model> only: what an asymmetric model is sent before a search query / a chunk; None -> the
    # model's own when its name is known (embed/openai_api.py PROMPTS), "none" -> nothing
    embedding_query_prompt: str | None = None
    embedding_document_prompt: str | None = None
    # openai:<model> only: the embeddings server, when it is not the chat endpoint (see embeddings_endpoint)
    embeddings_base_url: str | None = None
    embeddings_api_key: str | None = field(default=None, repr=False)
    # retrieval / answering
    top_k: int = 10
    # the evidence budget of a model's answer, chosen by measurement (docs/benchmarks.md, "Answers in seconds"): 1,500
    # tokens answered as well as 6,000 on SWE-QA dev questions with the 1.5B model, its first word ~3x sooner
    context_tokens: int = 1500
    # reference sites a usage answer lists one line each; past it the most relevant files, and a line
    # saying how many more there are (`codeqa refs NAME --json` lists them all)
    usage_sites_listed: int = 300
    # the longest question (or search query) taken, in characters: work on a question grows with its length, and
    # the page and the MCP server answer one at a time; 4,000 characters is a page of text, 30 times the longest
    # question of our question sets
    max_question_chars: int = 4000
    model: str | None = None  # CODEQA_MODEL
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    # seconds of silence allowed between streamed pieces; before the first, more while the model reads
    # the prompt (tokens / READ_TOKENS_PER_SECOND_FLOOR in answer.py)
    llm_timeout: float = 60.0
    # the model's context window, when the endpoint does not say it (llama.cpp, vLLM and Ollama do)
    context_window: int | None = None
    answer_tokens: int = 1024  # the most tokens an answer may take (max_tokens; less in a small window)
    # Ollama: how long the model stays loaded after an answer (its default, 5 minutes, makes a later question
    # load it again); an Ollama duration, checked where the chat model is built (llm/chat.py)
    keep_alive: str = "30m"
    # where the server constrains output (llama.cpp): every line of an answer ends with a snippet number
    cite_grammar: int = 1
    judge_model: str | None = None
    # "llm": the chat model reorders the top rerank_candidates results of a question asked in words
    # (query/rerank.py), waiting at most rerank_timeout seconds; "openai:<model>": a second embedding model
    # at rerank_base_url (else the embeddings endpoint) reorders a question's candidates;
    # "likelihood:<file.gguf>": a chat model run in this process picks what leads a question about behaviour
    # (query/likelihood.py); "off" (the default) leaves the search's order
    rerank: str = "off"
    rerank_candidates: int = 12
    rerank_timeout: float = 60.0
    rerank_base_url: str | None = None
    rerank_api_key: str | None = field(default=None, repr=False)
    # parallel parse workers; 0 -> automatic
    parse_workers: int = 0
    # another folder of tree-sitter queries (for working on them); None -> the installed queries/
    queries_dir: Path | None = None
    # where local-onnx keeps the model it exports at first use; None -> ~/.cache/codeqa/onnx
    onnx_cache: Path | None = None
    # the shells: a token the MCP server over HTTP and the page ask for (`codeqa mcp --token`, `codeqa ui --token`);
    # `codeqa ui` hands the page its repository (--repo), --any-repo (a visitor may type a folder) and --watch
    mcp_token: str | None = field(default=None, repr=False)
    ui_token: str | None = field(default=None, repr=False)
    ui_repo: str | None = None
    ui_any_repo: bool = False
    ui_watch: bool = False

    def __post_init__(self) -> None:
        for name, (low, meaning) in COUNTS.items():
            value = getattr(self, name)
            if (value is None and name in OPTIONAL_NUMBERS) or (type(value) is int and value >= low):
                continue
            raise UsageError(f"CODEQA_{name.upper()}={value!r} must be at least {low} (a whole number{meaning}); "
                             "fix or unset it.")
        for name in SECONDS:
            value = getattr(self, name)
            if type(value) in (int, float) and math.isfinite(value) and 0 < value <= MAX_SECONDS:
                continue
            raise UsageError(f"CODEQA_{name.upper()}={value!r} must be a number of seconds above 0 and at most "
                             f"{MAX_SECONDS:,} (a day); fix or unset it.")

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get("CODEQA_" + f.name.upper())
            if raw not in (None, ""):
                values[f.name] = _convert(f.name, f.type, raw)
        for name, var in (("openai_base_url", "OPENAI_BASE_URL"), ("openai_api_key", "OPENAI_API_KEY"),
                          ("qdrant_url", "QDRANT_URL"), ("qdrant_api_key", "QDRANT_API_KEY"),
                          ("cache_home", "XDG_CACHE_HOME"), ("config_home", "XDG_CONFIG_HOME")):
            if env.get(var) and name not in values:
                values[name] = env[var]
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in ("index_dir", "cache_home", "onnx_cache", "queries_dir", "workspaces_dir", "config_home"):
            if isinstance(values.get(name), (str, Path)):
                values[name] = Path(values[name]).expanduser()
        return cls(**values)

    def with_(self, **changes: Any) -> "Settings":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def llm_configured(self) -> bool:
        return bool(self.openai_base_url or self.openai_api_key)

    @property
    def embeddings_endpoint(self) -> "Endpoint":
        """The embeddings server (`openai:<model>`): CODEQA_EMBEDDINGS_BASE_URL / _API_KEY, else the chat
        endpoint's OPENAI_BASE_URL / OPENAI_API_KEY. A separate embeddings URL never gets the chat key: a key
        goes only to the server it was given for."""
        if self.embeddings_base_url:
            return Endpoint(self.embeddings_base_url, self.embeddings_api_key,
                            "CODEQA_EMBEDDINGS_BASE_URL", "CODEQA_EMBEDDINGS_API_KEY")
        if self.embeddings_api_key:
            return Endpoint(self.openai_base_url, self.embeddings_api_key, "OPENAI_BASE_URL", "CODEQA_EMBEDDINGS_API_KEY")
        return Endpoint(self.openai_base_url, self.openai_api_key)

    @property
    def rerank_endpoint(self) -> "Endpoint":
        """The embedding reranker's server (CODEQA_RERANK=openai:<model>): CODEQA_RERANK_BASE_URL / _API_KEY,
        else the embeddings endpoint. A separate reranker URL gets no other setting's key."""
        if self.rerank_base_url:
            return Endpoint(self.rerank_base_url, self.rerank_api_key, "CODEQA_RERANK_BASE_URL", "CODEQA_RERANK_API_KEY")
        return self.embeddings_endpoint

    def index_dir_for(self, repo: Path) -> Path:
        """--index-dir / CODEQA_INDEX_DIR, else a folder of the user's cache named after the repository.

        Never inside the repository: a folder a repository ships could otherwise pose as its index.
        """
        if self.index_dir:
            return Path(self.index_dir)
        repo = Path(repo).resolve()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", repo.name).strip("._") or "repo"
        digest = hashlib.sha256(str(repo).encode("utf-8", "surrogateescape")).hexdigest()[:12]
        return (self.cache_home or default_cache_home()) / "codeqa" / f"{slug}-{digest}"


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible server, and the settings that name it (for messages that say what to fix)."""
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    url_setting: str = "OPENAI_BASE_URL"
    key_setting: str = "OPENAI_API_KEY"


def default_cache_home() -> Path:
    """The user's cache folder: ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows, else ~/.cache
    (XDG_CACHE_HOME, when set, comes in through Settings.cache_home)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if sys.platform.startswith("win") and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"])
    return Path.home() / ".cache"


# Every number a setting holds, and what it must be, checked where Settings is built: a count below one would
# answer nothing, silently; a timeout of 0 or less cut every answer after its first piece, nan turned the
# watchdog off and inf waited for ever. tests/test_settings_validation.py fails for a number missing here.
COUNTS: dict[str, tuple[int, str]] = {  # whole numbers: the lowest allowed, and what it means
    **dict.fromkeys(("top_k", "context_tokens", "usage_sites_listed", "answer_tokens", "embedding_batch_size",
                     "embedding_concurrency", "chunk_max_chars", "files_max_bytes", "rerank_candidates",
                     "max_question_chars", "qdrant_shards", "qdrant_replicas"), (1, "")),
    "context_window": (1, " of tokens; unset, the endpoint says it"),
    "chunk_min_chars": (0, ""),
    "parse_workers": (0, "; 0 starts one per CPU core, up to 8"),
    "cite_grammar": (0, "; 0 turns the citation grammar off"),
}
SECONDS = ("embedding_timeout", "llm_timeout", "rerank_timeout")
MAX_SECONDS = 86_400
OPTIONAL_NUMBERS = ("qdrant_shards", "qdrant_replicas", "context_window")  # None: not set, someone else decides
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _convert(name: str, typ: Any, raw: str) -> Any:
    typ = str(typ)
    if typ == "bool":
        if raw.strip().lower() in TRUE + FALSE:
            return raw.strip().lower() in TRUE
        raise UsageError(f"CODEQA_{name.upper()}={raw!r} is neither on (1, true, yes) nor off (0, false, no); "
                         "fix or unset it.")
    try:
        if typ.startswith("int"):
            return int(raw)
        if typ.startswith("float"):
            return float(raw)
        if "Path" in typ:
            return Path(raw)
    except ValueError:
        raise UsageError(f"CODEQA_{name.upper()}={raw!r} is not a valid {typ.split(' ')[0]}; fix or unset it.")
    return raw
