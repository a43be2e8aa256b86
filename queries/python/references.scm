; Python references. The name node is captured as @name.reference.<kind>; @receiver is the object
; of `obj.name`, @module the module of an import, @alias its local name.
; Type evidence (graph.py types receivers with it):
;   @assigned: the variable the reference's value goes to (`x = Foo()`, `self.x = y`, `with Foo() as x`)
;   @assigned + @assigned.type: an annotation of @assigned (`x: Foo`); @returns.type: a return annotation
;   @declares on an annotation's type node: the reference is what that annotation declares
;   @returns: the enclosing function returns the reference's value (`return Foo()`)
; @ignore: a name that is no reference at all (keyword names, module paths, `obj.attr = ...` targets);
; an import capture at the same place still wins.

; imports: `from m import A`, `from m import A as B`, `import m`, `import m as n`, `from m import *`
(import_from_statement
  module_name: (_) @module
  name: (dotted_name (identifier) @name.reference.import))

(import_from_statement
  module_name: (_) @module
  name: (aliased_import
    name: (dotted_name (identifier) @name.reference.import)
    alias: (identifier) @alias))

(import_statement
  name: (dotted_name) @module @name.reference.import)

(import_statement
  name: (aliased_import
    name: (dotted_name) @module @name.reference.import
    alias: (identifier) @alias))

(import_from_statement
  module_name: (_) @module
  (wildcard_import) @name.reference.import)

(dotted_name (identifier) @ignore)
(aliased_import alias: (identifier) @ignore)
(keyword_argument name: (identifier) @ignore)
(assignment left: (attribute attribute: (identifier) @ignore))
(global_statement (identifier) @ignore)
(nonlocal_statement (identifier) @ignore)

; inheritance
(class_definition
  superclasses: (argument_list (identifier) @name.reference.inheritance))

(class_definition
  superclasses: (argument_list
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.inheritance)))

; calls: f(), obj.m(), decorators
(call function: (identifier) @name.reference.call)

(call function: (attribute
  object: (_) @receiver
  attribute: (identifier) @name.reference.call))

(decorator (identifier) @name.reference.call)

(decorator (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))

; exceptions raised and caught
(raise_statement (identifier) @name.reference.instantiation)

(except_clause (identifier) @name.reference.type)

(except_clause (as_pattern (identifier) @name.reference.type))

; annotations: every name inside one is a type reference (parse.py gives the kind to the region)
(typed_parameter (identifier) @assigned type: (type) @assigned.type)

(typed_default_parameter name: (identifier) @assigned type: (type) @assigned.type)

(assignment left: (_) @assigned type: (type) @assigned.type)

(function_definition return_type: (type) @returns.type)

(type (string (string_content) @name.reference.type))

(type (subscript subscript: (string (string_content) @name.reference.type)))

; what an annotation declares (@declares: the annotation's own type node): the name itself, `mod.Name`,
; "Name", a generic's head (`List[int]`: a list), the names inside Optional/Union/... and `Name | None`;
; `list[Name]` declares a list, not a Name
(type (identifier) @name.reference.type) @declares

(type (attribute object: (_) @receiver attribute: (identifier) @name.reference.type)) @declares

(type (generic_type (identifier) @name.reference.type)) @declares

(type (subscript value: (attribute object: (_) @receiver attribute: (identifier) @name.reference.type))) @declares

(type (string (string_content) @name.reference.type)) @declares

(type (generic_type (identifier) @_wrapper (type_parameter (type [
    (identifier) @name.reference.type
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.type)
    (string (string_content) @name.reference.type)])))
  (#any-of? @_wrapper "Optional" "Union" "Annotated" "ClassVar" "Final" "Type" "type")) @declares

(type (subscript value: (attribute attribute: (identifier) @_wrapper) subscript: [
    (identifier) @name.reference.type
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.type)
    (string (string_content) @name.reference.type)]
  (#any-of? @_wrapper "Optional" "Union" "Annotated" "ClassVar" "Final" "Type" "type"))) @declares

(type (binary_operator left: [
    (identifier) @name.reference.type
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.type)
    (binary_operator left: (identifier) @name.reference.type)])) @declares

(type (binary_operator right: [
    (identifier) @name.reference.type
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.type)])) @declares

; any other name read: `callback=handler`, `isinstance(x, Foo)`, `Union[A, B]`, `a is B`
(identifier) @name.reference.attribute

(attribute
  object: (_) @receiver
  attribute: (identifier) @name.reference.attribute)

; values flowing into variables: `x = Foo()`, `x = mod.make()`, `self.x = x`, `x = self.prop`,
; `x = await f()`, `x = a if c else Foo()`, `x = a or Foo()`, `with Foo() as x`;
; and out of functions: `return Foo()`, `return self`
(assignment left: (_) @assigned right: [
  (call function: (identifier) @name.reference.call)
  (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))
  (identifier) @name.reference.attribute
  (attribute object: (_) @receiver attribute: (identifier) @name.reference.attribute)
  (await (call function: (identifier) @name.reference.call))
  (await (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call)))])

(assignment left: (_) @assigned right: (conditional_expression . [
  (call function: (identifier) @name.reference.call)
  (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))
  (identifier) @name.reference.attribute
  (attribute object: (_) @receiver attribute: (identifier) @name.reference.attribute)]))

(assignment left: (_) @assigned right: (conditional_expression [
  (call function: (identifier) @name.reference.call)
  (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))
  (identifier) @name.reference.attribute
  (attribute object: (_) @receiver attribute: (identifier) @name.reference.attribute)] .))

(assignment left: (_) @assigned right: (boolean_operator [
  (call function: (identifier) @name.reference.call)
  (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))
  (identifier) @name.reference.attribute
  (attribute object: (_) @receiver attribute: (identifier) @name.reference.attribute)]))

; a decorated function is what its outermost decorator makes of it: `@click.group()` gives a Group
(decorated_definition
  . (decorator [
    (identifier) @name.reference.call
    (attribute object: (_) @receiver attribute: (identifier) @name.reference.call)
    (call function: (identifier) @name.reference.call)
    (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))])
  definition: (function_definition name: (identifier) @assigned))

; a literal holds no object of ours: `x = []`, `x = {}`, `x = ""`, `x = 0`; its first token stands for
; the builtin type (a name that no file defines or imports is another program's)
(assignment left: (_) @assigned right: [
  (list "[" @name.reference.attribute)
  (list_comprehension "[" @name.reference.attribute)
  (dictionary "{" @name.reference.attribute)
  (dictionary_comprehension "{" @name.reference.attribute)
  (set "{" @name.reference.attribute)
  (set_comprehension "{" @name.reference.attribute)
  (tuple "(" @name.reference.attribute)
  (string (string_start) @name.reference.attribute)
  (concatenated_string . (string (string_start) @name.reference.attribute))
  (integer) @name.reference.attribute
  (float) @name.reference.attribute])

(with_item value: (as_pattern [
    (call function: (identifier) @name.reference.call)
    (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))]
  alias: (as_pattern_target (identifier) @assigned)))

(return_statement [
  (call function: (identifier) @name.reference.call)
  (call function: (attribute object: (_) @receiver attribute: (identifier) @name.reference.call))
  (identifier) @name.reference.attribute]) @returns
