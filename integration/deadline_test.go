package integration_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/svctest"
)

// deadlineSlack is how much later than its deadline a run's answer may come in the deadline
// tests: scheduling on a loaded machine, never the script (each native call below runs for
// seconds).
const deadlineSlack = 2 * time.Second

// Native calls the VM cannot interrupt: catastrophic backtracking (the pattern on a
// partner's body) and indexOf over a sparse array, each far longer than the run timeout.
var nativeLoops = []struct{ name, script string }{
	{"backtracking", `return /^(a+)+(?=c)/.test(JSON.parse(request.body).s)`},
	{"sparse indexOf", `var a = []; a.length = 2 ** 32 - 1; return a.indexOf(1)`},
}

// TestDeadlineStopsNativeCalls (issue #42 item 5): a run busy in a native builtin call answers
// at its deadline — on the gateway, in dry_run_inbound and in dry_run — as a timeout, and the
// worker process that ran it no longer exists when the answer comes (it was killed, so nothing
// keeps burning CPU); a benign delivery right after each succeeds.
func TestDeadlineStopsNativeCalls(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	var calls atomic.Int64
	srv := svctest.New(t, svctest.WithDB(config.SQLite), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Integration.SecretKey = testKey
		c.Integration.RunTimeout = timeout
	}), svctest.WithOptions(svc.WithIntegration(integration.Options{InboundHandlers: handlers(&calls), ScriptLimits: integration.Limits{Worker: integration.TestWorker}})))
	contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	create(t, srv, contractR, map[string]any{"code": "OUT.op", "name": "o"})
	body := `{"s":"` + strings.Repeat("a", 30) + `"}`
	benign := create(t, srv, systemR, map[string]any{"code": "BENIGN", "name": "b", "inboundAuth": map[string]any{"scheme": "none"}})
	create(t, srv, adapterR, map[string]any{"systemId": benign, "contractId": contract, "direction": "inbound", "script": dispatchScript})
	create(t, srv, systemR, map[string]any{"code": "OUT", "name": "o"})
	// stopped runs call, records the pid of the worker that runs it while it runs, and checks
	// the answer came within the deadline and that worker is gone.
	stopped := func(t *testing.T, what string, call func()) {
		t.Helper()
		integration.WarmWorkers(t, srv.Integration())
		pids := make(chan int, 1)
		done := make(chan struct{})
		go func() {
			for {
				if p := integration.BusyWorkerPIDs(srv.Integration()); len(p) > 0 {
					pids <- p[0]
					return
				}
				select {
				case <-done:
					close(pids)
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		start := time.Now()
		call()
		if d := time.Since(start); d > timeout+deadlineSlack {
			t.Errorf("%s answered after %v, run timeout %v", what, d, timeout)
		}
		close(done)
		pid, ok := <-pids
		switch {
		case !ok:
			t.Errorf("%s: no worker seen running the script", what)
		case !integration.ProcessGone(pid):
			t.Errorf("%s: worker %d still exists after the answer", what, pid)
		}
	}
	for i, tt := range nativeLoops {
		t.Run(tt.name, func(t *testing.T) {
			code := "HOSTILE" + string(rune('A'+i))
			sys := create(t, srv, systemR, map[string]any{"code": code, "name": "h", "inboundAuth": map[string]any{"scheme": "none"}})
			create(t, srv, adapterR, map[string]any{"systemId": sys, "contractId": contract, "direction": "inbound", "script": tt.script})

			stopped(t, "the gateway", func() {
				if status, reply, c := deliver(t, srv.URL, code, "patient.sync", "", body, nil); c != integration.ErrCodeInvocationTimeout {
					t.Errorf("gateway: %d %s, want code %d", status, reply, integration.ErrCodeInvocationTimeout)
				}
			})
			stopped(t, "dry_run_inbound", func() {
				r := encoded(t, srv, admin, opsR, "dry_run_inbound", map[string]any{"systemCode": code, "contractCode": "patient.sync",
					"request": map[string]any{"body": body}})
				var in integration.InboundDryRunResult
				json.Unmarshal(r.Data, &in)
				if r.Code != 0 || in.FailureKind != integration.KindTimeout {
					t.Errorf("dry_run_inbound: %d %s", r.Code, r.Data)
				}
			})
			stopped(t, "dry_run", func() {
				script := strings.Replace(tt.script, "JSON.parse(request.body).s", "input.s", 1)
				r := encoded(t, srv, admin, opsR, "dry_run", map[string]any{"systemCode": "OUT", "contractCode": "OUT.op",
					"script": script, "input": map[string]any{"s": strings.Repeat("a", 30)}})
				var out integration.DryRunResult
				json.Unmarshal(r.Data, &out)
				if r.Code != 0 || out.FailureKind != integration.KindTimeout {
					t.Errorf("dry_run: %d %s", r.Code, r.Data)
				}
			})
			if status, reply, _ := deliver(t, srv.URL, "BENIGN", "patient.sync", "", `{"id":"p1"}`, nil); status != 200 || reply != `{"stored":"p1"}` {
				t.Errorf("benign delivery after: %d %s", status, reply)
			}
		})
	}
}
