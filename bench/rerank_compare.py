"""The embedding reranker several ways in one run, sharing its vectors:

    boosted   the reranker as it ships (stop 51): its cosine plus what the search had added, the question's words
              lift and the rankers' boosts (Hit.lift and Hit.boost)
    no-lift   the cosine plus the boosts, not the words lift
    no-boost  the cosine plus the words lift, not the boosts
    cosine    stop 50's form: the cosine alone

    scripts/local_llm.sh serve-embed embeddinggemma 18091       # then its exports (CODEQA_RERANK=openai:...)
    python bench/rerank_compare.py --set how-dev --set swe-dev  # tune on these
    python bench/rerank_compare.py --set how-test --set swe-test --limit 12
                                                                # run once, to confirm
    python bench/rerank_compare.py ... --variant boosted --variant no-lift  # some of them (default: all)
    python bench/rerank_compare.py ... --json OUT.json          # figures and per-question rows

All variants share one reranker's vector cache, so a candidate is embedded once a process: on two CPU cores that
is what a reranked search spends its ~15 s on, and a further variant costs no embedding. The sets are
bench/how.py's (lead, cited, evidence, search hit and MRR@10) and bench/swe_qa.py's (search file recall@10, span
hit@10, span MRR@10, named definitions covered, and the same over an answer's evidence). `--limit N` takes the
first N questions of each project, as bench/swe_qa.py does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import how  # noqa: E402
import swe_qa  # noqa: E402
from qa_harness import DATA, INDEX_ROOT, Session  # noqa: E402

SETS = {"how-dev": ("how", "dev"), "how-test": ("how", "test"), "swe-dev": ("swe", "dev"), "swe-test": ("swe", "test")}


class Wrapped:
    """The reranker with some of what the search added dropped before it (`keep`: "lift", "boost")."""

    def __init__(self, inner, keep: tuple[str, ...]):
        self.inner, self.keep, self.candidates, self.where = inner, keep, inner.candidates, inner.where

    def rerank(self, query, hits, graph):
        dropped = {k: 0.0 for k in ("lift", "boost") if k not in self.keep}
        return self.inner.rerank(query, [replace(h, **dropped) for h in hits], graph)


VARIANTS = {"boosted": lambda r: r, "no-lift": lambda r: Wrapped(r, ("boost",)),
            "no-boost": lambda r: Wrapped(r, ("lift",)), "cosine": lambda r: Wrapped(r, ())}


def questions_of(kind: str, split: str) -> dict[str, list[dict]]:
    """project -> its questions, in file order."""
    by: dict[str, list[dict]] = {}
    if kind == "how":
        for line in (how.QUESTIONS / f"how-{split}.jsonl").read_text().splitlines():
            if line.strip():
                q = json.loads(line)
                by.setdefault(q["project"], []).append(q)
        return by
    for project in swe_qa.SPLIT[split]:
        name = project.rsplit("-", 1)[0]
        by[project] = [json.loads(line) for line in (swe_qa.SWE_QA / f"{name}.jsonl").read_text().splitlines()
                       if line.strip()]
    return by


def measure(kind: str, q: dict, session: Session, repo: Path) -> dict | None:
    if kind == "how":
        row = how.measure(q, session, 10)
        return {k: row[k] for k in ("lead", "cited", "evidence", "search_hit", "search_rr")}
    g = swe_qa.gold(q, repo, session.retriever)
    if not g["files"]:
        return None
    search = swe_qa.measure(session.search(q["question"], top_k=10), g)
    ask = swe_qa.measure(session.ask(q["question"]).get("snippets") or [], g)
    return {**{f"search.{k}": v for k, v in search.items()}, **{f"ask.{k}": v for k, v in ask.items()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", choices=sorted(SETS), required=True, help="repeatable")
    ap.add_argument("--limit", type=int, help="only the first N questions of each project")
    ap.add_argument("--variant", action="append", choices=list(VARIANTS), help="repeatable (default: all)")
    ap.add_argument("--json", type=Path, help="write the figures and every row here")
    args = ap.parse_args(argv)
    names = list(dict.fromkeys(args.variant or VARIANTS))  # a variant named twice is measured once
    rows = []
    for name in args.set:
        kind, split = SETS[name]
        for project, qs in questions_of(kind, split).items():
            repo = DATA / project
            with Session(repo, INDEX_ROOT / project) as session:
                boosted = session.retriever.searcher.reranker
                if boosted is None:
                    raise SystemExit("no embedding reranker is set: export CODEQA_RERANK=openai:<model> and its "
                                     "CODEQA_RERANK_BASE_URL (scripts/local_llm.sh serve-embed embeddinggemma)")
                variants = {v: VARIANTS[v](boosted) for v in names}
                for q in qs[:args.limit]:
                    for variant, reranker in variants.items():
                        session.retriever.searcher.reranker = reranker
                        figures = measure(kind, q, session, repo)
                        if figures is not None:
                            rows.append({"set": name, "project": project, "variant": variant,
                                         "question": q["question"], **figures})
                    done = sum(r["project"] == project for r in rows) // len(variants)
                    print(f"{name} {project}: {done} done", file=sys.stderr)
    report = {}
    for name in args.set:
        for variant in names:
            part = [r for r in rows if r["set"] == name and r["variant"] == variant]
            keys = [k for k in part[0] if k not in ("set", "project", "variant", "question")] if part else []
            figures = {k: round(statistics.fmean(v), 3) for k in keys
                       if (v := [r[k] for r in part if r[k] is not None])}
            report[f"{name}/{variant}"] = {"questions": len(part), **figures}
            print(f"{name:9} {variant:8} questions={len(part)}  " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps({"report": report, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
