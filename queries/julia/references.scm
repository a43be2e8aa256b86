; Julia references. The name node is captured as @name.reference.<kind>; @receiver is the module of
; `M.f()`. Imports:
; - `include("x.jl")` pastes a file in place: every name of it (and of what it includes) is visible
;   (the registry's bare_import_is_star, transitively, the path relative to the including file)
; - `using M` makes M's exported names visible (a star import); `import M` binds M alone (@alias)
; - `using M: a, b as c` / `import M: a` bind names of a package; a relative module (`using .Util: f`)
;   is left out, as Julia submodules are no files of their own: `f` is then found by its name
; Multiple dispatch has no receivers: `total(cart)` is a bare call, resolved by name.

((call_expression
  . (identifier) @_include
  (argument_list . (string_literal (content) @module @name.reference.import) .))
  (#eq? @_include "include"))

(using_statement (identifier) @module @name.reference.import)

(using_statement (import_path . (identifier) .) @module @name.reference.import)

(import_statement (identifier) @module @alias @name.reference.import)

(selected_import . (identifier) @module (identifier) @name.reference.import)

(selected_import . (identifier) @module (import_alias . (identifier) @name.reference.import (identifier) @alias))

; calls: f(x), M.f(x), f.(xs) (broadcast), a constructor Cart(...) (an instantiation, once resolved)
(call_expression
  . (identifier) @name.reference.call)

(call_expression
  . (field_expression
    value: (identifier) @receiver
    . (identifier) @name.reference.call))

(broadcast_call_expression
  . (identifier) @name.reference.call)

(macrocall_expression
  (macro_identifier (identifier) @name.reference.call))

; the name of a definition is no call: `function f(...)`, `f(x) = ...`, `Base.show(...) = ...`
(signature (call_expression . (identifier) @ignore))

(signature (call_expression . (field_expression (identifier) @ignore .)))

(signature [(typed_expression . (call_expression . (identifier) @ignore))
            (where_expression . (call_expression . (identifier) @ignore))
            (where_expression . (typed_expression . (call_expression . (identifier) @ignore)))])

(assignment
  . [
    (call_expression . [(identifier) @ignore (field_expression (identifier) @ignore .)])
    (typed_expression . (call_expression . (identifier) @ignore))
    (where_expression . (call_expression . [(identifier) @ignore (field_expression (identifier) @ignore .)]))])

; struct Item <: AbstractItem, struct P{T} <: Abs{T}
(type_head
  (binary_expression
    (operator) .
    [(identifier) @name.reference.inheritance (parametrized_type_expression . (identifier) @name.reference.inheritance)]))

; type uses: `x::Cart`, `f(...)::Cart`, `Vector{Item}`, `where T<:Shape`
(typed_expression
  (identifier) @assigned
  .
  (identifier) @name.reference.type)

(typed_expression
  (_)
  .
  [(identifier) @name.reference.type (parametrized_type_expression . (identifier) @name.reference.type)])

(parametrized_type_expression
  (curly_expression (identifier) @name.reference.type))

(parametrized_type_expression
  . (identifier) @name.reference.type)

; the struct's own name in its head is no use of it
(type_head (parametrized_type_expression . (identifier) @ignore))

(type_head (binary_expression . (parametrized_type_expression . (identifier) @ignore)))

; a bound in braces: `Cart{T<:Product}`, `Vector{<:Item}`, `where {T<:Shape}`
(curly_expression
  (binary_expression (operator) . (identifier) @name.reference.type))

(curly_expression
  (unary_expression (operator) . (identifier) @name.reference.type))
