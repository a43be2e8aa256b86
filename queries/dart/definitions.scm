; Dart definitions. @definition.<kind> on the whole node, @name on its name. `///` comments directly
; above a declaration are picked up by parse.py. The grammar writes a function's or method's body as
; the next sibling of its signature: @body marks it, and the symbol's lines run to its end. An
; `extension X on Inventory` is a qualifying scope, not a symbol (as a Rust `impl`): its methods are
; Inventory's. A mixin is a trait. Constructors are methods named like their class (`Inventory`) or
; by their own name (`Inventory.empty`); getters are methods; fields and setters are not symbols.

(class_definition
  name: (identifier) @name) @definition.class

(mixin_declaration
  (identifier) @name) @definition.trait

(enum_declaration
  name: (identifier) @name) @definition.enum

(extension_declaration
  class: (type_identifier) @name) @definition.impl

(type_alias
  .
  (type_identifier) @name) @definition.type

; top-level functions: `int helper() => 1;`, `void main() { ... }`
(program
  (function_signature
    name: (identifier) @name) @definition.function
  .
  (function_body) @body)

; methods, getters and constructors with a body
(_
  (method_signature
    [(function_signature name: (identifier) @name)
     (getter_signature name: (identifier) @name)
     (constructor_signature name: (identifier) @name . parameters: (formal_parameter_list))
     (factory_constructor_signature (identifier) @name . (formal_parameter_list))]) @definition.function
  .
  (function_body) @body)

; abstract methods and getters, constructors without a body
(declaration
  [(function_signature name: (identifier) @name)
   (getter_signature name: (identifier) @name)
   (constructor_signature name: (identifier) @name . parameters: (formal_parameter_list))
   (constant_constructor_signature (identifier) @name . (formal_parameter_list))
   (factory_constructor_signature (identifier) @name . (formal_parameter_list))
   (redirecting_factory_constructor_signature (identifier) @name . (formal_parameter_list))]) @definition.function
