"""Evaluation reports: the markdown report with its plot, and the comparison of two runs.

    write_report(run, OUT.md)   summary table, the plot (OUT.png: recall@k curve, rank and score
                                distributions), per-tag breakdown, the worst questions with what
                                was retrieved instead
    compare_runs(a, b)          which questions got better or worse, and the metric deltas
    format_comparison(c)        that comparison as markdown
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..types import one_line
from .metrics import KS, EvalRun, Metrics, QuestionResult

WORST_SHOWN = 10
RETRIEVED_SHOWN = 3


# ---- the report ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    plot: Path | None


def write_report(run: EvalRun, path: Path) -> ReportFiles:
    """Write the markdown report to `path` and its plot beside it (`<stem>.png`), linked from it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    plot = plot_run(run, path.with_suffix(".png"))
    path.write_text(render_report(run, plot.name if plot else None), encoding="utf-8")
    return ReportFiles(path, plot)


def render_report(run: EvalRun, plot_name: str | None = None) -> str:
    m = run.metrics
    answers = f"LLM answers ({run.model})" if run.mode == "llm" else "extractive answers (no LLM)"
    judge = f"judge {run.judge_model}" if run.judge_model else "no LLM judge"
    out = [f"# codeqa eval: {Path(run.questions_file).name or 'questions'}", "",
           f"Repository `{run.repo}` · {m.questions} questions · {answers} · {judge} · {run.created} · {run.seconds:.0f}s", ""]
    if run.warnings:
        out += [f"> **Warning:** {w}" for w in run.warnings] + [""]
    out += ["## Summary", "", "| metric | value | over |", "|---|---|---|"]
    out += [f"| {name} | {value} | {over} |" for name, value, over in summary_rows(m)]
    out.append("")
    if plot_name:
        out += [f"![recall@k curve and score distributions]({plot_name})", ""]
    out += ["## By tag", "", "| tag | questions | recall@1 | recall@5 | recall@10 | MRR@10 | citation precision | "
            "reference completeness | judge correctness |", "|---|---|---|---|---|---|---|---|---|"]
    for tag, t in run.by_tag().items():
        out.append(f"| {_cell(tag)} | {t.questions} | {_f(t.recall.get(1))} | {_f(t.recall.get(5))} | {_f(t.recall.get(10))} | "
                   f"{_f(t.mrr)} | {_f(t.citation_precision)} | {_f(t.reference_completeness)} | {_f(t.correctness, 1)} |")
    out += ["", "## Worst questions", ""]
    worst = worst_questions(run.results)
    if not worst:
        out.append("Every question had a gold hit at rank 1, precise citations and a full judge score.")
    for n, r in enumerate(worst, 1):
        out += _describe_result(n, r)
    return "\n".join(out).rstrip() + "\n"


def summary_rows(m: Metrics) -> list[tuple[str, str, str]]:
    rows = [(f"recall@{k}", _f(m.recall.get(k)), f"{m.questions} questions") for k in KS if k in m.recall]
    depth = max(m.recall)
    if depth not in KS:
        rows.append((f"recall@{depth}", _f(m.recall[depth]), f"{m.questions} questions"))
    rows.append(("MRR@10", _f(m.mrr), f"{m.questions} questions"))
    rows.append(("reference completeness", _f(m.reference_completeness), f"{m.usage_questions} usage questions"))
    rows.append(("citation validity", _f(m.citation_validity), f"{m.citations} citations in {m.answers_with_citations} answers"))
    rows.append(("citation precision", _f(m.citation_precision), f"{m.citations} citations"))
    rows.append(("answer contains", _f(m.answer_contains), f"{m.contains_questions} questions"))
    judged = f"{m.judged} judged" + (f", {m.judge_unparsed} unparsed" if m.judge_unparsed else "") + \
        (f", {m.judge_failed} failed" if m.judge_failed else "")
    rows.append(("judge faithfulness (1-5)", _f(m.faithfulness, 2), judged))
    rows.append(("judge correctness (1-5)", _f(m.correctness, 2), judged))
    return rows


def worst_questions(results: Sequence[QuestionResult], limit: int = WORST_SHOWN) -> list[QuestionResult]:
    """Misses first (then late hits), then imprecise citations, then low judge scores; perfect ones left out."""
    def badness(r: QuestionResult) -> tuple:
        correctness = r.verdict.correctness if r.verdict and r.verdict.correctness else 5
        return (-(r.rank or 10_000), r.citation_precision if r.citation_precision is not None else 1.0,
                r.reference_completeness if r.reference_completeness is not None else 1.0, correctness)

    flawed = [r for r in results if badness(r) != (-1, 1.0, 1.0, 5)]
    return sorted(flawed, key=badness)[:limit]


