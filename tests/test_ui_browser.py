"""End to end in a real browser: `codeqa ui` on an indexed copy of the fixture repo, a question typed on the
keyboard in Debian's Chromium (Playwright's own browser download needs the network), a cited answer."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from conftest import copy_fixture_repo

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
CHIP = re.compile(r"^[✓✗] (?P<path>\S+):L(?P<start>\d+)(?:-L(?P<end>\d+))?$")

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                              "(`apt-get install -y chromium`; .ci/run does it)")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(proc: subprocess.Popen, port: int, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"codeqa ui exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"codeqa ui did not answer on port {port} within {timeout:.0f}s:\n{log.read_text()}")


@contextmanager
def serving(repo: Path, tmp_path: Path, embedder, monkeypatch, **extra_env: str):
    """`codeqa ui` as a subprocess on a free port, on `repo` once indexed; always stopped. Yields (url, log)."""
    index_repo(repo, Settings.load(env={}), embedder=embedder)  # closes its Qdrant client: the server opens its own
    port = free_port()
    log = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEQA_"))}
    env.update(PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_PROXY="127.0.0.1,localhost", **extra_env)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # urllib must reach the local server
        monkeypatch.delenv(var, raising=False)
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ui", "--repo", str(repo), "--port", str(port)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_server(proc, port, log)
        yield f"http://127.0.0.1:{port}/", log
    finally:
        stop_group(proc)


@pytest.fixture
def ui_server(tmp_path, embedder, monkeypatch):
    """`codeqa ui` on an indexed temp copy of the fixture repo."""
    repo = copy_fixture_repo(tmp_path / "repo")
    with serving(repo, tmp_path, embedder, monkeypatch) as (url, log):
        yield repo, url, log


def stop_group(proc: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM to the server's own process group (codeqa ui and the streamlit it started), SIGKILL when it lingers."""
    def alive() -> bool:
        try:
            os.killpg(proc.pid, 0)
            return True
        except ProcessLookupError:
            return False

    if alive():
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive() and time.monotonic() < deadline:
        proc.poll()  # reap codeqa ui so the group can empty
        time.sleep(0.2)
    if alive():
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=timeout)


def test_question_typed_in_chromium_gets_a_cited_answer(ui_server, tmp_path):
    from playwright.sync_api import sync_playwright

    repo, url, log = ui_server
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\nscreenshots: {shots}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url, timeout=120_000)
            box = page.get_by_test_id("stChatInputTextArea")
            box.wait_for(timeout=120_000)
            page.screenshot(path=str(shots / "1-start.png"))
            box.click()
            page.keyboard.type("How is EncoderClass used?", delay=15)
            started = time.monotonic()
            page.keyboard.press("Enter")
            chip = page.locator("a.cq-chip").first
            chip.wait_for(timeout=120_000)
            print(f"answer with a citation {time.monotonic() - started:.1f}s after Enter")
            page.screenshot(path=str(shots / "2-answer.png"))
            chips = [c.inner_text().strip() for c in page.locator("a.cq-chip").all()]
            cited = [CHIP.match(c) for c in chips]
            assert cited and all(cited), chips
            for m in cited:
                lines = (repo / m["path"]).read_text().splitlines()
                assert 1 <= int(m["start"]) <= int(m["end"] or m["start"]) <= len(lines), m.group(0)
            assert any(m["path"] == "encoders/encoder.py" and label.startswith("✓") for m, label in zip(cited, chips))
            chip.click()  # a citation opens its code
            code = page.locator(".cq-code").first
            code.wait_for(state="visible", timeout=10_000)
            assert "class EncoderClass" in code.inner_text()
            page.wait_for_timeout(600)  # the expander animates open
            page.screenshot(path=str(shots / "3-citation-opened.png"))
            assert "Traceback" not in page.content()
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()


LONG_RUNNER = ('"""Runs every step, then encodes."""\n\nfrom encoders.encoder import EncoderClass\n\n\n'
               "def run_every_step(texts):\n"
               '    """Sixty steps, then the encoder: its use lies far below the function\'s first line."""\n'
               "    total = 0\n" + "".join(f"    total += len(texts) * {i}  # step {i}\n" for i in range(1, 61))
               + "    encoder = EncoderClass(dim=total % 7 + 1)\n    return encoder.encode(' '.join(texts))\n")


