"""Modules as symbols (codeqa/indexing/graph/modules.py): a Python file is a symbol of kind module whose
references are its imports (`from . import util` inside a function, `import shop.util`, `from shop import
util as money`) and the names used through it (`util.total()`, `money.fmt`), as `codeqa refs util` and
the usage route list them. Indexed with the real grammar and queries into a real store; embeddings
come from a constant stand-in, as only the graph is looked at."""

from __future__ import annotations

import json
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest

from codeqa.config import Settings
from codeqa.indexing.index import index_repo
from codeqa.store import open_store

FILES = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/util.py": '"""Money helpers."""\n\n\ndef total(xs):\n    return sum(xs)\n\n\ndef fmt(x):\n    return str(x)\n',
    "shop/core.py": ("def checkout(items):\n    from . import util\n\n    return util.total(items)\n\n\n"
                     "def show(x):\n    from . import util as u\n\n    return u.fmt(x)\n"),
    "shop/cli.py": "import shop.util\n\n\ndef main():\n    return shop.util.fmt(1)\n",
    "shop/app.py": "from shop import util as money\n\n\ndef start():\n    print(money.total([1]))\n    return money.fmt\n",
    # `def main():` on line 1 of main.py has the id a module symbol `main` would have: the function stays
    "main.py": "def main():\n    return 0\n",
    # a module and its function of one name (dateutil's zoneinfo/rebuild.py)
    "shop/rebuild.py": '"""Rebuilding the stock."""\n\n\ndef rebuild(stock):\n    return list(stock)\n',
    "shop/store.py": "from .rebuild import rebuild\n\n\ndef restock(stock):\n    return rebuild(stock)\n",
}
UTIL = "shop/util.py#shop.util@1"
SHOP = "shop/__init__.py#shop@1"
# (path, line, kind) of every reference to the module shop.util
UTIL_SITES = {
    ("shop/core.py", 2, "import"), ("shop/core.py", 4, "attribute"),  # from . import util; util.total(...)
    ("shop/core.py", 8, "import"), ("shop/core.py", 10, "attribute"),  # from . import util as u; u.fmt(x)
    ("shop/cli.py", 1, "import"), ("shop/cli.py", 5, "attribute"),  # import shop.util; shop.util.fmt(1)
    ("shop/app.py", 1, "import"), ("shop/app.py", 5, "attribute"), ("shop/app.py", 6, "attribute"),
}


class ConstantEmbedder:
    model_id, dimension = "constant", 8

    def encode(self, texts, batch_size=64):
        return np.full((len(texts), 8), 8 ** -0.5, dtype="float32")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def index(repo: Path, index_dir: Path) -> Settings:
    settings = Settings.load(env={}, index_dir=index_dir)
    index_repo(repo, settings, embedder=ConstantEmbedder())
    return settings


def graph_of(repo: Path, settings: Settings):
    store = open_store(repo, settings)
    try:
        return {s.id: s for s in store.all_symbols()}, list(store.all_references())
    finally:
        store.close()


def sites(references, target: str) -> set[tuple[str, int, str]]:
    return {(r.path, r.line, r.kind) for r in references if target in r.target_ids}


def test_a_module_is_a_symbol_whose_references_are_its_imports_and_the_names_used_through_it(repo, tmp_path):
    symbols, references = graph_of(repo, index(repo, tmp_path / "index"))
    util = symbols[UTIL]
    assert (util.name, util.kind, util.start_line, util.end_line) == ("util", "module", 1, 9)
    assert (util.signature, util.docstring) == ("module shop.util", "Money helpers.")
    assert symbols[SHOP].signature == "package shop" and symbols[SHOP].docstring == "A shop."
    assert sites(references, UTIL) == UTIL_SITES
    assert all(r.confidence == "exact" for r in references if UTIL in r.target_ids)
    assert sites(references, SHOP) == {("shop/cli.py", 5, "attribute")}  # `shop` of shop.util.fmt(1)
    # the functions used through it are still what the calls reach
    assert {(r.path, r.line) for r in references if "shop/util.py#total@4" in r.target_ids} == {
        ("shop/core.py", 4), ("shop/app.py", 5)}
    # an id a definition already has: that file gets no module symbol, and its function is untouched
    assert symbols["main.py#main@1"].kind == "function"


def test_chunks_hold_the_files_own_symbols_only(repo, tmp_path):
    settings = index(repo, tmp_path / "index")
    store = open_store(repo, settings)
    try:
        chunk_ids = {i for path in FILES for h in store.chunks_in_file(path) for i in h.symbol_ids}
    finally:
        store.close()
    assert "shop/util.py#total@4" in chunk_ids and UTIL not in chunk_ids and SHOP not in chunk_ids


def test_refs_lists_a_modules_import_sites_and_uses(repo, tmp_path, capsys):
    from codeqa.cli import main

    index_dir = tmp_path / "index"
    index(repo, index_dir)
    assert main(["refs", "util", "--repo", str(repo), "--index-dir", str(index_dir), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(d["kind"], d["qualified_name"]) for d in found["definitions"]] == [("module", "shop.util")]
    assert {(r["path"], r["line"], r["kind"]) for r in found["references"]} == UTIL_SITES
    assert main(["refs", "shop.util", "--repo", str(repo), "--index-dir", str(index_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["definitions"][0]["id"] == UTIL


def test_an_index_made_before_module_symbols_is_derived_again(repo, tmp_path, monkeypatch):
    """An index of the last graph version has no module symbols: the next run finds the fingerprint stale
    and derives every file's symbols and references again (here: an older codeqa stood in by monkeypatch)."""
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    with monkeypatch.context() as old:
        old.setattr("codeqa.fingerprint.GRAPH_VERSION", "2")
        old.setattr("codeqa.indexing.parse_pool.with_module_symbol", lambda parsed, text, tree: parsed)
        index_repo(repo, settings, embedder=ConstantEmbedder())
        assert UTIL not in graph_of(repo, settings)[0]
    report = index_repo(repo, settings, embedder=ConstantEmbedder())
    assert any("symbol graph" in note for note in report.notes)
    symbols, references = graph_of(repo, settings)
    assert UTIL in symbols and sites(references, UTIL) == UTIL_SITES


