; TypeScript definitions (tsx/definitions.scm inherits them). @definition.<kind> on the whole
; node, @name on its name. Doc comments directly above a definition, or above its `export`, are
; picked up by parse.py. A function directly inside a class or interface becomes a method there.

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

; namespace X { ... } / module X { ... }
(internal_module
  name: [(identifier) (nested_identifier)] @name) @definition.module

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

; `declare function f(): T;` and overload signatures (.d.ts files have nothing else)
(function_signature
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; interface members and abstract methods
(method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; class fields holding a function: `handle = () => {...}`
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.function

; `const f = () => {...}`, `let g = function () {...}`: the whole declaration, so a comment above
; it (or above its `export`) is the doc
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class
