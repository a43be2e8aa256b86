; Java references. The name node is captured as @name.reference.<kind>; @receiver is the object
; of `obj.name(...)`, @module the package (or class, for static imports) of an import, @assigned the
; variable a declared type or `new Foo()` belongs to, so a later `x.m()` resolves on Foo.

; import a.b.C;  import static a.b.C.m;  (module a.b / a.b.C, name C / m)
(import_declaration
  (scoped_identifier
    scope: (_) @module
    name: (identifier) @name.reference.import) .)

; import a.b.*;
(import_declaration
  (scoped_identifier) @module
  (asterisk) @name.reference.import)

; inheritance: extends / implements / interface extends
(superclass (type_identifier) @name.reference.inheritance)

(superclass (generic_type (type_identifier) @name.reference.inheritance))

(super_interfaces (type_list (type_identifier) @name.reference.inheritance))

(super_interfaces (type_list (generic_type (type_identifier) @name.reference.inheritance)))

(extends_interfaces (type_list (type_identifier) @name.reference.inheritance))

(extends_interfaces (type_list (generic_type (type_identifier) @name.reference.inheritance)))

; calls: m(), obj.m(), Type.m(), super.m()
(method_invocation
  !object
  name: (identifier) @name.reference.call)

(method_invocation
  object: (_) @receiver
  name: (identifier) @name.reference.call)

; method references: Type::m, obj::m
(method_reference
  .
  [(identifier) (type_identifier) (this) (super)] @receiver
  .
  (identifier) @name.reference.call)

; instantiations: new Foo(), new Foo<>(), new a.b.Foo()
(object_creation_expression
  type: (type_identifier) @name.reference.instantiation)

(object_creation_expression
  type: (generic_type (type_identifier) @name.reference.instantiation))

(object_creation_expression
  type: (scoped_type_identifier
    (_) @receiver
    (type_identifier) @name.reference.instantiation .))

; type uses: declarations, generics, casts, throws, annotations
(type_identifier) @name.reference.type

(scoped_type_identifier
  (_) @receiver
  (type_identifier) @name.reference.type .)

(marker_annotation name: (identifier) @name.reference.type)

(annotation name: (identifier) @name.reference.type)

(catch_type (type_identifier) @name.reference.type)

; values: `Zone.COLD` references Zone; a name passed as an argument
(field_access
  object: (identifier) @name.reference.attribute)

(argument_list (identifier) @name.reference.attribute)

; typed variables: `Foo x = ...`, `List<Foo> xs`, parameters, fields, for-each
(local_variable_declaration
  type: (type_identifier) @name.reference.type
  declarator: (variable_declarator name: (identifier) @assigned))

(local_variable_declaration
  type: (generic_type (type_identifier) @name.reference.type)
  declarator: (variable_declarator name: (identifier) @assigned))

(field_declaration
  type: (type_identifier) @name.reference.type
  declarator: (variable_declarator name: (identifier) @assigned))

(field_declaration
  type: (generic_type (type_identifier) @name.reference.type)
  declarator: (variable_declarator name: (identifier) @assigned))

(formal_parameter
  type: (type_identifier) @name.reference.type
  name: (identifier) @assigned)

(formal_parameter
  type: (generic_type (type_identifier) @name.reference.type)
  name: (identifier) @assigned)

(enhanced_for_statement
  type: (type_identifier) @name.reference.type
  name: (identifier) @assigned)

; `var x = new Foo()`
(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @assigned
    value: (object_creation_expression type: (type_identifier) @name.reference.instantiation)))
