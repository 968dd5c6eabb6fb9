package push

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// Message is one push, sent to clients as the JSON text frame {id, type, payload?, time}
// (wire-runtime §3.2). Types are business-defined: the real client dispatches by type.
type Message struct {
	// ID is the message id: a 20-character xid-style id (time-ordered) unless preset.
	ID string `json:"id"`
	// Type is required; the client dispatches on it.
	Type string `json:"type"`
	// Payload is any JSON value; omitted when nil.
	Payload any `json:"payload,omitempty"`
	// Time is when the message was made: RFC 3339 with nanoseconds and the local offset; the
	// server's clock when zero.
	Time time.Time `json:"time"`
}

// NewMessage returns a message of typ with payload; Push fills the id and time.
func NewMessage(typ string, payload any) Message { return Message{Type: typ, Payload: payload} }

// encode fills the id and time and marshals the message once: every recipient, on every
// node, gets these same bytes.
func (m Message) encode(now time.Time) ([]byte, error) {
	if m.ID == "" {
		m.ID = newMessageID(now)
	}
	if m.Time.IsZero() {
		m.Time = now
	}
	m.Time = m.Time.Local()
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("push: encode message %s: %w", m.Type, err)
	}
	return b, nil
}

// idEncoding is base32hex in lower case without padding: 12 bytes make 20 characters that sort
// like the bytes.
var idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// idMachine is the process part of message ids: 3 random bytes and the pid.
var idMachine = func() [5]byte {
	var m [5]byte
	_, _ = rand.Read(m[:3])
	binary.BigEndian.PutUint16(m[3:], uint16(os.Getpid()))
	return m
}()

var idCounter atomic.Uint32

// newMessageID returns a 20-character id with the xid layout: 4 bytes of Unix seconds, 5 bytes
// of process identity and a 3-byte counter, so ids are unique across nodes and ordered in time.
func newMessageID(now time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(now.Unix()))
	copy(b[4:9], idMachine[:])
	c := idCounter.Add(1)
	b[9], b[10], b[11] = byte(c>>16), byte(c>>8), byte(c)
	return idEncoding.EncodeToString(b[:])
}
