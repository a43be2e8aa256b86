; Elixir references. Modules are global dotted names (codeqa/graph/dotted.py): `alias Shop.Cart`
; binds Cart to the module Shop.Cart (the alias capture: the bound name is its last segment), `alias
; Shop.{Cart, Item}` binds each, `alias Shop.Tax, as: T` binds T; `import Shop.Util` brings Util's
; functions (a whole-module import without alias acts as a star). A remote call `Cart.add(x)` has
; the module as its receiver; a call on a variable (`cart.items`, `mod.f()`) is a field or a dynamic
; module and no reference. `use`, `require`, `behaviour` attributes and any other module name are type
; references to that module.

; alias Shop.Cart
((call
  target: (identifier) @_keyword
  (arguments . (alias) @name.reference.import @module @alias .))
  (#eq? @_keyword "alias"))

; alias Shop.Tax, as: T
((call
  target: (identifier) @_keyword
  (arguments
    . (alias) @name.reference.import @module
    (keywords (pair key: (keyword) @_as value: (alias) @alias))))
  (#eq? @_keyword "alias")
  (#match? @_as "^as:"))

; alias Shop.{Item, Pricing}
((call
  target: (identifier) @_keyword
  (arguments . (dot left: (alias) @module right: (tuple (alias) @name.reference.import @alias))))
  (#eq? @_keyword "alias"))

; import Shop.Util; import Shop.Util, only: [round2: 1]
((call
  target: (identifier) @_keyword
  (arguments . (alias) @name.reference.import @module))
  (#eq? @_keyword "import"))

; remote calls: Shop.Cart.add(x), Cart.add(x), x |> Cart.add(), &Cart.add/2, __MODULE__.f()
(call
  target: (dot left: (alias) @receiver right: (identifier) @name.reference.call))

((call
  target: (dot left: (identifier) @receiver right: (identifier) @name.reference.call))
  (#eq? @receiver "__MODULE__"))

; local calls: add(x), x |> add(); a captured local function: &add/2
(call
  target: (identifier) @name.reference.call)

(unary_operator
  operator: "&"
  operand: (binary_operator left: (identifier) @name.reference.call operator: "/"))

; struct literals and patterns: %Item{}, %Shop.Item{price: 1}
(struct (alias) @name.reference.instantiation)

; any other module name: use GenServer, behaviour Shop.Priced, defimpl ..., for: Shop.Item, Cart as a value
(alias) @name.reference.type

; no reference: the name `alias Shop.Tax, as: T` binds, the prefix of `alias Shop.{Item, Pricing}`
((pair key: (keyword) @_as value: (alias) @ignore)
  (#match? @_as "^as:"))

((call
  target: (identifier) @_keyword
  (arguments . (dot left: (alias) @ignore right: (tuple))))
  (#eq? @_keyword "alias"))

; no reference: a module attribute's name (`@timeout 5_000` is no call of timeout), and the function
; a typespec describes (the spec attribute's head `f(stage, opts) :: t`, also before `when`)
(unary_operator operator: "@" operand: (call target: (identifier) @ignore))

((unary_operator
  operand: (call
    target: (identifier) @_attribute
    (arguments (binary_operator left: (call target: (identifier) @ignore) operator: "::"))))
  (#any-of? @_attribute "spec" "callback" "macrocallback"))

((unary_operator
  operand: (call
    target: (identifier) @_attribute
    (arguments (binary_operator
      left: (binary_operator left: (call target: (identifier) @ignore) operator: "::")
      operator: "when"))))
  (#any-of? @_attribute "spec" "callback" "macrocallback"))
