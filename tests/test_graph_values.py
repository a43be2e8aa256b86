"""Memo's record of what answers read: kept answers share their reads, frozen once kept."""

from __future__ import annotations

from codeqa.indexing.graph.values import Memo, Reads


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


def test_a_popular_part_keeps_its_flattened_reads_and_flattens_give_the_same():
    from codeqa.indexing.graph import values

    def web(prefix: str, width: int) -> Reads:  # a part over `width` leaves, one atom each, with a shared leaf
        shared_leaf = Reads(["shared"]).shared()
        top = Reads([prefix])
        for i in range(width):
            leaf = Reads([f"{prefix}{i}"])
            leaf.add(shared_leaf)
            top.add(leaf.shared())
        return top.shared()

    popular, small = web("p", values.FLAT_MIN_PARTS), web("s", 2)
    flats = values.Flats(atoms=1000)
    expected = set()
    for n in range(values.FLAT_AFTER + 2):
        root = Reads([f"file{n}"])
        root.add(popular)
        root.add(small)
        expected = {f"file{n}", "p", "s", "shared", *(f"p{i}" for i in range(values.FLAT_MIN_PARTS)), "s0", "s1"}
        assert root.flatten(flats) == expected == root.flatten()
        assert (popular.flat is not None) == (n + 1 >= values.FLAT_AFTER)  # met often enough, and wide enough
    assert popular.flat == expected - {f"file{values.FLAT_AFTER + 1}", "s", "s0", "s1"}
    assert small.flat is None  # too little below it to be worth a set of its own
    assert flats.left == 1000 - len(popular.flat)
    spent = values.Flats(atoms=0)  # no budget left: nothing kept, the same result
    other = web("q", values.FLAT_MIN_PARTS)
    for _ in range(values.FLAT_AFTER + 1):
        root = Reads(["f"])
        root.add(other)
        assert root.flatten(spent) == root.flatten()
    assert other.flat is None


def test_the_reads_of_an_answer_not_kept_join_the_answer_under_way():
    """An answer that met a cycle is not kept, and is worked out again each time it is asked: its reads
    become the asking answer's own, not a part of their own each time (site-packages' import cycles
    left 7.2M parts for 1.1M kept answers)."""
    memo = Memo()

    def a() -> str:
        memo.note("a.py")
        return "a" + memo.value(("k", "b"), "", b)

    def b() -> str:
        memo.note(("n", "B"))
        return "b" + memo.value(("k", "a"), "", a)  # back to a: a cycle, so neither a nor b is kept

    def root() -> str:
        memo.note("root.py")
        return memo.value(("k", "a"), "", a)

    memo.begin("file.py")
    assert memo.value(("k", "root"), "", root) == "ab"
    assert set(memo.values) == {("k", "root")}
    kept = memo.values[("k", "root")][1]
    assert set(kept.atoms) == {"root.py", "a.py", ("n", "B")} and kept.parts == ()
    assert memo.reads() == {"file.py", "root.py", "a.py", ("n", "B")}


def test_reads_that_take_in_a_wide_set_of_files_are_that_set_alone():
    """A file whose resolution read a star web or folder wider than `wide` is resolved again after any
    change (incremental.WEB_FILES_KEPT): its reads are that set alone, however deep the answer that read
    it lies, kept or met in a cycle, and without flattening the rest."""
    wide, narrow = frozenset({"w1.py", "w2.py", "w3.py"}), frozenset({"n1.py", "n2.py"})
    memo = Memo(wide=2)

    def web() -> str:
        memo.note_files(wide)
        memo.note(("e", "x"))
        return "web"

    def folder() -> str:
        memo.note_files(narrow)
        return "folder"

    def cyclic() -> str:  # not kept (it meets itself): its reads join the answer under way
        memo.note_files(wide)
        return memo.value(("k", "cyclic"), "", cyclic)

    memo.begin("f.py")
    memo.value(("k", "folder"), "", folder)
    assert memo.reads() == {"f.py", narrow}  # within the limit: flattened as always
    memo.value(("k", "outer"), "", lambda: memo.value(("k", "web"), "", web))
    assert memo.reads() == {wide}
    memo.begin("g.py")
    memo.value(("k", "outer"), "", lambda: "x")  # kept earlier: its reads come with it
    assert memo.reads() == {wide}
    memo.begin("h.py")
    memo.value(("k", "around"), "", cyclic)
    assert memo.reads() == {wide} and ("k", "cyclic") not in memo.values
    assert Memo().reads() == frozenset() and Memo(wide=None).deps.wide is None
    unlimited = Memo()
    unlimited.begin("f.py")
    unlimited.note_files(wide)
    assert unlimited.reads() == {"f.py", wide}
