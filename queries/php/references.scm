; PHP references. The name node is captured as @name.reference.<kind>; @module is the namespace of
; a `use` (or the path of a require), @alias the `as` name, @receiver the object of `$x->m()` or the
; class of `Foo::m()`, @assigned the variable a `new Foo` or a declared type belongs to, so a later
; `$x->m()` resolves on Foo.

; use App\Models\User;  use App\Models\Model as Base;  use function App\helper;
(namespace_use_clause
  (qualified_name
    prefix: (namespace_name) @module
    (name) @name.reference.import)
  !alias)

(namespace_use_clause
  (qualified_name
    prefix: (namespace_name) @module
    (name) @name.reference.import)
  alias: (name) @alias)

; use App\{User, Model as Base};
(namespace_use_declaration
  (namespace_name) @module
  body: (namespace_use_group
    (namespace_use_clause
      (name) @name.reference.import
      !alias)))

(namespace_use_declaration
  (namespace_name) @module
  body: (namespace_use_group
    (namespace_use_clause
      (name) @name.reference.import
      alias: (name) @alias)))

; require "lib/util.php" (every function and class of that file becomes visible)
([(require_expression) (require_once_expression) (include_expression) (include_once_expression)]
  (string (string_content) @module @name.reference.import))

; inheritance: extends, implements, trait use
(base_clause (name) @name.reference.inheritance)

(base_clause (qualified_name (name) @name.reference.inheritance))

(class_interface_clause (name) @name.reference.inheritance)

(class_interface_clause (qualified_name (name) @name.reference.inheritance))

(use_declaration (name) @name.reference.inheritance)

; calls: f(), \Ns\f(), $x->m(), $x?->m(), Foo::m(), self::m(), parent::m()
(function_call_expression
  function: (name) @name.reference.call)

(function_call_expression
  function: (qualified_name (name) @name.reference.call))

(member_call_expression
  object: (_) @receiver
  name: (name) @name.reference.call)

(nullsafe_member_call_expression
  object: (_) @receiver
  name: (name) @name.reference.call)

(scoped_call_expression
  scope: (_) @receiver
  name: (name) @name.reference.call)

; instantiations: new Foo(), new \Ns\Foo()
(object_creation_expression (name) @name.reference.instantiation)

(object_creation_expression (qualified_name (name) @name.reference.instantiation))

; type uses: parameter, return and property types, catch, instanceof, Foo::CONST / Foo::class
(named_type (name) @name.reference.type)

(named_type (qualified_name (name) @name.reference.type))

(binary_expression
  operator: "instanceof"
  right: (name) @name.reference.type)

(class_constant_access_expression
  .
  (name) @name.reference.attribute)

; typed variables: $x = new Foo(); function f(Foo $x); private Foo $x;
(assignment_expression
  left: (variable_name) @assigned
  right: (object_creation_expression (name) @name.reference.instantiation))

(simple_parameter
  type: [(named_type (name) @name.reference.type)
         (optional_type (named_type (name) @name.reference.type))]
  name: (variable_name) @assigned)

(property_declaration
  type: [(named_type (name) @name.reference.type)
         (optional_type (named_type (name) @name.reference.type))]
  (property_element name: (variable_name) @assigned))

; $x = Foo::make(): the class comes from make()'s return type (graph.py)
(assignment_expression
  left: (variable_name) @assigned
  right: (scoped_call_expression
    scope: (_) @receiver
    name: (name) @name.reference.call))
