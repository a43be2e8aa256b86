"""The code-tuned LoRA adapter for all-MiniLM-L6-v2: file format, identity and the merge at load.

The adapter is a safetensors file of low-rank pairs, one per adapted linear layer of the encoder:
`<module>.lora_A` (rank x in) and `<module>.lora_B` (out x rank), plus metadata (rank, scale,
base model). Merging adds `scale * B @ A` to each weight once, so a query costs exactly what the
base model costs. It is trained by `scripts/train_adapter.py` on `scripts/harvest_corpus.py`'s
pairs (other projects than the ones it is evaluated on); see codeqa/adapters/README.md. The
file ships in codeqa/adapters/ (package data).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from ..errors import UsageError

ADAPTER_FILE = "code-minilm-lora.safetensors"
# The adapter's training data, in one place: the standard library of the interpreter plus these
# sdists (name on PyPI -> (version, package folder inside the sdist)). scripts/harvest_corpus.py
# harvests exactly these; `codeqa eval` warns when asked to evaluate one of them (or the standard
# library), since scores there would flatter the adapter.
TRAINING_PROJECTS = {
    "numpy": ("2.1.3", "numpy"),
    "scipy": ("1.14.1", "scipy"),
    "pandas": ("2.2.3", "pandas"),
    "networkx": ("3.4.2", "networkx"),
    "sqlalchemy": ("2.0.36", "lib/sqlalchemy"),
}
# Linear layers of the BERT encoder that carry an adapter (every one of them in each layer).
TARGET_SUFFIXES = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                   "intermediate.dense", "output.dense")


def default_adapter_path() -> Path:
    return Path(__file__).resolve().parent.parent / "adapters" / ADAPTER_FILE


def resolve_adapter(spec: str) -> Path | None:
    """CODEQA_EMBEDDING_ADAPTER -> the adapter file to merge: "default" (the packaged one, when it
    ships), "none"/"off"/"" (no adapter), or a path to a .safetensors file."""
    if spec in ("none", "off", ""):
        return None
    if spec == "default":
        path = default_adapter_path()
        return path if path.is_file() else None
    path = Path(spec)
    if not path.is_file():
        raise UsageError(f"CODEQA_EMBEDDING_ADAPTER={spec!r}: no such file; use 'default', 'none' or a .safetensors path.")
    return path


@lru_cache(maxsize=8)
def _file_digest(path: str, mtime: float) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def adapter_id(path: Path) -> str:
    """A short content hash: the index records it, so vectors from two adapters never mix."""
    path = Path(path)
    return _file_digest(str(path), path.stat().st_mtime)


def is_target(module_name: str) -> bool:
    return module_name.startswith("encoder.layer.") and module_name.endswith(TARGET_SUFFIXES)


def load_adapter(path: Path) -> tuple[dict, dict]:
    """(tensors by name, metadata) of an adapter file."""
    from safetensors import safe_open

    tensors = {}
    with safe_open(str(path), framework="pt") as handle:
        meta = dict(handle.metadata() or {})
        for key in handle.keys():
            tensors[key] = handle.get_tensor(key)
    return tensors, {"rank": int(meta.get("rank", 16)), "scale": float(meta.get("scale", 2.0)),
                     "base_model": meta.get("base_model", ""), "extra": json.loads(meta.get("extra", "{}"))}


def merge_adapter(model, path: Path) -> int:
    """Add the adapter into a SentenceTransformer's encoder weights in place; returns layers merged."""
    import torch

    tensors, meta = load_adapter(path)
    encoder = model[0].auto_model
    modules = dict(encoder.named_modules())
    merged = 0
    with torch.no_grad():
        for key in tensors:
            if not key.endswith(".lora_A"):
                continue
            name = key[: -len(".lora_A")]
            layer = modules.get(name)
            if layer is None:
                raise ValueError(f"adapter {path} names layer {name!r}, which the model does not have")
            a = tensors[key].to(torch.float32)
            b = tensors[f"{name}.lora_B"].to(torch.float32)
            layer.weight += (meta["scale"] * (b @ a)).to(layer.weight.dtype)
            merged += 1
    return merged


def save_adapter(path: Path, tensors: dict, rank: int, scale: float, base_model: str, extra: dict) -> None:
    """Write the low-rank pairs in fp16 with their metadata (the training script's output)."""
    import torch
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    half = {k: v.detach().to(torch.float16).contiguous() for k, v in tensors.items()}
    save_file(half, str(path), metadata={"rank": str(rank), "scale": str(scale), "base_model": base_model,
                                         "extra": json.dumps(extra)})


__all__ = ["ADAPTER_FILE", "TRAINING_PROJECTS", "TARGET_SUFFIXES", "default_adapter_path", "resolve_adapter", "adapter_id", "merge_adapter", "load_adapter",
           "save_adapter", "is_target"]
