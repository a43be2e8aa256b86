"""Python references, resolved over tests/fixtures/pyrefs with the real grammar and queries.

Each test names the source line it is about by a snippet of its text, and asserts the exact
(path, line, confidence) of a reference to one symbol — or that no reference to it is there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa.indexing.walk import walk_repository
from codeqa.indexing.graph import resolve_references
from codeqa.indexing.parse import parse_source
from codeqa.types import Reference

ROOT = Path(__file__).parent / "fixtures" / "pyrefs"


class Graph:
    def __init__(self, root: Path):
        files = [f for f in walk_repository(root).files if f.language == "python"]
        self.parsed = [parse_source(f, f.abs_path.read_text(encoding="utf-8"))[0] for f in files]
        self.references = resolve_references(self.parsed)
        self.symbol_ids = {s.id.split("@")[0]: s.id for pf in self.parsed for s in pf.symbols}
        self.lines = {pf.file.path: pf.file.abs_path.read_text(encoding="utf-8").splitlines() for pf in self.parsed}

    def line(self, path: str, snippet: str) -> int:
        """The line of `path` that is `snippet` (leading spaces aside) or else holds it; exactly one."""
        found = [i for i, text in enumerate(self.lines[path], start=1) if text.strip() == snippet]
        found = found or [i for i, text in enumerate(self.lines[path], start=1) if snippet in text]
        assert len(found) == 1, f"{snippet!r} is on lines {found} of {path}"
        return found[0]

    def sites(self, target: str) -> set[tuple[str, int, str]]:
        """(path, line, confidence) of every reference to `target` ("path#Qualified.name")."""
        symbol_id = self.symbol_ids[target]
        return {(r.path, r.line, r.confidence) for r in self.references if symbol_id in r.target_ids}

    def at(self, path: str, snippet: str) -> list[Reference]:
        line = self.line(path, snippet)
        return [r for r in self.references if r.path == path and r.line == line]


@pytest.fixture(scope="module")
def graph() -> Graph:
    return Graph(ROOT)


def site(graph: Graph, path: str, snippet: str, confidence: str) -> tuple[str, int, str]:
    return (path, graph.line(path, snippet), confidence)


def targets_at(graph: Graph, path: str, snippet: str) -> set[str]:
    return {t.split("@")[0] for r in graph.at(path, snippet) for t in r.target_ids}


# ---- imports ----------------------------------------------------------------------------------

def test_reexport_through_package_init(graph):
    engine = graph.sites("pkg/core.py#Engine")
    assert site(graph, "pkg/__init__.py", "from .core import Engine", "exact") in engine
    assert site(graph, "app/main.py", "from pkg import Car, Engine", "exact") in engine
    assert site(graph, "app/main.py", "with Engine() as e:", "exact") in engine


def test_star_import_reexport_is_likely(graph):
    car = graph.sites("pkg/vehicles.py#Car")
    assert site(graph, "app/main.py", "from pkg import Car, Engine", "likely") in car
    assert site(graph, "app/main.py", "car = Car()", "likely") in car


def test_relative_and_absolute_imports(graph):
    assert site(graph, "pkg/vehicles.py", "from .core import Engine, make_engine", "exact") in graph.sites("pkg/core.py#make_engine")
    assert site(graph, "pkg/garage.py", "from pkg.vehicles import Car", "exact") in graph.sites("pkg/vehicles.py#Car")


def test_module_alias_and_relative_module_import(graph):
    assert site(graph, "pkg/garage.py", "util.helper()", "exact") in graph.sites("pkg/util.py#helper")
    assert site(graph, "pkg/garage.py", "core.make_engine().stop()", "exact") in graph.sites("pkg/core.py#make_engine")


def test_import_of_a_dotted_module_binds_its_package(graph):
    # `import pkg.fast` binds pkg; the stub beside fast.py declares the same function
    assert site(graph, "app/main.py", "pkg.fast.speed()", "exact") in graph.sites("pkg/fast.py#speed")
    assert site(graph, "app/main.py", "pkg.fast.speed()", "exact") in graph.sites("pkg/fast.pyi#speed")


def test_absolute_import_names_its_module_in_full(graph):
    # `import json` in pkg/util.py is the standard library, not pkg/json.py
    assert graph.sites("pkg/json.py#dumps") == set()


def test_import_inside_a_function_binds_there_only(graph):
    build = graph.sites("pkg/core.py#build")
    assert site(graph, "app/main.py", "from pkg.core import build as make", "exact") in build
    assert site(graph, "app/main.py", "make().ignite()", "exact") in build
    assert not any(path == "app/main.py" and line == graph.line("app/main.py", "make()") for path, line, _ in build)


# ---- scopes -----------------------------------------------------------------------------------

def test_parameters_shadow_module_names(graph):
    helper = graph.sites("pkg/util.py#helper")
    assert (("app/main.py", graph.line("app/main.py", "helper()"), "exact")) not in helper
    assert not any(line == graph.line("app/main.py", "run(helper=helper)") for _, line, _ in helper)
    make_engine = graph.sites("pkg/core.py#make_engine")
    assert not any(line == graph.line("pkg/vehicles.py", "make_engine()") for path, line, _ in make_engine if path == "pkg/vehicles.py")


def test_keyword_names_are_no_references(graph):
    # `run(helper=helper)`: the keyword is a name of run's, the value is the local parameter
    assert targets_at(graph, "app/main.py", "run(helper=helper)") == {"app/main.py#run"}


# ---- members through the receiver ------------------------------------------------------------

def test_self_cls_and_super(graph):
    assert site(graph, "pkg/vehicles.py", "self.ready()", "exact") in graph.sites("pkg/vehicles.py#Vehicle.ready")
    assert site(graph, "pkg/vehicles.py", "return cls.create()", "exact") in graph.sites("pkg/vehicles.py#Vehicle.create")
    assert site(graph, "pkg/vehicles.py", "super().start()", "exact") in graph.sites("pkg/vehicles.py#Vehicle.start")


def test_method_inherited_from_a_base_class(graph):
    assert site(graph, "app/main.py", "car.ready()", "likely") in graph.sites("pkg/vehicles.py#Vehicle.ready")
    assert targets_at(graph, "app/main.py", "car.start()") == {"pkg/vehicles.py#Car.start"}


def test_instance_attributes_assigned_in_init(graph):
    assert site(graph, "pkg/vehicles.py", "self.backup.stop()", "likely") in graph.sites("pkg/core.py#Engine.stop")
    # `self.engine = engine or make_engine()`: the parameter's annotation and the function's return type
    assert site(graph, "pkg/vehicles.py", "self.engine.ignite()", "likely") in graph.sites("pkg/core.py#Engine.ignite")


def test_annotations_type_their_variables(graph):
    stop = graph.sites("pkg/core.py#Engine.stop")
    assert site(graph, "pkg/vehicles.py", "engine.stop()", "likely") in stop  # `Engine | None`
    ignite = graph.sites("pkg/core.py#Engine.ignite")
    assert site(graph, "app/main.py", "car.spare.ignite()", "likely") in ignite  # class body `spare: "Engine"`
    assert site(graph, "app/main.py", "default_engine.ignite()", "likely") in ignite  # module variable, imported


def test_string_annotations_are_type_references(graph):
    assert site(graph, "pkg/vehicles.py", 'spare: "Engine"', "exact") in graph.sites("pkg/core.py#Engine")


def test_return_types_properties_and_chains(graph):
    assert site(graph, "pkg/garage.py", "self.first().start()", "likely") in graph.sites("pkg/vehicles.py#Car.start")
    assert site(graph, "pkg/garage.py", "self.first().motor.ignite()", "likely") in graph.sites("pkg/vehicles.py#Car.motor")
    assert site(graph, "pkg/garage.py", "self.first().motor.ignite()", "likely") in graph.sites("pkg/core.py#Engine.ignite")
    assert site(graph, "pkg/garage.py", "core.make_engine().stop()", "likely") in graph.sites("pkg/core.py#Engine.stop")
    # un-annotated `return Engine()`
    assert site(graph, "app/main.py", "make().ignite()", "likely") in graph.sites("pkg/core.py#Engine.ignite")


def test_with_statement_binds_its_value(graph):
    assert site(graph, "app/main.py", "e.stop()", "likely") in graph.sites("pkg/core.py#Engine.stop")


def test_decorators_and_what_they_make_of_a_function(graph):
    assert site(graph, "app/main.py", "@register", "exact") in graph.sites("pkg/util.py#register")
    assert site(graph, "app/main.py", "@group()", "exact") in graph.sites("pkg/util.py#group")
    # `@group() def cli` makes cli a Group
    assert site(graph, "app/main.py", "@cli.command()", "exact") in graph.sites("pkg/util.py#Group.command")


# ---- receivers that are something else --------------------------------------------------------

def test_no_guess_on_literals_containers_or_known_classes(graph):
    pops = graph.sites("pkg/util.py#Stack.pop")
    assert pops == {site(graph, "app/main.py", "Stack().pop()", "exact")}  # not names.pop(), not self.cars.pop()


def test_name_only_when_nothing_is_known_about_the_receiver(graph):
    assert site(graph, "app/main.py", "thing.stop()", "name-only") in graph.sites("pkg/core.py#Engine.stop")


def test_local_variable_reads_are_not_reported(graph):
    assert all(r.confidence in ("exact", "likely", "name-only") for r in graph.references)
    assert not any(r.name in ("car", "names", "thing", "e") for r in graph.references)


def test_a_star_import_chain_deeper_than_the_stack_leaves_references_unresolved(tmp_path):
    """site-packages has webs of `from x import *` hundreds of modules deep: resolving a name through them
    ran out of Python's stack and ended the index run. The reference stays unresolved; the others resolve."""
    depth = 400
    pkg = tmp_path / "deep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(depth):
        nxt = f"from deep.m{i + 1} import *\n" if i + 1 < depth else "def bottom():\n    return 1\n"
        (pkg / f"m{i}.py").write_text(nxt)
    (tmp_path / "other.py").write_text("def missing_name():\n    return 2\n")  # a name that exists, not down the chain
    (tmp_path / "use.py").write_text("from deep.m0 import *\nfrom deep.m399 import bottom as b\n\n\n"
                                     "def main():\n    missing_name()\n    b()\n")
    (pkg / "m0.pyi").write_text("def missing_name() -> int: ...\n")  # a stub twin: its code module is asked too
    graph = Graph(tmp_path)
    calls = {r.name: r for r in graph.references if r.path == "use.py" and r.kind == "call"}
    assert "missing_name" not in calls  # not found (and not a crash)
    assert calls["b"].target_ids == (graph.symbol_ids["deep/m399.py#bottom"],)