def test_incremental_runs_equal_a_clean_index_as_modules_come_and_go(repo, tmp_path):
    settings = Settings.load(env={}, index_dir=tmp_path / "index")
    index_repo(repo, settings, embedder=ConstantEmbedder())
    edits = [
        ("a new file imports the module", lambda: (repo / "shop/late.py").write_text(
            "from .util import total\nfrom . import util\n\n\ndef go():\n    return util.fmt(total([]))\n")),
        ("a file imports a top-level module whose id its function has", lambda: (repo / "run.py").write_text(
            "import main\n\n\ndef go():\n    return main.main()\n")),
        ("the function moves off line 1: the module symbol appears", lambda: (repo / "main.py").write_text(
            '"""Entry point."""\n\n\ndef main():\n    return 0\n')),
        ("the module is deleted", lambda: (repo / "shop/util.py").unlink()),
        ("and comes back", lambda: (repo / "shop/util.py").write_text(FILES["shop/util.py"])),
    ]
    for step, (what, apply) in enumerate(edits):
        apply()
        index_repo(repo, settings, embedder=ConstantEmbedder())
        clean = index(repo, tmp_path / f"clean-{step}")
        incremental, fresh = graph_of(repo, settings), graph_of(repo, clean)
        assert sorted(map(astuple, incremental[0].values())) == sorted(map(astuple, fresh[0].values())), what
        assert sorted(map(astuple, incremental[1])) == sorted(map(astuple, fresh[1])), what
    symbols, references = graph_of(repo, settings)
    assert ("shop/late.py", 2, "import") in sites(references, UTIL)
    assert sites(references, "main.py#main@1") == {("run.py", 1, "import"), ("run.py", 5, "attribute")}


def test_how_is_the_module_used_takes_the_usage_route_to_its_sites(repo, tmp_path, capsys):
    from codeqa.cli import main

    index_dir = str(tmp_path / "index")
    assert main(["index", str(repo), "--index-dir", index_dir, "--json"]) == 0
    capsys.readouterr()
    assert main(["ask", "How is the util module used?", "--repo", str(repo), "--index-dir", index_dir,
                 "--no-llm", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    summary = answer["summary"]
    assert (summary["kind"], summary["symbol"], summary["total"]) == ("module", "shop.util", len(UTIL_SITES))
    assert summary["by_kind"] == {"import": 4, "attribute": 5}
    # a name both a module and its function have: the function, unless the question says "module"
    assert main(["ask", "Where is rebuild called?", "--repo", str(repo), "--index-dir", index_dir, "--no-llm", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["kind"], summary["symbol"], summary["by_kind"]) == ("function", "rebuild", {"import": 1, "call": 1})


JS_FILES = {
    "src/util.js": "export function total(xs) {\n  return xs.length;\n}\nexport function fmt(x) {\n  return String(x);\n}\n",
    "src/app.js": "import * as util from './util';\n\nexport function start() {\n  return util.total([1]);\n}\n",
    "src/cli.js": ("const helpers = require('./util');\n\nfunction main() {\n  return helpers.fmt(2);\n}\n"
                   "module.exports = { main };\n"),
    "src/web/index.ts": "export function serve(): number {\n  return 1;\n}\n",
    "src/server.ts": ("import * as web from './web';\nimport util = require('./util');\n\nexport function run(): number {\n"
                      "  return web.serve() + util.total([]);\n}\n"),
}


def test_javascript_and_typescript_files_are_modules_too(tmp_path):
    """`import * as util from './util'`, `require('./util')`, TypeScript's `import util = require(...)`, and a
    folder's index file (`import * as web from './web'`)."""
    repo = tmp_path / "js"
    for path, text in JS_FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    symbols, references = graph_of(repo, index(repo, tmp_path / "index"))
    assert (symbols["src/util.js#src.util@1"].kind, symbols["src/web/index.ts#src.web@1"].name) == ("module", "web")
    assert sites(references, "src/util.js#src.util@1") == {
        ("src/app.js", 1, "import"), ("src/app.js", 4, "attribute"), ("src/cli.js", 1, "import"),
        ("src/cli.js", 4, "attribute"), ("src/server.ts", 2, "import"), ("src/server.ts", 5, "attribute")}
    assert sites(references, "src/web/index.ts#src.web@1") == {("src/server.ts", 1, "import"), ("src/server.ts", 5, "attribute")}
    assert {(r.path, r.line) for r in references if "src/util.js#fmt@4" in r.target_ids} == {("src/cli.js", 4)}
