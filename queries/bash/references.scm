; Bash references. A command's name is a call (`greet world`, `x=$(format_name "$y")`, `if check; then`);
; only names some file of ours defines as a function resolve, so `echo` or `grep` are dropped.
; `source FILE` and `. FILE` are imports of the whole file (its functions become visible: the
; registry's `bare_import_is_star`, transitively), the argument as written being the @module:
; `"$(dirname "$0")/lib/util.sh"` is matched by its last path segments (lib/util.sh).

((command
  name: (command_name (word) @_source)
  argument: [(word) (string) (raw_string) (concatenation)] @module @name.reference.import)
  (#match? @_source "^(source|\\.)$"))

(command
  name: (command_name (word) @name.reference.call))

; a function named as a command's argument: `trap cleanup EXIT`, `export -f helper`
((command
  name: (command_name (word) @_takes)
  argument: (word) @name.reference.attribute)
  (#match? @_takes "^(trap|export|declare|typeset|readonly|complete|command|builtin|exec|time|xargs|timeout|nohup)$"))
