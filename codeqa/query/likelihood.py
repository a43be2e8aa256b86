"""How likely a causal language model finds a question, having read a candidate's code (query likelihood).

For "how does X work?" the dense model ranks by topic, and the answer's first functions are often the entry
point, a caller, or a helper beside the one that does the work. A model that reads each candidate's code and
scores log P(question | code) (the question's tokens, read after a prompt showing the code and asking for a
question it answers; UPR's way of reranking passages) tells them apart more often than asking it to pick:
shown the same candidates and asked "which one?" or "yes/no", Qwen2.5-Coder-0.5B and -1.5B did worse than
the search's order (docs/benchmarks.md, "Reading the code instead"). Each candidate is scored on its own, so
the order it is shown in cannot bias it, and only the question's tokens are counted, which are the same for
every candidate of a question.

llama.cpp's server does not return the log-probabilities of prompt tokens, so the model runs in this process:
a GGUF file (`scripts/local_llm.sh model 1.5b`) loaded by transformers (with the `gguf` and `accelerate`
packages; `pip install 'codeqa[likelihood]'`), dequantised to float32, on the CPU.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from ..errors import CodeQAError, UsageError

VIEW_LINES = 24  # of a candidate, the non-blank lines the model reads (docstrings cut to their first line)
VIEW_LINE_CHARS = 110
_DOC = re.compile(r"^[rRbBuU]?(\"\"\"|''')")


@dataclass(frozen=True)
class Candidate:
    """What the model is shown of a candidate: where it is, its name, and its code."""

    path: str
    symbol: str
    code: str


class QuestionLikelihood(Protocol):
    """Scores candidates for a question by how likely a model finds the question after reading each one.

    Contract: `score(question, candidates)` returns one float per candidate, in their order: the natural log of
    the probability of the question's tokens given that candidate (so <= 0, higher is likelier); candidates of
    one question are comparable with each other, not with another question's. It raises CodeQAError (never a
    library's own exception) when the model cannot be loaded or run, naming the setting or file to fix."""

    def score(self, question: str, candidates: Sequence[Candidate]) -> list[float]: ...


def code_view(text: str, lines: int = VIEW_LINES) -> str:
    """A candidate's first `lines` non-blank lines, each docstring cut to its first line."""
    out: list[str] = []
    in_doc = None
    for raw in text.splitlines():
        line = raw.strip()
        if in_doc:
            in_doc = None if in_doc in line else in_doc
            continue
        if not line:
            continue
        doc = _DOC.match(line)
        if doc:
            quote, rest = doc.group(1), line[doc.end():]
            indent = raw[:len(raw) - len(raw.lstrip())]
            out.append(f"{indent}{quote}{rest.split(quote)[0].strip()}{'' if quote in rest else ' ...'}{quote}")
            in_doc = None if quote in rest else quote
            continue
        out.append(raw.rstrip()[:VIEW_LINE_CHARS])
        if len(out) >= lines:
            out.append("    ...")
            break
    return "\n".join(out)


def prompt_text(candidate: Candidate) -> str:
    """The user turn a candidate is shown in; the question follows as the assistant's reply."""
    return (f"Here is some code from {candidate.path} ({candidate.symbol}):\n```python\n{code_view(candidate.code)}\n```\n"
            "Write a question a developer could ask about the codebase that this code answers.")


@dataclass
class GGUFLikelihood:
    """QuestionLikelihood by a chat model in a GGUF file, run in this process (see the module docstring).

    The model loads at the first question (~40 s for the 1.5B model on two cores, ~7 GB of memory in float32),
    once, whichever thread asks first; a question's candidates then cost one forward pass each (~2-4 s for
    300 tokens with the 1.5B model on two cores). torch's own thread count is left as it is (process-wide)."""

    path: Path
    _loaded: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (else the next score loads it first)."""
        return self._loaded is not None

    def score(self, question: str, candidates: Sequence[Candidate]) -> list[float]:
        torch, tokenizer, model = self._load()
        asked = tokenizer(question, add_special_tokens=False).input_ids
        if not asked:
            return [0.0] * len(candidates)
        scores = []
        with self._lock:  # one forward pass at a time: they share the threads, and the model is not re-entrant
            for candidate in candidates:
                shown = tokenizer.apply_chat_template([{"role": "user", "content": prompt_text(candidate)}],
                                                      tokenize=False, add_generation_prompt=True)
                ids = tokenizer(shown, add_special_tokens=False).input_ids
                try:
                    with torch.no_grad():
                        logits = model(torch.tensor([ids + asked])).logits[0, len(ids) - 1:-1]
                except RuntimeError as exc:
                    raise CodeQAError(f"The likelihood model {self.path} failed on a question: {exc}") from exc
                logprobs = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(asked)[:, None])
                scores.append(float(logprobs.sum()))
        return scores

    def _load(self):
        with self._lock:
            if self._loaded is None:
                self._loaded = load_gguf(self.path)
            return self._loaded


def missing_packages() -> list[str]:
    """The packages a GGUF model needs here that are not installed (checked without importing them)."""
    from importlib.util import find_spec

    return [name for name in ("transformers", "gguf", "accelerate") if find_spec(name) is None]


def check_gguf(path: Path) -> None:
    """A UsageError, naming CODEQA_RERANK and what to do, unless `path` is a file and the packages are installed:
    checked when the setting is read, and again before the model loads (the file may have gone since)."""
    if not path.is_file():
        raise UsageError(f"CODEQA_RERANK=likelihood:{path}: no such file. `scripts/local_llm.sh model 1.5b` "
                         "assembles Qwen2.5-Coder-1.5B and prints its path; or unset CODEQA_RERANK.")
    if missing := missing_packages():
        raise _packages_missing(path, missing)


def _packages_missing(path: Path, missing: Sequence[str]) -> UsageError:
    return UsageError(f"CODEQA_RERANK=likelihood:{path} runs the model with transformers, which needs "
                      f"{', '.join(missing)}: pip install 'codeqa[likelihood]', or unset CODEQA_RERANK.")


def load_gguf(path: Path):
    """(torch, tokenizer, model) of a GGUF chat model, or a CodeQAError that says what to install or fix."""
    check_gguf(path)
    try:
        import accelerate  # noqa: F401  (transformers needs it to load a GGUF file)
        import gguf  # noqa: F401
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # found but broken
        raise _packages_missing(path, [exc.name or str(exc)]) from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                     dtype=torch.float32).eval()
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise UsageError(f"CODEQA_RERANK=likelihood:{path}: transformers could not load it as a chat model "
                         f"({type(exc).__name__}: {str(exc)[:200]}). Use a GGUF file of a model transformers "
                         "reads, such as `scripts/local_llm.sh model 1.5b`.") from exc
    return torch, tokenizer, model


__all__ = ["Candidate", "QuestionLikelihood", "GGUFLikelihood", "code_view", "prompt_text", "load_gguf",
           "check_gguf", "missing_packages"]
