package integration_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/svctest"
)

// gatewayMemoryLimit is the script workers' memory limit in the sandbox gateway tests.
const gatewayMemoryLimit = 128 << 20

// sandboxServer is an inbound server whose scripts run under gatewayMemoryLimit, logging to log.
func sandboxServer(t *testing.T, calls *atomic.Int64, log *slog.Logger) *svctest.Server {
	t.Helper()
	opts := []svc.Option{svc.WithIntegration(integration.Options{InboundHandlers: handlers(calls), ScriptLimits: integration.Limits{Worker: integration.TestWorker}})}
	if log != nil {
		opts = append(opts, svc.WithLogger(log))
	}
	return svctest.New(t, svctest.WithDB(config.SQLite), svctest.WithConfig(func(c *config.Config) {
		c.Security.Roles = map[string][]string{"admin": {"*"}}
		c.Integration.SecretKey = testKey
		c.Integration.Script.MemoryLimit = gatewayMemoryLimit
	}), svctest.WithOptions(opts...))
}

// TestScriptSandboxThroughGateway (issue #31 item 7, issue #42 item 4): a delivery whose script
// allocates without bound — one huge builtin call, or concatenation in a loop, which no wrapped
// builtin sees — fails with "memory limit exceeded" (its worker reached its limit and died)
// while the server's anonymous memory stays within 64 MiB of idle; right after it, a benign
// delivery of a partner succeeds. Garbage in the server's own heap never stops a script.
func TestScriptSandboxThroughGateway(t *testing.T) {
	// Not parallel: the memory bound is judged on the whole process.
	var calls atomic.Int64
	srv := sandboxServer(t, &calls, nil)
	contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	partner := create(t, srv, systemR, map[string]any{"code": "PARTNER", "name": "p", "inboundAuth": map[string]any{"scheme": "none"}})
	create(t, srv, adapterR, map[string]any{"systemId": partner, "contractId": contract, "direction": "inbound",
		"script": "let n = 0; for (let i = 0; i < 1e6; i++) n += i % 7; " + dispatchScript})

	benign := func(t *testing.T) {
		t.Helper()
		before := calls.Load()
		if status, body, _ := deliver(t, srv.URL, "PARTNER", "patient.sync", "", `{"id":"p1"}`, nil); status != 200 || !strings.Contains(body, `"stored":"p1"`) || calls.Load() != before+1 {
			t.Errorf("benign delivery: %d %s", status, body)
		}
	}
	benign(t) // the idle reading below is taken with a warm worker and a warm server
	scripts := []string{
		"return Array(3e7).fill({}).length",
		"return new Uint8Array(1.5e9).length",
		"const a = []; a.length = 1e9; return a.join('x').length",
		"let s = 'x'; const keep = []; for (;;) { s = s.concat(s); keep.push(s) }",
	}
	for _, c := range integration.ConcatenationForms {
		scripts = append(scripts, c.Body)
	}
	for i, script := range scripts {
		code := "EVIL" + string(rune('A'+i))
		evil := create(t, srv, systemR, map[string]any{"code": code, "name": code, "inboundAuth": map[string]any{"scheme": "none"}})
		create(t, srv, adapterR, map[string]any{"systemId": evil, "contractId": contract, "direction": "inbound", "script": script})
		t.Run(script, func(t *testing.T) {
			idle := integration.AnonMemory(t)
			stop := integration.PeakAnon(t)
			status, body, _ := deliver(t, srv.URL, code, "patient.sync", "", `{}`, nil)
			peak := stop()
			if status != 500 || !strings.Contains(body, "memory limit exceeded") {
				t.Errorf("hostile delivery: %d %s, want 500, memory limit exceeded", status, body)
			}
			if peak > idle+64<<20 {
				t.Errorf("server anonymous memory peaked at %d MiB from %d MiB idle, want at most 64 MiB more", peak>>20, idle>>20)
			}
			benign(t)
		})
	}

	t.Run("garbage in the server", func(t *testing.T) {
		fillWithGarbage(t, gatewayMemoryLimit+64<<20)
		benign(t)
	})
}

// garbage keeps allocations reachable until fillWithGarbage drops them.
var garbage [][]byte

