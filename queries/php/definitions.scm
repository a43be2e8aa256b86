; PHP definitions. @definition.<kind> on the whole node, @name on its name. `/** ... */` comments
; directly above a declaration are its doc (parse.py). Namespaces are not symbols (they span files).

(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method
