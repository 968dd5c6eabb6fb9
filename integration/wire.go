package integration

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The worker protocol: the parent and a script worker (worker.go) exchange frames over the
// worker's stdin and stdout, each a 4-byte big-endian length and its bytes. A message is one
// JSON frame followed by as many raw frames as its Blobs says: the text of data globals (the
// inbound body) crosses as it is, neither escaped nor base64-encoded, and is written straight
// from the caller's bytes. The parent sends "run" (a script and its bindings) and "reply" (a
// host call's answer); the worker sends "ready" once when it has started (after a warm-up
// run), "call" (a host binding the script called) and "done" (the run's result). While the parent
// serves a call it may send a nested "run" (an outbound auth script, which runs during an http
// call of the adapter); the worker runs it before it goes on waiting for the reply. Everything
// on one worker is sequential, so a message needs no id.

// Message limits (a message's frames together). workerMessageLimit bounds what the parent reads
// from a worker (a result, a host call's arguments): the parent holds one such message per run
// in flight, so a script cannot make it hold more. hostMessageLimit bounds what a worker reads
// (a run's bindings, the inbound body among them, up to 16 MiB).
const (
	workerMessageLimit = 32 << 20
	hostMessageLimit   = 64 << 20
)

// errMessageTooLarge is a frame over its limit.
var errMessageTooLarge = errors.New("message over the worker protocol's limit")

// wireMessage is one frame's message; Op says which fields are set.
type wireMessage struct {
	Op string `json:"op"` // run, reply (parent); ready, call, done (worker)
	// Blobs is how many raw frames follow: the Text of Run's globals that have one, in order.
	Blobs int `json:"blobs,omitempty"`

	Run *runSpec `json:"run,omitempty"`

	// call: a host binding's method and its arguments as JSON (absent for undefined).
	Object string            `json:"object,omitempty"`
	Method string            `json:"method,omitempty"`
	Args   []json.RawMessage `json:"args,omitempty"`
	Undef  []int             `json:"undef,omitempty"` // indexes of undefined arguments

	// reply and done: the value (absent: undefined) or the error.
	Value json.RawMessage `json:"value,omitempty"`
	Err   *wireError      `json:"err,omitempty"`
}

// runSpec is what a worker needs to run one script: its shape, name and body, the data globals
// (JSON), the host bindings (names of the parent's objects and functions, called back over the
// protocol) and, for an outbound run with an http binding, the system's envelope scripts.
type runSpec struct {
	Name      string        `json:"name"`
	Body      string        `json:"body"`
	Globals   []wireGlobal  `json:"globals,omitempty"`
	Host      []hostObject  `json:"host,omitempty"`
	Envelope  *wireEnvelope `json:"envelope,omitempty"`
	CallDepth int           `json:"callDepth"`
}

// wireGlobal is a data global: JSON, and optionally a property "body" set from Text as one
// string (the inbound body, which JSON would escape, up to six bytes a byte: it crosses as a
// raw frame, HasText marking the globals that have one).
type wireGlobal struct {
	Name    string          `json:"name"`
	JSON    json.RawMessage `json:"json"`
	Text    []byte          `json:"-"`
	HasText bool            `json:"hasText,omitempty"`
}

// hostObject is a host binding: a global object of methods (Methods) or, with Methods empty, a
// global function.
type hostObject struct {
	Name    string   `json:"name"`
	Methods []string `json:"methods,omitempty"`
}

// wireEnvelope are the request and response envelope scripts of the system's http binding.
type wireEnvelope struct {
	Request  string `json:"request,omitempty"`
	Response string `json:"response,omitempty"`
}

// wireError is a failure crossing the protocol. Ref names the Go error a host call returned
// (the parent keeps it, so the run's failure is classified by its real type); Name is the
// JavaScript error type a host call threw (TypeError…); Kind marks the worker's own failures
// that are not plain script errors.
type wireError struct {
	Message string `json:"message"`
	Ref     int    `json:"ref,omitempty"` // 1-based; 0: none
	Name    string `json:"name,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

// Kinds of wireError a worker reports of its own.
const (
	wireKindCallDepth = "call_depth"
	wireKindNever     = "never_settles"
	wireKindEnvelope  = "envelope"
)

// frameConn reads and writes frames on a worker's pipes.
type frameConn struct {
	r     *bufio.Reader
	w     io.Writer
	limit int
}

func newFrameConn(r io.Reader, w io.Writer, limit int) *frameConn {
	return &frameConn{r: bufio.NewReaderSize(r, 64<<10), w: w, limit: limit}
}

// send writes m: its JSON frame, then the raw frames of its globals' text. HTML escaping is
// off: a value crosses as the script made it (the encoder would otherwise rewrite <, > and &
// inside the JSON values it carries).
func (c *frameConn) send(m *wireMessage) error {
	var blobs [][]byte
	if m.Run != nil {
		for i := range m.Run.Globals {
			if g := &m.Run.Globals[i]; g.Text != nil {
				g.HasText = true
				blobs = append(blobs, g.Text)
			}
		}
	}
	m.Blobs = len(blobs)
	var buf bytes.Buffer
	buf.Write(make([]byte, 4))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	for _, blob := range blobs {
		var head [4]byte
		binary.BigEndian.PutUint32(head[:], uint32(len(blob)))
		if _, err := c.w.Write(head[:]); err != nil {
			return err
		}
		if _, err := c.w.Write(blob); err != nil {
			return err
		}
	}
	return nil
}

// recv reads one message, its raw frames included, within the connection's limit.
func (c *frameConn) recv() (*wireMessage, error) {
	room := c.limit
	b, err := c.frame(&room)
	if err != nil {
		return nil, err
	}
	var m wireMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Blobs == 0 {
		return &m, nil
	}
	var texts []*wireGlobal
	if m.Run != nil {
		for i := range m.Run.Globals {
			if m.Run.Globals[i].HasText {
				texts = append(texts, &m.Run.Globals[i])
			}
		}
	}
	if len(texts) != m.Blobs {
		return nil, fmt.Errorf("the message announces %d raw frames for %d texts", m.Blobs, len(texts))
	}
	for _, g := range texts {
		if g.Text, err = c.frame(&room); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// frame reads one frame, taking its length from room (errMessageTooLarge when it does not fit).
func (c *frameConn) frame(room *int) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if n > *room {
		return nil, fmt.Errorf("%w (%d bytes, limit %d)", errMessageTooLarge, n, c.limit)
	}
	*room -= n
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, err
	}
	return b, nil
}
