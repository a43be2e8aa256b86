"""Parsing and chunking many files at once: forked (or spawned) worker processes, and the fallback.

Workers start before the store opens (a fork must not inherit open engine handles), each compiles its
languages' queries once, and dies with its parent. A pool that breaks (a worker killed by a crash or
out of memory) costs time, never files: what it had not returned is parsed in this process.
"""

from __future__ import annotations

import gc
import hashlib
import os
import signal
import sys
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Sequence

from .chunk import NestingTooDeep, chunk_file
from ..config import Settings
from ..source_text import NotRegularFile, read_regular
from ..redact import redact_source
from .parse import parse_source, prepare_language
from .graph.modules import with_module_symbol
from .parse_cache import decode_parsed, encode_parsed
from .writer import pack
from ..types import Chunk, ParsedFile, SourceFile

# Below these many changed files, starting worker processes costs more than it saves: a forked
# worker starts in milliseconds (it inherits the imported modules); a spawned one imports everything
# and compiles its queries first (~0.4 s), so it only pays on big projects.
PARALLEL_PARSE_MIN_FILES = {"fork": 48, "spawn": 400}
PARSE_JOBS_PER_TASK = 2
NOT_READ = "not-read"  # the manifest hash of a file the parse could not read: never a walk's (hex) hash

def _parse_and_chunk(job: tuple[SourceFile, int, int], query_dir: Path | None = None) -> tuple[ParsedFile, list[Chunk]]:
    """One file read, parsed (with the queries of `query_dir`, Settings.queries_dir) and chunked.

    The parse's file carries the hash and size of the bytes read here, which the manifest records: a
    file edited since the walk read it (a save, a `git checkout` during the run) is indexed as it was
    parsed, and the next run, whose walk sees another hash, parses it again, even when the edit was
    undone meanwhile. A file that could not be read at all gets a hash no walk gives (NOT_READ)."""
    file, max_chars, min_chars = job
    try:
        data = read_regular(str(file.abs_path), 1 << 40)
    except (OSError, NotRegularFile) as exc:
        detail = f"{file.abs_path} is no longer a regular file" if isinstance(exc, NotRegularFile) else exc
        return ParsedFile(replace(file, sha256=NOT_READ), (), (), error=f"unreadable: {detail}"), []
    digest = hashlib.sha256(data).hexdigest()
    if digest != file.sha256:
        file = replace(file, size=len(data), sha256=digest)
    try:
        text = redact_source(data.decode("utf-8"))  # credentials never reach symbols, chunks or vectors
    except UnicodeDecodeError as exc:
        return ParsedFile(file, (), (), error=f"unreadable: {exc}"), []
    parsed, tree = parse_source(file, text, query_dir)
    try:
        chunks = chunk_file(file, text, tree, parsed.symbols, max_chars, min_chars)
    except Exception as exc:  # too deep, or a chunker bug on one file: it must not end the run
        reason = str(exc) if isinstance(exc, NestingTooDeep) else f"chunking failed ({type(exc).__name__}: {exc})"
        chunks = chunk_file(file, text, None, (), max_chars, min_chars)
        parsed = ParsedFile(file, parsed.symbols, parsed.references, error=f"{reason}; used line windows")
    return with_module_symbol(parsed, text, tree), chunks  # after chunking: chunks keep the file's own symbols


def _parse_chunk_encode(job: tuple[SourceFile, int, int, bool, bool, Path | None],
                        ) -> tuple[ParsedFile | SourceFile, list[Chunk] | bytes, bytes]:
    """One changed file: its parse, chunks, and the parse as the cache stores it (plain JSON).
    A worker encodes, so the parent only writes the bytes. With the job's `cut`, only the parse's
    file comes back (the hash it was parsed at: see _parse_and_chunk): the parent reads the cut it keeps (parse_cache.table_only: what resolving other
    files reads) from the blob's first part, where the encoding put it as columns. Pickling the cut
    parse instead cost the worker a Python call per symbol and reference, and the parent as many
    to unpickle them and again to share their strings (site-packages: ~55 s of CPU in the parse).
    With its `pack`, the chunks come back packed for a store writer (writer.pack), which the
    parent only passes on."""
    parsed, chunks = _parse_and_chunk(job[:3], job[5])
    blob = encode_parsed(parsed)
    return (parsed.file if job[3] else parsed), (pack(parsed, chunks) if job[4] else chunks), blob


