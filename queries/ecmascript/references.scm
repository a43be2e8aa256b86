; References common to JavaScript and TypeScript (both inherit this file; it is no language of
; its own). The name node is captured as @name.reference.<kind>; @receiver is the object of
; `obj.name`, @module the module string of an import, @alias the local name it is bound to,
; @assigned the variable a `new Foo()` / `foo()` result is stored in.

; import Foo from "./m": a default import, written as name = alias = Foo; graph.py looks for Foo
; in m and also binds m's top-level names to `Foo.x`
(import_statement
  (import_clause (identifier) @name.reference.import @alias)
  source: (string (string_fragment) @module))

; import { A } from "./m"
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (identifier) @name.reference.import
        !alias)))
  source: (string (string_fragment) @module))

; import { A as B } from "./m"
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (identifier) @name.reference.import
        alias: (identifier) @alias)))
  source: (string (string_fragment) @module))

; import * as ns from "./m"
(import_statement
  (import_clause (namespace_import (identifier) @alias))
  source: (string (string_fragment) @module @name.reference.import))

; re-exports: export { A, B as C } from "./m"; export * from "./m"; export * as ns from "./m"
(export_statement
  (export_clause
    (export_specifier
      name: (identifier) @name.reference.import
      !alias))
  source: (string (string_fragment) @module))

(export_statement
  (export_clause
    (export_specifier
      name: (identifier) @name.reference.import
      alias: (identifier) @alias))
  source: (string (string_fragment) @module))

(export_statement
  "*" @name.reference.import
  source: (string (string_fragment) @module))

(export_statement
  (namespace_export (identifier) @alias)
  source: (string (string_fragment) @module @name.reference.import))

; const m = require("./m"): like a default import
(variable_declarator
  name: (identifier) @name.reference.import @alias
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))

; const { A, B: C } = require("./m")
(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @name.reference.import)
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))

(variable_declarator
  name: (object_pattern
    (pair_pattern
      key: (property_identifier) @name.reference.import
      value: (identifier) @alias))
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))

; calls: f(), obj.m()
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @name.reference.call))

; instantiations: new Foo(), new ns.Foo()
(new_expression
  constructor: (identifier) @name.reference.instantiation)

(new_expression
  constructor: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name.reference.instantiation))

; values: a name passed, returned, exported or collected (`run(handler)`, `export default App`)
(arguments (identifier) @name.reference.attribute)

(return_statement (identifier) @name.reference.attribute)

(export_statement value: (identifier) @name.reference.attribute)

(array (identifier) @name.reference.attribute)

(pair value: (identifier) @name.reference.attribute)

(shorthand_property_identifier) @name.reference.attribute

; attribute access: `Foo.bar` references Foo, and bar on its receiver
(member_expression
  object: (identifier) @name.reference.attribute)

(member_expression
  object: (_) @receiver
  property: (property_identifier) @name.reference.attribute)

; local types: `const x = new Foo()`, `const x = makeFoo()` -> a later `x.m()` resolves on Foo
(variable_declarator
  name: (identifier) @assigned
  value: (new_expression constructor: (identifier) @name.reference.instantiation))

(variable_declarator
  name: (identifier) @assigned
  value: (new_expression
    constructor: (member_expression
      object: (_) @receiver
      property: (property_identifier) @name.reference.instantiation)))

(variable_declarator
  name: (identifier) @assigned
  value: (call_expression function: (identifier) @name.reference.call))

(variable_declarator
  name: (identifier) @assigned
  value: (call_expression
    function: (member_expression
      object: (_) @receiver
      property: (property_identifier) @name.reference.call)))

; a Vue Options API component's bases: `extends: BaseInput`, `mixins: [Focusable]` (their methods are
; reached through `this` as the component's own)
(pair
  key: (property_identifier) @_key
  value: (identifier) @name.reference.inheritance
  (#eq? @_key "extends"))

(pair
  key: (property_identifier) @_key
  value: (array (identifier) @name.reference.inheritance)
  (#eq? @_key "mixins"))
