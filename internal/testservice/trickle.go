package testservice

import (
	"io"
	"net"
	"testing"
	"time"
)

// Trickle is a slow client (issue #31 item 10): it connects to addr, sends head (a request's
// line, headers and perhaps the start of its body), then one byte every gap until the
// connection fails, and reads what the server answers until the server closes the connection.
// It returns the answer, how long until the close, and ok false when bound passed first (the
// server kept the connection open).
func Trickle(t testing.TB, addr, head string, gap, bound time.Duration) (answer []byte, took time.Duration, ok bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(gap)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{'x'}); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(start.Add(bound))
	answer, err = io.ReadAll(conn)
	if ne, isNet := err.(net.Error); isNet && ne.Timeout() {
		return answer, time.Since(start), false
	}
	return answer, time.Since(start), true
}
