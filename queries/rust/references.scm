; Rust references. The name node is captured as @name.reference.<kind>; @receiver is the value of
; `x.m()` or the path of `Type::f()` / `module::f()`, @module the path of a `use` (`crate::a::b`,
; `super`, `std::io`), @alias the `as` name, @assigned the variable a `let` binds, so a later
; `x.m()` resolves on its type.

; use a::b::C;  use a::b::C as D;  use foo;
(use_declaration
  argument: (scoped_identifier
    path: (_) @module
    name: (identifier) @name.reference.import))

(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier
      path: (_) @module
      name: (identifier) @name.reference.import)
    alias: (identifier) @alias))

(use_declaration
  argument: (identifier) @name.reference.import @module)

(use_declaration
  argument: (use_as_clause
    path: (identifier) @name.reference.import @module
    alias: (identifier) @alias))

; use a::b::{C, D as E};
(scoped_use_list
  path: (_) @module
  list: (use_list (identifier) @name.reference.import))

(scoped_use_list
  path: (_) @module
  list: (use_list
    (use_as_clause
      path: (identifier) @name.reference.import
      alias: (identifier) @alias)))

; use a::b::*;
(use_wildcard
  (_) @module
  "*" @name.reference.import)

; mod x;  (the file x.rs or x/mod.rs, bound to the name x)
(mod_item
  !body
  name: (identifier) @name.reference.import @module)

; inheritance: impl Trait for Type, supertraits
(impl_item
  trait: (type_identifier) @name.reference.inheritance)

(impl_item
  trait: (generic_type type: (type_identifier) @name.reference.inheritance))

(impl_item
  trait: (scoped_type_identifier
    path: (_) @receiver
    name: (type_identifier) @name.reference.inheritance))

(trait_item
  bounds: (trait_bounds (type_identifier) @name.reference.inheritance))

; calls: f(), x.m(), Type::f(), module::f(), f::<T>(), macros
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (field_identifier) @name.reference.call))

(call_expression
  function: (scoped_identifier
    path: (_) @receiver
    name: (identifier) @name.reference.call))

(call_expression
  function: (generic_function function: (identifier) @name.reference.call))

(call_expression
  function: (generic_function
    function: (field_expression
      value: (_) @receiver
      field: (field_identifier) @name.reference.call)))

(call_expression
  function: (generic_function
    function: (scoped_identifier
      path: (_) @receiver
      name: (identifier) @name.reference.call)))

(macro_invocation
  macro: (identifier) @name.reference.call)

; instantiations: struct literals Point { .. }, geo::Point { .. }, Wrapper::<T> { .. }
(struct_expression
  name: (type_identifier) @name.reference.instantiation)

(struct_expression
  name: (scoped_type_identifier
    path: (_) @receiver
    name: (type_identifier) @name.reference.instantiation))

(struct_expression
  name: (generic_type_with_turbofish type: (type_identifier) @name.reference.instantiation))

; type uses
(type_identifier) @name.reference.type

(scoped_type_identifier
  path: (_) @receiver
  name: (type_identifier) @name.reference.type)

; values: a function passed as an argument
(arguments (identifier) @name.reference.attribute)

; typed variables: let x = Type::new(), let x = f(), let x = Point { .. }, let x: T, fn f(x: &T),
; struct fields (for self.field.m())
(let_declaration
  pattern: (identifier) @assigned
  value: (call_expression
    function: (scoped_identifier
      path: (_) @receiver
      name: (identifier) @name.reference.call)))

(let_declaration
  pattern: (identifier) @assigned
  value: (call_expression function: (identifier) @name.reference.call))

(let_declaration
  pattern: (identifier) @assigned
  value: (struct_expression name: (type_identifier) @name.reference.instantiation))

(let_declaration
  pattern: (identifier) @assigned
  type: (type_identifier) @name.reference.type)

(parameter
  pattern: (identifier) @assigned
  type: [(type_identifier) @name.reference.type
         (reference_type type: (type_identifier) @name.reference.type)
         (generic_type type: (type_identifier) @name.reference.type)])

(field_declaration
  name: (field_identifier) @assigned
  type: [(type_identifier) @name.reference.type
         (reference_type type: (type_identifier) @name.reference.type)])
