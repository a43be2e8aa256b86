"""`codeqa eval`: score a question set, generate one, or compare two runs. The library part is codeqa.eval,
imported when a command runs (so `codeqa --help` loads no model code)."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import Settings
from ..errors import UsageError
from .terminal import safe_markup, terminal_safe


def cmd_eval(args, settings: Settings) -> int:
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
    from ..eval.evaluate import run_evaluation
    from ..eval.metrics import save_results
    from ..eval.questions import load_questions
    from ..eval.report import summary_rows, write_report

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
        err.print(f"[yellow]warning:[/] {safe_markup(warning)}", highlight=False)  # may quote a server's error
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

        table = Table(title=f"codeqa eval: {len(run.results)} questions on {safe_markup(str(run.repo))} ({run.mode} answers)")
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


def _first_error(run) -> str:
    return next((r.error for r in run.results if r.error), "")


def _generate_cli(args, settings: Settings) -> int:
    from ..eval.questions import KINDS, generate_questions

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
    from ..eval.metrics import load_results
    from ..eval.report import compare_runs, format_comparison

    comparison = compare_runs(load_results(a), load_results(b))
    text = format_comparison(comparison)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text, encoding="utf-8")
    print(json.dumps(comparison.to_json(), indent=2) if args.json else terminal_safe(text), end="" if not args.json else "\n")
    return 0
