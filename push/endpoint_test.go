package push_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// TestHandshake: non-upgrade requests get 426; the token comes from the Authorization header
// first, then __accessToken; a missing or bad token is the 401 envelope with code 1003.
func TestHandshake(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	good := srv.Token(t, svctest.User("alice"))
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	tests := []struct {
		name     string
		query    string
		header   http.Header
		wantOK   bool
		wantHTTP int
	}{
		{name: "query token", query: "__accessToken=" + good, wantOK: true},
		{name: "header token", header: bearer(good), wantOK: true},
		{name: "header wins over query", query: "__accessToken=bad", header: bearer(good), wantOK: true},
		{name: "no token", wantHTTP: http.StatusUnauthorized},
		{name: "bad token", query: "__accessToken=not-a-token", wantHTTP: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, resp, err := tryDial(srv, tt.query, tt.header)
			if tt.wantOK {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = c.ws.CloseNow()
				return
			}
			if err == nil {
				_ = c.ws.CloseNow()
				t.Fatal("dial succeeded, want a refusal")
			}
			if resp == nil || resp.StatusCode != tt.wantHTTP {
				t.Fatalf("status = %v, want %d", status(resp), tt.wantHTTP)
			}
		})
	}
}

// TestHandshakeEnvelope: the refusal body is the {code, message, data} envelope of 1003, and a
// plain GET is 426 Upgrade Required.
func TestHandshakeEnvelope(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	for _, q := range []string{"", "?__accessToken=garbage"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ws"+q, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		resp, body := srv.Do(t, req)
		var env struct{ Code int }
		if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != 401 || env.Code != rpc.CodeTokenInvalid {
			t.Errorf("query %q: %d %s, want 401 with code %d", q, resp.StatusCode, body, rpc.CodeTokenInvalid)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ws", nil)
	resp, _ := srv.Do(t, req)
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET = %d, want 426", resp.StatusCode)
	}
}

var idPattern = regexp.MustCompile(`^[0-9a-v]{20}$`)

// TestFrames: one JSON text frame {id, type, payload?, time} per message; payload omitted when
// nil; a union of targets reaches each connection once; roles match the handshake's roles.
func TestFrames(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	alice := dial(t, srv, srv.Token(t, svctest.User("alice", "admin")))
	bob := dial(t, srv, srv.Token(t, svctest.User("bob")))
	connections(t, srv, 2)

	send(t, srv, push.NewMessage("notice", map[string]any{"n": 1}), push.ToUsers("alice"))
	b := alice.raw(t)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var id, typ, at string
	_ = json.Unmarshal(m["id"], &id)
	_ = json.Unmarshal(m["type"], &typ)
	_ = json.Unmarshal(m["time"], &at)
	if !idPattern.MatchString(id) || typ != "notice" || string(m["payload"]) != `{"n":1}` {
		t.Errorf("frame = %s", b)
	}
	if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
		t.Errorf("time %q: %v", at, err)
	}

	send(t, srv, push.NewMessage("bare", nil), push.ToUsers("alice"), push.ToRoles("admin"), push.Broadcast())
	b = alice.raw(t)
	m = nil
	if err := json.Unmarshal(b, &m); err != nil || m["payload"] != nil {
		t.Errorf("frame without payload = %s", b)
	}
	if got := bob.next(t); got.Type != "bare" {
		t.Errorf("bob got %q, want the broadcast", got.Type)
	}
	send(t, srv, push.NewMessage("marker", nil), push.ToRoles("admin"))
	if got := alice.next(t); got.Type != "marker" {
		t.Errorf("alice's next frame = %q, want marker (the union delivered once)", got.Type)
	}
	send(t, srv, push.NewMessage("to-bob", nil), push.ToUsers("bob"))
	if got := bob.next(t); got.Type != "to-bob" {
		t.Errorf("bob's next frame = %q, want to-bob (the admin push skipped him)", got.Type)
	}
}

