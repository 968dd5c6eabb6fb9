package security_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestLoginInvalidIdentifier (issue #11 item 5): a login principal with NUL, another control
// character or invalid UTF-8, or longer than 255 characters, answers 400/1400 on every database
// (PostgreSQL refused the NUL with 500/1900), and so does a NUL in any other param.
func TestLoginInvalidIdentifier(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		login := func(principal string) map[string]any {
			return map[string]any{"type": "password", "principal": principal, "credentials": "x"}
		}
		tests := []struct {
			name   string
			action string
			params any
		}{
			{"principal with NUL", "login", login("alice\x00")},
			{"principal only NUL", "login", login("\x00")},
			{"principal with a tab", "login", login("al\tice")},
			{"principal with DEL", "login", login("alice\x7f")},
			{"principal with invalid UTF-8", "login", json.RawMessage("{\"type\":\"password\",\"principal\":\"al\xc3\x28ice\",\"credentials\":\"x\"}")},
			{"principal too long", "login", login(strings.Repeat("a", 256))},
			{"login type with NUL", "login", map[string]any{"type": "pass\x00word", "principal": "alice", "credentials": "x"}},
			{"NUL in the credentials", "login", map[string]any{"type": "password", "principal": "alice", "credentials": "pw\x00"}},
			{"NUL in a refresh token", "refresh", map[string]any{"refreshToken": "eyJ\x00"}},
			{"NUL in a challenge response", "resolve_challenge", map[string]any{"challengeToken": "t", "type": "totp", "response": "12\x0034"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want(t, e.call(t, tt.action, tt.params), 400, rpc.CodeBadRequest)
			})
		}
		// a clean unknown principal is an ordinary failed login
		want(t, e.call(t, "login", login("nobody")), 401, rpc.CodeCredentialsInvalid)
	})
}

// lockedBuffer is a bytes.Buffer safe for the server's concurrent log writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// TestLogLinesBounded (issue #11 item 7): a 1 MB principal, a long principal that reaches the
// security events and a 200 KB request path all leave log lines of bounded size, the long
// values marked as truncated.
func TestLogLinesBounded(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Security events go to the event bus on a server; the log sink is the one that writes them
	// to the log, so it is the one whose lines must stay bounded.
	e := newEnv(t, func(s *setup) { s.svcOpts = append(s.svcOpts, svc.WithLogger(logger)) },
		withSec(func(o *security.Options) { o.Events = security.LogSink(logger) }))

	want(t, e.call(t, "login", map[string]any{"type": "password", "principal": strings.Repeat("m", 1<<20), "credentials": "x"}), 400, rpc.CodeBadRequest)
	long := strings.Repeat("界", 255) // 765 bytes: a valid principal, logged in the login_failed event
	want(t, e.call(t, "login", map[string]any{"type": "password", "principal": long, "credentials": "x"}), 401, rpc.CodeCredentialsInvalid)
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/"+strings.Repeat("p", 200<<10), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Do(t, req)

	const bound = 2 << 10
	var truncatedEvent, truncatedPath bool
	for _, line := range buf.lines() {
		if len(line) > bound {
			t.Errorf("log line of %d bytes (bound %d): %.200s…", len(line), bound, line)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v", err)
		}
		if id, _ := rec["identifier"].(string); strings.HasSuffix(id, rpc.TruncatedSuffix) && strings.HasPrefix(long, strings.TrimSuffix(id, rpc.TruncatedSuffix)) {
			truncatedEvent = true
		}
		if p, _ := rec["path"].(string); strings.HasSuffix(p, rpc.TruncatedSuffix) {
			truncatedPath = true
		}
	}
	if !truncatedEvent || !truncatedPath {
		t.Errorf("truncated identifier in a security event %v, truncated path in the access log %v; want both", truncatedEvent, truncatedPath)
	}
}

// TestConnectAnswersEnvelope (issue #11 item 8): on the real server CONNECT /api answers the
// engine's 405/1900 envelope with Allow: POST, and CONNECT to an authority or "*" the 404/1200
// envelope, never ServeMux's plain text.
func TestConnectAnswersEnvelope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	host := strings.TrimPrefix(e.srv.URL, "http://")
	for _, tt := range []struct {
		target string
		status int
		code   int
		allow  string
	}{
		{"/api", 405, rpc.CodeUnknown, "POST"},
		{"*", 404, rpc.CodeNotFound, ""},
		{"example.com:443", 404, rpc.CodeNotFound, ""},
	} {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", tt.target, host)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			t.Fatalf("CONNECT %s: %v", tt.target, err)
		}
		var env struct{ Code int }
		err = json.NewDecoder(resp.Body).Decode(&env)
		c.Close()
		if err != nil || resp.StatusCode != tt.status || env.Code != tt.code || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("CONNECT %s = %d code %d (Allow %q, decode %v), want %d code %d (Allow %q)", tt.target,
				resp.StatusCode, env.Code, resp.Header.Get("Allow"), err, tt.status, tt.code, tt.allow)
		}
	}
}
