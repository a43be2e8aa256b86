"""The code-tuned LoRA adapter: the merge is exact, switching it off restores the base model, the
packaged adapter is on by default, and an index refuses to be searched with the other setting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from codeqa.embed.adapter import TARGET_SUFFIXES, default_adapter_path, load_adapter, merge_adapter, save_adapter
from codeqa.config import Settings
from codeqa.embed import BASE_MODEL_ID, SentenceTransformerEmbedder, make_embedder
from codeqa.errors import IndexMismatchError, UsageError
from codeqa.indexing.index import index_repo
from codeqa.query.retrieve import Retriever
from conftest import copy_fixture_repo

PROBE = ["def tokenize(text):\n    return text.split()", "split text into lowercase words"]


@pytest.fixture(scope="module")
def base_vectors():
    return SentenceTransformerEmbedder(adapter="none").encode(PROBE)


@pytest.fixture(scope="module")
def random_adapter(tmp_path_factory):
    """A small random adapter over every target layer (not the trained one: the test must not depend on it)."""
    model = SentenceTransformerEmbedder(adapter="none")
    model.load()
    encoder = model.sentence_transformer()[0].auto_model
    generator = torch.Generator().manual_seed(7)
    tensors = {}
    for name, module in encoder.named_modules():
        if name.startswith("encoder.layer.") and name.endswith(TARGET_SUFFIXES):
            tensors[f"{name}.lora_A"] = torch.randn(4, module.in_features, generator=generator) * 0.02
            tensors[f"{name}.lora_B"] = torch.randn(module.out_features, 4, generator=generator) * 0.02
    path = tmp_path_factory.mktemp("adapter") / "random.safetensors"
    save_adapter(path, tensors, rank=4, scale=2.0, base_model=BASE_MODEL_ID, extra={})
    return path


def test_merge_equals_base_plus_low_rank_update_on_a_probe(random_adapter):
    """W' = W + scale * B @ A for every adapted layer, and the layer output on a probe input agrees."""
    tensors, meta = load_adapter(random_adapter)
    base = SentenceTransformerEmbedder(adapter="none")
    base.load()
    merged = SentenceTransformerEmbedder(adapter=str(random_adapter))
    merged.load()
    base_layers = dict(base.sentence_transformer()[0].auto_model.named_modules())
    merged_layers = dict(merged.sentence_transformer()[0].auto_model.named_modules())
    adapted = [k[: -len(".lora_A")] for k in tensors if k.endswith(".lora_A")]
    assert len(adapted) == 6 * len(TARGET_SUFFIXES)
    probe = torch.randn(3, 384, generator=torch.Generator().manual_seed(1))
    for name in adapted:
        a, b = tensors[f"{name}.lora_A"].float(), tensors[f"{name}.lora_B"].float()
        layer, merged_layer = base_layers[name], merged_layers[name]
        x = probe if layer.in_features == 384 else torch.randn(3, layer.in_features, generator=torch.Generator().manual_seed(2))
        expected = layer(x) + meta["scale"] * (x @ a.T @ b.T)
        assert torch.allclose(merged_layer(x), expected, atol=1e-4), name
    # an untouched layer stays untouched
    assert torch.equal(base_layers["embeddings.word_embeddings"].weight, merged_layers["embeddings.word_embeddings"].weight)


def test_adapter_changes_vectors_and_off_restores_the_base_model(random_adapter, base_vectors):
    adapted = SentenceTransformerEmbedder(adapter=str(random_adapter)).encode(PROBE)
    assert not np.allclose(adapted, base_vectors, atol=1e-3)
    again = SentenceTransformerEmbedder(adapter="none").encode(PROBE)
    assert np.allclose(again, base_vectors, atol=1e-6)


def test_model_id_names_the_adapter(random_adapter):
    assert SentenceTransformerEmbedder(adapter="none").model_id == BASE_MODEL_ID
    with_adapter = SentenceTransformerEmbedder(adapter=str(random_adapter)).model_id
    assert with_adapter.startswith(BASE_MODEL_ID + "+lora:") and with_adapter != BASE_MODEL_ID
    with pytest.raises(UsageError, match="CODEQA_EMBEDDING_ADAPTER"):
        make_embedder("local", str(random_adapter) + ".missing")


def test_the_packaged_adapter_is_on_by_default():
    path = default_adapter_path()
    assert path.is_file(), "codeqa/adapters/ must ship the trained adapter"
    assert path.stat().st_size <= 5 * 1024 * 1024
    tensors, meta = load_adapter(path)
    assert meta["rank"] == 16 and meta["scale"] == 2.0 and meta["base_model"] == BASE_MODEL_ID
    assert len([k for k in tensors if k.endswith(".lora_A")]) == 36
    assert "+lora:" in make_embedder("local").model_id
    assert Settings.load(env={}).embedding_adapter == "default"


def test_an_index_built_with_one_setting_refuses_the_other(tmp_path, random_adapter):
    repo = copy_fixture_repo(tmp_path / "repo")
    settings = Settings.load(env={})
    adapted = SentenceTransformerEmbedder(adapter=str(random_adapter))
    index_repo(repo, settings, embedder=adapted)
    with pytest.raises(IndexMismatchError, match="re-index"):
        Retriever.open(repo, settings, embedder=SentenceTransformerEmbedder(adapter="none"))
    Retriever.open(repo, settings, embedder=adapted).close()
    # re-indexing with the other setting re-embeds every chunk rather than mixing vectors
    report = index_repo(repo, settings, embedder=SentenceTransformerEmbedder(adapter="none"))
    assert report.chunks_embedded == report.chunks > 0
