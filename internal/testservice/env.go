package testservice

import (
	"os"
	"strings"
)

// ChildEnv returns the environment for a child process a test starts: the test's own
// environment without the caller's SVC_* configuration variables, followed by extra. The
// SVC_TEST_* service addresses stay. svctest.ChildEnv documents it for host tests.
func ChildEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SVC_") && !strings.HasPrefix(kv, "SVC_TEST_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// NoEnv is an environment lookup that finds no variable.
func NoEnv(string) (string, bool) { return "", false }
