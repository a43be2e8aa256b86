"""Graph-stage speed (issue 2): parse + chunk + resolve of a whole repository, as a fresh index run
does them (forked parse workers from 48 files on Linux), without embedding or storing anything.
Each run is a fresh process, so the query compile and the worker start are counted every time.

    python bench/graph_speed.py REPO [REPO ...] [--runs 3]

Prints one line per run (files, parse and resolve seconds, files/s) and the range per repository.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE_RUN = """
import json, sys, tempfile, time
from pathlib import Path
from codeqa import index
from codeqa.config import Settings
from codeqa.files import walk_repository
from codeqa.graph import resolve_references

files = walk_repository(Path(sys.argv[1])).files
with tempfile.TemporaryDirectory() as cache:
    t0 = time.perf_counter()
    parsed = [pf for pf, _ in index._parse_and_chunk_all(files, Settings(), Path(cache))]
    t1 = time.perf_counter()
    with index._gc_paused():
        references = resolve_references(parsed)
    t2 = time.perf_counter()
print(json.dumps({"files": len(files), "parse_seconds": t1 - t0, "resolve_seconds": t2 - t1,
                  "references": len(references), "files_per_second": len(files) / (t2 - t0)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for repo in args.repos:
        speeds = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", ONE_RUN, str(repo)], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            speeds.append(run["files_per_second"])
            print(f"{repo.name:24s} {run['files']:5d} files  parse {run['parse_seconds']:.3f} s  "
                  f"resolve {run['resolve_seconds']:.3f} s  {run['files_per_second']:.0f} files/s", flush=True)
        print(f"{repo.name:24s} {min(speeds):.0f}-{max(speeds):.0f} files/s over {args.runs} runs")


if __name__ == "__main__":
    main()
