"""Does the answer to "how does X work?" lead with the function that does the work? (issue 42)

    python bench/how.py                          # both sets: search and the extractive answer
    python bench/how.py --set dev                # tune on this one only
    python bench/how.py --set test               # look at it to confirm a change, never to find one
    python bench/how.py --json OUT.json          # figures and per-question rows (gold, what came back)

Questions: bench/questions/how-{dev,test}.jsonl. Each asks about a behaviour in natural words ("How does the
router decide which rule matches a URL?") and names, as gold, the function or method whose body does the work
(at most two alternatives). The gold was written from reading each project's source, before any change it
measures and without running codeqa on it:

    dev   tenacity 9.0.0, cachetools 5.5.0, bottle 0.13.2       (tune on these)
          mistune 3.0.2, pathspec 0.12.1, structlog 24.4.0, tinydb 4.8.2
                                                                (added in stop 49, 8 each, measured before
                                                                 any change was made for them)
    test  werkzeug 3.1.3, h11 0.14.0, jinja2 3.1.4              (frozen; look only to confirm)

Sources: the PyPI sdists, unpacked under $CODEQA_BENCH_DATA (default /tmp/data), indexed with `codeqa index`
into $CODEQA_BENCH_INDEX_ROOT (bench/qa_harness.py; without --no-index this script indexes them first):

    pip download --no-deps --no-binary :all: -d sdists tenacity==9.0.0 cachetools==5.5.0 bottle==0.13.2
    pip download --no-deps --no-binary :all: -d sdists mistune==3.0.2 pathspec==0.12.1 structlog==24.4.0 tinydb==4.8.2
    pip download --no-deps --no-binary :all: -d sdists werkzeug==3.1.3 h11==0.14.0 jinja2==3.1.4
    for f in sdists/*.tar.gz; do tar xzf "$f" -C /tmp/data; done

Per question:
    lead        1 if the extractive answer's first citation (`codeqa ask --no-llm`, what a user reads first)
                starts inside a gold function (its decorators allowed)
    cited       1 if any citation of that answer overlaps a gold function
    evidence    1 if any snippet handed to an LLM overlaps a gold function
    search_rr   1/rank of the first `codeqa search` top-10 hit overlapping a gold function (MRR@10)
    search_hit  1 if one of those ten does
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qa_harness import DATA, INDEX_ROOT, Session, ensure_index, span  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "questions"
DECORATOR_LINES = 3


def overlaps(item: dict, gold: list[dict]) -> bool:
    return any(item["path"] == g["path"] and item["start_line"] <= g["end"] and g["start"] <= item["end_line"]
               for g in gold)


def starts_inside(item: dict, gold: list[dict]) -> bool:
    return any(item["path"] == g["path"] and g["start"] - DECORATOR_LINES <= item["start_line"] <= g["end"]
               for g in gold)


def measure(question: dict, session: Session, top_k: int) -> dict:
    gold = question["gold"]
    answer = session.ask(question["question"])
    citations, snippets = answer["citations"], answer.get("snippets") or []
    hits = session.search(question["question"], top_k=top_k)
    rank = next((i for i, h in enumerate(hits, 1) if overlaps(h, gold)), None)
    return {
        "id": question["id"], "question": question["question"], "route": answer["route"],
        "gold": [f"{g['path']}:L{g['start']}-L{g['end']} {g['symbol']}" for g in gold],
        "lead": float(bool(citations) and starts_inside(citations[0], gold)),
        "cited": float(any(overlaps(c, gold) for c in citations)),
        "evidence": float(any(overlaps(s, gold) for s in snippets)),
        "search_rr": 1 / rank if rank else 0.0, "search_hit": float(rank is not None),
        "first_citations": [span(c) for c in citations[:3]],
        "search_hits": [span(h) for h in hits],
    }


def run_set(name: str, top_k: int, index: bool) -> list[dict]:
    questions = [json.loads(line) for line in (QUESTIONS / f"how-{name}.jsonl").read_text().splitlines()
                 if line.strip()]
    rows, earlier = [], None
    for project in dict.fromkeys(q["project"] for q in questions):
        repo, index_dir = DATA / project, INDEX_ROOT / project
        if index:
            ensure_index(repo, index_dir, log=lambda m: print(m, file=sys.stderr))
        with Session(repo, index_dir, models_of=earlier) as session:  # the models load once for the set
            rows += [{"project": project, **measure(q, session, top_k)} for q in questions if q["project"] == project]
            earlier = session
    return rows


METRICS = ("lead", "cited", "evidence", "search_hit", "search_rr")


def summarise(rows: list[dict]) -> dict:
    return {"questions": len(rows), **{m: round(statistics.fmean(r[m] for r in rows), 3) for m in METRICS}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=["dev", "test", "both"], default="both")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--no-index", action="store_true", help="use the indexes as they are")
    ap.add_argument("--json", type=Path, help="write the figures and every row here")
    ap.add_argument("--show-misses", action="store_true", help="print each question whose answer does not lead "
                                                               "with the gold (dev set only: the test set stays unread)")
    args = ap.parse_args(argv)
    report, all_rows = {}, []
    for name in (["dev", "test"] if args.set == "both" else [args.set]):
        rows = run_set(name, args.top_k, not args.no_index)
        for project in dict.fromkeys(r["project"] for r in rows):
            report[f"{name}/{project}"] = summarise([r for r in rows if r["project"] == project])
        report[name] = summarise(rows)
        all_rows += [{**r, "set": name} for r in rows]
        if args.show_misses and name == "dev":
            for r in rows:
                if not r["lead"]:
                    print(f"MISS {r['id']} [{r['route']}] {r['question']}\n  gold {r['gold']}\n"
                          f"  lead {r['first_citations']}\n  search {r['search_hits'][:5]}")
    for name, figures in report.items():
        print(f"{name:26} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps({"report": report, "rows": all_rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
