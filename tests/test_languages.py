"""Every language's queries over real tree-sitter parses of the samples in tests/fixtures/languages/.

Each folder there is a small project of its own (parsed and resolved on its own, so that a name in
one language never resolves into another). `golden.txt` holds, per file, every symbol
(`kind qualified_name Lstart-Lend`, plus its doc comment's first words) and every resolved reference
(`Lline name kind confidence -> target`). On a mismatch the test prints a unified diff; after a
deliberate change regenerate it with `CODEQA_UPDATE_GOLDEN=1 pytest tests/test_languages.py` and
read the diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from pathlib import Path

import pytest

from codeqa.indexing.walk import walk_repository
from codeqa.indexing.graph import resolve_references
from codeqa.languages import LANGUAGES, queries_dir
from codeqa.indexing.parse import parse_source
from codeqa.types import ParsedFile, Reference
from conftest import FIXTURE_REPO, FIXTURES

SAMPLES = FIXTURES / "languages"
GOLDEN = SAMPLES / "golden.txt"
SAMPLE_LANGUAGES = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())


def test_an_import_never_names_files_of_another_language_family(tmp_path):
    # site-packages' shape: a Python package torch/ beside C++ headers in include/torch/ (a folder of
    # that name) and include/torch/types.h (the module path of torch/types.py). Each import stays in
    # its family: both used to reach the other (15% of site-packages' references went across)
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("from torch.types import Tensor\n")
    (tmp_path / "torch" / "types.py").write_text("class Tensor:\n    pass\n")
    (tmp_path / "model.py").write_text("from torch import Tensor\n\n\ndef make() -> Tensor:\n    return Tensor()\n")
    headers = tmp_path / "torch" / "include" / "torch"
    headers.mkdir(parents=True)
    (headers / "types.h").write_text("#pragma once\nnamespace at {\nclass Tensor {\n public:\n  int dim() const;\n};\n}\n")
    (headers / "all.h").write_text("#pragma once\n#include <torch/types.h>\nclass Tensor;\n")
    (tmp_path / "torch" / "include" / "use.cpp").write_text(
        "#include <torch/types.h>\n\nint rank(const Tensor& t) { Tensor copy = t; return 0; }\n")
    _, resolved = project(tmp_path)
    python = {t for r in resolved if r.path == "model.py" and r.name == "Tensor" for t in targets(r)}
    assert python == {"torch/types.py:Tensor"}
    cpp = {t for r in resolved if r.path == "torch/include/use.cpp" and r.name == "Tensor" for t in targets(r)}
    assert cpp and all(t.startswith("torch/include/torch/") for t in cpp), cpp


@lru_cache(maxsize=None)
def project(root: Path) -> tuple[tuple[ParsedFile, ...], tuple[Reference, ...]]:
    """Parse every file with a grammar under `root` and resolve its references."""
    parsed = []
    for file in walk_repository(root).files:
        if file.language is not None:
            parsed.append(parse_source(file, file.abs_path.read_text(encoding="utf-8"))[0])
    return tuple(parsed), tuple(resolve_references(parsed))


def sample(language: str):
    return project(SAMPLES / language)


def symbols_by_qualified_name(language: str) -> dict[str, object]:
    parsed, _ = sample(language)
    return {s.qualified_name: s for pf in parsed for s in pf.symbols}


def refs(language: str, path: str | None = None, name: str | None = None) -> list[Reference]:
    _, resolved = sample(language)
    return [r for r in resolved if (path is None or r.path == path) and (name is None or r.name == name)]


def targets(ref: Reference) -> list[str]:
    """`path:qualified_name` of each target."""
    return [f"{t.split('#', 1)[0]}:{t.split('#', 1)[1].rsplit('@', 1)[0]}" for t in ref.target_ids]


def render(language: str) -> list[str]:
    parsed, resolved = sample(language)
    by_path: dict[str, list[Reference]] = {}
    for ref in resolved:
        by_path.setdefault(ref.path, []).append(ref)
    lines = []
    for pf in parsed:
        lines.append(f"== {language}/{pf.file.path}")
        for s in pf.symbols:
            doc = f'  "{s.docstring.splitlines()[0][:50]}"' if s.docstring else ""
            lines.append(f"{s.kind} {s.qualified_name} L{s.start_line}-L{s.end_line}{doc}")
        for r in by_path.get(pf.file.path, []):
            lines.append(f"L{r.line} {r.name} {r.kind} {r.confidence} -> {', '.join(targets(r))}")
    return lines


def test_every_language_has_queries_and_a_sample():
    for lang in LANGUAGES:
        for kind in ("definitions", "references"):
            assert (queries_dir() / lang.name / f"{kind}.scm").is_file(), f"queries/{lang.name}/{kind}.scm missing"
    assert set(SAMPLE_LANGUAGES) == {lang.name for lang in LANGUAGES} - {"python"}


@pytest.mark.parametrize("language", SAMPLE_LANGUAGES)
def test_samples_parse_cleanly(language):
    parsed, _ = sample(language)
    assert parsed, f"no {language} files found"
    for pf in parsed:
        assert pf.file.language == language
        assert pf.error is None, f"{pf.file.path}: {pf.error}"
        assert pf.symbols or all(r.kind == "import" for r in pf.references), f"{pf.file.path}: no symbols"


def test_golden_map():
    actual = [line for language in SAMPLE_LANGUAGES for line in render(language)]
    if os.environ.get("CODEQA_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text("\n".join(actual) + "\n", encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8").splitlines()
    if actual != expected:
        diff = "\n".join(difflib.unified_diff(expected, actual, "golden.txt", "actual", lineterm=""))
        pytest.fail(f"symbol/reference map differs from {GOLDEN.name} "
                    f"(CODEQA_UPDATE_GOLDEN=1 regenerates it):\n{diff}")


def one(language: str, path: str, line: int, name: str, kind: str | None = None,
        receiver: str | None = None) -> Reference:
    """The one resolved reference to `name` on that line (narrowed by kind or receiver)."""
    found = [r for r in refs(language, path, name) if r.line == line
             and (kind is None or r.kind == kind) and (receiver is None or r.receiver == receiver)]
    assert len(found) == 1, f"{language}/{path}:L{line} {name}: {found}"
    return found[0]


def test_javascript_default_named_namespace_imports_and_require():
    assert targets(one("javascript", "main.js", 1, "describe")) == ["geometry.js:describe"]
    call = one("javascript", "main.js", 11, "describe")
    assert (call.kind, call.confidence, targets(call)) == ("call", "exact", ["geometry.js:describe"])
    aliased = one("javascript", "main.js", 12, "areaOf")
    assert (aliased.confidence, targets(aliased)) == ("exact", ["geometry.js:area"])
    via_namespace = one("javascript", "main.js", 13, "perimeter")  # import * as geo; geo.perimeter()
    assert (via_namespace.confidence, targets(via_namespace)) == ("exact", ["geometry.js:perimeter"])
    via_require = one("javascript", "main.js", 13, "formatNumber")  # const fmt = require(...); fmt.formatNumber()
    assert (via_require.confidence, targets(via_require)) == ("exact", ["legacy/format.js:formatNumber"])
    inherited = one("javascript", "main.js", 9, "scale")  # circle = new Circle(); circle.scale() from Shape
    assert (inherited.confidence, targets(inherited)) == ("likely", ["geometry.js:Shape.scale"])


def test_typescript_import_through_a_barrel_is_exact():
    imported = one("typescript", "app.ts", 1, "UserStore")  # from "./models" = models/index.ts: export *
    assert (imported.confidence, targets(imported)) == ("exact", ["models/user.ts:UserStore"])
    created = one("typescript", "app.ts", 14, "UserStore")
    assert (created.kind, created.confidence) == ("instantiation", "exact")
    via_field = one("typescript", "app.ts", 19, "add")  # this.store.add(): store is declared a UserStore
    assert targets(via_field) == ["models/user.ts:UserStore.add"]
    via_interface = one("typescript", "app.ts", 24, "get")  # repo: Repository<User>
    assert targets(via_interface) == ["models/user.ts:Repository.get"]
    symbols = symbols_by_qualified_name("typescript")
    assert symbols["Repository.get"].kind == "method" and symbols["Startup.run"].kind == "function"
    assert symbols["UserStore"].docstring == "Keeps users in memory."


def test_tsx_components_resolve_across_files():
    button = one("tsx", "App.tsx", 18, "Button")  # <Button {...props} />
    assert (button.kind, button.confidence, targets(button)) == ("call", "exact", ["Button.tsx:Button"])
    counter = one("tsx", "App.tsx", 17, "Counter")  # a class component
    assert counter.kind == "instantiation"


def test_java_qualified_names_static_import_and_same_package():
    symbols = symbols_by_qualified_name("java")
    assert symbols["Inventory.Zone"].kind == "enum"
    assert symbols["Inventory.Listener.onChange"].kind == "method"
    assert symbols["Item.getSku"].docstring == "The stock-keeping unit code."
    static = one("java", "com/acme/app/Main.java", 11, "empty")
    assert (static.confidence, targets(static)) == ("exact", ["com/acme/inventory/Inventory.java:Inventory.empty"])
    same_package = one("java", "com/acme/inventory/Inventory.java", 23, "Item", kind="instantiation")
    assert same_package.confidence == "likely"
    # items is a java.util.List: items.add() is not our Inventory.add
    assert not refs("java", "com/acme/inventory/Inventory.java", "add")


def test_go_receivers_package_imports_and_same_package():
    symbols = symbols_by_qualified_name("go")
    start = symbols["Server.Start"]
    assert start.kind == "method" and start.parent_id == symbols["Server"].id
    assert symbols["Server.Route"].path == "server/routes.go"  # method in another file of the package
    assert symbols["Handler"].kind == "interface" and symbols["Server"].docstring.startswith("Server holds")
    new = one("go", "main.go", 24, "New")  # import "example.com/shop/server"; server.New()
    assert (new.confidence, targets(new)) == ("exact", ["server/server.go:New"])
    aliased = one("go", "main.go", 20, "Open")  # store "example.com/shop/internal/storage"
    assert targets(aliased) == ["internal/storage/storage.go:Open"]
    route = one("go", "main.go", 23, "Route")  # srv := &server.Server{...}; srv.Route()
    assert (route.confidence, targets(route)) == ("likely", ["server/routes.go:Server.Route"])
    start_call = one("go", "main.go", 25, "Start")  # other := server.New(...) returns *Server
    assert targets(start_call) == ["server/server.go:Server.Start"]
    same_package = one("go", "server/server.go", 22, "newRoutes")
    assert (same_package.confidence, targets(same_package)) == ("likely", ["server/routes.go:newRoutes"])


def test_rust_use_paths_impl_methods_and_mod_files():
    symbols = symbols_by_qualified_name("rust")
    assert symbols["Circle.new"].kind == "method" and symbols["Circle.new"].parent_id == symbols["Circle"].id
    assert symbols["Point.distance"].docstring == "Euclidean distance to `other`."
    assert symbols["Point"].docstring == "A point in the plane."  # doc above #[derive(...)]
    crate_path = one("rust", "src/lib.rs", 6, "Circle")  # use crate::geometry::circle::Circle
    assert (crate_path.confidence, targets(crate_path)) == ("exact", ["src/geometry/circle.rs:Circle"])
    super_path = one("rust", "src/geometry/circle.rs", 1, "Point")  # use super::{Point, Shape}
    assert targets(super_path) == ["src/geometry/mod.rs:Point"]
    renamed = one("rust", "src/lib.rs", 10, "Measure")  # Shape as Measure
    assert targets(renamed) == ["src/geometry/mod.rs:Shape"]
    assert targets(one("rust", "src/lib.rs", 16, "clamp")) == ["src/util.rs:clamp"]  # mod util; util::clamp()
    assert targets(one("rust", "src/lib.rs", 16, "new")) == ["src/geometry/circle.rs:Circle.new"]
    default_method = one("rust", "src/lib.rs", 25, "name")  # impl Shape for Circle; circle.name()
    assert targets(default_method) == ["src/geometry/mod.rs:Shape.name"]


def test_c_includes_reach_the_definitions():
    symbols = symbols_by_qualified_name("c")
    assert symbols["Vec2"].kind == "struct" and symbols["Vec2"].docstring == "A 2D vector."
    assert {s.path for s in symbols.values() if s.name == "vec_add"} == {"vec.c"}  # not the prototype
    call = one("c", "main.c", 10, "vec_add")
    assert (call.confidence, targets(call)) == ("likely", ["vec.c:vec_add"])


def test_cpp_out_of_class_methods_belong_to_their_class():
    symbols = symbols_by_qualified_name("cpp")
    area = symbols["Circle.area"]
    assert (area.path, area.kind, area.docstring) == ("shape.cpp", "method", "Pi times the squared radius.")
    big = one("cpp", "main.cpp", 17, "area", receiver="big")  # auto big = std::make_unique<Circle>(3.0)
    assert targets(big) == ["shape.cpp:Circle.area"]
    pointer = one("cpp", "main.cpp", 17, "area", receiver="any")  # Shape* any = new Circle(2.0)
    assert targets(pointer) == ["shape.hpp:Shape.area"]
    assert targets(one("cpp", "main.cpp", 8, "label")) == ["shape.hpp:Shape.label"]
    assert one("cpp", "shape.hpp", 16, "Shape").kind == "inheritance"


def test_csharp_usings_and_xml_docs():
    symbols = symbols_by_qualified_name("csharp")
    assert symbols["Account.Deposit"].docstring == "Adds money to the balance."
    alias = one("csharp", "Services/Ledger.cs", 11, "Kind")  # using Kind = Bank.Models.AccountKind;
    assert (alias.confidence, targets(alias)) == ("exact", ["Models/Account.cs:AccountKind"])
    deposit = one("csharp", "Services/Ledger.cs", 14, "Deposit")  # var account = new Account(owner)
    assert targets(deposit) == ["Models/Account.cs:Account.Deposit"]


def test_ruby_modules_reopened_across_files():
    symbols = symbols_by_qualified_name("ruby")
    assert symbols["Shop.Cart.add"].kind == "method" and symbols["checkout"].kind == "function"
    assert symbols["Shop.Item"].docstring == "A thing that can be bought."
    item = one("ruby", "lib/shop/cart.rb", 14, "Item")  # Item.new inside module Shop, defined in item.rb
    assert (item.kind, targets(item)) == ("instantiation", ["lib/shop/item.rb:Shop.Item"])
    assert targets(one("ruby", "checkout.rb", 6, "add")) == ["lib/shop/cart.rb:Shop.Cart.add"]


def test_php_use_statements_and_traits():
    user = one("php", "src/Controllers/UserController.php", 5, "User")
    assert (user.confidence, targets(user)) == ("exact", ["src/Models/User.php:User"])
    find = one("php", "src/Controllers/UserController.php", 13, "find")  # User::find()
    assert targets(find) == ["src/Models/User.php:User.find"]
    touch = one("php", "src/Controllers/UserController.php", 15, "touch")  # via `use Timestamps;`
    assert targets(touch) == ["src/Models/User.php:Timestamps.touch"]


def test_fixture_repo_typescript_and_java_pairs_resolve():
    _, resolved = project(FIXTURE_REPO)
    by_site = {(r.path, r.line, r.name): r for r in resolved}
    imported = by_site[("web/app.ts", 1, "LabelMaker")]
    assert (imported.confidence, imported.target_ids) == ("exact", ("web/util.ts#LabelMaker@6",))
    assert by_site[("web/app.ts", 6, "join")].target_ids == ("web/util.ts#joinLabel@2",)
    assert by_site[("web/app.ts", 5, "make")].target_ids == ("web/util.ts#LabelMaker.make@10",)
    greeter = by_site[("java/com/example/App.java", 7, "Greeter")]
    assert greeter.target_ids == ("java/com/example/Greeter.java#Greeter@4",) and greeter.confidence == "likely"
    assert by_site[("java/com/example/App.java", 8, "greet")].target_ids == ("java/com/example/Greeter.java#Greeter.greet@12",)


def test_a_cpp_header_named_dot_h_is_parsed_as_cpp(tmp_path):
    header = tmp_path / "widget.h"
    header.write_text("#pragma once\nnamespace ui {\n/// A widget.\nclass Widget : public Base {\n public:\n"
                      "  int width() const { return w_; }\n private:\n  int w_;\n};\n}  // namespace ui\n")
    file = walk_repository(tmp_path).files[0]
    assert file.language == "c"  # by extension
    parsed, _ = parse_source(file, header.read_text())
    assert parsed.error is None
    assert [(s.qualified_name, s.kind, s.language) for s in parsed.symbols] == [
        ("Widget", "class", "cpp"), ("Widget.width", "method", "cpp")]
    assert parsed.symbols[0].docstring == "A widget."


def test_a_name_only_guess_never_crosses_into_another_language_family(tmp_path):
    # a unique method name in Ruby is no target for Python's `x.process_batch()` on an unknown x, nor
    # a Python function in the same folder for a Go call by that name; C and C++ are one family
    (tmp_path / "worker.rb").write_text("class Worker\n  def process_batch(items)\n    items\n  end\nend\n")
    (tmp_path / "jobs.py").write_text("def run(queue):\n    return queue.pop().process_batch([])\n\n\n"
                                      "def checksum_all(data):\n    return data\n")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() {\n\tchecksum_all(nil)\n}\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "util.cpp").write_text("int vector_norm(int x) { return x; }\n")
    (tmp_path / "main.c").write_text("int main(void) { return vector_norm(3); }\n")
    parsed, resolved = project(tmp_path)
    seen = {r.name for pf in parsed for r in pf.references}
    assert {"process_batch", "checksum_all", "vector_norm"} <= seen  # found, then left unresolved or not
    by_name = {r.name: r for r in resolved}
    assert "process_batch" not in by_name and "checksum_all" not in by_name
    assert targets(by_name["vector_norm"]) == ["lib/util.cpp:vector_norm"]
    assert by_name["vector_norm"].confidence == "name-only"


def test_lua_required_module_tables_and_their_members():
    symbols = symbols_by_qualified_name("lua")
    assert symbols["Cart"].kind == "module" and symbols["Cart.add"].kind == "method"
    assert symbols["M.round"].docstring == "Rounds a price to whole cents."
    # local util = require("shop.util"); util.format_price(): a member of the table util.lua returns
    price = one("lua", "main.lua", 5, "format_price")
    assert (price.confidence, targets(price)) == ("exact", ["shop/util.lua:M.format_price"])
    assert targets(one("lua", "main.lua", 8, "new")) == ["shop/cart.lua:Cart.new"]
    add = one("lua", "main.lua", 9, "add")  # cart = Cart.new(...), which returns setmetatable({...}, Cart)
    assert (add.confidence, targets(add)) == ("likely", ["shop/cart.lua:Cart.add"])
    assert not refs("lua", "main.lua", "log")  # `local log = print`: util.lua's local function log is private to it


def test_bash_functions_reached_through_source_and_a_shebang():
    parsed, _ = sample("bash")
    assert {pf.file.path: pf.file.language for pf in parsed}["bin/nightly"] == "bash"  # no extension: #!/usr/bin/env bash
    assert symbols_by_qualified_name("bash")["log"].docstring == "Prints a message to stderr with a level."
    # . "$(dirname "$0")/../lib/backup.bash", which sources log.sh: both files' functions are visible
    backup = one("bash", "bin/nightly", 11, "backup_dir")
    assert (backup.kind, backup.confidence, targets(backup)) == ("call", "likely", ["lib/backup.bash:backup_dir"])
    assert targets(one("bash", "bin/nightly", 11, "log")) == ["lib/log.sh:log"]
    assert targets(one("bash", "bin/nightly", 8, "cleanup")) == ["bin/nightly:cleanup"]  # trap cleanup EXIT


def test_vue_and_svelte_scripts_are_parsed_in_their_language_and_the_markup_stays_text():
    """`<script setup lang="ts">` is TypeScript, a bare `<script>` JavaScript, at the file's own lines;
    a `<script>` inside a template comment is none; template and style become text chunks."""
    from codeqa.indexing.chunk import chunk_file

    parsed, _ = sample("vue")
    counter = next(pf for pf in parsed if pf.file.path == "Counter.vue")
    assert [(s.name, s.language, s.start_line) for s in counter.symbols] == [("increment", "typescript", 14)]
    assert "notCode" not in {r.name for r in counter.references}
    text = counter.file.abs_path.read_text(encoding="utf-8")
    _, tree = parse_source(counter.file, text)
    chunks = chunk_file(counter.file, text, tree, counter.symbols, max_chars=300, min_chars=50)
    assert [(c.start_line, c.end_line, c.kind) for c in chunks] == [(1, 6, "text"), (7, 13, "module"),
                                                                    (14, 16, "function"), (17, 21, "text")]
    svelte, _ = sample("svelte")
    tally = next(pf for pf in svelte if pf.file.path == "tally.svelte")
    assert {s.language for s in tally.symbols} == {"javascript"}


def test_the_queries_folder_is_a_setting_not_read_behind_settings_back(tmp_path, monkeypatch):
    """CODEQA_QUERIES_DIR reaches the parse and the fingerprint through Settings.queries_dir (issue 39): the
    edited queries make other symbols and another fingerprint, and a library call given its own Settings is
    not changed by the process environment."""
    import shutil

    from codeqa.config import Settings
    from codeqa.fingerprint import fingerprint
    from codeqa.indexing.parse_pool import _parse_and_chunk_all

    queries = tmp_path / "queries"
    shutil.copytree(queries_dir(), queries)
    (queries / "python" / "definitions.scm").write_text("(class_definition name: (identifier) @name) @definition.class\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "shapes.py").write_text("class Shape:\n    pass\n\n\ndef area(shape):\n    return 0\n")
    files = walk_repository(project).files

    def kinds(settings: Settings) -> list[str]:
        return sorted(s.kind for parsed, _, _ in _parse_and_chunk_all(files, settings) for s in parsed.symbols)

    edited = Settings.load(env={"CODEQA_QUERIES_DIR": str(queries)})
    assert edited.queries_dir == queries
    assert kinds(Settings()) == ["class", "function", "module"]  # the file's module symbol: graph/modules.py
    assert kinds(edited) == ["class", "module"]
    assert fingerprint(edited)["queries_hash"] != fingerprint(Settings())["queries_hash"]
    monkeypatch.setenv("CODEQA_QUERIES_DIR", str(queries))
    assert fingerprint(Settings())["queries_hash"] == fingerprint(Settings.load(env={}))["queries_hash"]
