package app

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// idleServer serves handler on a real TCP listener behind NewHandler with a read-idle timeout.
func idleServer(t *testing.T, idle time.Duration, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	h, err := NewHandler(HandlerConfig{Logger: quiet, BodyReadIdleTimeout: idle, Modules: []Module{
		{Name: "test", Routes: []Route{{Pattern: "POST /upload", Handler: handler}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestBodyReadIdleTimeout: a body that stops arriving fails its read within the idle timeout and
// the connection is closed; a body that keeps arriving, each read within the timeout, is read
// whole even though it takes longer than the timeout in total.
func TestBodyReadIdleTimeout(t *testing.T) {
	t.Parallel()
	const idle = 150 * time.Millisecond
	readErr := make(chan error, 2)
	srv := idleServer(t, idle, func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		readErr <- err
		fmt.Fprintf(w, "%d", n)
	})

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly the start")
	start := time.Now()
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("read of a stalled body succeeded")
		}
		var ne net.Error
		if !asNetError(err, &ne) || !ne.Timeout() {
			t.Errorf("stalled body read error = %v, want a timeout", err)
		}
	case <-time.After(10 * time.Second): // a failure bound; the read must fail after ~150ms
		t.Fatal("stalled body still being read after 10s")
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(conn); err != nil { // the server answers and closes
		t.Errorf("connection of the stalled body not closed by the server: %v", err)
	}
	t.Logf("stalled body ended after %s", time.Since(start).Round(time.Millisecond))

	// A trickle: 5 chunks each arriving well within the timeout, 2.5 timeouts in total.
	pr, pw := io.Pipe()
	go func() {
		tick := time.NewTicker(idle / 2)
		defer tick.Stop()
		for range 5 {
			<-tick.C
			_, _ = pw.Write([]byte(strings.Repeat("x", 10)))
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/upload", pr)
	req.ContentLength = 50
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := <-readErr; err != nil || string(body) != "50" {
		t.Errorf("trickled body: read error %v, answer %q; want nil, 50", err, body)
	}
}

func asNetError(err error, target *net.Error) bool {
	for err != nil {
		if ne, ok := err.(net.Error); ok {
			*target = ne
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestBodyReadIdleTimeoutClearedAtEnd: once the body has been read to its end, no read deadline
// remains, so a handler that works longer than the timeout afterwards keeps its context (net/http
// reads the idle connection in the background and cancels the request if that read fails).
func TestBodyReadIdleTimeoutClearedAtEnd(t *testing.T) {
	t.Parallel()
	const idle = 50 * time.Millisecond
	srv := idleServer(t, idle, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
			http.Error(w, "context cancelled after the body was read", http.StatusInternalServerError)
		case <-time.After(6 * idle): // the handler works for six idle timeouts
			fmt.Fprint(w, "ok")
		}
	})
	resp, err := srv.Client().Post(srv.URL+"/upload", "text/plain", strings.NewReader("whole body"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("answer = %d %q, want 200 ok", resp.StatusCode, body)
	}
}
