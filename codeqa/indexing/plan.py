"""plan_index(): what `codeqa index` would do to a repository, and about how long it would take here,
without indexing anything (`codeqa index --dry-run`).

    walk (all of it)        files by language, what is skipped and why, folders by size, suggested ignore lines
    sample (a few seconds)  random files parsed + chunked, their references resolved, their chunks embedded
                            with the configured embedder and written to a scratch store
    extrapolate by bytes    chunks, phase 1 (parse + chunk + resolve + store writes: keyword and graph
                            search), phase 2 (embedding: semantic search)

Every time is measured on this machine now, on the sample, and scaled by the repository's bytes (chunks
for the embedding): estimates, as good as the sample is typical and the machine's load steady. Parsing
runs in worker processes in a real run; their speed-up is modelled from the worker count, the cores and
the load average. Nothing is written to the repository or to the index folder: the store's write speed
is measured on the sample in a temporary folder, removed before returning.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Sequence

import numpy as np

from .chunk import chunk_embedding_text, chunk_file
from ..config import Settings
from ..embed import Embedder, embedder_from_settings
from .walk import walk_repository
from ..source_text import read_source_text
from ..redact import redact_source
from .graph import resolve_references
from .writer import writes_beside
from .parse_pool import PARALLEL_PARSE_MIN_FILES
from .parse import parse_source
from .parse_cache import encode_parsed
from ..types import Chunk, ParsedFile, SkippedFile, SourceFile

SAMPLE_SECONDS = 3.0  # parse + chunk random files until this much time is spent...
SAMPLE_MAX_FILES = 400  # ...or this many files are done
EMBED_SAMPLE_TEXTS = 64  # chunk texts embedded to time the model
EMBED_WARM_UP_TEXTS = 4  # encoded first, untimed: the first call of a model is slower
RUN_PADDING = 1.05  # a run's batches, ordered by word pieces, pad 1.5-7.5% (bench/embed_speed.py)
EMBED_CHARS_READ = 1024  # about the characters of code the bundled model reads (256 tokens); it truncates the rest
SIZE_SCAN_SECONDS = 1.5  # sizing the folders the walk never entered stops after this (figures are then "at least")
TOP_FOLDERS = 10
VCS_DIRS = frozenset({".git", ".hg", ".svn"})  # never indexed, never worth listing
# A folder is worth an ignore line when it holds at least this share of the indexed bytes, or this many bytes.
SUGGEST_SHARE = 0.05
SUGGEST_BYTES = 5_000_000
# folder names that usually hold what nobody asks questions about, by kind, and the ignore file to put them in:
# build output and environments belong in .gitignore; vendored, generated and data files are often kept in git
SKIPPABLE_KINDS: dict[str, tuple[frozenset[str], str]] = {
    "virtualenv": (frozenset({".venv", "venv", "env", ".tox", ".nox", "site-packages", ".conda"}), ".gitignore"),
    "build output": (frozenset({"build", "dist", "out", "target", "_build", "htmlcov", "coverage", ".next", ".nuxt",
                                "bin", "obj", "cmake-build-debug", "cmake-build-release"}), ".gitignore"),
    "vendored": (frozenset({"node_modules", "bower_components", "vendor", "vendored", "_vendor", "third_party",
                            "third-party", "thirdparty", "external", "externals", "extern", "deps", "Pods"}), ".codeqaignore"),
    "generated": (frozenset({"generated", "gen", "_generated", "__generated__", "autogen", "gen-src"}), ".codeqaignore"),
    "data": (frozenset({"data", "datasets", "dataset", "fixtures", "testdata", "test_data", "test-data", "__snapshots__",
                        "snapshots", "assets"}), ".codeqaignore"),
}
# A folder whose indexed bytes are mostly HTML is taken for rendered documentation.
HTML_SUFFIXES = (".html", ".htm")
RENDERED_SHARE = 0.8


@dataclass(frozen=True)
class LanguageShare:
    language: str  # a grammar's name, or "text" for files chunked by lines
    files: int
    bytes: int


@dataclass(frozen=True)
class FolderShare:
    """A folder: what of it is indexed and what is left out, and an ignore line when it looks skippable."""

    path: str  # relative to the repository, posix
    status: str  # "indexed" (some of it), or why all of it is left out: ignored-dir, output (prune.py), gitignore, codeqaignore
    files: int  # indexed
    bytes: int
    left_out_files: int = 0  # skipped or ignored
    left_out_bytes: int = 0
    kind: str = ""  # what it holds, by its name: virtualenv, build output, vendored, generated, data; or by its
    # content: rendered HTML ("" unknown)
    suggestion: str = ""  # a line to add to `ignore_file`, "" when none is needed
    ignore_file: str = ""
    at_least: bool = False  # sizing stopped early: the left-out figures are lower bounds

    @property
    def total_bytes(self) -> int:
        return self.bytes + self.left_out_bytes


@dataclass(frozen=True)
class IndexPlan:
    repo: str
    index_dir: str
    index_exists: bool  # then `codeqa index` redoes changed files only; the figures are for a full build
    files: int
    bytes: int
    by_language: tuple[LanguageShare, ...]
    skipped: tuple[SkippedFile, ...]
    pruned: tuple[SkippedFile, ...]  # folders left out unread, once each (walk.WalkResult)
    gitignored_files: int  # files a .gitignore matches
    folders: tuple[FolderShare, ...]  # the biggest, indexed or not, and every one with a suggestion
    walk_seconds: float
    sample_files: int
    sample_bytes: int
    sample_chunks: int
    chunks: int  # estimated
    parse_workers: int
    parse_seconds: float  # parse + chunk, in `parse_workers` processes
    resolve_seconds: float
    store_seconds: float
    model_id: str
    model_load_seconds: float
    embed_sample_chunks: int
    embed_sample_seconds: float
    embed_seconds: float  # estimated, model load excluded
    notes: tuple[str, ...] = ()
    store_beside: bool = False  # a writer process stores the chunks while references are resolved (writer.py)

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped))

    @property
    def suggestions(self) -> tuple[FolderShare, ...]:
        return tuple(f for f in self.folders if f.suggestion)

    @property
    def phase1_seconds(self) -> float:
        """Walk, parse, chunk, resolve references and store: keyword and graph search work from here. With
        a writer process the store writes run beside the resolution, on the other core."""
        after_parse = (max(self.resolve_seconds, self.store_seconds) if self.store_beside
                       else self.resolve_seconds + self.store_seconds)
        return self.walk_seconds + self.parse_seconds + after_parse

    @property
    def phase2_seconds(self) -> float:
        """Load the model and embed every chunk: semantic search."""
        return self.model_load_seconds + self.embed_seconds

    @property
    def chunks_per_second(self) -> float:
        """The embedding speed the estimate amounts to (the sample's, weighted by the chunks' lengths)."""
        return self.chunks / self.embed_seconds if self.embed_seconds > 0 else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["skipped"] = [{"path": s.path, "reason": s.reason, **({"detail": s.detail} if s.detail else {})} for s in self.skipped]
        d["skipped_by_reason"] = self.skipped_by_reason
        d["pruned"] = [{"path": s.path, "reason": s.reason, **({"detail": s.detail} if s.detail else {})} for s in self.pruned]
        d["suggestions"] = [{"file": f.ignore_file, "line": f.suggestion, "path": f.path, "kind": f.kind, "bytes": f.bytes}
                            for f in self.suggestions]
        d["notes"] = list(self.notes)
        d["estimates"] = {"phase1_seconds": round(self.phase1_seconds, 1), "phase2_seconds": round(self.phase2_seconds, 1),
                          "total_seconds": round(self.phase1_seconds + self.phase2_seconds, 1),
                          "chunks_per_second": round(self.chunks_per_second, 1), "chunks": self.chunks}
        for key in ("walk_seconds", "parse_seconds", "resolve_seconds", "store_seconds", "model_load_seconds",
                    "embed_sample_seconds", "embed_seconds"):
            d[key] = round(d[key], 2)
        return d


def plan_index(repo: Path, settings: Settings | None = None, embedder: Embedder | None = None, seed: int = 0,
               sample_seconds: float = SAMPLE_SECONDS) -> IndexPlan:
    """What `index_repo(repo, settings)` would index, skip and cost, from the walk and a timed sample.
    `embedder` defaults to the one the settings configure (embedder_from_settings, as index_repo does)."""
    settings = settings or Settings.load()
    started = time.perf_counter()
    walked = walk_repository(Path(repo), settings.files_max_bytes)
    walk_seconds = time.perf_counter() - started
    repo = Path(repo).resolve()
    files = walked.files
    total_bytes = sum(f.size for f in files)
    index_dir = settings.index_dir_for(repo)
    notes: list[str] = []

    sample, parsed, chunks, parse_sample_seconds = _parse_sample(files, settings, random.Random(seed), sample_seconds)
    sample_bytes = sum(f.size for f in sample)
    scale = total_bytes / sample_bytes if sample_bytes else 0.0
    t = time.perf_counter()
    references = resolve_references(parsed)
    resolve_sample_seconds = time.perf_counter() - t
    workers = _parse_worker_count(len(files), settings)
    speedup = _parallel_speedup(workers)
    if workers > 1:
        notes.append(f"Parsing runs in {workers} worker processes: modelled as {speedup:.1f}x faster than one "
                     f"(cores {_cores()}, load average {os.getloadavg()[0]:.1f}).")

    embedder = embedder or embedder_from_settings(settings)
    by_id = {s.id: s for pf in parsed for s in pf.symbols}
    texts = [chunk_embedding_text(c, by_id) for c in chunks]
    load_seconds, embed_sample_seconds, embedded_texts = _time_embedding(embedder, texts, settings, random.Random(seed))
    embedded = len(embedded_texts)
    estimated_chunks = round(len(chunks) * scale)
    embed_seconds = _embed_seconds(embedder, embed_sample_seconds, embedded_texts, texts, settings) * scale
    store_sample_seconds = _time_store(repo, settings, parsed, chunks, texts, references, embedder.dimension)
    beside = writes_beside(len(files), settings)
    if beside:
        notes.append("The chunks are stored by a second process while references are resolved: phase 1 counts "
                     "the longer of the two.")
    if settings.qdrant_url:
        notes.append("Store writes were timed on the embedded engine; a Qdrant server's speed may differ.")
    if index_dir.exists():
        notes.append(f"An index exists in {index_dir}: `codeqa index` redoes changed files only and takes cached "
                     "vectors from its embedding cache. These figures are for a full build (--full).")
    if len(sample) < len(files):
        notes.append(f"Estimates from a sample of {len(sample)} of {len(files)} files ({sample_bytes / 1e6:.1f} of "
                     f"{total_bytes / 1e6:.1f} MB) and {embedded} chunk texts, timed on this machine now.")
    else:
        notes.append(f"Every file was parsed for this estimate; times from {embedded} chunk texts embedded, "
                     "timed on this machine now.")

    languages = Counter(f.language or "text" for f in files)
    language_bytes = Counter()
    for f in files:
        language_bytes[f.language or "text"] += f.size
    return IndexPlan(
        repo=str(repo), index_dir=str(index_dir), index_exists=index_dir.exists(), files=len(files), bytes=total_bytes,
        by_language=tuple(LanguageShare(lang, n, language_bytes[lang])
                          for lang, n in sorted(languages.items(), key=lambda kv: (-language_bytes[kv[0]], kv[0]))),
        skipped=tuple(walked.skipped), pruned=tuple(walked.pruned), gitignored_files=len(walked.gitignored),
        folders=folder_shares(repo, files, walked.skipped, walked.pruned),
        walk_seconds=walk_seconds, sample_files=len(sample), sample_bytes=sample_bytes, sample_chunks=len(chunks),
        chunks=estimated_chunks, parse_workers=workers, parse_seconds=parse_sample_seconds * scale / speedup,
        resolve_seconds=resolve_sample_seconds * scale, store_seconds=store_sample_seconds * scale,
        model_id=embedder.model_id, model_load_seconds=load_seconds, embed_sample_chunks=embedded,
        embed_sample_seconds=embed_sample_seconds, embed_seconds=embed_seconds, notes=tuple(notes),
        store_beside=beside)


# ---- the sample ------------------------------------------------------------------------------

def _parse_sample(files: Sequence[SourceFile], settings: Settings, rng: random.Random, budget: float
                  ) -> tuple[list[SourceFile], list[ParsedFile], list[Chunk], float]:
    """Random files parsed and chunked as an index run does (redacted text, the encoded parse for the
    cache), one after another until `budget` seconds or SAMPLE_MAX_FILES. Returns them and the time."""
    order = list(files)
    rng.shuffle(order)
    sample, parsed, chunks = [], [], []
    started = time.perf_counter()
    for f in order[:SAMPLE_MAX_FILES]:
        pf, cs = _parse_and_chunk(f, settings)
        sample.append(f)
        parsed.append(pf)
        chunks.extend(cs)
        if time.perf_counter() - started >= budget:
            break
    return sample, parsed, chunks, time.perf_counter() - started


def _parse_and_chunk(file: SourceFile, settings: Settings) -> tuple[ParsedFile, list[Chunk]]:
    try:
        text = redact_source(read_source_text(file.abs_path))
    except (OSError, UnicodeDecodeError) as exc:
        return ParsedFile(file, (), (), error=f"unreadable: {exc}"), []
    parsed, tree = parse_source(file, text, settings.queries_dir)
    try:
        chunks = chunk_file(file, text, tree, parsed.symbols, settings.chunk_max_chars, settings.chunk_min_chars)
    except Exception:  # the run falls back to line windows for this file: so does the estimate
        chunks = chunk_file(file, text, None, (), settings.chunk_max_chars, settings.chunk_min_chars)
    encode_parsed(parsed)  # the run encodes every parse for its parse cache
    return parsed, chunks


def _parse_worker_count(files: int, settings: Settings) -> int:
    """The parse processes index_repo starts for `files` changed files (see index.parse_workers)."""
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    if files < PARALLEL_PARSE_MIN_FILES[method]:
        return 1
    return max(1, min(settings.parse_workers or min(os.cpu_count() or 1, 8), files))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _parallel_speedup(workers: int) -> float:
    """How much faster `workers` processes parse than the one that timed the sample, with the cores
    shared with the load already running: each process gets min(1, cores / processes) of a core."""
    if workers < 2:
        return 1.0
    cores, load = _cores(), max(0.0, os.getloadavg()[0] - 1.0)  # less the sampling process itself
    share = lambda processes: min(1.0, cores / (processes + load))  # noqa: E731
    return max(1.0, workers * share(workers) / share(1))


def _embed_length(text: str) -> int:
    """What embedding a text costs, roughly: its length, up to what the model reads of it."""
    return min(len(text), EMBED_CHARS_READ)


def _embed_seconds(embedder: Embedder, sample_seconds: float, sample: Sequence[str], texts: Sequence[str],
                   settings: Settings) -> float:
    """Seconds to embed `texts` (every sampled chunk), from the seconds the sample took: per unit of
    text length, times the length of every text (the texts timed may be longer or shorter than most).

    A local model (`pads_batches`) computes every text of a batch at the longest one's word pieces.
    The timed sample went in batches of texts of any length, mostly padded to the model's 256; a run
    orders its texts longest first (embed.longest_first), so its batches hold texts of about one
    length and cost about their own word pieces, RUN_PADDING more. Counted by characters instead, the
    estimate for SQLAlchemy was 14 chunks/s where phase 2 ran 23. Other embedders (an endpoint):
    by characters, up to what the model reads."""
    if not sample:
        return 0.0
    if getattr(embedder, "pads_batches", False):
        from ..embed.tokenizer import word_pieces

        pieces = sorted(word_pieces(sample), reverse=True)
        batch = max(settings.embedding_batch_size, 1)
        padded = sum(len(b) * b[0] for b in (pieces[i:i + batch] for i in range(0, len(pieces), batch)))
        return sample_seconds / max(padded, 1) * sum(word_pieces(texts)) * RUN_PADDING
    return sample_seconds / max(sum(map(_embed_length, sample)), 1) * sum(map(_embed_length, texts))


def _time_embedding(embedder: Embedder, texts: Sequence[str], settings: Settings, rng: random.Random
                    ) -> tuple[float, float, list[str]]:
    """(model load seconds, seconds to embed the sample, the texts embedded). The sample is random
    chunk texts encoded in one call at the run's batch size, as the run encodes its texts."""
    sample = rng.sample(list(texts), min(EMBED_SAMPLE_TEXTS, len(texts)))
    if not sample:  # nothing to embed: the run never loads the model either
        return 0.0, 0.0, []
    started = time.perf_counter()
    if hasattr(embedder, "load") and not getattr(embedder, "loaded", False):
        embedder.load()
    embedder.encode(sample[:EMBED_WARM_UP_TEXTS])  # first-call costs go with the load, not the speed
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    embedder.encode(sample, batch_size=settings.embedding_batch_size)
    return load_seconds, time.perf_counter() - started, sample


