package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/svctest"
)

// TestPushSend: `svc push send` publishes on the relay and a running node delivers the push to
// the user's socket.
func TestPushSend(t *testing.T) {
	kv := svctest.RedisConfig(t)
	name := "cli-" + strings.NewReplacer(":", "-").Replace(svctest.UniquePrefix(t)[8:])
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.Push.Enabled = true
		c.KVStore = kv
		c.App.Name = name
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws?__accessToken=" + srv.Token(t, svctest.User("alice"))
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	svctest.Eventually(t, 5*time.Second, func() bool { return srv.Push().Connections() == 1 }, "connected")

	toml := base + fmt.Sprintf("[svc.kvstore]\nenabled = true\nhost = %q\nport = %d\n[svc.push]\nenabled = true\n", kv.Host, kv.Port)
	toml = strings.Replace(toml, "[svc.app]\n", fmt.Sprintf("[svc.app]\nname = %q\n", name), 1)
	got := make(chan string, 1)
	go func() {
		_, b, err := ws.Read(ctx)
		if err == nil {
			got <- string(b)
		}
	}()
	// The node's relay subscription may start a moment after the server: send until it arrives.
	for {
		out, errOut, code := runCLI(t, toml, "push", "send", "--user", "alice", "--type", "cli.notice", "--payload", `{"n":1}`)
		if code != 0 || !strings.Contains(out, "published") {
			t.Fatalf("push send = %d: %s %s", code, out, errOut)
		}
		select {
		case frame := <-got:
			if !strings.Contains(frame, `"type":"cli.notice"`) || !strings.Contains(frame, `"payload":{"n":1}`) {
				t.Errorf("frame = %s", frame)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("the push did not arrive")
		}
	}
}

// TestPushSendNeedsRelay: without the key-value store the command refuses, naming the relay.
func TestPushSendNeedsRelay(t *testing.T) {
	_, errOut, code := runCLI(t, base+"[svc.push]\nenabled = true\n", "push", "send", "--user", "alice", "--type", "t")
	if code != 1 || !strings.Contains(errOut, "relay") {
		t.Errorf("push send without kvstore = %d %q, want 1 naming the relay", code, errOut)
	}
	_, errOut, code = runCLI(t, base, "push", "send", "--user", "alice", "--type", "t")
	if code != 1 || !strings.Contains(errOut, "svc.push.enabled") {
		t.Errorf("push send with push disabled = %d %q", code, errOut)
	}
}
