"""Groovy over the sample in tests/fixtures/languages/groovy/ (the golden map covers every line; these
tests name the facts the language is about) and over small files where tree-sitter-groovy's flat
grammar needs the parse mask (codeqa/languages.py `parse_mask`)."""

from __future__ import annotations

from pathlib import Path

from codeqa.indexing.parse import parse_source
from codeqa.types import SourceFile
from test_languages import one, refs, symbols_by_qualified_name, targets

MAIN = "com/acme/app/Main.groovy"
INVENTORY = "com/acme/inventory/Inventory.groovy"


def parse(text: str):
    file = SourceFile(path="x/Shop.groovy", abs_path=Path("/nonexistent/x/Shop.groovy"), language="groovy",
                      size=len(text), sha256="0")
    return parse_source(file, text)[0]


def test_groovy_classes_traits_closures_imports_and_untyped_variables():
    symbols = symbols_by_qualified_name("groovy")
    assert symbols["Describable"].kind == "trait" and symbols["Listener"].kind == "interface"
    assert symbols["Inventory.Zone"].kind == "enum"
    assert symbols["Inventory.report"].kind == "method"  # def report = { String title -> ... } in a class
    assert symbols["Item.Item"].kind == "method"  # a constructor
    # the doc comment above `@CompileStatic` is the class's; a method ends on its `}`, not the blank line after
    assert symbols["Inventory"].docstring == "Items in one warehouse."
    assert (symbols["Inventory.total"].start_line, symbols["Inventory.total"].end_line) == (21, 23)
    aliased = one("groovy", MAIN, 4, "Item", kind="import")  # import com.acme.inventory.Item as Sku
    assert (aliased.module, aliased.alias, aliased.confidence) == ("com.acme.inventory", "Sku", "exact")
    assert targets(one("groovy", MAIN, 8, "Sku")) == ["com/acme/inventory/Item.groovy:Item"]
    # def inventory = Inventory.empty(): `static Inventory empty()` declares what it returns
    assert targets(one("groovy", MAIN, 14, "add")) == ["com/acme/inventory/Inventory.groovy:Inventory.add"]
    # def first = inventory.add(...): add's declared result is Item
    assert targets(one("groovy", MAIN, 15, "take")) == ["com/acme/inventory/Item.groovy:Item.take"]
    assert targets(one("groovy", MAIN, 17, "add")) == ["com/acme/inventory/Inventory.groovy:Inventory.add"]  # command call
    # import com.acme.inventory.*: Listener is found through the star import
    assert targets(one("groovy", MAIN, 7, "Listener")) == ["com/acme/inventory/Item.groovy:Listener"]
    created = one("groovy", INVENTORY, 14, "Item")  # def item = new Item(sku, quantity)
    assert (created.kind, created.assigned) == ("instantiation", "item")
    own = one("groovy", INVENTORY, 17, "notifyAll")  # a bare call in a class: the class's own method
    assert (own.confidence, targets(own)) == ("exact", ["com/acme/inventory/Inventory.groovy:Inventory.notifyAll"])
    # items is a java.util.List: items.add() is not our Inventory.add
    assert not [r for r in refs("groovy", INVENTORY, "add") if r.kind == "call"]


def test_groovy_syntax_the_grammar_lacks_does_not_hide_the_class_after_it():
    # a star import's `*` used to swallow the next lines into an ERROR node: the class was lost
    parsed = parse("import a.b.*\nimport c.*\n\nclass Cart {\n"
                   "    def total(xs) { xs.size() > 2 ? xs[0] * 3 : xs?.first() ?: 0 }\n"
                   "    def check(Map params = [:]) { 'a b'.bytes; params.name =~ /^it's.*$/ }\n"
                   "    @SuppressWarnings(['unchecked'])\n"
                   "    def 'a spock feature'() { expect: total([1]) % 2 == 1 }\n}\n")
    assert parsed.error is None
    assert [s.qualified_name for s in parsed.symbols] == [
        "Cart", "Cart.total", "Cart.check", "Cart.'a spock feature'"]
    star = [r for r in parsed.references if r.kind == "import" and r.module == "a.b"]
    assert [r.name for r in star] == ["*"]  # the masked `*` is still read from the file


def test_groovy_receiver_chains_are_read_whole():
    parsed = parse("class Shop {\n    def run() {\n        this.repo.store.save(1)\n        repo.find(2)\n    }\n}\n")
    receivers = {r.name: r.receiver for r in parsed.references if r.kind == "call"}
    assert receivers == {"save": "this.repo.store", "find": "repo"}
