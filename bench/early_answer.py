"""Time to the first cited line on screen: `codeqa ask` with a chat model configured, in a fresh process per
question (process start included, as a user pressing Enter sees it), SWE-QA development questions.

    OPENAI_BASE_URL=http://127.0.0.1:18080/v1 OPENAI_API_KEY=none CODEQA_MODEL=qwen2.5-coder-1.5b \
    python bench/early_answer.py --project streamlink-8.6.3 --per-project 20 [--wait-model] [--json OUT]

Per question it reads `ask`'s stdout line by line and notes when the first line came (the heading of the
answer found in the code), when its first citation line came (` ✓ path:Lx-Ly ...`), and, with
`--wait-model`, when the model's answer began (its first line of text after "The model's answer"). Without
`--wait-model` the process is stopped with SIGINT once the first citation is shown (what a user who read
enough does; `ask` exits 130), so the model is barely asked. Prints median and p90 of each, and the load.

Projects are unpacked sdists under $CODEQA_BENCH_DATA, indexed as bench/qa_harness.py does.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_answers import open_project  # noqa: E402
from qa_harness import INDEX_ROOT  # noqa: E402

CITATION_MARKS = ("✓", "!", "·", "✗", "~")


def run_one(question: str, repo: Path, index_dir: Path, wait_model: bool) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "codeqa", "ask", question, "--repo", str(repo), "--index-dir", str(index_dir)]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            cwd=Path(__file__).resolve().parent.parent)
    first_line = first_citation = model_first = None
    in_model = False
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.perf_counter() - started
        text = line.strip()
        if first_line is None and text:
            first_line = now
        if first_citation is None and text[:1] in CITATION_MARKS and ":L" in text:
            first_citation = now
            if not wait_model:
                proc.send_signal(signal.SIGINT)
                break
        if text.startswith("The model's answer"):
            in_model = True
        elif in_model and text and model_first is None:
            model_first = now
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    return {"first_line_s": first_line, "first_citation_s": first_citation, "model_first_s": model_first,
            "exit": code, "load": round(os.getloadavg()[0], 2)}


def _stats(values: list[float]) -> dict:
    values = sorted(v for v in values if v is not None)
    if not values:
        return {"n": 0}
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return {"n": len(values), "median": round(statistics.median(values), 2), "p90": round(p90, 2),
            "max": round(values[-1], 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", required=True)
    parser.add_argument("--per-project", type=int, default=20)
    parser.add_argument("--wait-model", action="store_true", help="also wait for the model's first line")
    parser.add_argument("--json", type=Path, help="write every run's row here (JSON lines)")
    args = parser.parse_args(argv)
    if not os.environ.get("OPENAI_BASE_URL"):
        parser.error("set OPENAI_BASE_URL (and CODEQA_MODEL) to a chat server: the early answer is an LLM answer's")
    rows = []
    for project in args.project:
        repo, name, questions, _ = open_project(project)
        for number, q in enumerate(questions[:args.per_project]):
            row = {"project": name, "number": number,
                   **run_one(q["question"], repo, INDEX_ROOT / project, args.wait_model)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            if args.json:
                with args.json.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    print(json.dumps({key: _stats([r[key] for r in rows]) for key in ("first_line_s", "first_citation_s", "model_first_s")}
                     | {"load_median": statistics.median(r["load"] for r in rows)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
