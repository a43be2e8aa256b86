; Scala definitions. @definition.<kind> on the whole node, @name on its name. Scaladoc comments
; directly above a definition are picked up by parse.py. An `object` is a class-like symbol (a
; companion object beside its class has the class's name, so `Inventory.empty()` finds its method
; on either); functions inside a class, trait or object are methods. A function of an
; `extension (i: Item)` block is a method of Item (@receiver). Vals and vars are not symbols.

(class_definition
  name: (identifier) @name) @definition.class

(object_definition
  name: (identifier) @name) @definition.class

(trait_definition
  name: (identifier) @name) @definition.trait

(enum_definition
  name: (identifier) @name) @definition.enum

(type_definition
  name: (type_identifier) @name) @definition.type

(extension_definition
  parameters: (parameters
    (parameter type: [(type_identifier) @receiver (generic_type type: (type_identifier) @receiver)]))
  body: [(function_definition name: (identifier) @name) @definition.function
         (_ (function_definition name: (identifier) @name) @definition.function)])

(function_definition
  name: (identifier) @name) @definition.function

(function_declaration
  name: (identifier) @name) @definition.function
