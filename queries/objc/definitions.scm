; inherits: c
; Objective-C definitions, over C's (functions, structs, enums, typedefs, macros). `interface
; Shape : Base` and its categories `interface Shape (Debug)` are classes, `protocol Drawable` an
; interface; `implementation Shape` is no symbol of its own but the scope of Shape's methods (an
; impl, as Rust's: its methods belong to the class its header declares, parse.py/graph index.py).
; A method is named by its selector's first keyword (`initWithName:age:` is initWithName). Method
; declarations in an interface are not symbols (the implementation defines them), those of a
; protocol are (nothing else defines them); a property is a method (its getter).

(class_interface . (identifier) @name) @definition.class

(protocol_declaration . (identifier) @name) @definition.interface

(class_implementation . (identifier) @name) @definition.impl

(method_definition . (method_type)? . (identifier) @name) @definition.method

(method_definition . (identifier) @name) @definition.method

(protocol_declaration
  (method_declaration (method_type)? . (identifier) @name) @definition.method)

(protocol_declaration
  (method_declaration . (identifier) @name) @definition.method)

(class_interface
  (property_declaration
    (struct_declaration
      (struct_declarator [(identifier) @name (pointer_declarator declarator: (identifier) @name)]))) @definition.method)

(protocol_declaration
  (property_declaration
    (struct_declaration
      (struct_declarator [(identifier) @name (pointer_declarator declarator: (identifier) @name)]))) @definition.method)
