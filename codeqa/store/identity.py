"""Which index on a Qdrant server is a repository's: its collections are named after what the repository
is, not after where it happens to be checked out.

    --index-name / CODEQA_INDEX_NAME   an explicit name; wins over everything
    the git remote                     `origin` (else the first remote by name), normalised, plus the
                                       folder's path inside the repository (a sub-folder's index is another)
    the folder's absolute path         no remote and no name: the name indexes had before, and a note
                                       that says how to make it stable

So two checkouts of one remote (a laptop, a container, a CI workspace) share one index, each run bringing
it up to date with its own checkout (incremental, by content hash), and two repositories checked out at
the same path have two. A remote is normalised so that the ways of writing one address give one name:
credentials, the port, `.git` and the scheme go (git@host:owner/repo, ssh://git@host:22/owner/repo.git
and https://user:token@host/owner/repo are all `host/owner/repo`).

The remote is read from the repository's git config files, without running git: git refuses a checkout
owned by another user (the container case), and nothing a repository holds is run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

CONFIG_MAX_BYTES = 1_000_000  # a git config is a few hundred bytes; a bigger file is not read whole
SLUG_CHARS = 40  # of a collection name's readable part; with the hash and `_references` it stays far under Qdrant's 255


@dataclass(frozen=True)
class IndexIdentity:
    """Where an index lives on a server: collections `<prefix>_chunks`, `<prefix>_files`, ...; `described`
    says what the name was taken from (for messages; a remote without its credentials); `note` is what a
    run tells the user, empty unless the name comes from the path."""

    prefix: str
    described: str
    note: str = ""


def index_identity(repo: Path, index_name: str | None = None) -> IndexIdentity:
    repo = Path(repo).resolve()
    if index_name and index_name.strip():
        name = index_name.strip()
        return IndexIdentity(_prefix(_slug(name), "name\x1f" + name), f"index name {name!r}")
    remote = git_remote(repo)
    if remote is not None:
        url, inside = remote
        slug = _slug(url.rsplit("/", 1)[-1] + ("_" + inside.rsplit("/", 1)[-1] if inside else ""))
        described = f"git remote {url}" + (f", folder {inside}" if inside else "")
        return IndexIdentity(_prefix(slug, "git\x1f" + url + "\x1f" + inside), described)
    return IndexIdentity(collection_prefix(repo), f"path {repo}",
                         note=f"The index on the Qdrant server is named after this folder's path ({repo}): it has no git "
                              "remote, so a checkout at another path (another machine, a container) gets another index. "
                              "Set --index-name NAME (or CODEQA_INDEX_NAME) to give it a name that stays.")


def collection_prefix(repo: Path) -> str:
    """The path-based name (the only one before remotes and --index-name): kept as it was, so that an index
    built then is still found."""
    repo = Path(repo).resolve()
    slug = re.sub(r"[^a-zA-Z0-9]+", "_", repo.name).strip("_").lower()[:SLUG_CHARS] or "repo"
    return f"codeqa_{slug}_{hashlib.sha1(str(repo).encode()).hexdigest()[:8]}"


def git_remote(repo: Path) -> tuple[str, str] | None:
    """(the normalised remote URL, `repo`'s path inside its checkout, '' at the top) of the git checkout
    that holds `repo`, or None when there is none or it has no remote."""
    repo = Path(repo).resolve()
    for top in (repo, *repo.parents):
        dot_git = top / ".git"
        if dot_git.exists():
            break
    else:
        return None
    config = _config_file(dot_git)
    try:
        with open(config, "rb") as handle:
            text = handle.read(CONFIG_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    remotes = _remote_urls(text)
    if not remotes:
        return None
    url = remotes.get("origin") or remotes[min(remotes)]
    inside = repo.relative_to(top).as_posix()
    return normalise_remote(url), "" if inside == "." else inside


def normalise_remote(url: str) -> str:
    """`host/owner/repo` (or a local path) from any way of writing a remote; never its credentials."""
    url = url.strip()
    scp = re.fullmatch(r"(?:[^@/:]+@)?([^/:]{2,}):(.+)", url)  # git@host:owner/repo (a single letter is a Windows drive)
    if "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path
    elif scp:
        host, path = scp.group(1).lower(), scp.group(2)
    else:  # a path on this machine
        host, path = "", url
    path = re.sub(r"/+", "/", path.replace("\\", "/")).rstrip("/")
    path = re.sub(r"\.git$", "", path).rstrip("/")
    return f"{host}/{path.lstrip('/')}" if host else path


def _config_file(dot_git: Path) -> Path:
    """The config of a checkout's `.git`: a folder, or a file `gitdir: ...` (a worktree, a submodule)
    whose folder names the shared one in `commondir`."""
    git_dir = dot_git
    if dot_git.is_file():
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace")[:4096].strip()
        except OSError:
            return dot_git / "config"
        if line.startswith("gitdir:"):
            git_dir = (dot_git.parent / line[len("gitdir:"):].strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir / "config"
    return (git_dir / common).resolve() / "config"


def _remote_urls(text: str) -> dict[str, str]:
    """Each `[remote "name"]` section's first url from a git config file's text."""
    remotes: dict[str, str] = {}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = re.match(r'\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]', line, re.IGNORECASE)
            section = header.group(1) if header else None
            continue
        key, _, value = line.partition("=")
        if section is not None and key.strip().lower() == "url" and section not in remotes:
            value = re.split(r"\s[#;]", value.strip(), maxsplit=1)[0].strip().strip('"')
            if value:
                remotes[section] = value
    return remotes


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:SLUG_CHARS].strip("_") or "index"


def _prefix(slug: str, key: str) -> str:
    return f"codeqa_{slug}_{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"
