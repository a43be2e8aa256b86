; C++ references. The name node is captured as @name.reference.<kind>; @module is the path of an
; #include (every top-level name of that header and of the source file next to it becomes
; visible: graph.py), @receiver the object of `x.m()` / `p->m()` or the scope of `Type::f()`,
; @assigned the variable a declared type, `new Foo` or `make_unique<Foo>` belongs to, so a later
; `x.m()` resolves on Foo.

; #include "shape.hpp" / <lib/shape.hpp>; using namespace ns;
(preproc_include
  path: (string_literal (string_content) @module @name.reference.import))

(preproc_include
  path: (system_lib_string) @module @name.reference.import)

(using_declaration
  "namespace"
  [(identifier) (qualified_identifier)] @module @name.reference.import)

; inheritance: class Circle : public Shape, public Base<T>, private ns::Other
(base_class_clause (type_identifier) @name.reference.inheritance)

(base_class_clause (template_type name: (type_identifier) @name.reference.inheritance))

(base_class_clause
  (qualified_identifier
    scope: (_) @receiver
    name: [(type_identifier) @name.reference.inheritance
           (template_type name: (type_identifier) @name.reference.inheritance)]))

; calls: f(), x.m(), p->m(), Type::f(), ns::f(), f<T>()
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (field_expression
    argument: (_) @receiver
    field: (field_identifier) @name.reference.call))

(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: (identifier) @name.reference.call))

(call_expression
  function: (template_function name: (identifier) @name.reference.call))

(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: (template_function name: (identifier) @name.reference.call)))

; instantiations: new Foo(..), new ns::Foo(..)
(new_expression
  type: (type_identifier) @name.reference.instantiation)

(new_expression
  type: (qualified_identifier
    scope: (_) @receiver
    name: (type_identifier) @name.reference.instantiation))

(new_expression
  type: (template_type name: (type_identifier) @name.reference.instantiation))

; type uses
(type_identifier) @name.reference.type

(qualified_identifier
  scope: (_) @receiver
  name: (type_identifier) @name.reference.type)

(struct_specifier
  name: (type_identifier) @name.reference.type
  !body)

(class_specifier
  name: (type_identifier) @name.reference.type
  !body)

; values: a function passed as a callback
(argument_list (identifier) @name.reference.attribute)

; typed variables: Foo x; Foo x(1); Foo* p = ...; auto p = new Foo; auto p = std::make_unique<Foo>();
; parameters (Foo x, const Foo& x, Foo* x); members
(declaration
  type: (type_identifier) @name.reference.type
  declarator: (identifier) @assigned)

(declaration
  type: (type_identifier) @name.reference.type
  declarator: (init_declarator
    declarator: [(identifier) @assigned
                 (pointer_declarator declarator: (identifier) @assigned)
                 (reference_declarator (identifier) @assigned)]))

(declaration
  type: (qualified_identifier
    scope: (_) @receiver
    name: (type_identifier) @name.reference.type)
  declarator: (init_declarator
    declarator: [(identifier) @assigned
                 (pointer_declarator declarator: (identifier) @assigned)]))

(init_declarator
  declarator: (identifier) @assigned
  value: (new_expression type: (type_identifier) @name.reference.instantiation))

(init_declarator
  declarator: (identifier) @assigned
  value: (call_expression
    function: (qualified_identifier
      name: (template_function
        name: (identifier) @_factory
        arguments: (template_argument_list
          (type_descriptor type: (type_identifier) @name.reference.type)))))
  (#match? @_factory "^make_(unique|shared)$"))

(parameter_declaration
  type: (type_identifier) @name.reference.type
  declarator: [(identifier) @assigned
               (reference_declarator (identifier) @assigned)
               (pointer_declarator declarator: (identifier) @assigned)])

(field_declaration
  type: (type_identifier) @name.reference.type
  declarator: [(field_identifier) @assigned
               (pointer_declarator declarator: (field_identifier) @assigned)])
