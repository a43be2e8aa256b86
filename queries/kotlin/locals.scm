; Kotlin local scopes and the names bound in them (tree-sitter locals convention): a name read inside
; a function or lambda that binds it (a parameter, a local `val`/`var`, a loop or lambda variable, a
; caught exception) is a local variable, not a symbol of ours (`Log.wtf(tag, message)` in a function
; with a `tag` parameter is no reference to a method `tag`). Class bodies are no scopes: their
; properties are members, reached through `this` or bare.

(function_declaration) @local.scope
(secondary_constructor) @local.scope
(anonymous_initializer) @local.scope
(getter) @local.scope
(setter) @local.scope
(lambda_literal) @local.scope
(anonymous_function) @local.scope

(parameter (simple_identifier) @local.definition)
(variable_declaration (simple_identifier) @local.definition)
(catch_block (simple_identifier) @local.definition)
