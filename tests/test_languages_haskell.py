"""Haskell over the sample in tests/fixtures/languages/haskell/ (the golden map covers every line; these
tests name the facts the language is about: modules named in full, equations as one definition,
qualified names, and names that are neither defined nor imported being the Prelude's)."""

from __future__ import annotations

from codeqa.indexing.graph.index import GraphIndex
from test_languages import one, refs, sample, symbols_by_qualified_name, targets

MAIN, CART, ITEM = "app/Main.hs", "src/Shop/Cart.hs", "src/Shop/Item.hs"


def test_a_signature_and_its_equations_are_one_definition_with_its_haddock():
    symbols = symbols_by_qualified_name("haskell")
    discount = [s for pf in sample("haskell")[0] for s in pf.symbols if s.name == "discount"]
    assert [(s.start_line, s.end_line) for s in discount] == [(29, 32)]  # `discount ::` and two equations
    assert discount[0].docstring == "A discount: none on cheap items."
    assert (symbols["weight"].start_line, symbols["weight"].end_line) == (30, 32)
    assert symbols["Shop.Item"].kind == "module" and symbols["Shop.Item"].docstring == "Items a shop sells."
    assert symbols["Item"].docstring == "One thing for sale."  # the first declaration, after the header
    assert symbols["Cart"].docstring == "A cart: items by name."  # the first declaration, after the imports


def test_constructors_fields_and_class_methods_are_names_of_their_module():
    symbols = symbols_by_qualified_name("haskell")
    assert symbols["Priced.cost"].kind == "method" and symbols["Priced.cost"].docstring == "The price in cents."
    assert "Item.Item" not in symbols  # a constructor named like its type is that type
    assert symbols["Unit.Weight"].parent_id == symbols["Unit"].id
    grams = one("haskell", CART, 32, "grams")  # a field of Unit's Weight, imported with Item(..)'s module
    assert targets(grams) == [f"{ITEM}:Unit.Weight.grams"]
    local = one("haskell", ITEM, 22, "itemCents")  # a field read bare in its own module
    assert (local.confidence, targets(local)) == ("exact", [f"{ITEM}:Item.itemCents"])


def test_qualified_names_go_through_the_alias_or_the_module_written_in_full():
    aliased = one("haskell", CART, 25, "price")  # import qualified Shop.Item as I; I.price item
    assert (aliased.confidence, targets(aliased)) == ("exact", [f"{ITEM}:price"])
    full = one("haskell", MAIN, 11, "cost")  # import qualified Shop.Item; Shop.Item.cost c
    assert (full.confidence, targets(full)) == ("exact", [f"{ITEM}:Priced.cost"])
    constructor = one("haskell", CART, 32, "Piece")  # a qualified constructor in a pattern
    assert (constructor.confidence, targets(constructor)) == ("exact", [f"{ITEM}:Unit.Piece"])
    # M.insert, M.empty: Data.Map is another project's module, never our `empty`
    assert not [r for r in refs("haskell", CART, "empty") if r.receiver == "M"]
    assert not refs("haskell", CART, "insert")


def test_a_module_is_its_file_not_a_folder_of_that_name():
    parsed, _ = sample("haskell")
    index = GraphIndex.build(parsed)
    assert index.files_for_module("Shop.Item", MAIN) == [ITEM]
    assert index.files_for_module("Shop", MAIN) == []  # src/Shop/ is a folder, no module Shop
    assert index.files_for_module("Data.Item", MAIN) == []  # no shorter suffix: Item.hs is Shop.Item


def test_open_imports_are_likely_and_other_names_are_the_preludes():
    open_import = one("haskell", MAIN, 9, "add")  # import Shop.Cart
    assert (open_import.confidence, targets(open_import)) == ("likely", [f"{CART}:add"])
    named = one("haskell", CART, 19, "discount")  # import Shop.Item (.., discount)
    assert (named.confidence, targets(named)) == ("exact", [f"{ITEM}:discount"])
    # print, foldl', mapM_: neither defined nor imported from a module of ours
    assert not refs("haskell", MAIN, "print") and not refs("haskell", CART, "foldl'")


def test_parameters_and_where_and_let_bindings_are_locals():
    parsed, _ = sample("haskell")
    cart = next(pf for pf in parsed if pf.file.path == CART)
    names = {(r.line, r.name) for r in cart.references}
    assert (19, "item") not in names and (20, "cheaper") not in names  # a parameter, a let binding
    assert (23, "step") not in names and (25, "acc") not in names  # a where function and its parameter
    main = next(pf for pf in parsed if pf.file.path == MAIN)
    assert not [r for r in main.references if r.name in ("item", "cart", "c", "n")]  # do let, lambda, case
