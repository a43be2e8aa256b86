; TypeScript locals (tsx/locals.scm inherits them): the common ECMAScript scopes and bindings
; (inherited), plus TypeScript's parameters, which wrap their name (`(a: A, b?: B, ...c: C[])`).
; inherits: ecmascript

(required_parameter pattern: (identifier) @local.definition)
(optional_parameter pattern: (identifier) @local.definition)
(required_parameter pattern: (rest_pattern (identifier) @local.definition))
(required_parameter pattern: (object_pattern (shorthand_property_identifier_pattern) @local.definition))
(required_parameter pattern: (object_pattern (pair_pattern value: (identifier) @local.definition)))
(required_parameter pattern: (array_pattern (identifier) @local.definition))

; the parameters of a type (`cb: (handler: H) => void`, `{ m(a: A): void }`) are bound in that type
; only, not in the function whose parameter list holds it
[(function_type) (constructor_type) (call_signature) (construct_signature) (method_signature)
 (abstract_method_signature) (function_signature)] @local.scope
