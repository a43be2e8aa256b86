"""Ignore rules as git applies them, for the walk (walk.py).

    sources, highest first   a folder's .gitignore (the deepest first), then `.git/info/exclude`, then the
                             file `core.excludesFile` names (default `$XDG_CONFIG_HOME/git/ignore`, else
                             `~/.config/git/ignore`); the last two only at the top of a git work tree
    precedence               the first source with a pattern matching a path decides, and within it the
                             last matching pattern (a `!` pattern re-includes): a .gitignore's `!kept.md`
                             outranks info/exclude's `*.md`, as in git
    .codeqaignore            the same syntax and precedence, on its own: what git keeps but the index does not

git runs only to say where its files are (`git config`, `git rev-parse`), with its file-system monitor off;
the rule files are read as text, regular files only (a FIFO named by a config cannot block the walk).
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from ..source_text import NotRegularFile, read_regular
from .prune import run_git

Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]  # (prefix of the paths a spec applies to, spec), lowest rank first
RULES_MAX_BYTES = 1_000_000


def ignore_file_specs(directory: str, rel_dir: str, name: str) -> Specs:
    """The rules of the ignore file `name` (.gitignore or .codeqaignore) in `directory`, if any,
    as ((prefix of the paths they apply to, spec),)."""
    spec = _read_spec(os.path.join(directory, name))
    return ((rel_dir + "/" if rel_dir else "", spec),) if spec is not None else ()


def git_exclude_specs(root: Path) -> Specs:
    """The rules of core.excludesFile and of .git/info/exclude (in that rank, lowest first) for `root`, the
    top of a git work tree; none elsewhere (git applies them only inside a repository)."""
    if not os.path.lexists(root / ".git"):
        return ()
    specs = []
    for path in (_global_excludes_file(root), _info_exclude_file(root)):
        spec = _read_spec(str(path)) if path is not None else None
        if spec is not None:
            specs.append(("", spec))
    return tuple(specs)


def is_ignored(specs: Specs, rel: str, is_dir: bool) -> bool:
    """Whether `rel` (a folder with `is_dir`) is left out by `specs`, the highest-ranked matching source deciding."""
    probe = rel + "/" if is_dir else rel
    for prefix, spec in reversed(specs):
        if prefix and not probe.startswith(prefix):
            continue
        include = spec.check_file(probe[len(prefix):]).include
        if include is not None:
            return include
    return False


def parse_gitignore(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """A .gitignore's (or .codeqaignore's) rules; a line git itself would not understand (a lone `!`) is skipped, not fatal."""
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


def _read_spec(path: str) -> pathspec.GitIgnoreSpec | None:
    if not os.path.isfile(path):
        return None
    try:
        data = read_regular(path, RULES_MAX_BYTES)
    except (OSError, NotRegularFile):
        return None
    return parse_gitignore(data.decode("utf-8", errors="replace").splitlines())


def _global_excludes_file(root: Path) -> Path | None:
    """core.excludesFile as git reads it (`~` expanded, relative to the work tree), else git's default place."""
    configured = run_git(root, "config", "--path", "--get", "core.excludesFile")
    if configured and configured.strip():
        return root / os.path.expanduser(os.fsdecode(configured.rstrip(b"\r\n")))
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "git" / "ignore"
    home = os.path.expanduser("~")
    return Path(home) / ".config" / "git" / "ignore" if home != "~" else None


def _info_exclude_file(root: Path) -> Path | None:
    """$GIT_DIR/info/exclude: git says where it is (a worktree's or a submodule's .git is a file naming the
    real one); without git, .git/info/exclude when .git is a folder."""
    located = run_git(root, "rev-parse", "--git-path", "info/exclude")
    if located and located.strip():
        return root / os.fsdecode(located.rstrip(b"\r\n"))
    return root / ".git" / "info" / "exclude" if (root / ".git").is_dir() else None
