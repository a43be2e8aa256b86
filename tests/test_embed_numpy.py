"""A query's vector in NumPy (codeqa/embed/local_numpy.py): torch's vectors to float32 rounding, with
and without an adapter, and a search's query encoded without importing torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from codeqa.embed import SentenceTransformerEmbedder
from codeqa.embed.adapter import default_adapter_path
from codeqa.embed.local import QUERY_BATCH_MAX
from codeqa.embed.local_numpy import NumpyMiniLM

pytestmark = pytest.mark.slow

TEXTS = ["where is the config loaded", "How are HTTP redirects followed?", "BackgroundTask",
         "def tokenize(text):\n    return text.split()\n" * 40,  # past the model's 256 word pieces: truncated alike
         "class Session:\n    \"\"\"Holds the connection.\"\"\"\n    def close(self):\n        self.bind = None\n"]


@pytest.mark.parametrize("adapter", ["none", "default"])
def test_numpy_vectors_are_torchs(adapter):
    torch_model = SentenceTransformerEmbedder(adapter=adapter)
    # more than QUERY_BATCH_MAX texts: the batch goes to torch
    expected = torch_model.encode(TEXTS * 2, batch_size=64)[:len(TEXTS)]
    got = NumpyMiniLM(torch_model.adapter_path).encode(TEXTS)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    assert (got * expected).sum(axis=1).min() >= 0.99999
    assert np.abs(got - expected).max() < 1e-5


def test_the_query_path_uses_numpy_and_keeps_the_model_id():
    model = SentenceTransformerEmbedder()
    assert default_adapter_path().is_file() and "+lora:" in model.model_id
    vectors = model.encode(TEXTS[:QUERY_BATCH_MAX])
    assert model.loaded and model._model is None  # no torch model behind a query
    assert vectors.shape == (len(TEXTS), 384)


def test_a_query_vector_imports_no_torch():
    code = ("import sys; from codeqa.embed import make_embedder; "
            "v = make_embedder('local').encode(['where is the config loaded']); "
            "print(v.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(1,", "384)", "False", "False"]


def test_a_query_leaves_blas_threads_as_they_were():
    from threadpoolctl import threadpool_info

    before = [(p["internal_api"], p["num_threads"]) for p in threadpool_info()]
    SentenceTransformerEmbedder().encode(["where is the config loaded"])
    assert [(p["internal_api"], p["num_threads"]) for p in threadpool_info()] == before
