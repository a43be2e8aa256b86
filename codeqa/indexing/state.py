"""What an index folder says about earlier runs, read before the store opens: `state.json` (the file
hashes and summary of the last complete run) and the previous engine's index (migrated once); and when each
phase last completed, as the meta records it (`last_indexed` for phase 1, `embedded_at` for phase 2).

`state.json` is removed before a run's first write and written after its last one, and only when the
run left nothing to do (phase 2 included): a run that finds it current has nothing to do and never
opens the store. Its summary keeps the git commit the run indexed, and whether the work tree differed from it
(`git`, read by `indexed_commit`): the commit of the last run that changed the index.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from ..config import Settings
from ..fingerprint import FINGERPRINT_KEYS, VECTOR_META_KEYS
from ..store import INDEX_FORMAT, semantic_coverage
from ..store.index_folder import previous_engine_index, read_marker
from ..types import SourceFile
from .prune import run_git


# ---- the previous engine's index ----------------------------------------------------------------

def migrate_legacy_index(repo: Path, index_dir: Path, settings: Settings) -> list[str]:
    """An index of the previous engine (qdrant-client's local mode: `qdrant/`, a pickled parse cache in
    `parsed/`), in the index folder or in `<repo>/.codeqa` where it used to live by default. Its
    embedding cache is plain SQLite (text hash -> float32 bytes, checked when read), so the new index
    is built from it without embedding again; its pickles are never opened. Returns the line to show.

    Its parts are removed from the index folder only when the folder carries codeqa's marker (the run claimed
    it: store/index_folder.py) and they are exactly the previous engine's: a `qdrant/` or `parsed/` folder of
    anything else is never taken for one. `<repo>/.codeqa` is only read."""
    if (index_dir / "graph.sqlite").exists():
        return []
    for old in dict.fromkeys([index_dir] + ([] if settings.index_dir else [repo / ".codeqa"])):
        if not (old / "qdrant").is_dir():
            continue
        if old == index_dir and (read_marker(index_dir) is None or not previous_engine_index(index_dir)):
            continue
        old_cache, new_cache = old / "embeddings.sqlite", index_dir / "embeddings.sqlite"
        if old != index_dir and old_cache.is_file() and not new_cache.exists():
            index_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(old_cache, new_cache)
        if old == index_dir:  # the dead parts go; the embedding cache stays where it is
            shutil.rmtree(old / "qdrant", ignore_errors=True)
            shutil.rmtree(old / "parsed", ignore_errors=True)
            (old / STATE_FILE).unlink(missing_ok=True)
            return [f"Rebuilt the index in {old}, made by codeqa's previous engine, with Qdrant Edge "
                    "from its embedding cache (nothing re-embedded)."]
        return [f"Rebuilt the index of codeqa's previous engine from {old} in {index_dir} from its embedding "
                f"cache (nothing re-embedded); indexes now live outside the repository, so {old} can be deleted."]
    return []


# ---- state.json: what the last complete run indexed -----------------------------------------

STATE_FILE = "state.json"
STATE_VERSION = 1


def read_state(index_dir: Path) -> dict | None:
    try:
        state = json.loads((index_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and state.get("version") == STATE_VERSION else None


def same_index_meta(state: dict | None, wanted_meta: dict) -> bool:
    """Whether state.json's run used this model and fingerprint (else every file is derived again)."""
    meta = (state or {}).get("meta") or {}
    return (state is not None and state.get("index_format") == INDEX_FORMAT
            and all(meta.get(k) == wanted_meta[k] for k in (*VECTOR_META_KEYS, *FINGERPRINT_KEYS)))


def state_is_current(state: dict, wanted_meta: dict, files: Sequence[SourceFile]) -> bool:
    return same_index_meta(state, wanted_meta) and state.get("files") == {f.path: f.sha256 for f in files}


def likely_changed(state: dict | None, wanted_meta: dict, files: Sequence[SourceFile]) -> list[SourceFile]:
    """The files this run will probably parse, told from state.json before the store is open: all of
    them without a state or after a model or chunker change. (The manifest has the last word.)"""
    if not same_index_meta(state, wanted_meta):
        return list(files)
    known = state.get("files") or {}
    return [f for f in files if known.get(f.path) != f.sha256]


