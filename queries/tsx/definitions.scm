; TSX definitions: exactly TypeScript's (JSX adds no definitions).
; inherits: typescript
