"""Evaluation metrics and results: the hit rule, recall@k and MRR@10, one question's result, a run's
aggregates, and the results file (JSON lines) that `codeqa eval compare` reads.

Metrics (every share is over the questions or citations it applies to; None when there are none):
  hit                   a retrieved span overlaps a gold span: same file, line ranges intersect
  recall@k              share of questions with a hit in the top k of `Retriever.search(question)`,
                        exactly the ranking `codeqa search --json` prints for the question
  MRR@10                mean of 1/rank of the first hit within the top 10 (0 without one)
  reference completeness   usage questions: share of gold reference sites that the answer's
                        reference list holds or its snippets show
  citation validity     share of all citations in answers that are verified (answer.py's check)
  citation precision    share of all citations that overlap a gold span
  answer contains       share of questions with `answer_contains` whose answer contains every
                        string (case-insensitive)
  judge                 mean faithfulness (claims backed by the cited code) and correctness
                        (against the gold code); an unparsable or failed verdict is counted, not scored
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import UsageError
from ..types import Answer
from .questions import Question, Span, question_from_json

KS = (1, 5, 10)
MRR_DEPTH = 10


# ---- metrics on one question ------------------------------------------------------------------------

def overlaps_gold(path: str, start_line: int, end_line: int, gold: Sequence[Span]) -> bool:
    """The hit rule: the span overlaps some gold span (same file, line ranges intersect)."""
    return any(g.overlaps(path, start_line, end_line) for g in gold)


def first_hit_rank(ranked: Sequence[tuple[str, int, int]], gold: Sequence[Span]) -> int | None:
    """1-based rank of the first (path, start, end) that overlaps gold, or None."""
    return next((i for i, (p, s, e) in enumerate(ranked, 1) if overlaps_gold(p, s, e, gold)), None)


def recall_at(ranks: Sequence[int | None], k: int) -> float | None:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else None


def mrr_at(ranks: Sequence[int | None], depth: int = MRR_DEPTH) -> float | None:
    return sum(1.0 / r for r in ranks if r is not None and r <= depth) / len(ranks) if ranks else None


def reference_sites_found(gold: Sequence[Span], answer: Answer) -> int:
    """Gold sites (lines) that the answer's complete reference list holds or one of its snippets shows."""
    listed = {(r.path, r.line) for r in answer.references}
    found = 0
    for g in gold:
        lines = range(g.start_line, g.end_line + 1)
        if any((g.path, line) in listed for line in lines) or any(
                s.path == g.path and s.start_line <= g.start_line and g.end_line <= s.end_line for s in answer.snippets):
            found += 1
    return found


def contains_checks(answer_text: str, needles: Sequence[str]) -> list[tuple[str, bool]]:
    low = answer_text.lower()
    return [(n, n.lower() in low) for n in needles]


