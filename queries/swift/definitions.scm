; Swift definitions. @definition.<kind> on the whole node, @name on its name. `///` and `/** */`
; comments directly above a declaration are picked up by parse.py. The grammar writes class, struct,
; enum, actor and extension declarations as one node type, told apart by their keyword. An
; `extension Shelf` is a qualifying scope, not a symbol (as a Rust `impl`): its methods are Shelf's,
; attached to Shelf wherever Shelf is defined in the module. An initializer is the method `init`.
; Properties and enum cases are not symbols (as fields are not in the other languages).

(class_declaration
  "class"
  name: (type_identifier) @name) @definition.class

(class_declaration
  "actor"
  name: (type_identifier) @name) @definition.class

(class_declaration
  "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  "enum"
  name: (type_identifier) @name) @definition.enum

; extension Shelf / extension Outer.Inner / extension Array where Element == Item
(class_declaration
  "extension"
  name: (user_type (type_identifier) @name .)) @definition.impl

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

(typealias_declaration
  name: (type_identifier) @name) @definition.type

(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.function

(init_declaration
  "init" @name) @definition.function
