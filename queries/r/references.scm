; R references. The name node is captured as @name.reference.<kind>; @receiver is the object of
; `obj$method()` or the package of `pkg::f()`. `source("x.R")` is an import of the whole file: its
; functions become visible (the registry's bare_import_is_star, transitively), the path looked up
; next to the sourcing file and then by its last segments. `library(pkg)` names another project.
; A function passed by name (`vapply(xs, price, 1)`, `Map(f, xs)`) is an attribute reference.

((call
  function: (identifier) @_source
  arguments: (arguments . (argument value: (string content: (string_content) @module @name.reference.import))))
  (#any-of? @_source "source" "sys.source"))

; calls: f(x), obj$m(x), pkg::f(x)
(call
  function: (identifier) @name.reference.call)

(call
  function: (extract_operator
    lhs: (_) @receiver
    rhs: (identifier) @name.reference.call))

(call
  function: (namespace_operator
    lhs: (_) @receiver
    rhs: (identifier) @name.reference.call))

; S4 / reference classes by name: new("Person"), setMethod("greet", "Person", ...), contains = "Base"
((call
  function: (identifier) @_new
  arguments: (arguments . (argument value: (string content: (string_content) @name.reference.instantiation))))
  (#eq? @_new "new"))

((call
  function: (identifier) @_method
  arguments: (arguments . (argument) . (argument value: (string content: (string_content) @name.reference.type))))
  (#eq? @_method "setMethod"))

((argument
  name: (identifier) @_contains
  value: (string content: (string_content) @name.reference.inheritance))
  (#any-of? @_contains "contains" "inherit"))

((argument
  name: (identifier) @_inherit
  value: (identifier) @name.reference.inheritance)
  (#eq? @_inherit "inherit"))

; a function passed by name
(argument
  !name
  value: (identifier) @name.reference.attribute)

(argument
  name: (identifier) @_fun
  value: (identifier) @name.reference.attribute)

; a value built by a call of ours: `x <- make_cart()`, `c <- Cart$new()`
(binary_operator
  lhs: (identifier) @assigned
  rhs: (call function: (identifier) @name.reference.call))

(binary_operator
  lhs: (identifier) @assigned
  rhs: (call function: (extract_operator
    lhs: (identifier) @name.reference.attribute
    rhs: (identifier) @_new))
  (#eq? @_new "new"))

((call function: (extract_operator
  lhs: (identifier) @name.reference.attribute
  rhs: (identifier) @_new))
  (#eq? @_new "new"))
