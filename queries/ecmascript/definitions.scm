; Definitions common to JavaScript and TypeScript (both inherit this file; it is no language of
; its own). @definition.<kind> on the whole node, @name on its name. Doc comments (/** ... */ or //)
; directly above a definition, or above its `export`, are picked up by parse.py. A function
; directly inside a class becomes a method there.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

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
