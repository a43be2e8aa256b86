"""What is embedded for a chunk, and the code-aware tokens of the sparse (BM25) vectors.

all-MiniLM-L6-v2 reads only 256 word pieces, so the embedded text leads with what a question is
most likely to match — path, qualified name split into words, signature, docstring — and then as
much code as fits. The full code stays in the store's payload.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+")
EMBED_TEXT_MAX_CHARS = 1600  # ~256 word pieces of code; the tokenizer truncates the rest anyway


def split_identifier(identifier: str) -> list[str]:
    """`EncoderClass.encode_batch` -> ["encoder", "class", "encode", "batch"]."""
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", identifier):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def code_tokens(text: str) -> list[str]:
    """Sparse (BM25) tokens: every identifier lowercased whole, plus its camelCase/snake_case words."""
    return [t for ident in _IDENT.findall(text) for t in identifier_tokens(ident)]


def code_identifiers(text: str) -> list[str]:
    """The identifiers of a text, in order (what code_tokens splits)."""
    return _IDENT.findall(text)


def identifier_tokens(ident: str) -> list[str]:
    """One identifier's sparse tokens: itself lowercased, plus its words when it has several."""
    low = ident.lower()
    words = split_identifier(ident)
    if len(words) > 1 or (words and words[0] != low):
        return [low, *(w for w in words if len(w) > 1)]
    return [low]


def embedding_text(path: str, qualified_name: str, signature: str, docstring: str, code: str,
                   max_chars: int = EMBED_TEXT_MAX_CHARS) -> str:
    """Header + code, the same shape at index time and at adapter-training time.

    Line 1: path and qualified name with its words (`a/b.py EncoderClass.encode: encoder class encode`).
    Line 2: the first docstring paragraph when there is one and the code does not already show it.
    Then the code. Signature is part of the code when the chunk starts at the definition.
    """
    name_part = ""
    if qualified_name:
        name_part = f" {qualified_name}: {' '.join(split_identifier(qualified_name))}"
    lines = [f"{path}{name_part}"]
    if signature and signature.strip() not in code:
        lines.append(signature.strip())
    doc = " ".join(docstring.split("\n\n", 1)[0].split()) if docstring else ""
    if doc and doc[:40] not in code:
        lines.append(doc)
    head = "\n".join(lines) + "\n"
    return (head + code)[:max_chars]


__all__ = ["EMBED_TEXT_MAX_CHARS", "split_identifier", "code_tokens", "code_identifiers", "identifier_tokens",
           "embedding_text"]
