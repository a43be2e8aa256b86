"""The adapter's training corpus and script: pairs have the index's text shape without the docstring,
and the same seed reproduces the same adapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file

from codeqa.adapter import load_adapter
from conftest import FIXTURE_REPO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from harvest_corpus import pairs_from_file  # noqa: E402


def test_a_pair_is_the_docstring_paragraph_and_the_index_shaped_text_without_it():
    pairs = pairs_from_file(FIXTURE_REPO / "encoders" / "encoder.py", "encoders/encoder.py")
    by_source = {p["source"]: p for p in pairs}
    # `encode` has a one-line docstring of 8 words and a body; `tokenize` is too short a description
    encode = by_source["encoders/encoder.py:21"]
    assert encode["query"] == "Encode one text into a list of `dim` floats."
    first_line, rest = encode["text"].split("\n", 1)
    assert first_line == "encoders/encoder.py EncoderClass.encode: encoder class encode"
    assert rest.startswith("    def encode(self, text):\n        vector = [0.0] * self.dim")
    assert "Encode one text" not in encode["text"]
    assert all(len(p["query"].split()) >= 6 for p in pairs)


def _train(corpus: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_adapter.py"), str(corpus), "--out", str(out),
                           "--batch-size", "8", "--epochs", "1", "--limit", "24", "--text-max-tokens", "32"],
                          capture_output=True, text=True, timeout=600, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_same_seed_trains_the_same_adapter(tmp_path):
    pairs = [{"query": f"compute the number {i} from the given input values", "text": f"m.py f{i}: f {i}\ndef f{i}(x):\n"
              f"    return x * {i} + {i % 7}\n"} for i in range(24)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    first = _train(corpus, tmp_path / "a" / "adapter.safetensors")
    second = _train(corpus, tmp_path / "b" / "adapter.safetensors")
    a, b = load_file(str(tmp_path / "a" / "adapter.safetensors")), load_file(str(tmp_path / "b" / "adapter.safetensors"))
    assert a.keys() == b.keys() and len(a) == 72
    assert all((a[k] == b[k]).all() for k in a)
    assert any(k.endswith("lora_B") and a[k].abs().sum() > 0 for k in a)  # it did learn something
    info = json.loads((tmp_path / "a" / "training.json").read_text())
    assert info["corpus_sha256"] == first["corpus_sha256"] == second["corpus_sha256"]
    assert info["config"]["seed"] == 0 and len(info["loss"]) == 3
    _, meta = load_adapter(tmp_path / "a" / "adapter.safetensors")
    assert meta["rank"] == 16 and meta["extra"]["corpus_sha256"] == info["corpus_sha256"]


def test_grouped_batches_hold_runs_of_one_source_folder_and_every_pair_once():
    import random

    from train_adapter import batch_order, source_folder

    pairs = [{"source": f"{folder}/m{i}.py:{i}"} for folder in ("numpy/linalg", "asyncio", "json") for i in range(10)]
    pairs += [{"source": f"top{i}.py:1"} for i in range(5)]  # a module at the top: folder "."
    assert source_folder(pairs[0]) == "numpy/linalg" and source_folder(pairs[-1]) == "."
    order = batch_order(pairs, 4, random.Random(0))
    assert sorted(order) == list(range(len(pairs)))
    folder = [source_folder(pairs[i]) for i in order]
    full_runs = [folder[k:k + 4] for k in range(0, 7 * 4, 4)]  # 3 folders x 2 runs of 4, 1 of the 5 tops
    assert all(len(set(run)) == 1 for run in full_runs)
    assert len(set(folder[28:])) == 4  # the remainders (2, 2, 2, 1) come last
    assert batch_order(pairs, 4, random.Random(0)) == order  # seeded
    assert batch_order(pairs, 0, random.Random(0)) != order  # ungrouped: a plain shuffle
