// Command worker is the script worker of package integration's tests: a binary that imports
// the package and nothing else, so that the package's init turns it into a worker when the
// pool starts it (integration.Limits.Worker). TestMain builds it without the race detector,
// whatever the test binary's flags: the tests measure the memory limit and the deadlines on
// the worker that ships, not on a race-instrumented copy of the test binary.
package main

import (
	"fmt"
	"os"

	_ "github.com/svc-framework/svc/integration"
)

func main() {
	fmt.Fprintln(os.Stderr, "worker: this is the integration tests' script worker; the tests start it")
	os.Exit(2)
}
