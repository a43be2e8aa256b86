"""Run an evaluation: score retrieval and answers on a question set, with an LLM judge when one is configured.

    questions (questions.py) -> for each question:
        Retriever.search(question, top 10)  -> rank of the first retrieved span that overlaps gold
        Answerer (the `ask` path)           -> answer text, verified citations, reference list
        AnswerJudge (judge.py, LLM configured) -> faithfulness and correctness, 1-5 with a reason
    -> QuestionResult per question (metrics.py; saved as JSON lines) -> Metrics -> report (report.py)

Also the warnings that make scores misleading (answers left in the index, a project the embedding
adapter was trained on, gold files missing from the index). The shell is `codeqa eval` (cli/evaluate.py).
"""

from __future__ import annotations

import re
import sysconfig
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from ..answer import Answerer
from ..llm import ChatModel
from ..config import Settings
from ..embed.adapter import TRAINING_PROJECTS
from ..errors import UsageError
from ..query.retrieve import Retriever
from .judge import AnswerJudge
from .metrics import (MRR_DEPTH, CitationCheck, EvalRun, QuestionResult, RankedSpan, contains_checks, first_hit_rank,
                      overlaps_gold, reference_sites_found)
from .questions import Question, docstring_leaks

Progress = Callable[[int, int], None]  # (questions done, total)


# ---- running an evaluation ------------------------------------------------------------------------------

def evaluate_question(q: Question, retriever: Retriever, answerer: Answerer, judge: AnswerJudge | None = None,
                      depth: int = MRR_DEPTH, no_llm: bool = False) -> QuestionResult:
    started = time.perf_counter()
    hits = retriever.search(q.question, top_k=depth)
    retrieved = tuple(RankedSpan(h.path, h.start_line, h.end_line, h.symbol, round(h.score, 6),
                                 overlaps_gold(h.path, h.start_line, h.end_line, q.gold)) for h in hits)
    rank = first_hit_rank([(h.path, h.start_line, h.end_line) for h in hits], q.gold)
    answer = answerer.stream(q.question, no_llm=no_llm).result()
    citations = tuple(CitationCheck(c.path, c.start_line, c.end_line, c.verified,
                                    overlaps_gold(c.path, c.start_line, c.end_line, q.gold), c.reason)
                      for c in answer.citations)
    usage = q.kind == "usage" or "usage" in q.tags
    verdict = judge.judge(q.question, answer, q.gold, retriever) if judge is not None else None
    return QuestionResult(q, retrieved, rank, answer.route, answer.mode, answer.answer, citations,
                          reference_sites_found(q.gold, answer) if usage else None,
                          tuple(contains_checks(answer.answer, q.answer_contains)), verdict, answer.error,
                          time.perf_counter() - started)


def run_evaluation(questions: Sequence[Question], repo: Path, settings: Settings, *, questions_file: str = "",
                   no_llm: bool = False, depth: int = MRR_DEPTH, progress: Progress | None = None, embedder=None,
                   chat: ChatModel | None = None, judge: AnswerJudge | None = None) -> EvalRun:
    """Score `questions` against the index of `repo`. Answers use the LLM when one is configured (or
    `chat` is given) unless `no_llm`; the judge runs when an LLM is configured (or `judge` is given)
    unless `no_llm`."""
    if depth < MRR_DEPTH:
        raise UsageError(f"--top-k must be at least {MRR_DEPTH}: recall@10 and MRR@10 need ten ranked results.")
    repo = Path(repo).resolve()
    started = time.perf_counter()
    with Retriever.open(repo, settings, embedder) as retriever:
        warnings = evaluation_warnings(questions, repo, retriever.indexed_paths)
        answerer = Answerer(retriever, settings, chat)
        if judge is None and not no_llm and settings.llm_configured:
            judge = AnswerJudge.from_settings(settings)
        judge = None if no_llm else judge
        results = []
        for done, q in enumerate(questions, 1):
            results.append(evaluate_question(q, retriever, answerer, judge, depth, no_llm))
            if progress:
                progress(done, len(questions))
    llm_used = any(r.mode == "llm" for r in results)
    return EvalRun(questions_file, str(repo), results, depth, "llm" if llm_used else "extractive",
                   answerer.chat.model if llm_used and answerer.chat else None, judge.model if judge else None, warnings,
                   datetime.now(timezone.utc).isoformat(timespec="seconds"), time.perf_counter() - started)


