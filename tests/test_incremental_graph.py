"""Incremental resolution (codeqa/indexing/graph/incremental.py): after each edit, an incremental index holds
exactly the symbols and references (every field, target_ids included) of a clean index of the same
tree, while resolving fewer files than there are.

The tree is the Python fixture project (re-exports, star imports, module aliases, inheritance,
receiver types, stubs) beside the Go, TypeScript and Java fixtures (methods written outside their
type, barrels, packages). Embeddings come from a constant stand-in: only the graph is compared."""

from __future__ import annotations

import shutil
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest

from codeqa.config import Settings
from codeqa.indexing.graph import resolve_references
from codeqa.indexing.graph.incremental import GraphState
from codeqa.indexing.graph.resolve import resolve_by_file
from codeqa.indexing.index import GRAPH_STATE_FILE, index_repo
from codeqa.store import open_store

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class ConstantEmbedder:
    model_id, dimension = "constant", 8

    def encode(self, texts, batch_size=64):
        return np.full((len(texts), 8), 8 ** -0.5, dtype="float32")


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "pyrefs", root)
    for language in ("go", "typescript", "java"):
        shutil.copytree(FIXTURES / "languages" / language, root / language)
    for path, text in EXTRA.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


EXTRA = {
    # a web of star imports that lead back to themselves (graph/stars.py looks names up file by file there)
    "web/__init__.py": "",
    "web/a.py": "from web.b import *\n\n\ndef fa():\n    return fb()\n",
    "web/b.py": "from web.c import *\n\n\ndef fb():\n    return fc()\n",
    "web/c.py": "from web.a import *\n\n\ndef fc():\n    return 1\n",
    "web/use.py": "from web.a import *\n\n\ndef main():\n    return fa() + fc() + later()\n",
    # a method called on a receiver nothing is known about: found once a method of that name exists
    "extra/user.py": "def poke(thing):\n    return thing.zap()\n",
    # two attributes typed by each other, one with evidence of its own: which of the two is asked
    # first decides where the cycle is cut, unless answers met in a cycle are not kept
    "cyc/a.py": ("from cyc.b import B\n\n\nclass A:\n    def __init__(self):\n        self.peer = B().peer\n\n"
                 "    def reset(self):\n        self.peer = A()\n\n    def go(self):\n        return self.peer.go()\n"),
    "cyc/b.py": ("from cyc.a import A\n\n\nclass B:\n    def __init__(self):\n        self.peer = A().peer\n\n"
                 "    def run(self):\n        return self.peer.go()\n"),
    # a C++ method defined outside its class, in another folder: it belongs to the only Shape there is
    "cpp/geo/shape.hpp": "class Shape {\npublic:\n    double area() const;\n};\n",
    "cpp/impl/area.cpp": '#include "../geo/shape.hpp"\n\ndouble Shape::area() const { return 1.0; }\n',
    "cpp/app/main.cpp": '#include "../geo/shape.hpp"\n\nvoid run(Shape s) {\n    s.area();\n}\n',
    "cpp/other/dup.hpp": "class Other {};\n",
    # readers of pkg/core.py waiting for a name it does not define yet: imported by name, and through a star
    "late/named.py": "from pkg.core import Engine, later\n\n\ndef go():\n    return Engine(), later()\n",
    "late/starred.py": "from pkg.core import *\n\n\ndef go():\n    return Engine(), starred()\n",
}


def graph_of(repo: Path, settings: Settings):
    store = open_store(repo, settings)
    try:
        symbols = sorted(astuple(s) for s in store.all_symbols())
        references = sorted(astuple(r) for r in store.all_references())
        return symbols, references, store.read_meta()
    finally:
        store.close()


