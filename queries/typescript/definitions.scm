; TypeScript definitions (tsx/definitions.scm inherits them): the common ECMAScript patterns
; (inherited), plus classes, interfaces, enums, type aliases, namespaces, signatures and fields.
; A function directly inside a class or interface becomes a method there.
; inherits: ecmascript

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

; `declare function f(): T;` and overload signatures (.d.ts files have nothing else)
(function_signature
  name: (identifier) @name) @definition.function

; interface members and abstract methods
(method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; class fields holding a function: `handle = () => {...}`
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.function
