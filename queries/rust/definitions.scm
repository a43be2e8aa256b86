; Rust definitions. @definition.<kind> on the whole node, @name on its name. `///` comments above
; an item (attributes in between are skipped) are picked up by parse.py; `//!` inner docs are not.
; An `impl X` / `impl T for X` block is a qualifying scope, not a symbol: its functions become
; methods `X.m`, attached to X even when X is defined in another file.

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(type_item
  name: (type_identifier) @name) @definition.type

(function_item
  name: (identifier) @name) @definition.function

; trait methods without a default body
(function_signature_item
  name: (identifier) @name) @definition.function

; inline modules (`mod tests { ... }`); `mod x;` names a file and is an import (references.scm)
(mod_item
  name: (identifier) @name
  body: (declaration_list)) @definition.module

(macro_definition
  name: (identifier) @name) @definition.function

(impl_item
  type: [(type_identifier) @name
         (generic_type type: (type_identifier) @name)
         (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl

; impl Trait for &'a mut Type<..>
(impl_item
  type: (reference_type
    type: [(type_identifier) @name
           (generic_type type: (type_identifier) @name)])) @definition.impl
