; Elixir definitions. Everything is a call: `defmodule Shop.Cart do ... end` is a call of defmodule
; with the alias as its first argument. A module is named by its alias as written (`Shop.Cart`; a
; `defmodule Line` nested in it is `Shop.Cart.Line`), and its `def`s are its functions
; (Shop.Cart.add). `moduledoc` inside a module and `doc` directly above a def are their docs.

((call
  target: (identifier) @_keyword
  (arguments . (alias) @name)) @definition.module
  (#any-of? @_keyword "defmodule" "defimpl"))

((call
  target: (identifier) @_keyword
  (arguments . (alias) @name)) @definition.interface
  (#eq? @_keyword "defprotocol"))

((call
  target: (identifier) @_keyword
  (arguments . (alias) @name)
  (do_block
    (unary_operator
      operand: (call
        target: (identifier) @_attribute
        (arguments . (string) @doc))))) @definition.module
  (#eq? @_keyword "defmodule")
  (#eq? @_attribute "moduledoc"))

; def f(x), def f(x) when guard, def f (no parentheses); defp, defmacro, defguard, defdelegate...
((call
  target: (identifier) @_keyword
  (arguments .
    [(call target: (identifier) @name)
     (binary_operator left: (call target: (identifier) @name) operator: "when")
     (identifier) @name])) @definition.function
  (#any-of? @_keyword "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp"))

; a doc attribute directly above a def (or above its spec attribute)
((unary_operator
  operand: (call target: (identifier) @_attribute (arguments . (string) @doc)))
 .
 (call
  target: (identifier) @_keyword
  (arguments .
    [(call target: (identifier) @name)
     (binary_operator left: (call target: (identifier) @name) operator: "when")
     (identifier) @name])) @definition.function
  (#eq? @_attribute "doc")
  (#any-of? @_keyword "def" "defmacro" "defguard" "defdelegate"))

((unary_operator
  operand: (call target: (identifier) @_attribute (arguments . (string) @doc)))
 .
 (unary_operator)
 .
 (call
  target: (identifier) @_keyword
  (arguments .
    [(call target: (identifier) @name)
     (binary_operator left: (call target: (identifier) @name) operator: "when")
     (identifier) @name])) @definition.function
  (#eq? @_attribute "doc")
  (#any-of? @_keyword "def" "defmacro" "defguard" "defdelegate"))
