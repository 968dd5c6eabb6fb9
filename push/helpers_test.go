package push_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/svctest"
)

// wait bounds every wait for a frame or a close in these tests.
const wait = 5 * time.Second

// pushServer boots a server with push enabled (pings every hour unless a test changes it).
func pushServer(t *testing.T, opts ...svctest.Option) *svctest.Server {
	t.Helper()
	base := svctest.WithConfig(func(c *config.Config) {
		c.Push.Enabled = true
		c.Push.PingInterval = time.Hour
	})
	return svctest.New(t, append([]svctest.Option{base}, opts...)...)
}

// withPush changes svc.push.
func withPush(f func(*config.Push)) svctest.Option {
	return svctest.WithConfig(func(c *config.Config) { f(&c.Push) })
}

// wsURL is the server's push endpoint as a ws:// URL with an optional query.
func wsURL(srv *svctest.Server, query string) string {
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + srv.Config().Push.Path
	if query != "" {
		u += "?" + query
	}
	return u
}

// client is a real WebSocket client reading frames in the background (so it answers pings).
type client struct {
	ws     *websocket.Conn
	frames chan []byte
	done   chan struct{}
	err    error // the read error that ended the client; valid after done
}

// dial connects with the token in the query (as the real client does) and starts reading.
func dial(t *testing.T, srv *svctest.Server, token string) *client {
	t.Helper()
	c, resp, err := tryDial(srv, "__accessToken="+token, nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, status(resp))
	}
	return c
}

func status(r *http.Response) string {
	if r == nil {
		return "no response"
	}
	return r.Status
}

// tryDial connects and starts reading; the response is the handshake's.
func tryDial(srv *svctest.Server, query string, header http.Header) (*client, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, wsURL(srv, query), &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(1 << 24)
	c := &client{ws: ws, frames: make(chan []byte, 1024), done: make(chan struct{})}
	go c.readLoop()
	return c, resp, nil
}

func (c *client) readLoop() {
	defer close(c.done)
	for {
		_, b, err := c.ws.Read(context.Background())
		if err != nil {
			c.err = err
			return
		}
		c.frames <- b
	}
}

// next returns the next frame, skipping relay probes (waitRelay), failing after wait.
func (c *client) next(t *testing.T) push.Message {
	t.Helper()
	select {
	case b := <-c.frames:
		var m push.Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("frame %s: %v", b, err)
		}
		if m.Type == "probe" {
			return c.next(t)
		}
		return m
	case <-c.done:
		t.Fatalf("connection ended before a frame: %v", c.err)
	case <-time.After(wait):
		t.Fatal("no frame within the wait")
	}
	return push.Message{}
}

// raw returns the next frame's bytes.
func (c *client) raw(t *testing.T) []byte {
	t.Helper()
	select {
	case b := <-c.frames:
		return b
	case <-time.After(wait):
		t.Fatal("no frame within the wait")
	}
	return nil
}

// closed waits for the end of the connection and returns the close status (-1 without a close
// frame) and reason.
func (c *client) closed(t *testing.T, within time.Duration) (websocket.StatusCode, string) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(within):
		t.Fatalf("connection still open after %v", within)
	}
	var ce websocket.CloseError
	if errors.As(c.err, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// wantClose checks the close code and reason.
func (c *client) wantClose(t *testing.T, within time.Duration, code websocket.StatusCode, reason string, orReasons ...string) {
	t.Helper()
	got, why := c.closed(t, within)
	if got == code && (why == reason || slices.Contains(orReasons, why)) {
		return
	}
	t.Fatalf("close = %d %q, want %d %q (or %q)", got, why, code, reason, orReasons)
}

// connections waits until the node holds n connections.
func connections(t *testing.T, srv *svctest.Server, n int) {
	t.Helper()
	svctest.Eventually(t, wait, func() bool { return srv.Push().Connections() == n },
		fmt.Sprintf("want %d connections", n))
}

var userSeq atomic.Int64

// login creates a built-in user and logs in with a password, returning the access token (a
// JWT with a token family, or an opaque session token), the user id and the user name.
func login(t *testing.T, srv *svctest.Server) (token, userID, name string) {
	t.Helper()
	name = fmt.Sprintf("pu%03d", userSeq.Add(1))
	u, err := srv.Security().Store().Create(context.Background(), name, name, "Correct-Horse-9", nil)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	return loginAs(t, srv, name), u.ID, name
}

// loginAs logs the built-in user name in again and returns the access token.
func loginAs(t *testing.T, srv *svctest.Server, name string) string {
	t.Helper()
	return srv.Login(t, name, "Correct-Horse-9")
}

// send pushes through the node's Notifier, failing the test on error.
func send(t *testing.T, srv *svctest.Server, msg push.Message, targets ...push.Target) {
	t.Helper()
	if err := srv.Push().Push(context.Background(), msg, targets...); err != nil {
		t.Fatalf("push: %v", err)
	}
}

// dialMute connects user with a client that never reads: frames pile up in the socket buffers
// and pings go unanswered.
func dialMute(t *testing.T, srv *svctest.Server, user string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, wsURL(srv, "__accessToken="+srv.Token(t, svctest.User(user))), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws
}