def assert_equals_a_clean_index(tree: Path, settings: Settings, clean_dir: Path, what: str):
    """Index `tree` from scratch into `clean_dir` and check that the index of `settings` has the same symbols,
    references (every field, target_ids included) and counts; the clean graph_of, for more checks."""
    clean = Settings.load(env={}, index_dir=clean_dir)
    index_repo(tree, clean, embedder=ConstantEmbedder())
    incremental, fresh = graph_of(tree, settings), graph_of(tree, clean)
    assert incremental[0] == fresh[0], what
    assert incremental[1] == fresh[1], what  # every field of every reference, target_ids included
    for key in ("references", "references_by_confidence", "most_used", "symbols"):
        assert incremental[2][key] == fresh[2][key], (what, key)
    return fresh


def resolved_files(monkeypatch, names: bool = False) -> list:
    """Records how many files each index run resolved, or which ones with `names` (None: all)."""
    seen: list = []
    original = resolve_by_file

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(None if result.complete else set(result.references) if names else len(result.references))
        return result

    monkeypatch.setattr("codeqa.indexing.graph.stage.resolve_by_file", spy)
    return seen


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


EDITS = [
    ("append a function", lambda r: (r / "pkg/util.py").write_text((r / "pkg/util.py").read_text() + "\n\ndef added():\n    return 1\n")),
    ("rename a class used across files", lambda r: edit(r / "pkg/core.py", "class Engine:", "class Motor:")),
    ("rename it back", lambda r: edit(r / "pkg/core.py", "class Motor:", "class Engine:")),
    ("add a re-export", lambda r: edit(r / "pkg/__init__.py", "from .vehicles import *\n", "from .vehicles import *\nfrom .util import Stack\n")),
    ("change an import", lambda r: edit(r / "pkg/garage.py", "from . import core\n", "from . import util as core\n")),
    ("delete a file", lambda r: (r / "pkg/vehicles.py").unlink()),
    ("add a file back that others import", lambda r: shutil.copy(FIXTURES / "pyrefs/pkg/vehicles.py", r / "pkg/vehicles.py")),
    ("add a base class method that subclasses inherit",
     lambda r: edit(r / "pkg/vehicles.py", "class Vehicle:\n", "class Vehicle:\n    def honk(self):\n        return self.start()\n\n")),
    ("a Go method written in another file of the package",
     lambda r: (r / "go/server/extra.go").write_text("package server\n\nfunc (s *Server) Extra() int {\n\treturn 1\n}\n")),
    ("a second Go type of the same name elsewhere",
     lambda r: (r / "go/internal/storage/dup.go").write_text("package storage\n\ntype Server struct{}\n")),
    ("a method name becomes defined once", lambda r: edit(r / "pkg/util.py", "class Stack:\n", "class Stack:\n    def zap(self):\n        return 1\n\n")),
    ("that method moves down a line", lambda r: edit(r / "pkg/util.py", "class Stack:\n", "\nclass Stack:\n")),
    ("a second method of that name makes it ambiguous",
     lambda r: edit(r / "pkg/core.py", "class Engine:\n", "class Engine:\n    def zap(self):\n        return 2\n\n")),
    ("a module variable's evidence changes", lambda r: edit(r / "pkg/core.py", "default_engine: Engine = Engine()", "default_engine = []")),
    ("a C++ type of the same name elsewhere", lambda r: edit(r / "cpp/other/dup.hpp", "class Other {};", "class Other {};\nclass Shape {};")),
    ("an unused function appended to a much-read file",
     lambda r: (r / "pkg/core.py").write_text((r / "pkg/core.py").read_text() + "\n\ndef unused_added():\n    return Engine()\n")),
    ("a name a reader imports but no file defined appears", lambda r: edit(r / "pkg/core.py", "def build():", "def later():\n    return 1\n\n\ndef build():")),
    ("a name a star import brings appears",
     lambda r: (r / "pkg/core.py").write_text((r / "pkg/core.py").read_text() + "\n\nclass starred:\n    pass\n")),
    ("a stub loses a name", lambda r: (r / "pkg/fast.pyi").write_text("")),
    ("a name appears in a star web", lambda r: (r / "web/c.py").write_text((r / "web/c.py").read_text() + "\n\ndef later():\n    return 2\n")),
    ("a module the web does not reach defines it too", lambda r: (r / "web/d.py").write_text("def later():\n    return 3\n")),
    ("a star import brings that module into the web", lambda r: edit(r / "web/b.py", "from web.c import *\n", "from web.c import *\nfrom web.d import *\n")),
]


