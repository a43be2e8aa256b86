"""Can the local chat model tell, by reading the code, which candidate does the work? (issue 42, item 5)

    scripts/local_llm.sh serve 0.5b 18080                  # or 1.5b; CODEQA_LLM_THREADS=2 on an idle machine
    python bench/llm_judge.py --port 18080 --mode list     # one prompt a question: the candidates' code, "which one?"
    python bench/llm_judge.py --port 18080 --mode point    # one prompt a candidate: "does this code do it? yes/no"
    python bench/llm_judge.py ... --set dev --limit 16 --candidates 4 --lines 24 --json OUT.json
    python bench/llm_judge.py --mode likelihood --gguf "$(scripts/local_llm.sh model 1.5b)" --candidates 3

The question is bench/how.py's: for "how does X work?", does the function that does the work lead the extractive
answer? The search ranks the gold function first among the answer's functions and methods for about half of the
development questions, and among its first four for three quarters; a judge that read the first four
candidates' code and picked the right one would lift the lead that far. This measures the judge alone, before
any of it is wired into the product: for each question, the answer's evidence (`Retriever.retrieve`, what
`codeqa ask --no-llm` cites) gives its first `--candidates` functions and methods; each is shown as its name,
path and first `--lines` lines of code (docstrings cut to their first line), and the model's probability of
each answer is read from the server's logprobs (llama.cpp's OpenAI-compatible /v1/chat/completions,
`logprobs` and `top_logprobs`, one generated token):

    list    one prompt holding every candidate, the reply held to a candidate's number by a grammar; the score
            of a candidate is the probability of its number
    point   one prompt a candidate; its score is P(yes) / (P(yes) + P(no))
    likelihood
            no server: the GGUF file given by `--gguf` runs in this process (transformers, which needs
            `pip install gguf accelerate`), and a candidate's score is log P(question | its code), the question's
            tokens read after a chat prompt showing the code and asking for a question it answers (query
            likelihood, as UPR reranks passages; codeqa.query.likelihood, what CODEQA_RERANK=likelihood:<file>
            runs); the margins below are then in nats, and the first question's seconds include the model's load

Printed per set: how often the search's first candidate is the gold (what the answer does today), how often the
judge's best-scored one is, and how often the gold is among the candidates at all (what a perfect judge reaches),
with the seconds a question took; then, for each of MARGINS, how often the gold leads when the search's first is
kept unless the judge scores its best that much higher (`--summarise OUT.json` prints these again from a
saved run, without a server). Sources and indexes as bench/how.py's ($CODEQA_BENCH_DATA,
$CODEQA_BENCH_INDEX_ROOT). The test set is for confirming a judge that wins on dev, not for finding one.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from how import QUESTIONS, starts_inside  # noqa: E402
from qa_harness import DATA, INDEX_ROOT, Session  # noqa: E402

from codeqa.query.likelihood import Candidate, GGUFLikelihood, code_view  # noqa: E402

SYSTEM_LIST = "You are an expert programmer. You read code and find the function that implements a behaviour."
SYSTEM_POINT = "You are an expert programmer reviewing code."
MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
NAT_MARGINS = (0.0, 1.0, 2.0, 3.0, 5.0, 8.0)  # the likelihood mode's scores are log-probabilities


def candidates(session: Session, question: str, count: int) -> list[dict]:
    """The first `count` functions and methods of the answer's evidence, in its order, each once."""
    found: list[dict] = []
    for h in session.retriever.retrieve(question).hits:
        if h.kind in ("function", "method") and h.reasons != ("reference",) \
                and not any((c["path"], c["start_line"]) == (h.path, h.start_line) for c in found):
            found.append({"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol,
                          "text": h.text})
            if len(found) >= count:
                break
    return found


def chat(port: int, system: str, user: str, grammar: str | None = None) -> list[dict]:
    """The top logprobs of the one token the server generates."""
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 20}
    if grammar:
        body["grammar"] = grammar
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=900) as response:
        reply = json.load(response)
    return reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]


def judge_list(port: int, question: str, cands: list[dict], lines: int) -> list[float]:
    parts = [f"Question: {question}\n"]
    parts += [f"Candidate {i}: {c['symbol']} in {c['path']}\n```\n{code_view(c['text'], lines)}\n```\n"
              for i, c in enumerate(cands, 1)]
    parts.append(f"Which candidate's code does the work the question asks about? Reply with its number only "
                 f"(1-{len(cands)}).")
    grammar = "root ::= " + " | ".join(f'"{n}"' for n in range(1, len(cands) + 1))
    scores = [0.0] * len(cands)
    for entry in chat(port, SYSTEM_LIST, "\n".join(parts), grammar):
        token = entry["token"].strip()
        if token.isdigit() and 1 <= int(token) <= len(cands):
            scores[int(token) - 1] += math.exp(entry["logprob"])
    return scores


