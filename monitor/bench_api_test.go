//go:build unix

package monitor_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/svctest"
)

// BenchmarkAPI calls actions through the whole server (HTTP, Bearer check, rate limiter,
// envelope) and reports the process's CPU time per request as cpu-ns/op, client side
// included. get_cpu answers from the sampler's cache, so it costs what get_build_info costs;
// get_memory, which reads /proc on every call, is shown for contrast.
//
//	go test -run '^$' -bench API ./monitor/
func BenchmarkAPI(b *testing.B) {
	srv := svctest.New(b, withWindow(time.Millisecond), svctest.WithConfig(func(c *config.Config) {
		// The operations keep their limit of 60 but inherit the engine period: a short period
		// lets the benchmark run past 60 calls.
		c.API.RateLimit.Period = time.Microsecond
	}))
	token := svctest.WithToken(srv.Token(b, svctest.User("bench", "admin")))
	svctest.Eventually(b, 10*time.Second, func() bool {
		return srv.Call(b, monitor.Resource, "get_cpu", nil, token).Code == 0
	}, "the first sample")
	for _, action := range []string{"get_build_info", "get_cpu", "get_memory"} {
		b.Run(action, func(b *testing.B) {
			start := cpuTime(b)
			for b.Loop() {
				if resp := srv.Call(b, monitor.Resource, action, nil, token); resp.Code != 0 {
					b.Fatalf("code %d: %s", resp.Code, resp.Message)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