# ---- results ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """The judge's scores. status: "ok"; "unparsed" (the reply was not the JSON asked for: `detail`
    holds its start); "failed" (the endpoint failed: `detail` says why)."""

    status: str
    faithfulness: int | None = None
    correctness: int | None = None
    faithfulness_reason: str = ""
    correctness_reason: str = ""
    detail: str = ""


@dataclass(frozen=True)
class RankedSpan:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    score: float
    gold: bool  # overlaps a gold span

    @property
    def label(self) -> str:
        return Span(self.path, self.start_line, self.end_line).label


@dataclass(frozen=True)
class CitationCheck:
    path: str
    start_line: int
    end_line: int
    verified: bool
    gold: bool
    reason: str = ""


@dataclass(frozen=True)
class QuestionResult:
    """Everything measured for one question; one JSON line in the results file."""

    question: Question
    retrieved: tuple[RankedSpan, ...]
    rank: int | None  # of the first retrieved span overlapping gold
    route: str
    mode: str
    answer: str
    citations: tuple[CitationCheck, ...]
    references_found: int | None = None  # usage questions: gold sites the answer lists or shows
    contains: tuple[tuple[str, bool], ...] = ()
    verdict: Verdict | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def citation_validity(self) -> float | None:
        return sum(c.verified for c in self.citations) / len(self.citations) if self.citations else None

    @property
    def citation_precision(self) -> float | None:
        return sum(c.gold for c in self.citations) / len(self.citations) if self.citations else None

    @property
    def reference_completeness(self) -> float | None:
        return None if self.references_found is None else self.references_found / len(self.question.gold)

    @property
    def contains_ok(self) -> bool | None:
        return all(found for _, found in self.contains) if self.contains else None

    def to_json(self) -> dict:
        return {"type": "question", **self.question.to_json(), "rank": self.rank,
                "retrieved": [asdict(r) for r in self.retrieved], "route": self.route, "mode": self.mode,
                "answer": self.answer, "citations": [asdict(c) for c in self.citations],
                "citation_validity": self.citation_validity, "citation_precision": self.citation_precision,
                "references_found": self.references_found, "reference_completeness": self.reference_completeness,
                "contains": [{"text": t, "found": f} for t, f in self.contains],
                "judge": asdict(self.verdict) if self.verdict else None, "error": self.error,
                "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, obj: dict) -> "QuestionResult":
        return cls(question_from_json(obj, obj.get("id", "")), tuple(RankedSpan(**r) for r in obj["retrieved"]),
                   obj["rank"], obj["route"], obj["mode"], obj["answer"], tuple(CitationCheck(**c) for c in obj["citations"]),
                   obj.get("references_found"), tuple((c["text"], c["found"]) for c in obj.get("contains", ())),
                   Verdict(**obj["judge"]) if obj.get("judge") else None, obj.get("error"), obj.get("seconds", 0.0))


@dataclass(frozen=True)
class Metrics:
    """Aggregates over a group of results (the whole run, or one tag)."""

    questions: int
    recall: dict[int, float]  # k -> recall@k for k = 1..depth
    mrr: float
    reference_completeness: float | None
    usage_questions: int
    citations: int
    citation_validity: float | None
    citation_precision: float | None
    answers_with_citations: int
    answer_contains: float | None
    contains_questions: int
    faithfulness: float | None
    correctness: float | None
    judged: int
    judge_unparsed: int
    judge_failed: int

    @classmethod
    def of(cls, results: Sequence[QuestionResult], depth: int = MRR_DEPTH) -> "Metrics":
        ranks = [r.rank for r in results]
        usage = [r for r in results if r.references_found is not None]
        cites = [c for r in results for c in r.citations]
        contains = [r.contains_ok for r in results if r.contains_ok is not None]
        verdicts = [r.verdict for r in results if r.verdict is not None]
        ok = [v for v in verdicts if v.status == "ok"]
        return cls(
            questions=len(results), recall={k: recall_at(ranks, k) or 0.0 for k in range(1, depth + 1)},
            mrr=mrr_at(ranks) or 0.0,
            reference_completeness=_share(sum(r.references_found for r in usage), sum(len(r.question.gold) for r in usage)),
            usage_questions=len(usage), citations=len(cites), citation_validity=_share(sum(c.verified for c in cites), len(cites)),
            citation_precision=_share(sum(c.gold for c in cites), len(cites)),
            answers_with_citations=sum(1 for r in results if r.citations),
            answer_contains=_share(sum(contains), len(contains)), contains_questions=len(contains),
            faithfulness=_mean([v.faithfulness for v in ok]), correctness=_mean([v.correctness for v in ok]),
            judged=len(ok), judge_unparsed=sum(v.status == "unparsed" for v in verdicts),
            judge_failed=sum(v.status == "failed" for v in verdicts))

    def to_json(self) -> dict:
        depth = max(self.recall)
        retrieval = {f"recall@{k}": _round(self.recall[k]) for k in sorted({*KS, depth}) if k in self.recall}
        retrieval["mrr@10"] = _round(self.mrr)
        return {"questions": self.questions, **retrieval, "retrieval": {**retrieval, "questions": self.questions},
                "answers": {"citation_validity": _round(self.citation_validity),
                            "citation_precision": _round(self.citation_precision), "citations": self.citations,
                            "answers_with_citations": self.answers_with_citations,
                            "reference_completeness": _round(self.reference_completeness),
                            "usage_questions": self.usage_questions, "answer_contains": _round(self.answer_contains),
                            "answer_contains_questions": self.contains_questions},
                "judge": {"faithfulness": _round(self.faithfulness), "correctness": _round(self.correctness),
                          "judged": self.judged, "unparsed": self.judge_unparsed, "failed": self.judge_failed}}


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _mean(values: Sequence[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class EvalRun:
    """One evaluation: its results and where they came from."""

    questions_file: str
    repo: str
    results: list[QuestionResult]
    depth: int = MRR_DEPTH
    mode: str = "extractive"  # how answers were made: extractive | llm
    model: str | None = None
    judge_model: str | None = None
    warnings: list[str] = field(default_factory=list)
    created: str = ""
    seconds: float = 0.0

    @property
    def metrics(self) -> Metrics:
        return Metrics.of(self.results, self.depth)

    def by_tag(self) -> dict[str, Metrics]:
        """Metrics per tag (a question's kind counts as a tag), tags in name order."""
        groups: dict[str, list[QuestionResult]] = {}
        for r in self.results:
            for tag in dict.fromkeys([r.question.kind, *r.question.tags]):
                groups.setdefault(tag, []).append(r)
        return {tag: Metrics.of(groups[tag], self.depth) for tag in sorted(groups)}

    def header_json(self) -> dict:
        return {"questions_file": self.questions_file, "repo": self.repo, "depth": self.depth, "mode": self.mode,
                "model": self.model, "judge_model": self.judge_model, "created": self.created,
                "seconds": round(self.seconds, 2), "warnings": self.warnings}

    def summary_json(self) -> dict:
        """The `codeqa eval --json` shape: metrics at the top level (and under retrieval/answers/judge),
        counts per kind, per-tag metrics, warnings."""
        kinds: dict[str, int] = {}
        for r in self.results:
            kinds[r.question.kind] = kinds.get(r.question.kind, 0) + 1
        return {**self.metrics.to_json(), "counts": {"questions": len(self.results), "by_kind": kinds},
                "by_tag": {tag: m.to_json() for tag, m in self.by_tag().items()}, **self.header_json()}


def save_results(path: Path, run: EvalRun) -> None:
    """A header line ({"type": "run", ... metrics}) then one line per question, so runs diff line by line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "run", **run.header_json(), "metrics": run.metrics.to_json()}] + [r.to_json() for r in run.results]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


def load_results(path: Path) -> EvalRun:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"Results file {path} does not exist (write one with `codeqa eval Q.jsonl --results FILE`).")
    header: dict = {}
    results = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if obj.get("type") == "run":
                header = obj
            else:
                results.append(QuestionResult.from_json(obj))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(f"{path}:{number}: not a codeqa eval result line ({exc}).") from None
    if not results:
        raise UsageError(f"Results file {path} holds no question results.")
    return EvalRun(header.get("questions_file", ""), header.get("repo", ""), results, header.get("depth", MRR_DEPTH),
                   header.get("mode", ""), header.get("model"), header.get("judge_model"), header.get("warnings", []),
                   header.get("created", ""), header.get("seconds", 0.0))


__all__ = ["KS", "MRR_DEPTH", "overlaps_gold", "first_hit_rank", "recall_at", "mrr_at", "reference_sites_found",
           "contains_checks", "Verdict", "RankedSpan", "CitationCheck", "QuestionResult", "Metrics", "EvalRun", "save_results",
           "load_results"]
