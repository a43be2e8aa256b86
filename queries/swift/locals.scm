; Swift local scopes and the names bound in them (tree-sitter locals convention): a name read inside
; a function, initializer, accessor or closure that binds it (a parameter, a local `let`/`var`, a
; closure parameter, a `for` or `if let` variable) is a local variable, not a symbol of ours. Type
; bodies are no scopes: their properties are members, reached through `self` or bare.

(function_declaration) @local.scope
(init_declaration) @local.scope
(computed_property) @local.scope
(lambda_literal) @local.scope

(parameter name: (simple_identifier) @local.definition)
(lambda_parameter name: (simple_identifier) @local.definition)
(statements (property_declaration name: (pattern bound_identifier: (simple_identifier) @local.definition)))
(for_statement item: (pattern bound_identifier: (simple_identifier) @local.definition))