def test_incremental_index_equals_a_clean_one_after_each_edit(tree, tmp_path, monkeypatch):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    seen = resolved_files(monkeypatch)
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert seen == [None]  # the first run resolves everything
    partial_runs = 0
    for step, (what, apply) in enumerate(EDITS):
        apply(tree)
        report = index_repo(tree, settings, embedder=ConstantEmbedder())
        fresh = assert_equals_a_clean_index(tree, settings, tmp_path / f"clean-{step}", what)
        assert report.references == len(fresh[1]), what
        resolved = seen[-2]  # the incremental run's (the clean one came after it)
        if resolved is not None and resolved < report.files_total:
            partial_runs += 1
    assert partial_runs >= len(EDITS) - 3  # most edits resolve a part of the project only


def test_a_new_name_in_a_much_read_file_moves_only_the_files_that_could_bind_it(tree, tmp_path, monkeypatch):
    """Reads are kept per (file, name): appending a function no file names to pkg/core.py (read by
    most of the package) resolves that file alone; a name that a reader imports, or that its star
    import now brings, resolves that reader again too; and each run equals a clean index."""
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    seen = resolved_files(monkeypatch, names=True)
    core = tree / "pkg/core.py"
    steps = [
        ("unused", lambda: core.write_text(core.read_text() + "\n\ndef unused_added():\n    return Engine()\n"),
         {"pkg/core.py"}),
        ("imported by name", lambda: core.write_text(core.read_text() + "\n\ndef later():\n    return 1\n"),
         {"pkg/core.py", "late/named.py"}),
        ("brought by a star import", lambda: core.write_text(core.read_text() + "\n\nclass starred:\n    pass\n"),
         {"pkg/core.py", "late/starred.py"}),
    ]
    for step, (what, apply, expected) in enumerate(steps):
        apply()
        index_repo(tree, settings, embedder=ConstantEmbedder())
        resolved = seen[-1]
        assert resolved is not None and expected <= resolved, (what, resolved)
        if what == "unused":
            assert resolved == expected, resolved  # no reader of pkg/core.py
        else:
            assert "app/main.py" not in resolved and len(resolved) <= 4, (what, resolved)
        clean = Settings.load(env={}, index_dir=tmp_path / f"clean-{step}")
        index_repo(tree, clean, embedder=ConstantEmbedder())
        assert graph_of(tree, settings)[1] == graph_of(tree, clean)[1], what
    late = [r for r in graph_of(tree, settings)[1] if r[1].startswith("late/") and r[0] in ("later", "starred")]
    assert {(r[1], r[0]) for r in late if r[6]} == {("late/named.py", "later"), ("late/starred.py", "starred")}, late


def test_a_run_that_stops_before_finishing_makes_the_next_resolve_everything(tree, tmp_path, monkeypatch):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    state = GraphState(settings.index_dir_for(tree) / GRAPH_STATE_FILE)
    state.begin()  # as a run killed between its first reference write and its end leaves it
    state.close()
    seen = resolved_files(monkeypatch)
    edit(tree / "pkg/core.py", "class Engine:", "class Motor:")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert seen == [None]


def test_a_crafted_state_is_ignored(tree, tmp_path, monkeypatch):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    path = settings.index_dir_for(tree) / GRAPH_STATE_FILE
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("UPDATE files SET data = '[\"x\", 1]'")
    db.commit()
    db.close()
    seen = resolved_files(monkeypatch)
    edit(tree / "pkg/util.py", "import json", "import json\nimport os")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert seen == [None]


