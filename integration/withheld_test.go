package integration_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc/integration"
)

// TestInboundCredentialsWithheld (issue #42 item 7): once the gateway has verified a delivery,
// its adapter script sees none of the credentials the partner presented — under every scheme
// that takes a secret, whatever name it came under — so it can neither return them nor store
// them in the shared cache for a dry run to read back; the other headers and query params are
// all there.
func TestInboundCredentialsWithheld(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := sandboxServer(t, &calls, nil)
	contract := create(t, srv, contractR, map[string]any{"code": "patient.sync", "name": "p"})
	const adapter = `
		const seen = JSON.stringify({h: request.headers, q: request.query});
		cache.set('seen-' + system.code, seen);
		dispatch(JSON.parse(request.body));
		return {seen}`
	for _, tt := range []struct {
		name    string
		auth    map[string]any
		headers map[string]string
		query   string
		secrets []string // what the partner presented, in every form it travelled
	}{
		{name: "basic", auth: map[string]any{"scheme": "http_basic", "params": map[string]any{"username": "u", "password": "in-pass-77"}},
			headers: map[string]string{"Authorization": "Basic dTppbi1wYXNzLTc3"}, secrets: []string{"in-pass-77", "dTppbi1wYXNzLTc3"}},
		{name: "bearer", auth: map[string]any{"scheme": "bearer", "params": map[string]any{"token": "in-token-5e1"}},
			headers: map[string]string{"Authorization": "Bearer in-token-5e1", "X-Copy": "again in-token-5e1"}, secrets: []string{"in-token-5e1"}},
		{name: "header", auth: map[string]any{"scheme": "header", "params": map[string]any{"X-Key": "hdr-key-19", "X-Other": "hdr-other-20"}},
			headers: map[string]string{"X-Key": "hdr-key-19", "X-Other": "hdr-other-20"}, secrets: []string{"hdr-key-19", "hdr-other-20"}},
		{name: "query", auth: map[string]any{"scheme": "query", "params": map[string]any{"key": "qry-key-31"}},
			query: "key=qry-key-31&alias=qry-key-31", secrets: []string{"qry-key-31"}},
		{name: "script", auth: map[string]any{"scheme": "script", "params": map[string]any{"k": "scr-key-42"},
			"script": "return request.headers['x-k'] === params.k"},
			headers: map[string]string{"X-K": "scr-key-42"}, secrets: []string{"scr-key-42"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys := create(t, srv, systemR, map[string]any{"code": tt.name, "name": tt.name, "inboundAuth": tt.auth})
			create(t, srv, adapterR, map[string]any{"systemId": sys, "contractId": contract, "direction": "inbound", "script": adapter})
			headers := map[string]string{"X-Plain": "kept"}
			for k, v := range tt.headers {
				headers[k] = v
			}
			status, body, _ := deliver(t, srv.URL, tt.name, "patient.sync", tt.query+"&plain=kept", `{"id":"p1"}`, headers)
			if status != 200 {
				t.Fatalf("delivery: %d %s", status, body)
			}
			var reply struct{ Seen string }
			json.Unmarshal([]byte(body), &reply)
			var seen struct{ H, Q map[string]string }
			if err := json.Unmarshal([]byte(reply.Seen), &seen); err != nil {
				t.Fatalf("reply %s: %v", body, err)
			}
			if seen.H["x-plain"] != "kept" || seen.Q["plain"] != "kept" {
				t.Errorf("the adapter lost the other inputs: %s", reply.Seen)
			}
			r := encoded(t, srv, admin, opsR, "dry_run_inbound", map[string]any{"systemCode": tt.name, "contractCode": "patient.sync",
				"script": "return cache.get('seen-" + tt.name + "')", "request": map[string]any{"body": `{}`}})
			var dry integration.InboundDryRunResult
			json.Unmarshal(r.Data, &dry)
			if r.Code != 0 || !strings.Contains(string(dry.Reply), "x-plain") {
				t.Fatalf("dry run reading the cache: %d %s", r.Code, r.Data)
			}
			for _, s := range tt.secrets {
				if strings.Contains(body, s) {
					t.Errorf("the adapter saw %q: %s", s, body)
				}
				if strings.Contains(string(r.Data), s) {
					t.Errorf("a dry run read %q back from the cache: %s", s, r.Data)
				}
			}
		})
	}
}
