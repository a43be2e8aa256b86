"""Independent check of `codeqa eval`'s retrieval numbers, from the CLI contract alone (no codeqa imports).

Reads a question file, asks `codeqa search --queries-file ... --json` for the top 10 of every question,
applies the hit rule (a retrieved span overlaps a gold span: same path, line ranges intersect) and
prints recall@1/5/10 and MRR@10. Compare with `codeqa eval Q.jsonl --repo R --json`.

    python bench/eval_crosscheck.py Q.jsonl --repo R [--index-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--index-dir")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps({"query": q["question"]}) + "\n" for q in questions))
    command = [sys.executable, "-m", "codeqa", "search", "--queries-file", f.name, "--repo", args.repo, "--top-k", "10", "--json"]
    if args.index_dir:
        command += ["--index-dir", args.index_dir]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(answers) == len(questions), (len(answers), len(questions))
    ranks = []
    for q, a in zip(questions, answers):
        assert a["query"] == q["question"]
        rank = None
        for i, r in enumerate(a["results"][:10], 1):
            if any(g["path"] == r["path"] and r["start_line"] <= g["end_line"] and g["start_line"] <= r["end_line"]
                   for g in q["gold"]):
                rank = i
                break
        ranks.append(rank)
    n = len(ranks)
    result = {f"recall@{k}": round(sum(1 for r in ranks if r and r <= k) / n, 4) for k in (1, 5, 10)}
    result["mrr@10"] = round(sum(1 / r for r in ranks if r) / n, 4)
    result["questions"] = n
    print(json.dumps(result))


if __name__ == "__main__":
    main()
