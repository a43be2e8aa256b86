"""Multi-file questions (issue 20): does retrieval reach every file an answer needs?

bench/questions/multifile.jsonl holds developer questions written by hand from reading rich 13.9.4
and tomlkit 0.13.2 (projects codeqa was never tuned on), each with the 2-4 files a good answer has
to draw on (e.g. "How does Live redraw its renderable in place?" needs live.py, live_render.py and
control.py). Two measures, each the mean over questions of the share of gold files found:

    search  file recall@10 over the files of the top-10 results of
            `codeqa search QUESTION --json --top-k 10`
    ask     file recall over the files of the snippets of `codeqa ask QUESTION --no-llm --json`
            (what an LLM would be shown)

plus the share of questions with every gold file found. Misses are listed per question, with the
files that were returned instead.

    python bench/multifile.py [bench/questions/multifile.jsonl] [--no-index] [--cli] [--top-k 10]
        [--search-only] [--json OUT.json]

bench/questions/multifile-heldout.jsonl (httpx 0.27.2, jinja2 3.1.4) was written before any tuning
on multifile.jsonl and is kept for checks only: tune on multifile.jsonl, then look at the held-out
set once. --search-only skips `ask` (its columns then read 0).

Projects are unpacked sdists under /tmp/data/<project> (env CODEQA_BENCH_DATA), indexed with the
real bundled model into /tmp/bench-idx/<project> (env CODEQA_BENCH_INDEX_ROOT) by
`python -m codeqa index` (incremental; --no-index skips it). In-process by default (one Retriever
per project); --cli runs `python -m codeqa search/ask` per question.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qa_harness import Session, ensure_index, project_paths  # noqa: E402

DEFAULT = Path(__file__).resolve().parent / "questions" / "multifile.jsonl"


def recall(gold: list[str], found: list[str]) -> float:
    return sum(1 for f in gold if f in found) / len(gold)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--no-index", action="store_true", help="use the indexes as they are (skip `codeqa index`)")
    ap.add_argument("--cli", action="store_true", help="run `python -m codeqa` per question instead of in-process")
    ap.add_argument("--search-only", action="store_true", help="measure `search` only (skip `ask`)")
    ap.add_argument("--json", type=Path, help="write metrics and per-question rows here")
    args = ap.parse_args(argv)
    by_project: dict[str, list[dict]] = defaultdict(list)
    for line in args.questions.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            by_project[q["project"]].append(q)
    rows = []
    for project, questions in by_project.items():
        repo, index_dir = project_paths(project)
        if not args.no_index:
            ensure_index(repo, index_dir)
        with Session(repo, index_dir, cli=args.cli) as session:
            for q in questions:
                search_files = list(dict.fromkeys(h["path"] for h in session.search(q["question"], top_k=args.top_k)))
                ask = {} if args.search_only else session.ask(q["question"])
                ask_files = list(dict.fromkeys(s["path"] for s in ask.get("snippets") or []))
                rows.append({"project": project, "question": q["question"], "gold": q["files"],
                             "search_files": search_files, "ask_files": ask_files, "route": ask.get("route"),
                             "search_recall": recall(q["files"], search_files), "ask_recall": recall(q["files"], ask_files)})
    print_misses(rows, args.top_k)
    report = {}
    for name in [*by_project, "overall"]:
        part = [r for r in rows if name in ("overall", r["project"])]
        n = len(part)
        report[name] = {"questions": n,
                        f"search_file_recall@{args.top_k}": round(sum(r["search_recall"] for r in part) / n, 3),
                        f"search_all_files@{args.top_k}": round(sum(r["search_recall"] == 1 for r in part) / n, 3),
                        "ask_snippet_file_recall": round(sum(r["ask_recall"] for r in part) / n, 3),
                        "ask_all_files": round(sum(r["ask_recall"] == 1 for r in part) / n, 3),
                        "gold_files_per_question": round(sum(len(r["gold"]) for r in part) / n, 2)}
    print(f"\nproject          questions  search file recall@{args.top_k}  all files  ask snippets file recall  all files")
    for name, m in report.items():
        print(f"{name:<17}{m['questions']:>9}  {m[f'search_file_recall@{args.top_k}']:>22.3f}  "
              f"{m[f'search_all_files@{args.top_k}']:>9.3f}  {m['ask_snippet_file_recall']:>24.3f}  {m['ask_all_files']:>9.3f}")
    if args.json:
        args.json.write_text(json.dumps({"metrics": report, "rows": rows}, indent=2), encoding="utf-8")
    return 0


def print_misses(rows: list[dict], top_k: int) -> None:
    for r in rows:
        if r["search_recall"] == 1 and r["ask_recall"] == 1:
            continue
        print(f"Q: {r['question']}  [{r['project']}, ask route {r['route']}]")
        for label, files in ((f"search top-{top_k}", r["search_files"]), ("ask snippets", r["ask_files"])):
            missed = [f for f in r["gold"] if f not in files]
            if missed:
                print(f"   {label} missed {', '.join(missed)}; returned {', '.join(files) or 'nothing'}")


if __name__ == "__main__":
    raise SystemExit(main())
