"""What a newcomer meets is true (issue 64, item 7): `codeqa ui` (the end of `make run`) prints the page's address
once the page answers and opens a browser only for a person at a desktop; `codeqa index` writing to a log shows
its progress there as plain lines while it runs; the page and index_status name when each phase last completed."""

from __future__ import annotations

import io
import os
import queue
import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from codeqa.cli.page import browser_wanted, page_command
from codeqa.cli.progress import PlainProgress
from codeqa.indexing.index import IndexStatus, index_repo, index_status
from codeqa.store import open_store
from conftest import CountingEmbedder, copy_fixture_repo
from test_ui_browser import free_port, stop_group
from test_ui_serve import reachable, ui_env

ROOT = Path(__file__).resolve().parent.parent
REDRAW = re.compile(r"\x1b|\r")  # an ANSI sequence or a carriage return: a bar redrawn in place


def lines_of(stream, into: queue.Queue) -> threading.Thread:
    """Each line of `stream` as it arrives (a thread: the test reads while the process runs)."""
    def read() -> None:
        for line in stream:
            into.put(line)
        into.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


# ---- codeqa ui: the address, and a browser only where one belongs --------------------------------------

def test_the_address_is_the_first_line_once_the_page_answers(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "codeqa", "ui", "--repo", str(repo), "--port", str(port)], cwd=ROOT,
                            env=ui_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    arrived: queue.Queue = queue.Queue()
    lines_of(proc.stdout, arrived)
    try:
        first = arrived.get(timeout=120)
        assert first == f"codeqa UI on http://localhost:{port} (Ctrl-C stops it)\n"
        assert reachable("127.0.0.1", port)  # printed once the page answers, not before
        time.sleep(2)
        rest = []
        while not arrived.empty():
            rest.append(arrived.get())
        assert not any("You can now view" in (line or "") for line in rest)  # Streamlit's own URL lacks a token
    finally:
        stop_group(proc)


def test_streamlit_never_opens_a_browser_itself():
    command = page_command(Path("serve.py"), "127.0.0.1", 8501)
    assert command[command.index("--server.headless") + 1] == "true"  # Streamlit opens none in headless mode
    assert command[command.index("--logger.hideWelcomeMessage") + 1] == "true"


