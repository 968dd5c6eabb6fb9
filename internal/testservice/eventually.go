package testservice

import (
	"testing"
	"time"
)

// Eventually polls cond every few milliseconds until it returns true or timeout passes, then
// fails the test with msg. Use it instead of time.Sleep to wait for background work.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", timeout, msg)
		}
		time.Sleep(wait)
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}
