; JavaScript references: the common ECMAScript and JSX patterns (inherited), plus JavaScript's
; own form of inheritance.
; inherits: ecmascript, jsx

; inheritance: class A extends B / extends ns.B
(class_heritage (identifier) @name.reference.inheritance)

(class_heritage
  (member_expression
    object: (_) @receiver
    property: (property_identifier) @name.reference.inheritance))
