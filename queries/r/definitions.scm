; R definitions. @definition.<kind> on the whole node, @name on its name; `#` and roxygen `#'` comments
; directly above a definition are its doc (parse.py).
; A function is a function value assigned to a name (`f <- function(x)`, `f = function(x)`,
; `f <<- function(x)`); a class is `setRefClass("Name", ...)`, `setClass("Name", ...)` or
; `R6Class("Name", ...)`, and the functions named in a `list(...)` inside it (`methods = list(add =
; function(x) ...)`, `public = list(...)`) are its methods. `setGeneric("name", ...)` defines the
; function an S4 method is dispatched from.

(binary_operator
  lhs: (identifier) @name
  rhs: (function_definition)) @definition.function

; `Person <- setRefClass("Person", ...)` (the assignment, so that the comment above it is the doc), or a
; bare `setClass("Person", ...)` at the top of a file
((binary_operator
  lhs: (identifier)
  rhs: (call
    function: (identifier) @_class
    arguments: (arguments . (argument value: (string content: (string_content) @name))))) @definition.class
  (#any-of? @_class "setRefClass" "setClass" "R6Class"))

((program
  (call
    function: (identifier) @_class
    arguments: (arguments . (argument value: (string content: (string_content) @name)))) @definition.class)
  (#any-of? @_class "setRefClass" "setClass" "R6Class"))

((call
  function: (identifier) @_list
  arguments: (arguments (argument
    name: (identifier) @name
    value: (function_definition)) @definition.function))
  (#eq? @_list "list"))

((call
  function: (identifier) @_generic
  arguments: (arguments . (argument value: (string content: (string_content) @name)))) @definition.function
  (#eq? @_generic "setGeneric"))
