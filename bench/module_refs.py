"""How well `codeqa refs <module>` finds a Python module's import sites (issue 67 item 5).

The truth is Python's own parser: every `import a.b.mod [as x]`, `from a.b import mod [as x]` and relative
`from . import mod` in the project's .py files that names the module (not `from mod import name`, which
names what the module defines). codeqa's import sites are the references of kind import that `refs` lists
for the module symbol; its other sites (the names used through the module) are counted beside them.

    python bench/module_refs.py REPO --index-dir DIR src/pkg/mod.py src/pkg/sub/__init__.py ...

Modules are given by path; `src/` is no package (a src layout). Prints one row per module and the totals.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path


def dotted(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_sites(repo: Path, module: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(path, line) of every import statement that names `module` itself, and of every line that reads a
    name such an import binds in that file (`mod`, its alias, or `a.b.mod` for `import a.b.mod`) where no
    parameter or local variable of that name hides it (an import inside a function is taken as the file's)."""
    found, used = set(), set()
    for file in sorted(repo.rglob("*.py")):
        rel = file.relative_to(repo).as_posix()
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        package = dotted(rel).split(".") if rel.endswith("__init__.py") else dotted(rel).split(".")[:-1]
        bound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == module:
                        found.add((rel, a.lineno))
                        bound.add(a.asname or a.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[:len(package) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                for a in node.names:
                    if f"{base}.{a.name}" == module:
                        found.add((rel, a.lineno))
                        bound.add(a.asname or a.name)
        if bound:
            used.update((rel, line) for line in _reads(tree, bound, frozenset()))
    return found, used


def _reads(node: ast.AST, bound: set[str], shadowed: frozenset[str]) -> list[int]:
    """Lines that read one of `bound` (a name, or a dotted chain) where no parameter or local
    variable of an enclosing function of the same name hides it."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        shadowed = shadowed | frozenset(local)
    written = _written(node)
    if written in bound and written.split(".")[0] not in shadowed:
        return [node.lineno]
    return [line for child in ast.iter_child_nodes(node) for line in _reads(child, bound, shadowed)]


def _written(node: ast.AST) -> str | None:
    """`a.b.c` for the expression a.b.c as it is read, else None."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        head = _written(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def codeqa_sites(repo: Path, index_dir: str, path: str) -> tuple[set[tuple[str, int]], int, list[str]]:
    spec = f"{path}:{dotted(path).rsplit('.', 1)[-1]}"
    out = subprocess.run([sys.executable, "-m", "codeqa", "refs", spec, "--repo", str(repo), "--index-dir", index_dir,
                          "--json"], capture_output=True, text=True)
    result = json.loads(out.stdout)
    modules = {d["id"] for d in result["definitions"] if d["kind"] == "module" and d["path"] == path}
    refs = [r for r in result["references"] if modules & set(r["target_ids"])]  # not a function named like it
    return ({(r["path"], r["line"]) for r in refs if r["kind"] == "import"},
            {(r["path"], r["line"]) for r in refs if r["kind"] != "import"}, sorted(modules))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("modules", nargs="+", help="module files, relative to the repository")
    args = parser.parse_args()
    totals = {"imports": [0, 0, 0], "uses": [0, 0, 0]}  # true positives, found, truth
    print(f"{'module':44} {'imports: truth':>14} {'codeqa':>6} {'prec':>5} {'recall':>6}     "
          f"{'uses: truth':>14} {'codeqa':>6} {'prec':>5} {'recall':>6}")
    for path in args.modules:
        truth, truth_uses = import_sites(args.repo, dotted(path))
        found, uses, ids = codeqa_sites(args.repo, args.index_dir, path)
        row = []
        for what, t, f in (("imports", truth, found), ("uses", truth_uses, uses)):
            hit = len(t & f)
            for i, n in enumerate((hit, len(f), len(t))):
                totals[what][i] += n
            row.append(f"{len(t):14} {len(f):6} {hit / max(1, len(f)):5.2f} {hit / max(1, len(t)):6.2f}")
        print(f"{dotted(path):44} {row[0]}     {row[1]}" + ("" if ids else "   (no module symbol)"))
        for label, missing in (("missed import", truth - found), ("extra import", found - truth),
                               ("missed use", truth_uses - uses), ("extra use", uses - truth_uses)):
            for site in sorted(missing)[:3]:
                print(f"    {label} {site[0]}:{site[1]}")
    row = [f"{t:14} {f:6} {h / max(1, f):5.2f} {h / max(1, t):6.2f}" for h, f, t in totals.values()]
    print(f"{'all':44} {row[0]}     {row[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
