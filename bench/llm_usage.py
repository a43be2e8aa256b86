"""A real model's answers to usage questions, with the citation grammar and without it (stop 61).

    scripts/local_llm.sh serve 1.5b 18080 2048      # then its exports (OPENAI_BASE_URL, CODEQA_MODEL, ...)
    python bench/llm_usage.py bench/questions/usage-tomlkit-0.13.2.jsonl:6 bench/questions/usage-rich-13.9.4.jsonl:6 \
        --out R.jsonl

Each argument is a question file of bench/usage_questions.py (Jedi's reference sites as gold) and how many of its
first questions to ask. Every question is answered twice by the configured chat model, the same prompt with
CODEQA_CITE_GRAMMAR=1 (llama.cpp: every line ends with a snippet number) and =0; llama.cpp's prompt cache makes the
second read fast, so compare the answers, not their times. Projects and indexes as bench/qa_harness.py (the usage
route reads the graph: `codeqa index P --defer-embeddings` is enough).

Per variant: answers cut (repeating, length), answers with a citation the model wrote, such citations an answer,
Jedi's sites that a verified citation covers (the model's own, then with attributed spans), answers whose first
citation covers the definition's line, and citations that did not verify.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qa_harness import DATA, INDEX_ROOT  # noqa: E402


def answer_rows(spec: str) -> list[dict]:
    from codeqa.answer import Answerer
    from codeqa.config import Settings
    from codeqa.query.retrieve import Retriever

    qfile, _, count = spec.partition(":")
    project = Path(qfile).stem.removeprefix("usage-")
    questions = [json.loads(line) for line in Path(qfile).read_text().splitlines() if line.strip()]
    questions = questions[:int(count)] if count else questions
    base = Settings.load(index_dir=INDEX_ROOT / project)
    rows = []
    with Retriever.open(DATA / project, base) as retriever:
        for q in questions:
            for grammar in (1, 0):
                started = time.monotonic()
                answer = Answerer(retriever, base.with_(cite_grammar=grammar)).answer(q["question"])
                verified = [c for c in answer.citations if c.verified]
                own = [c for c in verified if not c.attributed]

                def covered(citations) -> int:
                    return sum(1 for site in q["refs"] if any(c.path == site["path"] and c.start_line <= site["line"]
                                                              <= c.end_line for c in citations))

                first = answer.citations[0] if answer.citations else None
                rows.append({"project": project, "question": q["question"], "grammar": grammar, "mode": answer.mode,
                             "route": answer.route, "seconds": round(time.monotonic() - started, 1), "cut": answer.cut,
                             "error": answer.error, "cited": len(own), "unverified": len(answer.citations) - len(verified),
                             "sites": len(q["refs"]), "sites_cited": covered(own), "sites_any": covered(verified),
                             "first_is_definition": bool(first and first.path == q["path"]
                                                         and first.start_line <= q["def_line"] <= first.end_line),
                             "answer": answer.answer})
                print(f"{project} grammar={grammar} {rows[-1]['seconds']}s cut={answer.cut} cited={len(own)} "
                      f"sites {rows[-1]['sites_cited']}/{len(q['refs'])}", file=sys.stderr, flush=True)
    return rows


def summarise(rows: list[dict]) -> dict:
    out = {}
    for grammar in (1, 0):
        part = [r for r in rows if r["grammar"] == grammar]
        if not part:
            continue
        sites = sum(r["sites"] for r in part) or 1
        out[f"grammar={grammar}"] = {
            "answers": len(part), "cut": sum(1 for r in part if r["cut"]),
            "answers_citing": sum(1 for r in part if r["cited"]),
            "cited_mean": round(sum(r["cited"] for r in part) / len(part), 2),
            "sites_cited": round(sum(r["sites_cited"] for r in part) / sites, 3),
            "sites_with_attributed": round(sum(r["sites_any"] for r in part) / sites, 3),
            "first_is_definition": sum(1 for r in part if r["first_is_definition"]),
            "unverified": sum(r["unverified"] for r in part), "not_llm": sum(1 for r in part if r["mode"] != "llm")}
    return out


def main(argv=None) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions", nargs="+", help="QUESTION_FILE[:N], the first N questions of a usage question file")
    ap.add_argument("--out", type=Path, help="append every answer here (JSON lines)")
    args = ap.parse_args(argv)
    rows = [row for spec in args.questions for row in answer_rows(spec)]
    if args.out:
        with args.out.open("a") as out:
            out.writelines(json.dumps(r) + "\n" for r in rows)
    print(json.dumps(summarise(rows), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
