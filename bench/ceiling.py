"""How far can reordering go? The best figures a perfect reordering of codeqa's own candidates could reach (issue 42).

    python bench/ceiling.py --swe dev            # SWE-QA-Bench: file recall@10 and span hit@10, oracle over the top N
    python bench/ceiling.py --swe test           # the frozen split: figures only, no question is printed
    python bench/ceiling.py --how dev            # "how does X work": the gold among the top N (what a picker could lead with)
    python bench/ceiling.py --swe both --how both --json OUT.json

Every step after the engine's candidates (the rankers, the lead steps, a reranker, the likelihood lead) only
reorders or picks among what `codeqa search` returns, so for each question this asks the search for its top N
(`codeqa search --top-k N`, N = 10, 20, 50, 100, 200) and scores the best top 10 an oracle could make of them:

    file_recall@10 oracle   min(10, gold files among the N) / gold files: ten results, one a gold file
    span_hit@10 oracle      1 if any of the N overlaps a gold span
    how: lead@N             1 if one of the N starts at the gold function (a perfect picker could lead with it, as
                            bench/how.py scores a lead); in@N: one of the N overlaps it (a class that holds it too)

and two bounds that no retrieval can pass:

    file_recall@10 bound    min(10, gold files) / gold files (an answer naming 25 files caps a top 10 at 0.4)
    indexed                 gold files that are in the index at all (the sdist lacks some the answer names)

Gold is the benchmarks' own (bench/swe_qa.py `gold`, bench/questions/how-*.jsonl); indexes as bench/qa_harness.py.
The figures say whether a target is within reach of reordering, or needs candidates the first stage does not find.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from how import QUESTIONS, overlaps as how_overlaps, starts_inside  # noqa: E402
from qa_harness import DATA, INDEX_ROOT, Session  # noqa: E402
from swe_qa import SPLIT, SWE_QA, gold, overlaps  # noqa: E402

DEPTHS = (10, 20, 50, 100, 200)


def swe_rows(project: str) -> list[dict]:
    name = project.rsplit("-", 1)[0]
    questions = [json.loads(line) for line in (SWE_QA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    with Session(DATA / project, INDEX_ROOT / project) as session:
        indexed = set(session.retriever.indexed_paths)
        for q in questions:
            g = gold(q, DATA / project, session.retriever)
            if not g["files"]:
                continue
            files = set(g["files"])
            row = {"project": name, "gold_files": len(files),
                   "bound": min(10, len(files)) / len(files),
                   "indexed": min(10, len(files & indexed)) / len(files)}
            for n in DEPTHS:
                hits = session.search(q["question"], top_k=n)  # the search's own top n, spread as it spreads n
                found = files & {h["path"] for h in hits}
                row[f"file@{n}"] = min(10, len(found)) / len(files)
                row[f"span@{n}"] = float(any(overlaps(h, g["spans"]) for h in hits))
            rows.append(row)
    return rows


def how_rows(set_name: str) -> list[dict]:
    questions = [json.loads(line) for line in (QUESTIONS / f"how-{set_name}.jsonl").read_text().splitlines() if line.strip()]
    rows, earlier = [], None
    for project in dict.fromkeys(q["project"] for q in questions):
        with Session(DATA / project, INDEX_ROOT / project, models_of=earlier) as session:
            for q in (q for q in questions if q["project"] == project):
                snippets = session.ask(q["question"]).get("snippets") or []
                row = {"project": project, "evidence": float(any(how_overlaps(s, q["gold"]) for s in snippets))}
                for n in DEPTHS:
                    hits = session.search(q["question"], top_k=n)
                    row[f"lead@{n}"] = float(any(starts_inside(h, q["gold"]) for h in hits))
                    row[f"in@{n}"] = float(any(how_overlaps(h, q["gold"]) for h in hits))
                rows.append(row)
            earlier = session
    return rows


def summarise(rows: list[dict]) -> dict:
    keys = [k for k in rows[0] if k != "project"]
    return {"questions": len(rows), **{k: round(statistics.fmean(r[k] for r in rows), 3) for k in keys}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--swe", choices=["dev", "test", "both"], help="SWE-QA-Bench split(s)")
    ap.add_argument("--how", choices=["dev", "test", "both"], help="the how-does-X-work set(s)")
    ap.add_argument("--json", type=Path, help="write the figures (no question text) here")
    args = ap.parse_args(argv)
    report: dict[str, dict] = {}
    for split in (["dev", "test"] if args.swe == "both" else [args.swe] if args.swe else []):
        rows = []
        for project in SPLIT[split]:
            part = swe_rows(project)
            report[f"swe {split}/{project}"] = summarise(part)
            rows += part
        report[f"swe {split}"] = summarise(rows)
    for name in (["dev", "test"] if args.how == "both" else [args.how] if args.how else []):
        report[f"how {name}"] = summarise(how_rows(name))
    for name, figures in report.items():
        print(f"{name:28} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
