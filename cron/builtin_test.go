package cron

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	bus "github.com/svc-framework/svc/event"
)

func TestHostPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		host    string
		addr    string
		allowed bool
	}{
		{"empty list: public address", nil, "example.com", "93.184.216.34", true},
		{"empty list: loopback", nil, "localhost", "127.0.0.1", false},
		{"empty list: metadata", nil, "169.254.169.254", "169.254.169.254", false},
		{"empty list: private", nil, "intranet", "10.1.2.3", false},
		{"empty list: CGNAT metadata", nil, "m", "100.100.100.200", false},
		{"empty list: IPv6 loopback", nil, "::1", "::1", false},
		{"empty list: mapped loopback", nil, "x", "::ffff:127.0.0.1", false},
		{"empty list: unique local", nil, "x", "fd00:ec2::254", false},
		{"empty list: unspecified IPv6", nil, "x", "::", false},
		{"empty list: IPv4-compatible loopback", nil, "x", "::127.0.0.1", false},
		{"empty list: IPv4-compatible metadata", nil, "x", "::a9fe:a9fe", false},
		{"empty list: IPv4-compatible private", nil, "x", "::10.0.0.1", false},
		{"empty list: IPv4-compatible public", nil, "x", "::93.184.216.34", false},
		{"empty list: NAT64 metadata", nil, "x", "64:ff9b::a9fe:a9fe", false},
		{"empty list: public IPv6", nil, "example.com", "2606:2800:220:1:248:1893:25c8:1946", true},
		{"listed name, public address", []string{"api.example.com"}, "API.example.com", "93.184.216.34", true},
		{"unlisted name", []string{"api.example.com"}, "other.example.com", "93.184.216.34", false},
		{"wildcard subdomain", []string{"*.example.com"}, "a.b.example.com", "93.184.216.34", true},
		{"wildcard is not the apex", []string{"*.example.com"}, "example.com", "93.184.216.34", false},
		{"listed name rebinding to loopback", []string{"api.example.com"}, "api.example.com", "127.0.0.1", false},
		{"listed IP", []string{"127.0.0.1"}, "127.0.0.1", "127.0.0.1", true},
		{"listed CIDR covers private", []string{"10.0.0.0/8"}, "intranet", "10.9.8.7", true},
		{"CIDR does not cover", []string{"10.0.0.0/8"}, "intranet", "192.168.1.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewHostPolicy(tt.entries)
			if err != nil {
				t.Fatalf("NewHostPolicy: %v", err)
			}
			err = p.CheckAddr(tt.host, netip.MustParseAddr(tt.addr))
			if (err == nil) != tt.allowed {
				t.Fatalf("CheckAddr(%s, %s) = %v, want allowed %t", tt.host, tt.addr, err, tt.allowed)
			}
			if err != nil && !errors.Is(err, ErrHostNotAllowed) {
				t.Fatalf("error %v is not ErrHostNotAllowed", err)
			}
		})
	}
	for _, bad := range []string{"", "http://x", "x:80", "a/b", "10.0.0.0/33"} {
		if _, err := NewHostPolicy([]string{bad}); err == nil {
			t.Errorf("NewHostPolicy(%q) accepted", bad)
		}
	}
}

