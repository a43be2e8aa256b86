; Julia local scopes and the names bound in them (tree-sitter locals convention): a name read inside a
; function, loop, `let` or `do` block or anonymous function that binds it (a parameter, a loop
; variable, a local assignment) is a local variable, not a symbol of ours (`for f in (union, setdiff)
; f(a, b) end` calls no function `f` defined elsewhere). A module body is no scope: its names are
; globals of the module.

(function_definition) @local.scope
(assignment . (call_expression)) @local.scope
(assignment . (where_expression)) @local.scope
(for_statement) @local.scope
(let_statement) @local.scope
(do_clause) @local.scope
(arrow_function_expression) @local.scope
(comprehension_expression) @local.scope

; parameters: f(x, y::T, z=1; k=2, xs...)
(signature (call_expression (argument_list [
  (identifier) @local.definition
  (typed_expression . (identifier) @local.definition)
  (assignment . [(identifier) @local.definition (typed_expression . (identifier) @local.definition)])
  (splat_expression (identifier) @local.definition)])))

(assignment . (call_expression (argument_list [
  (identifier) @local.definition
  (typed_expression . (identifier) @local.definition)
  (assignment . [(identifier) @local.definition (typed_expression . (identifier) @local.definition)])])))

(assignment . (where_expression . (call_expression (argument_list [
  (identifier) @local.definition
  (typed_expression . (identifier) @local.definition)])))) 

(arrow_function_expression . [(identifier) @local.definition (argument_list (identifier) @local.definition)])

(do_clause . (identifier) @local.definition)

; loop variables: for x in xs, for (k, v) in d
(for_binding . [(identifier) @local.definition (tuple_expression (identifier) @local.definition)])

; local assignments: x = ..., (a, b) = ...; only inside a scope (locals convention)
(assignment . (identifier) @local.definition)

(assignment . (tuple_expression (identifier) @local.definition))
