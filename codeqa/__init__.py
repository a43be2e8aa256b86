"""codeqa: answer questions about a codebase with precise references and verified citations.

    from codeqa import Settings, index_repo, search, ask
    index_repo("path/to/repo")                       # -> IndexReport
    search("path/to/repo", "where are tokens parsed")  # -> [Hit, ...] best first
    ask("path/to/repo", "how is EncoderClass used?")   # -> Answer (citations verified)

Names are imported on first use, so `import codeqa` (and `codeqa --help`) stays fast.
"""

from __future__ import annotations

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "Settings": "config", "index_repo": "indexing.index", "IndexReport": "indexing.index", "search": "query.retrieve", "Retriever": "query.retrieve",
    "ask": "answer", "Answerer": "answer", "Conversation": "answer", "Answer": "types", "Hit": "types",
    "Citation": "types", "Symbol": "types", "Reference": "types", "Chunk": "types", "CodeQAError": "errors",
    "UsageError": "errors", "IndexMissingError": "errors", "IndexMismatchError": "errors", "LLMError": "errors",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'codeqa' has no attribute {name!r}")
