"""`codeqa ui` answers only requests addressed to it (issue 63): a DNS-rebinding page, whose requests carry its own
name in `Host`, gets 403 for the page and for the websocket, on loopback too, as Jupyter does; and the page never
imports a module from the working folder it was started in, on any supported Python."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time

import pytest

from codeqa.cli import main
from codeqa.ui.hosts import host_allowed, origin_allowed
from test_ui_browser import free_port, stop_group, wait_for_server
from test_ui_serve import start_ui, ui_env



def raw(port: int, host: str, path: str = "/", origin: str | None = None, upgrade: bool = False) -> int:
    """The status line's code for one request sent as written: `Host` is whatever the test says, as a browser
    that resolved attacker.example to 127.0.0.1 would send it."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Connection: " + ("Upgrade" if upgrade else "close")]
    if upgrade:
        lines += ["Upgrade: websocket", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode()]
    if origin:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n" not in head:
            data = conn.recv(4096)
            if not data:
                break
            head += data
    return int(head.split(b" ", 2)[1])


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """One `codeqa ui` on a free loopback port for the module's requests; always stopped."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        os.environ.pop(var, None)
    tmp = tmp_path_factory.mktemp("hosts")
    (tmp / "repo").mkdir()
    proc, port, log = start_ui(tmp, tmp / "repo")
    try:
        wait_for_server(proc, port, log)
        yield port
    finally:
        stop_group(proc)


def test_the_page_and_its_websocket_answer_their_own_names(page):
    for host in (f"127.0.0.1:{page}", f"localhost:{page}", f"LOCALHOST:{page}", "localhost", f"127.0.0.2:{page}"):
        assert raw(page, host) == 200, host
    assert raw(page, f"localhost:{page}", "/_stcore/stream", origin=f"http://localhost:{page}", upgrade=True) == 101


def test_a_rebinding_name_gets_neither_the_page_nor_the_websocket(page):
    assert raw(page, f"attacker.example:{page}") == 403
    assert raw(page, f"attacker.example:{page}", "/_stcore/health") == 403
    assert raw(page, f"attacker.example:{page}", "/_stcore/stream", upgrade=True) == 403  # not 101
    assert raw(page, f"attacker.example:{page}", "/_stcore/stream", origin=f"http://attacker.example:{page}",
               upgrade=True) == 403
    assert raw(page, f"localhost.attacker.example:{page}") == 403
    assert raw(page, f"attacker.example@localhost:{page}") == 403


def test_a_foreign_origin_is_refused_even_with_a_good_host(page):
    good = f"127.0.0.1:{page}"
    assert raw(page, good, origin="http://attacker.example") == 403
    assert raw(page, good, "/_stcore/stream", origin=f"http://attacker.example:{page}", upgrade=True) == 403
    assert raw(page, good, "/_stcore/stream", origin="http://127.0.0.1:1", upgrade=True) == 403  # another local page
    assert raw(page, good, "/_stcore/stream", origin="null", upgrade=True) == 403
    assert raw(page, good, origin=f"http://{good}") == 200


def test_which_names_are_the_page_s():
    assert host_allowed("localhost:8501", "127.0.0.1") and host_allowed("[::1]:8501", "127.0.0.1")
    assert host_allowed("127.8.9.1", "127.0.0.1")  # all of 127.0.0.0/8 is loopback
    assert host_allowed("10.0.0.5:8501", "10.0.0.5") and not host_allowed("10.0.0.6:8501", "10.0.0.5")
    assert host_allowed("my-box.lan:8501", "0.0.0.0")  # a wildcard address serves any name, and needs a token
    for host in (None, "", "attacker.example", "attacker.example:8501", "localhost:notaport", "localhost/x",
                 "a@localhost", "localhost evil", "[::1", "0.0.0.0:8501", "localhost.:8501"):
        assert not host_allowed(host, "127.0.0.1"), host
    assert origin_allowed(None, "localhost:8501") and origin_allowed("http://LocalHost:8501", "localhost:8501")
    for origin in ("null", "http://localhost:8502", "file://", "http://attacker.example:8501", "ftp://localhost:8501",
                   "http://localhost:8501/x"):
        assert not origin_allowed(origin, "localhost:8501"), origin


# what the server imports as it starts, and what the page's first run imports late (the index, rendering)
EVIL_MODULES = ("streamlit", "codeqa", "ui", "serve", "app", "hosts", "starlette", "uvicorn", "runpy", "answer_view",
                "access", "sidebar", "resources", "markdown_it", "pygments", "qdrant_edge", "tree_sitter", "sqlite3")


def run_page_once(port: int) -> str:
    """One session of the page, as the browser opens it: the websocket, then a run of the script; what it showed."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    shown = []
    with connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                 origin=f"http://127.0.0.1:{port}") as ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = ""
        ws.send(rerun.SerializeToString())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            message = ForwardMsg()
            message.ParseFromString(ws.recv(timeout=60))
            if message.WhichOneof("type") == "script_finished":
                break
            shown.append(str(message))
    return "\n".join(shown)


def test_the_page_imports_nothing_from_the_working_folder_on_any_python(tmp_path, monkeypatch):
    """The command `codeqa ui` builds on Python 3.10 (no -P there), started for real in a folder holding a
    streamlit.py, codeqa.py, ... that each leave a mark when imported: none is, and the page serves."""
    folder = tmp_path / "work"
    folder.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in EVIL_MODULES:
        (folder / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")
    (tmp_path / "repo").mkdir()
    built = []

    class Started:
        def __init__(self, command, env):
            built.append((command, env))

        def wait(self, timeout=None):
            return 0

        def poll(self):
            return 0

    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    monkeypatch.setattr(subprocess, "Popen", Started)
    port = free_port()
    assert main(["ui", "--repo", str(tmp_path / "repo"), "--port", str(port)]) == 0
    monkeypatch.undo()
    (command, env), = built
    log = tmp_path / "ui.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=folder, env={**env, **ui_env(), "PYTHONPATH": env["PYTHONPATH"]},
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_server(proc, port, log)
        assert raw(port, f"localhost:{port}") == 200
        assert "No index for repo yet" in run_page_once(port)  # the page ran, importing what it imports
        assert raw(port, f"attacker.example:{port}") == 403
    finally:
        stop_group(proc)
    assert sorted(p.name for p in marks.iterdir()) == []