@pytest.mark.parametrize("no_browser, terminal, env, platform, wanted", [
    (False, True, {"DISPLAY": ":0"}, "linux", True),
    (False, True, {"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    (False, True, {}, "darwin", True),
    (False, True, {}, "win32", True),
    (True, True, {"DISPLAY": ":0"}, "linux", False),  # --no-browser
    (False, False, {"DISPLAY": ":0"}, "linux", False),  # output to a log or a pipe: no person is watching
    (False, True, {"DISPLAY": ":0", "CI": "true"}, "linux", False),
    (False, True, {}, "linux", False),  # a server without a desktop
    (False, True, {"SSH_CONNECTION": "10.0.0.1 22 10.0.0.2 22"}, "darwin", False),
])
def test_a_browser_opens_only_for_a_person_at_a_desktop(no_browser, terminal, env, platform, wanted):
    assert browser_wanted(no_browser, terminal, env, platform) is wanted


def test_no_browser_is_a_flag_of_ui():
    from codeqa.cli import build_parser

    assert build_parser().parse_args(["ui", "--no-browser"]).no_browser is True
    assert build_parser().parse_args(["ui"]).no_browser is False


# ---- codeqa index: progress in a log ---------------------------------------------------------------------

def test_index_progress_reaches_a_pipe_as_plain_lines_while_it_runs(tmp_path):
    repo = copy_fixture_repo(tmp_path / "repo")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "codeqa", "index", str(repo), "--index-dir", str(tmp_path / "index")],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # bytes: a \r stays a \r
    arrived: queue.Queue = queue.Queue()
    lines_of(proc.stderr, arrived)
    seen = []
    try:
        while (line := arrived.get(timeout=300)) is not None:
            seen.append((line.decode(), proc.poll()))
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.wait(timeout=30) == 0
    progress = [line for line, _ in seen if line.startswith("codeqa index: ")]
    assert any("parsing files" in line for line in progress)
    assert any(line.startswith("codeqa index: Searchable now") for line in progress)
    assert any("embedding chunks" in line and line.rstrip().endswith("done") for line in progress)
    assert all(exited is None for line, exited in seen if line in progress)  # read while the run went on
    assert not any(REDRAW.search(line) for line, _ in seen), [line for line, _ in seen if REDRAW.search(line)]


def test_a_long_stage_writes_a_line_a_tenth_or_ten_seconds_not_a_flood():
    out, now = io.StringIO(), [0.0]
    progress = PlainProgress(out, clock=lambda: now[0])
    for done in range(5001):
        progress("embed", done, 5000)
    lines = out.getvalue().splitlines()
    assert lines[0] == "codeqa index: embedding chunks: 0 of 5,000" and lines[-1].endswith("5,000 of 5,000 done")
    assert 10 <= len(lines) <= 12
    out.truncate(0), out.seek(0)
    progress("embed", 10, 100_000)  # a stage run again starts over
    now[0] = 9.0
    progress("embed", 20, 100_000)
    assert out.getvalue().count("\n") == 1  # under 10 s and a tenth: no line
    now[0] = 10.5
    progress("embed", 30, 100_000)
    assert out.getvalue().splitlines()[-1].startswith("codeqa index: embedding chunks: 30 of 100,000 (")


# ---- when each phase last completed ---------------------------------------------------------------------

def test_the_status_names_when_each_phase_completed(tmp_path, settings, embedder):
    from codeqa.ui.sidebar import index_times

    repo = copy_fixture_repo(tmp_path / "repo")
    settings = settings.with_(index_dir=tmp_path / "index")
    counted = CountingEmbedder(embedder)
    index_repo(repo, settings, embedder=counted, embed=False)  # phase 1 only: search by keywords and the graph
    status = _status(repo, settings)
    assert status.last_indexed and status.embedded_at is None and status.semantic < 1
    assert index_times(status).startswith("Searchable since ")
    assert f"· embedding: {round(status.semantic * status.chunks):,} of {status.chunks:,} chunks" in index_times(status)
    time.sleep(1.1)  # the times have whole seconds
    index_repo(repo, settings, embedder=counted)
    status = _status(repo, settings)
    assert status.semantic == 1 and status.embedded_at > status.last_indexed  # phase 2 ended after phase 1
    now = datetime.fromisoformat(status.embedded_at)
    assert index_times(status, now).endswith(f"embeddings complete {now:%Y-%m-%d %H:%M} UTC (just now)")


def test_a_phase_1_with_every_vector_cached_completed_both_phases():
    from codeqa.indexing.state import after_phase2, embedded_at

    meta = after_phase2({"chunks": 10, "last_indexed": "2026-01-01T10:00:00+00:00"}, 10, 0)
    assert embedded_at(meta) == meta["embedded_at"]
    later = {**meta, "embedded_at": "2026-01-01T10:05:00+00:00", "last_indexed": "2026-01-02T10:00:00+00:00"}
    assert embedded_at(later) == "2026-01-02T10:00:00+00:00"
    assert embedded_at({"chunks": 10, "last_indexed": "2026-01-02T10:00:00+00:00"}) == "2026-01-02T10:00:00+00:00"
    assert embedded_at(after_phase2({"chunks": 10}, 10, 3)) is None  # phase 2 has chunks left
    assert "embedded_at" not in after_phase2({"chunks": 10}, 10, 3)


def test_index_times_while_embedding_and_once_complete():
    from codeqa.ui.sidebar import index_times

    now = datetime(2026, 12, 7, 19, 40, tzinfo=timezone.utc)
    half = IndexStatus(files=3, symbols=9, chunks=5226, last_indexed="2026-12-07T19:24:00+00:00", complete=True,
                       semantic=1200 / 5226)
    assert index_times(half, now) == ("Searchable since 2026-12-07 19:24 UTC (16 minutes ago) · embedding: 1,200 of "
                                      "5,226 chunks")
    whole = IndexStatus(files=3, symbols=9, chunks=5226, last_indexed="2026-12-07T19:24:00+00:00", complete=True,
                        embedded_at="2026-12-07T19:31:00+00:00")
    assert index_times(whole, now) == ("Searchable since 2026-12-07 19:24 UTC (16 minutes ago) · embeddings complete "
                                       "2026-12-07 19:31 UTC (9 minutes ago)")


def _status(repo: Path, settings) -> IndexStatus:
    store = open_store(repo.resolve(), settings)
    try:
        return index_status(repo, settings, store)
    finally:
        store.close()
