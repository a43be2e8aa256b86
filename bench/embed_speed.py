"""Embedding speed at index time (issue 22): chunks/s of the bundled model on a project's own chunk
texts, for each way of running it, and how far each one's vectors are from today's default.

    python bench/embed_speed.py PROJECT_DIR [--chunks 800] [--repeats 3|0] [--settings NAME,NAME,...]
        [--seed 0] [--json OUT.json]

The sample: files of the project, drawn at random (seeded) until --chunks chunk texts, made as the
indexer makes them (walk, parse, chunk, chunk_embedding_text), in walk order and in groups of 64
files, each group embedded as index.py's _embed_with_cache does: its distinct texts in slices of
4 x batch, one encode() a slice. A setting is one way to do that (SETTINGS below); all settings run
interleaved (A B C, A B C, ...) --repeats times, and each line gives the median chunks/s (wall), the
median CPU time a chunk (every thread of this process: a steadier figure than wall time when other
processes share the cores), the load average, and the cosine of its vectors to those of `default`
(minimum and mean over the sample; 1.000000 is the same vectors).

It also prints, per ordering, the word pieces the model runs (padding included) against those it
reads: the model's cost is close to proportional to the first.

Settings are named in SETTINGS: `default` is the indexer before issue 22 (torch, batch 64, each
slice sorted by characters inside sentence-transformers); `slices` sorts each slice by word pieces;
`group` orders a group's texts by word pieces before slicing (embed.longest_first); -bN a batch size,
-tN a thread count (torch or ONNX Runtime, set for the run and restored after); `onnx*` is
CODEQA_EMBEDDINGS=local-onnx (fp32) and its int8 precisions (local_onnx.INT8_RECIPES).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.indexing.chunk import chunk_embedding_text  # noqa: E402
from codeqa.config import Settings  # noqa: E402
from codeqa.embed.local import SentenceTransformerEmbedder  # noqa: E402
from codeqa.embed.tokenizer import length_order, longest_first, model_tokenizer  # noqa: E402
from codeqa.indexing.walk import walk_repository  # noqa: E402
from codeqa.indexing.parse_pool import _parse_and_chunk  # noqa: E402

FILE_BATCH = 64  # files a group, as index.py embeds them


@dataclass(frozen=True)
class Setting:
    backend: str = "torch"  # torch | torch-legacy (sentence-transformers' own order) | onnx precision
    order: str = "slices"  # slices: each slice ordered by the encoder; group: longest_first before slicing
    batch: int = 64
    threads: int = 0  # 0: the library's default


SETTINGS = {
    "default": Setting("torch-legacy"),
    "slices": Setting(),
    "group": Setting(order="group"),
    "group-b16": Setting(order="group", batch=16),
    "group-b32": Setting(order="group", batch=32),
    "group-b128": Setting(order="group", batch=128),
    "group-t1": Setting(order="group", threads=1),
    "onnx": Setting("fp32", "group"),
    "onnx-t1": Setting("fp32", "group", threads=1),
    "int8": Setting("int8", "group"),
    "int8-t1": Setting("int8", "group", threads=1),
    "int8-per-tensor": Setting("int8-per-tensor", "group"),
    "int8-keep-ffn-output": Setting("int8-keep-ffn-output", "group"),
}


def sample_groups(project: Path, chunks: int, seed: int) -> tuple[list[list[str]], int]:
    """Chunk texts of files drawn at random until `chunks` texts, in walk order, in groups of 64 files;
    and the number of files."""
    settings = Settings()
    files = walk_repository(project, settings.files_max_bytes).files
    picked: list[tuple[int, list[str]]] = []
    total = 0
    for i in random.Random(seed).sample(range(len(files)), len(files)):
        if total >= chunks:
            break
        parsed, file_chunks = _parse_and_chunk((files[i], settings.chunk_max_chars, settings.chunk_min_chars))
        by_id = {s.id: s for s in parsed.symbols}
        texts = [chunk_embedding_text(c, by_id) for c in file_chunks]
        picked.append((i, texts))
        total += len(texts)
    picked.sort()
    groups = [[t for _, texts in picked[g:g + FILE_BATCH] for t in texts] for g in range(0, len(picked), FILE_BATCH)]
    return groups, len(picked)


def padding(groups: list[list[str]], setting: Setting) -> tuple[int, int]:
    """(word pieces run, word pieces read) when `groups` are embedded the way `setting` orders them."""
    tokenizer = model_tokenizer()
    run = read = 0
    for group in groups:
        texts = list(dict.fromkeys(group))
        pieces = dict(zip(texts, (len(e.ids) for e in tokenizer.encode_batch(texts))))
        read += sum(pieces.values())
        if setting.order == "group":
            texts = longest_first(texts)
        for part in slices(texts, setting.batch):
            if setting.backend == "torch-legacy":  # sentence-transformers: longest in characters first
                part = sorted(part, key=lambda t: -len(t))
            else:
                part = [part[i] for i in length_order(part)]
            for b in range(0, len(part), setting.batch):
                batch = part[b:b + setting.batch]
                run += len(batch) * max(pieces[t] for t in batch)
    return run, read


def slices(texts: list[str], batch: int) -> list[list[str]]:
    step = 4 * batch
    return [texts[s:s + step] for s in range(0, len(texts), step)]


class LegacyEmbedder:
    """The torch encode before issue 22: one sentence-transformers encode() a slice, sorted by characters."""

    def __init__(self, torch_embedder: SentenceTransformerEmbedder):
        self.inner = torch_embedder

    def encode(self, texts, batch_size=64):
        model = self.inner.sentence_transformer()
        return model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False).astype(np.float32)


@contextmanager
def torch_threads(n: int):
    """torch's thread count set for a run and restored after (a benchmark script may; the library does not)."""
    import torch

    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make(setting: Setting, torch_embedder: SentenceTransformerEmbedder):
    if setting.backend == "torch-legacy":
        return LegacyEmbedder(torch_embedder)
    if setting.backend == "torch":
        return torch_embedder
    from codeqa.embed.local_onnx import OnnxEmbedder

    embedder = OnnxEmbedder(precision=setting.backend, threads=setting.threads, cache_dir=Settings.load().onnx_cache)
    embedder.load()  # the export and the quantisation happen here, outside the timing
    return embedder


