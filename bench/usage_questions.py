"""Usage questions as people type them, scored against Jedi's gold (issue 20).

Each question file (bench/questions/usage-<project>.jsonl, gold from bench/usage_gold.py) holds
questions that name one definition ("Who calls the append method of Container?"), the definition's
path and def line, and its reference sites as Jedi finds them. For every question this script takes
the result of

    codeqa ask QUESTION --repo R --no-llm --json

(in-process by default, one Retriever per project; --cli runs the real CLI per question) and measures
on its `citations`:
  (a) first = the share of questions whose FIRST citation covers the named definition's def line;
      also reported stricter: the first citation starts at most 5 lines above the def line (so a
      citation of the whole enclosing class, which covers a method's line too, does not count);
  (b) sites = the share of Jedi's reference sites that are cited: a site counts when some citation
      of the answer covers its line in that file (micro over all sites; the per-question mean too).
Citations are counted whether or not they verified; the number that did not is reported.
A `summary` field in the JSON (issue 20) is not scored here. Failures are listed per question:
the question, what was expected, what came first and the sites missed.

    python bench/usage_questions.py                      # every bench/questions/usage-*.jsonl
    python bench/usage_questions.py bench/questions/usage-rich-13.9.4.jsonl [--no-index] [--cli]
        [--json OUT.json] [--verbose]

Projects are unpacked sdists under /tmp/data/<project> (env CODEQA_BENCH_DATA), indexed first with
the real bundled model into /tmp/bench-idx/<project> (env CODEQA_BENCH_INDEX_ROOT) by
`python -m codeqa index` (incremental: an up-to-date index costs seconds; --no-index skips it).
The sdists: rich==13.9.4, tomlkit==0.13.2, arrow==1.3.0 and python-dateutil==2.9.0.post0 (unpacked
as /tmp/data/dateutil-2.9.0.post0) (`pip download --no-deps --no-binary :all: PKG==VER`).

Splits (issue 42), frozen before any tuning: each question line may say `"split": "dev"` or `"test"`
(default dev) and `"ambiguous": true` when the name it asks about is shared by several definitions
(the gold is the one the question's words mean: the public API unless they say otherwise). rich and
tomlkit are dev (rules were added for their misses); arrow-1.3.0 is dev; the whole of
python-dateutil-2.9.0.post0 is test: look at its failures only to report them, never to add a rule.
The table reports dev and test, and each one's ambiguous subset, beside every project.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qa_harness import Session, covers, ensure_index, project_paths, span  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "questions"
TIGHT_ABOVE = 5  # decorators and comments a citation of the definition may start with


def score_question(q: dict, result: dict) -> dict:
    citations = result.get("citations") or []
    first = citations[0] if citations else None
    first_ok = first is not None and covers(first, q["path"], q["def_line"])
    first_tight = first_ok and first["start_line"] >= q["def_line"] - TIGHT_ABOVE
    cited = [r for r in q["refs"] if any(covers(c, r["path"], r["line"]) for c in citations)]
    missed = [r for r in q["refs"] if r not in cited]
    return {"question": q["question"], "symbol": q["symbol"], "expected": f"{q['path']}:L{q['def_line']}",
            "first_ok": first_ok, "first_tight": first_tight, "first": span(first) if first else None, "route": result.get("route"),
            "sites": len(q["refs"]), "sites_cited": len(cited), "missed": [f"{r['path']}:L{r['line']}" for r in missed],
            "citations": len(citations), "unverified": sum(1 for c in citations if not c.get("verified", True)),
            "has_summary": "summary" in result, "split": q.get("split", "dev"), "ambiguous": bool(q.get("ambiguous"))}


def aggregate(rows: list[dict]) -> dict:
    n = max(len(rows), 1)
    sites = sum(r["sites"] for r in rows)
    return {"questions": len(rows),
            "first_is_definition": round(sum(r["first_ok"] for r in rows) / n, 3),
            "first_starts_at_definition": round(sum(r["first_tight"] for r in rows) / n, 3),
            "sites_cited": round(sum(r["sites_cited"] for r in rows) / max(sites, 1), 3),
            "sites_cited_mean_per_question": round(sum(r["sites_cited"] / max(r["sites"], 1) for r in rows) / n, 3),
            "sites": sites, "citations": sum(r["citations"] for r in rows),
            "unverified_citations": sum(r["unverified"] for r in rows),
            "routes": {k: sum(1 for r in rows if r["route"] == k) for k in sorted({str(r["route"]) for r in rows})}}


def run_file(path: Path, index: bool, cli: bool, verbose: bool) -> tuple[list[dict], float]:
    project = path.stem.removeprefix("usage-")
    repo, index_dir = project_paths(project)
    if index:
        ensure_index(repo, index_dir)
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    missing = [q["question"] for q in questions if "refs" not in q]
    if missing:
        raise SystemExit(f"{path}: no gold for {len(missing)} questions; run bench/usage_gold.py on it first")
    rows, started = [], time.perf_counter()
    with Session(repo, index_dir, cli=cli) as session:
        for q in questions:
            row = score_question(q, session.ask(q["question"]))
            rows.append(row)
            if verbose:
                print(f"  {'ok ' if row['first_ok'] else 'BAD'} {row['sites_cited']:3d}/{row['sites']:<3d} {q['question']}")
    return rows, (time.perf_counter() - started) / max(len(questions), 1)


def print_failures(project: str, rows: list[dict]) -> None:
    bad = [r for r in rows if not r["first_ok"] or r["sites_cited"] < r["sites"]]
    if not bad:
        return
    print(f"\n-- {project}: {len(bad)} questions short of full marks")
    for r in bad:
        print(f"Q: {r['question']}  [route {r['route']}]")
        print(f"   expected first: {r['expected']} ({r['symbol']})  got: {r['first'] or 'no citation'}"
              f"{'' if r['first_ok'] else '   <-- FIRST WRONG'}")
        if r["sites_cited"] < r["sites"]:
            shown = ", ".join(r["missed"][:6]) + (f", ... {len(r['missed']) - 6} more" if len(r["missed"]) > 6 else "")
            print(f"   sites cited {r['sites_cited']}/{r['sites']}; missed: {shown}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path, help="question files (default: bench/questions/usage-*.jsonl)")
    ap.add_argument("--no-index", action="store_true", help="use the index as it is (skip `codeqa index`)")
    ap.add_argument("--cli", action="store_true", help="run `python -m codeqa ask` per question instead of in-process")
    ap.add_argument("--json", type=Path, help="write metrics and per-question rows here")
    ap.add_argument("--verbose", action="store_true", help="one line per question as it runs")
    args = ap.parse_args(argv)
    files = args.files or sorted(QUESTIONS.glob("usage-*.jsonl"))
    report, everything = {}, []
    for path in files:
        project = path.stem.removeprefix("usage-")
        print(f"== {project}", flush=True)
        rows, per_question = run_file(path, not args.no_index, args.cli, args.verbose)
        report[project] = {"metrics": aggregate(rows), "seconds_per_question": round(per_question, 2), "rows": rows}
        everything += rows
        print_failures(project, rows)
    report["overall"] = {"metrics": aggregate(everything)}
    for split in ("dev", "test"):  # the frozen split (see the docstring), and its ambiguous-name subset
        rows = [r for r in everything if r["split"] == split]
        if rows:
            report[split] = {"metrics": aggregate(rows)}
            if any(r["ambiguous"] for r in rows):
                report[f"{split} ambiguous"] = {"metrics": aggregate([r for r in rows if r["ambiguous"]])}
    print("\nproject                 questions  first=definition  (starts there)  sites cited (micro)  (per-question mean)"
          "  unverified")
    for name, part in report.items():
        m = part["metrics"]
        print(f"{name:<24}{m['questions']:>9}  {m['first_is_definition']:>16.3f}  {m['first_starts_at_definition']:>14.3f}"
              f"  {m['sites_cited']:>8.3f} of {m['sites']:<5d}"
              f"  {m['sites_cited_mean_per_question']:>19.3f}  {m['unverified_citations']:>10d}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
