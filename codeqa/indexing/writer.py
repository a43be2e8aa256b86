"""Phase 1's chunk writes: in the run's process, or on a big embedded run in a writer process of their own.

    parse workers --(parse, chunks) packed--> run: spool file --> writer process: store_chunks --> store

A big tree's phase 1 is three stretches of CPU: parsing (the workers), storing the chunks (BM25
vectors, Qdrant upserts, segment seals) and resolving references, which can only begin once every
file is parsed and runs on one core. With the writes in the run's own process they lengthen the
parse, and the second core idles through the resolution (site-packages: ~7 of the run's 16 minutes).
A StoreWriter takes the writes out of the run's process: the parse ends as soon as the workers are
done, and the writes go on beside the resolution.

- The writer is started with the parse workers, so that it is ready (spawned: a fresh interpreter,
  see StoreWriter) when the first files are parsed, and, like them, dies with the run: a killed run
  leaves no writer writing its index after it.
- It opens the store itself, once the run has written its deletions and let its copy go
  (`Store.release`), and takes the parses from a spool file in a private temporary folder: the
  run never waits for it while files are parsed, and what it has not written yet sits on disk, not
  in memory. The spool is this run's inter-process traffic, never read by another run, and gone
  when the run ends; still, it is data on disk, and never code: each record is JSON (zlib), read
  back field by field into the dataclasses, so that a record put there by anyone else is refused,
  never run (pickle would run it).
- It writes as the run would (store_chunks, sealing every index.SEAL_CHUNKS chunks), so crash safety is
  the same: each file's manifest entry gets its hash only after its points are flushed.
- It runs at a lower priority: while the workers parse, they come first; it catches up during the
  resolution. It ends with the store optimized (the run would otherwise load the chunks once more to
  do it, at the top of its memory). `finish()` waits for it and says what it wrote; an error in it
  is the run's error.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .chunk import chunk_embedding_text
from .dense import cached_vectors
from ..embed import Embedder, EmbeddingCache
from ..config import Settings
from ..errors import StoreError
from ..store import ManifestEntry, Store, open_store
from ..types import Chunk, ParsedFile, SourceFile, Symbol

FILE_BATCH = 256  # files per store_chunks call: each ends with a flush of the shard (~40-70 ms measured), and 64
# made 570 of them on site-packages; a run without a writer stores graph/stage.py's FILE_BATCH at a time
WRITER_MIN_FILES = 2000  # changed files below which the writes stay in the run's process
WRITER_NICE = 10  # the writer's priority below the run's and the parse workers'
_IDLE_WAIT = 0.05  # seconds the writer sleeps when the spool has nothing new
_LENGTH = struct.Struct("<Q")


def writes_beside(changed_files: int, settings: Settings) -> bool:
    """Whether a run that parses `changed_files` files stores its chunks from a writer process: a big run
    (WRITER_MIN_FILES) on an embedded index, on Linux, with a second core to run it."""
    return (not settings.qdrant_url and changed_files >= WRITER_MIN_FILES and (os.cpu_count() or 1) >= 2
            and sys.platform.startswith("linux"))


def store_chunks(store: Store, embedder: Embedder | CacheKeys, cache: EmbeddingCache,
                 group: Sequence[tuple[ParsedFile, Sequence[Chunk]]]) -> int:
    """Phase 1's writes for a batch of parsed files: their chunks (BM25 vectors; dense ones only from
    the cache) and symbols, flushed, then their manifest entries (embedded when every chunk got a
    cached dense vector). Returns how many chunks are embedded for good: those of files whose every chunk
    got one (phase 2 embeds all the chunks of the other files, and counts them then)."""
    chunks = [c for _, cs in group for c in cs]
    by_id = {s.id: s for pf, _ in group for s in pf.symbols}
    texts = [chunk_embedding_text(c, by_id) for c in chunks]
    vectors = cached_vectors(embedder, cache, texts)
    store.upsert_chunks(chunks, vectors, texts)
    store.upsert_symbols([s for pf, _ in group for s in pf.symbols])
    store.flush()  # the points are on disk before the entries that vouch for them
    has_dense = dict(zip((c.id for c in chunks), (v is not None for v in vectors)))
    entries = [ManifestEntry(pf.file.path, pf.file.sha256, pf.file.language, len(cs), len(pf.symbols),
                             "partial" if pf.error else ("ok" if pf.file.language else "text"), pf.error or "",
                             embedded=all(has_dense[c.id] for c in cs))
               for pf, cs in group]
    store.put_manifest(entries)
    return sum(e.chunks for e in entries if e.embedded)


def pack(parsed: ParsedFile, chunks: list[Chunk]) -> bytes:
    """What the writer needs of a parsed file (its file, symbols, error and chunks), as a parse worker
    hands it over: JSON arrays, one per record, compressed, so that the spool stays a fraction of the
    index's size."""
    f = parsed.file
    record = [[f.path, str(f.abs_path), f.language, f.size, f.sha256], parsed.error,
              [[s.id, s.name, s.qualified_name, s.kind, s.language, s.path, s.start_line, s.end_line, s.signature,
                s.docstring, s.parent_id] for s in parsed.symbols],
              [[c.id, c.path, c.start_line, c.end_line, c.language, c.kind, c.symbol_ids, c.text, c.symbol_names]
               for c in chunks]]
    return zlib.compress(json.dumps(record, separators=(",", ":")).encode("ascii"), 1)


