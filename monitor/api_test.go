package monitor_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// withWindow sets svc.monitor.sample_duration (the interval stays at its default) and the roles
// of the tests: admin grants every permission, ops grants sys.monitor.query.
func withWindow(d time.Duration) svctest.Option {
	return svctest.WithConfig(func(c *config.Config) {
		c.Monitor.SampleDuration = d
		c.Security.Roles = map[string][]string{"admin": {"*"}, "ops": {monitor.Permission}}
	})
}

// asAdmin is an authenticated caller with every permission.
func asAdmin() svctest.CallOption { return svctest.As(svctest.User("admin", "admin")) }

// keys returns the sorted top-level keys of a JSON object.
func keys(t *testing.T, data json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("data %s: %v", data, err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestMonitorAPI(t *testing.T) {
	t.Parallel()
	build, _ := json.Marshal(app.BuildInfo())
	fields := func(s string) []string { f := strings.Fields(s); slices.Sort(f); return f }
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		srv := svctest.New(t, svctest.WithDB(kind), withWindow(time.Millisecond))
		admin := asAdmin()
		svctest.Eventually(t, 10*time.Second, func() bool {
			return srv.Call(t, monitor.Resource, "get_process", nil, admin).Code == 0
		}, "the sampler's first sample")

		tests := []struct {
			action   string
			wantKeys []string // nil: compare wantJSON
			wantJSON string
		}{
			{"get_overview", fields("host cpu memory disk network process load build"), ""},
			{"get_cpu", fields("physicalCores logicalCores modelName mhz cacheSize usagePercent totalPercent vendorId family model stepping microcode effectiveCores"), ""},
			{"get_memory", fields("virtual swap"), ""},
			{"get_disk", fields("partitions ioCounters"), ""},
			{"get_network", fields("interfaces ioCounters"), ""},
			{"get_host", fields("hostname uptime bootTime processes os platform platformFamily platformVersion kernelVersion kernelArch virtualizationSystem virtualizationRole hostId"), ""},
			{"get_process", fields("pid parentPid name exe commandLine cwd status username createTime numThreads numFds cpuPercent memoryPercent memoryRss memoryVms memorySwap"), ""},
			{"get_load", fields("load1 load5 load15"), ""},
			{"get_build_info", nil, string(build)},
			{"get_event_streams", nil, `{"enabled":false,"streams":[]}`},
			{"get_integration_stats", nil, `{"enabled":false,"stats":[]}`},
		}
		for _, tt := range tests {
			t.Run(tt.action, func(t *testing.T) {
				resp := srv.Call(t, monitor.Resource, tt.action, map[string]any{"ignored": true}, admin)
				if resp.Status != http.StatusOK || resp.Code != 0 {
					t.Fatalf("status, code = %d, %d (%s), want 200, 0", resp.Status, resp.Code, resp.Message)
				}
				if tt.wantKeys != nil {
					if diff := cmp.Diff(tt.wantKeys, keys(t, resp.Data)); diff != "" {
						t.Errorf("fields mismatch (-want +got):\n%s", diff)
					}
				} else if !jsonEqual(t, tt.wantJSON, resp.Data) {
					t.Errorf("data = %s, want %s", resp.Data, tt.wantJSON)
				}
			})
			t.Run(tt.action+" needs bearer", func(t *testing.T) {
				resp := srv.Call(t, monitor.Resource, tt.action, nil)
				if resp.Status != http.StatusUnauthorized || resp.Code != rpc.CodeUnauthenticated {
					t.Errorf("status, code = %d, %d, want 401, %d", resp.Status, resp.Code, rpc.CodeUnauthenticated)
				}
			})
		}

		t.Run("overview parts after the first sample", func(t *testing.T) {
			var ov map[string]json.RawMessage
			srv.Call(t, monitor.Resource, "get_overview", nil, admin).DataAs(t, &ov)
			for _, part := range []string{"host", "cpu", "memory", "disk", "network", "process", "load", "build"} {
				if string(ov[part]) == "null" {
					t.Errorf("overview %s is null on a healthy host", part)
				}
			}
			// The original's monitor page reads build.vefVersion (real-client compatibility).
			var b map[string]any
			if err := json.Unmarshal(ov["build"], &b); err != nil || b["vefVersion"] != app.BuildInfo().FrameworkVersion ||
				b["vefVersion"] != b["frameworkVersion"] {
				t.Errorf("overview build = %s, want vefVersion = frameworkVersion = %q", ov["build"], app.BuildInfo().FrameworkVersion)
			}
			var disk monitor.DiskSummary
			if err := json.Unmarshal(ov["disk"], &disk); err != nil || disk.Partitions != 1 || disk.Total == 0 {
				t.Errorf("overview disk = %s, want the root filesystem only", ov["disk"])
			}
		})
	})
}

