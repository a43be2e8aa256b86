"""The adapter's training corpus and script: pairs have the index's text shape without the docstring,
and the same seed reproduces the same adapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file

from codeqa.embed.adapter import load_adapter
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


def test_hard_negatives_are_the_best_ranked_wrong_texts_and_never_a_near_duplicate():
    import random

    import torch

    from train_adapter import mine_hard_negatives

    def unit(*v):
        return torch.nn.functional.normalize(torch.tensor(v, dtype=torch.float32), dim=0)

    texts = torch.stack([unit(1, 0, 0), unit(0.9, 0.3, 0), unit(0.7, 0, 0.7), unit(1, 0.05, 0), unit(0, 1, 0)])
    queries = torch.stack([unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1), unit(1, 0.02, 0), unit(0, 0.9, 0.4)])
    # query 3 reads like query 0 (cosine > 0.9): text 3 is likely the same function, never query 0's negative
    mined = mine_hard_negatives(queries, texts, 1, 1, random.Random(0), block=2)
    assert mined[0] == [1]  # text 3 ranks above text 1 for query 0 but is skipped
    assert mined[3] == [1]  # and the other way round
    assert all(i not in row for i, row in enumerate(mined))  # never the pair's own text
    pooled = mine_hard_negatives(queries, texts, 2, 3, random.Random(0))
    assert all(len(row) == 2 and len(set(row)) == 2 for row in pooled)


def test_docstring_rest_keeps_the_docstring_without_the_paragraph_asked_with(tmp_path):
    import random

    source = tmp_path / "m.py"
    source.write_text('def scale(values, factor):\n    """Multiply every value in the list by the factor.\n\n'
                      '    The list is not changed; a new one is returned.\n    """\n'
                      '    return [v * factor for v in values]\n')
    plain = pairs_from_file(source, "m.py")[0]
    kept = pairs_from_file(source, "m.py", 1.0, random.Random(0))[0]
    assert plain["query"] == kept["query"] == "Multiply every value in the list by the factor."
    assert "not changed" not in plain["text"]
    assert kept["text"].endswith('def scale(values, factor):\n    """\n    The list is not changed; a new one is '
                                 'returned.\n    """\n    return [v * factor for v in values]\n')
    assert "Multiply" not in kept["text"]
