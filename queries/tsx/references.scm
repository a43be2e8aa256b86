; TSX references: TypeScript's and the JSX patterns, inherited.
; inherits: typescript, jsx
