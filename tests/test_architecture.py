"""The shape of the code, checked: no import cycle between codeqa's modules (not even through an import inside a
function), no import from a lower layer to a higher one, the query side does not load the indexer or the heavy
libraries, and no module grows past the size a newcomer reads at once."""

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


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles a depth-first walk of `graph` (module -> the modules it imports) meets, each as the trail around it."""
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
    return cycles


def test_no_import_cycle():
    found = modules()
    graph = {m: top_level_imports(m, p, set(found)) for m, p in found.items()}
    assert not (cycles := import_cycles(graph)), f"import cycles: {cycles}"
    assert not {m for m in graph["codeqa.query.retrieve"] if _in(m, INDEXING)}


def test_no_import_cycle_even_through_imports_inside_functions():
    """A lazy import is still a dependency (issue 64: embed/local.py imported local_numpy.py inside a method, and
    local_numpy.py imported local.py at module level); the page (ui/, installed as codeqa.ui) is walked too."""
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]  # the walk sees a loop
    assert not (cycles := import_cycles(every_import())), f"import cycles (lazy imports counted): {cycles}"


def test_the_query_side_loads_neither_the_indexer_nor_the_heavy_libraries():
    code = ("import sys, codeqa.query.retrieve, codeqa.answer; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tree_sitter', "
            "'tree_sitter_language_pack', 'sentence_transformers', 'transformers') "
            "or m.startswith('codeqa.indexing')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_no_module_is_too_long_to_read_at_once():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def all_imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports, at module level or inside a function (a lazy import is still a dependency)."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if is_package else name.split(".")[:-1]
            module = (".".join(base[:len(base) - (node.level - 1)] + ([node.module] if node.module else []))
                      if node.level else node.module or "")
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


# The packages by concern (issue 39). The index side builds an index; the query and answer sides read one; the
# shells sit over the library; what both sides share is the rest of codeqa (types, errors, config, languages, roles,
# redact, source_text, fingerprint, plain_sqlite, store/, embed/).
INDEXING = ("codeqa.indexing",)
QUERYING = ("codeqa.query", "codeqa.answer")
SHELLS = ("codeqa.cli", "codeqa.mcp", "codeqa.ui", "ui")
TOOLS = ("codeqa.eval",)  # the evaluation commands: over the library, like a shell, and may use both sides
ENTRY = ("codeqa", "codeqa.__main__")  # the package's lazy exports and `python -m codeqa`


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def package_violations(package: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for name, path in modules().items():
        if _in(name, (package,)):
            bad = sorted(m for m in all_imports(name, path) if _in(m, forbidden))
            if bad:
                found[name] = bad
    return found


def page_modules() -> dict[str, Path]:
    """The page's modules by the name the install gives them: setup.py ships ui/ inside the package as codeqa.ui."""
    return {"codeqa.ui" if p.name == "__init__.py" else f"codeqa.ui.{p.stem}": p for p in (ROOT / "ui").glob("*.py")}


def every_import() -> dict[str, set[str]]:
    """Each module of codeqa and of its page -> the modules it imports, at module level or inside a function."""
    found = {**modules(), **page_modules()}
    return {m: {t for t in all_imports(m, p) if t in found and t != m} for m, p in found.items()}


# The layers, lowest first (issue 64; DESIGN.md's pipeline): a module imports only from its own layer and the layers
# below it, at module level or inside a function. Packages side by side in a layer are siblings and import nothing
# of each other: the index side and the query side meet only in what they share below them; eval, mcp and the page
# are faces over the library. The base is one layer of small modules that import each other (the cycle tests keep
# them in order); the package's root is in it for its __version__ (its public names it looks up by name on first
# use, with import_module, for the user: no codeqa module reaches them through it). No exceptions are needed.
LAYERS = (
    ("codeqa", "codeqa.types", "codeqa.errors", "codeqa.config", "codeqa.languages", "codeqa.roles", "codeqa.redact",
     "codeqa.source_text", "codeqa.plain_sqlite", "codeqa.workspace"),
    ("codeqa.embed", "codeqa.llm"),  # the two model clients: embeddings, and chat (the reranker's and the answer's)
    ("codeqa.store", "codeqa.fingerprint"),  # the index's engines, and what the index records of its making
    ("codeqa.indexing", "codeqa.query"),
    ("codeqa.answer",),
    ("codeqa.eval", "codeqa.mcp", "codeqa.ui"),
    ("codeqa.cli",),  # every command; `codeqa ui` imports the page's package to find the script it serves
    ("codeqa.__main__",),
)


