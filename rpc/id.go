package rpc

import "github.com/svc-framework/svc/internal/id"

// NewID returns a UUIDv7 in its canonical 36-character form: svc's one id generator
// (internal/id.New), exported here for host code and the modules, which already import rpc.
// Request, claim, file, token, event and row ids all come from it; ids from one process are
// strictly increasing.
func NewID() string { return id.New() }

// NewShortID returns the same generator's id in the push wire's 20-character form
// (wire-runtime §3.2: [0-9a-v]{20}, time-ordered; internal/id.NewShort).
func NewShortID() string { return id.NewShort() }
