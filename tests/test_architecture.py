"""The shape of the code, checked: no import cycle between codeqa's modules, the query side does not load the
indexer or the heavy libraries, and no module grows past the size a newcomer reads at once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "codeqa"
MAX_LINES = 480  # DESIGN.md: modules stay under about 450 lines


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        found[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    return found


def top_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The codeqa modules `name` imports at module level (lazy imports inside functions are not edges)."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if is_package else name.split(".")[:-1]
            if node.level:
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{a.name}" for a in node.names]
        out.update(t for t in targets if t in known and t != name)
    return out


def test_no_import_cycle():
    found = modules()
    graph = {m: top_level_imports(m, p, set(found)) for m, p in found.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import cycles: {cycles}"
    assert "codeqa.index" not in graph["codeqa.query.retrieve"]


def test_the_query_side_loads_neither_the_indexer_nor_the_heavy_libraries():
    code = ("import sys, codeqa.query.retrieve, codeqa.answer; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tree_sitter', "
            "'tree_sitter_language_pack', 'sentence_transformers', 'transformers') "
            "or m in ('codeqa.index', 'codeqa.graph', 'codeqa.parse', 'codeqa.chunk')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_no_module_is_too_long_to_read_at_once():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