def test_a_web_of_star_imports_is_searched_once_per_name(tmp_path, monkeypatch):
    """Modules that star-import each other in cycles (site-packages): answers met in a cycle are not kept,
    so looking a name up through the web walked every path of it, for hours. A name no module of the web
    has is now refused at once, and one that is there is still found."""
    import codeqa.indexing.graph.resolve as resolve

    size = 24
    pkg = tmp_path / "web"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(size):
        stars = "".join(f"from web.m{(i + k) % size} import *\n" for k in (1, 2, 3))
        body = "def found_here():\n    return 1\n" if i == 17 else ""
        (pkg / f"m{i}.py").write_text(stars + body)
    (tmp_path / "elsewhere.py").write_text("def not_in_the_web():\n    return 2\n")
    (tmp_path / "use.py").write_text("from web.m0 import *\n\n\ndef main():\n    not_in_the_web()\n    found_here()\n")
    calls = []
    real = resolve._Resolver._export
    monkeypatch.setattr(resolve._Resolver, "_export", lambda self, path, name, *rest: calls.append(path) or real(self, path, name, *rest))
    graph = Graph(tmp_path)
    refs = {r.name: r for r in graph.references if r.path == "use.py" and r.kind == "call"}
    assert "not_in_the_web" not in refs
    assert refs["found_here"].target_ids == (graph.symbol_ids["web/m17.py#found_here"],)
    assert len(calls) < 20 * size  # without the check: every path through the web, millions of calls


@pytest.mark.parametrize("providers, resolved", [(3, True), (17, False)])
def test_a_name_declared_all_over_a_web_is_left_unresolved_there(tmp_path, providers, resolved):
    """A C++ include web (torch/include: thousands of headers) declares names such as Tensor in hundreds
    of files: joining them all for every scope of the web took more than 10 minutes on site-packages,
    and a reference to hundreds of declarations says nothing. Past WEB_PROVIDERS_MAX it stays unresolved."""
    from codeqa.indexing.graph.resolve import WEB_PROVIDERS_MAX

    assert 3 <= WEB_PROVIDERS_MAX < 17
    size = 20
    pkg = tmp_path / "web"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(size):
        stars = "".join(f"from web.m{(i + k) % size} import *\n" for k in (1, 2))
        body = "\n\ndef common():\n    return 1\n" if i < providers else ""
        (pkg / f"m{i}.py").write_text(stars + body)
    (tmp_path / "use.py").write_text("from web.m19 import *\n\n\ndef main():\n    common()\n")
    graph = Graph(tmp_path)
    refs = [r for r in graph.references if r.path == "use.py" and r.name == "common"]
    assert bool(refs) == resolved
    if resolved:
        assert len(refs[0].target_ids) == providers
