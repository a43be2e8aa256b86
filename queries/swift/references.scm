; Swift references. The name node is captured as @name.reference.<kind>; @receiver is what
; `obj.name(...)` is reached through, @assigned the variable, parameter or property a declared type or
; a call belongs to, so a later `x.m()` resolves. Swift has no per-file imports inside a module: an
; `import Target` (`@testable import Target`) names a whole module (a SwiftPM target folder) and
; makes its names visible; `import Foundation` names no file of ours.

; import Foundation / @testable import Splash / import struct Foo.Bar: the whole module
(import_declaration
  (identifier) @name.reference.import @module)

; inheritance and conformance: `class A: B, P`, `extension A: Q`, `protocol P: Q`, `Outer.Base<T>`
(inheritance_specifier
  inherits_from: (user_type (type_identifier) @name.reference.inheritance .))

(inheritance_specifier
  inherits_from: (user_type (type_identifier) @name.reference.inheritance . (type_arguments)))

; calls: f(), Foo() (an instantiation once Foo resolves to a class), obj.m(), Type.m(), self.m(),
; super.init()
(call_expression
  (simple_identifier) @name.reference.call)

(call_expression
  (navigation_expression
    target: (_) @receiver
    suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))

; the grammar reads `2 * f(x)`, `a + b.f(x)` and `!f(x)` as a call of the whole operation: the callee
; is its last operand
(call_expression
  [(multiplicative_expression rhs: (simple_identifier) @name.reference.call)
   (additive_expression rhs: (simple_identifier) @name.reference.call)
   (prefix_expression target: (simple_identifier) @name.reference.call)])

(call_expression
  [(multiplicative_expression
     rhs: (navigation_expression
       target: (_) @receiver
       suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))
   (additive_expression
     rhs: (navigation_expression
       target: (_) @receiver
       suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))
   (prefix_expression
     target: (navigation_expression
       target: (_) @receiver
       suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))])

; type uses: the last name of a (possibly qualified or generic) type
(user_type (type_identifier) @name.reference.type .)

(user_type (type_identifier) @name.reference.type . (type_arguments))

; values: `Shelf.empty()` / `Zone.cold` reach through a name; a name passed as an argument
(navigation_expression
  target: (simple_identifier) @name.reference.attribute)

(value_argument
  value: (simple_identifier) @name.reference.attribute)

; argument labels are no references (`Shelf(zone: z)`)
(value_argument_label (simple_identifier) @ignore)

; typed variables: `let x: Foo`, `var x: Foo?`, parameters `(x: Foo)`, `(_ x: inout Foo?)`
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @assigned)
  (type_annotation
    [(user_type (type_identifier) @name.reference.type .)
     (user_type (type_identifier) @name.reference.type . (type_arguments))
     (optional_type (user_type (type_identifier) @name.reference.type .))
     (optional_type (user_type (type_identifier) @name.reference.type . (type_arguments)))]))

(parameter
  name: (simple_identifier) @assigned
  [(user_type (type_identifier) @name.reference.type .)
   (user_type (type_identifier) @name.reference.type . (type_arguments))
   (optional_type (user_type (type_identifier) @name.reference.type .))
   (optional_type (user_type (type_identifier) @name.reference.type . (type_arguments)))])

; `let x = Foo()`, `let x = make()`, `let x = repo.find()`, `let x = try repo.find()`: the value's
; type is the variable's
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @assigned)
  value: (call_expression (simple_identifier) @name.reference.call))

(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @assigned)
  value: (call_expression
    (navigation_expression
      target: (_) @receiver
      suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call))))

(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @assigned)
  value: (try_expression
    expr: (call_expression
      (navigation_expression
        target: (_) @receiver
        suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))))
