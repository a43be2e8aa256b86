; JavaScript definitions: the common ECMAScript patterns (inherited), plus classes, class fields,
; CommonJS exports and prototype methods.
; inherits: ecmascript

(class_declaration
  name: (identifier) @name) @definition.class

; class fields holding a function: `handle = () => {...}`
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.function

; CommonJS: `exports.f = function () {}`, `module.exports.f = () => {}`
(expression_statement
  (assignment_expression
    left: (member_expression
      object: [(identifier) (member_expression)] @_exports
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)])
  (#match? @_exports "^(module\\.)?exports$")) @definition.function

; pre-class style: `Foo.prototype.bar = function () {}` -> method Foo.bar
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression
        object: (identifier) @receiver
        property: (property_identifier) @_prototype)
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)])
  (#eq? @_prototype "prototype")) @definition.method
