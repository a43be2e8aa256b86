"""Which folders the walk (walk.py) leaves out without looking at their files, and why.

    junk by name      JUNK_DIRS: version control, caches, installed dependencies, editor settings. Never
                      source; left out unread, reported with the reason "ignored-dir".
    git's listing     when the folder indexed is the top of a git work tree, a folder holding a file git
                      tracks (or would add: untracked and not ignored) is source, whatever it is called,
                      and a tracked file is read even where a .gitignore pattern matches it (git ignores
                      .gitignore for tracked files too).
    output evidence   a folder named like output (OUTPUT_NAMES: build, dist, target, out, coverage, env,
                      venv, vendor) that git does not list, or outside git, is left out only when it shows
                      it is output: a tool's marker or layout (pyvenv.cfg, CACHEDIR.TAG, CMakeCache.txt,
                      setuptools' build/lib.*, Cargo's target/debug, ...), the build an npm package's package.json
                      publishes (`"main": "./dist/index.js"`), a .gitignore of `*` written by
                      the tool that made it, only archives and bundles, or no file the walk would read
                      (source or a text document). A Python package (`__init__.py`) is always kept.
                      Reported with the reason "output" and the evidence as the detail.

Nothing here reads a file's content but a folder's own .gitignore; git runs with its file-system monitor
off (a repository's config must not start programs) and without taking the index lock.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

JUNK_DIRS = frozenset({
    ".git", ".hg", ".svn", ".codeqa", "node_modules", "bower_components", "__pycache__", ".venv", ".env",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".next", ".nuxt", ".gradle", ".idea",
    ".vscode", "site-packages", ".eggs", ".terraform",
})
OUTPUT_NAMES = frozenset({"build", "dist", "target", "out", "coverage", "env", "venv", "vendor"})
# a file or folder directly inside that says which tool wrote the folder
MARKERS = {
    "pyvenv.cfg": "virtualenv", "conda-meta": "conda environment", "CACHEDIR.TAG": "cache",
    "CMakeCache.txt": "CMake build", ".rustc_info.json": "Cargo build", "maven-status": "Maven build",
    "modules.txt": "Go vendored modules", "autoload.php": "Composer dependencies", "lcov.info": "coverage report",
    "coverage-final.json": "coverage report", "lcov-report": "coverage report",
}
# a build tool's layout, by folder name: sub-folder names (or their prefixes, ending in "." or "-") it writes
LAYOUTS = {
    "build": ("setuptools build", ("lib", "lib.", "bdist.", "temp.", "scripts-")),
    "target": ("Cargo or Maven build", ("debug", "release", "classes", "test-classes")),
    "env": ("virtualenv", ("bin/activate", "Scripts/activate")),
    "venv": ("virtualenv", ("bin/activate", "Scripts/activate")),
}
# what a dist/ (or out/) of packaged output holds
PACKAGE_SUFFIXES = (".whl", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".egg", ".jar", ".war", ".exe",
                    ".msi", ".dmg", ".deb", ".rpm", ".min.js", ".bundle.js", ".map")
# the fields of a package.json that name what an npm package publishes: a build folder they point into is output
PACKAGE_JSON_FIELDS = ("main", "module", "browser", "types", "typings", "exports", "bin", "unpkg", "jsdelivr")
PACKAGE_JSON_MAX_BYTES = 1_000_000
SOURCE_SCAN_ENTRIES = 5000  # a folder with no file the walk reads among this many entries is taken for output
GIT_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class GitListing:
    """What git lists at the top of a work tree (`git ls-files --cached --others --exclude-standard`): the
    files, and every folder holding one of them (an untracked nested repository counts as a listed folder)."""

    files: frozenset[str]
    dirs: frozenset[str]


def git_listing(root: Path) -> GitListing | None:
    """git's listing for `root`, or None (the walk's plain-folder rules) unless `root` is the top of a git
    work tree where git lists something: a sub-folder of a repository is walked as a plain folder, so the
    same folder gives the same files wherever it lies. None too when git is missing or fails."""
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    prefix = run_git(root, "rev-parse", "--show-prefix")
    if prefix is None or prefix.strip():
        return None
    listed = run_git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    if not listed:
        return None
    entries = [e.decode("utf-8", "surrogateescape") for e in listed.split(b"\0") if e]
    files = frozenset(e for e in entries if not e.endswith("/"))
    dirs: set[str] = set()
    for entry in entries:
        parts = entry.rstrip("/").split("/")[:-1]
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            if folder in dirs:
                break  # and so are the folders above it
            dirs.add(folder)
    return GitListing(files, frozenset(dirs | {e.rstrip("/") for e in entries if e.endswith("/")}))


def run_git(root: Path, *args: str) -> bytes | None:
    """git's output, run in `root` as the repository there sees it (no GIT_DIR or index file inherited
    from a hook), or None when it cannot run or fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=root, capture_output=True,
                              timeout=GIT_TIMEOUT_SECONDS, env={**env, "GIT_OPTIONAL_LOCKS": "0"},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def is_junk(name: str) -> bool:
    return name in JUNK_DIRS or name.endswith(".egg-info")


