; C references. The name node is captured as @name.reference.<kind>; @module is the path of an
; #include (every top-level name of that header, and of the .c file next to it, becomes visible:
; graph.py), @receiver the struct value of `s.fn()` / `p->fn()`.

; #include "vec.h"  /  #include <lib/vec.h>
(preproc_include
  path: (string_literal (string_content) @module @name.reference.import))

(preproc_include
  path: (system_lib_string) @module @name.reference.import)

; calls: f(), s.fn(), p->fn() (function pointers in structs), macros called like functions
(call_expression
  function: (identifier) @name.reference.call)

(call_expression
  function: (field_expression
    argument: (_) @receiver
    field: (field_identifier) @name.reference.call))

; type uses: typedef names, struct/union/enum tags
(type_identifier) @name.reference.type

(struct_specifier
  name: (type_identifier) @name.reference.type
  !body)

(union_specifier
  name: (type_identifier) @name.reference.type
  !body)

(enum_specifier
  name: (type_identifier) @name.reference.type
  !body)

; values: a function passed as a callback, or stored (`.on_close = handle_close`)
(argument_list (identifier) @name.reference.attribute)

(initializer_pair value: (identifier) @name.reference.attribute)

(assignment_expression right: (identifier) @name.reference.attribute)