// TestMonitorPermission (issue #11): every action needs sys.monitor.query — 403/1100 for an
// authenticated user without it, 200 with the permission alone or with admin's "*".
func TestMonitorPermission(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, withWindow(time.Hour))
	nobody := svctest.As(svctest.User("nobody"))
	ops := svctest.As(svctest.User("ops", "ops"))
	for _, action := range []string{"get_overview", "get_cpu", "get_memory", "get_disk", "get_network", "get_host",
		"get_process", "get_load", "get_build_info", "get_event_streams", "get_integration_stats", "get_readiness"} {
		if resp := srv.Call(t, monitor.Resource, action, nil, nobody); resp.Status != http.StatusForbidden || resp.Code != rpc.CodeAccessDenied {
			t.Errorf("%s without the permission: status, code = %d, %d; want 403, %d", action, resp.Status, resp.Code, rpc.CodeAccessDenied)
		}
	}
	for _, as := range []svctest.CallOption{ops, asAdmin()} {
		if resp := srv.Call(t, monitor.Resource, "get_build_info", nil, as); resp.Status != http.StatusOK || resp.Code != 0 {
			t.Errorf("get_build_info with the permission: status, code = %d, %d; want 200, 0", resp.Status, resp.Code)
		}
	}
}

// TestMonitorNotReady: before the first sample completes, the sampled actions answer 2100 and
// the overview shows their parts as null.
func TestMonitorNotReady(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, withWindow(time.Hour)) // the first sample never completes in this test
	admin := asAdmin()
	for _, action := range []string{"get_cpu", "get_process"} {
		resp := srv.Call(t, monitor.Resource, action, nil, admin)
		if resp.Status != http.StatusOK || resp.Code != monitor.CodeNotReady || string(resp.Data) != "null" {
			t.Errorf("%s: status, code, data = %d, %d, %s, want 200, 2100, null", action, resp.Status, resp.Code, resp.Data)
		}
		if want := "Monitoring data is not ready yet, please try again later"; resp.Message != want {
			t.Errorf("%s: message = %q, want %q", action, resp.Message, want)
		}
	}
	var ov map[string]json.RawMessage
	resp := srv.Call(t, monitor.Resource, "get_overview", nil, admin)
	if resp.Code != 0 {
		t.Fatalf("get_overview code = %d, want 0", resp.Code)
	}
	resp.DataAs(t, &ov)
	if string(ov["cpu"]) != "null" || string(ov["process"]) != "null" || string(ov["build"]) == "null" {
		t.Errorf("overview cpu, process, build = %s, %s, %s; want null, null, present", ov["cpu"], ov["process"], ov["build"])
	}
}

// TestMonitorRateLimit: 60 calls per engine period and principal, then 429/1401.
func TestMonitorRateLimit(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, withWindow(time.Hour))
	for _, action := range []string{"get_build_info", "get_cpu", "get_event_streams"} {
		t.Run(action, func(t *testing.T) {
			as := svctest.As(svctest.User("limit-"+action, "admin"))
			for i := 1; i <= 60; i++ {
				if resp := srv.Call(t, monitor.Resource, action, nil, as); resp.Status != http.StatusOK {
					t.Fatalf("call %d: status %d, code %d", i, resp.Status, resp.Code)
				}
			}
			resp := srv.Call(t, monitor.Resource, action, nil, as)
			if resp.Status != http.StatusTooManyRequests || resp.Code != rpc.CodeTooManyRequests {
				t.Errorf("call 61: status, code = %d, %d, want 429, %d", resp.Status, resp.Code, rpc.CodeTooManyRequests)
			}
		})
	}
}

func jsonEqual(t *testing.T, want string, got json.RawMessage) bool {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(w, g)
}
