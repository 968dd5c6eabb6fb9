package app

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svc-framework/svc/internal/testservice"
)

// paceServer serves handler on a real TCP listener behind NewHandler with a generous read-idle
// timeout and a minimum body rate.
func paceServer(t *testing.T, rate int64, grace time.Duration, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	h, err := NewHandler(HandlerConfig{Logger: quiet, BodyReadIdleTimeout: 5 * time.Second, BodyMinRate: rate, BodyMinRateGrace: grace,
		Modules: []Module{{Name: "test", Routes: []Route{{Pattern: "POST /upload", Handler: handler}}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// failBound turns a hang into a failure; what it bounds must end far sooner (about the grace).
const failBound = 20 * time.Second

// TestBodyMinRate is issue #31 item 10: a body trickled in one byte every 20 ms — well within
// the 5 s read-idle timeout, which alone kept it open for ever — is ended once the grace has
// passed and it falls behind the minimum rate, and so is net/http's drain of a small body a
// handler never read; a body at a modest rate above the minimum passes although it takes longer
// than the grace, and so does a body whose handler waits longer than the grace before reading
// (only waiting in Read counts against the client).
func TestBodyMinRate(t *testing.T) {
	t.Parallel()
	const rate, grace = 1000, 300 * time.Millisecond
	readErr := make(chan error, 1)
	reader := paceServer(t, rate, grace, func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			readErr <- err
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d", n)
	})
	ignorer := paceServer(t, rate, grace, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ignored") })

	t.Run("trickle is ended", func(t *testing.T) {
		answer, took, ok := testservice.Trickle(t, reader.Listener.Addr().String(), "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 20*time.Millisecond, failBound)
		if !ok {
			t.Fatalf("a body trickled at 50 B/s (minimum %d B/s) still open after %s", rate, failBound)
		}
		var ne net.Error
		if err := <-readErr; !asNetError(err, &ne) || !ne.Timeout() {
			t.Errorf("trickled body read error = %v, want a timeout", err)
		}
		if !bytes.Contains(answer, []byte(" 400 ")) {
			t.Errorf("answer %q, want the handler's 400", answer)
		}
		t.Logf("trickled body ended after %s", took.Round(time.Millisecond))
	})
	t.Run("unread body's drain is ended", func(t *testing.T) {
		answer, took, ok := testservice.Trickle(t, ignorer.Listener.Addr().String(), "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", 20*time.Millisecond, failBound)
		if !ok {
			t.Fatalf("the drain of an unread trickled body still running after %s", failBound)
		}
		if !bytes.Contains(answer, []byte("ignored")) {
			t.Errorf("answer %q, want the handler's", answer)
		}
		t.Logf("drain ended after %s", took.Round(time.Millisecond))
	})
	t.Run("modest rate passes", func(t *testing.T) {
		// 10 kB/s, ten times the minimum, for about a second: three graces.
		pr, pw := io.Pipe()
		go func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for range 10 {
				<-tick.C
				_, _ = pw.Write(bytes.Repeat([]byte("x"), 1000))
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, reader.URL+"/upload", pr)
		req.ContentLength = 10000
		expectAnswer(t, reader, req, http.StatusOK, "10000")
	})

	late := paceServer(t, rate, grace, func(w http.ResponseWriter, r *http.Request) {
		<-time.After(4 * grace) // busy elsewhere (a budget wait, storing a part) before reading
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d", n)
	})
	t.Run("handler's own pause is not charged", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, late.URL+"/upload", bytes.NewReader(make([]byte, 500)))
		expectAnswer(t, late, req, http.StatusOK, "500")
	})
}

func expectAnswer(t *testing.T, srv *httptest.Server, req *http.Request, status int, body string) {
	t.Helper()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || string(got) != body {
		t.Errorf("answer = %d %q, want %d %q", resp.StatusCode, got, status, body)
	}
}
