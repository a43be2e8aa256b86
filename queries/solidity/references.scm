; Solidity references. The name node is captured as @name.reference.<kind>; @receiver is the object of
; `x.f()` (a library `Math.min()`, a variable `token.transfer()`, a cast `IERC20(a).approve()`), @module
; the imported file, @alias the name an import binds, @assigned the variable a declared contract, struct
; or interface type belongs to, so a later `x.f()` resolves on that type.
; Imports: `import "./X.sol";` makes every top-level name of X.sol (and what it imports) visible (the
; registry's bare_import_is_star, transitively); `import {A, B as C} from "./X.sol";` binds names;
; `import * as L from "./X.sol";` and `import "./X.sol" as L;` bind the file to L.

; import "./X.sol";  import "./X.sol" as L;
(import_directive
  !import_name
  alias: (identifier)? @alias
  source: (string) @module @name.reference.import)

; import {A, B as C} from "./X.sol";  each name with the alias written after it
(import_directive
  import_name: (identifier) @name.reference.import
  .
  alias: (identifier) @alias
  source: (string) @module)

(import_directive
  import_name: (identifier) @name.reference.import
  .
  source: (string) @module)

(import_directive
  import_name: (identifier) @name.reference.import
  .
  import_name: (identifier)
  source: (string) @module)

; inheritance: contract A is B, C(args); a qualified base `L.Base` names its last part
(inheritance_specifier
  ancestor: (user_defined_type . (identifier) @name.reference.inheritance .))

(inheritance_specifier
  ancestor: (user_defined_type (identifier) @receiver . (identifier) @name.reference.inheritance .))

; calls: f(), Lib.f(), x.f(), IERC20(a).f(), super.f(); a call of a contract or struct is a cast or
; a struct literal (an instantiation, once resolved)
(call_expression
  function: (expression (identifier) @name.reference.call))

(call_expression
  function: (expression (member_expression
    object: (_) @receiver
    property: (identifier) @name.reference.call)))

; a function called with named arguments or a value: `f{value: 1}(x)`
(call_expression
  function: (expression (struct_expression
    type: (expression (member_expression
      object: (_) @receiver
      property: (identifier) @name.reference.call)))))

; emit Moved(...), emit L.Moved(...), revert Bad(...), and modifiers / base constructors in a header
(emit_statement
  name: (expression (identifier) @name.reference.call))

(emit_statement
  name: (expression (member_expression
    object: (_) @receiver
    property: (identifier) @name.reference.call)))

(revert_statement
  error: (expression (identifier) @name.reference.call))

(revert_statement
  error: (expression (member_expression
    object: (_) @receiver
    property: (identifier) @name.reference.call)))

(modifier_invocation
  . (identifier) @name.reference.call .)

(modifier_invocation
  (identifier) @receiver . (identifier) @name.reference.call)

; using Math for uint256;  using {f, g} for T;
(using_directive
  (type_alias (identifier) @name.reference.type .))

; type uses: declarations, parameters, returns, mappings, `new Foo()`, `type(Foo)`
(user_defined_type . (identifier) @name.reference.type .)

(user_defined_type (identifier) @receiver . (identifier) @name.reference.type .)

(new_expression
  name: (type_name (user_defined_type . (identifier) @name.reference.instantiation .)))

; values: `Kind.A`, `Errors.X` (a capitalised name read for a member: a contract, library or enum)
((member_expression
  object: (identifier) @name.reference.attribute)
  (#match? @name.reference.attribute "^[A-Z]"))

; typed variables: `IERC20 token = ...`, parameters, state variables, struct members
(variable_declaration
  type: (type_name (user_defined_type . (identifier) @name.reference.type .))
  name: (identifier) @assigned)

(parameter
  type: (type_name (user_defined_type . (identifier) @name.reference.type .))
  name: (identifier) @assigned)

(state_variable_declaration
  type: (type_name (user_defined_type . (identifier) @name.reference.type .))
  name: (identifier) @assigned)
