; C definitions. @definition.<kind> on the whole node, @name on its name. A comment directly above
; a definition is its doc (parse.py). Prototypes (`int f(void);`) are declarations, not
; definitions: the function is found where its body is. `typedef struct {...} Name;` is one
; struct named by the typedef.

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function

; char *f(void) { ... }
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @definition.function

; function-like macros
(preproc_function_def
  name: (identifier) @name) @definition.function

; struct/union/enum with a body, not the type of a typedef (that one is named by the typedef below)
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

; struct point { ... } origin;
(declaration
  type: (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

(type_definition
  type: [(struct_specifier body: (field_declaration_list))
         (union_specifier body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (enum_specifier body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum

; typedef unsigned long size; typedef struct node Node;
(type_definition
  type: [(primitive_type) (sized_type_specifier) (type_identifier)
         (struct_specifier !body) (union_specifier !body) (enum_specifier !body)]
  declarator: (type_identifier) @name) @definition.type
