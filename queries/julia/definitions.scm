; Julia definitions. @definition.<kind> on the whole node, @name on its name. A docstring is the string
; written directly above a definition (@doc); `#` comments above it are its doc otherwise (parse.py).
; Modules are modules, `struct` / `mutable struct` structs, `abstract type` types. Functions are
; `function f(...) end` and the short form `f(x) = ...` (with `where` and a result type too); a method
; added to another module's function (`Base.show(io::IO, c::Cart) = ...`) keeps that module as its
; @receiver (Base.show). Macros are functions named without their `@`. A function named with a capital
; is an outer constructor (`Cart() = Cart(Item[])`): its struct stands for it, so that `Cart` names one
; symbol.

(module_definition
  name: (identifier) @name) @definition.module

((string_literal) @doc
  .
  (module_definition name: (identifier) @name) @definition.module)

; struct Name, struct Name{T}, struct Name <: Super, struct Name{T} <: Super{T}
(struct_definition
  (type_head [
    (identifier) @name
    (parametrized_type_expression . (identifier) @name)
    (binary_expression . [(identifier) @name (parametrized_type_expression . (identifier) @name)])])) @definition.struct

((string_literal) @doc
  .
  (struct_definition
    (type_head [
      (identifier) @name
      (parametrized_type_expression . (identifier) @name)
      (binary_expression . [(identifier) @name (parametrized_type_expression . (identifier) @name)])])) @definition.struct)

(abstract_definition
  (type_head [
    (identifier) @name
    (parametrized_type_expression . (identifier) @name)
    (binary_expression . [(identifier) @name (parametrized_type_expression . (identifier) @name)])])) @definition.type

; function f(...), f(...)::T, f(...) where T; function M.f(...)
((function_definition
  (signature [
    (call_expression . (identifier) @name)
    (typed_expression . (call_expression . (identifier) @name))
    (where_expression . [(call_expression . (identifier) @name) (typed_expression . (call_expression . (identifier) @name))])])) @definition.function
  (#match? @name "^[^A-Z]"))

(((string_literal) @doc
  .
  (function_definition
    (signature [
      (call_expression . (identifier) @name)
      (typed_expression . (call_expression . (identifier) @name))
      (where_expression . [(call_expression . (identifier) @name) (typed_expression . (call_expression . (identifier) @name))])])) @definition.function)
  (#match? @name "^[^A-Z]"))

(function_definition
  (signature [
    (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name))
    (typed_expression . (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name)))
    (where_expression . [
      (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name))
      (typed_expression . (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name)))])])) @definition.function

; f(x) = ..., f(x)::T = ..., f(x::T) where T = ..., M.f(x) = ...
((assignment
  . [
    (call_expression . (identifier) @name)
    (typed_expression . (call_expression . (identifier) @name))
    (where_expression . [(call_expression . (identifier) @name) (typed_expression . (call_expression . (identifier) @name))])]) @definition.function
  (#match? @name "^[^A-Z]"))

(((string_literal) @doc
  .
  (assignment
    . [
      (call_expression . (identifier) @name)
      (typed_expression . (call_expression . (identifier) @name))
      (where_expression . [(call_expression . (identifier) @name) (typed_expression . (call_expression . (identifier) @name))])]) @definition.function)
  (#match? @name "^[^A-Z]"))

(assignment
  . [
    (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name))
    (where_expression . (call_expression . (field_expression value: (identifier) @receiver . (identifier) @name)))]) @definition.function

(macro_definition
  (signature (call_expression . (identifier) @name))) @definition.function
