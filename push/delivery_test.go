package push_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/svctest"
)

// TestSlowClientDropped: a client that stops reading fills its send buffer and is dropped
// without a close frame, while a reading client gets every message.
func TestSlowClientDropped(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) { p.SendBuffer = 2 }))
	fast := dial(t, srv, srv.Token(t, svctest.User("fast")))
	slow := dialMute(t, srv, "slow")
	connections(t, srv, 2)

	big := strings.Repeat("x", 256<<10) // fills the socket buffers of the slow client quickly
	const n = 60
	for range n {
		send(t, srv, push.NewMessage("big", big), push.Broadcast())
		if got := fast.next(t); got.Type != "big" { // the fast client keeps up
			t.Fatalf("fast client frame %q", got.Type)
		}
	}
	connections(t, srv, 1)
	slow.SetReadLimit(1 << 24)
	var err2 error
	for err2 == nil {
		_, _, err2 = slow.Read(context.Background())
	}
	if code := websocket.CloseStatus(err2); code != -1 {
		t.Errorf("slow client close status = %d, want none (abnormal closure)", code)
	}
}

// TestMissedPongsDrop: a client that stops answering pings is dropped after two intervals; a
// client that answers stays.
func TestMissedPongsDrop(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) { p.PingInterval = 100 * time.Millisecond }))
	healthy := dial(t, srv, srv.Token(t, svctest.User("healthy")))
	dialMute(t, srv, "mute") // pings go unanswered
	connections(t, srv, 2)
	svctest.Eventually(t, 3*time.Second, func() bool { return srv.Push().Connections() == 1 }, "the mute client is dropped")
	send(t, srv, push.NewMessage("alive", nil), push.ToUsers("healthy"))
	if got := healthy.next(t); got.Type != "alive" {
		t.Errorf("healthy client got %q", got.Type)
	}
}

// TestBridge: svc.push.bridge forwards a bus event to the users named in its payload, with the
// event's payload and the configured type.
func TestBridge(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) {
		p.Bridge = []config.PushBridge{
			{Event: "order.shipped", Type: "order", UserField: "userId"},
			{Event: "system.notice", Roles: []string{"ops"}},
		}
	}))
	alice := dial(t, srv, srv.Token(t, svctest.User("alice")))
	ops := dial(t, srv, srv.Token(t, svctest.User("olga", "ops")))
	connections(t, srv, 2)
	ctx := context.Background()
	if err := srv.Events().Publish(ctx, namedEvent{"order.shipped", map[string]any{"userId": "alice", "order": 7}}); err != nil {
		t.Fatal(err)
	}
	got := alice.next(t)
	payload, _ := json.Marshal(got.Payload)
	if got.Type != "order" || string(payload) != `{"order":7,"userId":"alice"}` {
		t.Errorf("bridged frame = %s %s", got.Type, payload)
	}
	if err := srv.Events().Publish(ctx, namedEvent{"system.notice", map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	if got := ops.next(t); got.Type != "system.notice" {
		t.Errorf("ops got %q, want system.notice", got.Type)
	}
}

// namedEvent is an event with a JSON payload.
type namedEvent struct {
	typ     string
	payload map[string]any
}

func (e namedEvent) EventType() string            { return e.typ }
func (e namedEvent) MarshalJSON() ([]byte, error) { return json.Marshal(e.payload) }

// TestWriteTimeout: a write blocked longer than write_timeout (a client that stopped reading,
// with buffer slots to spare) drops the connection.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	srv := pushServer(t, withPush(func(p *config.Push) {
		p.SendBuffer = 10000
		p.WriteTimeout = 200 * time.Millisecond
	}))
	dialMute(t, srv, "slow")
	connections(t, srv, 1)
	big := strings.Repeat("x", 256<<10)
	for range 100 { // ~25 MiB: more than the socket buffers hold
		send(t, srv, push.NewMessage("big", big), push.ToUsers("slow"))
	}
	connections(t, srv, 0)
	if n := srv.Push().Dropped(); n != 0 {
		t.Errorf("dropped for a full buffer = %d, want 0 (the write timed out)", n)
	}
}
