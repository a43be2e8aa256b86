"""Workspaces: a named set of repositories, each a local folder with its own index as today.

A workspace lives in one small TOML file a person can read and edit, `<workspaces dir>/NAME.toml`
(Settings.workspaces_dir, CODEQA_WORKSPACES_DIR; else $XDG_CONFIG_HOME/codeqa/workspaces, else
~/.config/codeqa/workspaces):

    [[repository]]
    name = "tinydb"                 # unique in the workspace; what results and `--repo NAME` call it
    path = "/src/tinydb"            # the folder (~ expands; a relative path is relative to this file)
    index_dir = "/idx/tinydb"       # optional: its index folder (default: the user's cache, as today)

This module reads, checks and writes that file; it never prints. Reading uses tomllib; writing uses the small
writer below, which knows only this shape (the file is read back and compared before it replaces the old one).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from .config import Settings
from .errors import UsageError

# a workspace's name is a file name on every system: no separators, no leading dot
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
REPOSITORY_KEYS = ("name", "path", "index_dir")
HEADER = """\
# codeqa workspace "{name}": a named set of repositories, each with its own index.
# Edit freely, or use `codeqa workspace add|remove {name} PATH`. Per repository: `name` (unique here; what
# results and `--repo NAME` call it), `path` (its folder), and optionally `index_dir` (its index folder).
"""


@dataclass(frozen=True)
class Repository:
    """One repository of a workspace: its name there, its folder, and its index folder when not the default."""

    name: str
    path: Path
    index_dir: Path | None = None


@dataclass(frozen=True)
class Workspace:
    """A named set of repositories, read from (and written to) `file`."""

    name: str
    repositories: tuple[Repository, ...]
    file: Path

    def repository(self, name: str) -> Repository:
        """The repository called `name`; a UsageError naming the ones there are when none is."""
        for r in self.repositories:
            if r.name == name:
                return r
        known = ", ".join(r.name for r in self.repositories) or "none yet"
        raise UsageError(f"Workspace {self.name!r} has no repository named {name!r} (it has: {known}; see {self.file}).")

    def only(self, name: str | None) -> "Workspace":
        """The workspace narrowed to the repository `name` (`--repo NAME`), or itself when `name` is None."""
        return self if name is None else replace(self, repositories=(self.repository(name),))


@dataclass(frozen=True)
class Added:
    """What `add_repositories` did with one PATH: added as `name` (`renamed` when its folder's name was taken),
    or found already there under `name`."""

    path: Path
    name: str
    renamed: bool = False
    already: bool = False


# ---- where workspaces live --------------------------------------------------------------------

def workspaces_dir(settings: Settings) -> Path:
    """CODEQA_WORKSPACES_DIR, else <config home>/codeqa/workspaces (XDG_CONFIG_HOME, else ~/.config;
    %APPDATA% on Windows)."""
    if settings.workspaces_dir:
        return Path(settings.workspaces_dir)
    home = settings.config_home
    if home is None:
        appdata = os.environ.get("APPDATA") if sys.platform.startswith("win") else None
        home = Path(appdata) if appdata else Path.home() / ".config"
    return Path(home) / "codeqa" / "workspaces"


def workspace_file(name: str, settings: Settings) -> Path:
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(f"{name!r} is not a workspace name: use letters, digits, '.', '_' and '-' (at most 64, "
                         "not starting with '.' or '-').")
    return workspaces_dir(settings) / f"{name}.toml"


def workspace_names(settings: Settings) -> list[str]:
    """The workspaces there are, by name."""
    folder = workspaces_dir(settings)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.toml") if NAME_PATTERN.fullmatch(p.stem))


# ---- reading -------------------------------------------------------------------------------------

def load_workspace(name: str, settings: Settings) -> Workspace:
    """The workspace `name`; a UsageError that names the file when there is none or it is malformed."""
    file = workspace_file(name, settings)
    if not file.is_file():
        known = ", ".join(workspace_names(settings)) or "none yet"
        raise UsageError(f"No workspace named {name!r} ({file} does not exist; workspaces: {known}). "
                         f"Create it with `codeqa workspace add {name} PATH`.")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read workspace file {file}: {exc}") from None
    return parse_workspace(text, name, file)


def parse_workspace(text: str, name: str, file: Path) -> Workspace:
    """A workspace from its file's text; every problem is a UsageError that names `file` and what to fix."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"Workspace file {file} is not valid TOML ({exc}); fix or delete it.") from None
    unknown = sorted(set(data) - {"repository"})
    if unknown:
        raise UsageError(f"Workspace file {file}: unknown key {unknown[0]!r}; it holds only [[repository]] tables.")
    entries = data.get("repository", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(f"Workspace file {file}: `repository` must be [[repository]] tables.")
    repositories: list[Repository] = []
    for number, entry in enumerate(entries, 1):
        where = f"Workspace file {file}, repository {number}"
        extra = sorted(set(entry) - set(REPOSITORY_KEYS))
        if extra:
            raise UsageError(f"{where}: unknown key {extra[0]!r} (known: {', '.join(REPOSITORY_KEYS)}).")
        for key in ("name", "path"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise UsageError(f"{where}: `{key}` must be a non-empty string.")
        if "index_dir" in entry and (not isinstance(entry["index_dir"], str) or not entry["index_dir"].strip()):
            raise UsageError(f"{where}: `index_dir` must be a non-empty string when given.")
        if any(r.name == entry["name"] for r in repositories):
            raise UsageError(f"{where}: the name {entry['name']!r} is used twice; names must be unique.")
        index_dir = entry.get("index_dir")
        repositories.append(Repository(entry["name"], _from_file(entry["path"], file),
                                       _from_file(index_dir, file) if index_dir else None))
    return Workspace(name, tuple(repositories), file)


def _from_file(text: str, file: Path) -> Path:
    """A path as the file writes it: `~` expands, and a relative one is relative to the file's folder."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else (file.parent / path).resolve()


# ---- changing -----------------------------------------------------------------------------------

def add_repositories(workspace: Workspace, paths: list[Path], index_dir: Path | None = None
                     ) -> tuple[Workspace, list[Added]]:
    """`workspace` with each of `paths` added (it must be a folder), named after its folder; a name already
    taken gets `-2`, `-3`... A folder already in the workspace stays as it is. `index_dir` (one path only)
    is where its index lives."""
    if index_dir is not None and len(paths) != 1:
        raise UsageError("--index-dir names one index folder: give it with one PATH at a time.")
    repositories = list(workspace.repositories)
    done: list[Added] = []
    for given in paths:
        if not given.exists():
            raise UsageError(f"{given} does not exist; pass the folder of a code repository.")
        if not given.is_dir():
            raise UsageError(f"{given} is not a directory; pass the folder of a code repository.")
        path = given.resolve()
        present = next((r for r in repositories if r.path == path), None)
        if present is not None:
            done.append(Added(path, present.name, already=True))
            continue
        base = path.name or "repo"
        name, n = base, 1
        while any(r.name == name for r in repositories):
            n += 1
            name = f"{base}-{n}"
        repositories.append(Repository(name, path, index_dir.resolve() if index_dir else None))
        done.append(Added(path, name, renamed=name != base))
    return replace(workspace, repositories=tuple(repositories)), done


def remove_repository(workspace: Workspace, which: str) -> tuple[Workspace, Repository]:
    """`workspace` without the repository whose folder is `which` (or, failing that, whose name it is)."""
    path = Path(which).expanduser().resolve()
    found = (next((r for r in workspace.repositories if r.path == path), None)
             or next((r for r in workspace.repositories if r.name == which), None))
    if found is None:
        listed = "; ".join(f"{r.name} ({r.path})" for r in workspace.repositories) or "none"
        raise UsageError(f"{which} is not in workspace {workspace.name!r} (its repositories: {listed}; see {workspace.file}).")
    return replace(workspace, repositories=tuple(r for r in workspace.repositories if r is not found)), found


def empty_workspace(name: str, settings: Settings) -> Workspace:
    return Workspace(name, (), workspace_file(name, settings))


# ---- writing -------------------------------------------------------------------------------------

def dump_workspace(workspace: Workspace) -> str:
    """The file's text: a header that says what it is, then one [[repository]] table per repository."""
    parts = [HEADER.format(name=workspace.name)]
    for r in workspace.repositories:
        lines = ["", "[[repository]]", f"name = {toml_string(r.name)}", f"path = {toml_string(_text(r.path, workspace))}"]
        if r.index_dir is not None:
            lines.append(f"index_dir = {toml_string(_text(r.index_dir, workspace))}")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def _text(path: Path, workspace: Workspace) -> str:
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a file name of bytes that are not UTF-8: TOML holds UTF-8 text only
        raise UsageError(f"{path!r} is not valid UTF-8, which a workspace file ({workspace.file}) cannot hold; "
                         "rename the folder.") from None
    return text


# TOML basic strings: `"` and `\` escaped, and every control character (U+0000-U+001F and DEL) as an escape
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    out = []
    for ch in value:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def save_workspace(workspace: Workspace) -> None:
    """Write the workspace's file whole or not at all (a temporary file beside it, then renamed over it);
    the text is read back first, so what is written is what the next load finds."""
    text = dump_workspace(workspace)
    if parse_workspace(text, workspace.name, workspace.file).repositories != workspace.repositories:
        raise UsageError(f"Cannot write {workspace.file} faithfully (a path this file format cannot hold).")
    folder = workspace.file.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{workspace.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(temporary, workspace.file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"Cannot write workspace file {workspace.file}: {exc.strerror or exc}") from None


def settings_for(repository: Repository, settings: Settings) -> Settings:
    """The settings one repository of a workspace is read or indexed with: its own index folder (the default
    one unless the file names another) and its own name on a server."""
    return replace(settings, index_dir=repository.index_dir, index_name=None)
