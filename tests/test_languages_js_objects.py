"""JavaScript/TypeScript object literals that hold methods (a Vue Options API component's
`export default { methods: { show() {} } }` or `export default defineComponent({...})`, `const api =
{ get() {} }`): their methods are members of the object, so `this.show()` inside a component is its own
`show` and never another component's, and a bare `show` is not one of them; a function declared inside
a method (`const f = () => {}`) is still found from its scope, while a parameter or `let` named like a
method is a local variable."""

from __future__ import annotations

from pathlib import Path

from codeqa.config import Settings
from codeqa.indexing.walk import walk_repository
from codeqa.indexing.graph.stage import graph_stage
from codeqa.indexing.parse_cache import ParseCache

BUTTON = """\
<template><button @click="onClick"><slot /></button></template>
<script>
import { focus } from '@outside/utils';
import BaseButton from './BaseButton.vue';

export default {
    name: 'Button',
    extends: BaseButton,
    props: {
        value: null
    },
    watch: {
        value(newValue) {
            this.show();
        }
    },
    methods: {
        onClick(event) {
            const target = (e) => e.currentTarget;
            this.show();
            this.reset();
            focus(target(event));
            return this.value;
        },
        show() {
            let data = this.value;
            return data;
        },
        data() {
            return {};
        },
        focus() {
            return null;
        }
    }
};
</script>
"""

DIALOG = """\
<script lang="ts">
import { defineComponent } from 'vue';

export default defineComponent({
    methods: {
        show() {
            this.visible = true;
        },
        hide() {
            this.show();
        }
    }
});
</script>
"""

BASE_BUTTON = """\
<script>
export default {
    methods: {
        reset() {
            return 0;
        }
    }
};
</script>
"""

MAIN = """\
import api from './api.js';

export function open() {
    show();
    return api.get('/');
}
"""

API = """\
const api = {
    get(url) {
        return url;
    },
    post(url) {
        return this.get(url);
    }
};

export default api;
"""

TYPED = """\
export function fromHandler(addHandler: (handler: () => void) => void): void {
    const handler = () => {};
    addHandler(handler);
}
"""


def _graph(tmp_path: Path, files: dict[str, str]):
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    walked = walk_repository(root).files
    cache = ParseCache(tmp_path / "parsed.sqlite")
    try:
        _, parsed, update = graph_stage(walked, walked, Settings(), cache, "test")
    finally:
        cache.close()
    symbols = {(s.path, s.qualified_name): s for pf in parsed for s in pf.symbols}
    targets = {(r.path, r.line, r.name): {(s.path, s.qualified_name) for s in map(by_id(symbols).get, r.target_ids) if s}
               for r in update.references}
    return symbols, targets


def by_id(symbols):
    return {s.id: s for s in symbols.values()}


FILES = {"Button.vue": BUTTON, "Dialog.vue": DIALOG, "BaseButton.vue": BASE_BUTTON, "main.js": MAIN,
         "api.js": API, "typed.ts": TYPED}


def test_component_methods_are_members_of_the_component(tmp_path):
    symbols, targets = _graph(tmp_path, FILES)
    assert symbols[("Button.vue", "default")].kind == "object"
    assert symbols[("Button.vue", "default.show")].kind == "method"
    assert symbols[("api.js", "api.get")].kind == "method"
    # this.show() is the component's own show, never Dialog's
    assert targets[("Button.vue", 20, "show")] == {("Button.vue", "default.show")}
    assert targets[("Dialog.vue", 10, "show")] == {("Dialog.vue", "default.show")}  # defineComponent({...}), TypeScript
    # in a watcher, `this` is the component too
    assert targets[("Button.vue", 14, "show")] == {("Button.vue", "default.show")}
    # a method of the base the component extends; the default import is that file's component
    assert targets[("Button.vue", 21, "reset")] == {("BaseButton.vue", "default.reset")}
    assert targets[("Button.vue", 8, "BaseButton")] == {("BaseButton.vue", "default")}
    # this.get() in an object assigned to a variable; api.get() through its default import
    assert targets[("api.js", 6, "get")] == {("api.js", "api.get")}
    assert targets[("main.js", 5, "get")] == {("api.js", "api.get")}


def test_no_bare_name_reaches_an_object_method(tmp_path):
    _, targets = _graph(tmp_path, FILES)
    assert ("main.js", 4, "show") not in targets  # a bare show() names no component's method
    assert not targets.get(("Button.vue", 22, "focus"))  # the imported focus, not the method focus()
    # `this.value` reads the prop, not the watcher `value()`
    assert not targets.get(("Button.vue", 23, "value"))
    # a local variable named like the method data()
    assert ("Button.vue", 27, "data") not in targets


def test_functions_declared_inside_a_method_resolve(tmp_path):
    _, targets = _graph(tmp_path, FILES)
    assert targets[("Button.vue", 22, "target")] == {("Button.vue", "default.onClick.target")}
    # a parameter of a function type binds in that type only
    assert targets[("typed.ts", 3, "handler")] == {("typed.ts", "fromHandler.handler")}


# From the js-locals branch: parameters (plain, destructured, rest), `let`, loop variables and caught
# errors are local variables; a module-level function of the same name is found again outside them.
LOCALS = """\
import { options } from 'some-outside-package';

export default {
    data() {
        return { value: [] };
    },
    computed: {
        options() {
            return options(this.value);
        }
    },
    methods: {
        sort() {
            let data = this.value;
            data.sort();
            return this.data();
        }
    }
};

function sort(list) {
    return list;
}

export function run(options, [first], { key: picked }, ...rest) {
    for (const item of options) { item.go(); }
    try { picked(first, rest); } catch (sort) { sort.go(); }
    return sort(options);
}
"""

LOCALS_TYPED = """\
function data(): number[] { return []; }

export function total(data: number[], options?: string): number {
    return data.length + (options ? 1 : 0);
}

export const keep = (data: number[]) => data;
"""


def test_parameters_and_local_bindings_are_no_references(tmp_path):
    _, targets = _graph(tmp_path, {"component.js": LOCALS, "typed.ts": LOCALS_TYPED})
    hits = {key for key, found in targets.items() if found}
    assert ("component.js", 9, "options") not in hits  # the outside import, not the computed options()
    assert ("component.js", 14, "data") not in hits  # let data = this.value
    assert ("component.js", 15, "data") not in hits  # data.sort(): the variable
    assert ("component.js", 15, "sort") not in hits  # an array's sort(), not methods.sort
    assert targets[("component.js", 16, "data")] == {("component.js", "default.data")}  # this.data()
    assert ("component.js", 26, "options") not in hits  # a parameter, read in a for-of
    assert ("component.js", 27, "sort") not in hits  # a caught error
    assert targets[("component.js", 28, "sort")] == {("component.js", "sort")}  # the module's function again
    assert ("typed.ts", 4, "data") not in hits  # a TypeScript parameter
    assert ("typed.ts", 7, "data") not in hits  # an arrow function's parameter
