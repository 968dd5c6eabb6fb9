package monitor_test

import (
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/svctest"
)

// TestReadinessServer: in the real boot chain get_readiness lists the primary data source with
// its type, and the key-value store only when enabled, all ready, on every database.
func TestReadinessServer(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, srv *svctest.Server, want []monitor.ReadinessCheck) {
		t.Helper()
		r := srv.Call(t, monitor.Resource, "get_readiness", nil, asAdmin())
		if r.Code != 0 {
			t.Fatalf("get_readiness: %d %s", r.Code, r.Message)
		}
		var got monitor.Readiness
		r.DataAs(t, &got)
		if !got.Ready || len(got.Checks) != len(want) {
			t.Fatalf("readiness = %+v, want %d ready checks", got, len(want))
		}
		for i, w := range want {
			c := got.Checks[i]
			if c.Name != w.Name || c.Kind != w.Kind || c.Type != w.Type || !c.Ready || c.LatencyMs < 0 {
				t.Errorf("check %d = %+v, want %+v ready", i, c, w)
			}
		}
	}
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := svctest.New(t, svctest.WithDB(kind), withWindow(time.Hour))
		check(t, srv, []monitor.ReadinessCheck{{Name: "primary", Kind: monitor.KindDataSource, Type: string(kind)}})
	})
	t.Run("redis", func(t *testing.T) {
		kv := svctest.RedisConfig(t)
		srv := svctest.New(t, withWindow(time.Hour), svctest.WithConfig(func(c *config.Config) { c.KVStore = kv }))
		check(t, srv, []monitor.ReadinessCheck{{Name: "primary", Kind: monitor.KindDataSource, Type: "sqlite"},
			{Name: "kvstore", Kind: monitor.KindKVStore, Type: "redis"}})
	})
}
