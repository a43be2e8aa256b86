"""The index's writer lock: one `codeqa index` run (or watcher, or UI button) writes an index at a time.

The lock is the operating system's (filelock's FileLock: flock, or LockFileEx on Windows), never a
soft lock (a marker file): the OS drops it with the process that held it, so a run killed at any
moment leaves no lock to refuse the next one. `index.lock` in the index folder holds it and names
the holder's process id, for the message a refused run gets ("... is running on
DIR (process 1234); wait ...").
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock, Timeout

from ..errors import IndexLockedError

LOCK_FILE = "index.lock"
_POLL_SECONDS = 0.1  # how often a wait tries the lock: one system call, no walk


@contextmanager
def writer_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index's writer lock for the block; IndexLockedError at once when another writer has it."""
    index_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock(index_dir, on_acquired=_write_pid)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise IndexLockedError(f"Another `codeqa index` is running on {index_dir}{_holder(index_dir)}; wait for it "
                               "to finish and run again.") from None
    try:
        yield
    finally:
        lock.release()


def wait_for_writer(index_dir: Path, timeout: float, cancel: Callable[[], bool] = lambda: False) -> bool:
    """Wait up to `timeout` seconds, or until `cancel()` is true, for no writer to hold the index's lock,
    without keeping it. True when it was free: a run may start (unless another writer takes it first)."""
    if not (index_dir / LOCK_FILE).is_file():
        return True
    try:
        with _lock(index_dir).acquire(timeout=timeout, poll_interval=_POLL_SECONDS, cancel_check=cancel):
            return True
    except Timeout:
        return False


def _lock(index_dir: Path, on_acquired: Callable[[int], None] | None = None) -> FileLock:
    return FileLock(index_dir / LOCK_FILE, fallback_to_soft=False, on_acquired=on_acquired)


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))


def _holder(index_dir: Path) -> str:
    """" (process PID)" for the lock's holder, or "" where its file cannot be read (Windows, while locked)."""
    try:
        pid = (index_dir / LOCK_FILE).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return ""
    return f" (process {pid})" if pid.isdigit() else ""