def layer_of(module: str) -> tuple[int, str]:
    """(the layer, the package listed in it) of a module: its longest listed prefix."""
    return max(((i, p) for i, layer in enumerate(LAYERS) for p in layer if _in(module, (p,))), key=lambda ip: len(ip[1]))


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import in `graph` that climbs to a higher layer or crosses to a sibling, as "importer -> imported"."""
    found = []
    for module, imported in sorted(graph.items()):
        mine, home = layer_of(module)
        for target in sorted(imported):
            theirs, there = layer_of(target)
            if theirs > mine or (theirs == mine and mine > 0 and there != home):
                found.append(f"{module} -> {target}")
    return found


def test_no_import_from_a_lower_layer_to_a_higher_one():
    planted = {"codeqa.query.rerank": {"codeqa.answer.chat", "codeqa.llm.chat"}, "codeqa.query.lookup": {"codeqa.indexing"},
               "codeqa.cli.ask": {"codeqa.answer", "codeqa.errors"}}
    assert layer_violations(planted) == ["codeqa.query.lookup -> codeqa.indexing", "codeqa.query.rerank -> codeqa.answer.chat"]
    graph = every_import()
    unplaced = sorted(m for m in graph if layer_of(m)[1] == "codeqa" and m != "codeqa")
    assert not unplaced, f"modules in no layer (add their package to LAYERS): {unplaced}"
    assert not (bad := layer_violations(graph)), f"imports from a lower layer to a higher one, or between siblings: {bad}"


def test_the_query_side_never_imports_the_indexer():
    assert not package_violations("codeqa.query", INDEXING)


def test_the_answer_side_never_imports_the_indexer_or_a_shell():
    assert not package_violations("codeqa.answer", INDEXING + SHELLS)


def test_the_indexer_never_imports_the_query_side():
    """The two sides meet only in what they share (the store, the fingerprint, the types)."""
    assert not package_violations("codeqa.indexing", QUERYING)


def test_what_both_sides_share_imports_neither_side():
    shared = [name for name in modules() if not _in(name, INDEXING + QUERYING + SHELLS + TOOLS) and name not in ENTRY]
    assert "codeqa.store" in shared and "codeqa.fingerprint" in shared
    found = {name: bad for name in shared if (bad := sorted(m for m in all_imports(name, modules()[name])
                                                            if _in(m, INDEXING + QUERYING + SHELLS + TOOLS)))}
    assert not found, f"shared modules that import a side or a shell: {found}"


def test_the_library_never_imports_a_shell():
    """cli/, mcp/ and ui/ sit over the library; nothing in it reaches up to them."""
    library = [name for name in modules() if not _in(name, SHELLS) and name not in ENTRY]
    found = {name: bad for name in library if (bad := sorted(m for m in all_imports(name, modules()[name])
                                                             if _in(m, SHELLS)))}
    assert not found, f"library modules that import a shell: {found}"
    assert not package_violations("codeqa.cli", ("ui",))


def test_readers_hold_the_reader_protocol_and_no_protocol_mixes_reading_and_writing():
    from codeqa.store import Store, StoreReader, StoreWriter

    def declared(cls) -> set[str]:
        return {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}

    def methods(cls) -> set[str]:  # StoreReader and StoreWriter join small protocols (issue 64): their methods
        return {n for k in cls.__mro__ if k.__module__ == "codeqa.store" for n in declared(k)}

    assert methods(StoreReader) & methods(StoreWriter) == {"close"}
    assert StoreReader in Store.__mro__ and StoreWriter in Store.__mro__ and not declared(Store)
    # the query side is typed with the reader protocol: it cannot call a write
    uses_store = {name for name, path in modules().items() if _in(name, ("codeqa.query",))
                  and "codeqa.store.Store" in all_imports(name, path)}
    assert not uses_store


def test_every_sqlite_file_is_opened_without_trusting_its_schema():
    """A copied or planted index folder is data: only plain_sqlite.connect_untrusted calls sqlite3.connect."""
    callers = sorted(str(path.relative_to(ROOT)) for path in PACKAGE.rglob("*.py")
                     if "sqlite3.connect(" in path.read_text(encoding="utf-8") and path.name != "plain_sqlite.py")
    assert callers == [], f"sqlite3.connect outside plain_sqlite.connect_untrusted: {callers}"


MAX_PROTOCOL_METHODS = 12  # issue 64: a protocol a second engine can implement, with a contract test that fits a screen


def protocol_sizes(source: str) -> dict[str, int]:
    """The methods each `class X(Protocol)` / `class X(..., Protocol)` declares in its own body (a composite that only
    joins smaller protocols, as store.Store does, declares none: its parts are counted where they are declared)."""
    def name(base: ast.expr) -> str | None:
        base = base.value if isinstance(base, ast.Subscript) else base  # Protocol[T]
        return base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None

    return {node.name: sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in node.body)
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ClassDef) and any(name(b) == "Protocol" for b in node.bases)}


def test_no_protocol_declares_more_than_twelve_methods():
    planted = "import typing\nclass Wide(typing.Protocol):\n" + "".join(f"    def m{i}(self): ...\n" for i in range(13))
    assert protocol_sizes(planted) == {"Wide": 13}  # the walk sees a protocol that is too wide
    sizes = {f"{path.relative_to(ROOT)}:{cls}": n for path in PACKAGE.rglob("*.py")
             for cls, n in protocol_sizes(path.read_text(encoding="utf-8")).items()}
    assert any(where.startswith("codeqa/store/") for where in sizes)  # and reaches the store's protocols
    wide = {where: n for where, n in sizes.items() if n > MAX_PROTOCOL_METHODS}
    assert not wide, f"protocols with more than {MAX_PROTOCOL_METHODS} methods (split them by what callers need): {wide}"


# The query side in the order a question passes it (issue 64): the helpers, then the stages parse (question) ->
# names -> evidence -> search -> pack, then the retriever that runs them. Each imports only modules before it, so no
# stage reaches back into a later one or into the retriever; the modules not listed sit over the retriever.
QUERY_ORDER = ("words", "choose", "lookup", "source", "question", "names", "evidence", "likelihood", "rankers", "lead",
               "rerank", "searcher", "pack", "retrieve")


def backward_imports(graph: dict[str, set[str]], order: tuple[str, ...]) -> set[tuple[str, str]]:
    """(importer, imported) pairs of `graph` where the imported module is not before the importer in `order`."""
    place = {m: i for i, m in enumerate(order)}
    return {(m, i) for m in order for i in graph.get(m, ()) if i in graph and place.get(i, len(order)) >= place[m]}


def test_the_query_stages_import_only_what_comes_before_them():
    assert backward_imports({"a": {"b"}, "b": set()}, ("a", "b")) == {("a", "b")}  # a planted step back is seen
    assert backward_imports({"a": {"c"}, "c": set()}, ("a",)) == {("a", "c")}  # so is one into the retriever's users
    found = modules()
    graph = {m.removeprefix("codeqa.query."): {i.removeprefix("codeqa.query.") for i in all_imports(m, p)
                                               if i.startswith("codeqa.query.")}
             for m, p in found.items() if m.startswith("codeqa.query.")}
    assert set(QUERY_ORDER) <= set(graph), f"not in codeqa/query/: {set(QUERY_ORDER) - set(graph)}"
    assert not (back := backward_imports(graph, QUERY_ORDER)), f"query modules importing a later one: {back}"
