; C# definitions. @definition.<kind> on the whole node, @name on its name. `///` XML doc comments
; directly above a declaration (attributes are inside it) are picked up by parse.py. Namespaces
; are not symbols (they span files); nested types get qualified names (Outer.Inner).

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function