def test_a_chip_lands_on_its_lines_and_no_suggestion_waits_in_the_question(tmp_path, embedder, monkeypatch, llm_stub):
    """A chip citing a line far down a long snippet scrolls that line into view and lights it; while the first
    answer is written, no "Try:" suggestion shows (faded) inside the question's bubble."""
    from playwright.sync_api import sync_playwright
    from llm_stub import Reply

    repo = copy_fixture_repo(tmp_path / "repo")
    (repo / "app" / "long_runner.py").write_text(LONG_RUNNER, encoding="utf-8")
    use_line = LONG_RUNNER.splitlines().index("    encoder = EncoderClass(dim=total % 7 + 1)") + 1
    shots = Path(os.environ.get("CODEQA_SHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {shots}")
    llm_stub.script(Reply(f"It adds up sixty steps, then builds the encoder at `app/long_runner.py:L{use_line}`."))
    # evidence enough for the whole long function, so that its code view must scroll down to the cited line
    llm = {"OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "CODEQA_MODEL": "stub-model",
           "CODEQA_CONTEXT_TOKENS": "6000"}
    with serving(repo, tmp_path, embedder, monkeypatch, **llm) as (url, log), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url, timeout=120_000)
            page.locator(".st-key-example-0").wait_for(timeout=120_000)  # the intro with its suggestions
            page.screenshot(path=str(shots / "1-intro.png"))
            box = page.get_by_test_id("stChatInputTextArea")
            box.click()
            page.keyboard.type("What does run_every_step do?", delay=10)
            page.keyboard.press("Enter")
            page.get_by_test_id("stChatMessageAvatarUser").wait_for(timeout=60_000)  # the question's bubble is drawn
            chip = page.locator("a.cq-chip", has_text=f"app/long_runner.py:L{use_line}")
            seen_during = []
            while not chip.count():  # the first answer loads the model: seconds in which the old intro could linger
                seen_during.append(page.locator(".st-key-example-0").count())
                if len(seen_during) == 3:
                    page.screenshot(path=str(shots / "2-while-answering.png"))
                page.wait_for_timeout(150)
                assert len(seen_during) < 800, "no chip for the long function's use"
            assert not any(seen_during), seen_during
            page.screenshot(path=str(shots / "3-answer.png"))
            chip.first.click()
            target = page.locator(f"[id$='-line-{use_line}'].cq-focus")
            target.wait_for(timeout=10_000)
            in_view = False
            for _ in range(40):  # the expander opens and grows; a busy machine lays it out late
                page.wait_for_timeout(250)
                in_view = target.evaluate("""line => {
                    const r = line.getBoundingClientRect(), code = line.closest('.cq-code').getBoundingClientRect();
                    return r.top >= Math.max(0, code.top) && r.bottom <= Math.min(window.innerHeight, code.bottom);
                }""")
                if in_view:
                    break
            page.screenshot(path=str(shots / "4-chip-opened.png"))
            assert in_view, "the cited line is not scrolled into view"
            assert "EncoderClass(dim=total" in target.inner_text()
            view = target.locator("xpath=ancestor::div[contains(@class, 'cq-code')]")
            assert view.evaluate("code => code.scrollTop") > 0  # the view starts far above the cited line
            assert "Traceback" not in page.content()
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()


def test_the_answer_found_in_the_code_shows_its_chips_while_the_model_is_silent(tmp_path, embedder, monkeypatch,
                                                                                  llm_stub):
    """Issue 65: with a model that has not said a word, the page already shows the answer found in the code,
    with its citation chips (✓ on the definition), under a heading that says it is not the model's."""
    from playwright.sync_api import sync_playwright
    from llm_stub import Reply

    repo = copy_fixture_repo(tmp_path / "repo")
    llm_stub.script(Reply("never sent", stall_after=0))  # the model reads for ever
    llm = {"OPENAI_BASE_URL": llm_stub.base_url, "OPENAI_API_KEY": "test-key", "CODEQA_MODEL": "stub-model"}
    with serving(repo, tmp_path, embedder, monkeypatch, **llm) as (url, log), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url, timeout=120_000)
            box = page.get_by_test_id("stChatInputTextArea")
            box.wait_for(timeout=120_000)
            box.click()
            page.keyboard.type("How is EncoderClass used?", delay=10)
            page.keyboard.press("Enter")
            chip = page.locator("a.cq-chip", has_text="encoders/encoder.py")
            chip.first.wait_for(timeout=120_000)
            assert chip.first.inner_text().strip().startswith("✓")
            assert page.get_by_text("Found in the code (not the model's answer").count()
            assert "never sent" not in page.content()
        finally:
            browser.close()
    assert "Traceback" not in log.read_text()
