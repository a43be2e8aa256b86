; Ruby definitions. @definition.<kind> on the whole node, @name on its name. `#` comments directly
; above a class, module or method (also the first one inside a module) are its doc (parse.py).
; A `def` inside a class is a method (Cart.add); `def self.x` is a method of the enclosing class or
; module; a `def` at the top level or directly in a module is a function.

(class
  name: (constant) @name) @definition.class

(class
  name: (scope_resolution name: (constant) @name)) @definition.class

(module
  name: (constant) @name) @definition.module

(module
  name: (scope_resolution name: (constant) @name)) @definition.module

(method
  name: (_) @name) @definition.function

(singleton_method
  name: (_) @name) @definition.method