def _describe_result(n: int, r: QuestionResult) -> list[str]:
    q = r.question
    rank = f"first gold hit at rank {r.rank}" if r.rank else f"no gold hit in the top {len(r.retrieved)}"
    lines = [f"### {n}. {one_line(q.question, 160)}", "",
             f"`{q.id}` · {q.kind}" + (f" · tags {', '.join(q.tags)}" if q.tags else "") + f" · route {r.route} · {rank}", "",
             "Gold: " + ", ".join(f"`{g.label}`" for g in q.gold[:8]) + (f" and {len(q.gold) - 8} more" if len(q.gold) > 8 else "")]
    if r.citations:
        lines.append(f"Citations: {len(r.citations)}, {sum(c.verified for c in r.citations)} verified, "
                     f"{sum(c.gold for c in r.citations)} on gold")
    if r.reference_completeness is not None:
        lines.append(f"Reference sites found: {r.references_found} of {len(q.gold)}")
    missing = [t for t, found in r.contains if not found]
    if missing:
        lines.append("Answer lacks: " + ", ".join(f"`{t}`" for t in missing))
    if r.verdict:
        v = r.verdict
        lines.append(f"Judge: faithfulness {v.faithfulness}, correctness {v.correctness} — {v.correctness_reason or v.faithfulness_reason}"
                     if v.status == "ok" else f"Judge: {v.status} ({one_line(v.detail, 120)})")
    if r.error:
        lines.append(f"Error: {one_line(r.error, 160)}")
    lines = [line + "  " if i > 3 else line for i, line in enumerate(lines)]  # markdown line breaks
    instead = [h for h in r.retrieved if not h.gold][:RETRIEVED_SHOWN]
    if instead:
        lines += ["", "Retrieved instead:", ""]
        lines += [f"{i}. `{h.label}`" + (f" {h.symbol}" if h.symbol else "") + f" (score {h.score:.3f})"
                  for i, h in enumerate(instead, 1)]
    return lines + [""]


