"""Evaluate stage: score retrieval and answers on a question set, judge answers with an LLM, compare runs.

    questions (questions.py) -> for each question:
        Retriever.search(question, top 10)  -> rank of the first retrieved span that overlaps gold
        Answerer (the `ask` path)           -> answer text, verified citations, reference list
        AnswerJudge (judge.py, LLM configured) -> faithfulness and correctness, 1-5 with a reason
    -> QuestionResult per question (saved as JSON lines) -> Metrics -> report (report.py)

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
The library never prints; `eval_cli` is the shell `codeqa eval` calls.
"""

from __future__ import annotations

import json
import re
import sysconfig
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from .adapter import TRAINING_PROJECTS
from .answer import Answerer
from .chat import ChatModel
from .config import Settings
from .errors import UsageError
from .judge import AnswerJudge, Verdict
from .questions import Question, Span, docstring_leaks, question_from_json
from .retrieve import Retriever
from .types import Answer

KS = (1, 5, 10)
MRR_DEPTH = 10
Progress = Callable[[int, int], None]  # (questions done, total)


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
    def is_usage(self) -> bool:
        return self.question.kind == "usage" or "usage" in self.question.tags

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
    standard library (codeqa.adapter.TRAINING_PROJECTS); None otherwise."""
    repo = Path(repo).resolve()
    trained = sorted(project_names(repo) & {_norm_project(n) for n in TRAINING_PROJECTS})
    if trained:
        return (f"{repo} looks like {trained[0]}, one of the projects the embedding adapter was trained on "
                "(codeqa.adapter.TRAINING_PROJECTS): its scores flatter codeqa; evaluate on another project.")
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


# ---- CLI shell (called by cli.cmd_eval; the only printing in this module) ----------------------------

def eval_cli(args, settings: Settings) -> int:
    """`codeqa eval Q.jsonl`, `codeqa eval generate`, `codeqa eval compare A B`."""
    action, rest = args.args[0], args.args[1:]
    if action == "generate":
        if rest:
            raise UsageError("`codeqa eval generate` takes no positional arguments: --repo PATH --out Q.jsonl.")
        return _generate_cli(args, settings)
    if action == "compare":
        if len(rest) != 2:
            raise UsageError("`codeqa eval compare` takes two results files: codeqa eval compare A.jsonl B.jsonl.")
        return _compare_cli(args, Path(rest[0]), Path(rest[1]))
    if rest:
        raise UsageError("Give one question file: codeqa eval Q.jsonl --repo PATH (or `generate`, `compare A B`).")
    return _run_cli(args, settings, Path(action))


def _run_cli(args, settings: Settings, questions_file: Path) -> int:
    from .questions import load_questions
    from .report import summary_rows, write_report

    questions = load_questions(questions_file)
    repo = args.repo
    if repo is None:
        recorded = sorted({q.repo for q in questions if q.repo})
        if len(recorded) != 1:
            raise UsageError(f"{questions_file} does not name one repository; pass --repo PATH.")
        repo = Path(recorded[0])
    if not Path(repo).is_dir():
        raise UsageError(f"Repository {repo} does not exist or is not a directory; pass the folder of a code repository.")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    with Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task("eval", total=len(questions))
        run = run_evaluation(questions, Path(repo), settings, questions_file=str(questions_file), no_llm=args.no_llm,
                             depth=args.top_k, progress=lambda done, total: bar.update(task, completed=done))
    failed = sum(1 for r in run.results if r.error)
    if failed:
        run.warnings.append(f"The LLM failed on {failed} of {len(run.results)} answers (first: {_first_error(run)}); "
                            "those answers are extractive or cut off.")
    for warning in run.warnings:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False)
    results_file = args.results or (args.report.with_name(args.report.stem + ".results.jsonl") if args.report else None)
    files = {}
    if results_file:
        save_results(results_file, run)
        files["results_file"] = str(results_file)
    if args.report:
        written = write_report(run, args.report)
        files.update(report=str(written.markdown), plot=str(written.plot) if written.plot else None)
    if args.json:
        print(json.dumps({**run.summary_json(), **files}, indent=2))
    else:
        from rich.table import Table

        table = Table(title=f"codeqa eval: {len(run.results)} questions on {run.repo} ({run.mode} answers)")
        for column in ("metric", "value", "over"):
            table.add_column(column)
        for row in summary_rows(run.metrics):
            table.add_row(*row)
        Console().print(table)
        for name, path in files.items():
            if path:
                print(f"{name.replace('_', ' ')}: {path}")
        if not results_file:
            print("(pass --results FILE or --report OUT.md to keep per-question results for `codeqa eval compare`)")
    return 1 if failed and failed == len(run.results) else 0


def _first_error(run: EvalRun) -> str:
    return next((r.error for r in run.results if r.error), "")


def _generate_cli(args, settings: Settings) -> int:
    from .questions import KINDS, generate_questions

    if args.repo is None or args.out is None:
        raise UsageError("`codeqa eval generate` needs --repo PATH and --out Q.jsonl.")
    kinds = [k.strip() for k in (args.kinds or ",".join(KINDS)).split(",") if k.strip()]
    made = generate_questions(args.repo, args.out, settings, kinds, args.count, args.seed, args.stripped_dir)
    report = args.out.with_name(args.out.stem + "-report.md")
    steps = ([f"codeqa index {made.eval_repo}"] if made.stripped_copy else []) + \
        [f"codeqa eval {args.out} --repo {made.eval_repo} --report {report}"]
    if args.json:
        print(json.dumps({"out": str(made.out), "questions": len(made.questions), "by_kind": made.by_kind,
                          "candidates": made.candidates, "eval_repo": str(made.eval_repo),
                          "stripped_copy": str(made.stripped_copy) if made.stripped_copy else None, "next": steps}, indent=2))
        return 0
    kinds_text = ", ".join(f"{n} {k}" for k, n in made.by_kind.items())
    print(f"Wrote {len(made.questions)} questions ({kinds_text}) to {made.out}")
    if made.stripped_copy:
        print(f"Stripped copy (function docstrings removed, line numbers unchanged): {made.stripped_copy}\n"
              "Docstring questions must be scored on that copy, or the index would hold the answers.")
    print("Next:\n" + "\n".join(f"  {step}" for step in steps))
    return 0


def _compare_cli(args, a: Path, b: Path) -> int:
    from .report import compare_runs, format_comparison

    comparison = compare_runs(load_results(a), load_results(b))
    text = format_comparison(comparison)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text, encoding="utf-8")
    print(json.dumps(comparison.to_json(), indent=2) if args.json else text, end="" if not args.json else "\n")
    return 0


__all__ = ["KS", "overlaps_gold", "first_hit_rank", "recall_at", "mrr_at", "reference_sites_found", "contains_checks",
           "RankedSpan", "CitationCheck", "QuestionResult",
           "Metrics", "EvalRun", "save_results", "load_results", "evaluate_question", "run_evaluation",
           "evaluation_warnings", "training_data_overlap", "project_names", "eval_cli"]
