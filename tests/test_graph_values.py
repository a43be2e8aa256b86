"""Memo's record of what answers read: kept answers share their reads, frozen once kept."""

from __future__ import annotations

from codeqa.graph.values import Memo, Reads


def test_a_kept_answer_keeps_its_reads_frozen_and_its_users_see_them():
    memo = Memo()

    def inner() -> str:
        memo.note(("n", "Foo"))
        memo.note("a.py")
        return "inner"

    def outer() -> str:
        memo.note("b.py")
        return memo.value(("k", "inner"), None, inner) + "+outer"

    memo.begin("c.py")
    assert memo.value(("k", "outer"), None, outer) == "inner+outer"
    assert memo.reads() == {"c.py", "b.py", "a.py", ("n", "Foo")}
    kept = memo.values[("k", "inner")][1]
    # kept: tuples, not a set and a dict (a third of resolution's memory on SQLAlchemy)
    assert isinstance(kept.atoms, tuple) and isinstance(kept.parts, tuple)
    memo.begin()  # asked again from another file: the same reads, from the kept answer
    assert memo.value(("k", "outer"), None, outer) == "inner+outer"
    assert memo.reads() == {"b.py", "a.py", ("n", "Foo")}


def test_reads_of_nothing_or_of_one_part_keep_no_object_of_their_own():
    assert Reads().shared() is None
    part = Reads(["x"]).shared()
    one = Reads()
    one.add(part)
    assert one.shared() is part
    two = Reads()
    two.add(part)
    two.add(Reads(["y"]).shared())
    assert two.shared() is two and two.flatten() == {"x", "y"}
