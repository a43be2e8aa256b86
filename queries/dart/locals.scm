; Dart local scopes and the names bound in them (tree-sitter locals convention): a name read inside a
; block or closure that binds it (a local variable, a loop variable, a closure parameter) is a local
; variable, not a symbol of ours. A function's parameters sit in its signature, outside its body, and
; are not modelled. Class bodies are no scopes: their fields are members, reached through `this` or bare.

(block) @local.scope
(function_expression) @local.scope

(local_variable_declaration (initialized_variable_definition name: (identifier) @local.definition))
(for_loop_parts name: (identifier) @local.definition)
(function_expression parameters: (formal_parameter_list (formal_parameter (identifier) @local.definition .)))
