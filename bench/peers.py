"""Peers side by side (issue 67 item 6): the same questions, the same scoring, four ways to find the code.

    python bench/peers.py                                   # SWE-QA dev streamlink, then the "how" dev set
    python bench/peers.py --swe-qa conan-2.34.0 --swe-qa reflex-0.7.14 --how none
    python bench/peers.py --peer codeqa --peer bm25 --json OUT.json

Peers, each giving ten spans (path, first line, last line) a question, best first:
    codeqa  `codeqa search QUESTION` (top 10), on the project's index (bench/qa_harness.py)
    aider   aider's repo map (`aider-chat`): tree-sitter tags ranked by a PageRank personalised to the
            question's words as mentioned identifiers, as aider ranks them before any file is in the chat;
            its top ten definitions, each from its line to its end (bench/peers_outside.py)
    bm25    BM25 alone (`bm25s`) over 40-line windows (15 lines shared), words and identifier parts
    rag     the naive RAG of bench/retrieval.py: the same windows embedded with codeqa's bundled model,
            ranked by cosine similarity to the question
aider and bm25 run in another interpreter (--python, default /tmp/aider-venv/bin/python), which must hold
`aider-chat` and `bm25s`; they are never codeqa's requirements.

Scoring is bench/swe_qa.py's for SWE-QA (gold from each expert answer; questions without a gold file left
out): file_recall (share of gold files among the ten results' files), span_hit (a result overlaps a gold
span), span_mrr (1/rank of the first that does). For the "how" set (bench/questions/how-dev.jsonl, gold: the
function that does the work) bench/how.py's search figures: hit (one of the ten overlaps a gold function)
and mrr. The windows' vectors are kept in --cache (keyed by project and model) between runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import how  # noqa: E402
import swe_qa  # noqa: E402
from llm_answers import SWE_QA  # noqa: E402
from qa_harness import DATA, INDEX_ROOT, Session, ensure_index  # noqa: E402
from retrieval import window_ranking, windows  # noqa: E402

PEERS = ("codeqa", "aider", "bm25", "rag")
OUTSIDE = ("aider", "bm25")  # run by bench/peers_outside.py in the other interpreter


def hits_of(spans) -> list[dict]:
    return [{"path": p, "start_line": s, "end_line": e} for p, s, e in spans]


class Ranker:
    """Each peer's ten spans for a project's questions."""

    def __init__(self, repo: Path, session: Session, python: str, cache: Path, top_k: int):
        self.repo, self.session, self.python, self.cache, self.top_k = repo, session, python, cache, top_k
        self._windows: tuple[list, list[str]] | None = None
        self.seconds: dict[str, float] = {}  # per question

    def windows(self) -> tuple[list, list[str]]:
        if self._windows is None:
            self._windows = windows(self.repo)
        return self._windows

    def rank(self, peer: str, questions: list[str]) -> list[list[dict]]:
        started = time.perf_counter()
        if peer == "codeqa":
            ranked = [self.session.search(q, top_k=self.top_k) for q in questions]
        elif peer == "rag":
            spans, _ = self.windows()
            embedder = self.session.retriever.embedder
            ranked = [hits_of(r) for r in window_ranking(spans, self.vectors(embedder), questions, embedder, self.top_k)]
        else:
            ranked = [hits_of(r) for r in self.outside(peer, questions)]
        self.seconds[peer] = (time.perf_counter() - started) / max(1, len(questions))
        return ranked

    def vectors(self, embedder) -> np.ndarray:
        spans, texts = self.windows()
        key = hashlib.sha256(json.dumps([embedder.model_id, spans]).encode()).hexdigest()[:16]
        path = self.cache / f"{self.repo.name}-{key}.npy"
        if path.exists():
            return np.load(path, allow_pickle=False)  # plain float arrays only: a cache file never runs code
        vectors = np.asarray(embedder.encode(texts, batch_size=64), dtype="float32")
        self.cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors, allow_pickle=False)
        return vectors

    def outside(self, peer: str, questions: list[str]) -> list[list]:
        spans, texts = self.windows() if peer == "bm25" else ([], [])
        files = sorted({p for p, _, _ in self.windows()[0]})
        job = {"peer": peer, "repo": str(self.repo), "files": files, "questions": questions, "top_k": self.top_k,
               "windows": spans, "texts": texts}
        done = subprocess.run([self.python, str(Path(__file__).with_name("peers_outside.py"))], input=json.dumps(job),
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
        if done.returncode != 0:
            raise SystemExit(f"{peer} failed ({done.returncode}) in {self.python}:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout)["ranked"]


def swe_qa_project(project: str, peers: list[str], args) -> dict[str, dict]:
    repo, index_dir = DATA / project, INDEX_ROOT / project
    if not args.no_index:
        ensure_index(repo, index_dir, log=lambda m: print(m, file=sys.stderr))
    name = project.rsplit("-", 1)[0]
    questions = [json.loads(line) for line in (SWE_QA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    questions = questions[:args.limit]
    out = {}
    with Session(repo, index_dir) as session:
        golds = [swe_qa.gold(q, repo, session.retriever) for q in questions]
        scored = [(q["question"], g) for q, g in zip(questions, golds) if g["files"]]
        ranker = Ranker(repo, session, args.python, args.cache, args.top_k)
        for peer in peers:
            ranked = ranker.rank(peer, [q for q, _ in scored])
            figures = swe_qa.summarise([{"search": swe_qa.measure(hits, g)} for hits, (_, g) in zip(ranked, scored)])
            out[peer] = {"file_recall": figures["search.file_recall"], "span_hit": figures["search.span_hit"],
                         "span_mrr": figures["search.span_rr"], "questions": len(scored),
                         "seconds": round(ranker.seconds[peer], 2)}
            print(f"  {project} {peer}: {out[peer]}", file=sys.stderr)
    return out


def how_set(name: str, peers: list[str], args) -> dict[str, dict]:
    questions = [json.loads(line) for line in (how.QUESTIONS / f"how-{name}.jsonl").read_text().splitlines()
                 if line.strip()]
    rows: dict[str, list[tuple[float, float]]] = {p: [] for p in peers}
    seconds: dict[str, list[float]] = {p: [] for p in peers}
    earlier = None
    for project in dict.fromkeys(q["project"] for q in questions):
        repo, index_dir = DATA / project, INDEX_ROOT / project
        if not args.no_index:
            ensure_index(repo, index_dir, log=lambda m: print(m, file=sys.stderr))
        mine = [q for q in questions if q["project"] == project]
        with Session(repo, index_dir, models_of=earlier) as session:  # the model loads once for the set
            earlier = session
            ranker = Ranker(repo, session, args.python, args.cache, args.top_k)
            for peer in peers:
                for hits, q in zip(ranker.rank(peer, [q["question"] for q in mine]), mine):
                    rank = next((i for i, h in enumerate(hits, 1) if how.overlaps(h, q["gold"])), None)
                    rows[peer].append((float(rank is not None), 1 / rank if rank else 0.0))
                seconds[peer].append(ranker.seconds[peer])
    return {p: {"hit": round(statistics.fmean(r[0] for r in rows[p]), 3),
                "mrr": round(statistics.fmean(r[1] for r in rows[p]), 3), "questions": len(rows[p]),
                "seconds": round(statistics.fmean(seconds[p]), 2)} for p in peers}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--swe-qa", action="append", help="an SWE-QA project (default: streamlink-8.6.3; none: no SWE-QA); repeatable")
    ap.add_argument("--how", default="dev", choices=["dev", "test", "none"], help="the \"how\" set (default dev)")
    ap.add_argument("--peer", action="append", choices=PEERS, help="only this peer; repeatable (default: all)")
    ap.add_argument("--python", default="/tmp/aider-venv/bin/python", help="the interpreter holding aider-chat and bm25s")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/peers-cache"), help="the windows' vectors, kept between runs")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--limit", type=int, help="only the first N questions of each SWE-QA project")
    ap.add_argument("--no-index", action="store_true", help="use the indexes as they are")
    ap.add_argument("--json", type=Path, help="write the table here")
    args = ap.parse_args(argv)
    peers = args.peer or list(PEERS)
    report: dict[str, dict] = {}
    for project in args.swe_qa or ["streamlink-8.6.3"]:
        if project != "none":
            report[f"swe-qa/{project}"] = swe_qa_project(project, peers, args)
    if args.how != "none":
        report[f"how-{args.how}"] = how_set(args.how, peers, args)
    for name, by_peer in report.items():
        print(name)
        for peer, figures in by_peer.items():
            print(f"  {peer:8} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
