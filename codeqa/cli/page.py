"""`codeqa ui`: the page in a Streamlit child process, and what it may be reached by.

The child serves ui/serve.py, the page behind a Host and Origin check (ui/hosts.py: 403 for a request not
addressed to the page, the DNS-rebinding case). Once the child answers, the page's address is the command's
first line, and a browser opens it where there is one to open (`browser_wanted`); Streamlit's own browser
opening and welcome lines stay off, so the address shown is the one to use (with its token).

It runs Streamlit's CLI from a `-c` bootstrap that first takes
the working folder off sys.path: `-m` puts it first, so a streamlit.py or codeqa.py there would be imported
instead of the real one, and `-P`, which stops that, exists only from Python 3.11.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Mapping
from pathlib import Path

from ..config import Settings
from ..errors import UsageError
from .commands import _repo

_SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding codeqa/ (and ui/ in a source checkout)
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# `-c` makes sys.path[0] "" (the working folder) on every Python unless -P or PYTHONSAFEPATH already left it out
BOOTSTRAP = ("import sys\n"
             "if sys.path and sys.path[0] == '':\n"
             "    del sys.path[0]\n"
             "import runpy\n"
             "runpy.run_module('streamlit', run_name='__main__', alter_sys=True)\n")


def page_command(serve: Path, host: str, port: int) -> list[str]:
    """The child's command line: Streamlit serving `serve` on host:port, importing nothing from the working folder."""
    return [sys.executable, "-c", BOOTSTRAP, "run", str(serve), "--server.port", str(port), "--server.address", host,
            "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
            "--client.toolbarMode", "minimal", "--logger.hideWelcomeMessage", "true"]


def browser_wanted(no_browser: bool, stdout_is_terminal: bool, env: Mapping[str, str], platform: str) -> bool:
    """Whether `codeqa ui` opens the page in a browser: only for a person at a terminal (not a log, a test or
    CI) on a machine with a desktop (a display on Linux and the BSDs; not over SSH on macOS)."""
    if no_browser or not stdout_is_terminal or env.get("CI"):
        return False
    if platform == "win32":
        return True
    if platform == "darwin":
        return not env.get("SSH_CONNECTION")
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def _listening(host: str, port: int) -> bool:
    """Something accepts connections on the page's port (a wildcard address is reached through loopback)."""
    try:
        with socket.create_connection(("127.0.0.1" if host in ("0.0.0.0", "::", "") else host, port), timeout=1):
            return True
    except OSError:
        return False


def _serve_file() -> Path:
    serve = _SOURCE_ROOT / "ui" / "serve.py"
    if serve.is_file():
        return serve
    import codeqa.ui

    return Path(codeqa.ui.__path__[0]) / "serve.py"


def cmd_ui(args, settings: Settings) -> int:
    """`codeqa ui`: the page in a Streamlit child process, on 127.0.0.1 unless --host says otherwise (another
    address needs a token, checked by the page before it shows anything). Its address is printed once it
    answers. SIGINT and SIGTERM go on to the child, and the command returns once it has stopped."""
    import signal
    import subprocess
    import threading
    import webbrowser

    token = args.token or settings.ui_token
    if args.host not in LOOPBACK and not token:
        raise UsageError(f"--host {args.host} serves the page to other machines, which could read any indexed file "
                         "and spend your LLM key: set a token with --token or CODEQA_UI_TOKEN (or keep the default "
                         "--host 127.0.0.1).")
    env = dict(os.environ)  # the page reads its settings from the environment it is given (Settings.load)
    if args.repo:
        env["CODEQA_UI_REPO"] = str(_repo(args.repo))
    if args.any_repo:
        env["CODEQA_UI_ANY_REPO"] = "1"
    if token:
        env["CODEQA_UI_TOKEN"] = token
    if args.index_dir:
        env["CODEQA_INDEX_DIR"] = str(args.index_dir)
    if args.qdrant_url:
        env["QDRANT_URL"] = args.qdrant_url
    if args.index_name:
        env["CODEQA_INDEX_NAME"] = args.index_name
    if args.watch:
        env["CODEQA_UI_WATCH"] = "1"
    env.setdefault("HF_HUB_OFFLINE", "1")
    # the page must import this very codeqa (a source checkout is not necessarily the installed one)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_SOURCE_ROOT), env.get("PYTHONPATH", "")) if p)
    shown = "localhost" if args.host in LOOPBACK else args.host
    url = f"http://{shown}:{args.port}" + (f"/?token={token}" if token else "")
    child = subprocess.Popen(page_command(_serve_file(), args.host, args.port), env=env)

    def forward(signum, frame) -> None:
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    parent = os.getppid()
    announced = False
    try:
        while True:
            try:
                return child.wait(timeout=1 if announced else 0.2)
            except subprocess.TimeoutExpired:
                if not announced and _listening(args.host, args.port):
                    announced = True  # flushed: `make run > log` shows it while the page runs
                    print(f"codeqa UI on {url} (Ctrl-C stops it)", flush=True)
                    if browser_wanted(args.no_browser, sys.stdout.isatty(), os.environ, sys.platform):
                        # a thread: a browser launcher that does not return must not hold the supervision
                        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
                if os.getppid() != parent:  # what started us is gone (`kill` of `make run`): so goes the page
                    child.terminate()
            except KeyboardInterrupt:  # forwarded already; wait for the child to stop
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if child.poll() is None:
            child.kill()
