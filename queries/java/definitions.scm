; Java definitions. @definition.<kind> on the whole node, @name on its name. Javadoc comments
; directly above a declaration (annotations are inside it) are picked up by parse.py.
; Nested types get qualified names (`Inventory.Zone`); constructors are methods named like the class.

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(compact_constructor_declaration
  name: (identifier) @name) @definition.method
