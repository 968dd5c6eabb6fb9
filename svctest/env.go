package svctest

import "github.com/svc-framework/svc/internal/testservice"

// ChildEnv returns the environment for a child process a test starts (a server binary, a crash
// helper, a shell walkthrough): the test's own environment without the caller's SVC_*
// configuration variables, which would otherwise override the child's configuration file (a
// person with SVC_APP_PORT exported must still see the suite pass), followed by extra. The
// SVC_TEST_* service addresses stay, so a child reaches the same real services.
func ChildEnv(extra ...string) []string { return testservice.ChildEnv(extra...) }

// NoEnv is an environment lookup that finds no variable: pass it as config.LoadOptions.Env so a
// test of configuration loading reads the file alone, whatever the caller has exported.
func NoEnv(name string) (string, bool) { return testservice.NoEnv(name) }
