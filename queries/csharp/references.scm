; C# references. The name node is captured as @name.reference.<kind>; @module is the namespace of a
; `using` (a plain `using Ns;` makes the namespace's types visible: graph.py finds them by folder),
; @alias the name of `using A = Ns.T;`, @receiver the object of `x.M()`, @assigned the variable a
; declared type or `new Foo()` belongs to, so a later `x.M()` resolves on Foo.

; using Bank.Models;  using System;  using static System.Math;
(using_directive
  !name
  [(qualified_name) (identifier)] @module @name.reference.import)

; using Kind = Bank.Models.AccountKind;
(using_directive
  name: (identifier) @alias
  (qualified_name
    qualifier: (_) @module
    name: (identifier) @name.reference.import))

; inheritance: class A : Base, IThing, IRepo<T>, Ns.Base
(base_list (identifier) @name.reference.inheritance)

(base_list (generic_name (identifier) @name.reference.inheritance))

(base_list
  (qualified_name
    qualifier: (_) @receiver
    name: (identifier) @name.reference.inheritance))

; calls: M(), x.M(), this.M(), Type.M(), M<T>()
(invocation_expression
  function: (identifier) @name.reference.call)

(invocation_expression
  function: (generic_name (identifier) @name.reference.call))

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: (identifier) @name.reference.call))

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: (generic_name (identifier) @name.reference.call)))

; instantiations: new Foo(), new List<Foo>(), new Ns.Foo()
(object_creation_expression
  type: (identifier) @name.reference.instantiation)

(object_creation_expression
  type: (generic_name (identifier) @name.reference.instantiation))

(object_creation_expression
  type: (qualified_name
    qualifier: (_) @receiver
    name: (identifier) @name.reference.instantiation))

; type uses: declarations, return types, generic arguments, nullable/array types, attributes
(_ type: (identifier) @name.reference.type)

(_ returns: (identifier) @name.reference.type)

(_
  type: (qualified_name
    qualifier: (_) @receiver
    name: (identifier) @name.reference.type))

(generic_name (identifier) @name.reference.type)

(type_argument_list (identifier) @name.reference.type)

(nullable_type (identifier) @name.reference.type)

(attribute name: (identifier) @name.reference.type)

; values: `AccountKind.Savings` references AccountKind; a name passed as an argument
(member_access_expression
  expression: (identifier) @name.reference.attribute)

(argument (identifier) @name.reference.attribute)

; typed variables: Foo x = ...; var x = new Foo(); var x = Foo.Make(); parameters; fields; properties
(variable_declaration
  type: (identifier) @name.reference.type
  (variable_declarator name: (identifier) @assigned))

(variable_declaration
  type: (generic_name (identifier) @name.reference.type)
  (variable_declarator name: (identifier) @assigned))

(variable_declaration
  type: (implicit_type)
  (variable_declarator
    name: (identifier) @assigned
    (object_creation_expression type: (identifier) @name.reference.instantiation)))

(variable_declaration
  type: (implicit_type)
  (variable_declarator
    name: (identifier) @assigned
    (invocation_expression
      function: (member_access_expression
        expression: _ @receiver
        name: (identifier) @name.reference.call))))

(parameter
  type: (identifier) @name.reference.type
  name: (identifier) @assigned)

(property_declaration
  type: (identifier) @name.reference.type
  name: (identifier) @assigned)
