package monitor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-framework/svc/rpc"
)

// TestReadinessChecks: every dependency is checked in the listed order, a failing or hanging one
// makes the answer not ready without failing the call, and a hanging one is cut at
// readinessTimeout.
func TestReadinessChecks(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("dial tcp 10.0.0.5:5432: refused") }
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	m := testMonitor(&fakeProbes{}, Options{Dependencies: []Dependency{
		{Name: "primary", Kind: KindDataSource, Type: "postgres", Ping: ok},
		{Name: "reports", Kind: KindDataSource, Type: "mysql", Ping: down},
		{Name: "kvstore", Kind: KindKVStore, Type: "redis", Ping: hang},
	}})
	start := time.Now()
	got, err := m.getReadiness(context.Background(), rpc.Call{}, rpc.NoParams{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < readinessTimeout || took > readinessTimeout+time.Second {
		t.Errorf("took %v, want the hanging check cut at %v", took, readinessTimeout)
	}
	want := &Readiness{Ready: false, Checks: []ReadinessCheck{
		{Name: "primary", Kind: KindDataSource, Type: "postgres", Ready: true},
		{Name: "reports", Kind: KindDataSource, Type: "mysql", Ready: false},
		{Name: "kvstore", Kind: KindKVStore, Type: "redis", Ready: false},
	}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(ReadinessCheck{}, "LatencyMs")); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if got.Checks[2].LatencyMs < float64(readinessTimeout.Milliseconds()) {
		t.Errorf("hanging check latency = %v ms", got.Checks[2].LatencyMs)
	}

	none, _ := testMonitor(&fakeProbes{}, Options{}).getReadiness(context.Background(), rpc.Call{}, rpc.NoParams{})
	if !none.Ready || none.Checks == nil || len(none.Checks) != 0 {
		t.Errorf("without dependencies = %+v, want ready with an empty list", none)
	}
}