def write_state(index_dir: Path, wanted_meta: dict, files: Sequence[SourceFile], summary: dict) -> None:
    state = {"version": STATE_VERSION, "index_format": INDEX_FORMAT, "meta": wanted_meta,
             "files": {f.path: f.sha256 for f in files}, "summary": summary}
    tmp = index_dir / (STATE_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(index_dir / STATE_FILE)


def remove_state(index_dir: Path) -> None:
    try:
        (index_dir / STATE_FILE).unlink()
    except FileNotFoundError:
        return
    fd = os.open(index_dir, os.O_RDONLY)  # the removal is on disk before the first write of the run
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def state_summary(report) -> dict:
    """The part of an IndexReport (index.py) that state.json keeps, for a run that finds nothing to do, and the
    commit of the repository it indexed."""
    return {"symbols": report.symbols, "references": report.references, "chunks": report.chunks,
            "files_by_language": report.files_by_language,
            "references_by_confidence": report.references_by_confidence,
            "partial": [list(item) for item in report.partial], "git": repository_commit(Path(report.repo))}


def indexed_commit(index_dir: Path) -> dict | None:
    """{"commit", "dirty"} of the last complete run of the index in `index_dir`, or None (no such run yet, the
    repository is not in git, or the run was made before codeqa recorded it)."""
    found = ((read_state(index_dir) or {}).get("summary") or {}).get("git")
    return found if isinstance(found, dict) and isinstance(found.get("commit"), str) else None


# ---- the commit a run indexes ----------------------------------------------------------------------



def repository_commit(repo: Path) -> dict | None:
    """{"commit": HEAD's id, "dirty": whether `repo`'s files differ from it (changed, staged, or new and not
    ignored: the index holds those too)} when `repo` is in a git work tree with a commit, else None.

    git runs as the repository sees it, but runs nothing the repository's own config names: no fsmonitor
    hook, and no filter driver (`git status` pipes a changed file through its clean filter to compare it)."""
    head = run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD")
    if head is None or not head.strip():
        return None
    drivers = run_git(repo, "config", "--get-regexp", r"^filter\.") or b""
    neutral = []
    for line in drivers.decode("utf-8", "surrogateescape").splitlines():
        key = line.split(" ", 1)[0]
        name, _, setting = key[len("filter."):].rpartition(".")
        if name and setting in ("clean", "smudge", "process", "required"):
            neutral += ["-c", f"filter.{name}.{setting}=" if setting != "required" else f"filter.{name}.required=false"]
    status = run_git(repo, *neutral, "status", "--porcelain", "--ignore-submodules=all", "--", ".")
    return {"commit": head.decode("ascii", "replace").strip(), "dirty": None if status is None else bool(status.strip())}


def report_from_state(report, state: dict) -> None:
    """Fill an IndexReport (index.py) of a run with nothing to do from state.json's summary."""
    summary = state.get("summary") or {}
    report.nothing_to_do = True
    report.files_unchanged = report.files_total
    report.symbols = summary.get("symbols", 0)
    report.references = summary.get("references", 0)
    report.references_by_confidence = summary.get("references_by_confidence", {})
    report.chunks = summary.get("chunks", 0)
    report.files_by_language = summary.get("files_by_language") or report.files_by_language
    report.partial = [tuple(item) for item in summary.get("partial", [])]


# ---- when each phase last completed ---------------------------------------------------------------

def after_phase2(meta: dict, chunks: int, pending: int) -> dict:
    """The meta once phase 2 stops with `pending` chunks left: how many have their vector and, when it left
    none, the time (`embedded_at`): "last indexed" alone was phase 1's time, minutes before search was whole."""
    done = {"chunks_embedded": int(meta.get("chunks") or chunks) - pending}
    if not pending:
        done["embedded_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return {**meta, **done}


def embedded_at(meta: dict) -> str | None:
    """When every chunk last had its dense vector (ISO 8601, UTC), or None while phase 2 has chunks left. A
    phase 1 that took every vector from the embedding cache completed both phases at once: its `last_indexed`."""
    if semantic_coverage(meta) < 1:
        return None
    return max((t for t in (meta.get("embedded_at"), meta.get("last_indexed")) if t), default=None)


__all__ = ["STATE_FILE", "migrate_legacy_index", "read_state", "state_is_current", "likely_changed", "write_state",
           "remove_state", "state_summary", "report_from_state", "after_phase2", "embedded_at", "indexed_commit",
           "repository_commit"]
