package push

import (
	"context"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Close codes of the push endpoint (wire-runtime §3.2). The real client treats 4401 and 4429 as
// terminal (no reconnect) and reconnects with back-off after any other close.
const (
	// CloseSessionInvalid: the session or token ended (revoked, expired).
	CloseSessionInvalid websocket.StatusCode = 4401
	// CloseTooManyConnections: the user already holds max_connections_per_user sockets here.
	CloseTooManyConnections websocket.StatusCode = 4429
	// CloseGoingAway: the server is shutting down.
	CloseGoingAway = websocket.StatusGoingAway
)

// Close reasons sent with the codes above.
const (
	ReasonSessionRevoked = "session revoked"
	ReasonSessionInvalid = "session invalid"
	ReasonTokenExpired   = "token expired"
	ReasonTooMany        = "push: per-user connection limit reached"
	ReasonShutdown       = "server shutting down"
)

// readLimit bounds inbound frames, which are read and discarded (wire-runtime §3.2).
const readLimit = 4096

// conn is one accepted WebSocket. An idle conn holds no goroutine but the handler's, which
// reads (and discards) inbound frames so that pongs and close frames are seen; a writer
// goroutine exists only while frames are queued, so idle connections stay small.
type conn struct {
	id   uint64 // registration order, unique in the hub
	ws   *websocket.Conn
	raw  net.Conn // the hijacked connection under ws (write deadlines); nil on the plain path
	hub  *hub
	user string
	bind Binding // revocation key, issue time and expiry of the token

	roles   atomic.Pointer[[]string] // the principal's roles: the handshake's, then each recheck's
	active  atomic.Bool              // delivery allowed: false until the first recheck passed
	pinging atomic.Bool

	mu      sync.Mutex
	queue   [][]byte // frames waiting for the writer, shared with every other recipient
	pending int      // frames accepted and not yet written: queue plus the batch being written
	writing bool     // a writer goroutine runs
	closed  bool
}

// send queues one encoded frame without blocking and reports whether it did. A full buffer
// (send_buffer frames not yet written) tears the connection down at once without a close frame,
// so one slow client never delays the others (wire-runtime §3.3); the client sees an abnormal
// closure and reconnects.
func (c *conn) send(frame []byte) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	if c.pending >= c.hub.sendBuffer {
		c.mu.Unlock()
		c.hub.overflows.Add(1)
		c.drop()
		return false
	}
	c.queue = append(c.queue, frame)
	c.pending++
	if !c.writing {
		c.writing = true
		go c.flush()
	}
	c.mu.Unlock()
	return true
}

// flush writes queued frames until the queue is empty, then the goroutine ends.
func (c *conn) flush() {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 || c.closed {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		for _, f := range batch {
			if err := c.write(f); err != nil {
				c.drop()
				return
			}
			c.mu.Lock()
			c.pending--
			c.mu.Unlock()
		}
	}
}

// write sends one text frame within write_timeout. With the small buffers (bypass.PushBuffers)
// the bound is a deadline on the hijacked socket rather than a context: no timer and context
// allocated per frame (bench/push). The deadline is cleared after the write, so a later close
// handshake is not cut short by it. On the plain path the library's context bounds the write.
func (c *conn) write(frame []byte) error {
	if c.raw == nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.hub.writeTimeout)
		defer cancel()
		return c.ws.Write(ctx, websocket.MessageText, frame)
	}
	_ = c.raw.SetWriteDeadline(time.Now().Add(c.hub.writeTimeout))
	err := c.ws.Write(context.Background(), websocket.MessageText, frame)
	_ = c.raw.SetWriteDeadline(time.Time{})
	return err
}

// activate lets deliveries reach c (after the quarantine of an opaque session) and counts it.
func (c *conn) activate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && !c.active.Load() {
		c.active.Store(true)
		c.hub.count.Add(1)
	}
}

// markClosed flips the conn to closed; false when it already was.
func (c *conn) markClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	c.queue = nil
	return true
}

// drop tears the connection down without a close frame (overflow, failed write, missed pongs).
func (c *conn) drop() {
	if c.markClosed() {
		c.hub.remove(c)
		_ = c.ws.CloseNow()
	}
}

// closeWith ends the connection with a close frame. The close handshake waits for the peer
// (up to the library's 5 s), so it runs on its own goroutine: kicks never block the caller.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	if !c.markClosed() {
		return
	}
	c.hub.remove(c)
	c.hub.closers.Add(1)
	go func() {
		defer c.hub.closers.Done()
		_ = c.ws.Close(code, reason)
	}()
}

// ping sends a ping and drops the connection unless a pong arrives within timeout (two ping
// intervals: two missed pongs). At most one ping per connection is outstanding.
func (c *conn) ping(timeout time.Duration) {
	if !c.pinging.CompareAndSwap(false, true) {
		return
	}
	defer c.pinging.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.ws.Ping(ctx); err != nil {
		c.drop()
	}
}

// read discards inbound frames until the connection fails or closes; it runs on the handler's
// goroutine and returns when the socket is gone.
func (c *conn) read() {
	for {
		_, r, err := c.ws.Reader(context.Background())
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
	}
}

// setRoles replaces the principal's roles (a recheck after a change of the user).
func (c *conn) setRoles(roles []string) {
	r := slices.Clone(roles)
	c.roles.Store(&r)
}

// hasRole reports whether the principal holds one of roles: those of the handshake, or of the
// latest recheck.
func (c *conn) hasRole(roles []string) bool {
	for _, r := range *c.roles.Load() {
		for _, want := range roles {
			if r == want {
				return true
			}
		}
	}
	return false
}
