; Bash (and POSIX sh) definitions: functions, `f() { ... }` and `function f { ... }`. `#` comments
; directly above a function are its doc (parse.py). Variables are no symbols.

(function_definition
  name: (word) @name) @definition.function
