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


from codeqa.cli import main
from test_ui_browser import free_port, stop_group, wait_for_server

ROOT = Path(__file__).resolve().parent.parent


def start_ui(tmp_path: Path, repo: Path, *options: str) -> tuple[subprocess.Popen, int, Path]:
    port = free_port()
    log = tmp_path / "ui.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEQA_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_PROXY="127.0.0.1,localhost")
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ui", "--repo", str(repo), "--port", str(port), *options],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, port, log


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def test_the_page_listens_on_loopback_only_and_stops_with_the_command(tmp_path, monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    proc, port, log = start_ui(tmp_path, repo)
    try:
        wait_for_server(proc, port, log)
        assert reachable("127.0.0.1", port)
        assert not reachable("127.0.0.2", port)  # another address of this machine: the page is not bound there
        assert f"codeqa UI on http://localhost:{port}" in log.read_text()
        os.kill(proc.pid, signal.SIGTERM)  # the command alone, as `kill` of `make run` does: it must stop its child
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while reachable("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not reachable("127.0.0.1", port), "the Streamlit child still serves the port"
    finally:
        stop_group(proc)


def test_another_address_needs_a_token(capsys, tmp_path):
    assert main(["ui", "--repo", str(tmp_path), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "--token" in err and "CODEQA_UI_TOKEN" in err and "Traceback" not in err


def test_the_page_stops_when_what_started_it_is_killed(tmp_path, monkeypatch):
    # `make run` is the parent of `codeqa ui`, and make does not pass a `kill` on to its recipe
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    port = free_port()
    log = tmp_path / "ui.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEQA_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_PROXY="127.0.0.1,localhost")
    launcher = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-m', 'codeqa', 'ui', '--repo', "
                f"{str(repo)!r}, '--port', '{port}'], stdout=open({str(log)!r}, 'w'), stderr=subprocess.STDOUT); "
                "time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", launcher], cwd=ROOT, env=env, start_new_session=True)
    try:
        wait_for_server(parent, port, log)
        parent.kill()  # the parent alone, as `kill` of make does
        parent.wait(timeout=10)
        deadline = time.monotonic() + 20
        while reachable("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not reachable("127.0.0.1", port), "the page outlived what started it"
    finally:
        stop_group(parent)
