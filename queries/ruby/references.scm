; Ruby references. The name node is captured as @name.reference.<kind>; @module is the path of a
; require (every top-level name of that file becomes visible: graph.py), @receiver the object of
; `x.m` or the scope of `Outer::Inner`, @assigned the variable a `Foo.new` is stored in, so a
; later `x.m` resolves on Foo.

; require_relative "item", require "shop/cart", load "x.rb"
((call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @module @name.reference.import)))
  (#match? @_require "^(require|require_relative|load)$"))

; inheritance: class Cart < Base; include Enumerable; extend Forwardable; prepend Logging
(superclass (constant) @name.reference.inheritance)

(superclass
  (scope_resolution
    scope: (_) @receiver
    name: (constant) @name.reference.inheritance))

((call
  !receiver
  method: (identifier) @_mixin
  arguments: (argument_list (constant) @name.reference.inheritance))
  (#match? @_mixin "^(include|extend|prepend)$"))

((call
  !receiver
  method: (identifier) @_mixin
  arguments: (argument_list
    (scope_resolution
      scope: (_) @receiver
      name: (constant) @name.reference.inheritance)))
  (#match? @_mixin "^(include|extend|prepend)$"))

; instantiations: Foo.new, Outer::Foo.new
((call
  receiver: (constant) @name.reference.instantiation
  method: (identifier) @_new)
  (#eq? @_new "new"))

((call
  receiver: (scope_resolution
    scope: (_) @receiver
    name: (constant) @name.reference.instantiation)
  method: (identifier) @_new)
  (#eq? @_new "new"))

; calls: m(x), x.m, Foo.m, Outer::Foo.m
(call
  !receiver
  method: (identifier) @name.reference.call)

(call
  receiver: (_) @receiver
  method: (identifier) @name.reference.call)

; constants: Foo, Outer::Foo
(constant) @name.reference.type

(scope_resolution
  scope: (_) @receiver
  name: (constant) @name.reference.type)

; local types: item = Item.new(...) -> a later item.m resolves on Item
((assignment
  left: (identifier) @assigned
  right: (call
    receiver: (constant) @name.reference.instantiation
    method: (identifier) @_new))
  (#eq? @_new "new"))

((assignment
  left: (identifier) @assigned
  right: (call
    receiver: (scope_resolution
      scope: (_) @receiver
      name: (constant) @name.reference.instantiation)
    method: (identifier) @_new))
  (#eq? @_new "new"))
