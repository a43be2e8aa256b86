"""Reading a repository file: regular files only, opened so that nothing can block the reader.

Both sides read repository files: the walk (indexing) decides what to index from their bytes, and the
readers (query) show the lines a hit cites. They share this one way of opening a file, so a file
swapped for a FIFO or a socket after the walk saw it can hang neither.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegularFile(Exception):
    """The path is no longer a regular file (a FIFO, socket or device took its place)."""


def read_regular(path: str, max_bytes: int) -> bytes:
    """The bytes of a regular file, at most max_bytes + 1. Opened non-blocking and checked with fstat
    on the open descriptor, so a file swapped for a FIFO after the walk looked at it cannot hang us."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(path)
        parts, left = [], max_bytes + 1
        while left > 0:
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                break
            parts.append(part)
            left -= len(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def read_source_text(path: Path) -> str:
    """A walked file's text for the later stages (same checks as the walk: regular file, UTF-8)."""
    try:
        data = read_regular(str(path), 1 << 40)
    except NotRegularFile:
        raise OSError(f"{path} is no longer a regular file")
    return data.decode("utf-8")
