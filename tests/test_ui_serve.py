"""`codeqa ui` as a server, tried with real sockets: private by default (127.0.0.1 only), another address only
with a token the page checks, and nothing left serving the port once the command is stopped (issue 37)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


import pytest

from codeqa.cli import main
from test_ui_browser import free_port, stop_group, wait_for_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """An empty repository folder; no proxy between the tests and the local page."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "repo").mkdir()
    return tmp_path / "repo"


def ui_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEQA_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_PROXY="127.0.0.1,localhost")
    return env


def start_ui(tmp_path: Path, repo: Path, *options: str) -> tuple[subprocess.Popen, int, Path]:
    port = free_port()
    log = tmp_path / "ui.log"
    env = ui_env()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ui", "--repo", str(repo), "--port", str(port), *options],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, port, log


def released(port: int, seconds: float = 20) -> bool:
    """Nothing serves `port` on 127.0.0.1 within `seconds`."""
    deadline = time.monotonic() + seconds
    while reachable("127.0.0.1", port) and time.monotonic() < deadline:
        time.sleep(0.3)
    return not reachable("127.0.0.1", port)


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def test_the_page_listens_on_loopback_only_and_stops_with_the_command(tmp_path, repo):
    proc, port, log = start_ui(tmp_path, repo)
    try:
        wait_for_server(proc, port, log)
        assert reachable("127.0.0.1", port)
        assert not reachable("127.0.0.2", port)  # another address of this machine: the page is not bound there
        assert f"codeqa UI on http://localhost:{port}" in log.read_text()
        os.kill(proc.pid, signal.SIGTERM)  # the command alone, not its group: it must stop its child
        proc.wait(timeout=30)
        assert released(port), "the Streamlit child still serves the port"
    finally:
        stop_group(proc)


def test_another_address_needs_a_token(capsys, repo):
    assert main(["ui", "--repo", str(repo), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "--token" in err and "CODEQA_UI_TOKEN" in err and "Traceback" not in err


def test_the_page_stops_when_what_started_it_is_killed(tmp_path, repo):
    # `make run` is the parent of `codeqa ui`, and make does not pass a `kill` on to its recipe
    port = free_port()
    log = tmp_path / "ui.log"
    launcher = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-m', 'codeqa', 'ui', '--repo', "
                f"{str(repo)!r}, '--port', '{port}'], stdout=open({str(log)!r}, 'w'), stderr=subprocess.STDOUT); "
                "time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", launcher], cwd=ROOT, env=ui_env(), start_new_session=True)
    try:
        wait_for_server(parent, port, log)
        parent.kill()  # the parent alone, as `kill` of make does
        parent.wait(timeout=10)
        assert released(port), "the page outlived what started it"
    finally:
        stop_group(parent)
