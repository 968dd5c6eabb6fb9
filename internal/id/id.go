// Package id is svc's one id generator: UUIDv7s (RFC 9562 §5.7) in their canonical form and in
// the push wire's 20-character form. It imports nothing of svc's, so every package may use it:
// the bus (package event) takes its event ids here rather than from the /api engine, and rpc's
// NewID and NewShortID, the exported names host code calls, return what this package returns.
package id

import (
	"encoding/base32"

	"github.com/google/uuid"
)

// New returns a UUIDv7 (RFC 9562 §5.7: Unix milliseconds, then random bits) in its canonical
// 36-character form: request ids (wire-core §1.6), claim, file, token, event and row ids
// (ARCHITECTURE.md: IDs are UUIDv7 everywhere, time-ordered, index friendly). Ids from one
// process are strictly increasing (uuid.NewV7 keeps a monotonic sequence).
func New() string { return newV7().String() }

// NewShort returns the same generator's id in the 20-character form the push wire promises for
// message ids (wire-runtime §3.2: an xid-sized id, lower-case base32hex, [0-9a-v]{20}): the
// UUIDv7's 48-bit millisecond time and 12-bit sub-millisecond sequence, then 40 of its random
// bits. The strings sort like the ids' times and, from one process, strictly increase; across
// nodes two ids collide only with the same 256 ns slot and the same 40 random bits.
func NewShort() string {
	u := newV7()
	seq := u[6]<<4 | u[7]>>4 // the sequence's high 8 bits (the version nibble dropped)
	r := u[9:14]             // 40 random bits of rand_b, past the variant bits
	b := [13]byte{u[0], u[1], u[2], u[3], u[4], u[5], seq, u[7]<<4 | r[0]>>4, r[0]<<4 | r[1]>>4,
		r[1]<<4 | r[2]>>4, r[2]<<4 | r[3]>>4, r[3]<<4 | r[4]>>4, r[4] << 4}
	return shortEncoding.EncodeToString(b[:])[:20] // 20 characters of 5 bits: the first 100
}

// shortEncoding is base32hex in lower case without padding: its strings sort like the bytes.
var shortEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// newV7 returns a UUIDv7; if the system's random source failed, a random UUID (still unique, no
// longer time-ordered).
func newV7() uuid.UUID {
	u, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return u
}
