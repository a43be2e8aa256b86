; Haskell local scopes and the names bound in them: a top-level equation (its parameters, its where
; and let bindings), a class default or instance method, a lambda, a case alternative, a let
; expression, a do block and a list comprehension. A function or value bound in a where or let clause
; is no scope of its own (its name must be seen beside it), so its parameters are bound in the
; enclosing scope. Any variable in a pattern is bound (constructors are no variables), down to a
; few levels of nesting: `(Cart (x:xs))`, `Just (a, b)`.

(declarations (function) @local.scope)
(declarations (bind) @local.scope)
(instance_declarations (function) @local.scope)
(class_declarations (function) @local.scope)
(lambda) @local.scope
(alternative) @local.scope
(let_in) @local.scope
(do) @local.scope
(list_comprehension) @local.scope

; parameters and patterns
(patterns (variable) @local.definition)
(patterns (_ (variable) @local.definition))
(patterns (_ (_ (variable) @local.definition)))
(patterns (_ (_ (_ (variable) @local.definition))))
(patterns (_ (_ (_ (_ (variable) @local.definition)))))

; case alternatives, do binds (`x <- e`), pattern bindings, guards (`| Just y <- e`)
(alternative pattern: (variable) @local.definition)
(alternative pattern: (_ (variable) @local.definition))
(alternative pattern: (_ (_ (variable) @local.definition)))
(alternative pattern: (_ (_ (_ (variable) @local.definition))))
(bind pattern: (variable) @local.definition)
(bind pattern: (_ (variable) @local.definition))
(bind pattern: (_ (_ (variable) @local.definition)))
(bind pattern: (_ (_ (_ (variable) @local.definition))))

; where and let bindings: `go x = ...`, `s = ...`
(local_binds (function name: (variable) @local.definition))
(local_binds (bind name: (variable) @local.definition))
