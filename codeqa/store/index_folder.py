"""Whether a folder is an index folder, and whose: checked before codeqa writes into a folder or deletes from it,
and by every reader.

    <index-dir>/codeqa-index.json   {"format": 1, "repo": "/absolute/path/of/the/repository"}
                                    ("repo": null where the index is on a Qdrant server: the folder then holds
                                    caches keyed by content, which checkouts of one remote share)

A writer makes a folder its index folder (`claim_index_folder`) before it writes anything else in it, and only
when the folder is:
- missing or empty (a lock file of a run killed before its first write aside): the marker is written first;
- marked, by this repository;
- unmarked, but every entry in it is one codeqa writes, by name and by content (a SQLite file's header, a Qdrant
  Edge shard's config, the previous engine's collections named as codeqa named them and its parse cache's file
  names): an index made before markers, adopted when its meta names this repository (or names none), and the
  previous engine's index (qdrant-client's local mode: its repository is known only inside its pickles, which
  are never opened, so it is rebuilt for the repository that indexes into it, as it always was).
Anything else is refused with IndexFolderError, and nothing is created or deleted in it: a folder of the user's
that merely has a `qdrant/`, `chunks/` or `parsed/` folder is not an index. A folder that belongs to another
repository (by its marker, else its meta) is refused with IndexOwnedError, by readers and writers alike.

A repository is known by its resolved path, as the meta's "repo" always recorded it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..errors import IndexFolderError, IndexOwnedError
from ..plain_sqlite import connect_untrusted
from ..source_text import NotRegularFile, read_regular

MARKER_FILE = "codeqa-index.json"
MARKER_FORMAT = 1
MARKER_MAX_BYTES = 64_000  # a marker is a path and a number; a bigger file is not ours
_SQLITE_HEADER = b"SQLite format 3\x00"
_SQLITE_FILES = {"graph.sqlite", "embeddings.sqlite", "parsed.sqlite", "resolved.sqlite"}
_SQLITE_SIDE = ("-wal", "-shm", "-journal")
_STATE_START = b'{"version":'  # state.json as indexing/state.py writes it (json.dump, its first key)
# The previous engine: qdrant-client's local mode, with collections named by identity.collection_prefix
# (codeqa_<slug>_<hash>_<kind>), and its pickled parse cache (<sha256>.pkl, .tmp while written)
_OLD_COLLECTION = re.compile(r"codeqa_[a-z0-9_]*_(chunks|symbols|references|files)")
_OLD_PARSED = re.compile(r"[0-9a-f]{64}\.(pkl|tmp)")
_OLD_QDRANT_FILES = {"meta.json", ".lock"}
_OLD_COLLECTION_FILES = {"storage.sqlite", "storage.sqlite-journal", "storage.sqlite-wal", "storage.sqlite-shm"}
_FILE_LIMIT = 4096  # entries looked at in one folder: an index folder has a dozen; a bigger one is not an index


@dataclass(frozen=True)
class Marker:
    """What an index folder's marker says: whose index it holds. None: only caches that any repository may
    share (the index itself is on a Qdrant server, named by store/identity.py; the embedding and parse caches
    here are keyed by content)."""

    repo: str | None


def claim_index_folder(index_dir: Path, repo: Path | None) -> None:
    """Make `index_dir` the index folder of `repo` for a writer (None: a run whose index is on a server), writing
    the marker first when it has none or names no repository; raises IndexFolderError / IndexOwnedError (and then
    creates nothing) when it may not."""
    marker = check_writable(index_dir, repo)
    if marker is not None and (repo is None or marker.repo is not None):
        return
    index_dir.mkdir(parents=True, exist_ok=True)
    tmp = index_dir / (MARKER_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"format": MARKER_FORMAT, "repo": None if repo is None else _identity(repo)}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(_marker_path(index_dir))


def check_writable(index_dir: Path, repo: Path | None) -> Marker | None:
    """What claim_index_folder checks, writing nothing (an index run asks before it takes its lock, a file in
    the folder); returns the folder's marker."""
    if index_dir.exists() and not index_dir.is_dir():
        raise IndexFolderError(f"The index folder {_shown(index_dir)} is a file; choose a folder with --index-dir "
                               "(or CODEQA_INDEX_DIR).")
    marker = read_marker(index_dir)
    if marker is None:
        strange = unrecognised_entries(index_dir)
        if strange:
            raise IndexFolderError(_not_an_index(index_dir, strange))
    if repo is not None:
        owner = marker.repo if marker is not None else None
        check_owner(index_dir, owner if owner is not None else meta_repo(index_dir), repo)
    return marker


