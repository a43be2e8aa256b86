; JSX references (javascript and tsx inherit this file): capitalised tags are components.
; JSX components (a capitalised tag): <Button />, <ui.Button>
((jsx_opening_element name: (identifier) @name.reference.call)
  (#match? @name.reference.call "^[A-Z]"))

((jsx_self_closing_element name: (identifier) @name.reference.call)
  (#match? @name.reference.call "^[A-Z]"))

(jsx_opening_element
  name: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name.reference.call))

(jsx_self_closing_element
  name: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name.reference.call))

(jsx_expression (identifier) @name.reference.attribute)