def evaluation_warnings(questions: Sequence[Question], repo: Path, indexed_paths: frozenset[str] | set[str]) -> list[str]:
    """What makes the scores misleading: answers left in the index, a repository the embedding adapter
    was trained on, gold files the index does not hold, a set generated for another repository."""
    warnings = []
    leaks = docstring_leaks(questions, repo)
    if leaks:
        asked = sum(1 for q in questions if q.kind == "docstring")
        warnings.append(f"{len(leaks)} of {asked} docstring questions are answered verbatim by docstrings still in "
                        f"{repo} (first: {leaks[0].gold[0].label}): the index holds the answers. Index and evaluate the "
                        "stripped copy that `codeqa eval generate` wrote instead (the questions' \"repo\").")
    overlap = training_data_overlap(repo)
    if overlap:
        warnings.append(overlap)
    missing = [q for q in questions if not any(g.path in indexed_paths for g in q.gold)]
    if missing:
        warnings.append(f"{len(missing)} of {len(questions)} questions have no gold file in the index of {repo} "
                        f"(first: {missing[0].gold[0].path}); is this the repository the questions were written for?")
    recorded = sorted({q.repo for q in questions if q.repo} - {str(repo)})
    if recorded:
        warnings.append(f"The questions were generated for {recorded[0]}, not {repo}.")
    return warnings


def training_data_overlap(repo: Path) -> str | None:
    """A warning when `repo` is one of the projects the embedding adapter was trained on, or the
    standard library (codeqa.embed.adapter.TRAINING_PROJECTS); None otherwise."""
    repo = Path(repo).resolve()
    trained = sorted(project_names(repo) & {_norm_project(n) for n in TRAINING_PROJECTS})
    if trained:
        return (f"{repo} looks like {trained[0]}, one of the projects the embedding adapter was trained on "
                "(codeqa.embed.adapter.TRAINING_PROJECTS): its scores flatter codeqa; evaluate on another project.")
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    copy_of_stdlib = all((repo / name).is_file() for name in ("os.py", "functools.py", "collections/__init__.py"))
    cpython = all((repo / "Lib" / name).is_file() for name in ("os.py", "functools.py"))
    if repo == stdlib or stdlib in repo.parents or copy_of_stdlib or cpython:
        return (f"{repo} looks like the Python standard library, which the embedding adapter was trained on: "
                "its scores flatter codeqa; evaluate on another project.")
    return None


def project_names(repo: Path) -> set[str]:
    """Names the project goes by: its folder name (version and `-stripped` dropped), the name in
    pyproject.toml / setup.cfg / setup.py, and its top-level packages (also under src/ and lib/)."""
    names = {re.sub(r"-stripped$", "", repo.name), re.sub(r"[-_]v?\d[\w.]*$", "", re.sub(r"-stripped$", "", repo.name))}
    for meta, pattern in (("pyproject.toml", r'(?m)^\s*name\s*=\s*["\']([^"\']+)'), ("setup.cfg", r"(?m)^\s*name\s*=\s*(\S+)"),
                          ("setup.py", r'\bname\s*=\s*["\']([^"\']+)')):
        try:
            m = re.search(pattern, (repo / meta).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if m:
            names.add(m.group(1))
    for base in (repo, repo / "src", repo / "lib"):
        if base.is_dir():
            names.update(p.parent.name for p in base.glob("*/__init__.py"))
    return {_norm_project(n) for n in names if n}


def _norm_project(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


__all__ = ["evaluate_question", "run_evaluation", "evaluation_warnings", "training_data_overlap", "project_names"]
