; TSX locals: the TypeScript ones (inherited).
; inherits: typescript
