; inherits: c
; Objective-C references, over C's (`#import "x.h"` as an include, calls, types, declared
; variables). A message send `[obj sel:arg]` is a call of the selector's first keyword on the
; receiver `obj` (a class name, self, super, or a variable typed by its declaration `Shape *s`);
; the later keywords are that one selector's parts, no calls (the `.` anchor keeps to the first).
; `self.name` reads a property. Superclasses and adopted protocols are inheritance.

(message_expression
  receiver: (_) @receiver
  .
  method: (identifier) @name.reference.call)

(class_interface superclass: (identifier) @name.reference.inheritance)

(protocol_reference_list (identifier) @name.reference.inheritance)

(class_interface (parameterized_arguments (type_name (type_identifier) @name.reference.inheritance)))

; [[Shape alloc] init], [Shape new]: the class is instantiated
((message_expression
  receiver: (identifier) @name.reference.instantiation
  .
  method: (identifier) @_make)
  (#any-of? @_make "alloc" "new"))

; a class named as a receiver: [Shape shapeNamed:x]
((message_expression receiver: (identifier) @name.reference.type)
  (#match? @name.reference.type "^[A-Z]"))

; declared types: Shape *shape = ...; then [shape area] resolves on Shape
(declaration
  type: (type_identifier) @name.reference.type
  declarator: (init_declarator declarator: (pointer_declarator declarator: (identifier) @assigned)))

(declaration
  type: (type_identifier) @name.reference.type
  declarator: (pointer_declarator declarator: (identifier) @assigned))

(method_parameter
  (method_type (type_name (type_identifier) @name.reference.type))
  (identifier) @assigned)

; self.name, shape.radius: a property read through its receiver
(field_expression
  argument: (_) @receiver
  field: (field_identifier) @name.reference.attribute)
