; Python local scopes and the names bound in them (tree-sitter locals convention).
; @local.scope: a node whose bindings are invisible outside it (functions, lambdas, comprehensions).
; @local.definition: a name bound where it stands (parameter, assignment target, loop or `as` variable).
; A binding is never a reference; a name read inside a scope that binds it is a local variable, not a
; module-level symbol (parse.py drops it, or keeps it as a carrier of type evidence).
; Class bodies are not scopes here: their names are class attributes, reached through the class.
; Imports are bindings too, but they are references as well: graph.py scopes them by enclosing function.

(function_definition) @local.scope
(lambda) @local.scope
[(list_comprehension) (set_comprehension) (dictionary_comprehension) (generator_expression)] @local.scope

; parameters
(parameters (identifier) @local.definition)
(lambda_parameters (identifier) @local.definition)
(default_parameter name: (identifier) @local.definition)
(typed_parameter (identifier) @local.definition)
(typed_default_parameter name: (identifier) @local.definition)
(list_splat_pattern (identifier) @local.definition)
(dictionary_splat_pattern (identifier) @local.definition)

; assignment targets, loop variables, `with ... as x`, `except ... as e`, `(x := ...)`
(assignment left: (identifier) @local.definition)
(assignment left: (pattern_list (identifier) @local.definition))
(assignment left: (tuple_pattern (identifier) @local.definition))
(assignment left: (list_pattern (identifier) @local.definition))
(augmented_assignment left: (identifier) @local.definition)
(for_statement left: (identifier) @local.definition)
(for_statement left: (pattern_list (identifier) @local.definition))
(for_statement left: (tuple_pattern (identifier) @local.definition))
(for_in_clause left: (identifier) @local.definition)
(for_in_clause left: (pattern_list (identifier) @local.definition))
(for_in_clause left: (tuple_pattern (identifier) @local.definition))
(as_pattern_target (identifier) @local.definition)
(as_pattern_target (tuple (identifier) @local.definition))
(named_expression name: (identifier) @local.definition)
