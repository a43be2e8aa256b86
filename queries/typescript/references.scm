; TypeScript references. The name node is captured as @name.reference.<kind>; @receiver is the
; object of `obj.name`, @module the module string of an import, @alias the local name it is bound
; to, @assigned the variable a `new Foo()` / `foo()` result or a `x: Foo` annotation belongs to.

; import Foo from "./m": a default import, written as name = alias = Foo; graph.py looks for Foo
; in m and also binds m's top-level names to `Foo.x`
(import_statement
  (import_clause (identifier) @name.reference.import @alias)
  source: (string (string_fragment) @module))

; import { A } from "./m"; import type { A } from "./m"
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

; import m = require("./m")
(import_statement
  (import_require_clause
    (identifier) @name.reference.import @alias
    source: (string (string_fragment) @module)))

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

; inheritance: class A extends B implements I, J<T>; interface I extends J
(extends_clause value: (identifier) @name.reference.inheritance)

(extends_clause
  value: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name.reference.inheritance))

(implements_clause (type_identifier) @name.reference.inheritance)

(implements_clause (generic_type name: (type_identifier) @name.reference.inheritance))

(extends_type_clause type: (type_identifier) @name.reference.inheritance)

(extends_type_clause type: (generic_type name: (type_identifier) @name.reference.inheritance))

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

; type uses: `x: User`, `Repository<User>`, `ns.Type`
(type_identifier) @name.reference.type

(nested_type_identifier
  module: (_) @receiver
  name: (type_identifier) @name.reference.type)

; values: a name passed, returned, exported or collected (`run(handler)`, `export default App`)
(arguments (identifier) @name.reference.attribute)

(return_statement (identifier) @name.reference.attribute)

(export_statement value: (identifier) @name.reference.attribute)

(array (identifier) @name.reference.attribute)

(pair value: (identifier) @name.reference.attribute)

(shorthand_property_identifier) @name.reference.attribute

; attribute access: `Role.Admin` references Role, and Admin on its receiver
(member_expression
  object: (identifier) @name.reference.attribute)

(member_expression
  object: (_) @receiver
  property: (property_identifier) @name.reference.attribute)

; local types: `const x = new Foo()`, `const x: Foo = ...`, `(x: Foo) =>`, `private x: Foo`
; -> a later `x.m()` / `this.x.m()` resolves on Foo
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
  type: (type_annotation (type_identifier) @name.reference.type))

(variable_declarator
  name: (identifier) @assigned
  type: (type_annotation (generic_type name: (type_identifier) @name.reference.type)))

(required_parameter
  pattern: (identifier) @assigned
  type: (type_annotation (type_identifier) @name.reference.type))

(required_parameter
  pattern: (identifier) @assigned
  type: (type_annotation (generic_type name: (type_identifier) @name.reference.type)))

(optional_parameter
  pattern: (identifier) @assigned
  type: (type_annotation (type_identifier) @name.reference.type))

(optional_parameter
  pattern: (identifier) @assigned
  type: (type_annotation (generic_type name: (type_identifier) @name.reference.type)))

(public_field_definition
  name: (property_identifier) @assigned
  type: (type_annotation (type_identifier) @name.reference.type))

(public_field_definition
  name: (property_identifier) @assigned
  type: (type_annotation (generic_type name: (type_identifier) @name.reference.type)))

; constructor(private readonly store: Store) declares the field `store`
(required_parameter
  (accessibility_modifier)
  pattern: (identifier) @assigned
  type: (type_annotation (type_identifier) @name.reference.type))

(required_parameter
  (accessibility_modifier)
  pattern: (identifier) @assigned
  type: (type_annotation (generic_type name: (type_identifier) @name.reference.type)))
