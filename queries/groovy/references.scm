; Groovy references. tree-sitter-groovy has no expression nodes: a unit is a flat chain of names and
; calls (`a.b.c()` is identifier, identifier, func), so a receiver is captured as the chain's first and
; last name before the call (parse.py reads the text between). @module is an import's path, @alias its
; `as` name, @assigned the variable a declared type, `new Foo()` or a call's value goes to.
; Keywords are names to this grammar: the patterns name them where they matter.

; import a.b.C  /  import a.b.C as D  /  import static a.b.C.m  /  import a.b.*  (the `*` reads as a name)
((command
  (unit . (identifier) @_import .)
  .
  (unit . (identifier) @module . (identifier) @name.reference.import .) .)
 (#eq? @_import "import"))

((command
  (unit . (identifier) @_import .)
  .
  (unit . (identifier) @module (identifier) @module . (identifier) @name.reference.import .) .)
 (#eq? @_import "import"))

((command
  (unit . (identifier) @_import .)
  .
  (unit . (identifier) @_static .)
  .
  (unit . (identifier) @module (identifier) @module . (identifier) @name.reference.import .) .)
 (#eq? @_import "import")
 (#eq? @_static "static"))

((command
  (unit . (identifier) @_import .)
  .
  (unit . (identifier) @module . (identifier) @name.reference.import .)
  .
  (unit . (identifier) @_as .)
  .
  (unit . (identifier) @alias .) .)
 (#eq? @_import "import")
 (#eq? @_as "as"))

((command
  (unit . (identifier) @_import .)
  .
  (unit . (identifier) @module (identifier) @module . (identifier) @name.reference.import .)
  .
  (unit . (identifier) @_as .)
  .
  (unit . (identifier) @alias .) .)
 (#eq? @_import "import")
 (#eq? @_as "as"))

; the names of `package a.b` and of an import (its path, its alias) are no references
((command
  (unit . (identifier) @_keyword .)
  (unit (identifier) @ignore))
 (#any-of? @_keyword "package" "import"))

; inheritance: `extends A`, `implements A, B<T>` (the last name before `{` sits in the body's block)
((_
  (unit . (identifier) @_keyword .)
  .
  [(unit . (identifier) @name.reference.inheritance .)
   (unit . (generics_class . (identifier) @name.reference.inheritance))
   (block . (unit . (identifier) @name.reference.inheritance .))
   (block . (unit . (generics_class . (identifier) @name.reference.inheritance)))])
 (#any-of? @_keyword "extends" "implements"))

((_
  (unit . (identifier) @_keyword .)
  (arg_spliter)
  .
  [(unit . (identifier) @name.reference.inheritance .)
   (unit . (generics_class . (identifier) @name.reference.inheritance))
   (block . (unit . (identifier) @name.reference.inheritance .))
   (block . (unit . (generics_class . (identifier) @name.reference.inheritance)))])
 (#eq? @_keyword "implements"))

; instantiations: new Foo(...), new Foo<T>(), new Foo() { ... }
((_
  (unit . (identifier) @_new .)
  .
  [(unit . (func . (identifier) @name.reference.instantiation))
   (unit . (func . (generics_class . (identifier) @name.reference.instantiation)))
   (block . (unit . (func . (identifier) @name.reference.instantiation)))])
 (#eq? @_new "new"))

; `def x = new Foo()`, `Foo x = new Foo()`: the value's type is the variable's
((_
  (unit . (identifier) @assigned .)
  .
  (operators "=")
  .
  (unit . (identifier) @_new .)
  .
  (unit . (func . (identifier) @name.reference.instantiation)))
 (#eq? @_new "new"))

; `def x = make()`, `def x = Foo.create()`, `x = repo.find(id)`: the call's result is the variable's
(_
  (unit . (identifier) @assigned .)
  .
  (operators "=")
  .
  (unit . (func . (identifier) @name.reference.call) .))

(_
  (unit . (identifier) @assigned .)
  .
  (operators "=")
  .
  (unit . (_) @receiver . (func . (identifier) @name.reference.call) .))

(_
  (unit . (identifier) @assigned .)
  .
  (operators "=")
  .
  (unit . (_) @receiver (_) @receiver . (func . (identifier) @name.reference.call) .))

; calls: m(), obj.m(), a.b.m(), Type.m(), this.m(), new Foo().m()
((unit . (func . (identifier) @name.reference.call))
 (#not-any-of? @name.reference.call "if" "for" "while" "switch" "catch" "synchronized" "return" "super" "this"))

(unit . (_) @receiver . (func . (identifier) @name.reference.call))

(unit . (_) @receiver (_) @receiver . (func . (identifier) @name.reference.call))

; command calls without parentheses: `println x`, `log.info "text"`, `c.add new Item()`
((command
  .
  (unit . (identifier) @name.reference.call .)
  .
  [(unit) (string) (number) (list)])
 (#match? @name.reference.call "^[a-z]")
 (#not-any-of? @name.reference.call "def" "return" "new" "throw" "assert" "import" "package" "static" "final"
  "private" "public" "protected" "abstract" "synchronized" "else" "case" "default" "class" "interface" "trait"
  "enum" "void" "boolean" "int" "long" "double" "float" "char" "byte" "short" "var" "yield" "goto" "in"))

(command
  .
  (unit . (_) @receiver . (identifier) @name.reference.call .)
  .
  [(unit) (string) (number) (list)])

(command
  .
  (unit . (_) @receiver (_) @receiver . (identifier) @name.reference.call .)
  .
  [(unit) (string) (number) (list)])

; declared types: `Foo x`, `private Foo x = ...`, parameters `(Foo x, Bar y = null)`, `List<Foo> xs`
((_
  (unit . (identifier) @name.reference.type .)
  .
  (unit . (identifier) @assigned .))
 (#match? @name.reference.type "^[A-Z]"))

(_
  (unit . (generics_class . (identifier) @name.reference.type))
  .
  (unit . (identifier) @assigned .))

; a method's declared result: `Item add(...) { }`, `List<Item> all() { }`, `Item find(id)` in an interface
((_
  (unit . (identifier) @name.reference.type .)
  .
  [(block . (unit . (func . (identifier) . (arg_block)) .) . "{")
   (unit . (func . (identifier) . (arg_block)) .)])
 (#match? @name.reference.type "^[A-Z]"))

(_
  (unit . (generics_class . (identifier) @name.reference.type))
  .
  [(block . (unit . (func . (identifier) . (arg_block)) .) . "{")
   (unit . (func . (identifier) . (arg_block)) .)])

; type arguments, annotations
(generics_class generics_type: (identifier) @name.reference.type)

(decorate (identifier) @name.reference.type)

; a class named as a value: `Zone.COLD`, `Foo.class`, `x as Foo`, `x instanceof Foo`, `catch (IOException e)`,
; a class passed as an argument (lowercase names are variables, properties or calls: not taken)
((unit . (identifier) @name.reference.attribute)
 (#match? @name.reference.attribute "^[A-Z]"))
