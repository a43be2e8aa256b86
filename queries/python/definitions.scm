; Python definitions. Captures: @definition.<kind> on the whole node, @name, @doc (docstring).
; A function nested directly in a class becomes a method in parse.py.

(class_definition
  name: (identifier) @name
  body: (block . (string) @doc)) @definition.class

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (string) @doc)) @definition.function

(function_definition
  name: (identifier) @name) @definition.function
