package testservice

import (
	"fmt"
	"net/http"
	"time"
)

// WaitReady polls GET base+"/readyz" every 50 ms until it answers 200, for at most timeout (a
// load script waiting for the svc process it started).
func WaitReady(base string, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %v", base, timeout, err)
		}
	}
}
