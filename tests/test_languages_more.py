"""Solidity, Julia and R over the samples in tests/fixtures/languages/ (the golden map covers every
line; these tests name the facts each language is about)."""

from __future__ import annotations

from test_languages import one, refs, symbols_by_qualified_name, targets


def test_solidity_contracts_libraries_events_and_file_imports():
    symbols = symbols_by_qualified_name("solidity")
    assert symbols["Math"].kind == "module" and symbols["Math.min"].kind == "function"  # a library
    assert symbols["IERC20"].kind == "interface" and symbols["IERC20.transfer"].kind == "method"
    assert symbols["Owned.onlyOwner"].kind == "method"  # a modifier
    assert symbols["Vault.Withdrawn"].kind == "type" and symbols["Owned.NotOwner"].kind == "type"  # event, error
    assert symbols["Vault"].docstring == "Holds one token for its owner."
    vault = "contracts/Vault.sol"
    renamed = one("solidity", vault, 5, "Math", kind="import")  # import {Math as M} from "./utils/Math.sol";
    assert (renamed.module, renamed.alias, targets(renamed)) == ("./utils/Math.sol", "M", ["contracts/utils/Math.sol:Math"])
    assert targets(one("solidity", vault, 36, "mulDiv")) == ["contracts/utils/Math.sol:Math.mulDiv"]  # M.mulDiv(...)
    # import "./token/IERC20.sol"; makes IERC20 visible: a state variable of that type types token.transfer()
    transfer = one("solidity", vault, 37, "transfer")
    assert (transfer.confidence, targets(transfer)) == ("likely", ["contracts/token/IERC20.sol:IERC20.transfer"])
    inherited = one("solidity", vault, 33, "onlyOwner")  # a modifier of the base contract
    assert (inherited.confidence, targets(inherited)) == ("exact", ["contracts/Vault.sol:Owned.onlyOwner"])
    emitted = one("solidity", vault, 38, "Withdrawn")
    assert (emitted.kind, targets(emitted)) == ("instantiation", ["contracts/Vault.sol:Vault.Withdrawn"])
    reverted = one("solidity", vault, 13, "NotOwner")
    assert (reverted.kind, targets(reverted)) == ("instantiation", ["contracts/Vault.sol:Owned.NotOwner"])


def test_julia_includes_modules_docstrings_and_locals():
    symbols = symbols_by_qualified_name("julia")
    assert symbols["Shop.checkout"].docstring.startswith("checkout(cart)")  # the string above the function
    assert symbols["Item"].docstring == "An item of the shop."
    assert symbols["Product"].kind == "type" and symbols["Tax"].kind == "module"
    assert "Cart" in symbols and symbols["Cart"].kind == "struct"  # `Cart() = ...` is its outer constructor, no symbol
    shop = "src/Shop.jl"
    included = one("julia", shop, 17, "total")  # include("cart.jl")
    assert (included.confidence, targets(included)) == ("likely", ["src/cart.jl:total"])
    same_module = one("julia", shop, 19, "Receipt")  # defined further down in module Shop
    assert (same_module.kind, same_module.confidence, targets(same_module)) == (
        "instantiation", "exact", ["src/Shop.jl:Shop.Receipt"])
    assert targets(one("julia", "src/cart.jl", 13, "with_tax")) == ["src/item.jl:Tax.with_tax"]  # Tax.with_tax(...)


def test_julia_parameters_and_loop_variables_are_no_references():
    # reprice(cart::Cart, price) = [price(it) for it in cart.items]: the parameter, not the function price
    assert [r.line for r in refs("julia", "src/cart.jl", "price")] == [13]


def test_r_functions_classes_source_and_locals():
    symbols = symbols_by_qualified_name("r")
    assert symbols["price"].docstring.startswith("The price of an item in cents.")  # roxygen #' lines
    assert symbols["Person"].kind == "class" and symbols["Person.greet"].kind == "method"  # setRefClass methods
    script = "scripts/report.R"
    sourced = one("r", script, 7, "total")  # source("../R/cart.R")
    assert (sourced.confidence, targets(sourced)) == ("likely", ["R/cart.R:total"])
    assert targets(one("r", script, 6, "Person")) == ["R/item.R:Person"]  # Person$new(...)
    passed = one("r", "R/cart.R", 7, "price")  # vapply(cart$items, price, numeric(1)): a function passed by name
    assert (passed.kind, targets(passed)) == ("attribute", ["R/item.R:price"])
    # reprice <- function(cart, price) lapply(cart$items, price): the parameter, not the function price
    assert [r.line for r in refs("r", "R/cart.R", "price")] == [7]