def plot_run(run: EvalRun, path: Path) -> Path | None:
    """The PNG beside the report: recall@k for k = 1..depth (all questions and per kind), where the first
    gold hit ranked, and the judge's scores (or, without a judge, per-answer citation precision)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not run.results:
        return None
    m = run.metrics
    ks = sorted(m.recall)
    kinds = sorted({r.question.kind for r in run.results})
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    ax.plot(ks, [m.recall[k] for k in ks], marker="o", linewidth=2.5, label=f"all ({m.questions})")
    if len(kinds) > 1:
        for kind in kinds:
            group = Metrics.of([r for r in run.results if r.question.kind == kind], run.depth)
            ax.plot(ks, [group.recall[k] for k in ks], marker=".", linestyle="--", label=f"{kind} ({group.questions})")
    ax.set(title="Retrieval recall@k", xlabel="k (top results of codeqa search)", ylabel="recall", ylim=(0, 1.02), xticks=ks)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")

    ax = axes[1]
    counts = [sum(1 for r in run.results if r.rank == k) for k in ks] + [sum(1 for r in run.results if r.rank is None)]
    labels = [str(k) for k in ks] + ["miss"]
    ax.bar(labels, counts, color=["tab:blue"] * len(ks) + ["tab:red"])
    ax.set(title="Rank of the first gold hit", xlabel="rank", ylabel="questions")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))

    ax = axes[2]
    verdicts = [r.verdict for r in run.results if r.verdict and r.verdict.status == "ok"]
    if verdicts:
        scores = range(1, 6)
        width = 0.38
        ax.bar([s - width / 2 for s in scores], [sum(v.faithfulness == s for v in verdicts) for s in scores], width,
               label="faithfulness")
        ax.bar([s + width / 2 for s in scores], [sum(v.correctness == s for v in verdicts) for s in scores], width,
               label="correctness")
        ax.set(title=f"Judge scores ({run.judge_model}, {len(verdicts)} answers)", xlabel="score", ylabel="answers",
               xticks=list(scores))
        ax.legend(fontsize=8)
    else:
        precision = [r.citation_precision for r in run.results if r.citation_precision is not None]
        ax.hist(precision, bins=[i / 10 for i in range(11)], color="tab:green", edgecolor="white")
        ax.set(title=f"Citation precision per answer (n={len(precision)})",
               xlabel="share of citations on gold", ylabel="answers")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(f"codeqa eval · {Path(run.repo).name} · {m.questions} questions", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


# ---- comparing two runs -------------------------------------------------------------------------------

@dataclass(frozen=True)
class QuestionChange:
    """How one question moved from run A to run B: (what, before → after, +1 better / -1 worse) per measure."""

    key: str
    question: str
    changes: tuple[tuple[str, str, int], ...]

    @property
    def direction(self) -> str:
        signs = {sign for _, _, sign in self.changes}
        return "better" if signs == {1} else "worse" if signs == {-1} else "mixed"


@dataclass
class Comparison:
    a: EvalRun
    b: EvalRun
    changes: list[QuestionChange] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def of(self, direction: str) -> list[QuestionChange]:
        return [c for c in self.changes if c.direction == direction]

    def metric_deltas(self) -> list[tuple[str, float | None, float | None]]:
        a, b = self.a.metrics, self.b.metrics
        rows = [(f"recall@{k}", a.recall.get(k), b.recall.get(k)) for k in KS]
        return rows + [("MRR@10", a.mrr, b.mrr), ("reference completeness", a.reference_completeness, b.reference_completeness),
                       ("citation validity", a.citation_validity, b.citation_validity),
                       ("citation precision", a.citation_precision, b.citation_precision),
                       ("answer contains", a.answer_contains, b.answer_contains),
                       ("judge faithfulness", a.faithfulness, b.faithfulness), ("judge correctness", a.correctness, b.correctness)]

    def to_json(self) -> dict:
        return {"a": {"questions": self.a.metrics.questions, "repo": self.a.repo, "created": self.a.created},
                "b": {"questions": self.b.metrics.questions, "repo": self.b.repo, "created": self.b.created},
                "metrics": {name: {"a": _r(x), "b": _r(y), "delta": _r(y - x) if x is not None and y is not None else None}
                            for name, x, y in self.metric_deltas()},
                **{d: [{"id": c.key, "question": c.question, "changes": [{"measure": what, "change": text, "sign": sign}
                                                                         for what, text, sign in c.changes]}
                       for c in self.of(d)] for d in ("better", "worse", "mixed")},
                "only_in_a": self.only_a, "only_in_b": self.only_b}


def compare_runs(a: EvalRun, b: EvalRun) -> Comparison:
    """Questions are matched by id (generated and hand-written sets keep ids stable)."""
    in_a = {r.question.id: r for r in a.results}
    in_b = {r.question.id: r for r in b.results}
    comparison = Comparison(a, b, only_a=[k for k in in_a if k not in in_b], only_b=[k for k in in_b if k not in in_a])
    for key, before in in_a.items():
        after = in_b.get(key)
        if after is None:
            continue
        changes = _question_changes(before, after)
        if changes:
            comparison.changes.append(QuestionChange(key, after.question.question, tuple(changes)))
    return comparison


def _question_changes(x: QuestionResult, y: QuestionResult) -> list[tuple[str, str, int]]:
    out = []
    rr_x, rr_y = (1 / x.rank if x.rank else 0.0), (1 / y.rank if y.rank else 0.0)
    if rr_x != rr_y:
        out.append(("rank", f"{x.rank or 'miss'} → {y.rank or 'miss'}", 1 if rr_y > rr_x else -1))
    pairs = [("citation precision", x.citation_precision, y.citation_precision),
             ("citation validity", x.citation_validity, y.citation_validity),
             ("reference completeness", x.reference_completeness, y.reference_completeness),
             ("answer contains", x.contains_ok, y.contains_ok)]
    vx, vy = x.verdict, y.verdict
    if vx and vy and vx.status == vy.status == "ok":
        pairs += [("judge correctness", vx.correctness, vy.correctness), ("judge faithfulness", vx.faithfulness, vy.faithfulness)]
    for what, before, after in pairs:
        if before is not None and after is not None and abs(float(after) - float(before)) > 1e-9:
            out.append((what, f"{_f(float(before))} → {_f(float(after))}", 1 if after > before else -1))
    return out


def format_comparison(c: Comparison, limit: int = 20) -> str:
    out = ["# codeqa eval compare", "", f"A: `{c.a.questions_file or '?'}` on `{c.a.repo}` ({c.a.created}), "
           f"{c.a.metrics.questions} questions  ", f"B: `{c.b.questions_file or '?'}` on `{c.b.repo}` ({c.b.created}), "
           f"{c.b.metrics.questions} questions", "", "| metric | A | B | Δ |", "|---|---|---|---|"]
    for name, x, y in c.metric_deltas():
        delta = f"{y - x:+.3f}" if x is not None and y is not None else "—"
        out.append(f"| {name} | {_f(x)} | {_f(y)} | {delta} |")
    for direction, title in (("better", "Better in B"), ("worse", "Worse in B"), ("mixed", "Mixed")):
        items = c.of(direction)
        out += ["", f"## {title} ({len(items)})", ""]
        for ch in items[:limit]:
            what = "; ".join(f"{name} {text}" for name, text, _ in ch.changes)
            out.append(f"- `{ch.key}` {one_line(ch.question, 100)} — {what}")
        if len(items) > limit:
            out.append(f"- … and {len(items) - limit} more")
    if c.only_a or c.only_b:
        out += ["", f"Only in A: {len(c.only_a)} questions; only in B: {len(c.only_b)} questions."]
    return "\n".join(out) + "\n"


def _f(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


__all__ = ["ReportFiles", "write_report", "render_report", "summary_rows", "worst_questions", "plot_run", "QuestionChange",
           "Comparison", "compare_runs", "format_comparison"]
