package rpc

import "github.com/google/uuid"

// NewID returns a UUIDv7 (RFC 9562 §5.7: Unix milliseconds, then random bits) in its canonical
// 36-character form. It is svc's one ID generator: request ids (wire-core §1.6), claim, file,
// token and row ids (ARCHITECTURE.md: IDs are UUIDv7 everywhere, time-ordered, index friendly).
// Ids from one process are strictly increasing (uuid.NewV7 keeps a monotonic sequence).
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil { // the system's random source failed: still unique, no longer time-ordered
		return uuid.NewString()
	}
	return id.String()
}