def test_a_state_that_is_no_database_is_started_over(tree, tmp_path, monkeypatch):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    (settings.index_dir_for(tree) / GRAPH_STATE_FILE).write_bytes(b"not a database" * 100)
    seen = resolved_files(monkeypatch)
    edit(tree / "pkg/util.py", "import json", "import json\nimport os")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    edit(tree / "pkg/util.py", "import os", "import sys")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    assert seen[0] is None and seen[1] is not None  # all, then again only what the edit can move


def test_resolving_some_files_gives_them_the_references_of_resolving_all(tree):
    from codeqa.indexing.walk import walk_repository
    from codeqa.indexing.parse_pool import _parse_and_chunk

    parsed = [_parse_and_chunk((f, 4000, 40))[0] for f in walk_repository(tree).files]
    every = resolve_by_file(parsed)
    assert [r for refs in every.references.values() for r in refs] == resolve_references(parsed)
    for pf in parsed:  # one file at a time: nothing another file's resolution left in the memo helps
        alone = resolve_by_file(parsed, only={pf.file.path})
        assert alone.references[pf.file.path] == every.references[pf.file.path], pf.file.path
        assert alone.reads[pf.file.path] == every.reads[pf.file.path], pf.file.path


def test_resolution_reports_its_progress_file_by_file(tree, monkeypatch):
    from codeqa.indexing.walk import walk_repository
    from codeqa.indexing.graph import resolve as resolve_module
    from codeqa.indexing.parse_pool import _parse_and_chunk

    monkeypatch.setattr(resolve_module, "PROGRESS_FILES", 4)
    parsed = [_parse_and_chunk((f, 4000, 40))[0] for f in walk_repository(tree).files]
    seen: list[tuple[int, int]] = []
    resolve_by_file(parsed, progress=lambda done, total: seen.append((done, total)))
    n = len(parsed)
    assert seen[0] == (0, n) and seen[-1] == (n, n)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) == 2 + (n - 1) // 4


def test_a_file_that_read_a_big_star_web_keeps_any_file_and_still_equals_a_clean_run(tree, tmp_path, monkeypatch):
    """Past WEB_FILES_KEPT a web's files are not listed in the state (site-packages: an 11 GB state file);
    the file is resolved again on any change, so incremental runs still equal clean ones."""
    import json

    import codeqa.indexing.graph.incremental as incremental
    from codeqa.indexing.graph.incremental import FileGraph

    monkeypatch.setattr(incremental, "WEB_FILES_KEPT", 0)  # every web is a big one
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(tree, settings, embedder=ConstantEmbedder())
    state = GraphState(tmp_path / "index" / GRAPH_STATE_FILE)
    graphs = state._db.execute("SELECT path, data FROM files").fetchall()
    state.close()
    flagged = [p for p, data in graphs if FileGraph.from_json(json.loads(data)).read_every_file]
    # the star web's files, and files of languages that look a name up in their folder (one atom too)
    assert any(p.startswith("web/") for p in flagged) and all(p.startswith(("web/", "go/", "java/")) for p in flagged)
    seen = resolved_files(monkeypatch)
    for step, (what, apply) in enumerate(e for e in EDITS if "web" in e[0] or "vehicles" in e[0]):
        apply(tree)
        index_repo(tree, settings, embedder=ConstantEmbedder())
        clean = Settings.load(env={}, index_dir=tmp_path / f"clean-{step}")
        index_repo(tree, clean, embedder=ConstantEmbedder())
        assert graph_of(tree, settings)[1] == graph_of(tree, clean)[1], what
    assert seen and None not in seen[::2]  # the incremental runs stayed incremental


def test_a_file_graph_that_read_every_file_is_moved_by_any_change_and_only_by_one():
    from codeqa.indexing.graph.incremental import FileGraph, _read_any

    graph = FileGraph("0" * 64, "python", ("a.py",), ("e:x",), False, False, 0, (), (), read_every_file=True)
    assert _read_any(graph, {"far/away.py"}, set(), False, False)
    assert not _read_any(graph, set(), set(), False, False)
    lister = FileGraph("0" * 64, "python", ("a.py",), ("e:x",), False, False, 0, (), ())
    assert not _read_any(lister, {"far/away.py"}, set(), False, False) and _read_any(lister, {"a.py"}, set(), False, False)
    assert FileGraph.from_json(graph.to_json()) == graph and FileGraph.from_json(graph.to_json()[:9]) is None


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


