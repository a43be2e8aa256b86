; Scala local scopes and the names bound in them (tree-sitter locals convention): a name read inside
; a function or lambda that binds it (a parameter, a local val or var, a lambda parameter) is a local
; variable, not a symbol of ours. Class and object bodies are no scopes: their vals are members.

(function_definition) @local.scope
(lambda_expression) @local.scope

(parameter name: (identifier) @local.definition)
(binding name: (identifier) @local.definition)
(block (val_definition pattern: (identifier) @local.definition))
(block (var_definition pattern: (identifier) @local.definition))
