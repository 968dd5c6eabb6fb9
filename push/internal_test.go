package push

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

func TestPayloadUsers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		payload, field string
		want           []string
	}{
		{`{"userId":"u1"}`, "userId", []string{"u1"}},
		{`{"userId":42}`, "userId", []string{"42"}},
		{`{"to":["a","b",7]}`, "to", []string{"a", "b", "7"}},
		{`{"other":"x"}`, "userId", nil},
		{`[1,2]`, "userId", nil},
		{`{"userId":{"nested":true}}`, "userId", nil},
	}
	for _, tt := range tests {
		if got := payloadUsers(json.RawMessage(tt.payload), tt.field); !slices.Equal(got, tt.want) {
			t.Errorf("payloadUsers(%s, %s) = %v, want %v", tt.payload, tt.field, got, tt.want)
		}
	}
}

// newOutside builds the module outside a server: a stub authenticator accepting any token as
// user "alice" and a renderer writing the status.
func newOutside(cfg *config.Config, kv *redis.Client, opts Options) (*Service, error) {
	return New(app.Platform{Config: cfg, Logger: slog.New(slog.DiscardHandler), Clock: time.Now, KV: kv},
		app.API{Auth: stubAuth{}, Errors: stubErrors{}}, opts)
}

type stubAuth struct{}

func (stubAuth) Authenticate(context.Context, *http.Request, string, ...string) (*rpc.Principal, error) {
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: "alice", Roles: []string{}}, nil
}

type stubErrors struct{}

func (stubErrors) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	http.Error(w, err.Error(), http.StatusUnauthorized)
}

func enabled(name string) *config.Config {
	cfg := config.Default()
	cfg.Push.Enabled = true
	cfg.App.Name = name
	return cfg
}

// deadRedis is a client of a port where nothing listens.
func deadRedis(t *testing.T) *redis.Client {
	kv := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// TestRelayNeedsAppName: the relay refuses to start without svc.app.name (spec §6.2).
func TestRelayNeedsAppName(t *testing.T) {
	t.Parallel()
	if _, err := newOutside(enabled(""), deadRedis(t), Options{}); !errors.Is(err, ErrAppNameRequired) {
		t.Errorf("New without an app name = %v, want ErrAppNameRequired", err)
	}
	if _, err := newOutside(enabled(""), nil, Options{}); err != nil {
		t.Errorf("New without relay and app name = %v, want nil", err)
	}
}

// TestRelayBestEffort: with Redis down a push is still delivered to this node's sockets.
func TestRelayBestEffort(t *testing.T) {
	t.Parallel()
	s, err := newOutside(enabled("app"), deadRedis(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"?__accessToken=x", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for s.Connections() != 1 {
		if ctx.Err() != nil {
			t.Fatal("not connected")
		}
		time.Sleep(time.Millisecond) // polling with a deadline (no svctest here: import cycle)
	}
	if err := s.Push(ctx, NewMessage("local", nil), ToUsers("alice")); err != nil {
		t.Fatalf("push with Redis down = %v", err)
	}
	_, r, err := ws.Reader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if !strings.Contains(string(b), `"type":"local"`) {
		t.Errorf("frame = %s", b)
	}
}

type recordingLocal struct {
	delivered [][]byte
	kicked    []string
}

func (r *recordingLocal) deliverLocal(frame []byte, _ []Target) {
	r.delivered = append(r.delivered, frame)
}
func (r *recordingLocal) KickLocal(keys ...string) { r.kicked = append(r.kicked, keys...) }

// TestRelayApply: frames of other nodes are applied; own frames, unknown kinds and malformed
// frames are ignored.
func TestRelayApply(t *testing.T) {
	t.Parallel()
	local := &recordingLocal{}
	r := newRelay(nil, "ch", "me", local, slog.New(slog.DiscardHandler))
	frames := []string{
		`{"kind":"message","origin":"other","envelope":{"id":"1","type":"t"},"targets":[{"kind":"broadcast"}]}`,
		`{"kind":"message","origin":"me","envelope":{"id":"2","type":"t"},"targets":[{"kind":"broadcast"}]}`,
		`{"kind":"message","origin":"other","envelope":{"id":"3","type":"t"},"targets":[]}`,
		`{"kind":"kick_sessions","origin":"other","sessionIds":["s1","s2"]}`,
		`{"kind":"kick_sessions","origin":"me","sessionIds":["s3"]}`,
		`{"kind":"future","origin":"other"}`,
		`not json`,
	}
	for _, f := range frames {
		r.apply([]byte(f))
	}
	if len(local.delivered) != 1 || string(local.delivered[0]) != `{"id":"1","type":"t"}` {
		t.Errorf("delivered = %q, want only the first frame's envelope", local.delivered)
	}
	if !slices.Equal(local.kicked, []string{"s1", "s2"}) {
		t.Errorf("kicked = %v, want [s1 s2]", local.kicked)
	}
}
