"""Sources: walk a repository and decide which files to read.

Rules, in order: folders left out unread (prune.py: junk by name, and folders named like output that
show they are output; in a git work tree what git lists is source whatever its folder is called),
git's ignore rules (.gitignore files, .git/info/exclude, core.excludesFile, ranked as git ranks them:
ignore_rules.py; not for a file git tracks), .codeqaignore files (same syntax; for what belongs in
git but not in the index), lock files and minified bundles, secret files (never opened), then size,
binary and encoding checks. Nested .gitignore and .codeqaignore files apply below their folder.
A symlink is followed only inside the repository, and is left out when what it points to would be: the
secret, junk-folder and ignore rules look at the target's path as well as at the link's own.
Every skipped file is returned with its reason, and a folder .codeqaignore leaves out once, as a
folder; the folders pruned unread go to `WalkResult.pruned`, once each with their reason, and the
files a .gitignore matches are counted in `WalkResult.gitignored`: both are reported, and `plan`
sizes the folders. Credentials written inside files that are read (tokens, keys, password
assignments) are blanked by `redact_source` before any later stage sees the text.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection

import pathspec

from ..errors import RepoNotFoundError
from ..languages import detect_language
from .ignore_rules import Specs, git_exclude_specs, ignore_file_specs, is_ignored
from .prune import OUTPUT_NAMES, GitListing, git_listing, is_junk, output_evidence
from ..source_text import NotRegularFile, read_regular
from ..types import SkippedFile, SourceFile

LOCK_FILES = frozenset({
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "Cargo.lock",
    "composer.lock", "Gemfile.lock", "go.sum", "uv.lock", "bun.lockb", "packages.lock.json",
})
MINIFIED_SUFFIXES = (".min.js", ".min.css", ".bundle.js", ".min.mjs", ".map")
# Secret files are recognised by name and never opened.
SECRET_SPEC = pathspec.GitIgnoreSpec.from_lines([
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*credentials*", "*.secret", "secrets.*",
    ".netrc", ".pgpass", ".htpasswd", "*.kdbx", ".npmrc", ".pypirc", ".git-credentials", ".dockercfg",
    "*.tfstate", "*.tfstate.backup", "token.json", ".ssh/", ".aws/", ".gnupg/", "**/.docker/config.json",
])
MINIFIED_LINE_CHARS = 5000  # a source line longer than this (with few lines) is a generated bundle


@dataclass
class WalkResult:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    # folders left out without looking inside, once each: reason "ignored-dir" (junk by name), "output"
    # (named like output and showing it; the detail says how) or "gitignore"
    pruned: list[SkippedFile] = field(default_factory=list)
    gitignored: list[str] = field(default_factory=list)  # files a .gitignore matches (expected: counted, not listed)


def is_secret_path(rel_path: str) -> bool:
    return SECRET_SPEC.match_file(rel_path.rsplit("/", 1)[-1]) or SECRET_SPEC.match_file(rel_path)


def walk_repository(root: Path, max_bytes: int = 1_000_000) -> WalkResult:
    """All indexable files under `root`, sorted by path, plus the skipped ones with reasons.

    The walk is iterative (any depth of folders), follows symlinks only inside the repository, and
    never opens anything but regular files: a FIFO or socket with a source extension cannot block it.
    """
    root = Path(root)
    if not root.exists():
        raise RepoNotFoundError(f"Repository path {root} does not exist; pass the folder of a code repository.")
    if not root.is_dir():
        raise RepoNotFoundError(f"Repository path {root} is not a directory; pass the folder of a code repository.")
    root = root.resolve()
    result = WalkResult()
    tracked = git_listing(root)  # None outside a git work tree
    excludes = git_exclude_specs(root)  # the lowest-ranked of git's rules
    targets = _LinkTargets(root, excludes, tracked)
    seen_dirs: set[tuple[int, int]] = set()
    # (folder, its path relative to root, git's and the .codeqaignore specs that apply in it, each as
    # (prefix, spec), and whether the folder was reached through a symlink)
    stack: list[tuple[str, str, Specs, Specs, bool]] = [(str(root), "", excludes, (), False)]
    while stack:
        directory, rel_dir, specs, own_specs, linked = stack.pop()
        try:
            st = os.stat(directory)
        except OSError as exc:
            result.skipped.append(SkippedFile(rel_dir or ".", "unreadable", _os_detail(exc)))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:  # symlink loop or a second link to a folder already walked
            result.skipped.append(SkippedFile(rel_dir, "symlink-loop"))
            continue
        seen_dirs.add(key)
        specs = specs + ignore_file_specs(directory, rel_dir, ".gitignore")
        own_specs = own_specs + ignore_file_specs(directory, rel_dir, ".codeqaignore")
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            result.skipped.append(SkippedFile(rel_dir or ".", "unreadable", _os_detail(exc)))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not _valid_name(entry.name):  # not UTF-8: cannot be stored or cited
                result.skipped.append(SkippedFile(_printable(rel), "bad-name"))
                continue
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if is_dir:
                pruned = _pruned_folder(entry, rel, specs, tracked)
                if pruned is not None:
                    result.pruned.append(pruned)
                    continue
                if is_ignored(own_specs, rel, True):
                    result.skipped.append(SkippedFile(rel, "codeqaignore", "folder"))
                    continue
                through_link = linked or entry.is_symlink()
                if through_link and (left_out := targets.left_out(rel, _real_path(entry.path), True)) is not None:
                    result.skipped.append(left_out)
                    continue
                subdirs.append((entry.path, rel, specs, own_specs, through_link))
                continue
            if is_ignored(specs, rel, False) and (tracked is None or rel not in tracked.files):
                result.gitignored.append(rel)
                continue
            if is_ignored(own_specs, rel, False):
                result.skipped.append(SkippedFile(rel, "codeqaignore"))
                continue
            _consider_file(rel, entry, max_bytes, result, targets, linked or entry.is_symlink())
        stack.extend(reversed(subdirs))
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    result.pruned.sort(key=lambda s: s.path)
    result.gitignored.sort()
    return result


def _pruned_folder(entry: os.DirEntry, rel: str, specs: Specs, tracked: GitListing | None) -> SkippedFile | None:
    """Why the folder `entry` is left out unread (prune.py's rules), or None when the walk enters it."""
    if is_junk(entry.name):
        return SkippedFile(rel, "ignored-dir")
    if tracked is not None and rel in tracked.dirs:
        return None  # git lists a file in it: source, whatever the folder is called or a .gitignore says
    if is_ignored(specs, rel, True):
        return SkippedFile(rel, "gitignore")
    if entry.name in OUTPUT_NAMES:
        evidence = output_evidence(entry.name, entry.path, _readable_name)
        if evidence:
            return SkippedFile(rel, "output", evidence)
    return None


def _readable_name(name: str) -> bool:
    """Whether the walk would read a file of this name (a source language or a text document), by its name."""
    return detect_language(name) is not None or _is_text_document(name)


def walk_again(root: Path, previous: WalkResult, changed: Collection[str], max_bytes: int) -> WalkResult | None:
    """`previous` (a walk of `root`) brought up to date for the paths a file watcher named (`changed`,
    relative to root): each file the walk accepted is considered again by the same rules, and left out
    when gone. None when only a whole walk can tell: an ignore file changed, or a path the walk did not
    accept as a file is there now (new, renamed to, skipped before, a folder)."""
    root = Path(root).resolve()
    if not root.is_dir():
        return None  # walk_repository says what is wrong
    files = {f.path: f for f in previous.files}
    changed = set(changed)
    again = WalkResult(skipped=[s for s in previous.skipped if s.path not in changed])
    targets = _LinkTargets(root, None, None)  # git's rules are looked up only for a path through a link
    for rel in sorted(changed):
        name = rel.rsplit("/", 1)[-1]
        if name in (".gitignore", ".codeqaignore"):
            return None
        path = os.path.join(root, rel)
        exists = os.path.lexists(path)
        if rel not in files:
            if exists:
                return None
            continue  # gone, and never indexed (an editor's temporary file)
        del files[rel]
        if not exists:
            continue
        with os.scandir(os.path.dirname(path)) as listing:
            entry = next((e for e in listing if e.name == name), None)
        if entry is None or entry.is_dir():
            return None
        _consider_file(rel, entry, max_bytes, again, targets, os.path.realpath(path) != path)
    again.files = sorted([*files.values(), *again.files], key=lambda f: f.path)
    again.skipped.sort(key=lambda s: s.path)
    again.pruned, again.gitignored = list(previous.pruned), list(previous.gitignored)
    return again


def _consider_file(rel: str, entry: os.DirEntry, max_bytes: int, result: WalkResult,
                   targets: _LinkTargets, through_link: bool) -> None:
    """The file `entry` (at `rel`) read and accepted into `result`, or skipped with its reason. With
    `through_link` (it, or a folder above it, is a symlink), what it points to is checked first."""
    name = entry.name
    if name in LOCK_FILES or name.endswith(MINIFIED_SUFFIXES):
        result.skipped.append(SkippedFile(rel, "generated"))
        return
    if is_secret_path(rel):
        result.skipped.append(SkippedFile(rel, "secret"))
        return
    path = Path(entry.path)
    if through_link:
        real = _real_path(entry.path)
        left_out = targets.left_out(rel, real, False)
        if left_out is not None or real is None:
            result.skipped.append(left_out or SkippedFile(rel, "outside-repo"))
            return
        path = real  # read at the target the rules judged: a link swapped later cannot send a reader elsewhere
    try:
        st = entry.stat()  # follows symlinks
    except FileNotFoundError:
        result.skipped.append(SkippedFile(rel, "broken-symlink" if entry.is_symlink() else "unreadable", "vanished"))
        return
    except OSError as exc:
        result.skipped.append(SkippedFile(rel, "unreadable", _os_detail(exc)))
        return
    if not stat.S_ISREG(st.st_mode):  # FIFO, socket, device: never opened
        result.skipped.append(SkippedFile(rel, "special-file"))
        return
    if st.st_size > max_bytes:
        result.skipped.append(SkippedFile(rel, "too-large", f"{st.st_size} bytes"))
        return
    try:
        data = read_regular(str(path), max_bytes)
    except NotRegularFile:
        result.skipped.append(SkippedFile(rel, "special-file"))
        return
    except OSError as exc:
        result.skipped.append(SkippedFile(rel, "unreadable", _os_detail(exc)))
        return
    if len(data) > max_bytes:  # grew since the stat
        result.skipped.append(SkippedFile(rel, "too-large", f"over {max_bytes} bytes"))
        return
    if b"\x00" in data[:8192]:
        result.skipped.append(SkippedFile(rel, "binary"))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.skipped.append(SkippedFile(rel, "undecodable", f"invalid UTF-8 at byte {exc.start}"))
        return
    if _looks_minified(text):
        result.skipped.append(SkippedFile(rel, "minified"))
        return
    first_line = text[:200].split("\n", 1)[0]
    language = detect_language(rel, first_line)
    if language is None and not _is_text_document(rel):
        result.skipped.append(SkippedFile(rel, "not-source"))
        return
    result.files.append(SourceFile(rel, path, language, len(data), hashlib.sha256(data).hexdigest()))


def _real_path(path: str) -> Path | None:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None


class _LinkTargets:
    """The walk's rules at the path a link resolves to: `notes.txt -> id_rsa`, `config.md -> .env`,
    `shown.py -> sub/hidden.py` (ignored by sub/.gitignore) and `docs -> .ssh` are left out as their
    targets are, with the target named in the detail. The ignore files along a target's folders are
    read once each per walk; git's listing (a file git tracks is read whatever the rules say) is asked
    for only when a link needs it."""

    def __init__(self, root: Path, excludes: Specs | None, tracked: GitListing | None):
        self.root = root
        self._excludes, self._tracked, self._asked = excludes, tracked, excludes is not None
        self._rules: dict[str, tuple[Specs, Specs]] = {}  # folder -> (git's specs, .codeqaignore's) in it

    def left_out(self, rel: str, real: Path | None, is_dir: bool) -> SkippedFile | None:
        """Why `rel` (resolved to `real`, None when it cannot be; a folder with `is_dir`) is left out for what
        it points to, or None."""
        if real is None or (real != self.root and self.root not in real.parents):  # never /etc/passwd or ~/.ssh
            return SkippedFile(rel, "outside-repo")
        target = real.relative_to(self.root).as_posix() if real != self.root else ""
        if not target or target == rel:
            return None
        reason = self._reason(target, is_dir)
        return SkippedFile(rel, reason, f"links to {target}") if reason else None

    def _reason(self, target: str, is_dir: bool) -> str | None:
        if is_secret_path(target + "/" if is_dir else target):
            return "secret"
        if not self._asked:
            self._excludes, self._tracked, self._asked = git_exclude_specs(self.root), git_listing(self.root), True
        tracked = self._tracked
        folders = target.split("/") if is_dir else target.split("/")[:-1]
        for depth, name in enumerate(folders, start=1):
            folder, parent = "/".join(folders[:depth]), "/".join(folders[:depth - 1])
            if is_junk(name):
                return "ignored-dir"
            if tracked is not None and folder in tracked.dirs:
                continue  # git lists a file in it: source, as the walk takes it
            specs, own = self._rules_in(parent)
            if is_ignored(specs, folder, True):
                return "gitignore"
            if is_ignored(own, folder, True):
                return "codeqaignore"
        if not is_dir:
            specs, own = self._rules_in("/".join(folders))
            if is_ignored(specs, target, False) and (tracked is None or target not in tracked.files):
                return "gitignore"
            if is_ignored(own, target, False):
                return "codeqaignore"
        return None

    def _rules_in(self, rel_dir: str) -> tuple[Specs, Specs]:
        """The specs that apply in the folder `rel_dir`: each folder's from the top down, once per walk (no
        recursion: a target may lie deeper than Python's recursion limit)."""
        parts = rel_dir.split("/") if rel_dir else []
        specs, own = self._excludes or (), ()
        for depth in range(len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in self._rules:
                directory = os.path.join(self.root, folder)
                self._rules[folder] = (specs + ignore_file_specs(directory, folder, ".gitignore"),
                                       own + ignore_file_specs(directory, folder, ".codeqaignore"))
            specs, own = self._rules[folder]
        return specs, own


def _valid_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\n" not in name and "\r" not in name


def _printable(rel: str) -> str:
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\n", "?").replace("\r", "?")


def _os_detail(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, "") or type(exc).__name__


TEXT_DOCUMENT_SUFFIXES = (
    ".md", ".markdown", ".rst", ".txt", ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini",
    ".sql", ".html", ".css", ".scss", ".xml", ".gradle",
    ".pl", ".erl", ".ml", ".proto",
    ".graphql", ".tf", ".mk", ".cmake",
)
TEXT_DOCUMENT_NAMES = frozenset({"Makefile", "Dockerfile", "README", "LICENSE", "CMakeLists.txt", "Rakefile", "Gemfile"})


def _is_text_document(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name in TEXT_DOCUMENT_NAMES or name.lower().endswith(TEXT_DOCUMENT_SUFFIXES)


def _looks_minified(text: str) -> bool:
    if len(text) < MINIFIED_LINE_CHARS:
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > 1000 or max(map(len, text.split("\n"))) > MINIFIED_LINE_CHARS * 4
