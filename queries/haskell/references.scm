; Haskell references. Imports name modules in full (codeqa/graph/index.py: Data.Map -> .../Data/Map.hs):
; `import A.B` and `import A.B hiding (f)` bring what A.B exports (a star import), as does an import
; list with `T(..)` (a type's constructors and fields, not modelled one by one); `import A.B (f, T)`
; names f and T; `import qualified A.B as C` binds C and `import qualified A.B` binds A.B, so that
; `C.f` and `A.B.f` are members of that module. Function application is a call of the name in head
; position; any other variable is a value use; type names (signatures, fields, instance heads,
; deriving clauses) are types. Names the file neither defines nor imports are the Prelude's or
; another project's and are dropped (explicit_imports).

; import A.B / import A.B hiding (..) / import A.B (T(..)): everything it exports
((import module: (module) @name.reference.import @module !alias !names) @_import
  (#not-match? @_import "qualified"))

((import module: (module) @name.reference.import @module !alias) @_import
  (#match? @_import "hiding")
  (#not-match? @_import "qualified"))

((import module: (module) @name.reference.import @module !alias
   names: (import_list (import_name children: (children (all_names))))) @_import
  (#not-match? @_import "qualified|hiding"))

; import qualified A.B: binds A.B
((import module: (module) @name.reference.import @module @alias !alias) @_import
  (#match? @_import "qualified"))

; import [qualified] A.B as C: binds C
(import module: (module) @name.reference.import @module alias: (module) @alias)

; import A.B (f, T, T(C, field)): names them
((import
   module: (module) @module
   names: (import_list (import_name [(variable) (name) (constructor)] @name.reference.import))) @_import
  (#not-match? @_import "hiding"))

((import
   module: (module) @module
   names: (import_list (import_name children: (children [(variable) (constructor) (name)] @name.reference.import)))) @_import
  (#not-match? @_import "hiding"))

; what `hiding` excludes is no reference
(import_list (import_name [(variable) (name) (constructor)] @ignore))
(import_list (import_name children: (children [(variable) (constructor) (name)] @ignore)))

; calls: the name in head position of an application, plain or qualified (`M.insert k v`, `Item x y`)
(apply function: (variable) @name.reference.call)
(apply function: (constructor) @name.reference.call)
(apply function: (qualified module: (module) @receiver id: [(variable) (constructor)] @name.reference.call))

; operator sections and infix use of a function: x `div` y
(infix operator: (infix_id (variable) @name.reference.call))

; any other use of a name: a function passed as a value, a constructor as a value or pattern
(variable) @name.reference.attribute
(constructor) @name.reference.call
(qualified module: (module) @receiver id: (variable) @name.reference.attribute)
(qualified module: (module) @receiver id: (constructor) @name.reference.call)

; types: in signatures, fields, instance heads, deriving clauses, plain or qualified (`M.Map k v`)
(name) @name.reference.type
(qualified module: (module) @receiver id: (name) @name.reference.type)

; no reference: the exports list names what this file defines (a re-export is modelled by imports)
(export [(variable) (name)] @ignore)
(children [(variable) (constructor) (name)] @ignore)

; no reference: an equation's own name (its first is the definition), an instance method's (it
; implements the class's method), a where or let binding's, a constructor where its type declares it
(function name: (variable) @ignore)
(bind name: (variable) @ignore)
(data_constructor constructor: [(prefix name: (constructor) @ignore) (record name: (constructor) @ignore)])
(newtype_constructor name: (constructor) @ignore)
