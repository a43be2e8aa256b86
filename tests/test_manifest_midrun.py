"""An edit made while a run parses, then undone (a save-then-undo under the watcher, a `git checkout` during
`codeqa index`): the index records the bytes it parsed, so the next run sees the undo as a change and the
index equals a clean one of the files as they are. The tree and the comparison are test_incremental_graph's."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from test_incremental_graph import ConstantEmbedder, assert_equals_a_clean_index, edit, tree  # noqa: F401 (fixture)

from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from codeqa.store import open_store


@contextmanager
def edit_once_the_walk_is_done(change) -> Iterator[list]:
    """Within: `change` (a callable) is made on the files after a run's walk, before its parse reads them."""
    import codeqa.indexing.graph.stage as stage

    real, done = stage._parse_and_chunk_all, []

    def parse(*args, **kwargs):
        if not done:
            done.append(change())
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stage, "_parse_and_chunk_all", parse)
        yield done
    assert done, "the run parsed nothing"


def manifest_of(tree: Path, settings: Settings) -> dict[str, str]:
    store = open_store(tree, settings)
    try:
        return {p: e.sha256 for p, e in store.manifest().items()}
    finally:
        store.close()


APPEND = "\n\n\ndef appended():\n    return 1\n"  # an edit the walk sees, so that the run parses the file
MIDRUN = [  # (what, the file, the edit made to it after the walk, then undone)
    ("a class renamed mid-run", "pkg/core.py", ("class Engine:", "class Motor:")),
    ("a method renamed mid-run", "pkg/util.py", ("class Stack:", "class Stack:\n    def zap(self):\n        return 1\n")),
    ("a re-export added mid-run", "pkg/__init__.py", ("from .vehicles import *\n", "from .vehicles import *\nfrom .util import Stack\n")),
]


def test_an_edit_made_mid_run_and_undone_is_seen_by_the_next_run(tree, tmp_path):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    core = tree / "pkg/core.py"
    original = core.read_bytes()
    # the first run (every file parsed, in worker processes) sees a file edited after its walk
    with edit_once_the_walk_is_done(lambda: edit(core, "class Engine:", "class Motor:")), \
            pytest.MonkeyPatch.context() as patch:
        patch.setattr("codeqa.indexing.parse_pool.PARALLEL_PARSE_MIN_FILES", {"fork": 2, "spawn": 2})
        index_repo(tree, Settings.load(env={"CODEQA_PARSE_WORKERS": "2"}, index_dir=tmp_path / "index"),
                   embedder=ConstantEmbedder())
    core.write_bytes(original)  # undone
    report = index_repo(tree, settings, embedder=ConstantEmbedder())
    assert report.files_changed == 1 and not report.nothing_to_do
    assert_equals_a_clean_index(tree, settings, tmp_path / "clean-first", "an edit during the first run")
    for step, (what, path, during) in enumerate(MIDRUN):
        (tree / path).write_text((tree / path).read_text() + APPEND)
        kept = (tree / path).read_bytes()
        with edit_once_the_walk_is_done(lambda: edit(tree / path, *during)):
            index_repo(tree, settings, embedder=ConstantEmbedder())
        (tree / path).write_bytes(kept)  # the mid-run edit undone: the next run's walk sees what the last one did
        index_repo(tree, settings, embedder=ConstantEmbedder())
        fresh_dir = tmp_path / f"clean-{step}"
        assert_equals_a_clean_index(tree, settings, fresh_dir, what)
        assert manifest_of(tree, settings) == manifest_of(tree, Settings.load(env={}, index_dir=fresh_dir)), what


def test_a_file_made_unreadable_mid_run_is_read_again_by_the_next_run(tree, tmp_path):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    util = tree / "pkg/util.py"
    edit(util, "class Stack:", "class Stack:\n    def zap(self):\n        return 1\n")
    kept = util.read_bytes()
    with edit_once_the_walk_is_done(lambda: util.write_bytes(b"\xff\xfe not UTF-8\n")):
        index_repo(tree, settings, embedder=ConstantEmbedder())
    util.write_bytes(kept)
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert_equals_a_clean_index(tree, settings, tmp_path / "clean", "a file not UTF-8 while it was parsed")


def test_a_watcher_sees_an_edit_made_mid_run_and_undone(tree, tmp_path):
    """The same under a long-lived process (resident.py), told of both saves by its events."""
    from codeqa.indexing.resident import ResidentIndex

    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    resident = ResidentIndex()
    resident.follow_events()
    index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    util = tree / "pkg/util.py"
    edit(util, "class Stack:", "class Stack:\n    def zap(self):\n        return 1\n")
    kept = util.read_bytes()
    resident.touched(["pkg/util.py"])
    with edit_once_the_walk_is_done(lambda: edit(util, "def zap(self):", "def zip_(self):")):
        index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    util.write_bytes(kept)
    resident.touched(["pkg/util.py"])  # the save during the run, and the undo
    index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    assert_equals_a_clean_index(tree, settings, tmp_path / "clean", "an edit during a watcher's run")


def test_an_unchanged_file_parsed_again_mid_edit_is_redone_by_the_next_run(tree, tmp_path):
    """Its parse not cached, an unchanged file is parsed again for the references alone; edited meanwhile, the
    references of others were resolved against bytes that its stored chunks are not of: the next run redoes it."""
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    (tmp_path / "index" / "parsed.sqlite").unlink()  # every unchanged file is parsed again
    (tree / "pkg/util.py").write_text((tree / "pkg/util.py").read_text() + APPEND)
    core = tree / "pkg/core.py"
    kept = core.read_bytes()
    with edit_once_the_walk_is_done(lambda: edit(core, "class Engine:", "class Motor:")):
        index_repo(tree, settings, embedder=ConstantEmbedder())
    core.write_bytes(kept)
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert_equals_a_clean_index(tree, settings, tmp_path / "clean", "an unchanged file edited while parsed again")
