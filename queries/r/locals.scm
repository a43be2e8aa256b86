; R local scopes and the names bound in them (tree-sitter locals convention): a name read inside a
; function that binds it (a parameter, a local assignment) is a local variable, not a symbol of ours
; (`function(data, price) vapply(data, price, 1)` passes its parameter, not the function `price`).

(function_definition) @local.scope

(parameter name: (identifier) @local.definition)

(binary_operator
  lhs: (identifier) @local.definition
  operator: ["<-" "="])

(for_statement variable: (identifier) @local.definition)
