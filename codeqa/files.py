"""Sources: walk a repository and decide which files to read.

Rules, in order: default ignores (VCS, dependency and build folders, lock files, minified bundles),
.gitignore files (nested ones apply below their folder), secret files (never opened), then size,
binary and encoding checks. Every skipped file is returned with its reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .errors import RepoNotFoundError
from .languages import detect_language
from .types import SkippedFile, SourceFile

DEFAULT_IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".codeqa", "node_modules", "bower_components", "__pycache__",
    ".venv", "venv", "env", ".env", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "dist", "build", "target", "out", ".next", ".nuxt", ".gradle", ".idea", ".vscode",
    "site-packages", ".eggs", "vendor", "coverage", ".terraform",
})
LOCK_FILES = frozenset({
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "Cargo.lock",
    "composer.lock", "Gemfile.lock", "go.sum", "uv.lock", "bun.lockb", "packages.lock.json",
})
MINIFIED_SUFFIXES = (".min.js", ".min.css", ".bundle.js", ".min.mjs", ".map")
# Secret files are recognised by name and never opened.
SECRET_SPEC = pathspec.GitIgnoreSpec.from_lines([
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*credentials*", "*.secret", "secrets.*",
    ".netrc", ".pgpass", ".htpasswd", "*.kdbx",
])
MINIFIED_LINE_CHARS = 5000  # a source line longer than this (with few lines) is a generated bundle


@dataclass
class WalkResult:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def is_secret_path(rel_path: str) -> bool:
    return SECRET_SPEC.match_file(rel_path.rsplit("/", 1)[-1]) or SECRET_SPEC.match_file(rel_path)


def walk_repository(root: Path, max_bytes: int = 1_000_000) -> WalkResult:
    """All indexable files under `root`, sorted by path, plus the skipped ones with reasons."""
    root = Path(root)
    if not root.exists():
        raise RepoNotFoundError(f"Repository path {root} does not exist; pass the folder of a code repository.")
    if not root.is_dir():
        raise RepoNotFoundError(f"Repository path {root} is not a directory; pass the folder of a code repository.")
    root = root.resolve()
    result = WalkResult()
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []  # (dir prefix, spec) from .gitignore files
    seen_dirs: set[tuple[int, int]] = set()

    def ignored(rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        for prefix, spec in specs:
            if prefix and not probe.startswith(prefix):
                continue
            if spec.match_file(probe[len(prefix):]):
                return True
        return False

    def visit(directory: Path, rel_dir: str) -> None:
        try:
            st = directory.stat()
        except OSError:
            result.skipped.append(SkippedFile(rel_dir or ".", "unreadable"))
            return
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:  # symlink loop or a second link to a folder already walked
            result.skipped.append(SkippedFile(rel_dir, "symlink-loop"))
            return
        seen_dirs.add(key)
        gitignore = directory / ".gitignore"
        pushed = False
        if gitignore.is_file():
            try:
                lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
                specs.append((rel_dir + "/" if rel_dir else "", _gitignore_spec(lines)))
                pushed = True
            except OSError:
                pass
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            result.skipped.append(SkippedFile(rel_dir or ".", "unreadable"))
            entries = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in DEFAULT_IGNORED_DIRS or entry.name.endswith(".egg-info") or ignored(rel, True):
                    continue
                visit(Path(entry.path), rel)
                continue
            if ignored(rel, False):
                continue
            _consider_file(Path(entry.path), rel, entry, max_bytes, result)
        if pushed:
            specs.pop()

    visit(root, "")
    result.files.sort(key=lambda f: f.path)
    return result


def _gitignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """A .gitignore's rules; a line git itself would not understand (a lone `!`) is skipped, not fatal."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # GitIgnorePatternError is a ValueError
        valid = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except ValueError:
                continue
            valid.append(line)
        return pathspec.GitIgnoreSpec.from_lines(valid)


def _consider_file(path: Path, rel: str, entry: os.DirEntry, max_bytes: int, result: WalkResult) -> None:
    name = entry.name
    if name in LOCK_FILES or name.endswith(MINIFIED_SUFFIXES):
        result.skipped.append(SkippedFile(rel, "generated"))
        return
    if is_secret_path(rel):
        result.skipped.append(SkippedFile(rel, "secret"))
        return
    try:
        if not entry.is_file():
            result.skipped.append(SkippedFile(rel, "not-a-file"))
            return
        size = entry.stat().st_size
    except OSError:
        result.skipped.append(SkippedFile(rel, "unreadable"))
        return
    if size > max_bytes:
        result.skipped.append(SkippedFile(rel, "too-large"))
        return
    try:
        data = path.read_bytes()
    except OSError:
        result.skipped.append(SkippedFile(rel, "unreadable"))
        return
    if b"\x00" in data[:8192]:
        result.skipped.append(SkippedFile(rel, "binary"))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        result.skipped.append(SkippedFile(rel, "undecodable"))
        return
    if _looks_minified(text):
        result.skipped.append(SkippedFile(rel, "minified"))
        return
    first_line = text[:200].split("\n", 1)[0]
    language = detect_language(rel, first_line)
    if language is None and not _is_text_document(rel):
        result.skipped.append(SkippedFile(rel, "not-source"))
        return
    result.files.append(SourceFile(rel, path, language, size, hashlib.sha256(data).hexdigest()))


TEXT_DOCUMENT_SUFFIXES = (
    ".md", ".markdown", ".rst", ".txt", ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini", ".sh",
    ".bash", ".sql", ".html", ".css", ".scss", ".xml", ".gradle", ".kt", ".kts", ".swift", ".scala",
    ".lua", ".pl", ".r", ".jl", ".ex", ".exs", ".erl", ".hs", ".ml", ".dart", ".vue", ".svelte", ".proto",
    ".graphql", ".tf", ".mk", ".cmake",
)
TEXT_DOCUMENT_NAMES = frozenset({"Makefile", "Dockerfile", "README", "LICENSE", "CMakeLists.txt", "Rakefile", "Gemfile"})


_TEST_PATH = re.compile(r"(^|/)(tests?|testing|__tests__|specs?)/|(^|/)(test_[^/]*|conftest\.py)$|_tests?\.\w+$"
                        r"|\.(spec|test)\.\w+$|Tests?\.(java|cs|kt)$")
_EXAMPLE_DIRS = re.compile(r"(^|/)(examples?|samples?|demos?)/")
_DOC_PATH = re.compile(r"(^|/)docs?/|\.(md|markdown|mdx|rst|txt)$", re.IGNORECASE)


_STUB_PATH = re.compile(r"\.(pyi|d\.ts|d\.mts|d\.cts)$")


def path_role(rel: str) -> str:
    """What a file is for: "test", "example", "docs", "stub" (type declarations) or "code" (everything else)."""
    if _STUB_PATH.search(rel):
        return "stub"
    if _TEST_PATH.search(rel):
        return "test"
    if _EXAMPLE_DIRS.search(rel):
        return "example"
    if _DOC_PATH.search(rel):
        return "docs"
    return "code"


def _is_text_document(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name in TEXT_DOCUMENT_NAMES or name.lower().endswith(TEXT_DOCUMENT_SUFFIXES)


def _looks_minified(text: str) -> bool:
    if len(text) < MINIFIED_LINE_CHARS:
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > 1000 or any(len(line) > MINIFIED_LINE_CHARS * 4 for line in text.split("\n"))
