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


def test_forget_drops_the_local_answers_of_one_file_and_asking_again_gives_the_same():
    memo = Memo(local_kinds=("name",))
    calls = []

    def work(tag: str) -> str:
        calls.append(tag)
        memo.note(("n", tag))
        return tag.upper()

    memo.begin("a.py")
    assert memo.value(("name", "a.py#f@1", "x"), None, work, "x") == "X"
    assert memo.value(("name", "b.py", "y"), None, work, "y") == "Y"  # another file's scope
    assert memo.value(("export", "a.py", "z"), None, work, "z") == "Z"  # not a local kind
    before = memo.reads()
    memo.forget("a.py")
    assert set(memo.values) == {("name", "b.py", "y"), ("export", "a.py", "z")}
    memo.begin("a.py")
    assert memo.value(("name", "a.py#f@1", "x"), None, work, "x") == "X"
    assert memo.value(("name", "b.py", "y"), None, work, "y") == "Y"
    assert memo.value(("export", "a.py", "z"), None, work, "z") == "Z"
    assert calls == ["x", "y", "z", "x"] and memo.reads() == before
