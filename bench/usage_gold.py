"""Gold for the usage-question sets (issue 20), from Jedi, an analyser independent of codeqa's graph.

Each line of a question file names one definition by hand: the question as a person would type it,
the file that defines it and its qualified name ("Console.print", "cell_len"). This script finds
that definition with Jedi and writes back, on the same line:

    def_line   the line of the `def`/`class` keyword (decorators are above it); for a name with
               @overload stubs, the implementation (the last definition in the file)
    refs       [{"path", "line"}, ...] the definition's reference sites, sorted

A reference site is a name Jedi's `Script.get_references(scope="project")` returns from the
definition, kept only when:
  - it is not a definition (`Name.is_definition()`): the definition itself, overriding methods of
    the same name, and imports (`from .console import Console` binds a name; it is not a use);
  - it is not in an import statement (a second check, in case Jedi does not mark one a definition);
  - Jedi's `Script.goto` at the site (following imports) resolves to this very definition.
    `get_references` lumps polymorphic siblings together (asking for `Array.as_string` also
    returns calls Jedi infers as `Integer.as_string`); the goto check keeps only the sites Jedi
    itself attributes to the named definition.
Sites in the whole project folder count (package, tests, docs, examples).

Needs Jedi (`/work/main/.venv/bin/pip install jedi`; the gold files were made with jedi 0.20.1). Run:

    python bench/usage_gold.py bench/questions/usage-tomlkit-0.13.2.jsonl --repo /tmp/data/tomlkit-0.13.2
    python bench/usage_gold.py bench/questions/usage-rich-13.9.4.jsonl --repo /tmp/data/rich-13.9.4

The file is rewritten in place (question, path and symbol kept; def_line and refs recomputed).
Definitions outside --min-refs..--max-refs sites are reported, not dropped: edit the question file.
Re-running may move a few sites (Jedi's inference depends on what it parsed before: Key.is_dotted
came out at 7 and at 9 sites in two runs); the committed gold is what bench/usage_questions.py scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

try:
    import jedi
except ImportError:  # the one optional dependency of this script
    raise SystemExit("bench/usage_gold.py needs Jedi, the independent analyser the gold comes from: "
                     "/work/main/.venv/bin/pip install jedi")


class Project:
    """One Jedi project over a source tree, with one parsed Script per file."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        # a src/ layout goes first on the path: Jedi puts added paths after site-packages, so a copy of the
        # package installed there (python-dateutil is, as a dependency) took every import in the tests
        first = [str(self.root / "src")] if (self.root / "src").is_dir() else []
        self.project = jedi.Project(path=str(self.root),
                                    sys_path=first + list(jedi.get_default_environment().get_sys_path()))
        self._scripts: dict[Path, jedi.Script] = {}

    def script(self, path: Path) -> jedi.Script:
        path = path.resolve()
        if path not in self._scripts:
            self._scripts[path] = jedi.Script(path.read_text(encoding="utf-8"), path=str(path), project=self.project)
        return self._scripts[path]

    def rel(self, path) -> str:
        return Path(path).resolve().relative_to(self.root).as_posix()

    def find_definition(self, rel: str, qualified: str):
        """The Jedi Name of the class/def statement `qualified` (dotted through classes) in file `rel`."""
        found = []
        for name in self.script(self.root / rel).get_names(all_scopes=True, definitions=True):
            tree = getattr(name, "_name", None) and getattr(name._name, "tree_name", None)
            if tree is None or tree.parent.type not in ("classdef", "funcdef") or tree.parent.name is not tree:
                continue
            if _qualified(name) == qualified:
                found.append(name)
        if not found:
            raise SystemExit(f"{rel}: no class or def named {qualified!r}; fix the question file")
        return found  # several for @overload stubs and if/else branches; the last is the implementation

    def reference_sites(self, definitions) -> tuple[list[dict], dict]:
        """Sites (path, line) that use the definition (any of its overloads), and how many candidates each
        filter dropped."""
        definition = definitions[-1]
        targets = {(Path(d.module_path).resolve(), d.line) for d in definitions}
        script = self.script(Path(definition.module_path))
        dropped = {"definition": 0, "import": 0, "resolves_elsewhere": 0}
        sites = set()
        for ref in script.get_references(definition.line, definition.column, scope="project", include_builtins=False):
            if ref.module_path is None or not Path(ref.module_path).resolve().is_relative_to(self.root):
                continue
            if ref.is_definition():
                dropped["definition"] += 1
                continue
            tree = getattr(ref._name, "tree_name", None)
            if tree is not None and tree.search_ancestor("import_from", "import_name") is not None:
                dropped["import"] += 1
                continue
            goto = self.script(Path(ref.module_path)).goto(ref.line, ref.column, follow_imports=True)
            if not any(g.module_path and (Path(g.module_path).resolve(), g.line) in targets for g in goto):
                dropped["resolves_elsewhere"] += 1
                continue
            sites.add((self.rel(ref.module_path), ref.line))
        return [{"path": p, "line": n} for p, n in sorted(sites)], dropped


def _qualified(name) -> str:
    parts = [name.name]
    parent = name.parent()
    while parent is not None and parent.type in ("class", "function"):
        parts.append(parent.name)
        parent = parent.parent()
    return ".".join(reversed(parts))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("questions", type=Path)
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--min-refs", type=int, default=2)
    ap.add_argument("--max-refs", type=int, default=60)
    args = ap.parse_args(argv)
    project = Project(args.repo)
    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    cache: dict[tuple[str, str], tuple[int, list[dict], dict]] = {}
    for row in rows:
        key = (row["path"], row["symbol"])
        if key not in cache:
            definitions = project.find_definition(*key)
            refs, dropped = project.reference_sites(definitions)
            cache[key] = (definitions[-1].line, refs, dropped)
        row["def_line"], row["refs"], dropped = cache[key]
        flag = "" if args.min_refs <= len(row["refs"]) <= args.max_refs else "   <-- outside the wanted range"
        print(f"{len(row['refs']):3d} sites {len({r['path'] for r in row['refs']}):2d} files  "
              f"{row['path']}:{row['def_line']} {row['symbol']}  dropped {dropped}{flag}", file=sys.stderr)
    args.questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} questions, gold written to {args.questions} in {time.perf_counter() - started:.0f} s "
          f"(jedi {jedi.__version__})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
