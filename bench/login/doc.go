// Package login holds the login benchmarks of the security module (issue #4): login throughput
// at the default password-hash strength, and the cost of the lockout and password-policy checks
// relative to one login. Run them with
//
//	go test -run '^$' -bench . -benchmem ./bench/login/
//
// BenchmarkLoginGuardOverhead reports the metric "overhead-%": the lockout check and reset plus
// a full password-policy check, as a percentage of one password verification at the default
// parameters. The target is below 2.
package login
