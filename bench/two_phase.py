"""The two phases of `codeqa index` on a big tree, as a user meets them (issue: big repositories).

    python bench/two_phase.py REPO --index-dir DIR [--queries 30] [--phase2-minutes M] [--json OUT]

1. `codeqa index REPO --defer-embeddings --json` in a child process: phase 1 wall time, files/s, the
   peak RSS of its process tree (sampled from /proc every 0.2 s: the main process plus its parse
   workers) and of the main process alone (getrusage).
2. The first search, cold, from the command line (`codeqa search ... --json` in a fresh process), and
   `codeqa refs` on the most used symbol: what a user waits for right after phase 1.
3. Search latency over phase-1 data, in process (one Retriever, warm): p50 / p90 over N queries, half
   first docstring lines and half symbol names sampled (seeded) from the index itself.
4. Before and after, the seconds a fixed one-core Python loop takes (machine_loop_s): a shared
   machine's speed swings, and runs compare only where it agrees.
5. With --phase2-minutes M (> 0): `codeqa index REPO` (phase 2) for up to M minutes, then SIGINT as a
   user's Ctrl-C; chunks embedded and chunks/s, then the same queries again (semantic share, latency).
   Without a limit (M < 0) phase 2 runs to the end and its wall time is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codeqa.config import Settings  # noqa: E402
from codeqa.query.retrieve import Retriever  # noqa: E402


def machine_loop_s() -> float:
    """Seconds for a fixed one-core Python loop: this machine's speed when a run starts and ends.

    A shared VM's speed swings within the hour (site-packages, the same code: 475.7 s and 687.7 s;
    a loop like this one, at module level, 3.0 s and 5.9 s around them), so only runs whose loop times agree compare."""
    start = time.perf_counter()
    total = 0
    for i in range(20_000_000):
        total += i * i % 7
    return round(time.perf_counter() - start, 2)


def _env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


def _tree_rss_kb(pid: int) -> int:
    """RSS of a process and all its descendants, from /proc (0 once it is gone)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def run_codeqa(args: list[str], limit_seconds: float | None = None) -> dict:
    """Run `python -m codeqa ARGS` in a child: wall time, stdout, peak tree RSS and main-process RSS (MB)."""
    code = ("import resource, runpy, sys; sys.argv = ['codeqa'] + sys.argv[1:];\n"
            "try:\n    runpy.run_module('codeqa', run_name='__main__')\n"
            "finally:\n    print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    interrupted = False
    try:
        out, err = proc.communicate(timeout=limit_seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # a user's Ctrl-C
        interrupted = True
        out, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    if proc.returncode != 0 and not interrupted:
        raise SystemExit(f"codeqa {' '.join(args)} failed:\n{err[-3000:]}")
    main_kb = next((int(line.split()[1]) for line in err.splitlines() if line.startswith("PEAK_RSS_KB")), 0)
    return {"wall": wall, "stdout": out, "stderr": err, "peak_tree_mb": peak[0] / 1024, "peak_main_mb": main_kb / 1024,
            "interrupted": interrupted}


def sample_queries(retriever: Retriever, count: int, seed: int = 7) -> list[str]:
    """Half first docstring lines (prose), half symbol names (identifiers), sampled from the index."""
    symbols = list(retriever.store.all_symbols())
    rng = random.Random(seed)
    documented = [s for s in symbols if s.docstring and len(s.docstring.split()) >= 5 and s.kind != "module"]
    prose = [" ".join(s.docstring.split("\n\n")[0].split())[:200] for s in rng.sample(documented, min(count // 2, len(documented)))]
    names = [s.name for s in rng.sample(symbols, min(count - len(prose), len(symbols)))]
    return prose + names


def latency(repo: Path, settings: Settings, queries: list[str]) -> dict:
    with Retriever.open(repo, settings) as retriever:
        coverage = retriever.semantic_coverage()
        times = []
        for q in queries:
            t0 = time.perf_counter()
            retriever.search(q, top_k=10)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"queries": len(times), "p50_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))],
            "semantic": coverage}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--phase2-minutes", type=float, default=0.0)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    repo, index_dir = args.repo.resolve(), args.index_dir.resolve()
    common = ["--index-dir", str(index_dir)]
    figures: dict = {"repo": str(repo), "load_before": os.getloadavg(), "machine_loop_before_s": machine_loop_s()}
    print(f"this machine's speed now: {figures['machine_loop_before_s']} s for the reference loop", flush=True)

    one = run_codeqa(["index", str(repo), *common, "--defer-embeddings", "--json", "--full"])
    report = json.loads(one["stdout"])
    figures["phase1"] = {"wall_s": round(one["wall"], 1), "searchable_s": report["searchable_seconds"],
                         "files": report["files"], "files_per_s": round(report["files"] / one["wall"], 1),
                         "graph_s": report["graph_seconds"], "chunks": report["chunks"], "symbols": report["symbols"],
                         "references": report["references"], "peak_tree_rss_mb": round(one["peak_tree_mb"]),
                         "peak_main_rss_mb": round(one["peak_main_mb"]), "index_mb": round(report["index_bytes"] / 1e6, 1),
                         "skipped": report["skipped_by_reason"]}
    print(f"phase 1: {one['wall']:.1f}s wall ({figures['phase1']['files_per_s']} files/s), {report['files']} files, "
          f"{report['chunks']} chunks, {report['symbols']} symbols, {report['references']} references; peak RSS "
          f"{one['peak_tree_mb']:.0f} MB (process tree), {one['peak_main_mb']:.0f} MB (main); index "
          f"{figures['phase1']['index_mb']} MB", flush=True)

    settings = Settings.load(index_dir=index_dir)
    with Retriever.open(repo, settings) as retriever:
        queries = sample_queries(retriever, args.queries)
        common_symbol = (retriever.store.read_meta().get("most_used") or ["main"])[0]
    first = run_codeqa(["search", queries[0], "--repo", str(repo), *common, "--json"])
    refs = run_codeqa(["refs", common_symbol, "--repo", str(repo), *common, "--json"])
    refs_found = json.loads(refs["stdout"])
    sites = len(refs_found.get("references", []))
    figures["first_search_cold_s"] = round(first["wall"], 2)
    figures["until_first_answer_s"] = round(one["wall"] + first["wall"], 1)
    figures["refs"] = {"symbol": common_symbol, "cold_s": round(refs["wall"], 2), "sites": sites}
    print(f"first search (cold CLI): {first['wall']:.2f}s -> searchable and answered {figures['until_first_answer_s']}s "
          f"after the start; refs {common_symbol}: {refs['wall']:.2f}s cold ({sites} sites)", flush=True)
    figures["search_phase1"] = latency(repo, settings, queries)
    print(f"search over phase-1 data, warm: p50 {figures['search_phase1']['p50_ms']:.1f} ms, "
          f"p90 {figures['search_phase1']['p90_ms']:.1f} ms ({len(queries)} queries)", flush=True)

    if args.phase2_minutes:
        limit = args.phase2_minutes * 60 if args.phase2_minutes > 0 else None
        two = run_codeqa(["index", str(repo), *common, "--json"], limit)
        with Retriever.open(repo, settings) as retriever:
            coverage = retriever.semantic_coverage()
            chunks = int(retriever.store.read_meta().get("chunks") or 0)
        embedded = round(coverage * chunks)
        figures["phase2"] = {"wall_s": round(two["wall"], 1), "stopped_by_ctrl_c": two["interrupted"],
                             "chunks_embedded": embedded, "chunks": chunks,
                             "chunks_per_s": round(embedded / two["wall"], 1) if two["wall"] else 0.0,
                             "peak_tree_rss_mb": round(two["peak_tree_mb"])}
        print(f"phase 2: {two['wall']:.1f}s wall{' (then Ctrl-C)' if two['interrupted'] else ''}, {embedded} of "
              f"{chunks} chunks embedded ({figures['phase2']['chunks_per_s']} chunks/s incl. model load), peak RSS "
              f"{two['peak_tree_mb']:.0f} MB", flush=True)
        figures["search_after_phase2"] = latency(repo, settings, queries)
        print(f"search after phase 2 (semantic {figures['search_after_phase2']['semantic']:.0%}): p50 "
              f"{figures['search_after_phase2']['p50_ms']:.1f} ms", flush=True)
    figures["load_after"] = os.getloadavg()
    figures["machine_loop_after_s"] = machine_loop_s()
    print(f"this machine's speed at the end: {figures['machine_loop_after_s']} s for the reference loop", flush=True)
    figures["max_rss_this_process_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
