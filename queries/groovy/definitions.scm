; Groovy definitions. tree-sitter-groovy reads a file as commands of units (names, calls, blocks) and
; knows no keyword, so a definition is a shape: a keyword unit before a name, or a call followed by a
; body with a type, `def` or modifier before it. @definition.<kind> is on the whole command, @name on
; its name. Functions inside a class are methods; a closure assigned to a name is a function.
; Fields and properties are not symbols (as in Java and Kotlin).

; class Foo / class Foo<T> extends Bar / interface / trait / enum (the name sits in the body's block
; when nothing follows it before `{`)
((_
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))
   (block . (unit . (identifier) @name .))
   (block . (unit . (generics_class . (identifier) @name)))]) @definition.class
 (#eq? @_keyword "class"))

((_
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))
   (block . (unit . (identifier) @name .))
   (block . (unit . (generics_class . (identifier) @name)))]) @definition.interface
 (#eq? @_keyword "interface"))

((_
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))
   (block . (unit . (identifier) @name .))
   (block . (unit . (generics_class . (identifier) @name)))]) @definition.trait
 (#eq? @_keyword "trait"))

((_
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (block . (unit . (identifier) @name .))]) @definition.enum
 (#eq? @_keyword "enum"))

; ... the same where a line the grammar cannot read made the class's command an ERROR node (its
; methods are still commands of their own)
((ERROR
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))]) @definition.class
 (#eq? @_keyword "class"))

((ERROR
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))]) @definition.interface
 (#eq? @_keyword "interface"))

((ERROR
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name .)
   (unit . (generics_class . (identifier) @name))]) @definition.trait
 (#eq? @_keyword "trait"))

; def name(...) { }, Type name(...) { }, static <T> T name(...) { }: a body after a call, with a return
; type, `def` or a modifier before it (not `new Foo() { }`, `else if (x) { }`, `return f() { }`)
((_
  (unit . (identifier) @_before .)
  .
  (block . (unit . (func . (identifier) @name . (arg_block)) .) . "{")) @definition.function
 (#not-any-of? @_before "new" "else" "return" "throw" "assert" "in" "case" "yield" "println" "print")
 (#not-any-of? @name "if" "for" "while" "switch" "catch" "synchronized"))

(_
  [(unit . (generics_class)) (list)]
  .
  (block . (unit . (func . (identifier) @name . (arg_block)) .) . "{")) @definition.function

; ... `void m() throws IOException { }`: the body's block starts at the exception's name
((_
  (unit . (identifier) @_before .)
  .
  (unit . (func . (identifier) @name . (arg_block)) .)
  .
  (unit . (identifier) @_throws .)) @definition.function
 (#eq? @_throws "throws"))

; a constructor: `Foo(args) { }` first in its command, named like a class, in a class's body (not a
; builder's `Person(name: n) { }` in a closure)
((block
  .
  [(unit . (identifier) @_class .) (unit . (generics_class . (identifier) @_class))]
  .
  "{"
  [(command . (block . (unit . (func . (identifier) @name . (arg_block)) .) . "{"))
   (end_command . (block . (unit . (func . (identifier) @name . (arg_block)) .) . "{"))] @definition.function)
 (#match? @_class "^[A-Z]")
 (#match? @name "^[A-Z]"))

((ERROR
  "{"
  (command . (block . (unit . (func . (identifier) @name . (arg_block)) .) . "{")) @definition.function)
 (#match? @name "^[A-Z]"))

; an abstract or interface method: `Type name(args)` alone in its command
((_
  (unit . (identifier) @_type .)
  .
  (unit . (func . (identifier) @name . (arg_block)) .) .) @definition.function
 (#match? @_type "^([A-Z]|void$|def$|abstract$|boolean$|int$|long$|double$|float$|char$|byte$|short$)"))

; a closure assigned to a name: `def greet = { name -> ... }`, `Closure c = { }`
(_
  (unit . (identifier) @name .)
  .
  (block . (operators "=") . "{")) @definition.function