def _time_store(repo: Path, settings: Settings, parsed: Sequence[ParsedFile], chunks: Sequence[Chunk],
                texts: Sequence[str], references, dimension: int) -> float:
    """Seconds to write the sample as index_repo writes a run (chunks with dense and sparse vectors,
    symbols, manifest, references, optimize) into a scratch embedded store, removed after."""
    from ..store import ManifestEntry, open_store

    if not chunks:
        return 0.0
    dimension = dimension or 384
    vectors = np.random.default_rng(0).standard_normal((len(chunks), dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scratch = Path(tempfile.mkdtemp(prefix="codeqa-plan-"))
    try:
        started = time.perf_counter()
        store = open_store(repo, replace(settings, index_dir=scratch, qdrant_url=None), create=True)
        try:
            store.ensure_schema(dimension)
            store.upsert_chunks(chunks, vectors, texts)
            store.upsert_symbols([s for pf in parsed for s in pf.symbols])
            store.flush()
            store.put_manifest([ManifestEntry(pf.file.path, pf.file.sha256, pf.file.language, 0, len(pf.symbols))
                                for pf in parsed])
            store.replace_references(references)
            store.optimize()
            store.flush()
        finally:
            store.close()
        return time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ---- folders ---------------------------------------------------------------------------------

def folder_shares(repo: Path, files: Sequence[SourceFile], skipped: Sequence[SkippedFile],
                  pruned: Sequence[SkippedFile]) -> tuple[FolderShare, ...]:
    """The biggest top-level folders, and every folder one or two levels down that gets a suggested
    ignore line: one whose name says it holds build output, an environment, vendored, generated or
    data files, or that is mostly rendered HTML, and that is big. Folders the walk never entered are sized on disk within
    SIZE_SCAN_SECONDS; VCS folders are left out."""
    total = sum(f.size for f in files) or 1
    shares: list[FolderShare] = []
    deadline = time.perf_counter() + SIZE_SCAN_SECONDS
    for item in list(pruned) + [s for s in skipped if s.reason == "codeqaignore" and s.detail == "folder"]:
        if PurePosixPath(item.path).name in VCS_DIRS or not (repo / item.path).is_dir():
            continue
        count, size, complete = _folder_size(repo / item.path, deadline)
        shares.append(_with_suggestion(FolderShare(item.path, item.reason, 0, 0, count, size, _kind(repo, item.path),
                                                   at_least=not complete), total))
    indexed = _by_folder((f.path, f.size) for f in files)
    html = _by_folder((f.path, f.size) for f in files if f.path.lower().endswith(HTML_SUFFIXES))
    left_out = _by_folder((s.path, _size(repo / s.path)) for s in skipped if s.detail != "folder")
    for path in sorted(set(indexed) | set(left_out)):
        count, size = indexed.get(path, (0, 0))
        out_count, out_size = left_out.get(path, (0, 0))
        kind = _kind(repo, path) or ("rendered HTML" if html.get(path, (0, 0))[1] >= RENDERED_SHARE * max(size, 1) else "")
        shares.append(_with_suggestion(FolderShare(path, "indexed" if count else "skipped", count, size, out_count,
                                                   out_size, kind), total))
    suggested = [s.path + "/" for s in shares if s.suggestion]
    shares = [replace(s, suggestion="", ignore_file="") if any(s.path.startswith(p) for p in suggested) else s
              for s in shares]  # no line for a folder inside one that gets a line
    top = sorted(shares, key=lambda s: (-s.total_bytes, s.path))
    biggest = [s for s in top if "/" not in s.path][:TOP_FOLDERS]
    return tuple(biggest + [s for s in top if s.suggestion and s not in biggest])


def _with_suggestion(share: FolderShare, total_indexed: int) -> FolderShare:
    """`share` with an ignore line when its name says it is skippable and it costs enough: its indexed
    bytes are a big share of the index, or it is big on disk (the walk still looks at every file)."""
    if not share.kind or share.status in ("ignored-dir", "output", "gitignore", "codeqaignore"):
        return share
    if share.bytes >= SUGGEST_SHARE * total_indexed or share.total_bytes >= SUGGEST_BYTES:
        if share.kind == "rendered HTML":  # built documentation: its sources beside it say the same
            return replace(share, suggestion=f"/{share.path}/**/*.html", ignore_file=".codeqaignore")
        return replace(share, suggestion=f"/{share.path}/", ignore_file=SKIPPABLE_KINDS[share.kind][1])
    return share


def _by_folder(items) -> dict[str, tuple[int, int]]:
    """(files, bytes) by folder, for the folders one and two levels down."""
    out: dict[str, list[int]] = {}
    for path, size in items:
        parts = path.split("/")[:-1]
        for depth in (1, 2):
            if len(parts) >= depth:
                entry = out.setdefault("/".join(parts[:depth]), [0, 0])
                entry[0] += 1
                entry[1] += size
    return {k: (v[0], v[1]) for k, v in out.items()}


def _kind(repo: Path, path: str) -> str:
    if (repo / path / "pyvenv.cfg").is_file():
        return "virtualenv"
    name = PurePosixPath(path).name
    if name.endswith(".egg-info"):
        return "build output"
    return next((kind for kind, (names, _) in SKIPPABLE_KINDS.items() if name in names), "")


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def _folder_size(top: Path, deadline: float) -> tuple[int, int, bool]:
    """(files, bytes, complete) under `top`, without following links; stops at `deadline`."""
    count = size = 0
    stack = [str(top)]
    while stack:
        if time.perf_counter() > deadline:
            return count, size, False
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            count += 1
                            size += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return count, size, True
