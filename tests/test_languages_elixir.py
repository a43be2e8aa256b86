"""Elixir over the sample in tests/fixtures/languages/elixir/ (the golden map covers every line; these
tests name the facts the language is about: modules are global dotted names, not files)."""

from __future__ import annotations

from test_languages import one, refs, sample, symbols_by_qualified_name, targets

CART, ITEM, PRICING = "lib/shop/cart.ex", "lib/shop/item.ex", "lib/shop/pricing.ex"


def test_modules_are_named_in_full_and_own_their_functions():
    symbols = symbols_by_qualified_name("elixir")
    assert symbols["Shop.Cart"].kind == "module" and symbols["Shop.Cart"].docstring == "A shopping cart."
    assert symbols["Shop.Cart.add"].parent_id == symbols["Shop.Cart"].id
    assert symbols["Shop.Pricing.Tax"].parent_id == symbols["Shop.Pricing"].id  # a nested defmodule
    protocol = [s for pf in sample("elixir")[0] for s in pf.symbols if s.qualified_name == "Shop.Priced"]
    assert [s.kind for s in protocol] == ["interface", "module"]  # defprotocol, and its defimpl by the same name
    assert symbols["Shop.Item.new"].docstring == "A new item."  # the doc attribute above the def


def test_aliases_bind_the_last_segment_or_the_as_name():
    grouped = one("elixir", CART, 3, "Pricing", kind="import")  # alias Shop.{Item, Pricing}
    assert (grouped.module, targets(grouped)) == ("Shop", [f"{PRICING}:Shop.Pricing"])
    renamed = one("elixir", CART, 4, "Shop.Pricing.Tax")  # alias Shop.Pricing.Tax, as: T (a nested module)
    assert (renamed.alias, targets(renamed)) == ("T", [f"{PRICING}:Shop.Pricing.Tax"])
    via_as = one("elixir", CART, 15, "apply")  # T.apply()
    assert (via_as.confidence, targets(via_as)) == ("exact", [f"{PRICING}:Shop.Pricing.Tax.apply"])
    via_alias = one("elixir", CART, 18, "new")  # &Item.new(&1, 10)
    assert (via_alias.confidence, targets(via_alias)) == ("exact", [f"{ITEM}:Shop.Item.new"])
    assert targets(one("elixir", CART, 22, "cheapest")) == [f"{PRICING}:Shop.Pricing.cheapest"]


def test_remote_calls_by_full_name_struct_literals_and_module_self():
    full = one("elixir", PRICING, 4, "price")  # Shop.Priced.price(item): no alias needed
    assert set(targets(full)) == {f"{ITEM}:Shop.Priced.price"}
    struct = one("elixir", CART, 11, "Item")  # %Item{} = item
    assert (struct.kind, targets(struct)) == ("instantiation", [f"{ITEM}:Shop.Item"])
    assert targets(one("elixir", CART, 19, "total")) == [f"{CART}:Shop.Cart.total"]  # __MODULE__.total()
    clauses = one("elixir", PRICING, 6, "discount")  # two clauses of one function: one definition
    assert clauses.confidence == "exact" and len(clauses.target_ids) == 2


def test_imports_and_local_calls_and_other_projects_modules():
    imported = one("elixir", CART, 15, "sum")  # import Shop.Pricing, only: [sum: 1]; ... |> sum()
    assert targets(imported) == [f"{PRICING}:Shop.Pricing.sum"]
    local = one("elixir", CART, 12, "log")  # a defp of the same module
    assert (local.confidence, targets(local)) == ("exact", [f"{CART}:Shop.Cart.log"])
    captured = one("elixir", CART, 19, "add")  # &add(&2, &1)
    assert targets(captured) == [f"{CART}:Shop.Cart.add"]
    # Logger.info, Enum.map, Float.round: modules none of ours, never guessed by a function's name
    assert not refs("elixir", CART, "info") and not refs("elixir", ITEM, "round")
    # item.price is a field of a map, not the protocol function price/1
    assert not [r for r in refs("elixir", ITEM, "price") if r.line == 21]
