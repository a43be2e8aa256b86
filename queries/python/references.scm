; Python references. The name node is captured as @name.reference.<kind>;
; @receiver is the object of `obj.name`, @module the module of an import, @alias its local name.

; imports: `from m import A`, `from m import A as B`, `import m`, `import m as n`
(import_from_statement
  module_name: (_) @module
  name: (dotted_name (identifier) @name.reference.import))

(import_from_statement
  module_name: (_) @module
  name: (aliased_import
    name: (dotted_name (identifier) @name.reference.import)
    alias: (identifier) @alias))

(import_statement
  name: (dotted_name) @module @name.reference.import)

(import_statement
  name: (aliased_import
    name: (dotted_name) @module @name.reference.import
    alias: (identifier) @alias))

; inheritance
(class_definition
  superclasses: (argument_list (identifier) @name.reference.inheritance))

(class_definition
  superclasses: (argument_list
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.inheritance)))

; calls: f(), obj.m(), decorators
(call function: (identifier) @name.reference.call)

(call function: (attribute
  object: (_) @receiver
  attribute: (identifier) @name.reference.call))

(decorator (identifier) @name.reference.call)

(decorator (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))

; type annotations
(type (identifier) @name.reference.type)

(type (attribute object: (_) @receiver attribute: (identifier) @name.reference.type))

(type (generic_type (identifier) @name.reference.type))

(type (subscript value: (identifier) @name.reference.type))

(type_parameter (type (identifier) @name.reference.type))

(except_clause (identifier) @name.reference.type)

(except_clause (as_pattern (identifier) @name.reference.type))

; values: a name passed, assigned, returned or collected (`callback=handler`, `isinstance(x, Foo)`)
(argument_list (identifier) @name.reference.attribute)

(keyword_argument value: (identifier) @name.reference.attribute)

(assignment right: (identifier) @name.reference.attribute)

(return_statement (identifier) @name.reference.attribute)

(raise_statement (identifier) @name.reference.instantiation)

(list (identifier) @name.reference.attribute)

(tuple (identifier) @name.reference.attribute)

(pair value: (identifier) @name.reference.attribute)

; attribute access: `Foo.bar` references Foo, and bar on its receiver
(attribute object: (identifier) @name.reference.attribute)

(attribute
  object: (_) @receiver
  attribute: (identifier) @name.reference.attribute)

; local types: `x = Foo()`, `x = mod.Foo()`, `def f(x: Foo)` -> a later `x.m()` resolves to Foo.m
(assignment
  left: (identifier) @assigned
  right: (call function: (identifier) @name.reference.call))

(assignment
  left: (identifier) @assigned
  right: (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call)))

(typed_parameter
  (identifier) @assigned
  type: (type (identifier) @name.reference.type))

(typed_default_parameter
  name: (identifier) @assigned
  type: (type (identifier) @name.reference.type))
