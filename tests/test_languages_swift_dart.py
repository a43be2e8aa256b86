"""Swift and Dart over the samples in tests/fixtures/languages/ (the golden map covers every line; these
tests name the facts each language is about)."""

from __future__ import annotations

from test_languages import one, project, refs, symbols_by_qualified_name, targets

from codeqa.indexing.graph.index import module_folder


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


def test_dart_members_constructors_extensions_and_mixins():
    symbols = symbols_by_qualified_name("dart")
    add = symbols["Inventory.add"]  # the body is the signature's sibling: the symbol runs to its end
    assert (add.kind, add.start_line, add.end_line) == ("method", 18, 23)
    assert symbols["Inventory.empty"].kind == "method"  # a named constructor
    assert symbols["Inventory.describe"].kind == "method"  # extension Describe on Inventory
    assert symbols["Reporting"].kind == "trait"  # a mixin
    assert symbols["Item.take"].docstring == "Takes some units out of stock."
    mixed_in = one("dart", "lib/inventory.dart", 27, "total")  # Inventory with Reporting
    assert targets(mixed_in) == ["lib/src/report.dart:Reporting.total"]


def test_dart_package_relative_show_and_part_imports():
    main = "bin/main.dart"
    shown = one("dart", main, 4, "Listener", kind="import")  # import 'package:inventory/src/item.dart' show Listener
    assert (shown.module, shown.confidence, targets(shown)) == ("package:inventory/src/item.dart", "exact",
                                                                ["lib/src/item.dart:Listener"])
    # package:inventory/inventory.dart re-exports src/item.dart: add() returns an Item
    assert targets(one("dart", main, 14, "take")) == ["lib/src/item.dart:Item.take"]
    assert targets(one("dart", main, 15, "describe")) == ["lib/inventory.dart:Inventory.describe"]
    assert not refs("dart", main, "min")  # math.min: dart:math is no library of ours
    relative = one("dart", "lib/inventory.dart", 19, "Item")  # import 'src/item.dart'
    assert targets(relative) == ["lib/src/item.dart:Item"]
    part = one("dart", "lib/inventory.dart", 10, "Reporting")  # part 'src/report.dart'
    assert targets(part) == ["lib/src/report.dart:Reporting"]


def test_dart_a_package_import_names_the_package_lib_folder(tmp_path):
    # package:p/src/util.dart is lib/src/util.dart, not the tool/src/util.dart beside it
    for folder in ("lib/src", "tool/src", "bin"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "lib/src/util.dart").write_text("int helper() => 1;\n")
    (tmp_path / "tool/src/util.dart").write_text("int helper() => 2;\n")
    (tmp_path / "bin/main.dart").write_text("import 'package:p/src/util.dart';\n\nvoid main() {\n  helper();\n}\n")
    _, resolved = project(tmp_path)
    call = next(r for r in resolved if r.path == "bin/main.dart" and r.name == "helper")
    assert (call.confidence, targets(call)) == ("likely", ["lib/src/util.dart:helper"])
