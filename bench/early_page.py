"""Time from Enter to the first cited line on the chat page, with a chat model configured: `codeqa ui` on an
indexed project, driven by Chromium (playwright), a fresh page per question, SWE-QA development questions.

    OPENAI_BASE_URL=http://127.0.0.1:18080/v1 OPENAI_API_KEY=none CODEQA_MODEL=qwen2.5-coder-1.5b \
    python bench/early_page.py --project streamlink-8.6.3 --per-project 10 [--screenshot OUT.png]

Per question: type it, press Enter, and wait for the first citation chip (`a.cq-chip`: the answer found in
the code comes with its chips before the model's first word). The page is then closed, which stops that
session's run. Prints each time, then median and p90. `--screenshot` saves the page of the first question
once its chip is shown. Needs Chromium at /usr/bin/chromium (`apt-get install -y chromium`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_answers import open_project  # noqa: E402
from qa_harness import INDEX_ROOT  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"codeqa ui exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"codeqa ui did not answer on port {port} within {timeout:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", required=True)
    parser.add_argument("--per-project", type=int, default=10)
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args(argv)
    if not os.environ.get("OPENAI_BASE_URL"):
        parser.error("set OPENAI_BASE_URL (and CODEQA_MODEL) to a chat server: the early answer is an LLM answer's")
    from playwright.sync_api import sync_playwright

    repo, name, questions, _ = open_project(args.project)
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost"}
    proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ui", "--repo", str(repo), "--index-dir",
                             str(INDEX_ROOT / args.project), "--port", str(port), "--no-browser"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    times: list[float] = []
    try:
        _wait(port, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                for number, q in enumerate(questions[:args.per_project]):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
                    box = page.get_by_test_id("stChatInputTextArea")
                    box.wait_for(timeout=120_000)
                    box.fill(q["question"])
                    started = time.perf_counter()
                    page.keyboard.press("Enter")
                    try:
                        page.locator("a.cq-chip").first.wait_for(timeout=120_000)
                    except Exception:
                        page.screenshot(path="/tmp/early_page_fail.png")
                        raise
                    seconds = time.perf_counter() - started
                    times.append(seconds)
                    print(json.dumps({"project": name, "number": number, "first_chip_s": round(seconds, 2),
                                      "load": round(os.getloadavg()[0], 2)}), file=sys.stderr, flush=True)
                    if args.screenshot and number == 0:
                        page.screenshot(path=str(args.screenshot))
                    page.close()
            finally:
                browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    times.sort()
    print(json.dumps({"questions": len(times), "median_s": round(statistics.median(times), 2),
                      "p90_s": round(times[min(len(times) - 1, round(0.9 * (len(times) - 1)))], 2),
                      "max_s": round(times[-1], 2)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
