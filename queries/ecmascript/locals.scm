; JavaScript/TypeScript local scopes and the names bound in them (tree-sitter locals convention;
; javascript, typescript and tsx inherit this file). A name read inside a function that binds it (a
; parameter, destructured or not, a `let`/`const`/`var`, a `for (x of ...)` variable, a caught
; error) is a local variable, not a symbol of ours: `let data = this.value; data.sort()` in a file
; with a method `data()` reads the variable. Blocks are no scopes here: a `let` bound anywhere in a
; function counts for the whole function (a `catch` clause and a `for` loop are scopes). Module-level
; declarations are outside every scope and stay symbols (or variables) of the file.

(function_declaration) @local.scope
(generator_function_declaration) @local.scope
(function_expression) @local.scope
(generator_function) @local.scope
(arrow_function) @local.scope
(method_definition) @local.scope
; a caught error and a loop variable are bound only in their clause or loop
(catch_clause) @local.scope
(for_in_statement) @local.scope

; parameters (each language's own form of `f(a, b = 1, ...rest)` is in its file): `x => ...`
(arrow_function parameter: (identifier) @local.definition)

; destructuring (one level) in a declarator, but not a CommonJS import: `const { A } = require('./a')`
; binds A as an import, a reference of its own
(variable_declarator name: (array_pattern (identifier) @local.definition))
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @local.definition)
  value: (_) @_value (#not-match? @_value "^require\\("))
(variable_declarator name: (object_pattern (pair_pattern value: (identifier) @local.definition))
  value: (_) @_value (#not-match? @_value "^require\\("))

; `let x = ...`, `const x = ...`, `var x = ...`; `for (const x of xs)`, `for (k in o)`; `catch (e)`
(variable_declarator name: (identifier) @local.definition
  value: (_)? @_value (#not-match? @_value "^require\\("))
(for_in_statement left: (identifier) @local.definition)
(catch_clause parameter: (identifier) @local.definition)
