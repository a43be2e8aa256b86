; Go definitions. @definition.<kind> on the whole node, @name on its name, @receiver on the type of
; a method's receiver (`func (s *Server) Start()` -> Server.Start). The `// Name ...` comment above a
; declaration (or above its `type` keyword) is picked up by parse.py.

(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (pointer_type) (generic_type) (map_type) (slice_type)
         (array_type) (function_type) (channel_type)]) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

; methods an interface requires
(method_elem
  name: (field_identifier) @name) @definition.function
