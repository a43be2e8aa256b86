; Definitions common to JavaScript and TypeScript (both inherit this file; it is no language of
; its own). @definition.<kind> on the whole node, @name on its name. Doc comments (/** ... */ or //)
; directly above a definition, or above its `export`, are picked up by parse.py. A function
; directly inside a class becomes a method there.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; an object literal that holds methods is their owner (kind `object`, class-like): a Vue Options API
; component `export default { methods: { show() {} } }` (named `default`), `const api = { get() {} }`.
; Its methods, also those one object deeper (`methods: {...}`, `computed: {...}`), are its members:
; `this.show()` inside it is its own `show`, and a bare `show` elsewhere is not this method.
(export_statement
  "default" @name
  value: (object)) @definition.object

; `export default defineComponent({...})`, `export default Vue.extend({...})`: the object is the component
(export_statement
  "default" @name
  value: (call_expression arguments: (arguments . (object)))) @definition.object

; a component's watchers and prop validators are no members of it (`this.value` reads the prop
; `value`, not the watcher `watch: { value() {} }`): they belong to an object of their own
(export_statement
  value: [(object
           (pair
             key: (property_identifier) @name
             value: (object)
             (#any-of? @name "watch" "props" "emits")) @definition.object)
          (call_expression
            arguments: (arguments . (object
              (pair
                key: (property_identifier) @name
                value: (object)
                (#any-of? @name "watch" "props" "emits")) @definition.object)))])

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object (method_definition)))) @definition.object

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object (pair value: (object (method_definition)))))) @definition.object

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object (method_definition)))) @definition.object

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object (pair value: (object (method_definition)))))) @definition.object

; `const f = () => {...}`, `let g = function () {...}`: the whole declaration, so a comment above
; it (or above its `export`) is the doc
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; `const Foo = class {...}`
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class
