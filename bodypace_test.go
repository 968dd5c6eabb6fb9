package svc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/svctest"
)

// paceBound turns a hang into a failure; a trickled body must end far sooner (about the grace).
const paceBound = 20 * time.Second

// TestSlowBodiesEndOnEveryRoute is issue #31 item 10 through the real boot chain: on every
// route that reads a body — /api (JSON, and a multipart upload_part), /mcp, the integration
// gateway (authenticated, so it reads) and a path no route takes (net/http drains its body) — a
// client that sends its headers and then one byte every 50 ms, far inside the read-idle timeout
// (5 s here) that alone held such a connection for ever, is answered and closed once the
// grace (300 ms) has passed and it is behind svc.app.body_min_rate (1000 B/s).
func TestSlowBodiesEndOnEveryRoute(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.App.BodyReadIdleTimeout = 5 * time.Second
		c.App.BodyMinRate = 1000
		c.App.BodyMinRateGrace = 300 * time.Millisecond
		c.MCP.Enabled = true
		c.Security.Roles = map[string][]string{"admin": {"*"}}
	}), svctest.WithOptions(svc.WithIntegration(integration.Options{InboundHandlers: []integration.InboundHandler{
		integration.NewInboundHandler("pace.op", func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil }),
	}})))
	admin := svctest.User("root", "admin")
	token := srv.Token(t, admin)
	system := paceCreate(t, srv, "integration/system", map[string]any{"code": "PACE", "name": "p",
		"inboundAuth": map[string]any{"scheme": "bearer", "params": map[string]any{"token": "in-token"}}})
	contract := paceCreate(t, srv, "integration/contract", map[string]any{"code": "pace.op", "name": "p"})
	paceCreate(t, srv, "integration/adapter", map[string]any{"systemId": system, "contractId": contract, "direction": "inbound",
		"script": "return dispatch(JSON.parse(request.body))"})
	var plan struct{ ClaimID string }
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": 100000}, svctest.As(admin))
	if r.Code != 0 {
		t.Fatalf("init_upload: %d %s", r.Code, r.Message)
	}
	r.DataAs(t, &plan)

	const length = 100000 // what the headers promise; at 20 B/s it would take over an hour
	addr := srv.HTTP.Listener.Addr().String()
	jsonHead := func(path string, headers ...string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", path, addr, length, strings.Join(headers, ""))
	}
	for _, tt := range []struct{ name, head string }{
		{"/api JSON", jsonHead("/api", "Authorization: Bearer "+token+"\r\n") + `{"resource":"sys/storage","action":"init_upload","params":{"x":"`},
		{"/api multipart upload_part", uploadPartHead(t, token, plan.ClaimID, length)},
		{"/mcp", jsonHead("/mcp", "Authorization: Bearer "+token+"\r\n", "Accept: application/json, text/event-stream\r\n") + `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`},
		{"inbound gateway", jsonHead("/integration/inbound/PACE/pace.op", "Authorization: Bearer in-token\r\n") + `{"id":"`},
		{"unrouted path", "POST /no/such/route HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1000\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			answer, took, ok := testservice.Trickle(t, addr, tt.head, 50*time.Millisecond, paceBound)
			if !ok {
				t.Fatalf("a body trickled at 20 B/s still open after %s (answer so far %q)", paceBound, answer)
			}
			if bytes.HasPrefix(answer, []byte("HTTP/1.1 200")) {
				t.Errorf("trickled body answered 200: %q", answer)
			}
			t.Logf("ended after %s: %.60q", took.Round(time.Millisecond), answer)
		})
	}
}

// TestSlowLegitimateUploadPasses: an upload_part arriving at a modest 50 kB/s (fifty times
// svc.app.body_min_rate here) for up to two seconds, several times the grace, is stored.
func TestSlowLegitimateUploadPasses(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.App.BodyMinRate = 1000
		c.App.BodyMinRateGrace = 300 * time.Millisecond
		c.Security.Roles = map[string][]string{"admin": {"*"}}
	}))
	admin := svctest.As(svctest.User("root", "admin"))
	const size = 100000
	var plan struct {
		ClaimID  string
		PartSize int
	}
	r := srv.Call(t, "sys/storage", "init_upload", map[string]any{"filename": "a.bin", "size": size}, admin)
	if r.Code != 0 {
		t.Fatalf("init_upload: %d %s", r.Code, r.Message)
	}
	r.DataAs(t, &plan)
	part := min(size, plan.PartSize)
	start := time.Now()
	r = srv.CallMultipart(t, "sys/storage", "upload_part", map[string]any{"claimId": plan.ClaimID, "partNumber": 1},
		[]svctest.FilePart{{Field: "file", Filename: "blob", Content: &slowReader{left: part, chunk: 5000, every: 100 * time.Millisecond}}}, admin)
	if r.Code != 0 {
		t.Errorf("upload_part at 50 kB/s: %d %s, want 0", r.Code, r.Message)
	}
	t.Logf("upload took %s", time.Since(start).Round(time.Millisecond))
}

// slowReader yields left bytes, chunk bytes every interval.
type slowReader struct {
	left, chunk int
	every       time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	<-time.After(s.every) // the pace of a slow link, not a synchronisation
	n := min(len(p), s.chunk, s.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	s.left -= n
	return n, nil
}

func paceCreate(t *testing.T, srv *svctest.Server, resource string, params map[string]any) string {
	t.Helper()
	r := srv.Call(t, resource, "create", params, svctest.As(svctest.User("root", "admin")))
	var c struct{ ID string }
	if r.Code != 0 || json.Unmarshal(r.Data, &c) != nil {
		t.Fatalf("create %s: %d %s", resource, r.Code, r.Message)
	}
	return c.ID
}

// uploadPartHead is the request head and multipart preamble of an upload_part whose file part
// promises length bytes more.
func uploadPartHead(t *testing.T, token, claimID string, length int) string {
	t.Helper()
	var pre bytes.Buffer
	mw := multipart.NewWriter(&pre)
	params, _ := json.Marshal(map[string]any{"claimId": claimID, "partNumber": 1})
	for _, kv := range [][2]string{{"resource", "sys/storage"}, {"action", "upload_part"}, {"version", "v1"}, {"params", string(params)}} {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mw.CreateFormFile("file", "blob"); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("POST /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		token, mw.FormDataContentType(), pre.Len()+length, pre.String())
}
