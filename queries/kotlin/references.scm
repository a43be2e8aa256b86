; Kotlin references. The name node is captured as @name.reference.<kind>; @receiver is what
; `obj.name(...)` is reached through, @module the package of an import (its path without the last
; name, captured as several nodes: the grammar has no node for it), @alias an `as` name, @assigned the
; variable, parameter or property a declared type or a call belongs to, so a later `x.m()` resolves.

; import a.b.C  /  import a.b.C as D  /  import a.b.f (a top-level function)
; (a quantified capture keeps one node, so the path's first and last package names are captured)
(import_header
  (identifier
    .
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  .)

(import_header
  (identifier
    .
    (simple_identifier) @module
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  .)

(import_header
  (identifier
    .
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  (import_alias (type_identifier) @alias))

(import_header
  (identifier
    .
    (simple_identifier) @module
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  (import_alias (type_identifier) @alias))

; ... the same where the grammar folds a comment below it into the import
(import_header
  (identifier
    .
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  .
  [(multiline_comment) (line_comment)])

(import_header
  (identifier
    .
    (simple_identifier) @module
    (simple_identifier) @module
    .
    (simple_identifier) @name.reference.import .)
  .
  [(multiline_comment) (line_comment)])

; import a.b.*
(import_header
  (identifier) @module
  (wildcard_import) @name.reference.import)

; inheritance: `class A : B(), C, D<T>`
(delegation_specifier
  (constructor_invocation (user_type (type_identifier) @name.reference.inheritance .)))

(delegation_specifier
  (constructor_invocation (user_type (type_identifier) @name.reference.inheritance . (type_arguments))))

(delegation_specifier
  (user_type (type_identifier) @name.reference.inheritance .))

(delegation_specifier
  (user_type (type_identifier) @name.reference.inheritance . (type_arguments)))

; calls: f(), Foo() (an instantiation once Foo resolves to a class), obj.m(), Type.m(), this.m()
(call_expression
  (simple_identifier) @name.reference.call)

(call_expression
  (navigation_expression
    (_) @receiver
    (navigation_suffix (simple_identifier) @name.reference.call)))

; callable references: Foo::bar, obj::bar, ::top
(callable_reference
  (type_identifier) @receiver
  (simple_identifier) @name.reference.call)

(callable_reference
  .
  "::"
  (simple_identifier) @name.reference.call)

; type uses: the last name of a (possibly qualified) type, annotations, `Foo::class`
(user_type (type_identifier) @name.reference.type .)

(user_type (type_identifier) @name.reference.type . (type_arguments))

(callable_reference (type_identifier) @name.reference.type)

; values: `Zone.COLD` / `Inventory.empty()` reach through a name; a name passed as an argument
(navigation_expression
  .
  (simple_identifier) @name.reference.attribute)

(value_argument (simple_identifier) @name.reference.attribute)

; typed variables: `val x: Foo`, parameters, constructor properties (`class A(val repo: Repo)`)
(variable_declaration
  (simple_identifier) @assigned
  [(user_type (type_identifier) @name.reference.type .)
   (user_type (type_identifier) @name.reference.type . (type_arguments))
   (nullable_type (user_type (type_identifier) @name.reference.type .))
   (nullable_type (user_type (type_identifier) @name.reference.type . (type_arguments)))])

(parameter
  (simple_identifier) @assigned
  [(user_type (type_identifier) @name.reference.type .)
   (user_type (type_identifier) @name.reference.type . (type_arguments))
   (nullable_type (user_type (type_identifier) @name.reference.type .))
   (nullable_type (user_type (type_identifier) @name.reference.type . (type_arguments)))])

(class_parameter
  (simple_identifier) @assigned
  [(user_type (type_identifier) @name.reference.type .)
   (user_type (type_identifier) @name.reference.type . (type_arguments))
   (nullable_type (user_type (type_identifier) @name.reference.type .))
   (nullable_type (user_type (type_identifier) @name.reference.type . (type_arguments)))])

; `val x = Foo()`, `val x = make()`, `val x = repo.find()`: the value's type is the variable's
(property_declaration
  (variable_declaration (simple_identifier) @assigned)
  (call_expression (simple_identifier) @name.reference.call))

(property_declaration
  (variable_declaration (simple_identifier) @assigned)
  (call_expression
    (navigation_expression
      (_) @receiver
      (navigation_suffix (simple_identifier) @name.reference.call))))
