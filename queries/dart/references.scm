; Dart references. The name node is captured as @name.reference.<kind>; @receiver is what
; `obj.name(...)` is reached through (the grammar writes `a.b.c()` flat: a name and selectors, so a
; receiver longer than one name is the selector before, which gives no guess), @module an import's
; URI, @alias its `as` prefix, @assigned the variable, parameter or field a declared type or a call
; belongs to, so a later `x.m()` resolves.

; import 'src/item.dart';  import 'package:inventory/inventory.dart';  export ...;  part ...; part of ...
; (the whole library: its public names become visible)
(import_specification
  .
  (configurable_uri (uri (string_literal) @name.reference.import @module))
  .)

(library_export
  (configurable_uri (uri (string_literal) @name.reference.import @module)))

(part_directive
  (uri (string_literal) @name.reference.import @module))

(part_of_directive
  (uri (string_literal) @name.reference.import @module))

; import 'dart:math' as math: the library bound to a prefix
(import_specification
  (configurable_uri (uri (string_literal) @name.reference.import @module))
  .
  (identifier) @alias)

; import 'src/zone.dart' show Zone, Cold: the names shown
(import_specification
  (configurable_uri (uri (string_literal) @module))
  (combinator "show" (identifier) @name.reference.import))

; import 'x.dart' hide Y: the rest of the library
(import_specification
  (configurable_uri (uri (string_literal) @name.reference.import @module))
  (combinator "hide"))

; inheritance: extends, with, implements, mixin ... on
(superclass (type_identifier) @name.reference.inheritance)

(mixins (type_identifier) @name.reference.inheritance)

(interfaces (type_identifier) @name.reference.inheritance)

(mixin_declaration (type_identifier) @name.reference.inheritance)

; calls: f(), Foo() (an instantiation once Foo resolves to a class), obj.m(), Type.m(), this.m()
(_
  (identifier) @name.reference.call
  .
  (selector (argument_part)))

(_
  [(identifier) (this) (super) (selector)] @receiver
  .
  (selector [(unconditional_assignable_selector (identifier) @name.reference.call)
             (conditional_assignable_selector (identifier) @name.reference.call)])
  .
  (selector (argument_part)))

; super.m(): the grammar puts this selector beside `super`
(_
  (super) @receiver
  .
  (unconditional_assignable_selector (identifier) @name.reference.call))

; new Foo(), const Foo()
(new_expression (type_identifier) @name.reference.instantiation)

(const_object_expression (type_identifier) @name.reference.instantiation)

; type uses
(type_identifier) @name.reference.type

; values: `Inventory.empty` / `Zone.cold` reach through a name; a name passed as an argument
(_
  (identifier) @name.reference.attribute
  .
  (selector [(unconditional_assignable_selector) (conditional_assignable_selector)]))

(argument (identifier) @name.reference.attribute)

; named arguments' labels are no references (`Item(sku: s)`)
(named_argument (label (identifier) @ignore))

; typed variables: `Item x = ...`, `final Item? x;`, fields `final List<Item> items`, parameters
(initialized_variable_definition
  (type_identifier) @name.reference.type
  name: (identifier) @assigned)

(declaration
  (type_identifier) @name.reference.type
  (initialized_identifier_list (initialized_identifier (identifier) @assigned)))

(formal_parameter
  (type_identifier) @name.reference.type
  name: (identifier) @assigned)

; `final x = Foo()`, `var x = make()`, `final x = repo.find()`, `var x = new Foo()`: the value's type
; is the variable's
(initialized_variable_definition
  name: (identifier) @assigned
  value: (identifier) @name.reference.call
  .
  value: (selector (argument_part)))

(initialized_variable_definition
  name: (identifier) @assigned
  value: (identifier) @receiver
  .
  value: (selector (unconditional_assignable_selector (identifier) @name.reference.call))
  .
  value: (selector (argument_part)))

(initialized_variable_definition
  name: (identifier) @assigned
  value: (new_expression (type_identifier) @name.reference.instantiation))
