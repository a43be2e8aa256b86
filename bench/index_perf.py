"""Indexing figures on any repository: graph files/s, embedding chunks/s, full-index wall time,
peak memory, index size, then no-change and one-changed-file re-index times (each in a fresh
process, model load included, as a user runs them).

    python bench/index_perf.py REPO [--index-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_index(repo: Path, index_dir: Path, *extra: str) -> tuple[dict, float, float]:
    """(summary, wall seconds, peak RSS MB) of `python -m codeqa index` in a child process."""
    code = ("import resource, runpy, sys; sys.argv = ['codeqa'] + sys.argv[1:];\n"
            "try:\n    runpy.run_module('codeqa', run_name='__main__')\n"
            "finally:\n    print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, "index", str(repo), "--index-dir", str(index_dir), "--json", *extra],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    peak = next((int(line.split()[1]) / 1024 for line in proc.stderr.splitlines() if line.startswith("PEAK_RSS_KB")), 0.0)
    return json.loads(proc.stdout), wall, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeqa-perf-") as tmp:
        repo = Path(tmp) / args.repo.name
        shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".codeqa"))
        index_dir = args.index_dir or Path(tmp) / "index"
        full, wall, peak = run_index(repo, index_dir, "--full")
        print(f"full index: {wall:.1f}s wall, peak RSS {peak:.0f} MB, {full['files']} files, {full['chunks']} chunks, "
              f"{full['symbols']} symbols, {full['references']} references, index {full['index_bytes'] / 1e6:.1f} MB")
        print(f"  graph stage {full['graph_seconds']:.2f}s = {full['graph_files_per_second']:.0f} files/s; "
              f"embedding {full['embedding_seconds']:.1f}s = {full['chunks_per_second']:.0f} chunks/s")
        same, wall_same, _ = run_index(repo, index_dir)
        print(f"no-change re-index: {wall_same:.2f}s wall (model loaded: {same['model_loaded']}; target < 3 s)")
        target = next(p for p in sorted(repo.rglob("*.py")) if ".codeqa" not in p.parts)
        target.write_text(target.read_text() + "\n\ndef added_by_benchmark():\n    return 1\n")
        one, wall_one, _ = run_index(repo, index_dir)
        print(f"one changed file: {wall_one:.2f}s wall, {one['files_changed']} file(s) re-done (target < 15 s)")


if __name__ == "__main__":
    main()