def check_readable(index_dir: Path, repo: Path, meta: dict) -> None:
    """A reader's check, once the graph is open: the marker's repository, else the meta's, is `repo`'s."""
    marker = read_marker(index_dir)
    owner = marker.repo if marker is not None else None
    check_owner(index_dir, owner if owner is not None else _repo_of(meta), repo)


def check_owner(index_dir: Path, owner: str | None, repo: Path) -> None:
    if owner is not None and owner != _identity(repo):
        raise IndexOwnedError(f"The index folder {_shown(index_dir)} holds the index of {owner}, not of "
                              f"{_identity(repo)}: one folder holds one repository's index. Choose another folder for "
                              f"{_identity(repo)} with --index-dir (or CODEQA_INDEX_DIR), or leave both unset: each "
                              "repository then gets its own folder in the user's cache. (If that index is no longer "
                              "needed, delete the folder yourself; codeqa does not.)")


def read_marker(index_dir: Path) -> Marker | None:
    """The folder's marker; None when it has none. A marker codeqa cannot read is refused (IndexFolderError),
    never overwritten: the folder's owner is then unknown."""
    path = _marker_path(index_dir)
    try:
        data = read_regular(str(path), MARKER_MAX_BYTES)
    except FileNotFoundError:
        return None
    except NotRegularFile:  # a FIFO in its place would hang a plain read: no marker this codeqa wrote
        data = b""
    except OSError as exc:
        raise IndexFolderError(f"Cannot read {path} ({exc.strerror}); check its permissions.") from None
    try:
        marker = json.loads(data) if len(data) <= MARKER_MAX_BYTES else None
    except ValueError:
        marker = None
    if not isinstance(marker, dict) or marker.get("format") != MARKER_FORMAT or "repo" not in marker \
            or not isinstance(marker["repo"], (str, type(None))):
        raise IndexFolderError(f"{path} is not a marker this codeqa wrote (format {MARKER_FORMAT}), so whose index "
                               f"{_shown(index_dir)} is, is unknown and nothing in it is changed. Delete the folder if "
                               "it is an index you no longer need, or choose another with --index-dir (or "
                               "CODEQA_INDEX_DIR).")
    return Marker(marker["repo"] or None)


def meta_repo(index_dir: Path) -> str | None:
    """The repository in the meta of an index made before markers (graph.sqlite; every format had this table),
    or None when there is no graph, no meta or no repository in it."""
    graph = index_dir / "graph.sqlite"
    if not graph.is_file():
        return None
    try:
        db = connect_untrusted(str(graph), timeout=30.0)
        try:
            row = db.execute("SELECT data FROM meta WHERE id = 0").fetchone()
        finally:
            db.close()
        meta = json.loads(row[0]) if row else {}
    except (ValueError, TypeError, OSError, sqlite3.Error):
        return None
    return _repo_of(meta)


def previous_engine_index(folder: Path) -> bool:
    """Whether `folder` holds the previous engine's index: its `qdrant/` exactly as qdrant-client's local mode
    laid it out with codeqa's collection names, and its `parsed/` (if any) only the old parse cache's files."""
    qdrant = folder / "qdrant"
    try:
        meta = json.loads(read_regular(str(qdrant / "meta.json"), 10_000_000 - 1))
    except (OSError, ValueError, NotRegularFile):
        return False
    collections = meta.get("collections") if isinstance(meta, dict) else None
    if not isinstance(collections, dict) or not collections or not all(
            isinstance(n, str) and _OLD_COLLECTION.fullmatch(n) for n in collections):
        return False
    entries = _entries(qdrant)
    if entries is None or not set(entries) <= _OLD_QDRANT_FILES | {"collection"}:
        return False
    stored = _entries(qdrant / "collection") if "collection" in entries else {}
    if stored is None or not set(stored) <= set(collections):
        return False
    for name in stored:
        files = _entries(qdrant / "collection" / name)
        if files is None or not set(files) <= _OLD_COLLECTION_FILES:
            return False
    parsed = folder / "parsed"
    if parsed.exists() or parsed.is_symlink():
        names = _entries(parsed)
        if names is None or not all(_OLD_PARSED.fullmatch(n) and (parsed / n).is_file() for n in names):
            return False
    return True


