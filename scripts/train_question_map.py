"""Train the question map (codeqa/embed/question_map.py) on questions whose answer is known code.

    python scripts/train_question_map.py QUESTIONS.jsonl [...] --data-root SRC --index-root IDX \
        --out codeqa/adapters/question-map.safetensors [--rank 32] [--steps 300] [--seed 0] [--valid V.jsonl]

Each line of a questions file: {"project": P, "question": "...", "gold": [{"path", "start", "end"}]}; the
project's source is SRC/P and its index (`codeqa index SRC/P --index-dir IDX/P`, the model the map is for)
IDX/P. A question's positives are the chunks overlapping its gold; every other chunk of its project with a
dense vector is a negative (a softmax over the whole project at temperature --tau). The map starts as
the identity (A = 0) and is trained full-batch with Adam; weight decay keeps it near the identity.

`scripts/write_questions.py` writes such questions with a local LLM. `--valid` reports dense MRR@10 and
hit@10 of other questions before and after (their projects indexed the same way): a check, not a target.
The JSON record beside --out holds the configuration, the projects, the loss at every step and the time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.config import Settings  # noqa: E402
from codeqa.embed import embedder_from_settings, query_embedder  # noqa: E402
from codeqa.embed.question_map import QuestionMap, write_question_map  # noqa: E402
from codeqa.store import open_store  # noqa: E402


def read_questions(paths: list[Path]) -> list[dict]:
    """The questions of the files, less those scripts/write_questions.py did not accept ("ok": false)."""
    out = []
    for path in paths:
        out += [q for line in path.read_text().splitlines() if line.strip() and (q := json.loads(line)).get("ok", True)]
    return out


def project_vectors(src: Path, index: Path) -> tuple[np.ndarray, list[tuple[str, int, int]], str]:
    """Every chunk vector of a project's index, the chunks' spans, and the index's model_id."""
    store = open_store(src.resolve(), Settings.load(index_dir=index))
    try:
        rows = list(store.dense_vectors())
        model_id = store.read_meta().get("model_id", "")
    finally:
        store.close()
    if not rows:
        raise SystemExit(f"{index} has no chunk with a dense vector; run `codeqa index {src} --index-dir {index}`")
    vectors = np.asarray([r[3] for r in rows], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, [(p, s, e) for p, s, e, _ in rows], model_id


def build(questions: list[dict], data_root: Path, index_root: Path, embedder) -> tuple[list, dict, str]:
    """(question vector, positives, project) per question with a positive; chunk vectors by project."""
    projects, model_ids = {}, set()
    for name in sorted({q["project"] for q in questions}):
        vectors, spans, model_id = project_vectors(data_root / name, index_root / name)
        projects[name] = (vectors, spans)
        model_ids.add(model_id)
    if len(model_ids) != 1:
        raise SystemExit(f"the indexes were made by different models: {sorted(model_ids)}")
    qv = embedder.encode([q["question"] for q in questions])
    items = []
    for q, v in zip(questions, qv):
        spans = projects[q["project"]][1]
        pos = [i for i, (p, s, e) in enumerate(spans)
               if any(p == g["path"] and s <= g["end"] and g["start"] <= e for g in q["gold"])]
        if pos:
            items.append((np.asarray(v, dtype=np.float32), pos, q["project"]))
    return items, projects, model_ids.pop()


def dense_rank_figures(qmap: QuestionMap | None, items: list, projects: dict) -> dict:
    rr, hit = [], []
    for v, pos, name in items:
        scores = projects[name][0] @ (qmap.apply(v) if qmap else v)
        gold = set(pos)
        rank = next((i for i, t in enumerate(np.argsort(-scores)[:10], 1) if t in gold), None)
        rr.append(1 / rank if rank else 0.0)
        hit.append(float(rank is not None))
    return {"mrr@10": round(float(np.mean(rr)), 3), "hit@10": round(float(np.mean(hit)), 3), "questions": len(items)}


def train(items: list, projects: dict, rank: int, steps: int, lr: float, tau: float, weight_decay: float,
          seed: int) -> tuple[np.ndarray, np.ndarray, list[float]]:
    import torch

    torch.manual_seed(seed)
    dim = items[0][0].shape[0]
    a = torch.zeros(dim, rank, requires_grad=True)
    b = (torch.randn(dim, rank) * 0.01).requires_grad_()
    opt = torch.optim.Adam([a, b], lr=lr, weight_decay=weight_decay)
    chunks = {name: torch.from_numpy(v) for name, (v, _) in projects.items()}
    queries = torch.from_numpy(np.stack([v for v, _, _ in items]))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        moved = queries + (queries @ b) @ a.T
        moved = moved / moved.norm(dim=1, keepdim=True)
        loss = torch.zeros(())
        for i, (_, pos, name) in enumerate(items):
            s = chunks[name] @ moved[i] / tau
            loss = loss + torch.logsumexp(s, 0) - torch.logsumexp(s[pos], 0)
        loss = loss / len(items)
        loss.backward()
        opt.step()
        losses.append(round(float(loss.detach()), 4))
    return a.detach().numpy(), b.detach().numpy(), losses


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions", type=Path, nargs="+")
    ap.add_argument("--data-root", type=Path, required=True)
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--valid", type=Path, nargs="*", default=[], help="questions to report dense figures on")
    ap.add_argument("--valid-data-root", type=Path)
    ap.add_argument("--valid-index-root", type=Path)
    ap.add_argument("--rank", type=int, default=32)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--weight-decay", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    embedder = query_embedder(embedder_from_settings(Settings.load()))
    questions = read_questions(args.questions)
    items, projects, model_id = build(questions, args.data_root, args.index_root, embedder)
    print(f"{len(items)} questions with gold chunks ({len(questions)} read), {len(projects)} projects, {model_id}",
          file=sys.stderr)
    started = time.perf_counter()
    a, b, losses = train(items, projects, args.rank, args.steps, args.lr, args.tau, args.weight_decay, args.seed)
    seconds = round(time.perf_counter() - started, 1)
    qmap = QuestionMap(a, b, model_id)
    record = {"config": {k: getattr(args, k) for k in ("rank", "steps", "lr", "tau", "weight_decay", "seed")},
              "model_id": model_id, "projects": sorted(projects), "questions": len(items),
              "questions_sha256": hashlib.sha256("".join(p.read_text() for p in args.questions).encode()).hexdigest(),
              "train": {"before": dense_rank_figures(None, items, projects), "after": dense_rank_figures(qmap, items, projects)},
              "loss": losses, "train_seconds": seconds}
    for valid in args.valid:  # each file on its own: a question set is a different kind of question
        v_items, v_projects, v_model = build(read_questions([valid]), args.valid_data_root or args.data_root,
                                             args.valid_index_root or args.index_root, embedder)
        if v_model != model_id:
            raise SystemExit(f"the validation indexes were made by {v_model}, the training ones by {model_id}")
        record.setdefault("valid", {})[valid.name] = {"before": dense_rank_figures(None, v_items, v_projects),
                                                       "after": dense_rank_figures(qmap, v_items, v_projects)}
    write_question_map(args.out, qmap, {k: record[k] for k in ("config", "projects", "questions")})
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "loss"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
