; Go references. The name node is captured as @name.reference.<kind>; @receiver is the operand of
; `x.Name` (a package name at `pkg.Func()` call sites), @module the import path, @alias the name an
; import is bound to when renamed, @assigned the variable a `Foo{}` literal or a declared type
; belongs to, so a later `x.M()` resolves on Foo.

; import "example.com/app/server" (bound to its last path element) / import srv "..."
(import_spec
  !name
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @module @name.reference.import))

(import_spec
  name: (package_identifier) @alias
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @module @name.reference.import))

; embedding: a struct field or interface element with only a type
(field_declaration
  !name
  type: (type_identifier) @name.reference.inheritance)

(field_declaration
  !name
  type: (qualified_type
    package: (package_identifier) @receiver
    name: (type_identifier) @name.reference.inheritance))

(interface_type (type_elem (type_identifier) @name.reference.inheritance))

(interface_type
  (type_elem
    (qualified_type
      package: (package_identifier) @receiver
      name: (type_identifier) @name.reference.inheritance)))

; calls: f(), pkg.F(), x.M(), generic f[T]()
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @name.reference.call))

(call_expression
  function: (index_expression operand: (identifier) @name.reference.call))

; instantiations: composite literals T{...}, pkg.T{...}, T[int]{...}
(composite_literal
  type: (type_identifier) @name.reference.instantiation)

(composite_literal
  type: (qualified_type
    package: (package_identifier) @receiver
    name: (type_identifier) @name.reference.instantiation))

(composite_literal
  type: (generic_type type: (type_identifier) @name.reference.instantiation))

; type uses
(type_identifier) @name.reference.type

(qualified_type
  package: (package_identifier) @receiver
  name: (type_identifier) @name.reference.type)

; values: a function or method passed as an argument, `x.F` without a call
(argument_list (identifier) @name.reference.attribute)

(keyed_element (literal_element (identifier) @name.reference.attribute) .)

(selector_expression
  operand: (_) @receiver
  field: (field_identifier) @name.reference.attribute)

; typed variables: x := T{}, x := &pkg.T{}, var x T, func f(x *T)
(short_var_declaration
  left: (expression_list . (identifier) @assigned)
  right: (expression_list .
    [(composite_literal type: (type_identifier) @name.reference.instantiation)
     (unary_expression operand: (composite_literal type: (type_identifier) @name.reference.instantiation))]))

(short_var_declaration
  left: (expression_list . (identifier) @assigned)
  right: (expression_list .
    [(composite_literal
       type: (qualified_type
         package: (package_identifier) @receiver
         name: (type_identifier) @name.reference.instantiation))
     (unary_expression
       operand: (composite_literal
         type: (qualified_type
           package: (package_identifier) @receiver
           name: (type_identifier) @name.reference.instantiation)))]))

; struct fields: `db *store.Store` types the field, so `h.db.Save()` resolves on Store
(field_declaration
  name: (field_identifier) @assigned
  type: [(type_identifier) @name.reference.type (pointer_type (type_identifier) @name.reference.type)])

(field_declaration
  name: (field_identifier) @assigned
  type: [(qualified_type
          package: (package_identifier) @receiver
          name: (type_identifier) @name.reference.type)
        (pointer_type
          (qualified_type
            package: (package_identifier) @receiver
            name: (type_identifier) @name.reference.type))])

(var_spec
  name: (identifier) @assigned
  type: [(type_identifier) (pointer_type (type_identifier))] @name.reference.type)

(parameter_declaration
  name: (identifier) @assigned
  type: (type_identifier) @name.reference.type)

(parameter_declaration
  name: (identifier) @assigned
  type: (pointer_type (type_identifier) @name.reference.type))

(parameter_declaration
  name: (identifier) @assigned
  type: (pointer_type (generic_type type: (type_identifier) @name.reference.type)))

(parameter_declaration
  name: (identifier) @assigned
  type: (qualified_type
    package: (package_identifier) @receiver
    name: (type_identifier) @name.reference.type))

(parameter_declaration
  name: (identifier) @assigned
  type: (pointer_type
    (qualified_type
      package: (package_identifier) @receiver
      name: (type_identifier) @name.reference.type)))

; x := New(), x, err := pkg.Open(): the class comes from the function's result type (graph.py)
(short_var_declaration
  left: (expression_list . (identifier) @assigned)
  right: (expression_list . (call_expression function: (identifier) @name.reference.call)))

(short_var_declaration
  left: (expression_list . (identifier) @assigned)
  right: (expression_list .
    (call_expression
      function: (selector_expression
        operand: (_) @receiver
        field: (field_identifier) @name.reference.call))))
