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


def test_scala_companions_renamed_imports_extensions_and_packages():
    symbols = symbols_by_qualified_name("scala")
    assert symbols["Listener"].kind == "trait"
    assert symbols["Inventory.describe"].kind == "method"  # extension (inventory: Inventory) def describe
    main = "com/acme/app/Main.scala"
    renamed = one("scala", main, 3, "Item", kind="import")  # import com.acme.inventory.{Inventory, Item => Sku}
    assert (renamed.module, renamed.alias, targets(renamed)) == ("com.acme.inventory", "Sku", ["com/acme/inventory/Item.scala:Item"])
    assert targets(one("scala", main, 7, "Sku")) == ["com/acme/inventory/Item.scala:Item"]
    companion = one("scala", main, 12, "empty")  # a method of the companion object
    assert (companion.confidence, targets(companion)) == ("exact", ["com/acme/inventory/Inventory.scala:Inventory.empty"])
    returned = one("scala", main, 14, "take")  # first = inventory.add(...): add's declared result is Item
    assert targets(returned) == ["com/acme/inventory/Item.scala:Item.take"]
    assert targets(one("scala", main, 17, "total")) == ["com/acme/inventory/Inventory.scala:Inventory.total"]
    assert not [r for r in refs("scala", main, "main") if r.line == 20]  # the parameter, not the method
    same_package = one("scala", "com/acme/inventory/Inventory.scala", 10, "Item")
    assert (same_package.kind, same_package.confidence) == ("instantiation", "likely")
