"""CODEQA_EMBEDDINGS=local-onnx: the bundled model exported to ONNX gives the torch vectors; the export is cached.
CODEQA_EMBEDDINGS=local-onnx-int8: the export quantised to int8 gives other vectors, under another model id."""

from __future__ import annotations

import numpy as np
import pytest

from codeqa.config import Settings
from codeqa.embed import embedder_from_settings, make_embedder
from codeqa.errors import UsageError

pytest.importorskip("onnxruntime", reason="optional: pip install 'codeqa[onnx]'")
pytest.importorskip("onnx", reason="optional: pip install 'codeqa[onnx]'")

TEXTS = ["def tokenize(text):\n    return text.split()\n", "where is the configuration loaded",
         "class EncoderClass:\n    def encode(self, text):\n        return [hash(w) for w in tokenize(text)]\n" * 20]


@pytest.mark.slow
def test_onnx_export_gives_the_torch_vectors_and_is_cached(tmp_path, monkeypatch, embedder):
    from codeqa.embed.local_onnx import OnnxEmbedder

    monkeypatch.setenv("CODEQA_ONNX_CACHE", str(tmp_path / "onnx"))
    fp32 = embedder_from_settings(Settings.load(embeddings="local-onnx"))
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
    again = OnnxEmbedder(cache_dir=tmp_path / "onnx")
    again.load()  # from the cache: no second export
    assert exported.stat().st_mtime_ns == stamp

    with pytest.raises(UsageError, match="local-onnx-int8"):
        make_embedder("local-onnx-int4")


def test_an_int8_model_has_its_own_id_and_file(tmp_path):
    from codeqa.embed.local_onnx import OnnxEmbedder

    fp32, int8 = OnnxEmbedder(cache_dir=tmp_path), OnnxEmbedder(cache_dir=tmp_path, precision="int8")
    assert int8.model_id == fp32.model_id + "+onnx-int8"  # other vectors: an index built with one refuses the other
    assert int8.model_path == fp32.model_path.with_name("model-int8.onnx")  # quantised from the fp32 export beside it
    assert not int8.loaded
    with pytest.raises(ValueError, match="int4"):
        OnnxEmbedder(precision="int4")


def test_the_export_folder_comes_from_settings_not_from_the_environment(tmp_path, monkeypatch):
    from codeqa.embed.local_onnx import OnnxEmbedder

    monkeypatch.setenv("CODEQA_ONNX_CACHE", str(tmp_path / "from-env"))
    chosen = embedder_from_settings(Settings(embeddings="local-onnx-int8", onnx_cache=tmp_path / "onnx"))
    assert isinstance(chosen, OnnxEmbedder) and not chosen.loaded
    assert chosen.model_path.parent.parent == tmp_path / "onnx"
    # the library reads no variable: CODEQA_ONNX_CACHE reaches it only through Settings.load at the edge
    assert tmp_path / "from-env" not in OnnxEmbedder().model_path.parents
    assert embedder_from_settings(Settings.load(embeddings="local-onnx")).model_path.parent.parent == tmp_path / "from-env"


@pytest.mark.slow
def test_int8_is_quantised_from_the_cached_export_and_stays_close(tmp_path, monkeypatch, embedder):
    import logging

    from codeqa.embed.local_onnx import OnnxEmbedder

    monkeypatch.setenv("CODEQA_ONNX_CACHE", str(tmp_path / "onnx"))
    # a root logger without handlers, as in a process that never set up logging: the quantiser's
    # warnings would configure logging for the whole process (logging.basicConfig) and print
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    int8 = embedder_from_settings(Settings.load(embeddings="local-onnx-int8"))
    assert isinstance(int8, OnnxEmbedder) and int8.precision == "int8" and int8.model_id != embedder.model_id
    vectors = int8.encode(TEXTS, batch_size=2)
    assert logging.getLogger().handlers == []
    assert int8.model_path.is_file() and int8.model_path.with_name("model.onnx").is_file()
    # int8 MatMul weights; the word-embedding table (about half of the model) stays fp32
    assert int8.model_path.stat().st_size < 0.7 * int8.model_path.with_name("model.onnx").stat().st_size
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * embedder.encode(TEXTS)).sum(axis=1)
    assert float(cosine.min()) > 0.97  # close, not equal (docs/benchmarks.md: what it costs in MRR)
    one_thread = OnnxEmbedder(cache_dir=tmp_path / "onnx", precision="int8", threads=1)  # from the cache, on one thread: the same vectors
    assert np.allclose(one_thread.encode(TEXTS, batch_size=2), vectors, atol=1e-5)