def _parse_and_chunk_all(files: list[SourceFile], settings: Settings, pool: ProcessPoolExecutor | None = None,
                         cut: bool = False, packed: bool = False,
                         strings: dict | None = None) -> Iterator[tuple[ParsedFile, list[Chunk] | bytes, bytes]]:
    """Parse and chunk `files`: in `pool` (see parse_workers) when given, in workers started now when
    there are enough files, else in order here. Workers take the biggest files first, and results
    come back in that order. With `cut`, each parse holds only what resolving other files reads
    (parse_cache.table_only; the blob has it all), decoded here from the blob with `strings`
    (parse_cache.decode_parsed: equal strings one object across the parses given one dict). With
    `packed`, each file's chunks come as writer.pack's bytes.

    A worker pool that breaks (a worker killed, out of memory) costs nothing but time: the files it
    had not returned are parsed here.
    """
    if pool is None and _worker_count(files, settings) > 1:
        with parse_workers(files, settings) as own:
            yield from _parse_and_chunk_all(files, settings, own, cut, packed, strings)
        return
    jobs = [(f, settings.chunk_max_chars, settings.chunk_min_chars, cut, packed, settings.queries_dir) for f in files]
    if pool is None:
        results = map(_parse_chunk_encode, jobs)
    else:
        jobs.sort(key=lambda job: -job[0].size)  # no worker is left with a big file at the end while the other idles
        results = _pooled(pool, jobs)
    if not cut:
        yield from results  # type: ignore[misc]
        return
    strings = {} if strings is None else strings
    for file, chunks, blob in results:
        yield _cut_parse(file, blob, strings), chunks, blob  # type: ignore[arg-type]


def _pooled(pool: ProcessPoolExecutor, jobs: list) -> Iterator[tuple[ParsedFile | SourceFile, list[Chunk] | bytes, bytes]]:
    """pool.map over `jobs`, in their order; what a broken pool had not returned is done here."""
    done = 0
    try:
        for result in pool.map(_parse_chunk_encode, jobs, chunksize=PARSE_JOBS_PER_TASK):
            yield result
            done += 1
    except BrokenProcessPool:
        yield from map(_parse_chunk_encode, jobs[done:])


def _cut_parse(file: SourceFile, blob: bytes, strings: dict) -> ParsedFile:
    """The parse cut to what resolving other files reads: the first part of its encoding, which
    holds exactly that (decode_parsed with all_references=False)."""
    parsed = decode_parsed(blob, file, False, strings)
    if parsed is None:  # never for a blob encode_parsed made: a defect, not bad input
        raise ValueError(f"the encoded parse of {file.path} does not decode")
    return parsed


def _worker_count(files: Sequence[SourceFile], settings: Settings) -> int:
    """How many parse workers `files` are worth: 1 (parse here) below PARALLEL_PARSE_MIN_FILES."""
    workers = min(settings.parse_workers or min(os.cpu_count() or 1, 8), len(files))
    return workers if len(files) >= PARALLEL_PARSE_MIN_FILES[_start_method()] else 1


def _start_method() -> str:
    return "fork" if sys.platform.startswith("linux") else "spawn"


@contextmanager
def parse_workers(files: Sequence[SourceFile], settings: Settings) -> Iterator[ProcessPoolExecutor | None]:
    """Parse worker processes for `files`, started now (None when too few files are expected).

    An index run starts them before it opens the store, so that each worker builds the parsers and
    compiles the queries (~0.1 s for a big query set) while the parent opens Qdrant, instead of on
    the way of the parse. Linux forks them (they start in milliseconds, every module imported);
    other systems spawn them. The pool is shut down on leaving, or earlier by its user.
    """
    import multiprocessing

    workers = _worker_count(files, settings)
    if workers < 2:
        yield None
        return
    counts = Counter(f.language for f in files if f.language)
    # languages most files share are prepared in every worker; one a single file has is left to
    # the worker that meets it
    languages = tuple(sorted(lang for lang, count in counts.items() if count > 1))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker,
                               initargs=(os.getpid(), languages, settings.queries_dir),
                               mp_context=multiprocessing.get_context(_start_method()))
    try:
        # frozen, the parent's objects are left alone by the workers' garbage collections (and their
        # pages stay shared); a caller that froze objects itself (a pre-forking server) keeps them frozen
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        try:
            with warnings.catch_warnings():  # 3.12+ warns about forking a threaded process: see _start_worker
                warnings.simplefilter("ignore", DeprecationWarning)
                for _ in range(workers):
                    pool.submit(int)  # a forking pool starts all its workers at the first task: now
        finally:
            if freeze:
                gc.unfreeze()
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(parent: int, languages: Sequence[str] = (), query_dir: Path | None = None) -> None:
    """A parse worker dies with the index run that started it: killed mid-run (Ctrl-C, SIGKILL), the
    run must not leave workers behind holding its lock and output pipes. A forked worker has a copy of
    the parent's stdout/stderr objects whose locks another thread (the progress display's) may have held
    at the fork: it never writes to them, not even the flush at exit. Then it prepares `languages`."""
    sys.stdout = sys.stderr = open(os.devnull, "w")
    # forked from a graph stage that paused the collector (graph/stage.py, _gc_paused), a worker would keep
    # every cycle its parses leave: on site-packages each worker grew past 4 GB
    gc.enable()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    for language in languages:
        try:
            prepare_language(language, query_dir)
        except Exception:  # a grammar that fails to load: each of its files reports that when parsed
            pass
