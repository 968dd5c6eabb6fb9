package app

import (
	"io"
	"net/http"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// bodyPace is how fast a request body must arrive, on every route (the outer middleware wraps
// every body): each Read must make progress within idle (svc.app.body_read_idle_timeout), and
// once grace (svc.app.body_min_rate_grace) has passed the body must have averaged rate bytes
// per second (svc.app.body_min_rate) over the time the server spent waiting in Read. The idle
// timeout alone let one byte every few seconds hold a connection for ever (issue #31 item 10).
//
// A minimum rate rather than a total deadline: a deadline fixed per request either cuts a large
// legitimate upload or leaves a small body open for as long as the largest may take, and one
// that scales with Content-Length has nothing to scale with for a chunked body. Only time
// spent inside Read counts, so a handler that stops reading for a while — an upload part being
// stored, a body waiting for room in the body memory budget — is not charged to the client: an
// upload at any rate above the minimum passes whatever its size, and a trickle below it ends
// within grace + size/rate.
//
// A body whose bytes the /api engine holds in memory (rpc.BodyHolder) has, besides, a total
// deadline in proportion to what it holds (issue #42 item 2): it must have arrived whole by its
// start + grace + held / hold (svc.app.body_memory_rate), wall-clock time, whatever the server
// did meanwhile. Memory of the shared budget is so held only by a body that keeps arriving at
// that rate; a client that holds much must send fast, and one that trickles holds little.
type bodyPace struct {
	idle  time.Duration // 0 disables the whole pace
	rate  int64         // bytes per second; 0 leaves only the idle timeout
	grace time.Duration
	hold  int64 // bytes per second a body held in memory must average (total deadline); 0: none
}

// idleBody is a request body read at pace: before each Read the connection's read deadline is
// moved to now + what the client has still earned (allowance), so a client that stalls, or
// sends slower than the pace, has its read fail and its connection closed, whatever the handler
// does with the error. The deadline is network time (time.Now): the kernel enforces it, so the
// injected clock cannot drive it. The first deadline is set when the body is wrapped, before
// the handler runs, so a handler that never reads the body leaves net/http's drain of it
// (after the handler, up to 256 KiB) bounded too. At the body's end the deadline is cleared
// (net/http's background read of the connection, which notices a client going away, clears it
// too): a handler that works long after reading its body keeps its context. After a failed read
// it is left in place, so the server's drain of the unread rest fails at once instead of
// waiting on the stalled client.
type idleBody struct {
	body   io.ReadCloser
	rc     http.ResponseController
	pace   bodyPace
	got    int64         // bytes received
	waited time.Duration // time spent inside Read, waiting for the client
	left   int64         // bytes still to come when the length is known (Content-Length), else -1
	done   bool          // the body ended or failed: deadlines are the server's again
	start  time.Time     // when the body was wrapped (network time)
	hard   time.Time     // total deadline while the engine holds the body in memory; zero: none
}

var _ rpc.BodyHolder = (*idleBody)(nil)

// Hold implements rpc.BodyHolder: while held > 0 the body must be complete by start + grace +
// held / hold rate. Hold(0) lifts the deadline (the engine no longer reads into memory). It is
// called by the goroutine that reads the body, between reads.
func (b *idleBody) Hold(held int64) {
	if held <= 0 || b.pace.hold <= 0 {
		b.hard = time.Time{}
		return
	}
	b.hard = b.start.Add(b.pace.grace + time.Duration(float64(held)/float64(b.pace.hold)*float64(time.Second)))
}

// withIdleBody wraps r's body and sets its first read deadline; requests without one are left
// alone (and so are upgraded connections such as /ws, whose GET carries no body).
func withIdleBody(w http.ResponseWriter, r *http.Request, pace bodyPace) {
	if pace.idle <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	b := &idleBody{body: r.Body, rc: *http.NewResponseController(w), pace: pace, left: r.ContentLength, start: time.Now()}
	_ = b.rc.SetReadDeadline(b.start.Add(b.allowance()))
	r.Body = b
}

// allowance is how long the next Read may wait: the idle timeout, or less when the client has
// used up what the minimum rate earned it (zero or negative: the read fails unless data is
// already buffered).
func (b *idleBody) allowance() time.Duration {
	d := b.pace.idle
	if b.pace.rate > 0 {
		earned := b.pace.grace + time.Duration(b.got/b.pace.rate)*time.Second +
			time.Duration(b.got%b.pace.rate)*time.Second/time.Duration(b.pace.rate)
		d = min(d, earned-b.waited)
	}
	return d
}

// Read implements io.Reader.
func (b *idleBody) Read(p []byte) (int, error) {
	if b.done {
		return b.body.Read(p)
	}
	start := time.Now()
	deadline := start.Add(b.allowance())
	if !b.hard.IsZero() && b.hard.Before(deadline) {
		deadline = b.hard
	}
	_ = b.rc.SetReadDeadline(deadline)
	n, err := b.body.Read(p)
	b.waited += time.Since(start)
	b.got += int64(n)
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
