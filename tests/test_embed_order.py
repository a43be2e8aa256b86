"""Texts are embedded longest first in word pieces (issue 22): batches pad little, and the vectors are
the ones sentence-transformers gives when it orders the texts itself."""

from __future__ import annotations

import numpy as np
import pytest

from codeqa.embed import longest_first
from codeqa.embed.tokenizer import MAX_TOKENS, length_order, model_tokenizer

pytest.importorskip("tokenizers")

# Code has more word pieces per character than prose: the first text is the shortest in characters
# and the longest in word pieces, so ordering by characters (what sentence-transformers does) would
# put it last.
DENSE_CODE = "x=f(a,b);y=g(c,d);" * 6
PROSE = ("This paragraph explains in plain words what the function does, when to call it, and what it "
         "returns to the caller when the input is empty.")


def pieces(text: str) -> int:
    return len(model_tokenizer().encode(text).ids)


def test_length_order_counts_word_pieces_not_characters():
    texts = [PROSE, DENSE_CODE, "short"]
    assert len(DENSE_CODE) < len(PROSE) and pieces(DENSE_CODE) > pieces(PROSE)
    assert length_order(texts) == [1, 0, 2]
    assert longest_first(texts) == [DENSE_CODE, PROSE, "short"]


def test_length_order_caps_at_what_the_model_reads_and_keeps_ties_in_order():
    long_a, long_b = "alpha " * 400, "beta gamma " * 400  # both past 256 word pieces: the model reads 256 of each
    assert pieces(long_a) == pieces(long_b) == MAX_TOKENS
    assert length_order(["tiny", long_a, long_b]) == [1, 2, 0]
    assert length_order([]) == [] and longest_first([]) == []


def test_longest_first_keeps_every_text_once_even_repeated():
    texts = ["b", "a a a", "b", "c c"]
    assert sorted(longest_first(texts)) == sorted(texts)


@pytest.mark.slow
def test_ordered_batches_give_sentence_transformers_own_vectors(embedder):
    texts = [f"def f{i}(x):\n    return x + {i}\n" * (1 + i % 7) for i in range(40)] + [PROSE, DENSE_CODE]
    ours = embedder.encode(texts, batch_size=8)  # in length_order, one batch at a time
    theirs = embedder.sentence_transformer().encode(texts, batch_size=64, normalize_embeddings=True,
                                                    convert_to_numpy=True, show_progress_bar=False)
    assert ours.dtype == np.float32 and ours.shape == (42, 384)
    assert float(np.abs(ours - theirs).max()) < 1e-5
