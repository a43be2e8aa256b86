; Scala references. The name node is captured as @name.reference.<kind>; @receiver is what
; `obj.name` is reached through, @module the package of an import (its path without the last name:
; the grammar gives the path as a flat list, so its first and last package names are captured),
; @alias a renamed import, @assigned the val, var or parameter a declared type or a value belongs to.

; import a.b.C
(import_declaration
  .
  (identifier) @module
  .
  (identifier) @name.reference.import .)

(import_declaration
  .
  (identifier) @module
  (identifier) @module
  .
  (identifier) @name.reference.import .)

; import a.b.{C, D => E}
(import_declaration
  .
  (identifier) @module
  .
  (namespace_selectors
    [(identifier) @name.reference.import
     (arrow_renamed_identifier name: (identifier) @name.reference.import alias: (identifier) @alias)]))

(import_declaration
  .
  (identifier) @module
  (identifier) @module
  .
  (namespace_selectors
    [(identifier) @name.reference.import
     (arrow_renamed_identifier name: (identifier) @name.reference.import alias: (identifier) @alias)]))

; inheritance: `extends A with B[T]`
(extends_clause type: (type_identifier) @name.reference.inheritance)

(extends_clause type: (generic_type type: (type_identifier) @name.reference.inheritance))

; calls: f(), Item(...) (an instantiation once it resolves to a class), obj.m(), obj.m (no parens),
; f[T](), new Foo(...)
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (generic_function function: (identifier) @name.reference.call))

(field_expression
  value: (_) @receiver
  field: (identifier) @name.reference.call)

(instance_expression (type_identifier) @name.reference.instantiation)

(instance_expression (generic_type type: (type_identifier) @name.reference.instantiation))

; type uses
(type_identifier) @name.reference.type

; values: `Inventory.empty` reaches through a name; a name passed as an argument
(field_expression
  value: (identifier) @name.reference.attribute)

(arguments (identifier) @name.reference.attribute)

; typed vals, vars and parameters: `val x: Foo`, `(x: Foo)`, `class A(repo: Repo)`
(val_definition
  pattern: (identifier) @assigned
  type: [(type_identifier) @name.reference.type (generic_type type: (type_identifier) @name.reference.type)])

(var_definition
  pattern: (identifier) @assigned
  type: [(type_identifier) @name.reference.type (generic_type type: (type_identifier) @name.reference.type)])

(parameter
  name: (identifier) @assigned
  type: [(type_identifier) @name.reference.type (generic_type type: (type_identifier) @name.reference.type)])

(class_parameter
  name: (identifier) @assigned
  type: [(type_identifier) @name.reference.type (generic_type type: (type_identifier) @name.reference.type)])

; `val x = new Foo()`, `val x = Foo(...)`, `val x = repo.find()`
(val_definition
  pattern: (identifier) @assigned
  value: (instance_expression (type_identifier) @name.reference.instantiation))

(val_definition
  pattern: (identifier) @assigned
  value: (call_expression function: (identifier) @name.reference.call))

(val_definition
  pattern: (identifier) @assigned
  value: (call_expression
    function: (field_expression value: (_) @receiver field: (identifier) @name.reference.call)))
