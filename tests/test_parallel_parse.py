"""Parsing in worker processes: the same result as parsing in order, and a broken pool loses nothing."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from codeqa.indexing import index, parse_pool
from codeqa.config import Settings
from codeqa.indexing.walk import walk_repository
from conftest import index_snapshot

MODULES = 60  # above the fork threshold, so the workers really start


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parallel")
    pkg = root / "pkg"
    pkg.mkdir()
    for i in range(MODULES):
        previous = f"from pkg.mod_{i - 1:02} import Step{i - 1}\n\n\n" if i else ""
        base = f"Step{i - 1}" if i else "object"
        (pkg / f"mod_{i:02}.py").write_text(
            f"{previous}class Step{i}({base}):\n    \"\"\"Step {i}.\"\"\"\n\n    def run(self, x):\n"
            f"        return helper_{i}(x) + {i}\n\n\ndef helper_{i}(x):\n    return x * {i}\n")
    (root / "README.md").write_text("# Steps\n\nSixty modules.\n")
    assert MODULES + 1 >= parse_pool.PARALLEL_PARSE_MIN_FILES["fork"]
    return root


def _run(project: Path, workers: int):
    files = walk_repository(project).files
    return list(parse_pool._parse_and_chunk_all(files, Settings(parse_workers=workers)))


def _record_pids(monkeypatch, log: Path):
    encode = parse_pool.encode_parsed

    def recording(parsed):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return encode(parsed)

    monkeypatch.setattr(parse_pool, "encode_parsed", recording)  # forked workers inherit the patch


def test_workers_give_the_serial_result_and_encode_every_file(project, tmp_path, monkeypatch):
    serial = _run(project, workers=1)
    log = tmp_path / "pids"
    _record_pids(monkeypatch, log)
    parallel = _run(project, workers=2)
    pids = set(log.read_text().split())
    assert os.getpid() not in {int(p) for p in pids} and len(pids) == 2  # parsed and encoded in two workers
    # symbols, references, chunks and the cache's bytes alike
    assert sorted(parallel, key=lambda r: r[0].file.path) == serial and len(serial) == MODULES + 1


def test_cut_parses_come_back_with_what_other_files_read_and_the_blob_with_everything(project):
    """An index run (graph_stage with on_parsed) has the workers cut each parse to what resolving the
    other files reads; the cache entry they encode keeps every reference for the file's own resolution."""
    from codeqa.indexing.parse_cache import decode_parsed, table_only

    files = walk_repository(project).files
    whole = {r[0].file.path: r for r in _run(project, workers=2)}
    strings: dict = {}
    cut = list(parse_pool._parse_and_chunk_all(files, Settings(parse_workers=2), cut=True, strings=strings))
    assert len(cut) == len(whole) == MODULES + 1
    dropped = 0
    for pf, chunks, blob in cut:
        full, full_chunks, full_blob = whole[pf.file.path]
        assert pf == table_only(full) and chunks == full_chunks and blob == full_blob
        assert decode_parsed(blob, pf.file) == full
        dropped += len(full.references) - len(pf.references)
    assert dropped >= MODULES  # each module's call of its helper went no further than the cache
    # the cut parses are kept until resolved: equal strings are one object across files (given `strings`)
    kept = [v for pf, _, _ in cut for s in pf.symbols for v in (s.path, s.kind)]
    kept += [v for pf, _, _ in cut for r in pf.references for v in (r.path, r.kind, r.name)]
    assert len(kept) > 3 * MODULES and all(strings[v] is v for v in kept)
    assert len({id(s.kind) for pf, _, _ in cut for s in pf.symbols if s.kind == "function"}) == 1


def test_a_worker_that_dies_costs_time_not_files(project, tmp_path, monkeypatch):
    serial = _run(project, workers=1)
    parent = os.getpid()
    parse = parse_pool._parse_and_chunk
    log = tmp_path / "parsed-by"

    def dying(job, query_dir=None):
        if os.getpid() != parent and job[0].path.endswith("mod_30.py"):
            os._exit(3)  # a worker killed mid-run (out of memory, a grammar crash)
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {job[0].path}\n")
        return parse(job, query_dir)

    monkeypatch.setattr(parse_pool, "_parse_and_chunk", dying)  # forked workers inherit the patch
    files = walk_repository(project).files
    settings = Settings(parse_workers=2)
    with parse_pool.parse_workers(files, settings) as pool:
        assert pool is not None
        results = list(parse_pool._parse_and_chunk_all(files, settings, pool))
        with pytest.raises(BrokenProcessPool):  # the pool really broke ...
            pool.submit(int)
    assert sorted(results, key=lambda r: r[0].file.path) == serial  # ... and no file was lost
    parsed_by = [line.split(" ", 1) for line in log.read_text().splitlines()]
    here = {path for pid, path in parsed_by if int(pid) == parent}
    assert "pkg/mod_30.py" in here  # the file that killed its worker was parsed here, after the break
    assert {int(pid) for pid, _ in parsed_by} - {parent}  # and the workers had parsed some before it


def test_an_index_run_parses_in_workers_started_before_the_store_opens(project, tmp_path, monkeypatch, embedder):
    from codeqa.indexing.index import index_repo
    from codeqa.store import open_store

    serial = Settings(parse_workers=1, index_dir=tmp_path / "serial")
    index_repo(project, serial, embedder=embedder)
    opened, started = [], []
    monkeypatch.setattr(index, "open_store", lambda *a, **k: opened.append(len(started)) or open_store(*a, **k))
    start = index.parse_workers

    def recording(files, settings):
        started.append(len(files))
        return start(files, settings)

    monkeypatch.setattr(index, "parse_workers", recording)
    log = tmp_path / "pids"
    _record_pids(monkeypatch, log)
    parallel = Settings(parse_workers=2, index_dir=tmp_path / "parallel")
    report = index_repo(project, parallel, embedder=embedder)
    assert started == [MODULES + 1] and opened == [1]  # the pool was started before the store opened
    assert len(set(log.read_text().split())) == 2 and report.files_changed == MODULES + 1
    assert index_snapshot(project, parallel) == index_snapshot(project, serial)


def test_workers_started_in_a_graph_stage_collect_their_garbage(project):
    """graph_stage pauses the collector; a worker forked then would inherit the pause and keep every
    cycle its parses leave (on site-packages, workers grew past 4 GB)."""
    import gc

    from codeqa.indexing.graph.stage import _gc_paused

    files = walk_repository(project).files
    with _gc_paused():
        assert not gc.isenabled()
        with parse_pool.parse_workers(files, Settings(parse_workers=2)) as pool:
            assert pool is not None
            assert all(pool.map(_collector_enabled, range(4)))


def _collector_enabled(_: int) -> bool:
    import gc

    return gc.isenabled()