// fillWithGarbage leaves n bytes of garbage in the server's heap, not yet collected.
func fillWithGarbage(t *testing.T, n uint64) {
	t.Helper()
	runtime.GC()
	for i := uint64(0); i < n>>20; i++ {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	garbage = nil
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Uint64() < n {
		t.Fatalf("heap reads %d MiB after the garbage, want over %d MiB", s[0].Value.Uint64()>>20, n>>20)
	}
}

// TestConsoleMasked (issue #31 item 11, issue #42 item 7): an adapter no longer sees the
// bearer token its partner authenticated with, and what a script can print of its secrets —
// the inbound authentication script holds its params — reaches the server log masked, whole or
// in pieces, as several arguments, spaced out or upper-cased; credential fields too.
func TestConsoleMasked(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	logs, err := os.Create(filepath.Join(t.TempDir(), "server.log")) // an *os.File takes concurrent writes
	if err != nil {
		t.Fatal(err)
	}
	srv := sandboxServer(t, &calls, slog.New(slog.NewTextHandler(logs, nil)))
	const token = "tok-8c1f2e9a77"
	contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	sys := create(t, srv, systemR, map[string]any{"code": "HIS", "name": "h",
		"inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": token}}})
	create(t, srv, adapterR, map[string]any{"systemId": sys, "contractId": contract, "direction": "inbound", "script": `
		console.log('auth header', typeof request.headers.authorization)
		console.warn({password: 'pw-5d0c3b', user: 'u', nested: {token: 'nt-41aa'}})
		return dispatch(JSON.parse(request.body))`})
	if status, body, _ := deliver(t, srv.URL, "HIS", "patient.sync", "", `{"id":"p1"}`, map[string]string{"Authorization": "Bearer " + token}); status != 200 {
		t.Fatalf("delivery: %d %s", status, body)
	}
	raw, _ := os.ReadFile(logs.Name())
	out := string(raw)
	for _, secret := range []string{token, "pw-5d0c3b", "nt-41aa"} {
		if strings.Contains(out, secret) {
			t.Errorf("server log holds %q:\n%s", secret, out)
		}
	}
	if n := strings.Count(out, integration.MaskedSecret); n < 2 {
		t.Errorf("server log has %d masks, want 2 (password, token):\n%s", n, out)
	}
	if !strings.Contains(out, "auth header undefined") || !strings.Contains(out, `\"user\":\"u\"`) {
		t.Errorf("server log lacks the console output or the adapter saw the header:\n%s", out)
	}

	// The inbound authentication script sees the partner's key: every form of it it prints
	// that keeps its letters and digits in order is masked.
	const key = "sk-7e21b9c04d"
	scripted := create(t, srv, systemR, map[string]any{"code": "SCRIPTED", "name": "s",
		"inboundAuth": map[string]any{"scheme": "script", "params": map[string]any{"k": key},
			"script": `const k = params.k;
				console.log('inbound key', k);
				console.log(k.slice(0, 5), k.slice(5));
				console.log('spaced', k.split('').join(' '));
				console.info('upper', k.toUpperCase(), 'end');
				console.log('joined ' + k.slice(0, 4) + '|' + k.slice(4));
				return request.headers['x-k'] === k`}})
	create(t, srv, adapterR, map[string]any{"systemId": scripted, "contractId": contract, "direction": "inbound",
		"script": "return dispatch(JSON.parse(request.body))"})
	if status, body, _ := deliver(t, srv.URL, "SCRIPTED", "patient.sync", "", `{"id":"p2"}`, map[string]string{"X-K": key}); status != 200 {
		t.Fatalf("scripted delivery: %d %s", status, body)
	}
	raw, _ = os.ReadFile(logs.Name())
	out = string(raw)
	for _, piece := range []string{key, key[5:], "s k - 7 e 2 1", strings.ToUpper(key), key[4:]} {
		if strings.Contains(out, piece) {
			t.Errorf("server log holds %q:\n%s", piece, out)
		}
	}
	if n := strings.Count(out, integration.MaskedSecret); n < 2+5 {
		t.Errorf("server log has %d masks, want 7 (2 + the auth script's 5 lines):\n%s", n, out)
	}
}