// TestNotifierInput: errors only for invalid input.
func TestNotifierInput(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		msg     push.Message
		targets []push.Target
		want    error
	}{
		{"no type", push.NewMessage("", nil), []push.Target{push.Broadcast()}, push.ErrTypeRequired},
		{"no target", push.NewMessage("t", nil), nil, push.ErrNoTarget},
		{"empty users", push.NewMessage("t", nil), []push.Target{push.ToUsers()}, push.ErrNoTarget},
		{"empty roles", push.NewMessage("t", nil), []push.Target{push.ToRoles("")}, push.ErrNoTarget},
		{"unknown kind", push.NewMessage("t", nil), []push.Target{{Kind: "team", Values: []string{"x"}}}, push.ErrUnknownTargetKind},
		{"nobody connected", push.NewMessage("t", nil), []push.Target{push.ToUsers("ghost")}, nil},
	}
	for _, tt := range tests {
		if err := srv.Push().Push(ctx, tt.msg, tt.targets...); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestDisabled: with push disabled there is no endpoint and the Notifier drops silently.
func TestDisabled(t *testing.T) {
	t.Parallel()
	srv := svctest.New(t)
	if err := srv.Push().Push(context.Background(), push.NewMessage("t", nil), push.Broadcast()); err != nil {
		t.Errorf("push while disabled: %v", err)
	}
	if err := srv.Push().Push(context.Background(), push.NewMessage("", nil), push.Broadcast()); err != push.ErrTypeRequired {
		t.Errorf("invalid push while disabled: %v, want ErrTypeRequired", err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ws", nil)
	if resp, _ := srv.Do(t, req); resp.StatusCode == http.StatusUpgradeRequired {
		t.Errorf("GET /ws while disabled = %d: the endpoint is mounted", resp.StatusCode)
	}
}

// TestOrigin: allowed_origins restricts the handshake; empty allows any origin.
func TestOrigin(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) { p.AllowedOrigins = []string{"https://app.example.com"} }))
	tok := srv.Token(t, svctest.User("alice"))
	origin := func(o string) http.Header { return http.Header{"Origin": {o}} }
	if _, resp, err := tryDial(srv, "__accessToken="+tok, origin("https://evil.example.com")); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %v %v, want 403", err, status(resp))
	}
	c, _, err := tryDial(srv, "__accessToken="+tok, origin("https://app.example.com"))
	if err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	_ = c.ws.CloseNow()

	open := pushServer(t)
	c, _, err = tryDial(open, "__accessToken="+open.Token(t, svctest.User("alice")), origin("https://anything.example"))
	if err != nil {
		t.Fatalf("any origin with an empty list: %v", err)
	}
	_ = c.ws.CloseNow()
}

// TestPerUserCap: over max_connections_per_user the upgrade succeeds and the socket is closed
// with 4429; other users are not affected.
func TestPerUserCap(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) { p.MaxConnectionsPerUser = 2 }))
	tok := srv.Token(t, svctest.User("alice"))
	dial(t, srv, tok)
	dial(t, srv, tok)
	connections(t, srv, 2)
	third := dial(t, srv, tok)
	third.wantClose(t, wait, push.CloseTooManyConnections, push.ReasonTooMany)
	dial(t, srv, srv.Token(t, svctest.User("bob")))
	connections(t, srv, 3)
}

// TestDefaultPerUserCap (issue #31 item 9): with the shipped configuration one user may hold 10
// sockets on a node; the 11th is closed with 4429, and another user is not affected.
func TestDefaultPerUserCap(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	if got := srv.Config().Push.MaxConnectionsPerUser; got != 10 {
		t.Fatalf("max_connections_per_user = %d, want the default 10", got)
	}
	tok := srv.Token(t, svctest.User("alice"))
	for range 10 {
		dial(t, srv, tok)
	}
	connections(t, srv, 10)
	dial(t, srv, tok).wantClose(t, wait, push.CloseTooManyConnections, push.ReasonTooMany)
	dial(t, srv, srv.Token(t, svctest.User("bob")))
	connections(t, srv, 11)
}

// TestShutdown: stopping the module closes connections with 1001.
func TestShutdown(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	c := dial(t, srv, srv.Token(t, svctest.User("alice")))
	connections(t, srv, 1)
	if err := srv.Push().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.wantClose(t, wait, push.CloseGoingAway, push.ReasonShutdown)
	late, _, err := tryDial(srv, "__accessToken="+srv.Token(t, svctest.User("bob")), nil)
	if err != nil {
		t.Fatalf("dial after stop: %v", err)
	}
	late.wantClose(t, wait, push.CloseGoingAway, push.ReasonShutdown)
}

// TestInbound: client frames are read and discarded; a frame over the 4096-byte read limit
// closes the connection (1009).
func TestInbound(t *testing.T) {
	t.Parallel()
	srv := pushServer(t)
	c := dial(t, srv, srv.Token(t, svctest.User("alice")))
	ctx := context.Background()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(`{"hello":"server"}`)); err != nil {
		t.Fatal(err)
	}
	connections(t, srv, 1)
	send(t, srv, push.NewMessage("after", nil), push.ToUsers("alice"))
	if got := c.next(t); got.Type != "after" {
		t.Errorf("frame = %q", got.Type)
	}
	big := make([]byte, 5000)
	if err := c.ws.Write(ctx, websocket.MessageBinary, big); err != nil {
		t.Fatal(err)
	}
	if code, _ := c.closed(t, wait); code != websocket.StatusMessageTooBig {
		t.Errorf("close after an oversized frame = %d, want %d", code, websocket.StatusMessageTooBig)
	}
}
