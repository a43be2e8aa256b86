"""Swift and Dart over the samples in tests/fixtures/languages/ (the golden map covers every line; these
tests name the facts each language is about)."""

from __future__ import annotations

from test_languages import one, refs, symbols_by_qualified_name, targets

from codeqa.graph.index import module_folder


def test_swift_kinds_extensions_and_initializers():
    symbols = symbols_by_qualified_name("swift")
    assert symbols["Item"].kind == "struct"
    assert symbols["Listener"].kind == "interface"  # a protocol
    assert symbols["Inventory.Zone"].kind == "enum"
    assert symbols["Inventory.init"].kind == "method"
    assert symbols["Listener.onChange"].kind == "method"  # a protocol requirement
    described = symbols["Inventory.describe"]  # written in an extension in another file
    assert (described.kind, described.path) == ("method", "Sources/Inventory/Inventory+Report.swift")
    assert "Inventory+Report.swift" not in {s.path for s in symbols.values() if s.name == "Inventory"}  # no symbol


def test_swift_a_module_sees_its_own_names_without_imports():
    # Sources/Inventory/Inventory.swift names Item of Sources/Inventory/Model/Item.swift: one module
    item = one("swift", "Sources/Inventory/Inventory.swift", 16, "Item")
    assert (item.kind, item.confidence, targets(item)) == ("instantiation", "likely", ["Sources/Inventory/Model/Item.swift:Item"])
    assert module_folder("Sources/Inventory/Model/Item.swift", ("Sources", "Tests")) == "Sources/Inventory"
    assert module_folder("App/Model/Item.swift", ("Sources", "Tests")) is None


def test_swift_imports_name_modules_and_receivers_follow_types():
    main = "Sources/App/main.swift"
    assert not refs("swift", main, "Foundation")  # another project's module
    assert targets(one("swift", main, 13, "take")) == ["Sources/Inventory/Model/Item.swift:Item.take"]  # add() -> Item
    extension = one("swift", main, 14, "describe")
    assert targets(extension) == ["Sources/Inventory/Inventory+Report.swift:Inventory.describe"]
    tested = one("swift", "Tests/InventoryTests/InventoryTests.swift", 7, "add")  # @testable import Inventory
    assert targets(tested) == ["Sources/Inventory/Inventory.swift:Inventory.add"]
    assert not [r for r in refs("swift", main, "run") if r.line == 20]  # the parameter, not the function
