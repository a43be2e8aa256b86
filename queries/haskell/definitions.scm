; Haskell definitions. A file's module header (`module Shop.Cart (...) where`) is a module symbol
; named in full; the definitions after it are top-level, not its members. data and newtype are
; classes, type synonyms types, type classes interfaces. A type's constructors (those not named like
; the type), record fields and a class's method signatures are its members, and names of the module
; too (the registry's members_in_module_scope). A function is its signature and its equations, one
; symbol (the registry's equations: consecutive definitions of one name merge); a Haddock comment
; above the first is its doc. Instances are no symbols: their equations implement the class's methods.
; Bindings in where and let clauses are locals (locals.scm).

(header module: (module) @name) @definition.module

(data_type name: (name) @name) @definition.class
(newtype name: (name) @name) @definition.class
(type_synomym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface

; constructors: `Circle Double`, `Item { .. }`, `a :+ b` (not `data Item = Item ...`: the type's name)
((data_type
  name: (name) @_type
  constructors: (data_constructors
    (data_constructor constructor: [(prefix name: (constructor) @name) (record name: (constructor) @name)]) @definition.function))
  (#not-eq? @name @_type))

((newtype
  name: (name) @_type
  constructor: (newtype_constructor name: (constructor) @name) @definition.function)
  (#not-eq? @name @_type))

; record fields: `{ itemName :: String, itemCents :: Int }`
(field name: (field_name (variable) @name)) @definition.function

; class methods: their signatures
(class_declarations (signature name: (variable) @name) @definition.function)

; top-level functions and values: a signature, its equations, a binding without parameters
(declarations (signature name: (variable) @name) @definition.function)
(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.function)
