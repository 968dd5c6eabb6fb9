package app

import (
	"io"
	"net/http"
	"time"
)

// idleBody is a request body whose every Read must make progress within timeout
// (svc.app.body_read_idle_timeout): the connection's read deadline is moved to now + timeout
// before each Read, so a client that stalls, or sends a byte now and then slower than that, has
// its read fail and its connection closed, whatever the handler does with the error. The
// deadline is network time (time.Now): the kernel enforces it, so the injected clock cannot
// drive it. At the body's end the deadline is cleared (net/http's background read of the
// connection, which notices a client going away, clears it too): a handler that works long after
// reading its body keeps its context. After a failed read it is left in place, so the server's
// drain of the unread rest fails at once instead of waiting on the stalled client.
type idleBody struct {
	body    io.ReadCloser
	rc      http.ResponseController
	timeout time.Duration
	left    int64 // bytes still to come when the length is known (Content-Length), else -1
	done    bool  // the body ended or failed: deadlines are the server's again
}

// withIdleBody wraps r's body; requests without one are left alone (and so are upgraded
// connections such as /ws, whose GET carries no body).
func withIdleBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	if timeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	r.Body = &idleBody{body: r.Body, rc: *http.NewResponseController(w), timeout: timeout, left: r.ContentLength}
}

// Read implements io.Reader.
func (b *idleBody) Read(p []byte) (int, error) {
	if b.done {
		return b.body.Read(p)
	}
	_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := b.body.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	switch {
	case err == nil && b.left == 0:
		// The last byte of a body of known length is in: the end is known without the read
		// that would return io.EOF, so the deadline is cleared now (one deadline change less
		// per request for the common small body read in one call).
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		b.done = true
		if err == io.EOF {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// Close implements io.Closer.
func (b *idleBody) Close() error { return b.body.Close() }