def unpack(packed: bytes) -> tuple[ParsedFile, list[Chunk]]:
    """pack's file and chunks; ValueError for bytes that are not one of its records."""
    try:
        (path, abs_path, language, size, sha256), error, symbols, chunks = json.loads(zlib.decompress(packed))
        file = SourceFile(path, Path(abs_path), language, size, sha256)
        return (ParsedFile(file, tuple(Symbol(*s) for s in symbols), (), error),
                [Chunk(i, p, start, end, lang, kind, tuple(ids), text, tuple(names))
                 for i, p, start, end, lang, kind, ids, text, names in chunks])
    except (zlib.error, ValueError, TypeError) as exc:  # JSON's errors are ValueErrors
        raise ValueError(f"A record of the writer's spool is not a packed file ({type(exc).__name__}: {exc}).") from None


@dataclass(frozen=True)
class Written:
    """What a writer did: files and chunks stored, chunks given a cached dense vector, seals, and the
    chunks the store holds at the end (the run's count, without loading them in the run's process)."""

    files: int
    chunks: int
    chunks_embedded: int
    seals: int
    total_chunks: int


class Sealer:
    """Counts what phase 1 stored and seals (store.optimize) every `every` chunks (index.SEAL_CHUNKS);
    `done()` seals the last stretch when the run sealed before, which lets the shard go: resolution
    never reads chunks (site-packages: the run's process 2.7 -> 2.0 GB through it)."""

    def __init__(self, store: Store, every: int):
        self.store = store
        self.every = every
        self.since = 0
        self.seals = 0

    def stored(self, chunks: int) -> None:
        self.since += chunks
        if self.since >= self.every:
            self.seal()

    def seal(self) -> None:
        self.store.optimize()
        self.since = 0
        self.seals += 1

    def done(self) -> None:
        if self.seals and self.since:
            self.seal()


@dataclass(frozen=True)
class CacheKeys:
    """What cached_vectors reads of an embedder: the writer never embeds, and needs no model."""

    model_id: str
    dimension: int