// runHTTP runs the http.request job with params under the allow-list entries.
func runHTTP(t *testing.T, entries []string, params map[string]any) error {
	t.Helper()
	p, err := NewHostPolicy(entries)
	if err != nil {
		t.Fatalf("NewHostPolicy: %v", err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return HTTPRequestJob(p).Execute(context.Background(), Execution{JobName: JobHTTPRequest, Params: raw})
}

func TestHTTPRequestJob(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Token")+" "+string(body))
		mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusNoContent)
		case "/fail":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, strings.Repeat("upstream down ", 100))
		case "/to-private":
			http.Redirect(w, r, "http://10.255.255.1/x", http.StatusFound)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
		}
	}))
	defer srv.Close()
	local := []string{"127.0.0.1"}

	if err := runHTTP(t, local, map[string]any{"method": "post", "url": srv.URL + "/ok", "headers": map[string]string{"X-Token": "t1"}, "body": "hi", "timeout": "5s"}); err != nil {
		t.Fatalf("2xx: %v", err)
	}
	mu.Lock()
	if len(got) != 1 || got[0] != "POST /ok t1 hi" {
		t.Fatalf("server saw %q, want the POST with header and body", got)
	}
	mu.Unlock()

	err := runHTTP(t, local, map[string]any{"url": srv.URL + "/fail?token=secret", "timeout": 5000})
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") || !strings.Contains(err.Error(), "upstream down") {
		t.Fatalf("non-2xx: %v, want the status and a body excerpt", err)
	}
	if strings.Contains(err.Error(), "secret") || len(err.Error()) > httpExcerptBytes+200 {
		t.Fatalf("error leaks the query or is unbounded (%d bytes): %v", len(err.Error()), err)
	}

	refused := []struct {
		name    string
		entries []string
		url     string
	}{
		{"loopback not listed", nil, srv.URL + "/ok"},
		{"listed name resolving to loopback", []string{"localhost"}, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ok"},
		{"redirect to a private address", local, srv.URL + "/to-private"},
		{"redirect to another scheme", local, srv.URL + "/to-ftp"},
		{"file scheme", local, "file:///etc/passwd"},
		{"IPv4-compatible loopback literal", nil, "http://[::127.0.0.1]" + srv.URL[len("http://127.0.0.1"):] + "/ok"},
		{"IPv4-compatible metadata literal", nil, "http://[::a9fe:a9fe]/latest"},
	}
	for _, tt := range refused {
		if err := runHTTP(t, tt.entries, map[string]any{"url": tt.url}); !errors.Is(err, ErrHostNotAllowed) {
			t.Errorf("%s: %v, want ErrHostNotAllowed", tt.name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 4 { // /ok, /fail, /to-private, /to-ftp; the refused dials never arrive
		t.Fatalf("server saw %d requests %q, want 4", len(got), got)
	}
}

// publishRecorder is an event.Publisher that keeps what it is given.
type publishRecorder struct {
	mu   sync.Mutex
	evts []bus.Event
}

func (p *publishRecorder) Publish(_ context.Context, e bus.Event, _ ...bus.PublishOption) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evts = append(p.evts, e)
	return nil
}

func (p *publishRecorder) PublishBatch(ctx context.Context, es []bus.Event, opts ...bus.PublishOption) error {
	for _, e := range es {
		_ = p.Publish(ctx, e, opts...)
	}
	return nil
}

func TestEventPublishJob(t *testing.T) {
	t.Parallel()
	rec := &publishRecorder{}
	job := EventPublishJob(rec)
	run := func(params string) error {
		return job.Execute(context.Background(), Execution{JobName: JobEventPublish, Params: json.RawMessage(params)})
	}
	if err := run(`{"type":"app.report.due","payload":{"n":1}}`); err != nil {
		t.Fatalf("publish: %v", err)
	}
	for _, bad := range []string{`{}`, `{"type":"svc.cron.run.failed"}`, `{"type":"SVC.cron.run.failed"}`, `{"type":"Svc.x"}`, `{"type":3}`} {
		if err := run(bad); err == nil {
			t.Errorf("params %s accepted", bad)
		}
	}
	if len(rec.evts) != 1 || rec.evts[0].EventType() != "app.report.due" {
		t.Fatalf("published %v, want one app.report.due", rec.evts)
	}
	if b, _ := json.Marshal(rec.evts[0]); string(b) != `{"n":1}` {
		t.Fatalf("payload %s, want {\"n\":1}", b)
	}
	if err := EventPublishJob(nil).Execute(context.Background(), Execution{Params: json.RawMessage(`{"type":"a"}`)}); err == nil {
		t.Fatal("event.publish without a bus succeeded")
	}
}

func TestBuiltinsOptIn(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	deps := app.Platform{Config: cfg, DB: &db.DB{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	plain, err := New(deps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Jobs().Names()) != 0 {
		t.Fatalf("library host got jobs %v without opting in", plain.Jobs().Names())
	}
	with, err := New(deps, Options{Builtins: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(with.Jobs().Names(), ","); got != "event.publish,http.request" {
		t.Fatalf("builtins = %s", got)
	}
	cfg.Cron.Store.HTTPAllowedHosts = []string{"http://bad"}
	if _, err := New(deps, Options{Builtins: true}); err == nil {
		t.Fatal("New accepted an invalid allow-list entry")
	}
}

// The http.request job stamps the run's identity on the request, over any header of the same
// name in its params, so a receiver can dedupe a run re-executed after a takeover.
func TestHTTPRequestJobRunHeaders(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
	}))
	defer srv.Close()
	p, err := NewHostPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"url": srv.URL, "headers": map[string]string{HeaderRunID: "forged"}})
	e := Execution{RunID: "run-1", ScheduleName: "nightly", JobName: JobHTTPRequest, ScheduledAt: time.UnixMilli(1795680000000), Params: raw}
	if err := HTTPRequestJob(p).Execute(context.Background(), e); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	h := <-seen
	if h.Get(HeaderRunID) != "run-1" || h.Get(HeaderSchedule) != "nightly" || h.Get(HeaderScheduledAt) != "1795680000000" {
		t.Fatalf("headers %v, want run-1, nightly, 1795680000000", h)
	}
}

// TestBuiltinParamsDoc: each built-in job describes its params (describe_jobs, the console's
// schedule form) truthfully: the schema's properties are exactly the params' JSON fields, its
// required ones among them, and the example decodes strictly and passes the job's own check.
func TestBuiltinParamsDoc(t *testing.T) {
	t.Parallel()
	policy, err := NewHostPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		job    JobHandler
		params any // a pointer to the job's zero params
	}{
		{HTTPRequestJob(policy), &HTTPRequestParams{}},
		{EventPublishJob(nil), &EventPublishParams{}},
	} {
		d := tt.job.(ParamsDescriber).DescribeParams()
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(d.Schema, &schema); err != nil || schema.Type != "object" || !d.Required {
			t.Errorf("%s: schema %s (%v), required %v", tt.job.Name(), d.Schema, err, d.Required)
			continue
		}
		zero, _ := json.Marshal(tt.params)
		var fields map[string]any
		_ = json.Unmarshal(zero, &fields)
		if len(fields) != len(schema.Properties) {
			t.Errorf("%s: schema properties %d, params fields %d", tt.job.Name(), len(schema.Properties), len(fields))
		}
		for f := range fields {
			if schema.Properties[f] == nil {
				t.Errorf("%s: the schema lacks %s", tt.job.Name(), f)
			}
		}
		for _, r := range schema.Required {
			if schema.Properties[r] == nil {
				t.Errorf("%s: required %s is no property", tt.job.Name(), r)
			}
		}
		dec := json.NewDecoder(strings.NewReader(string(d.Example)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(tt.params); err != nil {
			t.Errorf("%s: example %s: %v", tt.job.Name(), d.Example, err)
		}
		if err := tt.job.(ParamsChecker).CheckParams(d.Example); err != nil {
			t.Errorf("%s: example %s refused: %v", tt.job.Name(), d.Example, err)
		}
		if err := tt.job.(ParamsChecker).CheckParams(nil); err == nil {
			t.Errorf("%s: no params accepted although the doc says they are required", tt.job.Name())
		}
	}
}
