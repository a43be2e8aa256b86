"""The question map: a small trained move of a question's vector toward the code that answers it.

The adapter (adapter.py) taught the model to match a docstring to its function. A question asked in a
user's words ("How does the router find which route handles a request?") is farther from the code that
does the work than a docstring is, and the model ranks code whose docstring names the topic above it.
The map is v' = normalise(v + (v · B) · Aᵀ), A and B of dimension × rank, applied to the vector of a
question about how code behaves ("How does ...", "What happens when ...": query.question.asks_behaviour)
before the search; other questions, documents, identifiers and the index are untouched, so an index
needs no new run.

`scripts/train_question_map.py` trains it (softmax over every chunk of a project with a dense vector,
the gold chunks as positives) on questions a local LLM wrote about functions of projects nobody here
evaluates on (`scripts/write_questions.py`). It is tied to the model (and adapter) that embedded the
index: a map trained for another `model_id` is not applied. Experimental and off by default
(CODEQA_QUESTION_MAP=none): no map ships, since the ones trained so far did not lift the "how" questions
beyond their noise and cost SWE-QA-Bench's development figures (docs/benchmarks.md, "A question map").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

import numpy as np

from ..errors import UsageError

QUESTION_MAP_FILE = "question-map.safetensors"


@dataclass(frozen=True)
class QuestionMap:
    """A (dimension × rank) and B (dimension × rank), and the index `model_id` they were trained for."""

    a: np.ndarray
    b: np.ndarray
    model_id: str

    def apply(self, vector) -> np.ndarray:
        """The mapped unit vector of one question vector."""
        v = np.asarray(vector, dtype=np.float32)
        moved = v + (v @ self.b) @ self.a.T
        norm = float(np.linalg.norm(moved))
        return moved / norm if norm > 0 else v


def default_question_map_path() -> Path:
    return Path(__file__).resolve().parent.parent / "adapters" / QUESTION_MAP_FILE


def load_question_map(spec: str, model_id: str | None | Callable[[], str | None]) -> QuestionMap | None:
    """CODEQA_QUESTION_MAP -> the map to apply to an index made by `model_id`: "default" (the packaged
    one), "none"/"off"/"" (none), or a path to a .safetensors file. None when the map was trained for
    another model, or when the default does not ship. `model_id` may be a function that reads it (the index
    meta): it is called only when a map file is read."""
    if spec in ("none", "off", ""):
        return None
    path = default_question_map_path() if spec == "default" else Path(spec)
    if not path.is_file():
        if spec == "default":
            return None
        raise UsageError(f"CODEQA_QUESTION_MAP={spec!r}: no such file; use 'default', 'none' or a .safetensors path.")
    qmap = read_question_map(path)
    model_id = model_id() if callable(model_id) else model_id
    return qmap if model_id is not None and qmap.model_id == model_id else None


def read_question_map(path: Path) -> QuestionMap:
    """The map in a .safetensors file (tensors `a`, `b`; metadata `model_id`). Only arrays are read."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as handle:
            meta = dict(handle.metadata() or {})
            a, b = handle.get_tensor("a"), handle.get_tensor("b")
    except Exception as exc:  # safetensors raises its own errors for a damaged or foreign file
        raise UsageError(f"Cannot read the question map {path} ({exc}); set CODEQA_QUESTION_MAP=none "
                         "or point it at a file scripts/train_question_map.py wrote.") from None
    if a.ndim != 2 or a.shape != b.shape or "model_id" not in meta:
        raise UsageError(f"{path} is not a question map (tensors a, b of one shape and a model_id); set "
                         "CODEQA_QUESTION_MAP=none or point it at a file scripts/train_question_map.py wrote.")
    return QuestionMap(a.astype(np.float32), b.astype(np.float32), meta["model_id"])


def write_question_map(path: Path, qmap: QuestionMap, extra: dict | None = None) -> None:
    """Write a map as float16 tensors with its model_id (and `extra`, JSON) as metadata."""
    from safetensors.numpy import save_file

    save_file({"a": qmap.a.astype(np.float16), "b": qmap.b.astype(np.float16)}, str(path),
              metadata={"model_id": qmap.model_id, "extra": json.dumps(extra or {})})
