; Lua definitions. @definition.<kind> on the whole node, @name on its name. `--` comments directly
; above a definition are its doc (parse.py).
; A table assigned at the top of a file (`local M = {}`, `Account = {}`) is a module: Lua modules and
; classes are tables, and `function M.f()` / `function M:f()` / `M.f = function() end` define its
; members (@receiver names the table: M.f, Account.deposit). `local function f()` and `function f()`
; are functions.

(function_declaration
  name: (identifier) @name) @definition.function

(function_declaration
  name: (dot_index_expression
    table: (_) @receiver
    field: (identifier) @name)) @definition.function

(function_declaration
  name: (method_index_expression
    table: (_) @receiver
    method: (identifier) @name)) @definition.method

; M.f = function() end
(assignment_statement
  (variable_list .
    name: (dot_index_expression
      table: (_) @receiver
      field: (identifier) @name))
  (expression_list . value: (function_definition))) @definition.function

; local f = function() end
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (function_definition)))) @definition.function

; { f = function() end } inside a table: a member of the table around it
(field
  name: (identifier) @name
  value: (function_definition)) @definition.function

; top-level tables: modules and classes
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name)
      (expression_list . value: (table_constructor)))) @definition.module)

(chunk
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (table_constructor))) @definition.module)