def unrecognised_entries(index_dir: Path) -> list[str]:
    """The entries of `index_dir` that are not what codeqa writes in an index folder ([] for a missing or empty
    folder): each name is checked against its content, so that a user's `chunks/` or `qdrant/` is not taken
    for an index's."""
    entries = _entries(index_dir)
    if entries is None:
        return [] if not index_dir.exists() else ["(the folder cannot be listed, or holds too much)"]
    old_engine = None
    strange = []
    for name in sorted(entries):
        path = index_dir / name
        if path.is_symlink():  # codeqa writes no links: one could lead a deletion out of the folder
            strange.append(name)
        elif name in ("qdrant", "parsed"):
            old_engine = previous_engine_index(index_dir) if old_engine is None else old_engine
            if not old_engine:
                strange.append(name + "/")
        elif not _recognised(path, name):
            strange.append(name + ("/" if path.is_dir() else ""))
    return strange


def _recognised(path: Path, name: str) -> bool:
    if name in (MARKER_FILE, MARKER_FILE + ".tmp"):
        return path.is_file()
    if name == "index.lock":  # indexing/writer_lock.py's: empty, or the holder's process id
        return path.is_file() and _small_digits(path)
    if name in _SQLITE_FILES:
        return path.is_file() and _starts_with(path, _SQLITE_HEADER, empty_ok=True)
    if any(name == base + side for base in _SQLITE_FILES for side in _SQLITE_SIDE):
        return path.is_file()
    if name in ("state.json", "state.json.tmp"):
        return path.is_file() and _starts_with(path, _STATE_START, empty_ok=name.endswith(".tmp"))
    if name == "chunks":  # a Qdrant Edge shard (store/edge.py): its config, segments (the optimizer's temporary
        names = _entries(path)  # ones too), the engine's JSON state
        return names is not None and "edge_config.json" in names and all(
            n in ("segments", "temp_segments", "wal") or n.endswith(".json") for n in names)
    if name.startswith("writer-spool-"):  # indexing/writer.py's temporary folder (tempfile.mkdtemp)
        return path.is_dir()
    return False


def _head(path: Path, size: int) -> bytes | None:
    """The first `size` bytes of a regular file (never a FIFO's wait), or None when it cannot be read as one."""
    try:
        return read_regular(str(path), size - 1)
    except (OSError, NotRegularFile):
        return None


def _starts_with(path: Path, start: bytes, empty_ok: bool) -> bool:
    head = _head(path, len(start))
    return head is not None and (head == start or (empty_ok and head == b""))


def _small_digits(path: Path) -> bool:
    text = _head(path, 33)
    return text is not None and len(text) <= 32 and (text == b"" or text.strip().isdigit())


def _entries(folder: Path) -> list[str] | None:
    """The names in `folder`, or None when it is not a readable folder or holds more than an index folder would."""
    try:
        with os.scandir(folder) as listing:
            names = []
            for entry in listing:
                names.append(entry.name)
                if len(names) > _FILE_LIMIT:
                    return None
            return names
    except OSError:
        return None


def _not_an_index(index_dir: Path, strange: list[str]) -> str:
    shown = ", ".join(strange[:5]) + (f" and {len(strange) - 5} more" if len(strange) > 5 else "")
    return (f"{_shown(index_dir)} is not a codeqa index folder: it holds {shown}, which codeqa did not write, and it "
            f"has no {MARKER_FILE}. codeqa writes and deletes only in a folder it made, so it changed nothing there. "
            "Choose a new or empty folder with --index-dir (or CODEQA_INDEX_DIR), or leave it unset to use the "
            "user's cache.")


def _repo_of(meta: object) -> str | None:
    repo = meta.get("repo") if isinstance(meta, dict) else None
    return repo if isinstance(repo, str) and repo else None


def _identity(repo: Path) -> str:
    return str(Path(repo).resolve())


def _shown(index_dir: Path) -> str:
    return str(Path(index_dir).absolute())


def _marker_path(index_dir: Path) -> Path:
    return Path(index_dir) / MARKER_FILE


__all__ = ["MARKER_FILE", "Marker", "claim_index_folder", "check_writable", "check_readable", "read_marker", "meta_repo",
           "previous_engine_index", "unrecognised_entries"]
