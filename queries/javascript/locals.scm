; JavaScript locals: the common ECMAScript scopes and bindings (inherited), plus JavaScript's
; parameters, which stand bare in the list (`f(a, b = 1, ...rest)`).
; inherits: ecmascript

(formal_parameters (identifier) @local.definition)
(formal_parameters (assignment_pattern left: (identifier) @local.definition))
(formal_parameters (rest_pattern (identifier) @local.definition))
(formal_parameters (object_pattern (shorthand_property_identifier_pattern) @local.definition))
(formal_parameters (object_pattern (pair_pattern value: (identifier) @local.definition)))
(formal_parameters (array_pattern (identifier) @local.definition))