def judge_point(port: int, question: str, cands: list[dict], lines: int) -> list[float]:
    scores = []
    for c in cands:
        user = (f"Question about this codebase: {question}\n\nCode ({c['symbol']} in {c['path']}):\n```\n"
                f"{code_view(c['text'], lines)}\n```\n\nIs this the function whose code does what the question asks "
                "about (not just related to it)? Answer yes or no.")
        probs = {"yes": 0.0, "no": 0.0}
        for entry in chat(port, SYSTEM_POINT, user):
            word = entry["token"].strip().lower()
            if word in probs:
                probs[word] += math.exp(entry["logprob"])
        total = probs["yes"] + probs["no"]
        scores.append(probs["yes"] / total if total else 0.5)
    return scores


def led_by_gold(rows: list[dict], margin: float) -> int:
    """Questions whose gold leads when the search's first candidate is kept unless the judge's best scores more than
    `margin` above it."""
    return sum(r["gold_at"] is not None and r["gold_at"] == (r["best"] if r["scores"][r["best"]] - r["scores"][0] > margin else 0)
               for r in rows if r["scores"])


def summarise(rows: list[dict], label: str) -> str:
    margins = NAT_MARGINS if any(s < 0 for r in rows for s in r["scores"]) else MARGINS
    seconds = statistics.fmean(r["seconds"] for r in rows) if rows else 0.0
    return (f"{label}, {len(rows)} questions: search's first is gold {sum(r['gold_at'] == 0 for r in rows)}, judge's best "
            f"is gold {sum(r['gold_at'] is not None and r['best'] == r['gold_at'] for r in rows)}, gold among the "
            f"candidates {sum(r['gold_at'] is not None for r in rows)}; {seconds:.1f} s a question\n"
            "gold leads, the search's first kept unless the judge's best beats it by: "
            + ", ".join(f"{m:g} -> {led_by_gold(rows, m)}" for m in margins))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, help="the llama.cpp chat server's port (scripts/local_llm.sh serve)")
    ap.add_argument("--summarise", type=Path, metavar="OUT.json", help="print the figures of a saved --json run and stop")
    ap.add_argument("--mode", choices=["list", "point", "likelihood"], default="list")
    ap.add_argument("--gguf", type=Path, help="likelihood mode: the model file (scripts/local_llm.sh path 1.5b)")
    ap.add_argument("--set", choices=["dev", "test"], default="dev")
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--lines", type=int, default=24, help="lines of code shown of each candidate")
    ap.add_argument("--limit", type=int, help="the first N questions of the set")
    ap.add_argument("--json", type=Path, help="write the per-question scores here")
    args = ap.parse_args(argv)
    if args.summarise:
        print(summarise(json.loads(args.summarise.read_text()), str(args.summarise)))
        return 0
    if args.mode == "likelihood":
        if args.gguf is None or not args.gguf.is_file():
            ap.error("--mode likelihood needs --gguf MODEL.gguf (scripts/local_llm.sh model 1.5b prints one)")
    elif args.port is None:
        ap.error("--port is needed to run the judge (or --summarise OUT.json to read a saved run)")
    questions = [json.loads(line) for line in (QUESTIONS / f"how-{args.set}.jsonl").read_text().splitlines()
                 if line.strip()][:args.limit]
    if args.mode == "likelihood":
        model = GGUFLikelihood(args.gguf)  # the product's (CODEQA_RERANK=likelihood:<file>): 24 lines a candidate
        judge = lambda _port, question, cands, _lines: model.score(  # noqa: E731
            question, [Candidate(c["path"], c["symbol"], c["text"]) for c in cands])
    else:
        judge = judge_list if args.mode == "list" else judge_point
    rows = []
    for project in dict.fromkeys(q["project"] for q in questions):
        with Session(DATA / project, INDEX_ROOT / project) as session:
            for q in (q for q in questions if q["project"] == project):
                cands = candidates(session, q["question"], args.candidates)
                gold = next((i for i, c in enumerate(cands) if starts_inside(c, q["gold"])), None)
                started = time.perf_counter()
                scores = judge(args.port, q["question"], cands, args.lines) if len(cands) > 1 else [1.0] * len(cands)
                best = max(range(len(scores)), key=scores.__getitem__) if scores else None
                rows.append({"id": q["id"], "gold_at": gold, "best": best, "scores": [round(s, 3) for s in scores],
                             "seconds": round(time.perf_counter() - started, 1)})
                print(f"{q['id']:28} gold at {gold}  judge's best {best}  {rows[-1]['scores']}  "
                      f"{rows[-1]['seconds']} s", file=sys.stderr, flush=True)
    print(summarise(rows, f"{args.set}, {args.mode}, {args.candidates} candidates"))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