def output_evidence(name: str, path: str, readable: Callable[[str], bool]) -> str:
    """Why the folder at `path` (named `name`, one of OUTPUT_NAMES) is output, or "" when it may hold source
    and is walked. The first evidence found, in the module docstring's order; `readable(file name)` says
    whether the walk would read a file of that name (source or a text document)."""
    try:
        with os.scandir(path) as listing:
            entries = {e.name: e.is_dir() for e in listing}
    except OSError:
        return ""  # the walk reports it unreadable
    if "__init__.py" in entries:
        return ""
    for marker, tool in MARKERS.items():
        if marker in entries:
            return f"{tool}, {marker}{'/' if entries[marker] else ''}"
    tool, layout = LAYOUTS.get(name, ("", ()))
    for sub, is_dir in entries.items():
        if is_dir and any(sub == p or (p[-1] in ".-" and sub.startswith(p)) for p in layout):
            return f"{tool}, {sub}/"
    for nested in (p for p in layout if "/" in p):
        if os.path.isfile(os.path.join(path, nested)):
            return f"{tool}, {nested}"
    field = _named_by_package_json(os.path.dirname(path), name)
    if field:
        return f"npm package build, package.json's {field} points into it"
    if _ignores_everything(os.path.join(path, ".gitignore")):
        return "its own .gitignore ignores everything in it"
    files = [n for n, is_dir in entries.items() if not is_dir]
    if files and not any(entries.values()) and all(n.lower().endswith(PACKAGE_SUFFIXES) for n in files):
        return "only packages and bundles"
    found, complete = _holds_readable(path, readable)
    if not found:
        return "no source files" if complete else f"no source files in its first {SOURCE_SCAN_ENTRIES:,} entries"
    return ""


def _named_by_package_json(parent: str, name: str) -> str:
    """The package.json field (`main`, `exports`, ...) beside the folder that points into it, or "": what an npm
    package publishes from its build (rxjs `"main": "./dist/cjs/index.js"`; its sources are in src/). Read
    as JSON data only."""
    try:
        with open(os.path.join(parent, "package.json"), "rb") as handle:
            manifest = json.loads(handle.read(PACKAGE_JSON_MAX_BYTES + 1)[:PACKAGE_JSON_MAX_BYTES])
    except (OSError, ValueError):
        return ""
    if not isinstance(manifest, dict):
        return ""
    for field in PACKAGE_JSON_FIELDS:
        if any(_strip_dot(target).startswith(name + "/") for target in _strings(manifest.get(field))):
            return field
    return ""


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _strip_dot(target: str) -> str:
    return target[2:] if target.startswith("./") else target


def _ignores_everything(path: str) -> bool:
    """A .gitignore holding only `*` (and comments): what coverage.py, pytest, ruff and uv write into their output."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(4096)
    except OSError:
        return False
    rules = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    return [r for r in rules if r and not r.startswith("#")] == ["*"]


def _holds_readable(top: str, readable: Callable[[str], bool]) -> tuple[bool, bool]:
    """(whether a file under `top` is `readable` by its name, whether every entry was looked at): links are
    not followed, junk folders not entered, and the look stops after SOURCE_SCAN_ENTRIES entries."""
    seen = 0
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in _sorted(listing):
                    seen += 1
                    if seen > SOURCE_SCAN_ENTRIES:
                        return False, False
                    if entry.is_dir(follow_symlinks=False):
                        if not is_junk(entry.name):
                            stack.append(entry.path)
                    elif readable(entry.name):
                        return True, True
        except OSError:
            continue
    return False, True


def _sorted(entries: Iterable[os.DirEntry]) -> list[os.DirEntry]:
    return sorted(entries, key=lambda e: e.name)  # the same answer on every file system
