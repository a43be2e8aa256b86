"""CODEQA_EMBEDDINGS=local-onnx: the bundled model exported to ONNX gives the torch vectors; the export is cached."""

from __future__ import annotations

import numpy as np
import pytest

from codeqa.embed import make_embedder
from codeqa.errors import UsageError

pytest.importorskip("onnxruntime", reason="optional: pip install 'codeqa[onnx]'")
pytest.importorskip("onnx", reason="optional: pip install 'codeqa[onnx]'")

TEXTS = ["def tokenize(text):\n    return text.split()\n", "where is the configuration loaded",
         "class EncoderClass:\n    def encode(self, text):\n        return [hash(w) for w in tokenize(text)]\n" * 20]


@pytest.mark.slow
def test_onnx_export_gives_the_torch_vectors_and_is_cached(tmp_path, monkeypatch, embedder):
    from codeqa.embed.local_onnx import OnnxEmbedder

    monkeypatch.setenv("CODEQA_ONNX_CACHE", str(tmp_path / "onnx"))
    fp32 = make_embedder("local-onnx")
    assert isinstance(fp32, OnnxEmbedder) and not fp32.loaded
    assert fp32.model_id == embedder.model_id  # same vectors: an index built with torch is searched with it
    vectors = fp32.encode(TEXTS, batch_size=2)
    expected = embedder.encode(TEXTS)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float((vectors * expected).sum(axis=1).min()) > 0.9999
    exported = fp32.model_path
    assert exported.is_file() and exported.parent.parent == tmp_path / "onnx"
    stamp = exported.stat().st_mtime_ns
    again = OnnxEmbedder()
    again.load()  # from the cache: no second export
    assert exported.stat().st_mtime_ns == stamp

    with pytest.raises(UsageError, match="local-onnx"):
        make_embedder("local-onnx-int8")  # tried, dropped: it cost 0.010 MRR on the docstring benchmark
