"""Cold CLI commands, process start included: `search`, `ask --no-llm` (a usage and a search question) and
`refs`, each run REPEAT times in a fresh process, median reported, with the load average beside it.

    python bench/cold_commands.py REPO --index-dir DIR --search Q --usage Q --question Q --symbol NAME \
        [--checkout PATH ...] [--env NAME=VALUE ...] [--repeat 5]

Each --checkout is a codeqa source tree (e.g. a worktree of main as "before" and this one as "after");
the commands of all checkouts alternate run by run, so they see the same load. An --env label=NAME=VALUE
adds a row for this checkout with that setting (e.g. onnx=CODEQA_EMBEDDINGS=local-onnx). Prints JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--index-dir", type=Path, required=True)
    ap.add_argument("--search", required=True)
    ap.add_argument("--usage", required=True, help="an ask --no-llm question the usage route answers")
    ap.add_argument("--question", required=True, help="an ask --no-llm question the search route answers")
    ap.add_argument("--symbol", required=True)
    ap.add_argument("--checkout", action="append", type=Path, default=[])
    ap.add_argument("--env", action="append", default=[], help="label=NAME=VALUE: another row, this checkout")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    where = ["--repo", str(args.repo), "--index-dir", str(args.index_dir)]
    commands = {"search": ["search", args.search, *where], "ask usage": ["ask", args.usage, "--no-llm", *where],
                "ask search": ["ask", args.question, "--no-llm", *where], "refs": ["refs", args.symbol, *where]}
    base = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    base.pop("OPENAI_BASE_URL", None)
    variants = [(c.name, c.resolve(), {}) for c in (args.checkout or [Path(__file__).resolve().parent.parent])]
    for spec in args.env:
        label, assignment = spec.split("=", 1)
        name, value = assignment.split("=", 1)
        variants.append((label, variants[-1][1], {name: value}))
    times: dict[tuple[str, str], list[float]] = {}
    loads: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeat):
        for command, argv in commands.items():
            for label, checkout, extra in variants:
                env = {**base, **extra, "PYTHONPATH": str(checkout)}
                loads.setdefault((label, command), []).append(_load())
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "codeqa", *argv], cwd=checkout, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                times.setdefault((label, command), []).append(time.perf_counter() - start)
                if done.returncode != 0:
                    raise SystemExit(f"{label} {command}: exit {done.returncode}\n{done.stderr[-2000:]}")
    for (label, command), runs in times.items():
        load = loads[(label, command)]
        print(json.dumps({"repo": args.repo.name, "variant": label, "command": command,
                          "median_s": round(statistics.median(runs), 2), "runs_s": [round(r, 2) for r in runs],
                          "load": f"{min(load):.1f}-{max(load):.1f}"}))


if __name__ == "__main__":
    main()
