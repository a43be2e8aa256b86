; JavaScript definitions. @definition.<kind> on the whole node, @name on its name.
; Doc comments (/** ... */ or //) directly above a definition, or above its `export`, are picked up
; by parse.py. A function directly inside a class becomes a method there.

(class_declaration
  name: (identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; class fields holding a function: `handle = () => {...}`
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.function

; `const f = () => {...}`, `let g = function () {...}`: the whole declaration, so a comment above
; it (or above its `export`) is the doc
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; `const Foo = class {...}`
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

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
