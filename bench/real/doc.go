// Package real measures the shipped binary's authenticated path (issue #13): run.sh drives
// `svc serve` with wrk side by side with a bare net/http handler, and BenchmarkGetUserInfo runs
// the same get_user_info request through the shipped configuration's root handler in process,
// for CPU and allocation profiles.
package real
