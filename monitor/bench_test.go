package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// BenchmarkActions measures the per-request cost of actions on the real host probes: the
// operation's Invoke (as the engine calls it) plus the JSON encoding of the data. get_cpu and
// get_process read the sampler's cache as get_build_info reads the build data kept since
// Build: no probe runs; what differs is only the size of the JSON. The live get_memory and
// get_load, and get_overview, are shown for contrast.
//
//	go test -run '^$' -bench Actions -benchmem ./monitor/
func BenchmarkActions(b *testing.B) {
	m := newMonitor(app.Platform{Config: config.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Options{}, newHostProbes())
	m.sampler.wait = func(context.Context, time.Duration) error { return nil } // a zero window: only the cache matters here
	m.sampler.sampleOnce(context.Background())
	ops := map[string]rpc.Op{}
	for _, op := range m.resource().Ops {
		ops[op.Action] = op
	}
	for _, action := range []string{"get_build_info", "get_cpu", "get_process", "get_overview", "get_memory", "get_load"} {
		op := ops[action]
		b.Run(action, func(b *testing.B) {
			ctx, call := context.Background(), rpc.Call{Action: action}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			b.ReportAllocs()
			for b.Loop() {
				v, err := op.Invoke(ctx, call, nil)
				if err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				if err := enc.Encode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
