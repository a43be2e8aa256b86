; Solidity definitions. @definition.<kind> on the whole node, @name on its name; `///` and `/** */`
; comments directly above a definition are its doc (parse.py, NatSpec included).
; A contract is a class, an interface an interface, a library a module (its functions stay functions,
; called as `Lib.f()` or bound by `using Lib for T`). Events and custom errors are types: `emit X(...)`
; and `revert E(...)` then read as instantiations. A modifier is a function (a method of its contract).
; Constructors, fallback/receive and state variables are no symbols.

(contract_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(library_declaration
  name: (identifier) @name) @definition.module

(struct_declaration
  name: (identifier) @name) @definition.struct

(enum_declaration
  name: (identifier) @name) @definition.enum

(event_definition
  name: (identifier) @name) @definition.type

(error_declaration
  name: (identifier) @name) @definition.type

(user_defined_type_definition
  name: (identifier) @name) @definition.type

(function_definition
  name: (identifier) @name) @definition.function

(modifier_definition
  name: (identifier) @name) @definition.function
