package push

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// Message is one push, sent to clients as the JSON text frame {id, type, payload?, time}
// (wire-runtime §3.2). Types are business-defined: the real client dispatches by type.
type Message struct {
	// ID is the message id: rpc.NewShortID (20 characters, time-ordered) unless preset.
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
		m.ID = rpc.NewShortID()
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
