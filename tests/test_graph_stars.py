"""StarWebs.closure against a walk star by star, on random webs of star imports."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from codeqa.indexing.graph.stars import StarWebs

PASSES = SimpleNamespace(reexports=True, imports_are_transitive=False)
STOPS = SimpleNamespace(reexports=False, imports_are_transitive=False)


def _walk(stars, files_of, language, scope):
    """The plain definition: follow every star, and the stars of each file reached whose language passes them on."""
    seen, todo = set(), [scope]
    while todo:
        current = todo.pop()
        for star in stars.get(current, ()):
            for f in files_of[star.module]:
                if f not in seen:
                    seen.add(f)
                    if language(f) is PASSES:
                        todo.append(f)
    return seen


@pytest.mark.parametrize("seed", range(40))
def test_closures_of_every_scope_match_a_walk_star_by_star(seed):
    rng = random.Random(seed)
    files = [f"f{i}.py" for i in range(rng.randint(2, 40))]
    files_of = {f"m{i}": rng.sample(files, rng.randint(0, 2)) for i in range(len(files))}
    stops = set(rng.sample(files, rng.randint(0, len(files) // 3)))
    scopes = files + [f"{f}#func@1" for f in rng.sample(files, 3 if len(files) > 3 else 1)]
    stars = {}
    for scope in scopes:
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            stars.setdefault(scope, []).append(SimpleNamespace(module=rng.choice(list(files_of)), path=scope.split("#")[0]))
    language = lambda f: STOPS if f in stops else PASSES  # noqa: E731
    names = ["a", "b", "c", "d"]
    top_level = {f: {n: [] for n in rng.sample(names, rng.randint(0, 2))} for f in files}
    imports = {(rng.choice(scopes), rng.choice(names)): [] for _ in range(len(files) // 2)}
    facts = {(rng.choice(scopes), rng.choice(names)): [] for _ in range(len(files) // 3)}
    index = SimpleNamespace(files_for_module=lambda module, importer: files_of[module], top_level=top_level)
    webs = StarWebs(index, stars, imports, facts, language, lambda star: star.module)
    for scope in rng.sample(scopes, len(scopes)):  # asked in any order: closures found on the way are reused
        assert webs.closure(scope) == _walk(stars, files_of, language, scope), scope
        for name in names:  # the files of the web that define, import or assign the name, sorted
            assert list(webs.providers(scope, name)) == sorted(f for f in webs.closure(scope) if name in top_level[f]
                                                               or (f, name) in imports or (f, name) in facts)
    closures = [webs.closure(scope) for scope in scopes]  # one object per set of files: the resolver notes it by identity
    assert len({id(c) for c in closures}) == len(set(closures))
