"""A library call leaves the process as it found it: the environment, torch's thread count,
transformers' logging and progress bars, the garbage collector (codeqa runs inside Streamlit and MCP
servers, where other sessions share all of these)."""

from __future__ import annotations

import gc
import os
import threading

import pytest

from codeqa.config import Settings
from codeqa.indexing.walk import walk_repository
from codeqa.indexing.index import index_repo, parse_workers
from conftest import FIXTURE_REPO, copy_fixture_repo

LOAD_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")


def process_state() -> dict:
    import torch
    from huggingface_hub.utils import are_progress_bars_disabled
    from transformers.utils import logging as hf_logging

    return {"environ": dict(os.environ), "torch_threads": torch.get_num_threads(), "gc_enabled": gc.isenabled(),
            "gc_frozen": gc.get_freeze_count(), "transformers_verbosity": hf_logging.get_verbosity(),
            "transformers_bars": hf_logging.is_progress_bar_enabled(), "hub_bars_off": are_progress_bars_disabled()}


@pytest.mark.slow
def test_loading_the_model_and_encoding_change_no_process_state(monkeypatch, capfd):
    import sentence_transformers  # noqa: F401  (importing torch and transformers sets variables of theirs: not a call's doing)
    import torch

    from codeqa.embed import SentenceTransformerEmbedder

    for name in LOAD_VARIABLES:  # the model loads offline without them: nothing is read from a hub
        monkeypatch.delenv(name, raising=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # a query runs on one thread: the count must come back
    try:
        before = process_state()
        model = SentenceTransformerEmbedder()  # a fresh one: the load is part of the call
        query = model.encode(["where is the config loaded"])
        batch = model.encode([f"def f{i}(x):\n    return x + {i}\n" for i in range(20)], batch_size=8)
        assert query.shape == (1, 384) and batch.shape == (20, 384)
        assert process_state() == before
    finally:
        torch.set_num_threads(threads)
    assert "Loading weights" not in capfd.readouterr().err  # the library never prints, not even a progress bar


@pytest.mark.slow
def test_index_repo_changes_no_process_state(tmp_path, embedder):
    repo = copy_fixture_repo(tmp_path / "repo")
    before = process_state()
    report = index_repo(repo, Settings.load(env={}), embedder=embedder)
    assert report.chunks > 0
    assert process_state() == before
    gc.disable()  # a caller that runs without the collector keeps it off
    try:
        index_repo(repo, Settings.load(env={}), embedder=embedder, full=True)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_graph_stages_in_two_threads_share_one_collector_pause():
    """The collector stays off until the last of two overlapping stages ends, then is as it was."""
    from codeqa.indexing.graph.stage import _gc_paused

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with _gc_paused():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with _gc_paused():
            second_in.set()
            first_out.wait(10)
            seen["after the first ended"] = gc.isenabled()

    for enabled in (True, False):
        gc.enable() if enabled else gc.disable()
        for event in (first_in, second_in, first_out):
            event.clear()
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert seen["after the first ended"] is False
        assert gc.isenabled() is enabled
    gc.enable()


@pytest.mark.parametrize("frozen_by_caller", [False, True])
def test_parse_workers_leave_the_callers_frozen_objects_frozen(frozen_by_caller):
    files = walk_repository(FIXTURE_REPO).files
    many = [f for f in files if f.language == "python"][:1] * 64  # enough files to start workers
    if frozen_by_caller:
        gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with parse_workers(many, Settings.load(env={}, parse_workers=2)) as pool:
            assert pool is not None
        # a frozen object that is freed leaves the count (another test's thread ending meanwhile), so
        # the count may drop a little, never to nothing (an unfreeze) and never grow (a freeze of ours)
        after = gc.get_freeze_count()
        assert (0 < after <= frozen) if frozen_by_caller else after == frozen == 0
    finally:
        gc.unfreeze()
