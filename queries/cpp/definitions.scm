; C++ definitions. @definition.<kind> on the whole node, @name on its name, @receiver on the class
; of an out-of-class definition (`double Circle::area() const {...}` -> Circle.area, attached to
; Circle even when the class is in a header). Comments directly above a definition (or above its
; `template <...>`) are its doc. Prototypes and in-class declarations are not definitions, except
; pure virtual methods, which have no body anywhere. Namespaces are not symbols.

; functions and methods with a body; a function inside a class body is a method there
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @definition.function

; returning a pointer or a reference: `Circle* build()`, `T& get()`
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (operator_name)] @name))) @definition.function

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (operator_name)] @name))) @definition.function

; out of class: Type::method, ns::Type::method, Type<T>::method, Type::~Type
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @receiver
      name: [(identifier) (destructor_name) (operator_name)] @name))) @definition.method

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @receiver
        name: [(identifier) (destructor_name) (operator_name)] @name)))) @definition.method

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier
        scope: (_) @receiver
        name: [(identifier) (operator_name)] @name)))) @definition.method

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier
        scope: (_) @receiver
        name: [(identifier) (operator_name)] @name)))) @definition.method

; virtual double area() const = 0;
(field_declaration
  declarator: (function_declarator declarator: (field_identifier) @name)
  default_value: (number_literal)) @definition.function

; classes, structs, unions, enums with a body (not the type of a typedef, named below)
(_
  !type
  (class_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.class)

(_
  !type
  (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

(_
  !type
  (union_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

(_
  !type
  (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list)) @definition.enum)

; nested in a class body, or declared with a variable: struct P { ... } origin;
([(field_declaration) (declaration)]
  type: (class_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.class)

([(field_declaration) (declaration)]
  type: (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

([(field_declaration) (declaration)]
  type: (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list)) @definition.enum)

(type_definition
  type: [(struct_specifier body: (field_declaration_list))
         (class_specifier body: (field_declaration_list))
         (union_specifier body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: [(primitive_type) (sized_type_specifier) (type_identifier) (template_type) (qualified_identifier)
         (struct_specifier !body) (class_specifier !body) (union_specifier !body)]
  declarator: (type_identifier) @name) @definition.type

; using Name = Type;
(alias_declaration
  name: (type_identifier) @name) @definition.type

(preproc_function_def
  name: (identifier) @name) @definition.function
