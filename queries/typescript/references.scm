; TypeScript references: the common ECMAScript patterns (inherited), plus TypeScript's imports,
; inheritance, type uses and annotated locals. @assigned is also the variable, parameter or
; field a `x: Foo` annotation belongs to.
; inherits: ecmascript

; import m = require("./m")
(import_statement
  (import_require_clause
    (identifier) @name.reference.import @alias
    source: (string (string_fragment) @module)))

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

; type uses: `x: User`, `Repository<User>`, `ns.Type`
(type_identifier) @name.reference.type

(nested_type_identifier
  module: (_) @receiver
  name: (type_identifier) @name.reference.type)

; local types from annotations: `const x: Foo = ...`, `(x: Foo) =>`, `private x: Foo`
; -> a later `x.m()` / `this.x.m()` resolves on Foo
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