def embed_like_the_indexer(embedder, groups: list[list[str]], setting: Setting) -> dict[str, np.ndarray]:
    vectors: dict[str, np.ndarray] = {}
    for group in groups:
        texts = list(dict.fromkeys(group))
        if setting.order == "group":
            texts = longest_first(texts)
        for part in slices(texts, setting.batch):
            vectors.update(zip(part, embedder.encode(part, batch_size=setting.batch)))
    return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("project", type=Path)
    parser.add_argument("--chunks", type=int, default=800)
    parser.add_argument("--repeats", type=int, default=3, help="0: print the padding only")
    parser.add_argument("--settings", default="default,slices,group,group-t1,onnx,int8",
                        help=f"comma-separated, `default` first; from: {', '.join(SETTINGS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    names = args.settings.split(",")
    if names[0] != "default" or any(n not in SETTINGS for n in names):
        parser.error(f"--settings: `default` first, then any of {', '.join(SETTINGS)}")
    groups, n_files = sample_groups(args.project, args.chunks, args.seed)
    texts = list(dict.fromkeys(t for g in groups for t in g))
    embedded = sum(len(set(g)) for g in groups)  # what the indexer encodes: each group's distinct texts
    print(f"{args.project.name}: {sum(map(len, groups))} chunk texts ({embedded} to embed) of {n_files} files, in "
          f"{len(groups)} group(s) of <= {FILE_BATCH} files; load {os.getloadavg()[0]:.2f}", flush=True)
    orderings = {}
    for name in ("default", "slices", *names):
        s = SETTINGS[name]
        orderings.setdefault((s.backend == "torch-legacy", s.order, s.batch), name)
    for (legacy, order, batch), name in orderings.items():
        run, read = padding(groups, SETTINGS[name])
        how = "sorted by characters in slices" if legacy else ("by word pieces, " + ("whole groups" if order == "group" else "in slices"))
        print(f"  padding, batch {batch}, {how} ({name}): {run} word pieces run for {read} read "
              f"(+{100 * (run / read - 1):.1f}%)")
    if args.repeats < 1:  # the padding alone (a second, no model)
        return

    torch_embedder = SentenceTransformerEmbedder()
    torch_embedder.load()
    embedders = {name: make(SETTINGS[name], torch_embedder) for name in names}
    rates: dict[str, list[float]] = {n: [] for n in names}
    cpu_ms: dict[str, list[float]] = {n: [] for n in names}
    loads: dict[str, list[float]] = {n: [] for n in names}
    vectors: dict[str, dict[str, np.ndarray]] = {}
    for repeat in range(args.repeats):
        for name in names:
            setting = SETTINGS[name]
            threads = setting.threads if setting.backend.startswith("torch") else 0
            with torch_threads(threads):
                cpu0, wall0 = time.process_time(), time.perf_counter()
                vectors[name] = embed_like_the_indexer(embedders[name], groups, setting)
                wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            rates[name].append(embedded / wall)
            cpu_ms[name].append(1000 * cpu / embedded)
            loads[name].append(os.getloadavg()[0])
            print(f"  run {repeat + 1} {name}: {embedded / wall:.1f} chunks/s, load {loads[name][-1]:.2f}", flush=True)

    reference = np.stack([vectors["default"][t] for t in texts])
    rows = []
    print(f"\n{'setting':22s} {'chunks/s':>9s} {'runs':24s} {'CPU ms/chunk':>12s} {'load':>10s}  "
          f"cosine to default min / mean, largest difference in a coordinate")
    for name in names:
        mine = np.stack([vectors[name][t] for t in texts])
        cos = (mine * reference).sum(axis=1)
        row = {"setting": name, **SETTINGS[name].__dict__, "chunks_per_s": statistics.median(rates[name]),
               "runs": [round(r, 2) for r in rates[name]], "cpu_ms_per_chunk": statistics.median(cpu_ms[name]),
               "load": [round(x, 2) for x in loads[name]], "cos_min": float(cos.min()), "cos_mean": float(cos.mean()),
               "max_abs_diff": float(np.abs(mine - reference).max())}
        rows.append(row)
        print(f"{name:22s} {row['chunks_per_s']:9.1f} {str(row['runs']):24s} {row['cpu_ms_per_chunk']:12.1f} "
              f"{min(loads[name]):4.1f}-{max(loads[name]):<4.1f}  {row['cos_min']:.6f} / {row['cos_mean']:.6f}, "
              f"{row['max_abs_diff']:.1e}")
    if args.json:
        args.json.write_text(json.dumps({"project": args.project.name, "chunks": embedded, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
