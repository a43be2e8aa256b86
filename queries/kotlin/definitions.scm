; Kotlin definitions. @definition.<kind> on the whole node, @name on its name. KDoc comments directly
; above a declaration are picked up by parse.py. Nested types get qualified names (`Inventory.Zone`);
; functions inside a class or object are methods. A companion object is no symbol of its own: its
; functions become the class's (`Inventory.empty()` is how Kotlin calls them). An extension function
; `fun Inventory.describe()` is a method of Inventory (@receiver), wherever it is written.
; Properties are not symbols (as fields are not in the other languages).

; enum class first: it is a class_declaration with the `class` keyword too, and the first kind wins
(class_declaration
  "enum"
  (type_identifier) @name) @definition.enum

(class_declaration
  "interface"
  (type_identifier) @name) @definition.interface

(class_declaration
  "class"
  (type_identifier) @name) @definition.class

(object_declaration
  (type_identifier) @name) @definition.class

(type_alias
  (type_identifier) @name) @definition.type

(function_declaration
  receiver: (receiver_type
    [(user_type (type_identifier) @receiver .)
     (user_type (type_identifier) @receiver . (type_arguments))
     (nullable_type (user_type (type_identifier) @receiver .))])
  (simple_identifier) @name) @definition.function

(function_declaration
  !receiver
  (simple_identifier) @name) @definition.function