class StoreWriter:
    """A writer process for one index run (see the module docstring). Use as a context manager around
    the run; `start()` once the run's deletions are flushed and its store released, `add()` packed
    files as they are parsed, `finish()` for what was written. Leaving the block without finish() kills it.

    The process is spawned, not forked: a process that has used the engine before (an MCP server,
    the UI, a test session) holds its thread pools, which a forked child inherits without their
    threads (a seal then waits forever)."""

    def __init__(self, repo: Path, settings: Settings, keys: CacheKeys, index_dir: Path, seal_every: int):
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        index_dir.mkdir(parents=True, exist_ok=True)
        self._folder = Path(tempfile.mkdtemp(prefix="writer-spool-", dir=index_dir))  # mode 0700
        self._spool_path = self._folder / "spool"
        self._spool = open(self._spool_path, "wb")
        self._end = ctx.Value("q", 0, lock=False)  # bytes the writer may read
        self._state = ctx.Value("q", 0, lock=False)  # 0 wait, 1 go, 2 no more input, 3 nothing to do
        self._stored = ctx.Value("q", 0, lock=False)  # files stored so far
        self._results, child_end = ctx.Pipe(duplex=False)
        self._process = ctx.Process(target=_writer_main, daemon=True, name="codeqa-store-writer",
                                    args=(repo, settings, keys, index_dir / "embeddings.sqlite", self._spool_path,
                                          seal_every, FILE_BATCH, self._end, self._state, self._stored, child_end,
                                          os.getpid()))
        self._process.start()
        child_end.close()
        self._finished = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def __enter__(self) -> "StoreWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._finished:
            self._state.value = 3
            if exc[0] is not None and self._process.is_alive():
                self._process.kill()  # the run failed: what the writer has not flushed is pending, re-done next run
        self._process.join()
        self._results.close()
        self._spool.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def start(self) -> None:
        """The run's deletions are on disk and its store let go of the chunks: the writer may open them."""
        self._state.value = 1

    def add(self, packed: Sequence[bytes]) -> None:
        for record in packed:
            self._spool.write(_LENGTH.pack(len(record)))
            self._spool.write(record)
        self._spool.flush()
        self._end.value = self._spool.tell()  # whole records only: the writer reads up to here

    @property
    def stored(self) -> int:
        """Files the writer has stored (flushed, with their manifest entries) so far."""
        return self._stored.value

    def end_input(self) -> None:
        """Every file was added: the writer stores the rest, seals, and ends (handing its memory back while
        the run resolves references), without the run waiting for it."""
        self._state.value = 2

    def finish(self, wait: Callable[[int], None] = lambda stored: None) -> Written:
        """No more input (end_input): wait for the writer to store the rest (calling `wait(files stored)`
        about every second meanwhile) and return what it wrote. Raises StoreError when it failed or died."""
        self.end_input()
        self._finished = True
        while not self._results.poll(1.0):
            if not self._process.is_alive() and not self._results.poll(0):
                raise self._died()
            wait(self._stored.value)
        try:
            outcome = self._results.recv()
        except EOFError:  # it died: the pipe closed without an answer
            raise self._died() from None
        self._process.join()
        if isinstance(outcome, str):
            raise StoreError(outcome)
        return outcome


    def _died(self) -> StoreError:
        self._process.join()
        return StoreError(f"The process writing the index's chunks ended without finishing (exit code "
                          f"{self._process.exitcode}); run `codeqa index` again: it completes what was left.")


def _writer_main(repo: Path, settings: Settings, keys: CacheKeys, embeddings_path: Path, spool_path: Path,
                 seal_every: int, batch: int, end: Any, state: Any, stored: Any, results: Any, parent: int) -> None:
    # as a parse worker: never writes to the run's stdout/stderr, dies with the run
    sys.stdout = sys.stderr = open(os.devnull, "w")
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)
    try:
        os.nice(WRITER_NICE)
    except OSError:
        pass
    while state.value == 0:
        time.sleep(_IDLE_WAIT)
    if state.value == 3:
        os._exit(0)
    outcome = write_outcome(lambda: _write_spool(open_store(repo, settings), keys, embeddings_path, spool_path,
                                                 seal_every, batch, end, state, stored))
    try:
        results.send(outcome)
    except OSError:
        pass
    os._exit(1 if isinstance(outcome, str) else 0)  # no atexit hooks: the run's terminal is not the writer's


def write_outcome(write: Callable[[], Written]) -> Written | str:
    """What `write()` wrote, or the message of its failure (the run raises it as a StoreError)."""
    try:
        return write()
    except Exception as exc:
        detail = str(exc)
        return f"Writing the index's chunks failed: {detail}" if detail else \
            f"Writing the index's chunks failed ({type(exc).__name__})."


def _write_spool(store: Store, keys: CacheKeys, embeddings_path: Path, spool_path: Path, seal_every: int, batch: int,
                 end: Any, state: Any, stored: Any) -> Written:
    cache = EmbeddingCache(embeddings_path)
    sealer = Sealer(store, seal_every)
    files = chunks = embedded = 0
    try:
        with open(spool_path, "rb") as spool:
            offset = 0
            while True:
                limit = end.value
                last = state.value >= 2 and limit == end.value  # input ended before this limit was read
                group: list[tuple[ParsedFile, list[Chunk]]] = []
                while offset < limit:
                    (size,) = _LENGTH.unpack(spool.read(_LENGTH.size))
                    group.append(unpack(spool.read(size)))
                    offset += _LENGTH.size + size
                    if len(group) == batch or offset >= limit:
                        embedded += store_chunks(store, keys, cache, group)
                        files += len(group)
                        n = sum(len(cs) for _, cs in group)
                        chunks += n
                        stored.value = files
                        sealer.stored(n)
                        group = []
                if last:
                    break
                if offset >= end.value:
                    time.sleep(_IDLE_WAIT)
        store.flush()
        total = store.count_chunks()
        store.optimize()  # sealed here: the run's process never loads the chunks again (store.optimize)
    finally:
        cache.close()
        store.close()
    return Written(files, chunks, embedded, sealer.seals, total)
