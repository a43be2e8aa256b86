"""An import whose module string names many files that each import the same name from it again.

primevue's `*/style/index.mjs` (400 of them) each `import BaseStyle from '@primevue/core/base/style'`,
a package not in the tree: the module string's longest suffix of ours, `style`, names every one of
those files, so each import's answer asked each of the others', which asked the others' again. In a
cycle no answer is kept (values.Memo), so every path through the files was a question of its own:
8 files took 11 s to resolve, 9 over 100 s, and primevue's phase 1 never ended.
"""

from __future__ import annotations

from pathlib import Path

from codeqa.indexing.walk import walk_repository
from codeqa.indexing.graph import resolve
from codeqa.indexing.graph import resolve_references
from codeqa.indexing.graph.values import Memo
from codeqa.indexing.parse import parse_source

WIDGETS = 8


def _widgets(root: Path, count: int = WIDGETS, imported: str = "BaseStyle") -> None:
    for i in range(count):
        folder = root / f"widget{i}" / "style"
        folder.mkdir(parents=True)
        (folder / "index.mjs").write_text(
            f"import {imported} from '@ui/core/base/style';\n\n"
            f"var W{i}Style = BaseStyle.extend({{ name: 'w{i}' }});\n\n"
            f"export function w{i}Classes() {{ return W{i}Style; }}\n\n"
            f"export {{ W{i}Style as default }};\n", encoding="utf-8")
    (root / "main.mjs").write_text("import { w3Classes } from './widget3/style/index.mjs';\n\nw3Classes();\n",
                                   encoding="utf-8")


def test_many_files_importing_a_name_from_the_module_they_all_are_resolve_in_few_steps(tmp_path, monkeypatch):
    _widgets(tmp_path)
    parsed = [parse_source(f, f.abs_path.read_text(encoding="utf-8"))[0] for f in walk_repository(tmp_path).files]
    computed = []
    real = resolve._Resolver._export

    def counted(self, path, name, stars=True):
        computed.append((path, name))
        return real(self, path, name, stars)

    monkeypatch.setattr(resolve._Resolver, "_export", counted)
    references = resolve_references(parsed)
    # each file's export of BaseStyle asks the set of files once: a few per file and reference, not
    # one per path through them (8! = 40,320)
    assert len(computed) < WIDGETS * WIDGETS * 4, len(computed)
    called = [r for r in references if r.path == "main.mjs" and r.kind == "call"]
    assert [(r.name, r.confidence, [t.split("@")[0] for t in r.target_ids]) for r in called] == [
        ("w3Classes", "exact", ["widget3/style/index.mjs#w3Classes"])]


def test_a_named_import_from_such_a_module_looks_at_its_files_once_per_question(tmp_path, monkeypatch):
    # `import { BaseStyle }` (primevue's .d.ts) also reaches the Java static-import fallback, which
    # noted every file of the module each time the import was asked again: 16 files, 20,601 notes
    widgets = 16
    _widgets(tmp_path, widgets, "{ BaseStyle }")
    parsed = [parse_source(f, f.abs_path.read_text(encoding="utf-8"))[0] for f in walk_repository(tmp_path).files]
    notes = []
    real = Memo.note

    def counted(self, atom):
        notes.append(atom)
        real(self, atom)

    monkeypatch.setattr(Memo, "note", counted)
    resolve_references(parsed)
    assert len(notes) < widgets * widgets * 20, len(notes)
