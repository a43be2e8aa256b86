"""Answers from a real model on real developer questions (issue 41): citations, grounding, prompt fit, time.

    python bench/llm_answers.py --project streamlink-8.6.3 --project conan-2.34.0 --per-project 20 \
        --out /tmp/llm-0.5b.jsonl                      # the LLM configured by OPENAI_BASE_URL / CODEQA_MODEL
    python bench/llm_answers.py ... --no-llm           # the extractive floor, same questions and metrics
    python bench/llm_answers.py --project streamlink-8.6.3 --per-project 10 --budget 1500 --budget 6000 \
        --out /tmp/budget.jsonl                        # the evidence budget curve: each question at each budget
                                                       # in turn (CODEQA_CONTEXT_TOKENS), so load hits all alike

Questions: SWE-QA-Bench's development set (../shared/data/swe-qa/<project>.jsonl), the first N of each
project in file order. Projects are unpacked PyPI sdists under $CODEQA_BENCH_DATA (default /tmp/data),
indexed with `codeqa index` into $CODEQA_BENCH_INDEX_ROOT (see bench/qa_harness.py).

Gold, derived from each expert answer: the repository files it names (a path, or a module's dotted
name), and the definitions it names (identifiers that look like code: CamelCase, snake_case, dotted,
or in backticks) that the index defines; the files defining those (at most two definitions, tests
left out) join the gold files.

Per answer:
- cited: at least one verified citation written by the model (attributed ones do not count);
- grounded: at least one verified citation, cited or attributed;
- precision: of the files the verified citations name, the share that are gold files;
- coverage: of the gold files and symbols, the share the answer cites (a file) or names (a symbol);
- prompt tokens against the window (an overflow is a prompt over it, or an HTTP 400 from the server);
- time to first token and in all; whether the answer was cut (length, repeating, error).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qa_harness import DATA, INDEX_ROOT, ensure_index  # noqa: E402

SWE_QA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe-qa"
_CODE_NAME = re.compile(r"`([A-Za-z_][\w.]*)`|\b([A-Za-z_]+(?:_[A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z_]\w*\.[a-z_]\w*)\b")
_PATH = re.compile(r"[\w./-]+\.(?:py|pyi|toml|cfg|rst|md)\b")


def open_project(project: str, index: bool = True):
    """(repo, name, SWE-QA questions, Settings) of an unpacked sdist like `conan-2.34.0`, indexed first."""
    from codeqa.config import Settings

    repo, index_dir = DATA / project, INDEX_ROOT / project
    if index:
        ensure_index(repo, index_dir, log=lambda m: print(m, file=sys.stderr))
    name = project.rsplit("-", 1)[0]
    questions = [json.loads(line) for line in (SWE_QA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return repo, name, questions, Settings.load(index_dir=index_dir)


def named_definitions(name: str, retriever) -> list:
    """The definitions called exactly `name`, tests left out (what an expert answer's name is taken to mean).
    A file's module symbol is none: the gold stays what it was before files were symbols (issue 67), as
    the file is gold already where the answer names the module."""
    from codeqa.types import is_file_module

    return [s for s in retriever.graph.find_symbols(name) if s.name == name and not is_file_module(s)
            and "test" not in s.path.split("/")[0] and "/tests/" not in "/" + s.path]


def gold_for(answer: str, retriever) -> tuple[set[str], set[str]]:
    """(gold files, gold symbol names) of an expert answer."""
    indexed = retriever.indexed_paths
    files: set[str] = set()
    for m in _PATH.finditer(answer):
        name = m.group(0).lstrip("./")
        files |= {p for p in indexed if p == name or p.endswith("/" + name)}
    symbols: set[str] = set()
    for m in _CODE_NAME.finditer(answer):
        name = (m.group(1) or m.group(2)).rstrip(".")
        last = name.rsplit(".", 1)[-1]
        if len(last) < 3:
            continue
        module = name.replace(".", "/")
        files |= {p for p in indexed if p.endswith(module + ".py") or p.endswith(module + "/__init__.py")}
        found = named_definitions(last, retriever)
        if found:
            symbols.add(last)
            if len(found) <= 2:
                files |= {s.path for s in found}
    return files, symbols


def score(answer, gold_files: set[str], gold_symbols: set[str]) -> dict:
    verified = [c for c in answer.citations if c.verified]
    cited = [c for c in verified if not c.attributed]
    cited_files = {c.path for c in cited}
    named = {s for s in gold_symbols if re.search(rf"\b{re.escape(s)}\b", answer.answer)}
    covered = len(gold_files & {c.path for c in verified}) + len(named)
    total_gold = len(gold_files) + len(gold_symbols)
    prompt = answer.prompt
    overflow = bool(answer.error and ("context size" in answer.error or "HTTP 400" in answer.error))
    if prompt is not None and prompt.tokens + 0 > prompt.window:
        overflow = True
    return {
        "cited": bool(cited), "grounded": bool(verified), "mode": answer.mode, "cut": answer.cut,
        "precision": (len(cited_files & gold_files) / len(cited_files)) if cited_files and gold_files else None,
        "coverage": covered / total_gold if total_gold else None,
        "prompt_tokens": prompt.tokens if prompt else None, "window": prompt.window if prompt else None,
        "counted": prompt.counted if prompt else None, "left_out": list(prompt.left_out) if prompt else [],
        "overflow": overflow, "error": answer.error,
        "first_token_s": answer.first_token_seconds, "seconds": answer.seconds,
        "gold_files": sorted(gold_files), "gold_symbols": sorted(gold_symbols),
        "citations": [f"{c.path}:L{c.start_line}-L{c.end_line}{' (attributed)' if c.attributed else ''}"
                      for c in verified],
        "unknown_names": list(answer.unknown_names),
    }


def rescore(path: Path, projects: list[str]) -> dict:
    """The rows of `path` with gold, precision and coverage derived again (their answers and verified
    citations as recorded), written back, and their summary."""
    from codeqa.query.retrieve import Retriever

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for project in projects:
        repo, name, questions, settings = open_project(project, index=False)
        with Retriever.open(repo, settings, need_model=False) as retriever:
            for row in rows:
                if row["project"] != name:
                    continue
                gold_files, gold_symbols = gold_for(questions[row["number"]]["answer"], retriever)
                verified = [(c.split(":L")[0], c.endswith("(attributed)")) for c in row["citations"]]
                cited_files = {p for p, attributed in verified if not attributed}
                named = {s for s in gold_symbols if re.search(rf"\b{re.escape(s)}\b", row["answer"])}
                total = len(gold_files) + len(gold_symbols)
                row.update(gold_files=sorted(gold_files), gold_symbols=sorted(gold_symbols),
                           precision=(len(cited_files & gold_files) / len(cited_files)) if cited_files and gold_files else None,
                           coverage=(len(gold_files & {p for p, _ in verified}) + len(named)) / total if total else None)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return summarize(rows)


def summarize(rows: list[dict]) -> dict:
    def mean(key):
        values = [r[key] for r in rows if r.get(key) is not None]
        return round(sum(values) / len(values), 3) if values else None

    def median(key):
        values = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.median(values), 1) if values else None

    return {"answers": len(rows), "cited_share": mean("cited"), "grounded_share": mean("grounded"),
            "precision": mean("precision"), "coverage": mean("coverage"),
            "overflows": sum(1 for r in rows if r["overflow"]), "llm_errors": sum(1 for r in rows if r["error"]),
            "cut": sum(1 for r in rows if r["cut"]), "prompt_tokens_median": median("prompt_tokens"),
            "prompt_tokens_max": max((r["prompt_tokens"] or 0) for r in rows) if rows else None,
            "window": next((r["window"] for r in rows if r["window"]), None),
            "first_token_s_median": median("first_token_s"), "seconds_median": median("seconds"),
            # the estimate against the server's count: it must never undercount (ratio >= 1)
            "estimate_ratio_min": min((r["estimate_tokens"] / r["prompt_tokens"] for r in rows
                                       if r.get("estimate_tokens") and r.get("prompt_tokens")), default=None)}


def main(argv=None) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", required=True, help="unpacked sdist folder name under the data dir")
    parser.add_argument("--per-project", type=int, default=20)
    parser.add_argument("--skip", type=int, default=0, help="start at this question of each project")
    parser.add_argument("--no-llm", action="store_true")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, one per answer (appended)")
    parser.add_argument("--budget", type=int, action="append",
                        help="evidence budget in tokens (CODEQA_CONTEXT_TOKENS); repeat for a curve (default: the setting)")
    parser.add_argument("--rescore", action="store_true",
                        help="score the answers already in --out again with today's gold (no model is asked)")
    args = parser.parse_args(argv)
    if args.rescore:
        print(json.dumps(rescore(args.out, args.project), indent=2))
        return 0

    from codeqa.answer import Answerer
    from codeqa.answer.prompt import estimate_tokens
    from codeqa.query.retrieve import Retriever

    rows = []
    for project in args.project:
        repo, name, questions, base = open_project(project)
        budgets = args.budget or [base.context_tokens]
        with Retriever.open(repo, base) as retriever:
            for number, q in enumerate(questions[args.skip:args.skip + args.per_project], args.skip):
                gold_files, gold_symbols = gold_for(q["answer"], retriever)
                for budget in budgets:
                    settings = base.with_(context_tokens=budget)
                    started = time.perf_counter()
                    stream = Answerer(retriever, settings).stream(q["question"], no_llm=args.no_llm)
                    estimate = estimate_tokens(stream.fitted.messages) if stream.fitted is not None else None
                    answer = stream.result()
                    row = {"project": name, "number": number, "question": q["question"], "budget": budget,
                           "model": answer.model, **score(answer, gold_files, gold_symbols), "estimate_tokens": estimate,
                           "wall_s": round(time.perf_counter() - started, 1), "answer": answer.answer}
                    rows.append(row)
                    with args.out.open("a") as out:
                        out.write(json.dumps(row) + "\n")
                    print(f"{name}#{number}@{budget}: cited={row['cited']} grounded={row['grounded']} "
                          f"prompt={row['prompt_tokens']} ttft={row['first_token_s'] and round(row['first_token_s'], 1)} "
                          f"total={row['wall_s']} cut={row['cut']} err={bool(row['error'])}", file=sys.stderr, flush=True)
    for budget in sorted({r["budget"] for r in rows}):
        print(json.dumps({"budget": budget, **summarize([r for r in rows if r["budget"] == budget])}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