RENAMES = [
    ("rename a module others import", lambda r: (r / "pkg/util.py").rename(r / "pkg/tools.py")),
    ("rename it back", lambda r: (r / "pkg/tools.py").rename(r / "pkg/util.py")),
    ("delete a much-read file", lambda r: (r / "pkg/core.py").unlink()),
    ("write it again", lambda r: shutil.copy(FIXTURES / "pyrefs/pkg/core.py", r / "pkg/core.py")),
]


def test_a_watcher_keeping_its_state_between_runs_equals_a_clean_index_after_each_edit(tree, tmp_path, monkeypatch):
    """A long-lived process's runs (resident.ResidentIndex: the walk brought up to date for the paths the
    events named, the parses, FileGraphs and resolver tables kept in memory) over every edit kind, a
    deletion and renames included, hold what a clean index holds after each; and they do take the
    parses and graphs from memory, not from the index's caches."""
    from codeqa.indexing.parse_cache import ParseCache
    from codeqa.indexing.resident import ResidentIndex

    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    resident = ResidentIndex()
    resident.follow_events()
    index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    loads, decoded = [], []
    real_load, real_get_many = GraphState.load, ParseCache.get_many
    monkeypatch.setattr(GraphState, "load", lambda self, *a: loads.append(1) or real_load(self, *a))
    def get_many(self, files, fingerprint, all_references=True, known=None):  # the parses of files not resolved
        if not all_references:
            decoded.append(len(files))
        return real_get_many(self, files, fingerprint, all_references, known)

    monkeypatch.setattr(ParseCache, "get_many", get_many)
    seen = resolved_files(monkeypatch)
    for step, (what, apply) in enumerate(EDITS + RENAMES):
        before = snapshot(tree)
        apply(tree)
        after = snapshot(tree)
        resident.touched([p for p in before.keys() | after.keys() if before.get(p) != after.get(p)])  # the events
        decoded.clear()
        report = index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
        assert not sum(decoded), (what, decoded)  # the parses of the files not resolved again came from memory
        fresh = assert_equals_a_clean_index(tree, settings, tmp_path / f"clean-{step}", what)
        assert report.references == len(fresh[1]) and report.files_total == fresh[2]["files"], what
    assert not loads  # the graphs came from memory every time
    assert sum(r is not None for r in seen[::2]) >= len(EDITS + RENAMES) - 3  # most runs resolved a part only


def test_a_watcher_state_left_behind_by_another_writer_is_not_used(tree, tmp_path, monkeypatch):
    """A `codeqa index` from elsewhere between two of the watcher's runs: the next run finds the index
    moved on from what it kept, and reads the index's own state instead. (A file edited, indexed there,
    and edited back: what the watcher kept matches the files again, but not the stored references.)"""
    from codeqa.indexing.resident import ResidentIndex

    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    resident = ResidentIndex()
    resident.follow_events()
    index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    edit(tree / "pkg/core.py", "class Engine:", "class Motor:")
    index_repo(tree, settings, embedder=ConstantEmbedder())  # another writer; the watcher is told of the save
    edit(tree / "pkg/core.py", "class Motor:", "class Engine:")
    edit(tree / "pkg/util.py", "import json", "import json\nimport os")
    resident.touched(["pkg/core.py", "pkg/util.py"])
    index_repo(tree, settings, embedder=ConstantEmbedder(), resident=resident)
    clean = Settings.load(env={}, index_dir=tmp_path / "clean")
    index_repo(tree, clean, embedder=ConstantEmbedder())
    assert graph_of(tree, settings)[:2] == graph_of(tree, clean)[:2]
