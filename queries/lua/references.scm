; Lua references. The name node is captured as @name.reference.<kind>; @receiver is the table of
; `t.f()` / `obj:m()`; an import is `require("a.b")` (its string is both the name and @module: the
; whole module), bound to the local it is assigned to (@alias): `local util = require("a.util")`
; then `util.f()` is a member of the table a/util.lua defines (the registry's `exports_table_members`).
; @assigned is the variable a call's result is stored in, so `local c = Cart.new()` types a later
; `c:add()`; `return setmetatable(o, Cart)` says what a constructor returns.

; local util = require("shop.util") / require "shop.util"
((variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @alias)
    (expression_list . value: (function_call
      name: (identifier) @_require
      arguments: (arguments . (string content: (string_content) @module @name.reference.import))))))
  (#eq? @_require "require"))

; require("x") anywhere else (a statement, an argument, a global assignment)
((function_call
  name: (identifier) @_require
  arguments: (arguments . (string content: (string_content) @module @name.reference.import)))
  (#eq? @_require "require"))

; calls: f(), t.f(), obj:m()
(function_call
  name: (identifier) @name.reference.call)

(function_call
  name: (dot_index_expression
    table: (_) @receiver
    field: (identifier) @name.reference.call))

(function_call
  name: (method_index_expression
    table: (_) @receiver
    method: (identifier) @name.reference.call))

; a function passed by name through a table: `t.f` read without a call (`pcall(M.run)`, `x = M.f`)
(arguments
  (dot_index_expression
    table: (_) @receiver
    field: (identifier) @name.reference.attribute))

; the name of a definition is no reference: `function M.f()`, `M.f = function() end`
(function_declaration
  name: (dot_index_expression field: (identifier) @ignore))

(function_declaration
  name: (method_index_expression method: (identifier) @ignore))

; inheritance: setmetatable(Child, {__index = Base}) / setmetatable(Child, Base)
((function_call
  name: (identifier) @_setmetatable
  arguments: (arguments . (identifier) (table_constructor
    (field name: (identifier) @_index value: (identifier) @name.reference.inheritance))))
  (#eq? @_setmetatable "setmetatable")
  (#eq? @_index "__index"))

; local types: local c = Cart.new(), local c = make(), local c = obj:clone()
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @assigned)
    (expression_list . value: (function_call
      name: (dot_index_expression
        table: (_) @receiver
        field: (identifier) @name.reference.call)))))

(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @assigned)
    (expression_list . value: (function_call
      name: (method_index_expression
        table: (_) @receiver
        method: (identifier) @name.reference.call)))))

(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @assigned)
    (expression_list . value: (function_call
      name: (identifier) @name.reference.call))))

; local o = setmetatable({}, Cart): o is a Cart
((variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @assigned)
    (expression_list . value: (function_call
      name: (identifier) @_setmetatable
      arguments: (arguments . (_) . (identifier) @name.reference.attribute)))))
  (#eq? @_setmetatable "setmetatable"))

; what a function returns: return setmetatable(o, Cart), return Cart.new(), return o
((return_statement
  (expression_list . (function_call
    name: (identifier) @_setmetatable
    arguments: (arguments . (_) . (identifier) @name.reference.attribute)))) @returns
  (#eq? @_setmetatable "setmetatable"))

(return_statement
  (expression_list . [
    (function_call name: (identifier) @name.reference.call)
    (function_call name: (dot_index_expression table: (_) @receiver field: (identifier) @name.reference.call))
    (function_call name: (method_index_expression table: (_) @receiver method: (identifier) @name.reference.call))
    (identifier) @name.reference.attribute])) @returns

; a member copied into a local: `local assert_arg, raise = utils.assert_arg, utils.raise`
(variable_declaration
  (assignment_statement
    (expression_list
      (dot_index_expression
        table: (_) @receiver
        field: (identifier) @name.reference.attribute))))
