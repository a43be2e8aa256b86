"""Kotlin, Scala, Swift and Dart over the samples in tests/fixtures/languages/ (the golden map covers
every line; these tests name the facts each language is about)."""

from __future__ import annotations

from test_languages import one, refs, symbols_by_qualified_name, targets


def test_kotlin_companions_extensions_aliases_and_packages():
    symbols = symbols_by_qualified_name("kotlin")
    assert symbols["Inventory.empty"].kind == "method"  # a companion object's function is the class's
    assert symbols["Inventory.describe"].kind == "method"  # an extension function
    assert symbols["Inventory.Zone"].kind == "enum"
    assert symbols["Listener"].kind == "interface"
    assert symbols["Inventory"].docstring == "Items in one warehouse."  # KDoc the grammar puts in the package header
    main = "com/acme/app/Main.kt"
    aliased = one("kotlin", main, 4, "Item", kind="import")  # import com.acme.inventory.Item as Sku
    assert (aliased.module, aliased.alias, aliased.confidence) == ("com.acme.inventory", "Sku", "exact")
    assert targets(one("kotlin", main, 8, "Sku")) == ["com/acme/inventory/Item.kt:Item"]
    companion = one("kotlin", main, 14, "empty")
    assert (companion.confidence, targets(companion)) == ("exact", ["com/acme/inventory/Inventory.kt:Inventory.empty"])
    returned = one("kotlin", main, 16, "take")  # first = inventory.add(...): add's declared result is Item
    assert targets(returned) == ["com/acme/inventory/Item.kt:Item.take"]
    extension = one("kotlin", main, 19, "describe")
    assert targets(extension) == ["com/acme/inventory/Inventory.kt:Inventory.describe"]
    same_package = one("kotlin", "com/acme/inventory/Inventory.kt", 10, "Item")
    assert (same_package.kind, same_package.confidence) == ("instantiation", "likely")
    # items is a MutableList: items.add() is not our Inventory.add
    assert not refs("kotlin", "com/acme/inventory/Inventory.kt", "add")


def test_kotlin_parameters_and_local_vals_are_no_references():
    # fun report(main: String) = println(main): the parameter, not the function main()
    assert not [r for r in refs("kotlin", "com/acme/app/Main.kt", "main") if r.line == 22]
