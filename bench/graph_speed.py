"""Graph-stage speed (issue 2), two ways, each run in a fresh process:

- index: a real `index_repo(--full)` into a temporary index directory, the figure its summary prints
  (parse + chunk + resolve, not the store writes). The parse workers start before the store opens
  and compile their queries meanwhile, so the compile is not on the graph stage's way. Embedding is
  done by a constant stand-in: the model's time is not part of this stage, and a real one would
  make each run a minute long.
- cold: `index.graph_stage` alone (parse + chunk + resolve), the workers started (and the queries
  compiled) inside the measured time: what the stage costs with nothing to hide the compile behind.

    python bench/graph_speed.py REPO [REPO ...] [--runs 3]

Prints one line per run and the range per repository, for each way.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COLD_RUN = """
import json, sys, tempfile, time
from pathlib import Path
from codeqa.indexing import index
from codeqa.config import Settings
from codeqa.indexing.walk import walk_repository
from codeqa.indexing.parse_cache import ParseCache

files = walk_repository(Path(sys.argv[1])).files
with tempfile.TemporaryDirectory() as cache:
    parse_cache = ParseCache(Path(cache) / "parsed.sqlite")
    t0 = time.perf_counter()
    _, parsed, update = index.graph_stage(files, files, Settings(), parse_cache, "bench")
    references = update.references
    seconds = time.perf_counter() - t0
    parse_cache.close()
print(json.dumps({"files": len(files), "seconds": seconds, "detail": f"{len(references)} references"}))
"""

INDEX_RUN = """
import json, sys, tempfile
import numpy as np
from pathlib import Path
from codeqa.config import Settings
from codeqa.indexing.index import index_repo

class ConstantEmbedder:
    model_id, dimension = "constant", 8
    def encode(self, texts, batch_size=64):
        return np.full((len(texts), 8), 8 ** -0.5, dtype="float32")

with tempfile.TemporaryDirectory() as index_dir:
    report = index_repo(Path(sys.argv[1]), Settings(index_dir=Path(index_dir)), full=True, embedder=ConstantEmbedder())
print(json.dumps({"files": report.files_changed, "seconds": report.graph_seconds,
                  "detail": f"whole run {report.elapsed_seconds:.2f} s"}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for repo in args.repos:
        for way, script in (("index", INDEX_RUN), ("cold", COLD_RUN)):
            speeds = []
            for _ in range(args.runs):
                out = subprocess.run([sys.executable, "-c", script, str(repo)], cwd=ROOT, capture_output=True,
                                     text=True, check=True).stdout
                run = json.loads(out.strip().splitlines()[-1])
                speeds.append(run["files"] / run["seconds"])
                print(f"{repo.name:22s} {way:5s} {run['files']:5d} files  {run['seconds']:.3f} s  "
                      f"{speeds[-1]:4.0f} files/s  ({run['detail']})", flush=True)
            print(f"{repo.name:22s} {way:5s} {min(speeds):.0f}-{max(speeds):.0f} files/s over {args.runs} runs")


if __name__ == "__main__":
    main()
